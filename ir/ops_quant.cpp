// qrt — verifiers of the quantization instrumentation ops: quant.stats (statistics recorded by
// calibration) and qrt.fake_quant (simulated quantization from training).
#include <cmath>

#include "ir/op_verify.h"
#include "ir/ops.h"
#include "ir/quant_params.h"

namespace qrt::op_verify {

namespace {

// Operand and result: the same float type (both ops are identities on shape).
Status check_float_identity(const Graph& g, const Op& op) {
  const Type& in = operand_type(g, op, 0);
  const Type& out = result_type(g, op);
  if (!in.element.is_float()) {
    return op_error(op, "operand must be a float scalar or tensor, got " + in.to_string());
  }
  if (!(in.element == out.element)) {
    return op_error(op, "result element type " + out.element.to_string() + " must equal the operand's " +
                            in.element.to_string());
  }
  return check_same_shape(op, in, out);
}

// A dense f32/f64 attribute of `count` elements (count < 0: any), all finite.
Status check_float_dense(const Op& op, const char* name, const Attribute* a, int64_t count) {
  if (!a || a->kind != Attribute::Kind::kDense || !a->dense.type.element.is_float()) {
    return op_error(op, std::string("attribute '") + name + "' must be dense float elements" +
                            (a ? ", got " + a->to_string() : std::string(" (missing)")));
  }
  const int64_t n = a->dense.type.num_elements();
  if (count >= 0 && n != count) {
    return op_error(op, std::string("attribute '") + name + "' must hold " + std::to_string(count) +
                            " elements, got " + std::to_string(n));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(a->dense.float_at(size_t(i)))) {
      return op_error(op, std::string("attribute '") + name + "' element " + std::to_string(i) + " is not finite");
    }
  }
  return Status::ok();
}

// A number attribute (int or float) or, when `per_axis`, an array of them.
Result<std::vector<double>> numbers(const Op& op, const char* name, bool per_axis) {
  const Attribute* a = op.attr(name);
  if (!a) return op_error(op, std::string("requires attribute '") + name + "'");
  std::vector<const Attribute*> items;
  if (per_axis && a->kind == Attribute::Kind::kArray) {
    for (const Attribute& e : a->array) items.push_back(&e);
  } else if (!per_axis) {
    items.push_back(a);
  }
  std::vector<double> out;
  for (const Attribute* e : items) {
    if (e->kind != Attribute::Kind::kFloat && e->kind != Attribute::Kind::kInt) items.clear();
    else out.push_back(e->kind == Attribute::Kind::kInt ? double(e->i) : e->f);
  }
  if (out.empty() || out.size() != items.size()) {
    return op_error(op, std::string("attribute '") + name + "' must be " +
                            (per_axis ? "an array of numbers (one per channel along 'axis')" : "a number") +
                            ", got " + a->to_string());
  }
  return out;
}

}  // namespace

Status verify_stats(const Graph& g, const Op& op) {
  QRT_RETURN_IF_ERROR(check_float_identity(g, op));
  const Attribute* layer = op.attr("layerStats");
  QRT_RETURN_IF_ERROR(check_float_dense(op, "layerStats", layer, 2));
  if (layer->dense.float_at(0) > layer->dense.float_at(1)) {
    return op_error(op, "layerStats min " + std::to_string(layer->dense.float_at(0)) + " exceeds max " +
                            std::to_string(layer->dense.float_at(1)));
  }
  const Attribute* axis_stats = op.attr("axisStats");
  const Attribute* axis = op.attr("axis");
  if (!axis_stats && !axis) return Status::ok();
  if (!axis_stats || !axis || axis->kind != Attribute::Kind::kInt) {
    return op_error(op, "'axisStats' and an integer 'axis' must be given together");
  }
  QRT_RETURN_IF_ERROR(check_float_dense(op, "axisStats", axis_stats, -1));
  const Type& in = operand_type(g, op, 0);
  const std::vector<int64_t>& sd = axis_stats->dense.type.dims;
  if (axis->i < 0 || size_t(axis->i) >= in.rank()) {
    return op_error(op, "axis " + std::to_string(axis->i) + " is out of range for " + in.to_string());
  }
  if (sd.size() != 2 || sd[1] != 2 || (in.dims[size_t(axis->i)] >= 0 && sd[0] != in.dims[size_t(axis->i)])) {
    return op_error(op, "axisStats must have shape [" + std::to_string(in.dims[size_t(axis->i)]) +
                            ", 2] (min, max per channel), got " + axis_stats->dense.type.to_string());
  }
  for (int64_t c = 0; c < sd[0]; ++c) {
    if (axis_stats->dense.float_at(size_t(2 * c)) > axis_stats->dense.float_at(size_t(2 * c + 1))) {
      return op_error(op, "axisStats channel " + std::to_string(c) + ": min exceeds max");
    }
  }
  return Status::ok();
}

Status verify_fake_quant(const Graph& g, const Op& op) {
  QRT_RETURN_IF_ERROR(check_float_identity(g, op));
  QRT_ASSIGN_OR_RETURN(int64_t bits, int_attr(op, "num_bits", 8));
  if (bits < 2 || bits > 16) {
    return op_error(op, "num_bits must be in [2, 16], got " + std::to_string(bits));
  }
  for (const char* flag : {"narrow_range", "is_signed"}) {
    const Attribute* a = op.attr(flag);
    if (a && a->kind != Attribute::Kind::kBool) {
      return op_error(op, std::string("attribute '") + flag + "' must be true or false, got " + a->to_string());
    }
  }
  const Attribute* axis = op.attr("axis");
  const Type& in = operand_type(g, op, 0);
  if (axis) {
    if (axis->kind != Attribute::Kind::kInt || axis->i < 0 || size_t(axis->i) >= in.rank()) {
      return op_error(op, "axis must be an integer in [0, " + std::to_string(in.rank()) + "), got " + axis->to_string());
    }
  }
  QRT_ASSIGN_OR_RETURN(std::vector<double> mins, numbers(op, "min", axis != nullptr));
  QRT_ASSIGN_OR_RETURN(std::vector<double> maxs, numbers(op, "max", axis != nullptr));
  if (mins.size() != maxs.size() ||
      (axis && in.dims[size_t(axis->i)] >= 0 && int64_t(mins.size()) != in.dims[size_t(axis->i)])) {
    return op_error(op, "min and max must each hold one value per channel along axis (" +
                            std::to_string(axis ? in.dims[size_t(axis->i)] : 1) + "), got " +
                            std::to_string(mins.size()) + " and " + std::to_string(maxs.size()));
  }
  for (size_t c = 0; c < mins.size(); ++c) {
    // MLIR's fake-quant conversion requires the range to straddle zero (0.0 must be exact).
    if (!std::isfinite(mins[c]) || !std::isfinite(maxs[c]) || mins[c] > 0.0 || maxs[c] < 0.0 || mins[c] > maxs[c]) {
      return op_error(op, "range [" + std::to_string(mins[c]) + ", " + std::to_string(maxs[c]) + "]" +
                              (axis ? " of channel " + std::to_string(c) : std::string()) +
                              " must be finite and contain 0");
    }
  }
  // The nudged scale must be a positive finite number of the float type (a range narrower
  // than the storage's steps underflows to 0).
  auto nudged = fake_quant_element_type(op, in.element.float_kind);
  if (!nudged.is_ok()) return op_error(op, nudged.status().message());
  return Status::ok();
}

}  // namespace qrt::op_verify
