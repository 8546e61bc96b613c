// qrt — quantized qrt.conv_transpose2d by sub-pixel phases (see conv_transpose_kernels.h).
//
// Along one axis, output o meets input i through tap k where o = i·s - pad + k·d. Outputs
// o = s·m + r of residue r meet the taps T_r = {k : (r + pad - k·d) ≡ 0 mod s}, and then
// i = m + (r + pad - k·d) / s. Consecutive taps of T_r lie t = s / gcd(s, d) apart, so their
// inputs lie d' = d / gcd(s, d) apart: with T_r's taps flipped, y_r[m] = Σ_j x[m + first +
// j·d'] · w[T_r[n - 1 - j]], a stride-1 correlation of dilation d' over the input shifted by
// `first` (the input of T_r's last tap). Reversing that shifted input and the phase's outputs
// along the axis turns it into a correlation with the taps in their own order:
// ỹ_r[m̃] = Σ_j R[m̃ + j·d'] · w[T_r[j]], which sums the taps in increasing k as the reference
// does (float results depend on that order). A residue without taps (possible with d > 1)
// holds the bias alone: for integers a 1x1 filter of zero-point weights computes exactly that;
// floats are filled with +0 + bias, the reference's sum of no products.
#include "jit/ops/conv_transpose_kernels.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>

#include "ir/nn_params.h"
#include "ir/ops.h"
#include "jit/core/parallel.h"
#include "jit/ops/float_widening.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

namespace {

// One axis of one phase: the residue's taps (ascending), its outputs, the input index of its
// flipped first tap and the taps' dilation over the input.
struct PhaseAxis {
  std::vector<int64_t> taps;
  int64_t outputs = 0, first = 0, dilation = 1;
  int64_t kernel() const { return std::max<int64_t>(1, int64_t(taps.size())); }
  int64_t staged() const { return outputs + (kernel() - 1) * dilation; }  // input positions it reads
};

PhaseAxis phase_axis(int64_t r, int64_t out, int64_t s, int64_t pad, int64_t k, int64_t d) {
  PhaseAxis a;
  a.outputs = r < out ? (out - r + s - 1) / s : 0;
  for (int64_t t = 0; t < k; ++t) {
    if ((r + pad - t * d) % s == 0) a.taps.push_back(t);
  }
  a.dilation = d / std::gcd(s, d);
  if (!a.taps.empty()) a.first = (r + pad - a.taps.back() * d) / s;  // an exact division
  return a;
}

// The input of one phase, per image: `rows` × `cols` positions of `c` elements of `elem`
// bytes, reversed along both axes: staged (r, q) holds input (rows - 1 - r + row0,
// cols - 1 - q + col0) where that exists, else the zero point (+0 for floats).
struct Staging {
  int64_t n = 0, h = 0, w = 0, c = 0;
  int64_t rows = 0, cols = 0, row0 = 0, col0 = 0;
  size_t elem = 1;
  std::vector<uint8_t> zero;  // one element holding the input's zero point

  int64_t row_bytes() const { return cols * c * int64_t(elem); }

  // Staged row `r` of image `n` into `dst`.
  void stage_row(const uint8_t* x, int64_t n_at, int64_t r, uint8_t* dst) const {
    const int64_t pixel = c * int64_t(elem), ih = rows - 1 - r + row0;
    if (elem == 1) {
      std::memset(dst, zero[0], size_t(cols * c));
    } else {
      for (int64_t i = 0; i < cols * c; ++i) std::memcpy(dst + i * int64_t(elem), zero.data(), elem);
    }
    if (ih < 0 || ih >= h) return;
    // Input columns [lo, hi) land at staged columns cols - 1 - (iw - col0), last to first.
    const int64_t lo = std::max<int64_t>(0, col0), hi = std::min(w, cols + col0);
    const uint8_t* src = x + ((n_at * h + ih) * w) * pixel;
    for (int64_t iw = lo; iw < hi; ++iw) std::memcpy(dst + (cols - 1 - (iw - col0)) * pixel, src + iw * pixel, size_t(pixel));
  }
};

// One phase: residues (rh, rw), its staging, its convolution and that convolution's graph;
// or, for a float phase without taps (no convolution), the value of each output channel.
struct Phase {
  int64_t rh = 0, rw = 0, mh = 0, mw = 0;
  Staging staging;
  Type staged_type, out_type;
  std::shared_ptr<Graph> graph;
  std::unique_ptr<OpKernel> conv;
  std::vector<float> fill;
};

// The dense-elements type of stored integers of `storage` with `dims` (signless for signed
// storage, unsigned otherwise, as the text form writes quantized constants).
Type storage_type(const std::vector<int64_t>& dims, const QuantStorage& storage) {
  return Type::tensor(dims, ElementType::make_int(storage.width, storage.is_signed ? Signedness::kSignless
                                                                                    : Signedness::kUnsigned));
}

class ConvTransposeKernel final : public OpKernel {
 public:
  ConvTransposeKernel(const Op& op, const Type& result, int64_t sh, int64_t sw, std::vector<Phase> phases)
      : OpKernel(result), op_(op), sh_(sh), sw_(sw), phases_(std::move(phases)) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    QRT_RETURN_IF_ERROR(check_input(*operands[0]));
    return result_type_.dims;
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    QRT_RETURN_IF_ERROR(check_input(x));
    // The staged input and a phase's results live in buffers of the calling thread, kept
    // between runs; the workers get pointers (their own thread_locals are others).
    thread_local std::vector<uint8_t> staged_bytes, phase_bytes;
    for (const Phase& p : phases_) {
      if (!p.conv) {
        fill(p, out);
        continue;
      }
      const Staging& s = p.staging;
      const size_t bytes = size_t(s.n * s.rows * s.row_bytes());
      if (staged_bytes.size() < bytes) staged_bytes.resize(bytes);
      uint8_t* staged = staged_bytes.data();
      const int64_t all_rows = s.n * s.rows;
      const int64_t tasks = std::min(all_rows, even_tasks(int64_t(bytes), kMinStreamTaskElements, parallel));
      parallel.for_each(size_t(tasks), [&](size_t t) {
        for (int64_t r = part_start(all_rows, tasks, int64_t(t)); r < part_start(all_rows, tasks, int64_t(t) + 1); ++r) {
          s.stage_row(x.bytes(), r / s.rows, r % s.rows, staged + r * s.row_bytes());
        }
      });
      Tensor staged_view = Tensor::view_of(p.staged_type, staged);
      // The convolution's kernels read only their input: the constants are prepacked.
      std::vector<const Tensor*> conv_operands(p.graph->ops.back().operands.size(), nullptr);
      conv_operands[0] = &staged_view;
      const size_t out_bytes = size_t(p.out_type.num_elements()) * out.element_size();
      if (phase_bytes.size() < out_bytes) phase_bytes.resize(out_bytes);
      Tensor phase_out = Tensor::view_of(p.out_type, phase_bytes.data());
      QRT_RETURN_IF_ERROR(p.conv->run_into(conv_operands, phase_out, parallel));
      scatter(p, phase_bytes.data(), out, parallel);
    }
    return Status::ok();
  }

  bool reads_operand(size_t index) const override { return index == 0; }
  bool holds_operand_copy(size_t index) const override { return index != 0; }
  size_t owned_bytes() const override {
    size_t bytes = 0;
    for (const Phase& p : phases_) bytes += p.conv ? p.conv->owned_bytes() : p.fill.size() * sizeof(float);
    return bytes;
  }
  std::string describe() const override {
    const std::string how = sh_ == 1 && sw_ == 1
                                ? "over the input reversed and padded"
                                : std::to_string(phases_.size()) + " sub-pixel phases of stride " + std::to_string(sh_) +
                                      "x" + std::to_string(sw_) + ", each a stride-1 convolution of its taps over the input reversed";
    for (const Phase& p : phases_) {
      if (p.conv) return p.conv->describe() + "; " + how;
    }
    return "+0 + bias in every output (no filter tap reaches any)";
  }

 private:
  Status check_input(const Tensor& x) const {
    const Staging& s = phases_.front().staging;
    const std::vector<int64_t> want{s.n, s.h, s.w, s.c};
    if (x.type.dims == want) return Status::ok();
    return Status::error_at(op_.loc, "'qrt.conv_transpose2d' op input is " + x.type.to_string() +
                                         " at run time; the plan was made for " +
                                         Type::tensor(want, x.type.element).to_string());
  }

  // Phase p's results [N, mh, mw, O], reversed along both axes, to outputs
  // (sh·(mh - 1 - m) + rh, sw·(mw - 1 - q) + rw).
  void scatter(const Phase& p, const uint8_t* from, Tensor& out, Parallel& parallel) const {
    const std::vector<int64_t>& d = out.type.dims;
    const int64_t pixel = d[3] * int64_t(out.element_size()), rows = d[0] * p.mh;
    const int64_t tasks = std::min(rows, even_tasks(rows * p.mw * pixel, kMinStreamTaskElements, parallel));
    uint8_t* y = out.bytes();
    parallel.for_each(size_t(tasks), [&](size_t t) {
      for (int64_t r = part_start(rows, tasks, int64_t(t)); r < part_start(rows, tasks, int64_t(t) + 1); ++r) {
        const int64_t n = r / p.mh, oy = (p.mh - 1 - r % p.mh) * sh_ + p.rh;
        const uint8_t* src = from + r * p.mw * pixel;
        uint8_t* dst = y + ((n * d[1] + oy) * d[2] + p.rw) * pixel;
        for (int64_t q = 0; q < p.mw; ++q) std::memcpy(dst + (p.mw - 1 - q) * sw_ * pixel, src + q * pixel, size_t(pixel));
      }
    });
  }

  // A float phase without taps: every output (sh·m + rh, sw·q + rw) holds p.fill (values of the
  // result's type: bf16/f16 store them narrowed, exactly).
  void fill(const Phase& p, Tensor& out) const {
    const std::vector<int64_t>& d = out.type.dims;
    const FloatKind kind = out.type.element.float_kind;
    const size_t elem = out.element_size();
    std::vector<uint8_t> pixel(p.fill.size() * elem);
    if (kind == FloatKind::kF32) {
      std::memcpy(pixel.data(), p.fill.data(), pixel.size());
    } else {
      narrow_from_f32(p.fill.data(), kind, int64_t(p.fill.size()), pixel.data());
    }
    for (int64_t n = 0; n < d[0]; ++n) {
      for (int64_t m = 0; m < p.mh; ++m) {
        for (int64_t q = 0; q < p.mw; ++q) {
          std::memcpy(out.bytes() + ((n * d[1] + m * sh_ + p.rh) * d[2] + q * sw_ + p.rw) * d[3] * int64_t(elem), pixel.data(),
                      pixel.size());
        }
      }
    }
  }

  Op op_;  // for messages
  int64_t sh_, sw_;
  std::vector<Phase> phases_;
};

// Why `op` stays on the reference, or "".
std::string unsupported(const Graph& graph, const Op& op) {
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  const bool quantized = x.element.kind == ElementKind::kUniform && y.element.is_uniform();
  // bf16/f16 phases run the float convolution kernels on widened operands.
  const bool f32 = x.element.is_float() && is_f32_or_narrower(x.element.float_kind) && x.element == y.element;
  if (!quantized && !f32) return "only quantized, f32, bf16 and f16 transposed convolutions have kernels, not " + x.to_string();
  if (!x.has_static_shape() || !y.has_static_shape()) return "dynamic shapes (" + x.to_string() + ")";
  if (graph.numerics == NumericsProfile::kStableHlo && !profile_formula(graph, op).empty()) {
    return "numerics profile " + profile_formula(graph, op) + "; the kernels sum integers";
  }
  return "";
}

// The graph of phase (ah, aw)'s convolution: the staged input as its argument, the phase's
// taps (or one zero-point tap) and the bias as constants, `graph`'s numerics profile.
std::shared_ptr<Graph> phase_graph(const Graph& graph, const Op& op, const Tensor& filter, const Tensor* bias,
                                   const PhaseAxis& ah, const PhaseAxis& aw, const Window2d& w, Phase& p,
                                   std::string* why_not) {
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& ft = graph.values[size_t(op.operands[1])].type;
  auto conv = std::make_shared<Graph>();
  conv->name = graph.name;
  conv->numerics = graph.numerics;
  p.staged_type = x;
  p.staged_type.dims = {x.dims[0], ah.staged(), aw.staged(), x.dims[3]};
  const int input = conv->add_input(p.staged_type, graph.values[size_t(op.operands[0])].name);
  const int64_t o_count = ft.dims[0], kw = ft.dims[2], ig = ft.dims[3], nh = ah.kernel(), nw = aw.kernel();
  Type sub = ft;
  sub.dims = {o_count, nh, nw, ig};
  const bool is_float = ft.element.is_float();
  const size_t elem = filter.element_size();
  DenseElements taps = DenseElements::zeros(is_float ? sub : storage_type(sub.dims, ft.element.storage));
  const bool empty = ah.taps.empty() || aw.taps.empty();
  for (int64_t o = 0; o < o_count; ++o) {
    const int64_t zw = is_float ? 0 : ft.element.zero_points[ft.element.num_channels() == 1 ? 0 : size_t(o)];
    for (int64_t jh = 0; jh < nh; ++jh) {
      for (int64_t jw = 0; jw < nw; ++jw) {
        for (int64_t c = 0; c < ig; ++c) {
          const size_t to = size_t(((o * nh + jh) * nw + jw) * ig + c);
          if (empty) {
            taps.set_int(to, zw);  // (w - zw) = 0: the bias alone
            continue;
          }
          const size_t from = size_t(((o * ft.dims[1] + ah.taps[size_t(jh)]) * kw + aw.taps[size_t(jw)]) * ig + c);
          if (is_float) {
            std::memcpy(taps.bytes.data() + to * elem, filter.bytes() + from * elem, elem);
          } else {
            taps.set_int(to, filter.int_at(from));
          }
        }
      }
    }
  }
  std::vector<int> operands{input};
  operands.push_back(conv->result(conv->add_op(OpKind::kConstant, {}, {sub}, {{"value", Attribute::make_dense(std::move(taps))}})));
  if (bias) {
    const Type& bt = graph.values[size_t(op.operands[2])].type;
    DenseElements values =
        DenseElements::zeros(bt.element.is_any_uniform() ? storage_type(bt.dims, bt.element.storage) : bt);
    if (bt.element.is_float()) {
      std::memcpy(values.bytes.data(), bias->bytes(), values.bytes.size());
    } else {
      for (size_t i = 0; i < size_t(bias->num_elements()); ++i) values.set_int(i, bias->int_at(i));
    }
    operands.push_back(conv->result(conv->add_op(OpKind::kConstant, {}, {bt}, {{"value", Attribute::make_dense(std::move(values))}})));
  }
  p.out_type = graph.values[size_t(op.results[0])].type;
  p.out_type.dims = {x.dims[0], ah.outputs, aw.outputs, o_count};
  std::vector<std::pair<std::string, Attribute>> attrs{{"dilations", Attribute::make_int_array({ah.dilation, aw.dilation})},
                                                       {"groups", Attribute::make_int(w.groups)},
                                                       {"pads", Attribute::make_int_array({0, 0, 0, 0})},
                                                       {"strides", Attribute::make_int_array({1, 1})}};
  for (const char* name : {"clamp_max", "clamp_min"}) {  // a fused clamp: every phase's
    if (const Attribute* a = op.attr(name)) attrs.emplace_back(name, *a);
  }
  std::sort(attrs.begin(), attrs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const int k = conv->add_op(OpKind::kConv2d, operands, {p.out_type}, std::move(attrs), op.loc);
  conv->outputs.push_back(conv->result(k));
  if (Status s = verify_graph(*conv); !s.is_ok()) {
    *why_not = "its phase convolution does not verify: " + s.message();
    return nullptr;
  }
  return conv;
}

}  // namespace

Result<KernelChoice> select_conv_transpose_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                                  Generator generator) {
  KernelChoice choice;
  if (choice.why_not = unsupported(graph, op); !choice.why_not.empty()) return choice;
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  const Type& ft = graph.values[size_t(op.operands[1])].type;
  QRT_ASSIGN_OR_RETURN(Window2d w, conv_transpose2d_window(op, ft.dims));
  if (w.nchw || ft.rank() != 4) {
    choice.why_not = "only NHWC transposed convolutions";
    return choice;
  }
  std::unique_ptr<Tensor> filter = constant_operand(graph, op.operands[1]);
  std::unique_ptr<Tensor> bias = op.operands.size() > 2 ? constant_operand(graph, op.operands[2]) : nullptr;
  if (!filter || (op.operands.size() > 2 && !bias)) {
    choice.why_not = "the filter or bias is computed at run time";
    return choice;
  }
  Tensor zero = Tensor::zeros(Type::tensor({1}, x.element));  // +0 for floats
  if (!x.element.is_float()) zero.set_int(0, x.element.zero_points[0]);
  std::vector<Phase> phases;
  for (int64_t rh = 0; rh < w.sh; ++rh) {
    const PhaseAxis ah = phase_axis(rh, y.dims[1], w.sh, w.pad_top, w.kh, w.dh);
    for (int64_t rw = 0; rw < w.sw; ++rw) {
      const PhaseAxis aw = phase_axis(rw, y.dims[2], w.sw, w.pad_left, w.kw, w.dw);
      if (ah.outputs == 0 || aw.outputs == 0) continue;  // an output smaller than the stride
      Phase p;
      p.rh = rh, p.rw = rw, p.mh = ah.outputs, p.mw = aw.outputs;
      Staging& s = p.staging;
      s.n = x.dims[0], s.h = x.dims[1], s.w = x.dims[2], s.c = x.dims[3];
      s.rows = ah.staged(), s.cols = aw.staged(), s.row0 = ah.first, s.col0 = aw.first;
      s.elem = zero.element_size();
      s.zero.assign(zero.bytes(), zero.bytes() + s.elem);
      if (x.element.is_float() && (ah.taps.empty() || aw.taps.empty())) {
        // No product reaches these outputs: the reference's +0 plus the bias, then the fused
        // clamp as qrt.clamp applies it (NaN passes).
        // Bounds round to the result's type, as the reference's clamp rounds them.
        const std::optional<FusedClamp> clamp = fused_clamp(op);
        const FloatKind kind = y.element.float_kind;
        for (int64_t o = 0; o < ft.dims[0]; ++o) {
          float v = rounded_to(double(0.0f + (bias ? float(bias->float_at(size_t(o))) : 0.0f)), kind);
          if (clamp) {
            const float lo = rounded_to(clamp->min, kind), hi = rounded_to(clamp->max, kind);
            v = v < lo ? lo : v > hi ? hi : v;
          }
          p.fill.push_back(v);
        }
        phases.push_back(std::move(p));
        continue;
      }
      p.graph = phase_graph(graph, op, *filter, bias.get(), ah, aw, w, p, &choice.why_not);
      if (!p.graph) return choice;
      QRT_ASSIGN_OR_RETURN(KernelChoice inner, select_kernel(*p.graph, p.graph->ops.back(), allowed, generator));
      if (!inner.kernel) {
        choice.why_not = "the convolution of its phase (" + std::to_string(rh) + ", " + std::to_string(rw) +
                         "): " + inner.why_not;
        choice.chain = inner.chain;
        return choice;
      }
      if (choice.chain.empty()) {
        choice.chain = "per sub-pixel phase, a stride-1 convolution: " + inner.chain;
        choice.isa = inner.isa;
      }
      p.conv = std::move(inner.kernel);
      phases.push_back(std::move(p));
    }
  }
  choice.kernel = std::make_unique<ConvTransposeKernel>(op, y, w.sh, w.sw, std::move(phases));
  return choice;
}

}  // namespace qrt::jit
