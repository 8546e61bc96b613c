// qrt — StableHLO's dequantize-op-quantize on kernels (see stablehlo_kernels.h). The three
// steps are the reference's (reference_profiles.cpp, dequantize_op_quantize), so each must
// give the reference's values exactly:
// - dequantize: numerics::dequantize_stablehlo per stored value, looked up in a 256-entry
//   table of the expressed type's bits for 8-bit per-tensor operands; constants are
//   dequantized once at plan time by the reference's own routine and handed to the float
//   kernel as constants, so it prepacks them like any float weights;
// - the float op: a float graph of the op alone, its kernel chosen like any other (the f32
//   GEMM, convolution, pooling, softmax, element-wise programs), bit-exact with the float
//   reference by the float kernels' contract;
// - quantize: numerics::quantize_stablehlo per element (an inlined f32 form for f32 values
//   and scales), then the fused clamp's stored bounds (channel_outputs).
#include "jit/ops/stablehlo_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "ir/float_format.h"
#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/ops/ew_ops.h"
#include "jit/ops/profile_kernels.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

namespace {

// Elements per task of the dequantize and quantize passes.
constexpr int64_t kTaskElements = 16 * 1024;

// The float kinds a plan computes with and their bytes.
bool runs(FloatKind kind) {
  return kind == FloatKind::kF16 || kind == FloatKind::kBF16 || kind == FloatKind::kF32 || kind == FloatKind::kF64;
}

// Whether the wrapper dequantizes or quantizes values of `e` at run time: per tensor or per
// axis, at most 32-bit storage, an expressed type plans compute with.
bool run_time_quant(const ElementType& e) {
  return e.is_uniform() && e.storage.width <= 32 && runs(e.float_kind);
}

// Flat element index → channel of a per-axis type on a tensor of `dims` (0 per tensor).
struct ChannelOf {
  size_t inner = 1, count = 1;
  ChannelOf(const ElementType& e, const std::vector<int64_t>& dims) {
    if (e.kind != ElementKind::kUniformPerAxis) return;
    count = size_t(dims[size_t(e.axis)]);
    for (size_t d = size_t(e.axis) + 1; d < dims.size(); ++d) inner *= size_t(dims[d]);
  }
  size_t operator()(size_t i) const { return count == 1 ? 0 : (i / inner) % count; }
};

// StableHLO's dequantize of one operand's stored values into its expressed type's bits.
class Dequantizer {
 public:
  explicit Dequantizer(const ElementType& q) : q_(q), bytes_(float_kind_bytes(q.float_kind)) {
    if (q.kind != ElementKind::kUniform || q.storage.width > 8) return;
    table_.resize(256 * size_t(bytes_));
    for (int b = 0; b < 256; ++b) {
      const int64_t stored = q.storage.is_signed ? int64_t(int8_t(b)) : int64_t(b);
      const uint64_t bits = float_kind_bits(
          numerics::dequantize_stablehlo(stored, q.zero_points[0], q.scales[0], q.float_kind), q.float_kind);
      std::memcpy(&table_[size_t(b) * bytes_], &bits, bytes_);  // little-endian: the low bytes
    }
  }

  // Elements [begin, end) of `x` (stored values of q_) into `out` (expressed-type elements).
  void run(const Tensor& x, uint8_t* out, size_t begin, size_t end) const {
    if (!table_.empty()) {
      const uint8_t* in = x.bytes();
      switch (bytes_) {
        case 2: return lookup<uint16_t>(in, out, begin, end);
        case 4: return lookup<uint32_t>(in, out, begin, end);
        default: return lookup<uint64_t>(in, out, begin, end);
      }
    }
    const ChannelOf channel(q_, x.type.dims);
    with_int_storage(q_.storage, x.bytes(), [&](const auto* px) {
      if (q_.float_kind == FloatKind::kF32 && channel.count == 1) {
        // dequantize_stablehlo in f32: f32(q - zp) (exact below 2^24), times f32(scale), one rounding.
        const float s = float(q_.scales[0]);
        const int64_t zp = q_.zero_points[0];
        float* o = reinterpret_cast<float*>(out);
        for (size_t i = begin; i < end; ++i) o[i] = float(int64_t(px[i]) - zp) * s;
        return;
      }
      for (size_t i = begin; i < end; ++i) {
        const size_t c = channel(i);
        const uint64_t bits = float_kind_bits(
            numerics::dequantize_stablehlo(int64_t(px[i]), q_.zero_points[c], q_.scales[c], q_.float_kind), q_.float_kind);
        std::memcpy(out + i * bytes_, &bits, bytes_);
      }
    });
  }

  unsigned bytes() const { return bytes_; }
  size_t owned_bytes() const { return table_.size(); }
  bool tabled() const { return !table_.empty(); }

 private:
  template <typename Bits>
  void lookup(const uint8_t* in, uint8_t* out, size_t begin, size_t end) const {
    const Bits* table = reinterpret_cast<const Bits*>(table_.data());
    Bits* o = reinterpret_cast<Bits*>(out);
    for (size_t i = begin; i < end; ++i) o[i] = table[in[i]];
  }

  ElementType q_;
  unsigned bytes_;
  std::vector<uint8_t> table_;  // 8-bit per tensor: the bits of each stored byte's value
};

// StableHLO's quantize of float values (of kind `from`) into the result's storage, then the
// fused clamp's stored bounds.
class Quantizer {
 public:
  Quantizer(const Op& op, const ElementType& q, FloatKind from, const Type& result)
      : q_(q), from_(from), from_bytes_(float_kind_bytes(from)) {
    const size_t channels = q.kind == ElementKind::kUniformPerAxis ? size_t(result.dims[size_t(q.axis)]) : 1;
    outputs_ = channel_outputs(op, q, channels);
  }

  // Elements [begin, end) of `src` into `y`.
  void run(const uint8_t* src, Tensor& y, size_t begin, size_t end) const {
    const ChannelOf channel(q_, y.type.dims);
    with_int_storage(q_.storage, y.bytes(), [&](auto* py) {
      using Out = std::remove_reference_t<decltype(*py)>;
      if (from_ == FloatKind::kF32 && q_.float_kind == FloatKind::kF32 && channel.count == 1 && q_.storage.width <= 16) {
        quantize_f32(reinterpret_cast<const float*>(src) + begin, py + begin, end - begin);
        return;
      }
      for (size_t i = begin; i < end; ++i) {
        uint64_t bits = 0;
        std::memcpy(&bits, src + i * from_bytes_, from_bytes_);
        const size_t c = channel(i);
        const int64_t v = numerics::quantize_stablehlo(float_kind_from_bits(bits, from_), q_.scales[c], q_.zero_points[c],
                                                       q_.storage.min, q_.storage.max, q_.float_kind);
        py[i] = Out(numerics::clamp_i64(v, outputs_.lo[c], outputs_.hi[c]));
      }
    });
  }

  // quantize_stablehlo of f32 values with an f32 scale into storage of at most 16 bits, then
  // the fused clamp: x / s and + zp each rounded to f32, NaN to the zero point, clamped to the
  // storage bounds as floats, rounded half to even (bounds within 2^22, where adding and
  // subtracting 1.5 · 2^23 rounds so). Branch-free on four lanes of the compilers' generic
  // vectors (SSE2, NEON; the scalar form for the tail), since the compare-and-select of the
  // scalar loop keeps the compiler from vectorizing it (-ftrapping-math).
  template <typename Out>
  void quantize_f32(const float* x, Out* y, size_t n) const {
    using F4 = float __attribute__((vector_size(16)));
    using I4 = int32_t __attribute__((vector_size(16)));
    const float s = float(q_.scales[0]), zp = float(q_.zero_points[0]);
    const float lo = float(q_.storage.min), hi = float(q_.storage.max);
    const float nan_value = float(numerics::clamp_i64(q_.zero_points[0], q_.storage.min, q_.storage.max));
    const float clo = float(outputs_.lo[0]), chi = float(outputs_.hi[0]);  // within the storage bounds
    constexpr float kRound = 12582912.0f;  // 1.5 · 2^23
    size_t i = 0;
    const F4 s4 = {s, s, s, s}, zp4 = {zp, zp, zp, zp}, lo4 = {lo, lo, lo, lo}, hi4 = {hi, hi, hi, hi};
    const F4 nan4 = {nan_value, nan_value, nan_value, nan_value}, clo4 = {clo, clo, clo, clo}, chi4 = {chi, chi, chi, chi};
    const F4 round4 = {kRound, kRound, kRound, kRound};
    for (; i + 4 <= n; i += 4) {
      F4 v;
      std::memcpy(&v, x + i, sizeof v);
      const F4 shifted = v / s4 + zp4;
      F4 c = shifted < lo4 ? lo4 : shifted;  // NaN stays NaN through both
      c = c > hi4 ? hi4 : c;
      F4 r = (c + round4) - round4;
      r = shifted == shifted ? r : nan4;
      r = r < clo4 ? clo4 : r;
      r = r > chi4 ? chi4 : r;
      const I4 q = __builtin_convertvector(r, I4);
      for (int l = 0; l < 4; ++l) y[i + size_t(l)] = Out(q[l]);
    }
    for (; i < n; ++i) {
      const float shifted = x[i] / s + zp;
      const float c = shifted < lo ? lo : shifted > hi ? hi : shifted;
      const float r = shifted == shifted ? (c + kRound) - kRound : nan_value;
      y[i] = Out(int32_t(r < clo ? clo : r > chi ? chi : r));
    }
  }

  // The stored result of one float value (the byte tables' entries).
  int64_t one(double v) const {
    return numerics::clamp_i64(numerics::quantize_stablehlo(v, q_.scales[0], q_.zero_points[0], q_.storage.min,
                                                            q_.storage.max, q_.float_kind),
                               outputs_.lo[0], outputs_.hi[0]);
  }

 private:
  ElementType q_;
  FloatKind from_;
  unsigned from_bytes_;
  ChannelOutputs outputs_;
};

// Splits [0, n) into tasks of kTaskElements and runs fn(begin, end) on each.
template <typename Fn>
void for_each_range(Parallel& parallel, size_t n, Fn&& fn) {
  const size_t tasks = (n + size_t(kTaskElements) - 1) / size_t(kTaskElements);
  parallel.for_each(tasks, [&](size_t t) {
    const size_t begin = t * size_t(kTaskElements);
    fn(begin, std::min(n, begin + size_t(kTaskElements)));
  });
}

// Where each operand of the float op comes from.
struct Source {
  enum class Kind { kOperand, kDequantized, kConstant } kind = Kind::kOperand;
  size_t index = 0;  // the op's operand (kOperand, kDequantized) or constants_ entry (kConstant)
};

class StableHloKernel final : public OpKernel {
 public:
  StableHloKernel(const Graph& graph, const Op& op) : OpKernel(graph.values[size_t(op.results[0])].type), kind_(op.kind) {}

  // Built by select_stablehlo_kernel.
  std::shared_ptr<Graph> float_graph_;    // the float op and its folded constants (null: a conversion)
  std::unique_ptr<OpKernel> inner_;       // the float op's kernel (null: a conversion)
  std::vector<Source> sources_;           // per operand of the float op (of the op itself for conversions)
  std::vector<Type> float_types_;         // per source: the float op's operand type
  std::vector<Tensor> constants_;         // folded operands (views without bytes where inner_ holds a copy)
  std::vector<std::optional<Dequantizer>> dequantizers_;  // per operand of the op
  std::vector<bool> folded_;              // per operand of the op
  std::optional<Quantizer> quantizer_;    // null: a float result (quant.dcast)
  FloatKind result_from_ = FloatKind::kF32;  // the float result's kind (what the quantizer reads)
  std::string inner_describe_;

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    if (!inner_) return operands[0]->type.dims;
    std::vector<Tensor> views;
    std::vector<const Tensor*> ptrs;
    views.reserve(sources_.size());
    for (size_t j = 0; j < sources_.size(); ++j) {
      const Source& s = sources_[j];
      if (s.kind == Source::Kind::kConstant) {
        ptrs.push_back(&constants_[s.index]);
        continue;
      }
      Type t = float_types_[j];
      t.dims = operands[s.index]->type.dims;
      views.push_back(Tensor::view_of(t, nullptr));
      ptrs.push_back(&views.back());
    }
    return inner_->result_dims(ptrs);
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    // Dequantized operands and the float result live in buffers of the calling thread, kept
    // between runs (contexts on other threads have their own).
    thread_local std::vector<std::vector<uint8_t>> scratch;
    if (scratch.size() < sources_.size() + 1) scratch.resize(sources_.size() + 1);
    auto buffer = [&](size_t slot, size_t bytes) {
      if (scratch[slot].size() < bytes) scratch[slot].resize(bytes);
      return scratch[slot].data();
    };
    if (kind_ == OpKind::kDCast) {
      const Tensor& x = *operands[0];
      for_each_range(parallel, size_t(x.num_elements()),
                     [&](size_t b, size_t e) { dequantizers_[0]->run(x, out.bytes(), b, e); });
      return Status::ok();
    }
    std::vector<Tensor> views;
    views.reserve(sources_.size());
    std::vector<const Tensor*> ptrs;
    for (size_t j = 0; j < sources_.size(); ++j) {
      const Source& s = sources_[j];
      if (s.kind == Source::Kind::kConstant) {
        ptrs.push_back(&constants_[s.index]);
        continue;
      }
      const Tensor& x = *operands[s.index];
      if (s.kind == Source::Kind::kOperand) {
        ptrs.push_back(&x);
        continue;
      }
      Type t = float_types_[j];
      t.dims = x.type.dims;
      const Dequantizer& dq = *dequantizers_[s.index];
      uint8_t* bytes = buffer(j, size_t(x.num_elements()) * dq.bytes());
      for_each_range(parallel, size_t(x.num_elements()), [&](size_t b, size_t e) { dq.run(x, bytes, b, e); });
      views.push_back(Tensor::view_of(t, bytes));
      ptrs.push_back(&views.back());
    }
    const uint8_t* src = ptrs[0]->bytes();  // conversions: the operand's floats
    if (inner_) {
      Type t = inner_->result_type();
      t.dims = out.type.dims;
      Tensor r = Tensor::view_of(t, buffer(sources_.size(), size_t(out.num_elements()) * float_kind_bytes(result_from_)));
      QRT_RETURN_IF_ERROR(inner_->run_into(ptrs, r, parallel));
      src = r.bytes();
    }
    for_each_range(parallel, size_t(out.num_elements()), [&](size_t b, size_t e) { quantizer_->run(src, out, b, e); });
    return Status::ok();
  }

  std::string describe() const override {
    size_t tables = 0, others = 0;
    for (size_t i = 0; i < dequantizers_.size(); ++i) {
      if (dequantizers_[i]) ++(dequantizers_[i]->tabled() ? tables : others);
    }
    std::string s = "stablehlo dequantize-op-quantize: ";
    if (tables || others) {
      s += "dequantize (" + std::to_string(tables) + " byte table" + (tables == 1 ? "" : "s") +
           (others ? ", " + std::to_string(others) + " portable C++" : "") + "), ";
    }
    if (inner_) s += inner_describe_ + ", ";
    return s + (quantizer_ ? "quantize (portable C++)" : "done");
  }
  bool reads_operand(size_t index) const override { return index >= folded_.size() || !folded_[index]; }
  bool holds_operand_copy(size_t index) const override { return index < folded_.size() && folded_[index]; }
  size_t owned_bytes() const override {
    size_t bytes = inner_ ? inner_->owned_bytes() : 0;
    for (const Tensor& t : constants_) bytes += t.storage.size();
    for (const auto& dq : dequantizers_) bytes += dq ? dq->owned_bytes() : 0;
    return bytes;
  }

 private:
  OpKind kind_;
};

// The 256 stored results of requantizing 8-bit per-tensor `in` to 8-bit per-tensor `out`,
// by input byte: quantize(dequantize(b)) and the fused clamp.
std::vector<uint8_t> requantize_table(const Op& op, const ElementType& in, const Type& result) {
  const Quantizer q(op, result.element, in.float_kind, result);
  std::vector<uint8_t> table(256);
  for (int b = 0; b < 256; ++b) {
    const int64_t stored = in.storage.is_signed ? int64_t(int8_t(b)) : int64_t(b);
    table[size_t(b)] = uint8_t(q.one(numerics::dequantize_stablehlo(stored, in.zero_points[0], in.scales[0], in.float_kind)));
  }
  return table;
}

bool per_tensor_byte(const ElementType& e) { return e.kind == ElementKind::kUniform && e.storage.width == 8; }

// A dense constant op of `t`'s values.
Attribute dense_of(const Tensor& t) {
  DenseElements d;
  d.type = t.type;
  d.bytes.assign(t.bytes(), t.bytes() + t.byte_size());
  return Attribute::make_dense(std::move(d));
}

}  // namespace

Result<KernelChoice> select_stablehlo_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                             Generator generator) {
  KernelChoice choice;
  auto refuse = [&](std::string why) {
    KernelChoice none;
    none.why_not = std::move(why);
    return none;
  };
  if (graph.numerics != NumericsProfile::kStableHlo || profile_formula(graph, op).empty() || op.results.size() != 1) {
    return refuse("not an op the stablehlo profile redefines");
  }
  const Type& rt = graph.values[size_t(op.results[0])].type;
  const bool conversion = op.kind == OpKind::kQCast || op.kind == OpKind::kDCast || op.kind == OpKind::kRequantize;
  if (rt.element.is_quant() ? !run_time_quant(rt.element) : !(rt.element.is_float() && runs(rt.element.float_kind))) {
    return refuse("a result of type " + rt.element.to_string() + " (the kernels quantize per tensor or per axis, at most 32 bits, into f16/bf16/f32/f64)");
  }
  if (rt.element.kind == ElementKind::kUniformPerAxis && rt.dims[size_t(rt.element.axis)] < 0) {
    return refuse("a per-axis result with a dynamic channel axis");
  }
  // 8-bit per-tensor requantization has 256 possible results: a byte table.
  const ElementType& x0 = graph.values[size_t(op.operands[0])].type.element;
  if (op.kind == OpKind::kRequantize && per_tensor_byte(x0) && per_tensor_byte(rt.element) && runs(x0.float_kind)) {
    const std::string name = "stablehlo requantize";
    std::string refusals;
    for (Isa isa : allowed.by_preference()) {
      std::string why;
      QRT_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                           make_byte_table_kernel(graph, op, requantize_table(op, x0, rt), x0.storage.is_signed,
                                                  rt.element.storage.is_signed, name, "", isa, generator, &why));
      if (kernel) {
        choice.kernel = std::move(kernel);
        choice.isa = isa;
        choice.chain = refusals + std::string(isa_name(isa)) + ": chosen (the stablehlo formula in a byte table)";
        return choice;
      }
      refusals += std::string(isa_name(isa)) + ": " + why + "; ";
    }
  }
  auto kernel = std::make_unique<StableHloKernel>(graph, op);
  kernel->folded_.assign(op.operands.size(), false);
  kernel->dequantizers_.resize(op.operands.size());
  // The float op: constants folded (quantized ones dequantized as the reference does), the
  // other operands arguments, dequantized at run time where quantized.
  auto fg = std::make_shared<Graph>();
  fg->name = graph.name;
  std::vector<int> args;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const int v = op.operands[i];
    const Type& t = graph.values[size_t(v)].type;
    Type ft = t;
    if (t.element.is_quant()) ft.element = ElementType::make_float(t.element.float_kind);
    std::unique_ptr<Tensor> c = conversion ? nullptr : constant_operand(graph, v);
    if (c && (t.element.is_quant() || t.element.is_float())) {
      Tensor f = t.element.is_quant() ? dequantize_stablehlo_tensor(*c) : std::move(*c);
      args.push_back(fg->result(fg->add_op(OpKind::kConstant, {}, {f.type}, {{"value", dense_of(f)}}, op.loc)));
      kernel->sources_.push_back({Source::Kind::kConstant, kernel->constants_.size()});
      kernel->constants_.push_back(std::move(f));
      kernel->folded_[i] = true;
    } else if (t.element.is_quant()) {
      if (!run_time_quant(t.element)) {
        return refuse("operand " + std::to_string(i) + " of type " + t.element.to_string() +
                      " (the kernels dequantize per tensor or per axis, at most 32 bits, from f16/bf16/f32/f64)");
      }
      kernel->dequantizers_[i].emplace(t.element);
      args.push_back(fg->add_input(ft, graph.values[size_t(v)].name));
      kernel->sources_.push_back({Source::Kind::kDequantized, i});
    } else {
      args.push_back(fg->add_input(t, graph.values[size_t(v)].name));
      kernel->sources_.push_back({Source::Kind::kOperand, i});
    }
    kernel->float_types_.push_back(ft);
  }
  if (rt.element.is_quant()) {
    const FloatKind from = op.kind == OpKind::kQCast ? x0.float_kind : op.kind == OpKind::kRequantize ? x0.float_kind
                                                                                                       : rt.element.float_kind;
    if (!runs(from)) return refuse("values of " + std::string(float_kind_name(from)) + " to quantize");
    kernel->quantizer_.emplace(op, rt.element, from, rt);
    kernel->result_from_ = from;
  } else if (op.kind != OpKind::kDCast || rt.element.float_kind != x0.float_kind) {
    return refuse("a float result of another type than the operand's expressed type");
  }
  choice.isa = allowed.by_preference().front();
  std::string chain = "any ISA: chosen (portable C++ conversions of the specification's formulas)";
  if (!conversion) {
    Type float_result = rt;
    float_result.element = ElementType::make_float(rt.element.float_kind);
    std::vector<std::pair<std::string, Attribute>> attrs = op.attrs;
    std::erase_if(attrs, [](const auto& a) { return a.first == "clamp_min" || a.first == "clamp_max"; });
    fg->add_op(op.kind, args, {float_result}, std::move(attrs), op.loc);
    fg->outputs.push_back(fg->result(int(fg->ops.size()) - 1));
    QRT_ASSIGN_OR_RETURN(KernelChoice inner, select_kernel(*fg, fg->ops.back(), allowed, generator));
    if (!inner.kernel) return refuse("the float " + std::string(op_info(op.kind).name) + " has no kernel: " + inner.why_not);
    kernel->inner_ = std::move(inner.kernel);
    kernel->inner_describe_ = kernel->inner_->describe();
    choice.isa = inner.isa;
    chain = "the float op: " + inner.chain;
    // Constants the float kernel holds its own copy of and never reads: its packing is the one
    // copy kept (the float graph's bytes and ours are dropped; shapes stay).
    const Op& fop = fg->ops.back();
    for (size_t j = 0; j < kernel->sources_.size(); ++j) {
      const Source& s = kernel->sources_[j];
      if (s.kind != Source::Kind::kConstant || kernel->inner_->reads_operand(j) || !kernel->inner_->holds_operand_copy(j)) {
        continue;
      }
      Tensor& c = kernel->constants_[s.index];
      c = Tensor::view_of(c.type, nullptr);
      Op& producer = fg->ops[size_t(fg->values[size_t(fop.operands[j])].producer)];
      for (auto& [name, value] : producer.attrs) {
        if (name == "value") value.dense.bytes = std::vector<uint8_t>();
      }
    }
    kernel->float_graph_ = std::move(fg);
  }
  choice.chain = conversion ? "numerics profile stablehlo: " + chain
                            : "numerics profile stablehlo: dequantize, " + chain + ", quantize (portable C++)";
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace qrt::jit
