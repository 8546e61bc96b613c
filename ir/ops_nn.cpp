// qrt — verifiers of the neural-network ops: conv2d, pooling, transpose, concat, pad
// (see docs/ops.md). Registered in the op table in ops.cpp.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "ir/float_format.h"
#include "ir/nn_params.h"
#include "ir/op_verify.h"
#include "ir/ops.h"

namespace qrt::op_verify {

namespace {

Status require_rank(const Op& op, const Type& t, size_t rank, const char* what) {
  if (!t.is_tensor || t.rank() != rank) {
    return op_error(op, std::string(what) + " must be a " + std::to_string(rank) +
                            "-D tensor, got " + t.to_string());
  }
  return Status::ok();
}

// The channel rules conv2d and conv_transpose2d share: per-axis filters along the output
// channels (axis 0), per-axis results along the channel dimension, groups that divide the
// output channels, and input channels = filter channels x groups.
Status check_conv_channels(const Op& op, const Type& in, const Type& filter, const ElementType& oe, bool is_quant,
                           const Window2d& w) {
  const ElementType& fe = filter.element;
  if (fe.kind == ElementKind::kUniformPerAxis && fe.axis != 0) {
    return op_error(op, "filter may only be quantized per-axis along its output-channel "
                        "dimension (axis 0), got axis " + std::to_string(fe.axis));
  }
  if (is_quant && oe.kind == ElementKind::kUniformPerAxis && size_t(oe.axis) != w.channel_dim()) {
    return op_error(op, "result may only be quantized per-axis along its channel dimension (axis " +
                            std::to_string(w.channel_dim()) + "), got axis " + std::to_string(oe.axis));
  }
  const int64_t c = in.dims[w.channel_dim()];
  const int64_t o = filter.dims[0];
  const int64_t ig = w.nchw ? filter.dims[1] : filter.dims[3];
  if (o >= 0 && o % w.groups != 0) {
    return op_error(op, "output channels " + std::to_string(o) + " are not divisible by groups " +
                            std::to_string(w.groups));
  }
  // c / groups first: ig x groups may overflow.
  if (c >= 0 && ig >= 0 && (c % w.groups != 0 || c / w.groups != ig)) {
    return op_error(op, "input has " + std::to_string(c) + " channels but the filter expects " +
                            std::to_string(ig) + " per group x " + std::to_string(w.groups) + " groups");
  }
  return Status::ok();
}

// K = ig·kh·kw, the products each output sums (-1 when unknown). A filter with a 0
// dimension bounds its other dimensions only by 2^48 each, so the product is checked first.
Result<int64_t> window_terms(const Op& op, int64_t ig, const Window2d& w) {
  if (ig < 0 || w.kh < 0 || w.kw < 0) return int64_t(-1);
  if ((long double)ig * (long double)w.kh * (long double)w.kw > (long double)kMaxTensorElements) {
    return op_error(op, "int32 accumulator could overflow: K = " + std::to_string(ig) + " x " + std::to_string(w.kh) +
                            " x " + std::to_string(w.kw) + " (input channels per group x kh x kw) exceeds 2^48");
  }
  return ig * w.kh * w.kw;
}

}  // namespace

// conv2d(input, filter, bias?) {strides, dilations, pads, groups, layout}
Status verify_conv2d(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& filter = operand_type(g, op, 1);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(require_rank(op, in, 4, "input"));
  QRT_RETURN_IF_ERROR(require_rank(op, filter, 4, "filter"));
  QRT_ASSIGN_OR_RETURN(Window2d w, conv2d_window(op, filter.dims));
  const ElementType &ie = in.element, &fe = filter.element, &oe = out.element;
  const bool is_float = ie.is_float() && fe.is_float() && oe.is_float();
  const bool is_hybrid = ie.is_float() && fe.is_uniform() && oe.is_float();
  const bool is_quant = ie.kind == ElementKind::kUniform && fe.is_uniform() && oe.is_uniform();
  if (!is_float && !is_hybrid && !is_quant) {
    return op_error(op, "expects float, hybrid (float input, quantized filter) or quantized "
                        "operands, got " + in.to_string() + " * " + filter.to_string() + " -> " +
                        out.to_string());
  }
  if (is_float && !(ie == fe && ie == oe)) {
    return op_error(op, "float operands and result must have one element type");
  }
  if (is_hybrid && (fe.float_kind != ie.float_kind || !(oe == ie))) {
    return op_error(op, std::string("hybrid conv2d needs the filter's expressed type and the "
                                    "result type to equal the input type ") +
                            float_kind_name(ie.float_kind));
  }
  QRT_RETURN_IF_ERROR(check_conv_channels(op, in, filter, oe, is_quant, w));
  const int64_t o = filter.dims[0];
  const int64_t ig = w.nchw ? filter.dims[1] : filter.dims[3];
  // Batch groups (StableHLO's batch_group_count): batch group g of the input meets output
  // channels [g·O/B, (g+1)·O/B); the result holds N / B samples.
  if (w.batch_groups > 1) {
    if (o >= 0 && o % w.batch_groups != 0) {
      return op_error(op, "output channels " + std::to_string(o) + " are not divisible by batch_groups " +
                              std::to_string(w.batch_groups));
    }
    if (in.dims[0] >= 0 && in.dims[0] % w.batch_groups != 0) {
      return op_error(op, "batch " + std::to_string(in.dims[0]) + " is not divisible by batch_groups " +
                              std::to_string(w.batch_groups));
    }
  }
  const std::vector<int64_t> expected = window_output_dims(in.dims, w, o);
  for (size_t d : {w.height_dim(), w.width_dim()}) {
    if (expected[d] == 0) {
      return op_error(op, "the " + std::string(d == w.height_dim() ? "height" : "width") +
                              " window is larger than the padded input " + in.to_string());
    }
  }
  QRT_RETURN_IF_ERROR(check_shape_equals(op, expected, out));
  if (is_quant) {
    QRT_ASSIGN_OR_RETURN(const int64_t k, window_terms(op, ig, w));
    QRT_RETURN_IF_ERROR(check_accumulator_bound(op, ie, fe, k));
  }
  if (op.operands.size() == 3) QRT_RETURN_IF_ERROR(verify_bias(g, op, in, filter, o));
  return Status::ok();
}

// conv_transpose2d(input, filter, bias?) {strides, dilations, pads, output_padding, groups}:
// NHWC input [N, H, W, C], OHWI filter [O, KH, KW, C / groups]; input element (ih, iw) meets
// filter tap (ky, kx) at output (ih·sh - pad_top + ky·dh, iw·sw - pad_left + kx·dw).
Status verify_conv_transpose2d(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& filter = operand_type(g, op, 1);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(require_rank(op, in, 4, "input"));
  QRT_RETURN_IF_ERROR(require_rank(op, filter, 4, "filter"));
  QRT_ASSIGN_OR_RETURN(Window2d w, conv_transpose2d_window(op, filter.dims));
  const ElementType &ie = in.element, &fe = filter.element, &oe = out.element;
  const bool is_float = ie.is_float() && fe.is_float() && oe.is_float();
  const bool is_quant = ie.kind == ElementKind::kUniform && fe.is_uniform() && oe.is_uniform();
  if (!is_float && !is_quant) {
    return op_error(op, "expects float or quantized (per-tensor input) operands, got " + in.to_string() + " * " +
                            filter.to_string() + " -> " + out.to_string());
  }
  if (is_float && !(ie == fe && ie == oe)) return op_error(op, "float operands and result must have one element type");
  QRT_RETURN_IF_ERROR(check_conv_channels(op, in, filter, oe, is_quant, w));
  const int64_t o = filter.dims[0], ig = filter.dims[3];
  const std::vector<int64_t> expected = transposed_output_dims(in.dims, w, o);
  for (size_t d : {size_t(1), size_t(2)}) {
    const int64_t k = d == 1 ? w.kh : w.kw;
    if (in.dims[d] >= 0 && k >= 0 && expected[d] <= 0) {
      return op_error(op, std::string("the pads remove the whole ") + (d == 1 ? "height" : "width") + " of the output");
    }
  }
  QRT_RETURN_IF_ERROR(check_shape_equals(op, expected, out));
  if (is_quant) {
    // Each output sums at most ig·KH·KW products (fewer with strides): bound that.
    QRT_ASSIGN_OR_RETURN(const int64_t k, window_terms(op, ig, w));
    QRT_RETURN_IF_ERROR(check_accumulator_bound(op, ie, fe, k));
  }
  if (op.operands.size() == 3) QRT_RETURN_IF_ERROR(verify_bias(g, op, in, filter, o));
  return Status::ok();
}

// max_pool2d / avg_pool2d(input) {kernel, strides, pads, layout, count_include_pad}
Status verify_pool2d(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(require_rank(op, in, 4, "input"));
  QRT_ASSIGN_OR_RETURN(Window2d w, pool2d_window(op));
  const bool is_max = op.kind == OpKind::kMaxPool2d;
  if (is_max && op.attr("count_include_pad")) {
    return op_error(op, "has unknown attribute 'count_include_pad' (only avg pooling has it)");
  }
  const bool is_float = in.element.is_float() && out.element == in.element;
  const bool is_quant = in.element.kind == ElementKind::kUniform &&
                        out.element.kind == ElementKind::kUniform &&
                        (!is_max || out.element == in.element);
  if (!is_float && !is_quant) {
    return op_error(op, std::string("expects a float or per-layer !quant.uniform input and result") +
                            (is_max ? " of the same type" : "") + ", got " + in.to_string() +
                            " -> " + out.to_string());
  }
  const std::vector<int64_t> expected = window_output_dims(in.dims, w, in.dims[w.channel_dim()]);
  for (size_t d : {w.height_dim(), w.width_dim()}) {
    if (expected[d] == 0) return op_error(op, "the pooling window is larger than the padded input");
  }
  if (w.pad_top >= w.kh || w.pad_bottom >= w.kh || w.pad_left >= w.kw || w.pad_right >= w.kw) {
    return op_error(op, "padding must be smaller than the kernel (a window would see only padding)");
  }
  return check_shape_equals(op, expected, out);
}

// transpose(x) {perm}
Status verify_transpose(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.is_tensor) return op_error(op, "operand must be a tensor");
  QRT_ASSIGN_OR_RETURN(auto perm, int_array_attr(op, "perm", int(in.rank()), {}));
  if (!op.attr("perm")) return op_error(op, "requires attribute 'perm'");
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != int64_t(i)) {
      return op_error(op, "'perm' " + op.attr("perm")->to_string() + " is not a permutation of 0.." +
                              std::to_string(int64_t(in.rank()) - 1));
    }
  }
  std::vector<int64_t> expected(in.rank());
  for (size_t i = 0; i < perm.size(); ++i) expected[i] = in.dims[size_t(perm[i])];
  // A channel axis or sub-channel blocks move with their dimensions.
  const ElementType expected_element = in.element.permuted(perm);
  if (!(out.element == expected_element)) {
    return op_error(op, "result element type must be " + expected_element.to_string() + ", got " +
                            out.element.to_string());
  }
  return check_shape_equals(op, expected, out);
}

// concat(x0, x1, ...) {axis}
Status verify_concat(const Graph& g, const Op& op) {
  const Type& out = result_type(g, op);
  const Type& first = operand_type(g, op, 0);
  if (!first.is_tensor || first.rank() == 0) return op_error(op, "operands must be tensors of rank >= 1");
  QRT_ASSIGN_OR_RETURN(int64_t axis, int_attr(op, "axis", -1));
  if (!op.attr("axis")) return op_error(op, "requires attribute 'axis'");
  if (axis < 0 || axis >= int64_t(first.rank())) {
    return op_error(op, "axis " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(first.rank()));
  }
  // Float and integer operands move as they are (one element type); quantized ones requantize.
  const bool is_plain = first.element.is_float() || first.element.is_integer();
  std::vector<int64_t> expected = first.dims;
  expected[size_t(axis)] = 0;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Type& t = operand_type(g, op, i);
    const bool ok_type = is_plain ? t.element == out.element
                                  : t.element.kind == ElementKind::kUniform &&
                                        out.element.kind == ElementKind::kUniform;
    if (!ok_type) {
      return op_error(op, "operands and result must share one float or integer type or all be per-layer "
                          "!quant.uniform, got operand " + std::to_string(i) + " " + t.to_string() +
                          " and result " + out.to_string());
    }
    if (t.rank() != first.rank()) return op_error(op, "operands must have the same rank");
    for (size_t d = 0; d < t.rank(); ++d) {
      if (int64_t(d) == axis) continue;
      if (t.dims[d] >= 0 && first.dims[d] >= 0 && t.dims[d] != first.dims[d]) {
        return op_error(op, "operand " + std::to_string(i) + " " + t.to_string() +
                                " differs from operand 0 outside axis " + std::to_string(axis));
      }
    }
    const int64_t d = t.dims[size_t(axis)];
    int64_t& e = expected[size_t(axis)];
    e = (e < 0 || d < 0) ? -1 : e + d;  // each dimension is at most 2^48: no overflow
    if (e > kMaxTensorElements) {
      return op_error(op, "operands 0 to " + std::to_string(i) + " add up to " + std::to_string(e) + " along axis " +
                              std::to_string(axis) + ", more than qrt's limit of 2^48");
    }
  }
  if (Status fits = Type::tensor(expected, out.element).verify(); !fits.is_ok()) return op_error(op, fits.message());
  return check_shape_equals(op, expected, out);
}

// pad(x) {pads = [begin_0.., end_0..], value}
Status verify_pad(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.is_tensor) return op_error(op, "operand must be a tensor");
  if (!op.attr("pads")) return op_error(op, "requires attribute 'pads' = [begin..., end...]");
  QRT_ASSIGN_OR_RETURN(auto pads, int_array_attr(op, "pads", int(2 * in.rank()), {}));
  for (int64_t p : pads) {
    if (p < 0) return op_error(op, "pads must be >= 0 (use a slice to crop), got " + std::to_string(p));
  }
  QRT_RETURN_IF_ERROR(check_window_limit(op, "pads", pads));  // dims + pads then fit int64
  const Attribute* value = op.attr("value");
  if (value && (value->kind != Attribute::Kind::kFloat || std::isnan(value->f))) {
    return op_error(op, "attribute 'value' must be a non-NaN float, got " + value->to_string());
  }
  if (!in.element.is_float() && !in.element.is_uniform()) {
    return op_error(op, "operand must be float or !quant.uniform, got " + in.to_string());
  }
  if (!(out.element == in.element)) {
    return op_error(op, "result element type " + out.element.to_string() +
                            " must equal the operand element type " + in.element.to_string());
  }
  std::vector<int64_t> expected(in.rank());
  for (size_t d = 0; d < in.rank(); ++d) {
    expected[d] = in.dims[d] < 0 ? -1 : in.dims[d] + pads[d] + pads[d + in.rank()];
  }
  return check_shape_equals(op, expected, out);
}

// softmax(x) {axis, beta} and logistic(x): float -> same float type, or per-tensor
// quantized -> per-tensor quantized (the fixed output scales converters use are the
// importers' business; any parameters are allowed).
Status verify_softmax_logistic(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  const bool is_float = in.element.is_float() && in.element.float_kind != FloatKind::kF64 && out.element == in.element;
  const bool is_quant = in.element.kind == ElementKind::kUniform && out.element.kind == ElementKind::kUniform &&
                        in.element.float_kind != FloatKind::kF64 && out.element.float_kind != FloatKind::kF64;
  if (!is_float && !is_quant) {
    return op_error(op, "expects f16/bf16/f32 in and out, or per-layer !quant.uniform in and out, got " +
                            in.to_string() + " -> " + out.to_string());
  }
  if (!in.is_tensor || !dims_compatible(in.dims, out.dims)) {
    return op_error(op, "result shape must equal the operand shape, got " + in.to_string() + " -> " + out.to_string());
  }
  if (op.kind == OpKind::kSoftmax) {
    QRT_ASSIGN_OR_RETURN(int64_t axis, int_attr(op, "axis", -1));
    if (axis < -int64_t(in.rank()) || axis >= int64_t(in.rank())) {
      return op_error(op, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in.rank()));
    }
    const Attribute* beta = op.attr("beta");
    if (beta && (beta->kind != Attribute::Kind::kFloat || !(beta->f > 0) || std::isinf(beta->f))) {
      return op_error(op, "attribute 'beta' must be a positive finite float, got " + beta->to_string());
    }
  }
  return Status::ok();
}

// mean(x) {axes, keepdims}
Status verify_mean(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.is_tensor) return op_error(op, "operand must be a tensor");
  if (!op.attr("axes")) return op_error(op, "requires attribute 'axes'");
  QRT_ASSIGN_OR_RETURN(auto axes, int_array_attr(op, "axes", -1, {}));
  QRT_ASSIGN_OR_RETURN(int64_t keepdims, int_attr(op, "keepdims", 0));
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t a : axes) {
    if (a < 0 || a >= int64_t(in.rank()) || reduced[size_t(a)]) {
      return op_error(op, "axes " + op.attr("axes")->to_string() + " must be distinct dimensions of " + in.to_string());
    }
    reduced[size_t(a)] = true;
  }
  const bool is_float = in.element.is_float() && out.element == in.element;
  const bool is_quant = in.element.kind == ElementKind::kUniform && out.element.kind == ElementKind::kUniform;
  if (!is_float && !is_quant) {
    return op_error(op, "expects float in and out of one type, or per-layer !quant.uniform in and out, got " +
                            in.to_string() + " -> " + out.to_string());
  }
  if (const Attribute* acc = op.attr("accumulator")) {
    // The StableHLO quantized-reduce contract made explicit: stored values minus the zero
    // point summed in i32, narrowed once.
    if (!is_quant || acc->kind != Attribute::Kind::kString || acc->s != "i32") {
      return op_error(op, "attribute 'accumulator' must be \"i32\" on a quantized mean, got " + acc->to_string());
    }
    // The count saturates at 2^31 terms (which fail the check anyway): dimensions after a 0
    // are not bounded by the element count, so their product could overflow.
    constexpr int64_t kCap = int64_t(1) << 31;
    int64_t count = 1;
    for (size_t d = 0; d < in.rank(); ++d) {
      const int64_t n = in.dims[d];
      if (reduced[d] && n >= 0) count = n > 0 && count > kCap / n ? kCap : count * n;
    }
    const int64_t widest = std::max(std::llabs(in.element.storage.max - in.element.zero_points[0]),
                                    std::llabs(in.element.storage.min - in.element.zero_points[0]));
    if ((long double)count * (long double)widest > 2147483647.0L) {
      return op_error(op, "the i32 accumulator could overflow: " +
                              (count == kCap ? "at least " + std::to_string(kCap) : std::to_string(count)) +
                              " terms of up to " + std::to_string(widest));
    }
  }
  return check_shape_equals(op, reduction_dims(in.dims, reduced, keepdims != 0), out);
}

// dynamic_quantize(x: f32) -> (y: ui8 of x's shape, scale: f32 scalar, zero_point: ui8 scalar)
Status verify_dynamic_quantize(const Graph& g, const Op& op) {
  const Type& x = operand_type(g, op, 0);
  const Type& y = result_type(g, op, 0);
  const Type& scale = result_type(g, op, 1);
  const Type& zp = result_type(g, op, 2);
  const ElementType u8 = ElementType::make_int(8, Signedness::kUnsigned);
  if (!x.is_tensor || !(x.element == ElementType::make_float(FloatKind::kF32))) {
    return op_error(op, "operand must be an f32 tensor, got " + x.to_string());
  }
  if (!y.is_tensor || !(y.element == u8) || !dims_compatible(x.dims, y.dims)) {
    return op_error(op, "result 0 must be a ui8 tensor of the operand's shape, got " + y.to_string());
  }
  if (!(scale.element == ElementType::make_float(FloatKind::kF32)) || scale.rank() != 0) {
    return op_error(op, "result 1 (the scale) must be an f32 scalar, got " + scale.to_string());
  }
  if (!(zp.element == u8) || zp.rank() != 0) {
    return op_error(op, "result 2 (the zero point) must be a ui8 scalar, got " + zp.to_string());
  }
  return Status::ok();
}

namespace {

// grid_sample(x [N, C, d1..dr], grid [N, o1..or, r]) {align_corners, mode, padding_mode}
// -> [N, C, o1..or]: x sampled at the grid's normalized positions, the last grid entry
// indexing d_r (ONNX GridSample). Interpolation computes in f64: float operands only.
Status verify_grid_sample(const Graph& g, const Op& op) {
  const Type& x = operand_type(g, op, 0);
  const Type& grid = operand_type(g, op, 1);
  const Type& out = result_type(g, op);
  auto runs = [](const Type& t) { return t.is_tensor && t.element.is_float() && float_kind_runs(t.element.float_kind); };
  if (!runs(x) || !runs(grid) || !out.is_tensor || !(out.element == x.element)) {
    return op_error(op, "samples float tensors (f16, bf16, f32, f64) at a float grid into x's element type, got " +
                            x.to_string() + " at " + grid.to_string() + " -> " + out.to_string() +
                            " (dequantize around it)");
  }
  if (x.rank() < 3) {
    return op_error(op, "x must have a batch, a channel and at least one spatial dimension, got " + x.to_string());
  }
  const size_t r = x.rank() - 2;
  if (grid.rank() != r + 2 || (grid.dims[r + 1] >= 0 && grid.dims[r + 1] != int64_t(r))) {
    return op_error(op, "grid must be [N, out_1 .. out_" + std::to_string(r) + ", " + std::to_string(r) + "] for x " +
                            x.to_string() + ", got " + grid.to_string());
  }
  if (x.dims[0] >= 0 && grid.dims[0] >= 0 && x.dims[0] != grid.dims[0]) {
    return op_error(op, "x and grid differ in batch: " + x.to_string() + " and " + grid.to_string());
  }
  QRT_ASSIGN_OR_RETURN(std::string mode, string_attr(op, "mode", {"linear", "nearest", "cubic"}, "linear"));
  QRT_ASSIGN_OR_RETURN(std::string padding, string_attr(op, "padding_mode", {"zeros", "border", "reflection"}, "zeros"));
  QRT_ASSIGN_OR_RETURN(int64_t align, int_attr(op, "align_corners", 0));
  if (align != 0 && align != 1) return op_error(op, "'align_corners' must be 0 or 1, got " + std::to_string(align));
  (void)mode;
  (void)padding;
  std::vector<int64_t> dims = {x.dims[0], x.dims[1]};
  dims.insert(dims.end(), grid.dims.begin() + 1, grid.dims.begin() + 1 + std::ptrdiff_t(r));
  return check_shape_equals(op, dims, out);
}

}  // namespace

std::vector<OpInfo> grid_sample_op_entries() {
  return {{OpKind::kGridSample, "qrt.grid_sample", 2, 2, {"align_corners", "mode", "padding_mode"}, verify_grid_sample,
           "x [N, C, d...] sampled at grid [N, o..., r]'s normalized positions: linear, nearest or cubic, "
           "zeros, border or reflection padding (ONNX GridSample)"}};
}

}  // namespace qrt::op_verify
