// qrt — op table and per-op verification (see ops.h and docs/ops.md).
#include "ir/ops.h"
#include "ir/op_verify.h"
#include "ir/numerics_dynamic.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace qrt {

namespace op_verify {

Status op_error(const Op& op, const std::string& message) {
  return Status::error_at(op.loc, std::string("'") + op_info(op.kind).name + "' op " + message);
}

const Type& operand_type(const Graph& g, const Op& op, size_t i) {
  return g.values[size_t(op.operands[i])].type;
}

const Type& result_type(const Graph& g, const Op& op, size_t i) {
  return g.values[size_t(op.results[i])].type;
}

// Dimensions agree when equal or either is dynamic.
bool dims_compatible(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] >= 0 && b[i] >= 0 && a[i] != b[i]) return false;
  }
  return true;
}

// The seed's quant_SameScalarOrTensorShape trait.
Status check_same_shape(const Op& op, const Type& in, const Type& out) {
  if (in.is_tensor != out.is_tensor || (in.is_tensor && !dims_compatible(in.dims, out.dims))) {
    return op_error(op, "input and result are both scalars or both tensors with matching shape"
                        " (got " + in.to_string() + " and " + out.to_string() + ")");
  }
  return Status::ok();
}

Status check_shape_equals(const Op& op, const std::vector<int64_t>& expected, const Type& out) {
  if (!dims_compatible(expected, out.dims)) {
    return op_error(op, "result shape " + out.to_string() + " does not match the expected shape [" +
                            dims_to_string(expected) + "]");
  }
  return Status::ok();
}

Status verify_bias(const Graph& g, const Op& op, const Type& lhs, const Type& rhs,
                          int64_t n_dim) {
  const Type& bias = operand_type(g, op, 2);
  if (bias.rank() != 1 || (n_dim >= 0 && bias.dims[0] >= 0 && bias.dims[0] != n_dim)) {
    return op_error(op, "bias must be a 1-D tensor of N = " + std::to_string(n_dim) +
                            " elements, got " + bias.to_string());
  }
  if (lhs.element.is_float()) {
    if (!(bias.element == lhs.element)) {
      return op_error(op, "bias of a float or hybrid matmul must have element type " +
                              lhs.element.to_string() + ", got " + bias.to_string());
    }
    return Status::ok();
  }
  const ElementType& be = bias.element;
  const bool wide = accumulates_in_i64(lhs.element, rhs.element);
  // An int64 bias (TFLite's 16x8 kernels) is a plain i64 tensor: quant storage stops at 32
  // bits. Its scale is the accumulator's by definition.
  if (wide && be.is_integer() && be.int_width == 64 && be.int_sign != Signedness::kUnsigned) return Status::ok();
  if (!be.is_uniform() || !be.storage.is_signed || be.storage.width != 32) {
    return op_error(op, std::string("bias of a quantized matmul must be !quant.uniform with i32 storage") +
                            (wide ? " or a plain i64 tensor (its operands accumulate in int64)" : "") + ", got " +
                            bias.to_string());
  }
  for (size_t c = 0; c < be.num_channels(); ++c) {
    if (be.zero_points[c] != 0) {
      return op_error(op, "bias zero point must be 0, got " + std::to_string(be.zero_points[c]));
    }
  }
  // With a dynamic N the shapes do not tie the two channel counts together: check them here
  // (accumulator_scale reads rhs scale c for every bias channel c).
  if (be.num_channels() != 1 && rhs.element.num_channels() != 1 && be.num_channels() != rhs.element.num_channels()) {
    return op_error(op, "bias has " + std::to_string(be.num_channels()) + " per-axis scales but the weights have " +
                            std::to_string(rhs.element.num_channels()));
  }
  const size_t channels = std::max(be.num_channels(), rhs.element.num_channels());
  for (size_t c = 0; c < channels; ++c) {
    const double expected = accumulator_scale(lhs.element, rhs.element, c);
    const double got = be.scales[be.num_channels() == 1 ? 0 : c];
    if (!scales_match(expected, got)) {
      return op_error(op, "bias scale " + format_mlir_float(got, FloatKind::kF64) + " of channel " +
                              std::to_string(c) + " must equal lhs scale x rhs scale = " +
                              format_mlir_float(expected, FloatKind::kF64));
    }
  }
  return Status::ok();
}

Status check_accumulator_bound(const Op& op, const ElementType& lhs, const ElementType& rhs,
                               int64_t k) {
  if (k < 0) return Status::ok();
  // Σ (a - za)(w - zw) must fit the accumulator (int32, or int64 for wider operands) for
  // every input: bound the worst case.
  auto max_abs_diff = [](const ElementType& e) {
    int64_t worst = 0;
    for (int64_t zp : e.zero_points) {
      worst = std::max<int64_t>({worst, std::llabs(e.storage.max - zp), std::llabs(e.storage.min - zp)});
    }
    return worst;
  };
  const long double bound = (long double)k * (long double)max_abs_diff(lhs) * (long double)max_abs_diff(rhs);
  if (accumulates_in_i64(lhs, rhs)) {
    if (bound > 9223372036854775807.0L) {
      return op_error(op, "int64 accumulator could overflow: K = " + std::to_string(k) +
                              " times the largest |a - za| x |w - zw| exceeds 2^63 - 1");
    }
    return Status::ok();
  }
  if (bound > 2147483647.0L) {
    return op_error(op, "int32 accumulator could overflow: K = " + std::to_string(k) +
                            " times the largest |a - za| x |w - zw| exceeds 2^31 - 1");
  }
  return Status::ok();
}

Result<std::vector<int64_t>> int_array_attr(const Op& op, const char* name, int size,
                                            std::vector<int64_t> fallback) {
  const Attribute* a = op.attr(name);
  if (!a) return fallback;
  std::vector<int64_t> out;
  bool ok = a->kind == Attribute::Kind::kArray;
  for (size_t i = 0; ok && i < a->array.size(); ++i) {
    ok = a->array[i].kind == Attribute::Kind::kInt;
    if (ok) out.push_back(a->array[i].i);
  }
  if (!ok || (size >= 0 && out.size() != size_t(size))) {
    return op_error(op, std::string("attribute '") + name + "' must be an array of " +
                            (size >= 0 ? std::to_string(size) + " " : std::string()) +
                            "integers, got " + a->to_string());
  }
  return out;
}

Result<int64_t> int_attr(const Op& op, const char* name, int64_t fallback) {
  const Attribute* a = op.attr(name);
  if (!a) return fallback;
  if (a->kind != Attribute::Kind::kInt) {
    return op_error(op, std::string("attribute '") + name + "' must be an integer, got " + a->to_string());
  }
  return a->i;
}

Result<std::string> string_attr(const Op& op, const char* name, std::vector<std::string> allowed,
                                std::string fallback) {
  const Attribute* a = op.attr(name);
  if (!a) return fallback;
  std::string list;
  for (const auto& v : allowed) list += (list.empty() ? "\"" : ", \"") + v + "\"";
  if (a->kind == Attribute::Kind::kString) {
    for (const auto& v : allowed) {
      if (a->s == v) return a->s;
    }
  }
  return op_error(op, std::string("attribute '") + name + "' must be one of " + list + ", got " +
                          a->to_string());
}

}  // namespace op_verify

namespace {

using namespace op_verify;

Status verify_qcast(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.element.is_float()) {
    return op_error(op, "operand must be a float scalar or tensor, got " + in.to_string());
  }
  // Calibrated and any types are the propagation pass's placeholders (the seed's quantization
  // design); only uniform types execute.
  if (!out.element.is_quant()) {
    return op_error(op, "result must be a !quant.uniform, !quant.calibrated or !quant.any scalar or tensor, got " +
                            out.to_string());
  }
  QRT_RETURN_IF_ERROR(check_same_shape(op, in, out));
  if (out.element.has_expressed && in.element.float_kind != out.element.float_kind) {
    return op_error(op, std::string("operand element type ") + float_kind_name(in.element.float_kind) +
                            " must equal the expressed type " +
                            float_kind_name(out.element.float_kind) + " of the result");
  }
  return Status::ok();
}

Status verify_dcast(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.element.is_quant()) {
    return op_error(op, "operand must be a !quant.uniform, !quant.calibrated or !quant.any scalar or tensor, got " +
                            in.to_string());
  }
  if (!out.element.is_float()) {
    return op_error(op, "result must be a float scalar or tensor, got " + out.to_string());
  }
  QRT_RETURN_IF_ERROR(check_same_shape(op, in, out));
  if (in.element.has_expressed && in.element.float_kind != out.element.float_kind) {
    return op_error(op, std::string("result element type ") + float_kind_name(out.element.float_kind) +
                            " must equal the expressed type " +
                            float_kind_name(in.element.float_kind) + " of the operand");
  }
  return Status::ok();
}

Status verify_scast(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  const bool int_to_quant = in.element.is_integer() && out.element.is_any_uniform();
  const bool quant_to_int = in.element.is_any_uniform() && out.element.is_integer();
  if (!int_to_quant && !quant_to_int) {
    return op_error(op, "input must be integer and result must be quantized, or vice versa (got " +
                            in.to_string() + " and " + out.to_string() + ")");
  }
  QRT_RETURN_IF_ERROR(check_same_shape(op, in, out));
  const ElementType& q = int_to_quant ? out.element : in.element;
  const ElementType& i = int_to_quant ? in.element : out.element;
  if (i.int_width != q.storage.width) {
    return op_error(op, "integer type " + i.to_string() + " must have the width of the storage type " +
                            storage_to_string(q.storage));
  }
  return Status::ok();
}

Status verify_constant(const Graph& g, const Op& op) {
  const Attribute* value = op.attr("value");
  if (!value) return op_error(op, "requires attribute 'value'");
  if (value->kind != Attribute::Kind::kDense) {
    return op_error(op, std::string("attribute 'value' must be dense elements, got ") +
                            value->kind_name());
  }
  const DenseElements& d = value->dense;
  const Type& out = result_type(g, op);
  if (!out.is_tensor || !out.has_static_shape()) {
    return op_error(op, "result must be a statically shaped tensor, got " + out.to_string());
  }
  if (d.type.dims != out.dims) {
    return op_error(op, "value shape " + d.type.to_string() + " does not match result type " +
                            out.to_string());
  }
  const size_t expected_bytes = dense_byte_size(d.type);
  if (d.size() != expected_bytes) {
    return op_error(op, "value holds " + std::to_string(d.size()) + " bytes, its type " + d.type.to_string() +
                            " needs " + std::to_string(expected_bytes));
  }
  const ElementType& de = d.type.element;
  const ElementType& re = out.element;
  if (re.is_float() || re.is_integer()) {
    if (!(de == re)) {
      return op_error(op, "value element type " + de.to_string() +
                              " must equal the result element type " + re.to_string());
    }
    return Status::ok();
  }
  if (!re.is_any_uniform()) {
    return op_error(op, "result element type must be float, integer or !quant.uniform, got " +
                            re.to_string());
  }
  if (!de.is_integer() || de.int_width != re.storage.width) {
    return op_error(op, "value of a quantized constant must hold " +
                            std::to_string(re.storage.width) + "-bit integers (the storage of " +
                            re.to_string() + "), got " + de.to_string());
  }
  // Every bit pattern of a whole-byte storage width is a value inside full-range bounds:
  // nothing to scan (the common case, and weights are most of a model's bytes; the verifier
  // runs after every pass). Narrower storage (i4) still sits in a whole byte, so it is scanned.
  if (re.storage.has_default_bounds() && re.storage.width % 8 == 0) return Status::ok();
  const size_t n = size_t(d.type.num_elements());
  for (size_t i = 0; i < n; ++i) {
    int64_t v = d.int_at(i);
    // A signless value is reinterpreted by the storage signedness.
    if (!re.storage.is_signed && v < 0 && re.storage.width < 64) v += int64_t(1) << re.storage.width;
    if (re.storage.is_signed && de.int_sign == Signedness::kUnsigned &&
        v > re.storage.full_max()) {
      v -= int64_t(1) << re.storage.width;
    }
    if (v < re.storage.min || v > re.storage.max) {
      return op_error(op, "element " + std::to_string(i) + " value " + std::to_string(v) +
                              " is outside the storage bounds [" + std::to_string(re.storage.min) +
                              ", " + std::to_string(re.storage.max) + "]");
    }
  }
  return Status::ok();
}


Status verify_elementwise(const Graph& g, const Op& op) {
  const Type& a = operand_type(g, op, 0);
  const Type& b = operand_type(g, op, 1);
  const Type& out = result_type(g, op);
  // Plain integers (e.g. i64 shape arithmetic) take the integer path of ops_math's arithmetic.
  if (a.element.is_integer() && b.element.is_integer() && out.element.is_integer()) {
    if (!(a.element == b.element && a.element == out.element) || a.element.int_width == 1) {
      return op_error(op, "integer operands and result must have one element type (not i1), got " + a.to_string() +
                              ", " + b.to_string() + " -> " + out.to_string());
    }
  } else {
    const bool all_float = a.element.is_float() && b.element.is_float() && out.element.is_float();
    // Quantized: per-layer or per-axis on any side (StableHLO's per-axis add/multiply); each
    // element uses its own channel's scale and zero point.
    auto layer_or_axis = [](const ElementType& e) {
      return e.kind == ElementKind::kUniform || e.kind == ElementKind::kUniformPerAxis;
    };
    const bool all_quant = layer_or_axis(a.element) && layer_or_axis(b.element) && layer_or_axis(out.element);
    if (!all_float && !all_quant) {
      return op_error(op, "operands and result must be all float, all integer or all per-layer or per-axis !quant.uniform, got " +
                              a.to_string() + ", " + b.to_string() + " -> " + out.to_string());
    }
    if (all_float && !(a.element == b.element && a.element == out.element)) {
      return op_error(op, "float operands and result must have one element type, got " +
                              a.to_string() + ", " + b.to_string() + " -> " + out.to_string());
    }
  }
  if (a.is_tensor != b.is_tensor || a.is_tensor != out.is_tensor) {
    return op_error(op, "operands and result must be all scalars or all tensors");
  }
  auto shape = broadcast_shapes(a.dims, b.dims);
  if (!shape.is_ok()) return op_error(op, shape.status().message());
  return check_shape_equals(op, *shape, out);
}

// The quantized matmul's right-hand side and result may be per-axis on their last dimension.
Status check_matmul_quant_axis(const Op& op, const Type& t, const char* what) {
  if (t.element.kind == ElementKind::kUniformPerAxis && size_t(t.element.axis) + 1 != t.rank()) {
    return op_error(op, std::string(what) + " may only be quantized per-axis along its last "
                        "dimension (axis " + std::to_string(t.rank() - 1) + "), got axis " +
                        std::to_string(t.element.axis));
  }
  return Status::ok();
}

// `activations = "dynamic_i8"`: a hybrid matmul whose f32 (bf16, f16) activations are quantized to i8
// per call, per row and per block of the weights along K (docs/numerics.md).
Status verify_dynamic_activations(const Op& op, const Type& lhs, const Type& rhs, bool is_hybrid) {
  const Attribute* a = op.attr("activations");
  if (!a) return Status::ok();
  if (a->kind != Attribute::Kind::kString || a->s != "dynamic_i8") {
    return op_error(op, "attribute 'activations' must be \"dynamic_i8\", got " + a->to_string());
  }
  const ElementType& re = rhs.element;
  const FloatKind xk = lhs.element.float_kind;
  if (!is_hybrid || (xk != FloatKind::kF32 && xk != FloatKind::kBF16 && xk != FloatKind::kF16)) {
    return op_error(op, "activations = \"dynamic_i8\" needs f32, bf16 or f16 activations times quantized weights, got " +
                            lhs.to_string() + " x " + rhs.to_string());
  }
  if (rhs.rank() != 2) return op_error(op, "activations = \"dynamic_i8\" needs 2-D weights, got " + rhs.to_string());
  if (re.storage.width > 8) {
    return op_error(op, "activations = \"dynamic_i8\" needs weights of at most 8 bits, got " + re.to_string());
  }
  const int64_t block = numerics::dynamic_i8_block(re, rhs.dims[0]);
  if (block > numerics::kMaxDynamicBlock) {
    return op_error(op, "activations = \"dynamic_i8\" sums blocks of at most " + std::to_string(numerics::kMaxDynamicBlock) +
                            " k values in int32, the weights have blocks of " + std::to_string(block));
  }
  return Status::ok();
}

Status verify_matmul(const Graph& g, const Op& op) {
  const Type& lhs = operand_type(g, op, 0);
  const Type& rhs = operand_type(g, op, 1);
  const Type& out = result_type(g, op);
  if (!lhs.is_tensor || !rhs.is_tensor || lhs.rank() < 2 || rhs.rank() < 2) {
    return op_error(op, "operands must be tensors of rank >= 2, got " + lhs.to_string() + " and " +
                            rhs.to_string());
  }
  const ElementType &le = lhs.element, &re = rhs.element, &oe = out.element;
  const bool is_float = le.is_float() && re.is_float() && oe.is_float();
  const bool is_hybrid = le.is_float() && re.is_any_uniform() && oe.is_float();
  const bool is_quant = le.kind == ElementKind::kUniform && re.is_uniform() && oe.is_uniform();
  if (!is_float && !is_hybrid && !is_quant) {
    return op_error(op, "expects float x float -> float, float x quantized -> float (hybrid) or "
                        "quantized x quantized -> quantized, got " + lhs.to_string() + " x " +
                        rhs.to_string() + " -> " + out.to_string());
  }
  if (is_float && !(le == re && le == oe)) {
    return op_error(op, "float operands and result must have one element type");
  }
  if (is_hybrid && (re.float_kind != le.float_kind || !(oe == le))) {
    return op_error(op, std::string("hybrid matmul needs the rhs expressed type and the result "
                                    "element type to equal the lhs type ") +
                            float_kind_name(le.float_kind));
  }
  if (!is_float) QRT_RETURN_IF_ERROR(check_matmul_quant_axis(op, rhs, "rhs"));
  if (is_quant) QRT_RETURN_IF_ERROR(check_matmul_quant_axis(op, out, "result"));
  const int64_t k = lhs.dims[lhs.rank() - 1];
  const int64_t k2 = rhs.dims[rhs.rank() - 2], n = rhs.dims[rhs.rank() - 1];
  if (k >= 0 && k2 >= 0 && k != k2) {
    return op_error(op, "contracting dimensions differ: lhs " + lhs.to_string() + " has K = " +
                            std::to_string(k) + ", rhs " + rhs.to_string() + " has K = " +
                            std::to_string(k2));
  }
  auto expected = matmul_result_dims(lhs.dims, rhs.dims);
  if (!expected.is_ok()) return op_error(op, "batch dimensions: " + expected.status().message());
  QRT_RETURN_IF_ERROR(check_shape_equals(op, *expected, out));
  if (is_quant) QRT_RETURN_IF_ERROR(check_accumulator_bound(op, le, re, k));
  if (op.operands.size() == 3) QRT_RETURN_IF_ERROR(verify_bias(g, op, lhs, rhs, n));
  return verify_dynamic_activations(op, lhs, rhs, is_hybrid);
}

Status verify_same_type_unary(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.element.is_float() && !in.element.is_uniform()) {
    return op_error(op, "operand must be float or !quant.uniform, got " + in.to_string());
  }
  if (!(in == out)) {
    return op_error(op, "result type " + out.to_string() + " must equal the operand type " +
                            in.to_string());
  }
  return Status::ok();
}

// The attribute pair of a clamp: non-NaN floats, min <= max (qrt.clamp's and the fused form's).
Status check_clamp_bounds(const Op& op, const char* min_name, const char* max_name) {
  const Attribute* lo = op.attr(min_name);
  const Attribute* hi = op.attr(max_name);
  if (!lo || !hi) return op_error(op, std::string("requires float attributes '") + min_name + "' and '" + max_name + "'");
  for (const Attribute* a : {lo, hi}) {
    if (a->kind != Attribute::Kind::kFloat || std::isnan(a->f)) {
      return op_error(op, std::string("attributes '") + min_name + "' and '" + max_name +
                              "' must be non-NaN floats, got " + a->to_string());
    }
  }
  if (lo->f > hi->f) {
    return op_error(op, std::string(min_name) + " " + format_mlir_float(lo->f, FloatKind::kF64) + " must not exceed " +
                            max_name + " " + format_mlir_float(hi->f, FloatKind::kF64));
  }
  return Status::ok();
}

Status verify_fused_clamp(const Op& op) {
  if (!op.attr("clamp_min") && !op.attr("clamp_max")) return Status::ok();
  return check_clamp_bounds(op, "clamp_min", "clamp_max");
}

Status verify_clamp(const Graph& g, const Op& op) {
  QRT_RETURN_IF_ERROR(verify_same_type_unary(g, op));
  return check_clamp_bounds(op, "min", "max");
}

Status verify_reshape(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.is_tensor || !out.is_tensor) return op_error(op, "operand and result must be tensors");
  if (!(in.element == out.element)) {
    return op_error(op, "result element type " + out.element.to_string() +
                            " must equal the operand element type " + in.element.to_string());
  }
  if (in.element.kind == ElementKind::kUniformPerAxis) {
    return op_error(op, "per-axis quantized tensors cannot be reshaped (the channel axis would "
                        "lose its meaning)");
  }
  const auto dynamic = std::count(out.dims.begin(), out.dims.end(), int64_t(-1));
  if (dynamic > 1) {
    return op_error(op, "result shape may have at most one dynamic dimension (inferred from the "
                        "element count), got " + out.to_string());
  }
  const int64_t n_in = in.num_elements();
  if (dynamic == 0 && n_in >= 0 && n_in != out.num_elements()) {
    return op_error(op, "cannot reshape " + std::to_string(n_in) + " elements (" + in.to_string() +
                            ") into " + std::to_string(out.num_elements()) + " (" +
                            out.to_string() + ")");
  }
  return Status::ok();
}

Status verify_requantize(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.element.is_uniform() || !out.element.is_uniform()) {
    return op_error(op, "operand and result must be !quant.uniform, got " + in.to_string() +
                            " -> " + out.to_string());
  }
  QRT_RETURN_IF_ERROR(check_same_shape(op, in, out));
  const bool in_axis = in.element.kind == ElementKind::kUniformPerAxis;
  const bool out_axis = out.element.kind == ElementKind::kUniformPerAxis;
  if (in_axis && out_axis && in.element.axis != out.element.axis) {
    return op_error(op, "per-axis operand and result must use the same channel axis, got " +
                            std::to_string(in.element.axis) + " and " +
                            std::to_string(out.element.axis));
  }
  return Status::ok();
}

const std::vector<OpInfo>& table() {
  static const std::vector<OpInfo> kTable = [] {
    std::vector<OpInfo> t = {
      {OpKind::kQCast, "quant.qcast", 1, 1, {}, verify_qcast,
       "quantize: float -> !quant.uniform (divide, round half to even, add zero point, clamp)"},
      {OpKind::kDCast, "quant.dcast", 1, 1, {}, verify_dcast,
       "dequantize: !quant.uniform -> float ((q - zp) * scale)"},
      {OpKind::kSCast, "quant.scast", 1, 1, {}, verify_scast,
       "storage cast: reinterpret !quant.uniform <-> storage integer, values unchanged"},
      {OpKind::kConstant, "qrt.constant", 0, 0, {"value"}, verify_constant,
       "a constant tensor; quantized constants hold stored integers"},
      {OpKind::kAdd, "qrt.add", 2, 2, {"clamp_max", "clamp_min"}, verify_elementwise,
       "element-wise add with numpy broadcasting (float or per-layer quantized)"},
      {OpKind::kMul, "qrt.mul", 2, 2, {"clamp_max", "clamp_min"}, verify_elementwise,
       "element-wise multiply with numpy broadcasting (float or per-layer quantized)"},
      {OpKind::kMatmul, "qrt.matmul", 2, 3, {"activations", "clamp_max", "clamp_min"}, verify_matmul,
       "batched matmul [..,M,K] x [..,K,N] (+ bias [N]): float, hybrid or quantized"},
      {OpKind::kRelu, "qrt.relu", 1, 1, {}, verify_same_type_unary,
       "max(x, 0); on quantized values max(q, zero point)"},
      {OpKind::kClamp, "qrt.clamp", 1, 1, {"max", "min"}, verify_clamp,
       "clamp to [min, max] given in real (expressed) units"},
      {OpKind::kReshape, "qrt.reshape", 1, 1, {}, verify_reshape,
       "reshape; one dynamic result dimension is inferred; row-major order is kept"},
      {OpKind::kRequantize, "qrt.requantize", 1, 1, {}, verify_requantize,
       "rescale stored values from the operand's quant parameters to the result's"},
      {OpKind::kConv2d, "qrt.conv2d", 2, 3,
       {"batch_groups", "clamp_max", "clamp_min", "dilations", "groups", "layout", "pads", "strides"}, verify_conv2d,
       "2-D convolution (NHWC/OHWI or NCHW/OIHW), groups, batch groups, dilation, explicit pads"},
      {OpKind::kMaxPool2d, "qrt.max_pool2d", 1, 1, {"kernel", "layout", "pads", "strides"},
       verify_pool2d, "2-D max pooling; padding never wins"},
      {OpKind::kAvgPool2d, "qrt.avg_pool2d", 1, 1,
       {"count_include_pad", "kernel", "layout", "pads", "strides"}, verify_pool2d,
       "2-D average pooling; quantized sums accumulate in int32 and narrow once"},
      {OpKind::kTranspose, "qrt.transpose", 1, 1, {"perm"}, verify_transpose,
       "permute dimensions: result dim i is operand dim perm[i]"},
      {OpKind::kConcat, "qrt.concat", 1, 1 << 20, {"axis"}, verify_concat,
       "concatenate along axis; quantized operands are rescaled to the result"},
      {OpKind::kPad, "qrt.pad", 1, 1, {"pads", "value"}, verify_pad,
       "pad with a constant given in real units (quantized: its quantized value, 0.0 -> zero point)"},
      {OpKind::kSoftmax, "qrt.softmax", 1, 1, {"axis", "beta"}, verify_softmax_logistic,
       "softmax along axis in f32 (quantized: dequantize, softmax, quantize)"},
      {OpKind::kLogistic, "qrt.logistic", 1, 1, {}, verify_softmax_logistic,
       "1 / (1 + exp(-x)) in f32 (quantized: dequantize, logistic, quantize)"},
      {OpKind::kMean, "qrt.mean", 1, 1, {"accumulator", "axes", "keepdims"}, verify_mean,
       "mean over axes; quantized sums accumulate in int32 and narrow once"},
      {OpKind::kDynamicQuantize, "qrt.dynamic_quantize", 1, 1, {}, verify_dynamic_quantize,
       "dynamic-range u8 quantization: stored values, scale and zero point computed per call", 3},
      {OpKind::kStats, "quant.stats", 1, 1, {"axis", "axisStats", "layerStats"}, verify_stats,
       "identity carrying calibration statistics: layerStats [min, max], optional axisStats per channel"},
      {OpKind::kFakeQuant, "qrt.fake_quant", 1, 1, {"axis", "is_signed", "max", "min", "narrow_range", "num_bits"},
       verify_fake_quant, "simulated quantization: qcast then dcast to the type nudged from [min, max]"},
    };
    for (OpInfo& info : math_op_entries()) t.push_back(std::move(info));
    t.push_back({OpKind::kConvTranspose2d, "qrt.conv_transpose2d", 2, 3,
                 {"clamp_max", "clamp_min", "dilations", "groups", "output_padding", "pads", "strides"},
                 verify_conv_transpose2d,
                 "2-D transposed convolution (NHWC input, OHWI filter): ONNX ConvTranspose, TFLite TRANSPOSE_CONV"});
    for (OpInfo& info : arg_reduce_op_entries()) t.push_back(std::move(info));
    for (OpInfo& info : gather_elements_op_entries()) t.push_back(std::move(info));
    for (OpInfo& info : reduce_min_prod_op_entries()) t.push_back(std::move(info));
    for (OpInfo& info : cumsum_mod_op_entries()) t.push_back(std::move(info));
    for (OpInfo& info : topk_op_entries()) t.push_back(std::move(info));
    for (OpInfo& info : inverse_trig_op_entries()) t.push_back(std::move(info));
    for (OpInfo& info : grid_sample_op_entries()) t.push_back(std::move(info));
    for (size_t i = 0; i < t.size(); ++i) {
      if (size_t(t[i].kind) != i) std::abort();  // the table is indexed by OpKind
    }
    return t;
  }();
  return kTable;
}

}  // namespace

const std::vector<OpInfo>& all_ops() { return table(); }

const OpInfo& op_info(OpKind kind) { return table()[size_t(kind)]; }

const OpInfo* find_op(std::string_view name) {
  for (const OpInfo& info : table()) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

std::vector<size_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  std::vector<size_t> strides(out.size(), 0);
  size_t stride = 1;
  for (size_t k = in.size(); k-- > 0;) {
    strides[k + (out.size() - in.size())] = in[k] == 1 ? 0 : stride;
    stride *= size_t(in[k]);
  }
  return strides;
}

Result<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da < 0 || db < 0) {
      out[i] = da < 0 ? db : da;
    } else if (da == db) {
      out[i] = da;
    } else {
      return Status::error("shapes [" + dims_to_string(a) + "] and [" + dims_to_string(b) +
                           "] are not broadcast-compatible");
    }
  }
  return out;
}

Result<std::vector<int64_t>> matmul_result_dims(const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs) {
  QRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, broadcast_shapes(std::vector<int64_t>(lhs.begin(), lhs.end() - 2),
                                                                   std::vector<int64_t>(rhs.begin(), rhs.end() - 2)));
  dims.push_back(lhs[lhs.size() - 2]);
  dims.push_back(rhs[rhs.size() - 1]);
  return dims;
}

std::vector<int64_t> reduction_dims(const std::vector<int64_t>& dims, const std::vector<bool>& reduced, bool keepdims) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(dims[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

bool accumulates_in_i64(const ElementType& lhs, const ElementType& rhs) {
  return lhs.is_quant() && rhs.is_quant() && (lhs.storage.width > 8 || rhs.storage.width > 8);
}

double accumulator_scale(const ElementType& lhs, const ElementType& rhs, size_t n) {
  const double sw = rhs.scales[rhs.num_channels() == 1 ? 0 : n];
  return lhs.scales[0] * sw;
}

Result<std::vector<int64_t>> reshape_dims(const Type& declared, int64_t elements) {
  std::vector<int64_t> dims = declared.dims;
  int64_t known = 1;
  for (int64_t d : dims) known *= d < 0 ? 1 : d;
  for (int64_t& d : dims) {
    if (d < 0) d = known == 0 ? 0 : elements / known;
  }
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total != elements) {
    return Status::error("cannot reshape " + std::to_string(elements) + " elements into " + declared.to_string());
  }
  return dims;
}

// Sub-channel (block-wise) types carry weights: only constants, the quant casts, transposes
// of them and the weights of a hybrid matmul may use them.
static Status check_sub_channel_use(const Graph& g, const Op& op) {
  switch (op.kind) {
    case OpKind::kConstant:
    case OpKind::kQCast:
    case OpKind::kDCast:
    case OpKind::kSCast:
    case OpKind::kTranspose:
      return Status::ok();
    default:
      break;
  }
  auto check = [&](int v, const char* what, size_t i) -> Status {
    if (v < 0 || size_t(v) >= g.values.size()) return Status::ok();  // reported by the caller
    const Type& t = g.values[size_t(v)].type;
    if (!t.element.is_sub_channel()) return Status::ok();
    if (op.kind == OpKind::kMatmul && std::string(what) == "operand" && i == 1) return Status::ok();
    return op_error(op, std::string(what) + " " + std::to_string(i) + " has the sub-channel quantized type " +
                            t.to_string() + ", which only constants, quant casts, transposes and the weights "
                            "(rhs) of a hybrid qrt.matmul may use");
  };
  for (size_t i = 0; i < op.operands.size(); ++i) QRT_RETURN_IF_ERROR(check(op.operands[i], "operand", i));
  for (size_t i = 0; i < op.results.size(); ++i) QRT_RETURN_IF_ERROR(check(op.results[i], "result", i));
  return Status::ok();
}

bool scales_match(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::fabs(a); }

Status verify_graph(const Graph& graph) {
  for (const Value& v : graph.values) {
    Status s = v.type.verify();
    if (!s.is_ok()) return s.with_loc(v.loc);
  }
  std::vector<bool> defined(graph.values.size(), false);
  for (int in : graph.inputs) defined[size_t(in)] = true;
  for (const Op& op : graph.ops) {
    const OpInfo& info = op_info(op.kind);
    const int n = int(op.operands.size());
    if (n < info.min_operands || n > info.max_operands) {
      const std::string expected =
          info.min_operands == info.max_operands
              ? std::to_string(info.min_operands)
              : std::to_string(info.min_operands) + " to " + std::to_string(info.max_operands);
      return op_error(op, "expects " + expected + " operands, got " + std::to_string(n));
    }
    if (op.results.size() != size_t(info.num_results)) {
      return op_error(op, "expects " + std::to_string(info.num_results) + " result" +
                              (info.num_results == 1 ? "" : "s") + ", got " + std::to_string(op.results.size()));
    }
    for (int operand : op.operands) {
      if (operand < 0 || size_t(operand) >= graph.values.size() || !defined[size_t(operand)]) {
        return op_error(op, "uses a value before it is defined");
      }
    }
    for (const auto& [name, attr] : op.attrs) {
      bool known = false;
      std::string allowed;
      for (const char* a : info.attributes) {
        known = known || name == a;
        allowed += std::string(allowed.empty() ? "" : ", ") + a;
      }
      if (!known) {
        return op_error(op, "has unknown attribute '" + name + "' (allowed: " +
                                (allowed.empty() ? std::string("none") : allowed) + ")");
      }
    }
    QRT_RETURN_IF_ERROR(check_sub_channel_use(graph, op));
    QRT_RETURN_IF_ERROR(info.verify(graph, op));
    QRT_RETURN_IF_ERROR(verify_fused_clamp(op));
    for (int r : op.results) defined[size_t(r)] = true;
  }
  if (graph.outputs.empty()) {
    return Status::error_at(graph.return_loc, "function @" + graph.name + " returns no values");
  }
  for (int out : graph.outputs) {
    if (out < 0 || size_t(out) >= graph.values.size() || !defined[size_t(out)]) {
      return Status::error_at(graph.return_loc, "'func.return' op returns an undefined value");
    }
  }
  return Status::ok();
}

std::optional<FusedClamp> fused_clamp(const Op& op) {
  const Attribute* lo = op.attr("clamp_min");
  const Attribute* hi = op.attr("clamp_max");
  if (!lo || !hi) return std::nullopt;
  return FusedClamp{lo->f, hi->f};
}

}  // namespace qrt
