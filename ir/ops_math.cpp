// qrt — the float/integer math ops that transformer graphs use: arithmetic and comparisons
// with broadcasting, unary functions, gelu, layer_norm, reductions, gather, slice,
// broadcast_to, cast and shape (see docs/ops.md). Registered in the op table in ops.cpp.
#include <algorithm>
#include <cmath>

#include "ir/float_format.h"
#include "ir/op_verify.h"
#include "ir/ops.h"

namespace qrt::op_verify {

namespace {

bool is_plain(const ElementType& e) { return e.is_float() || e.is_integer(); }
bool is_bool(const ElementType& e) { return e.is_integer() && e.int_width == 1; }

Status check_tensors(const Op& op, std::initializer_list<const Type*> types) {
  for (const Type* t : types) {
    if (!t->is_tensor) return op_error(op, "operands and result must be tensors, got " + t->to_string());
  }
  return Status::ok();
}

// The broadcast of every operand's shape must be the result's shape.
Status check_broadcast_result(const Graph& g, const Op& op, size_t first, const Type& out) {
  std::vector<int64_t> dims = operand_type(g, op, first).dims;
  for (size_t i = first + 1; i < op.operands.size(); ++i) {
    auto shape = broadcast_shapes(dims, operand_type(g, op, i).dims);
    if (!shape.is_ok()) return op_error(op, shape.status().message());
    dims = *shape;
  }
  return check_shape_equals(op, dims, out);
}

// Arithmetic: float or plain integer operands of one element type; the result has it too.
Status verify_arithmetic(const Graph& g, const Op& op) {
  const Type& a = operand_type(g, op, 0);
  const Type& b = operand_type(g, op, 1);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(check_tensors(op, {&a, &b, &out}));
  if (!is_plain(a.element) || !(a.element == b.element) || !(a.element == out.element) || is_bool(a.element)) {
    return op_error(op, "operands and result must have one float or integer (not i1) element type, got " +
                            a.to_string() + ", " + b.to_string() + " -> " + out.to_string());
  }
  if (op.kind == OpKind::kPow && !a.element.is_float()) return op_error(op, "operands must be float");
  return check_broadcast_result(g, op, 0, out);
}

// Comparisons: operands of one float or integer type, an i1 result.
Status verify_compare(const Graph& g, const Op& op) {
  const Type& a = operand_type(g, op, 0);
  const Type& b = operand_type(g, op, 1);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(check_tensors(op, {&a, &b, &out}));
  if (!is_plain(a.element) || !(a.element == b.element) || !is_bool(out.element)) {
    return op_error(op, "expects operands of one float or integer type and an i1 result, got " + a.to_string() +
                            ", " + b.to_string() + " -> " + out.to_string());
  }
  return check_broadcast_result(g, op, 0, out);
}

Status verify_not(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!is_bool(in.element) || !(in == out)) {
    return op_error(op, "expects i1 in and out of one shape, got " + in.to_string() + " -> " + out.to_string());
  }
  return Status::ok();
}

// where(cond: i1, a, b): a where cond, else b, all three broadcast.
Status verify_where(const Graph& g, const Op& op) {
  const Type& c = operand_type(g, op, 0);
  const Type& a = operand_type(g, op, 1);
  const Type& b = operand_type(g, op, 2);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(check_tensors(op, {&c, &a, &b, &out}));
  if (!is_bool(c.element)) return op_error(op, "condition must be i1, got " + c.to_string());
  if (!is_plain(a.element) || !(a.element == b.element) || !(a.element == out.element)) {
    return op_error(op, "both branches and the result must have one float or integer type, got " + a.to_string() +
                            ", " + b.to_string() + " -> " + out.to_string());
  }
  return check_broadcast_result(g, op, 0, out);
}

// Float functions: one float type in and out, same shape.
Status verify_float_unary(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  const bool ints_ok = op.kind == OpKind::kNeg;
  if (!(in.element.is_float() || (ints_ok && in.element.is_integer() && !is_bool(in.element))) || !(in == out)) {
    return op_error(op, std::string("expects ") + (ints_ok ? "a float or integer" : "a float") +
                            " operand and a result of its type, got " + in.to_string() + " -> " + out.to_string());
  }
  if (op.kind == OpKind::kGelu) {
    QRT_RETURN_IF_ERROR(string_attr(op, "approximate", {"none", "tanh"}, "none").status());
  }
  return Status::ok();
}

Status verify_cast(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!is_plain(in.element) || !is_plain(out.element)) {
    return op_error(op, "casts between float and integer types only (quantized values use quant.dcast/qcast/scast), got " +
                            in.to_string() + " -> " + out.to_string());
  }
  return check_same_shape(op, in, out);
}

// layer_norm(x, scale, bias?) {axis, epsilon}: normalized over dims [axis, rank).
Status verify_layer_norm(const Graph& g, const Op& op) {
  const Type& x = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!x.is_tensor || !x.element.is_float() || !(x == out)) {
    return op_error(op, "expects a float tensor and a result of its type, got " + x.to_string() + " -> " + out.to_string());
  }
  QRT_ASSIGN_OR_RETURN(int64_t axis, int_attr(op, "axis", -1));
  if (axis < 0 || axis >= int64_t(x.rank())) {
    return op_error(op, "axis " + std::to_string(axis) + " is not a dimension of " + x.to_string());
  }
  const Attribute* eps = op.attr("epsilon");
  if (!eps || eps->kind != Attribute::Kind::kFloat || !(eps->f >= 0.0)) {
    return op_error(op, "requires a float attribute 'epsilon' >= 0");
  }
  const std::vector<int64_t> normalized(x.dims.begin() + axis, x.dims.end());
  for (size_t i = 1; i < op.operands.size(); ++i) {
    const Type& p = operand_type(g, op, i);
    if (!(p.element == x.element) || !dims_compatible(p.dims, normalized)) {
      return op_error(op, std::string(i == 1 ? "scale" : "bias") + " must be " + x.element.to_string() + " of shape [" +
                              dims_to_string(normalized) + "], got " + p.to_string());
    }
  }
  return Status::ok();
}

// reduce_sum / reduce_max {axes, keepdims}: float or integer, same element type.
Status verify_reduce(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.is_tensor || !is_plain(in.element) || is_bool(in.element) || !(in.element == out.element)) {
    return op_error(op, "expects float or integer in and out of one type, got " + in.to_string() + " -> " + out.to_string());
  }
  QRT_ASSIGN_OR_RETURN(auto axes, int_array_attr(op, "axes", -1, {}));
  QRT_ASSIGN_OR_RETURN(int64_t keepdims, int_attr(op, "keepdims", 0));
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t a : axes) {
    if (a < 0 || a >= int64_t(in.rank()) || reduced[size_t(a)]) {
      return op_error(op, "axes must be distinct dimensions of " + in.to_string());
    }
    reduced[size_t(a)] = true;
  }
  return check_shape_equals(op, reduction_dims(in.dims, reduced, keepdims != 0), out);
}

// argmax / argmin(x) {axis, keepdims, select_last_index}: i64 indices of the reduced shape.
Status verify_arg_reduce(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(check_tensors(op, {&in, &out}));
  const bool per_tensor = in.element.kind == ElementKind::kUniform;
  if ((!is_plain(in.element) && !per_tensor) || is_bool(in.element)) {
    return op_error(op, "expects a float, integer or per-tensor quantized operand, got " + in.to_string());
  }
  if (!out.element.is_integer() || out.element.int_width != 64 || out.element.int_sign == Signedness::kUnsigned) {
    return op_error(op, "result must be i64 indices, got " + out.to_string());
  }
  if (!op.attr("axis")) return op_error(op, "needs attribute 'axis'");
  QRT_ASSIGN_OR_RETURN(int64_t axis, int_attr(op, "axis", 0));
  QRT_ASSIGN_OR_RETURN(int64_t keepdims, int_attr(op, "keepdims", 1));
  QRT_ASSIGN_OR_RETURN(int64_t last, int_attr(op, "select_last_index", 0));
  if (axis < 0 || axis >= int64_t(in.rank())) {
    return op_error(op, "axis " + std::to_string(axis) + " is not a dimension of " + in.to_string());
  }
  if ((keepdims != 0 && keepdims != 1) || (last != 0 && last != 1)) {
    return op_error(op, "'keepdims' and 'select_last_index' must be 0 or 1");
  }
  if (in.dims[size_t(axis)] == 0) return op_error(op, "the reduced dimension is empty: no index to return");
  std::vector<bool> reduced(in.rank(), false);
  reduced[size_t(axis)] = true;
  return check_shape_equals(op, reduction_dims(in.dims, reduced, keepdims != 0), out);
}

// gather(data, indices) {axis}: out = data[:axis] + indices.dims + data[axis+1:].
Status verify_gather(const Graph& g, const Op& op) {
  const Type& data = operand_type(g, op, 0);
  const Type& idx = operand_type(g, op, 1);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(check_tensors(op, {&data, &idx, &out}));
  if (!idx.element.is_integer() || is_bool(idx.element)) return op_error(op, "indices must be integers, got " + idx.to_string());
  if (data.element.kind == ElementKind::kUniformPerAxis || !(data.element == out.element)) {
    return op_error(op, "result element type must equal the data's (per-axis data is not supported), got " +
                            data.to_string() + " -> " + out.to_string());
  }
  QRT_ASSIGN_OR_RETURN(int64_t axis, int_attr(op, "axis", 0));
  if (axis < 0 || axis >= int64_t(data.rank())) return op_error(op, "axis " + std::to_string(axis) + " is out of range");
  std::vector<int64_t> expected(data.dims.begin(), data.dims.begin() + axis);
  expected.insert(expected.end(), idx.dims.begin(), idx.dims.end());
  expected.insert(expected.end(), data.dims.begin() + axis + 1, data.dims.end());
  return check_shape_equals(op, expected, out);
}

// slice {starts, ends, steps}: one entry per dimension, ONNX's clamping of out-of-range bounds.
Status verify_slice(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.is_tensor || !(in.element == out.element) || in.rank() != out.rank() ||
      in.element.kind == ElementKind::kUniformPerAxis) {
    return op_error(op, "expects a tensor (not per-axis) and a result of its element type and rank, got " +
                            in.to_string() + " -> " + out.to_string());
  }
  const int rank = int(in.rank());
  QRT_ASSIGN_OR_RETURN(auto starts, int_array_attr(op, "starts", rank, {}));
  QRT_ASSIGN_OR_RETURN(auto ends, int_array_attr(op, "ends", rank, {}));
  QRT_ASSIGN_OR_RETURN(auto steps, int_array_attr(op, "steps", rank, std::vector<int64_t>(size_t(rank), 1)));
  if (starts.size() != size_t(rank) || ends.size() != size_t(rank)) return op_error(op, "requires 'starts' and 'ends'");
  std::vector<int64_t> expected;
  for (int d = 0; d < rank; ++d) {
    if (steps[size_t(d)] == 0) return op_error(op, "step of dimension " + std::to_string(d) + " is 0");
    expected.push_back(in.dims[size_t(d)] < 0 ? -1
                                              : slice_extent(in.dims[size_t(d)], starts[size_t(d)], ends[size_t(d)],
                                                             steps[size_t(d)]));
  }
  return check_shape_equals(op, expected, out);
}

Status verify_broadcast_to(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.is_tensor || !out.is_tensor || !(in.element == out.element) || in.element.kind == ElementKind::kUniformPerAxis) {
    return op_error(op, "expects a tensor (not per-axis) and a result of its element type, got " + in.to_string() +
                            " -> " + out.to_string());
  }
  auto shape = broadcast_shapes(in.dims, out.dims);
  if (!shape.is_ok() || !dims_compatible(*shape, out.dims)) {
    return op_error(op, "cannot broadcast " + in.to_string() + " to " + out.to_string());
  }
  return Status::ok();
}

Status verify_shape(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  const Type expected = Type::tensor({int64_t(in.rank())}, ElementType::make_int(64));
  if (!in.is_tensor || !(out == expected)) {
    return op_error(op, "result must be " + expected.to_string() + ", got " + out.to_string());
  }
  return Status::ok();
}

Status verify_resize(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.is_tensor || !out.is_tensor || !(in.element == out.element) || in.rank() != out.rank() ||
      in.element.kind == ElementKind::kUniformPerAxis) {
    return op_error(op, "expects a tensor (not per-axis) and a result of its element type and rank, got " + in.to_string() +
                            " -> " + out.to_string());
  }
  QRT_ASSIGN_OR_RETURN(std::string mode, string_attr(op, "mode", {"nearest", "linear", "cubic"}, "nearest"));
  if (mode != "nearest") {
    // Interpolation computes in f64 and rounds once to the element type: floats only.
    if (!in.element.is_float() || !float_kind_runs(in.element.float_kind)) {
      return op_error(op, "mode '" + mode + "' interpolates floats (f16, bf16, f32, f64), not " + in.element.to_string() +
                              " (dequantize around it)");
    }
    QRT_ASSIGN_OR_RETURN(int64_t exclude, int_attr(op, "exclude_outside", 0));
    if (exclude != 0 && exclude != 1) return op_error(op, "'exclude_outside' must be 0 or 1");
    if (const Attribute* a = op.attr("cubic_coeff_a"); a && (a->kind != Attribute::Kind::kFloat || !std::isfinite(a->f))) {
      return op_error(op, "'cubic_coeff_a' must be a finite float");
    }
  } else if (op.attr("exclude_outside") || op.attr("cubic_coeff_a")) {
    return op_error(op, "'exclude_outside' and 'cubic_coeff_a' apply to mode cubic only");
  }
  QRT_ASSIGN_OR_RETURN(std::string coord,
                       string_attr(op, "coordinate_transformation_mode",
                                   {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"},
                                   "half_pixel"));
  QRT_ASSIGN_OR_RETURN(std::string nearest,
                       string_attr(op, "nearest_mode", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
                                   "round_prefer_floor"));
  (void)mode;
  (void)coord;
  (void)nearest;
  if (const Attribute* scales = op.attr("scales")) {
    if (scales->kind != Attribute::Kind::kArray || scales->array.size() != in.rank()) {
      return op_error(op, "'scales' must hold one float per dimension (" + std::to_string(in.rank()) + ")");
    }
    for (size_t d = 0; d < in.rank(); ++d) {
      const Attribute& s = scales->array[d];
      if (s.kind != Attribute::Kind::kFloat || !(s.f > 0.0) || !std::isfinite(s.f)) {
        return op_error(op, "'scales' must be positive finite floats");
      }
      // floor(in x scale) must be a dimension size qrt accepts (and convertible to int64).
      if (in.dims[d] >= 0 && double(in.dims[d]) * s.f > double(int64_t(1) << 48)) {
        return op_error(op, "scale " + format_mlir_float(s.f, FloatKind::kF64) + " of dimension " +
                                std::to_string(d) + " resizes " + std::to_string(in.dims[d]) +
                                " elements to more than qrt's limit of 2^48");
      }
    }
  }
  for (size_t d = 0; d < out.rank(); ++d) {
    if (out.dims[d] == 0 || in.dims[d] == 0) return op_error(op, "resizes from or to an empty dimension");
  }
  return Status::ok();
}

}  // namespace

std::vector<OpInfo> math_op_entries() {
  return {
      {OpKind::kSub, "qrt.sub", 2, 2, {}, verify_arithmetic, "a - b with numpy broadcasting (float or integer)"},
      {OpKind::kDiv, "qrt.div", 2, 2, {}, verify_arithmetic,
       "a / b with numpy broadcasting (float; integers truncate toward zero)"},
      {OpKind::kPow, "qrt.pow", 2, 2, {}, verify_arithmetic, "a ^ b with numpy broadcasting (float)"},
      {OpKind::kMax, "qrt.max", 2, 2, {}, verify_arithmetic, "element-wise maximum with numpy broadcasting"},
      {OpKind::kMin, "qrt.min", 2, 2, {}, verify_arithmetic, "element-wise minimum with numpy broadcasting"},
      {OpKind::kEqual, "qrt.equal", 2, 2, {}, verify_compare, "a == b as i1, numpy broadcasting"},
      {OpKind::kLess, "qrt.less", 2, 2, {}, verify_compare, "a < b as i1, numpy broadcasting"},
      {OpKind::kGreater, "qrt.greater", 2, 2, {}, verify_compare, "a > b as i1, numpy broadcasting"},
      {OpKind::kNot, "qrt.not", 1, 1, {}, verify_not, "logical not of an i1 tensor"},
      {OpKind::kWhere, "qrt.where", 3, 3, {}, verify_where, "cond ? a : b with numpy broadcasting"},
      {OpKind::kSqrt, "qrt.sqrt", 1, 1, {}, verify_float_unary, "square root (IEEE, correctly rounded)"},
      {OpKind::kReciprocal, "qrt.reciprocal", 1, 1, {}, verify_float_unary, "1 / x, in the operand's float type"},
      {OpKind::kExp, "qrt.exp", 1, 1, {}, verify_float_unary, "e ^ x (qrt's exp, docs/numerics.md)"},
      {OpKind::kTanh, "qrt.tanh", 1, 1, {}, verify_float_unary, "tanh (qrt's tanh, docs/numerics.md)"},
      {OpKind::kErf, "qrt.erf", 1, 1, {}, verify_float_unary, "the error function (qrt's erf, docs/numerics.md)"},
      {OpKind::kNeg, "qrt.neg", 1, 1, {}, verify_float_unary, "negation -x (float, or integer wrapping)"},
      {OpKind::kGelu, "qrt.gelu", 1, 1, {"approximate"}, verify_float_unary,
       "x * Phi(x): approximate = \"none\" (erf) or \"tanh\""},
      {OpKind::kCast, "qrt.cast", 1, 1, {}, verify_cast,
       "convert between float and integer element types (float -> int truncates and saturates)"},
      {OpKind::kLayerNorm, "qrt.layer_norm", 2, 3, {"axis", "epsilon"}, verify_layer_norm,
       "(x - mean) / sqrt(var + epsilon) * scale + bias over dims [axis, rank)"},
      {OpKind::kReduceSum, "qrt.reduce_sum", 1, 1, {"axes", "keepdims"}, verify_reduce, "sum over axes"},
      {OpKind::kReduceMax, "qrt.reduce_max", 1, 1, {"axes", "keepdims"}, verify_reduce, "maximum over axes"},
      {OpKind::kGather, "qrt.gather", 2, 2, {"axis"}, verify_gather,
       "take slices of data along axis at integer indices (negative indices count from the end)"},
      {OpKind::kSlice, "qrt.slice", 1, 1, {"ends", "starts", "steps"}, verify_slice,
       "strided slice, one start/end/step per dimension, clamped as ONNX Slice does"},
      {OpKind::kBroadcastTo, "qrt.broadcast_to", 1, 1, {}, verify_broadcast_to,
       "numpy-broadcast the operand to the result shape (ONNX Expand)"},
      {OpKind::kShape, "qrt.shape", 1, 1, {}, verify_shape, "the operand's dimensions as tensor<Nxi64>"},
      {OpKind::kResize, "qrt.resize", 1, 1,
       {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "mode", "nearest_mode", "scales"},
       verify_resize, "resize to the result's shape, nearest-neighbour, linear or cubic (ONNX Resize)"},
      {OpKind::kAbs, "qrt.abs", 1, 1, {}, verify_float_unary, "|x| (the sign bit cleared)"},
      {OpKind::kSign, "qrt.sign", 1, 1, {}, verify_float_unary, "1 for x > 0, -1 for x < 0, x itself for +-0 and NaN"},
      {OpKind::kFloor, "qrt.floor", 1, 1, {}, verify_float_unary, "the largest integer <= x"},
      {OpKind::kCeil, "qrt.ceil", 1, 1, {}, verify_float_unary, "the smallest integer >= x"},
      {OpKind::kRoundEven, "qrt.round_nearest_even", 1, 1, {}, verify_float_unary,
       "the nearest integer, ties to even (ONNX Round, StableHLO round_nearest_even)"},
      {OpKind::kRoundAway, "qrt.round_nearest_afz", 1, 1, {}, verify_float_unary,
       "the nearest integer, ties away from zero (StableHLO round_nearest_afz)"},
      {OpKind::kRsqrt, "qrt.rsqrt", 1, 1, {}, verify_float_unary,
       "1 / sqrt(x), computed in f64 and rounded once to the operand's type"},
      {OpKind::kLog, "qrt.log", 1, 1, {}, verify_float_unary, "the natural logarithm (qrt's log, docs/numerics.md)"},
      {OpKind::kLog1p, "qrt.log1p", 1, 1, {}, verify_float_unary, "log(1 + x), precise for tiny x"},
      {OpKind::kExpm1, "qrt.expm1", 1, 1, {}, verify_float_unary, "e^x - 1, precise for tiny x"},
      {OpKind::kSin, "qrt.sin", 1, 1, {}, verify_float_unary, "the sine (radians; exact argument reduction)"},
      {OpKind::kCos, "qrt.cos", 1, 1, {}, verify_float_unary, "the cosine (radians; exact argument reduction)"},
      {OpKind::kCbrt, "qrt.cbrt", 1, 1, {}, verify_float_unary, "the real cube root"},
  };
}

// gather_elements(data, indices) {axis}: indices of data's rank, each other dimension at most
// data's; the result has the indices' shape and the data's element type.
Status verify_gather_elements(const Graph& g, const Op& op) {
  const Type& data = operand_type(g, op, 0);
  const Type& idx = operand_type(g, op, 1);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(check_tensors(op, {&data, &idx, &out}));
  if (!idx.element.is_integer() || is_bool(idx.element)) return op_error(op, "indices must be integers, got " + idx.to_string());
  if (data.element.kind == ElementKind::kUniformPerAxis || data.element.is_sub_channel() || !(data.element == out.element)) {
    return op_error(op, "result element type must equal the data's (per-axis data is not supported), got " +
                            data.to_string() + " -> " + out.to_string());
  }
  if (data.rank() == 0 || idx.rank() != data.rank()) {
    return op_error(op, "indices must have the data's rank (at least 1), got " + data.to_string() + " and " + idx.to_string());
  }
  if (!op.attr("axis")) return op_error(op, "needs attribute 'axis'");
  QRT_ASSIGN_OR_RETURN(int64_t axis, int_attr(op, "axis", 0));
  if (axis < 0 || axis >= int64_t(data.rank())) {
    return op_error(op, "axis " + std::to_string(axis) + " is not a dimension of " + data.to_string());
  }
  for (size_t d = 0; d < data.rank(); ++d) {
    if (int64_t(d) != axis && data.dims[d] >= 0 && idx.dims[d] > data.dims[d]) {
      return op_error(op, "indices dimension " + std::to_string(d) + " (" + std::to_string(idx.dims[d]) +
                              ") exceeds the data's (" + std::to_string(data.dims[d]) + ")");
    }
  }
  return check_shape_equals(op, idx.dims, out);
}

std::vector<OpInfo> gather_elements_op_entries() {
  return {{OpKind::kGatherElements, "qrt.gather_elements", 2, 2, {"axis"}, verify_gather_elements,
           "data at each index along axis, every other coordinate the index's own (ONNX GatherElements)"}};
}

std::vector<OpInfo> reduce_min_prod_op_entries() {
  return {
      {OpKind::kReduceMin, "qrt.reduce_min", 1, 1, {"axes", "keepdims"}, verify_reduce,
       "minimum over axes (a NaN wins)"},
      {OpKind::kReduceProd, "qrt.reduce_prod", 1, 1, {"axes", "keepdims"}, verify_reduce,
       "product over axes (floats multiply in double, in row-major order; integers wrap)"},
  };
}

// cumsum(x) {axis, exclusive, reverse}: running sums along axis, x's type and shape.
Status verify_cumsum(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.is_tensor || !is_plain(in.element) || is_bool(in.element) || !(in == out)) {
    return op_error(op, "expects a float or integer tensor and a result of its type, got " + in.to_string() + " -> " +
                            out.to_string());
  }
  QRT_ASSIGN_OR_RETURN(int64_t axis, int_attr(op, "axis", -1));
  if (axis < 0 || axis >= int64_t(in.rank())) {
    return op_error(op, "axis " + std::to_string(axis) + " is not a dimension of " + in.to_string());
  }
  for (const char* flag : {"exclusive", "reverse"}) {
    QRT_ASSIGN_OR_RETURN(int64_t v, int_attr(op, flag, 0));
    if (v != 0 && v != 1) return op_error(op, std::string(flag) + " must be 0 or 1, got " + std::to_string(v));
  }
  return Status::ok();
}

// mod(a, b) {fmod}: as sub/div; float operands need fmod = 1 (C's fmod), as ONNX requires.
Status verify_mod(const Graph& g, const Op& op) {
  QRT_RETURN_IF_ERROR(verify_arithmetic(g, op));
  QRT_ASSIGN_OR_RETURN(int64_t fmod, int_attr(op, "fmod", 0));
  if (fmod != 0 && fmod != 1) return op_error(op, "fmod must be 0 or 1, got " + std::to_string(fmod));
  if (fmod == 0 && operand_type(g, op, 0).element.is_float()) {
    return op_error(op, "float operands need fmod = 1 (the remainder with the dividend's sign)");
  }
  return Status::ok();
}

// topk(x) {axis, k, largest}: i64 indices, x's shape with k along axis.
Status verify_topk(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(check_tensors(op, {&in, &out}));
  if ((!is_plain(in.element) && in.element.kind != ElementKind::kUniform) || is_bool(in.element)) {
    return op_error(op, "expects a float, integer or per-tensor quantized operand, got " + in.to_string());
  }
  if (!out.element.is_integer() || out.element.int_width != 64 || out.element.int_sign == Signedness::kUnsigned) {
    return op_error(op, "result must be i64 indices, got " + out.to_string());
  }
  QRT_ASSIGN_OR_RETURN(int64_t axis, int_attr(op, "axis", -1));
  QRT_ASSIGN_OR_RETURN(int64_t k, int_attr(op, "k", -1));
  QRT_ASSIGN_OR_RETURN(int64_t largest, int_attr(op, "largest", 1));
  if (axis < 0 || axis >= int64_t(in.rank())) {
    return op_error(op, "axis " + std::to_string(axis) + " is not a dimension of " + in.to_string());
  }
  if (largest != 0 && largest != 1) return op_error(op, "largest must be 0 or 1, got " + std::to_string(largest));
  const int64_t n = in.dims[size_t(axis)];
  if (k < 0 || (n >= 0 && k > n)) {
    return op_error(op, "k = " + std::to_string(k) + " is outside 0 .. " + (n >= 0 ? std::to_string(n) : "the axis size"));
  }
  std::vector<int64_t> dims = in.dims;
  dims[size_t(axis)] = k;
  return check_shape_equals(op, dims, out);
}

// scatter_nd(data, indices, updates) {reduction}: data's type; indices [..., q] integers with
// q <= rank(data); updates indices.dims[:-1] + data.dims[q:].
Status verify_scatter_nd(const Graph& g, const Op& op) {
  const Type& data = operand_type(g, op, 0);
  const Type& idx = operand_type(g, op, 1);
  const Type& upd = operand_type(g, op, 2);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(check_tensors(op, {&data, &idx, &upd, &out}));
  QRT_ASSIGN_OR_RETURN(std::string reduction, string_attr(op, "reduction", {"none", "add", "mul", "max", "min"}, "none"));
  const bool plain = is_plain(data.element) && !is_bool(data.element);
  if (!(plain || (reduction == "none" && data.element.kind == ElementKind::kUniform)) || !(upd.element == data.element) ||
      !(out == data)) {
    return op_error(op, "expects data and updates of one float or integer type (per-tensor quantized with reduction \"none\") "
                        "and a result of data's type, got " + data.to_string() + ", " + upd.to_string() + " -> " + out.to_string());
  }
  if (!idx.element.is_integer() || is_bool(idx.element) || idx.rank() == 0 || idx.dims.back() < 1 ||
      idx.dims.back() > int64_t(data.rank())) {
    return op_error(op, "indices must be integers [..., q] with a static q of 1 to " + std::to_string(data.rank()) +
                            ", got " + idx.to_string());
  }
  std::vector<int64_t> want(idx.dims.begin(), idx.dims.end() - 1);
  want.insert(want.end(), data.dims.begin() + idx.dims.back(), data.dims.end());
  if (!dims_compatible(upd.dims, want)) {
    return op_error(op, "updates must have shape " + dims_to_string(want) + " (the indices' leading dimensions, then data's after q), got " + upd.to_string());
  }
  return Status::ok();
}

// gather_nd(data, indices) {batch_dims = b}: indices [batch..., ..., k] integers with
// b < rank(indices), 1 <= k <= rank(data) - b, and the first b dimensions equal to data's; the
// result is indices.dims[:-1] + data.dims[b + k:], data's element type.
Status verify_gather_nd(const Graph& g, const Op& op) {
  const Type& data = operand_type(g, op, 0);
  const Type& idx = operand_type(g, op, 1);
  const Type& out = result_type(g, op);
  QRT_RETURN_IF_ERROR(check_tensors(op, {&data, &idx, &out}));
  QRT_ASSIGN_OR_RETURN(int64_t b, int_attr(op, "batch_dims", 0));
  if (!idx.element.is_integer() || is_bool(idx.element) || idx.rank() == 0) {
    return op_error(op, "indices must be integers [..., k], got " + idx.to_string());
  }
  const bool per_axis = data.element.kind == ElementKind::kUniformPerAxis;
  if (data.element.is_sub_channel() || (!per_axis && !(data.element == out.element))) {
    return op_error(op, "result element type must equal the data's (sub-channel data is not supported), got " +
                            data.to_string() + " -> " + out.to_string());
  }
  if (b < 0 || b >= int64_t(idx.rank()) || b >= int64_t(data.rank())) {
    return op_error(op, "batch_dims " + std::to_string(b) + " must be below the ranks of data and indices, got " +
                            data.to_string() + " and " + idx.to_string());
  }
  const int64_t k = idx.dims.back();
  if (k < 1 || k > int64_t(data.rank()) - b) {
    return op_error(op, "the indices' last dimension must be static, 1 to " + std::to_string(int64_t(data.rank()) - b) +
                            " (data's rank less batch_dims), got " + idx.to_string());
  }
  for (size_t d = 0; d < size_t(b); ++d) {
    if (data.dims[d] >= 0 && idx.dims[d] >= 0 && data.dims[d] != idx.dims[d]) {
      return op_error(op, "batch dimension " + std::to_string(d) + " differs: data " + data.to_string() + ", indices " +
                              idx.to_string());
    }
  }
  if (per_axis) {
    // Per-axis data keeps its channels where whole slices of them move: a batch dimension stays
    // in place, a copied trailing dimension follows the indices' leading ones. An indexed
    // channel axis would mix the channels' parameters in one result dimension.
    const int64_t a = data.element.axis;
    if (a >= b && a < b + k) {
      return op_error(op, "per-axis data's channel axis " + std::to_string(a) + " is indexed (dimensions " + std::to_string(b) +
                              " to " + std::to_string(b + k - 1) + "), so the result's channels would mix, got " +
                              data.to_string());
    }
    ElementType want = data.element;
    want.axis = int32_t(a < b ? a : int64_t(idx.rank()) - 1 + (a - b - k));
    if (!(want == out.element)) {
      return op_error(op, "result element type must be the data's with the channel axis at " + std::to_string(want.axis) +
                              ", got " + data.to_string() + " -> " + out.to_string());
    }
  }
  return check_shape_equals(op, gather_nd_result_dims(data.dims, idx.dims, size_t(b)), out);
}

std::vector<OpInfo> topk_op_entries() {
  return {{OpKind::kTopK, "qrt.topk", 1, 1, {"axis", "k", "largest"}, verify_topk,
           "the indices of the k largest (or smallest) elements along axis, best first (ties in index order, NaN above all)"},
          {OpKind::kScatterNd, "qrt.scatter_nd", 3, 3, {"reduction"}, verify_scatter_nd,
           "data with updates' slices written at (or combined into) the slices indices name (ONNX ScatterND)"},
          {OpKind::kGatherNd, "qrt.gather_nd", 2, 2, {"batch_dims"}, verify_gather_nd,
           "the slices of data that index tuples name, after batch_dims shared leading dimensions (ONNX GatherND)"}};
}

std::vector<OpInfo> inverse_trig_op_entries() {
  return {
      {OpKind::kAsin, "qrt.asin", 1, 1, {}, verify_float_unary, "the arcsine (radians; NaN outside [-1, 1])"},
      {OpKind::kAcos, "qrt.acos", 1, 1, {}, verify_float_unary, "the arccosine (radians in [0, pi]; NaN outside [-1, 1])"},
      {OpKind::kAtan, "qrt.atan", 1, 1, {}, verify_float_unary, "the arctangent (radians in [-pi/2, pi/2])"},
      {OpKind::kAsinh, "qrt.asinh", 1, 1, {}, verify_float_unary, "the inverse hyperbolic sine"},
      {OpKind::kAcosh, "qrt.acosh", 1, 1, {}, verify_float_unary, "the inverse hyperbolic cosine (NaN below 1)"},
      {OpKind::kAtanh, "qrt.atanh", 1, 1, {}, verify_float_unary, "the inverse hyperbolic tangent (+-inf at +-1, NaN beyond)"},
  };
}

std::vector<OpInfo> cumsum_mod_op_entries() {
  return {
      {OpKind::kCumSum, "qrt.cumsum", 1, 1, {"axis", "exclusive", "reverse"}, verify_cumsum,
       "running sums along axis (exclusive: without the element itself; reverse: from the end)"},
      {OpKind::kMod, "qrt.mod", 2, 2, {"fmod"}, verify_mod,
       "remainder of a / b, numpy broadcasting: fmod = 0 takes the divisor's sign (integers), 1 the dividend's"},
  };
}

std::vector<OpInfo> arg_reduce_op_entries() {
  return {
      {OpKind::kArgMax, "qrt.argmax", 1, 1, {"axis", "keepdims", "select_last_index"}, verify_arg_reduce,
       "the index of the largest element along axis (a NaN wins; ties: the first, or the last)"},
      {OpKind::kArgMin, "qrt.argmin", 1, 1, {"axis", "keepdims", "select_last_index"}, verify_arg_reduce,
       "the index of the smallest element along axis (a NaN wins, as numpy; ties: the first, or the last)"},
  };
}

}  // namespace qrt::op_verify

namespace qrt {

std::vector<int64_t> gather_nd_result_dims(const std::vector<int64_t>& data, const std::vector<int64_t>& indices,
                                           size_t batch_dims) {
  std::vector<int64_t> dims(indices.begin(), indices.end() - 1);
  dims.insert(dims.end(), data.begin() + int64_t(batch_dims) + indices.back(), data.end());
  return dims;
}

int64_t slice_extent(int64_t dim, int64_t start, int64_t end, int64_t step) {
  auto clamp_index = [&](int64_t i, int64_t lo, int64_t hi) {
    if (i < 0) i += dim;
    return std::clamp(i, lo, hi);
  };
  // ceil(span / |step|) as (span - 1) / |step| + 1, |step| unsigned: no overflow for any
  // step, INT64_MIN included (the span is at most dim + 1).
  if (step > 0) {
    const int64_t s = clamp_index(start, 0, dim), e = clamp_index(end, 0, dim);
    return e > s ? int64_t(uint64_t(e - s - 1) / uint64_t(step)) + 1 : 0;
  }
  const int64_t s = clamp_index(start, -1, dim - 1), e = clamp_index(end, -1, dim - 1);
  return s > e ? int64_t(uint64_t(s - e - 1) / (0 - uint64_t(step))) + 1 : 0;
}

int64_t slice_start(int64_t dim, int64_t start, int64_t step) {
  if (start < 0) start += dim;
  return step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, -1, dim - 1);
}

bool is_float_unary_function(OpKind kind) {
  switch (kind) {
    case OpKind::kSqrt:
    case OpKind::kReciprocal:
    case OpKind::kExp:
    case OpKind::kTanh:
    case OpKind::kErf:
    case OpKind::kGelu:
    case OpKind::kAbs:
    case OpKind::kSign:
    case OpKind::kFloor:
    case OpKind::kCeil:
    case OpKind::kRoundEven:
    case OpKind::kRoundAway:
    case OpKind::kRsqrt:
    case OpKind::kLog:
    case OpKind::kLog1p:
    case OpKind::kExpm1:
    case OpKind::kSin:
    case OpKind::kCos:
    case OpKind::kCbrt:
    case OpKind::kAsin:
    case OpKind::kAcos:
    case OpKind::kAtan:
    case OpKind::kAsinh:
    case OpKind::kAcosh:
    case OpKind::kAtanh: return true;
    default: return false;
  }
}

}  // namespace qrt
