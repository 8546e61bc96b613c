// qrt — quantized qrt.conv_transpose2d as a stride-1 convolution of a staged input (see
// conv_transpose_kernels.h).
//
// Output position o of the transposed convolution meets input i through tap k where
// o = i·s - pad + k·d. With the filter flipped (tap k' = K - 1 - k), that is a stride-1
// correlation S[o + k'·d]·w'[k'] over the staged input S, where S holds input i at
// i·s + (K - 1)·d - pad and the input's zero point (real 0) everywhere else.
#include "jit/ops/conv_transpose_kernels.h"

#include <algorithm>
#include <cstring>

#include "ir/nn_params.h"
#include "ir/ops.h"
#include "jit/core/parallel.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

namespace {

// The staged input's geometry, per image: `rows` × `cols` positions of `c` elements of
// `elem` bytes; input (ih, iw) sits at (row0 + ih·sh, col0 + iw·sw) when inside.
struct Staging {
  int64_t n = 0, h = 0, w = 0, c = 0;
  int64_t sh = 1, sw = 1;
  int64_t rows = 0, cols = 0, row0 = 0, col0 = 0;
  size_t elem = 1;
  std::vector<uint8_t> zero;  // one element holding the input's zero point

  int64_t row_bytes() const { return cols * c * int64_t(elem); }
  int64_t image_bytes() const { return rows * row_bytes(); }
};

// The dense-elements type of stored integers of `storage` with `dims` (signless for signed
// storage, unsigned otherwise, as the text form writes quantized constants).
Type storage_type(const std::vector<int64_t>& dims, const QuantStorage& storage) {
  return Type::tensor(dims, ElementType::make_int(storage.width, storage.is_signed ? Signedness::kSignless
                                                                                    : Signedness::kUnsigned));
}

class ConvTransposeKernel final : public OpKernel {
 public:
  ConvTransposeKernel(const Op& op, const Type& result, std::shared_ptr<Graph> conv_graph,
                      std::unique_ptr<OpKernel> conv, Staging staging)
      : OpKernel(result),
        op_(op),
        conv_graph_(std::move(conv_graph)),
        conv_(std::move(conv)),
        staging_(std::move(staging)),
        staged_type_(conv_graph_->values[size_t(conv_graph_->inputs[0])].type) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    QRT_RETURN_IF_ERROR(check_input(*operands[0]));
    return result_type_.dims;
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    QRT_RETURN_IF_ERROR(check_input(x));
    const Staging& s = staging_;
    // The staging lives in a buffer of the calling thread, kept between runs (contexts on
    // other threads have their own).
    thread_local std::vector<uint8_t> staged;
    const size_t bytes = size_t(s.n * s.image_bytes());
    if (staged.size() < bytes) staged.resize(bytes);
    uint8_t* buffer = staged.data();  // the caller's: the workers' thread_local is another
    const int64_t all_rows = s.n * s.rows;
    const int64_t tasks = std::min(all_rows, even_tasks(int64_t(bytes), kMinStreamTaskElements, parallel));
    parallel.for_each(size_t(tasks), [&](size_t t) {
      for (int64_t r = part_start(all_rows, tasks, int64_t(t)); r < part_start(all_rows, tasks, int64_t(t) + 1); ++r) {
        stage_row(x.bytes(), r / s.rows, r % s.rows, buffer + r * s.row_bytes());
      }
    });
    Tensor staged_view = Tensor::view_of(staged_type_, buffer);
    // The convolution's kernels read only their input: the constants are prepacked.
    std::vector<const Tensor*> conv_operands(conv_graph_->ops.back().operands.size(), nullptr);
    conv_operands[0] = &staged_view;
    return conv_->run_into(conv_operands, out, parallel);
  }

  bool reads_operand(size_t index) const override { return index == 0; }
  bool holds_operand_copy(size_t index) const override { return index != 0; }
  size_t owned_bytes() const override { return conv_->owned_bytes(); }
  std::string describe() const override {
    return conv_->describe() + "; its input staged with zero points between and around the elements (stride " +
           std::to_string(staging_.sh) + "x" + std::to_string(staging_.sw) + ")";
  }

 private:
  Status check_input(const Tensor& x) const {
    const std::vector<int64_t> want{staging_.n, staging_.h, staging_.w, staging_.c};
    if (x.type.dims == want) return Status::ok();
    return Status::error_at(op_.loc, "'qrt.conv_transpose2d' op input is " + x.type.to_string() +
                                         " at run time; the plan was made for " +
                                         Type::tensor(want, x.type.element).to_string());
  }

  // Staged row `r` of image `n`: the zero point everywhere but at the input row it holds.
  void stage_row(const uint8_t* x, int64_t n, int64_t r, uint8_t* dst) const {
    const Staging& s = staging_;
    const int64_t at = r - s.row0;
    const bool holds = at >= 0 && at % s.sh == 0 && at / s.sh < s.h;
    fill_zero(dst, s.cols * s.c);
    if (!holds) return;
    const int64_t pixel = s.c * int64_t(s.elem);
    const uint8_t* src = x + ((n * s.h + at / s.sh) * s.w) * pixel;
    for (int64_t iw = 0; iw < s.w; ++iw) {
      const int64_t col = s.col0 + iw * s.sw;
      if (col >= 0 && col < s.cols) std::memcpy(dst + col * pixel, src + iw * pixel, size_t(pixel));
    }
  }

  void fill_zero(uint8_t* dst, int64_t elements) const {
    if (staging_.elem == 1) {
      std::memset(dst, staging_.zero[0], size_t(elements));
      return;
    }
    for (int64_t i = 0; i < elements; ++i) std::memcpy(dst + i * int64_t(staging_.elem), staging_.zero.data(), staging_.elem);
  }

  Op op_;  // for messages
  std::shared_ptr<Graph> conv_graph_;
  std::unique_ptr<OpKernel> conv_;
  Staging staging_;
  Type staged_type_;
};

// Why `op`'s quantized form cannot run as a staged convolution, or "".
std::string unsupported(const Graph& graph, const Op& op) {
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  if (x.element.kind != ElementKind::kUniform || !y.element.is_uniform()) {
    return "float conv_transpose2d runs on the reference (the convolution kernels sum floats in another order)";
  }
  if (!x.has_static_shape() || !y.has_static_shape()) return "dynamic shapes (" + x.to_string() + ")";
  if (graph.numerics == NumericsProfile::kStableHlo && !profile_formula(graph, op).empty()) {
    return "numerics profile " + profile_formula(graph, op) + "; the kernels sum integers";
  }
  return "";
}

}  // namespace

std::shared_ptr<Graph> conv_transpose_as_conv2d(const Graph& graph, const Op& op, std::string* why_not) {
  if (std::string why = unsupported(graph, op); !why.empty()) {
    *why_not = why;
    return nullptr;
  }
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  const Type& ft = graph.values[size_t(op.operands[1])].type;
  Result<Window2d> window = conv_transpose2d_window(op, ft.dims);
  if (!window.is_ok() || window->nchw || ft.rank() != 4) {
    *why_not = window.is_ok() ? "only NHWC transposed convolutions" : window.status().message();
    return nullptr;
  }
  const Window2d& w = *window;
  std::unique_ptr<Tensor> filter = constant_operand(graph, op.operands[1]);
  std::unique_ptr<Tensor> bias = op.operands.size() > 2 ? constant_operand(graph, op.operands[2]) : nullptr;
  if (!filter || (op.operands.size() > 2 && !bias)) {
    *why_not = "the filter or bias is computed at run time";
    return nullptr;
  }
  auto conv = std::make_shared<Graph>();
  conv->name = graph.name;
  conv->numerics = graph.numerics;
  // The staged input: every output row and column plus the window's reach.
  Type staged = x;
  staged.dims = {x.dims[0], y.dims[1] + (w.kh - 1) * w.dh, y.dims[2] + (w.kw - 1) * w.dw, x.dims[3]};
  const int input = conv->add_input(staged, graph.values[size_t(op.operands[0])].name);
  // The filter flipped in both spatial axes, [O, kh, kw, C / groups] as stored integers.
  DenseElements flipped = DenseElements::zeros(storage_type(ft.dims, ft.element.storage));
  const int64_t o_count = ft.dims[0], kh = ft.dims[1], kw = ft.dims[2], ig = ft.dims[3];
  for (int64_t o = 0; o < o_count; ++o) {
    for (int64_t ky = 0; ky < kh; ++ky) {
      for (int64_t kx = 0; kx < kw; ++kx) {
        for (int64_t c = 0; c < ig; ++c) {
          const size_t from = size_t(((o * kh + ky) * kw + kx) * ig + c);
          const size_t to = size_t(((o * kh + (kh - 1 - ky)) * kw + (kw - 1 - kx)) * ig + c);
          flipped.set_int(to, filter->int_at(from));
        }
      }
    }
  }
  std::vector<int> operands{input};
  operands.push_back(conv->result(conv->add_op(OpKind::kConstant, {}, {ft}, {{"value", Attribute::make_dense(std::move(flipped))}})));
  if (bias) {
    const Type& bt = graph.values[size_t(op.operands[2])].type;
    const QuantStorage storage =
        bt.element.is_any_uniform() ? bt.element.storage : QuantStorage::full_range(bt.element.int_width, true);
    DenseElements values = DenseElements::zeros(bt.element.is_any_uniform() ? storage_type(bt.dims, storage) : bt);
    for (size_t i = 0; i < size_t(bias->num_elements()); ++i) values.set_int(i, bias->int_at(i));
    operands.push_back(conv->result(conv->add_op(OpKind::kConstant, {}, {bt}, {{"value", Attribute::make_dense(std::move(values))}})));
  }
  std::vector<std::pair<std::string, Attribute>> attrs{{"dilations", Attribute::make_int_array({w.dh, w.dw})},
                                                       {"groups", Attribute::make_int(w.groups)},
                                                       {"pads", Attribute::make_int_array({0, 0, 0, 0})},
                                                       {"strides", Attribute::make_int_array({1, 1})}};
  const int k = conv->add_op(OpKind::kConv2d, operands, {y}, std::move(attrs), op.loc);
  conv->outputs.push_back(conv->result(k));
  if (Status s = verify_graph(*conv); !s.is_ok()) {
    *why_not = "its stride-1 convolution does not verify: " + s.message();
    return nullptr;
  }
  return conv;
}

Result<KernelChoice> select_conv_transpose_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                                  Generator generator) {
  KernelChoice choice;
  std::shared_ptr<Graph> conv = conv_transpose_as_conv2d(graph, op, &choice.why_not);
  if (!conv) return choice;
  QRT_ASSIGN_OR_RETURN(KernelChoice inner, select_kernel(*conv, conv->ops.back(), allowed, generator));
  if (!inner.kernel) {
    choice.why_not = "its stride-1 convolution on the staged input: " + inner.why_not;
    choice.chain = inner.chain;
    return choice;
  }
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  const Type& ft = graph.values[size_t(op.operands[1])].type;
  QRT_ASSIGN_OR_RETURN(Window2d w, conv_transpose2d_window(op, ft.dims));
  Staging s;
  s.n = x.dims[0], s.h = x.dims[1], s.w = x.dims[2], s.c = x.dims[3];
  s.sh = w.sh, s.sw = w.sw;
  s.rows = y.dims[1] + (w.kh - 1) * w.dh, s.cols = y.dims[2] + (w.kw - 1) * w.dw;
  s.row0 = (w.kh - 1) * w.dh - w.pad_top, s.col0 = (w.kw - 1) * w.dw - w.pad_left;
  Tensor zero = Tensor::zeros(Type::tensor({1}, x.element));
  zero.set_int(0, x.element.zero_points[0]);
  s.elem = zero.element_size();
  s.zero.assign(zero.bytes(), zero.bytes() + s.elem);
  choice.kernel = std::make_unique<ConvTransposeKernel>(op, y, conv, std::move(inner.kernel), std::move(s));
  choice.chain = "as a stride-1 convolution of the staged input: " + inner.chain;
  choice.isa = inner.isa;
  return choice;
}

}  // namespace qrt::jit
