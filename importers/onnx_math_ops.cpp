// qrt — ONNX import of the math and data-movement ops of transformer graphs (Sub, Div, Pow,
// Max, Min, comparisons, Not, Where, Sqrt, Reciprocal, Exp, Tanh, Erf, Neg, Gelu, Cast,
// LayerNormalization, ReduceSum/Max/Min/Mean/Prod and the composite reductions (L1, L2,
// SumSquare, LogSum, LogSumExp), Gather, Slice, Split, Expand, Shape), and
// MatMulInteger whose first zero point is computed at run time (DynamicQuantizeLinear).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <onnx/onnx_pb.h>

#include "importers/onnx_importer_impl.h"
#include "importers/onnx_tensors.h"
#include "ir/ops.h"

namespace qrt::importers::onnx_detail {

namespace {

struct NamedKind {
  const char* onnx;
  OpKind kind;
};

constexpr NamedKind kBinary[] = {{"Sub", OpKind::kSub}, {"Div", OpKind::kDiv},     {"Pow", OpKind::kPow},
                                 {"Equal", OpKind::kEqual},
                                 {"Less", OpKind::kLess}, {"Greater", OpKind::kGreater}};
constexpr NamedKind kUnary[] = {{"Sqrt", OpKind::kSqrt}, {"Reciprocal", OpKind::kReciprocal}, {"Exp", OpKind::kExp},
                                {"Tanh", OpKind::kTanh}, {"Erf", OpKind::kErf},               {"Neg", OpKind::kNeg},
                                {"Not", OpKind::kNot},   {"Abs", OpKind::kAbs},               {"Sign", OpKind::kSign},
                                {"Floor", OpKind::kFloor}, {"Ceil", OpKind::kCeil},
                                {"Round", OpKind::kRoundEven},  // ONNX Round: ties to even
                                {"Log", OpKind::kLog},   {"Sin", OpKind::kSin},               {"Cos", OpKind::kCos},
                                {"Asin", OpKind::kAsin}, {"Acos", OpKind::kAcos},             {"Atan", OpKind::kAtan},
                                {"Asinh", OpKind::kAsinh}, {"Acosh", OpKind::kAcosh},         {"Atanh", OpKind::kAtanh}};

template <size_t N>
const NamedKind* find_kind(const NamedKind (&table)[N], const std::string& op) {
  for (const NamedKind& k : table) {
    if (op == k.onnx) return &k;
  }
  return nullptr;
}

Attribute int_array(const std::vector<int64_t>& v) { return Attribute::make_int_array(v); }

}  // namespace

// The integers of constant input `i` (absent: `fallback`), or an error naming it.
Result<std::vector<int64_t>> Importer::const_ints(const onnx::NodeProto& node, int i, const char* what,
                                                  std::vector<int64_t> fallback) {
  if (i >= node.input_size() || node.input(i).empty()) return fallback;
  const DenseElements* c = constant(node, i);
  if (!c || !c->type.element.is_integer()) {
    return error(node, std::string(what) + " (input " + std::to_string(i) +
                           ") must be a constant integer tensor (computed from static shapes at import)");
  }
  std::vector<int64_t> v;
  for (size_t k = 0; k < size_t(c->type.num_elements()); ++k) v.push_back(c->int_at(k));
  return v;
}

// LayerNormalization's optional outputs (training graphs save them for the backward pass):
// the mean over axes axis..rank-1 and 1 / sqrt(variance + epsilon), both with those axes kept
// as 1 and computed in stash_type (float by default) as ONNX's reference does.
Status Importer::layer_norm_statistics(const onnx::NodeProto& node, const Attrs& a, int x, int64_t axis, float eps,
                                       bool want_mean, bool want_inv_std) {
  QRT_ASSIGN_OR_RETURN(int64_t stash, attr_int(node, a, "stash_type", 1));
  auto stash_type = element_type_of(int(stash));
  if (!stash_type.is_ok() || !stash_type->is_float()) {
    return error(node, "stash_type " + std::to_string(stash) + " is not a float type", ErrorCode::kVerify);
  }
  const Type t = type(x);
  const ElementType e = *stash_type;
  const int xs = t.element == e ? x : emit(OpKind::kCast, {x}, Type::tensor(t.dims, e));
  std::vector<int64_t> axes, stat_dims = t.dims;
  for (int64_t d = axis; d < int64_t(t.rank()); ++d) {
    axes.push_back(d);
    stat_dims[size_t(d)] = 1;
  }
  const Type full = Type::tensor(t.dims, e), stat = Type::tensor(stat_dims, e);
  const std::vector<std::pair<std::string, Attribute>> mean_attrs = {{"axes", int_array(axes)},
                                                                      {"keepdims", Attribute::make_int(1)}};
  const int mean = emit(OpKind::kMean, {xs}, stat, mean_attrs);
  if (want_mean) bind(node, 1, mean);
  if (want_inv_std) {
    const int d = emit(OpKind::kSub, {xs, mean}, full);
    const int variance = emit(OpKind::kMean, {emit(OpKind::kMul, {d, d}, full)}, stat, mean_attrs);
    const int std_dev = emit(OpKind::kSqrt, {emit(OpKind::kAdd, {variance, float_scalar(double(eps), e)}, stat)}, stat);
    bind(node, 2, emit(OpKind::kReciprocal, {std_dev}, stat));
  }
  return Status::ok();
}

Result<bool> Importer::math_op(const onnx::NodeProto& node, const Attrs& a) {
  const std::string& op = node.op_type();
  if (op == "Max" || op == "Min") {
    // Variadic since opset 8: folded left to right with numpy broadcasting; one input is
    // its own maximum.
    if (node.input_size() < 1) return error(node, "expects at least one input", ErrorCode::kParse);
    const OpKind kind = op == "Max" ? OpKind::kMax : OpKind::kMin;
    QRT_ASSIGN_OR_RETURN(int acc, value(node, 0));
    for (int i = 1; i < node.input_size(); ++i) {
      QRT_ASSIGN_OR_RETURN(int x, value(node, i));
      if (!(type(x).element == type(acc).element)) {
        return error(node, "operands of different types: " + type(acc).to_string() + " and " + type(x).to_string());
      }
      auto dims = broadcast_shapes(type(acc).dims, type(x).dims);
      if (!dims.is_ok()) return error(node, dims.status().message(), ErrorCode::kVerify);
      acc = emit(kind, {acc, x}, Type::tensor(*dims, type(acc).element));
    }
    bind(node, 0, acc);
    return true;
  }
  if (const NamedKind* k = find_kind(kBinary, op)) {
    if (node.input_size() != 2) return error(node, "expects 2 inputs", ErrorCode::kParse);
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int y, value(node, 1));
    auto dims = broadcast_shapes(type(x).dims, type(y).dims);
    if (!dims.is_ok()) return error(node, dims.status().message(), ErrorCode::kVerify);
    const ElementType ex = type(x).element, ey = type(y).element;
    if (k->kind == OpKind::kPow) {
      // ONNX's Pow takes an exponent of another type; qrt.pow is float: the exponent is cast to
      // the base's type (exact for integers below 2^24 in f32).
      if (!ex.is_float()) return error(node, "Pow of a " + ex.to_string() + " base is not supported (float bases only)");
      if (!(ey == ex)) {
        if (!ey.is_float() && !ey.is_integer()) return error(node, "the exponent must be a float or integer tensor");
        const Type ty = type(y);
        y = emit(OpKind::kCast, {y}, Type::tensor(ty.dims, ex));
      }
    } else if (!(ex == ey)) {
      return error(node, "operands of different types: " + type(x).to_string() + " and " + type(y).to_string());
    }
    const bool compare = k->kind == OpKind::kEqual || k->kind == OpKind::kLess || k->kind == OpKind::kGreater;
    bind(node, 0, emit(k->kind, {x, y}, Type::tensor(*dims, compare ? ElementType::make_int(1) : type(x).element)));
    return true;
  }
  if (const NamedKind* k = find_kind(kUnary, op)) {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    bind(node, 0, emit(k->kind, {x}, type(x)));
    return true;
  }
  if (op == "Gelu") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(std::string approx, attr_string(node, a, "approximate", "none"));
    if (approx != "none" && approx != "tanh") return error(node, "approximate '" + approx + "' is not none or tanh");
    bind(node, 0, emit(OpKind::kGelu, {x}, type(x), {{"approximate", Attribute::make_string(approx)}}));
    return true;
  }
  if (op == "Where") {
    std::vector<int> v(3);
    for (int i = 0; i < 3; ++i) {
      QRT_ASSIGN_OR_RETURN(v[size_t(i)], value(node, i));
    }
    std::vector<int64_t> dims = type(v[0]).dims;
    for (int i = 1; i < 3; ++i) {
      auto b = broadcast_shapes(dims, type(v[size_t(i)]).dims);
      if (!b.is_ok()) return error(node, b.status().message(), ErrorCode::kVerify);
      dims = *b;
    }
    bind(node, 0, emit(OpKind::kWhere, v, Type::tensor(dims, type(v[1]).element)));
    return true;
  }
  if (op == "Cast") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int64_t to, attr_int(node, a, "to", 0));
    auto e = element_type_of(int(to));
    if (!e.is_ok()) return error(node, e.status().message());
    if (*e == type(x).element) {
      bind(node, 0, x);  // a no-op cast keeps the value
      return true;
    }
    bind(node, 0, emit(OpKind::kCast, {x}, Type::tensor(type(x).dims, *e)));
    return true;
  }
  if (op == "LayerNormalization") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int scale, value(node, 1));
    std::vector<int> operands = {x, scale};
    if (node.input_size() > 2 && !node.input(2).empty()) {
      QRT_ASSIGN_OR_RETURN(int bias, value(node, 2));
      operands.push_back(bias);
    }
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", -1));
    QRT_ASSIGN_OR_RETURN(float eps, attr_float(node, a, "epsilon", 1e-5f));
    if (axis < 0) axis += int64_t(type(x).rank());
    if (axis < 0 || axis >= int64_t(type(x).rank())) return error(node, "axis out of range", ErrorCode::kVerify);
    bind(node, 0, emit(OpKind::kLayerNorm, operands, type(x),
                       {{"axis", Attribute::make_int(axis)}, {"epsilon", Attribute::make_float(double(eps))}}));
    const bool want_mean = node.output_size() > 1 && !node.output(1).empty();
    const bool want_inv_std = node.output_size() > 2 && !node.output(2).empty();
    if (want_mean || want_inv_std) {
      QRT_RETURN_IF_ERROR(layer_norm_statistics(node, a, x, axis, eps, want_mean, want_inv_std));
    }
    return true;
  }
  if (op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMean" || op == "ReduceMin" || op == "ReduceProd" ||
      op == "ReduceSumSquare" || op == "ReduceL1" || op == "ReduceL2" || op == "ReduceLogSum" ||
      op == "ReduceLogSumExp") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    const bool axes_input = (op == "ReduceSum" && opset_ >= 13) || opset_ >= 18;
    std::vector<int64_t> axes;
    if (axes_input) {
      QRT_ASSIGN_OR_RETURN(axes, const_ints(node, 1, "axes", {}));
    } else {
      QRT_ASSIGN_OR_RETURN(axes, attr_ints(node, a, "axes", {}));
    }
    QRT_ASSIGN_OR_RETURN(int64_t keepdims, attr_int(node, a, "keepdims", 1));
    QRT_ASSIGN_OR_RETURN(int64_t noop, attr_int(node, a, "noop_with_empty_axes", 0));
    const bool logs = op == "ReduceL2" || op == "ReduceLogSum" || op == "ReduceLogSumExp" || op == "ReduceL1";
    if (logs && !t.element.is_float()) {
      return error(node, "needs a float operand, got " + t.to_string(), ErrorCode::kUnsupported);
    }
    if (axes.empty()) {
      if (noop) {
        // ONNX: with no axes and noop_with_empty_axes "the output tensor would be equivalent
        // to input tensor", for every Reduce op (its reference returns the data as it is).
        bind(node, 0, x);
        return true;
      }
      for (size_t d = 0; d < t.rank(); ++d) axes.push_back(int64_t(d));
    }
    std::vector<bool> reduced(t.rank(), false);
    for (int64_t& ax : axes) {
      if (ax < 0) ax += int64_t(t.rank());
      if (ax < 0 || ax >= int64_t(t.rank()) || reduced[size_t(ax)]) return error(node, "invalid axes", ErrorCode::kVerify);
      reduced[size_t(ax)] = true;
    }
    std::sort(axes.begin(), axes.end());
    const Type out = Type::tensor(reduction_dims(t.dims, reduced, keepdims != 0), t.element);
    auto reduce = [&](OpKind kind, int operand, bool keep) {
      return emit(kind, {operand}, Type::tensor(reduction_dims(t.dims, reduced, keep), t.element),
                  {{"axes", int_array(axes)}, {"keepdims", Attribute::make_int(keep ? 1 : 0)}});
    };
    int y = -1;
    if (op == "ReduceSum") y = reduce(OpKind::kReduceSum, x, keepdims != 0);
    else if (op == "ReduceMax") y = reduce(OpKind::kReduceMax, x, keepdims != 0);
    else if (op == "ReduceMin") y = reduce(OpKind::kReduceMin, x, keepdims != 0);
    else if (op == "ReduceProd") y = reduce(OpKind::kReduceProd, x, keepdims != 0);
    else if (op == "ReduceMean") y = reduce(OpKind::kMean, x, keepdims != 0);
    else if (op == "ReduceL1") y = reduce(OpKind::kReduceSum, emit(OpKind::kAbs, {x}, t), keepdims != 0);
    else if (op == "ReduceSumSquare") y = reduce(OpKind::kReduceSum, emit(OpKind::kMul, {x, x}, t), keepdims != 0);
    else if (op == "ReduceL2") y = emit(OpKind::kSqrt, {reduce(OpKind::kReduceSum, emit(OpKind::kMul, {x, x}, t), keepdims != 0)}, out);
    else if (op == "ReduceLogSum") y = emit(OpKind::kLog, {reduce(OpKind::kReduceSum, x, keepdims != 0)}, out);
    else {
      // ReduceLogSumExp as ONNX Runtime computes it, stable for large inputs:
      // m + log(sum(exp(x - m))), m the maximum over the axes.
      const int m = reduce(OpKind::kReduceMax, x, true);
      const int e = emit(OpKind::kExp, {emit(OpKind::kSub, {x, m}, t)}, t);
      const int l = emit(OpKind::kLog, {reduce(OpKind::kReduceSum, e, keepdims != 0)}, out);
      y = emit(OpKind::kAdd, {l, keepdims != 0 ? m : reduce(OpKind::kReduceMax, x, false)}, out);
    }
    bind(node, 0, y);
    return true;
  }
  if (op == "ArgMax" || op == "ArgMin") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 0));
    QRT_ASSIGN_OR_RETURN(int64_t keepdims, attr_int(node, a, "keepdims", 1));
    QRT_ASSIGN_OR_RETURN(int64_t last, attr_int(node, a, "select_last_index", 0));
    if (axis < 0) axis += int64_t(t.rank());
    if (axis < 0 || axis >= int64_t(t.rank())) return error(node, "axis out of range", ErrorCode::kVerify);
    std::vector<bool> reduced(t.rank(), false);
    reduced[size_t(axis)] = true;
    const Type out = Type::tensor(reduction_dims(t.dims, reduced, keepdims != 0), ElementType::make_int(64));
    bind(node, 0, emit(op == "ArgMax" ? OpKind::kArgMax : OpKind::kArgMin, {x}, out,
                       {{"axis", Attribute::make_int(axis)}, {"keepdims", Attribute::make_int(keepdims ? 1 : 0)},
                        {"select_last_index", Attribute::make_int(last ? 1 : 0)}}));
    return true;
  }
  if (op == "Gather") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int idx, value(node, 1));
    const Type t = type(x), ti = type(idx);
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 0));
    if (axis < 0) axis += int64_t(t.rank());
    if (axis < 0 || axis >= int64_t(t.rank())) return error(node, "axis out of range", ErrorCode::kVerify);
    std::vector<int64_t> dims(t.dims.begin(), t.dims.begin() + axis);
    dims.insert(dims.end(), ti.dims.begin(), ti.dims.end());
    dims.insert(dims.end(), t.dims.begin() + axis + 1, t.dims.end());
    bind(node, 0, emit(OpKind::kGather, {x, idx}, Type::tensor(dims, t.element), {{"axis", Attribute::make_int(axis)}}));
    return true;
  }
  if (op == "GatherElements") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int idx, value(node, 1));
    const Type t = type(x), ti = type(idx);
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 0));
    if (axis < 0) axis += int64_t(t.rank());
    if (axis < 0 || axis >= int64_t(t.rank())) {
      return error(node, "axis " + std::to_string(axis) + " is out of range for " + t.to_string(), ErrorCode::kVerify);
    }
    bind(node, 0, emit(OpKind::kGatherElements, {x, idx}, Type::tensor(ti.dims, t.element), {{"axis", Attribute::make_int(axis)}}));
    return true;
  }
  if (op == "Slice" || op == "Split") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    const size_t rank = t.rank();
    // One qrt.slice per output: full ranges except along the sliced axes.
    auto emit_slice = [&](int output, std::vector<int64_t> starts, std::vector<int64_t> ends,
                          std::vector<int64_t> steps) -> Status {
      std::vector<int64_t> dims;
      for (size_t d = 0; d < rank; ++d) {
        dims.push_back(t.dims[d] < 0 ? -1 : slice_extent(t.dims[d], starts[d], ends[d], steps[d]));
      }
      bind(node, output, emit(OpKind::kSlice, {x}, Type::tensor(dims, t.element),
                              {{"ends", int_array(ends)}, {"starts", int_array(starts)}, {"steps", int_array(steps)}}));
      return Status::ok();
    };
    std::vector<int64_t> starts(rank, 0), ends(rank, std::numeric_limits<int64_t>::max()), steps(rank, 1);
    if (op == "Slice") {
      std::vector<int64_t> s, e, axes, st;
      if (opset_ >= 10) {
        QRT_ASSIGN_OR_RETURN(s, const_ints(node, 1, "starts", {}));
        QRT_ASSIGN_OR_RETURN(e, const_ints(node, 2, "ends", {}));
        QRT_ASSIGN_OR_RETURN(axes, const_ints(node, 3, "axes", {}));
        QRT_ASSIGN_OR_RETURN(st, const_ints(node, 4, "steps", {}));
      } else {
        QRT_ASSIGN_OR_RETURN(s, attr_ints(node, a, "starts", {}));
        QRT_ASSIGN_OR_RETURN(e, attr_ints(node, a, "ends", {}));
        QRT_ASSIGN_OR_RETURN(axes, attr_ints(node, a, "axes", {}));
      }
      if (axes.empty()) {
        for (size_t d = 0; d < s.size(); ++d) axes.push_back(int64_t(d));
      }
      if (s.size() != axes.size() || e.size() != axes.size() || (!st.empty() && st.size() != axes.size())) {
        return error(node, "starts, ends, axes and steps differ in length", ErrorCode::kParse);
      }
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t ax = axes[i] < 0 ? axes[i] + int64_t(rank) : axes[i];
        if (ax < 0 || ax >= int64_t(rank)) return error(node, "axis " + std::to_string(axes[i]) + " is out of range");
        starts[size_t(ax)] = s[i];
        ends[size_t(ax)] = e[i];
        steps[size_t(ax)] = st.empty() ? 1 : st[i];
        if (steps[size_t(ax)] == 0) return error(node, "a step is 0", ErrorCode::kVerify);
      }
      QRT_RETURN_IF_ERROR(emit_slice(0, starts, ends, steps));
      return true;
    }
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 0));
    if (axis < 0) axis += int64_t(rank);
    if (axis < 0 || axis >= int64_t(rank)) return error(node, "axis out of range", ErrorCode::kVerify);
    const int64_t extent = t.dims[size_t(axis)];
    std::vector<int64_t> sizes;
    if (opset_ >= 13) {
      QRT_ASSIGN_OR_RETURN(sizes, const_ints(node, 1, "split", {}));
    } else {
      QRT_ASSIGN_OR_RETURN(sizes, attr_ints(node, a, "split", {}));
    }
    if (sizes.empty()) {
      if (extent < 0) return error(node, "an equal split needs a static size along the axis");
      const int64_t n = node.output_size();
      const int64_t part = (extent + n - 1) / n;  // the last part takes the remainder (opset 18)
      for (int64_t i = 0; i < n; ++i) sizes.push_back(std::min(part, extent - i * part));
    }
    if (int64_t(sizes.size()) != node.output_size()) {
      return error(node, "split has " + std::to_string(sizes.size()) + " sizes for " +
                             std::to_string(node.output_size()) + " outputs", ErrorCode::kVerify);
    }
    int64_t at = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      starts[size_t(axis)] = at;
      ends[size_t(axis)] = at + sizes[i];
      at += sizes[i];
      if (!node.output(int(i)).empty()) QRT_RETURN_IF_ERROR(emit_slice(int(i), starts, ends, steps));
    }
    if (extent >= 0 && at != extent) {
      return error(node, "split sizes add up to " + std::to_string(at) + ", the axis has " + std::to_string(extent),
                   ErrorCode::kVerify);
    }
    return true;
  }
  if (op == "Resize") {
    // Nearest, linear or cubic; scales or sizes must be constants.
    if (opset_ < 11) return error(node, "Resize before opset 11 is not supported");
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type tx = type(x);
    QRT_ASSIGN_OR_RETURN(std::string mode, attr_string(node, a, "mode", "nearest"));
    if (mode != "nearest" && mode != "linear" && mode != "cubic") {
      return error(node, "mode '" + mode + "' is not supported (nearest, linear, cubic)");
    }
    if (mode != "nearest" && !tx.element.is_float()) {
      return error(node, "mode '" + mode + "' of " + tx.element.to_string() + " values is not supported (floats only)");
    }
    QRT_ASSIGN_OR_RETURN(float cubic_a, attr_float(node, a, "cubic_coeff_a", -0.75f));
    QRT_ASSIGN_OR_RETURN(int64_t exclude_outside, attr_int(node, a, "exclude_outside", 0));
    QRT_ASSIGN_OR_RETURN(std::string coord, attr_string(node, a, "coordinate_transformation_mode", "half_pixel"));
    if (coord == "tf_crop_and_resize") return error(node, "coordinate_transformation_mode tf_crop_and_resize is not supported");
    QRT_ASSIGN_OR_RETURN(std::string nearest, attr_string(node, a, "nearest_mode", "round_prefer_floor"));
    QRT_ASSIGN_OR_RETURN(int64_t antialias, attr_int(node, a, "antialias", 0));
    if (antialias != 0 || a.count("axes")) return error(node, "antialias and axes are not supported");
    QRT_ASSIGN_OR_RETURN(std::string policy, attr_string(node, a, "keep_aspect_ratio_policy", "stretch"));
    if (policy != "stretch") return error(node, "keep_aspect_ratio_policy '" + policy + "' is not supported");
    const size_t rank = tx.rank();
    std::vector<int64_t> dims(rank);
    std::vector<Attribute> scales;
    const DenseElements* s = node.input_size() > 2 && !node.input(2).empty() ? constant(node, 2) : nullptr;
    const DenseElements* z = node.input_size() > 3 && !node.input(3).empty() ? constant(node, 3) : nullptr;
    if (s && s->type.num_elements() == int64_t(rank)) {
      for (size_t d = 0; d < rank; ++d) {
        const double f = s->float_at(d);
        if (!(f > 0.0) || !std::isfinite(f)) {
          return error(node, "scale " + std::to_string(f) + " of dimension " + std::to_string(d) +
                                 " is not positive and finite");
        }
        if (tx.dims[d] >= 0 && double(tx.dims[d]) * f > double(int64_t(1) << 48)) {
          return error(node, "scale " + std::to_string(f) + " of dimension " + std::to_string(d) + " resizes " +
                                 std::to_string(tx.dims[d]) + " elements to more than qrt's limit of 2^48",
                       ErrorCode::kVerify);
        }
        scales.push_back(Attribute::make_float(f));
        dims[d] = tx.dims[d] < 0 ? -1 : int64_t(std::floor(double(tx.dims[d]) * f));
      }
    } else if (z && z->type.num_elements() == int64_t(rank)) {
      for (size_t d = 0; d < rank; ++d) {
        // The output shape as given: a size is a dimension, and an empty input dimension has
        // no element to repeat.
        const int64_t size = z->int_at(d);
        if (size < 0 || size > (int64_t(1) << 48) || (tx.dims[d] == 0 && size != 0)) {
          return error(node, "size " + std::to_string(size) + " of dimension " + std::to_string(d) +
                                 (size < 0 ? " is negative"
                                  : size > (int64_t(1) << 48) ? " is above qrt's limit of 2^48"
                                                              : " resizes an empty dimension"),
                       ErrorCode::kVerify);
        }
        dims[d] = size;
      }
    } else {
      return error(node, "needs constant scales or sizes with one entry per dimension");
    }
    std::vector<std::pair<std::string, Attribute>> attrs = {
        {"coordinate_transformation_mode", Attribute::make_string(coord)},
        {"mode", Attribute::make_string(mode)},
        {"nearest_mode", Attribute::make_string(nearest)}};
    if (mode == "cubic") {
      attrs.push_back({"cubic_coeff_a", Attribute::make_float(double(cubic_a))});
      attrs.push_back({"exclude_outside", Attribute::make_int(exclude_outside != 0 ? 1 : 0)});
    }
    if (!scales.empty()) {
      Attribute list;
      list.kind = Attribute::Kind::kArray;
      list.array = scales;
      attrs.push_back({"scales", list});
    }
    bind(node, 0, emit(OpKind::kResize, {x}, Type::tensor(dims, tx.element), attrs));
    return true;
  }
  if (op == "Trilu") {
    // where(mask, x, 0): the mask of the last two axes is a constant (their sizes and k are
    // static), so the op runs on the element-wise kernels.
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type tx = type(x);
    if (tx.rank() < 2) return error(node, "needs an input of rank 2 or more, got " + tx.to_string(), ErrorCode::kVerify);
    if (!tx.element.is_float() && !tx.element.is_integer()) {
      return error(node, "takes float or integer values, not " + tx.element.to_string());
    }
    const int64_t rows = tx.dims[tx.rank() - 2], cols = tx.dims.back();
    if (rows < 0 || cols < 0) return error(node, "needs static sizes of the last two dimensions, got " + tx.to_string());
    int64_t k = 0;
    if (node.input_size() > 1 && !node.input(1).empty()) {
      const DenseElements* kd = constant(node, 1);
      if (!kd || kd->type.num_elements() != 1 || !kd->type.element.is_integer()) {
        return error(node, "needs k as a constant integer scalar");
      }
      k = kd->int_at(0);
    }
    QRT_ASSIGN_OR_RETURN(int64_t upper, attr_int(node, a, "upper", 1));
    const Type mask_type = Type::tensor({rows, cols}, ElementType::make_int(1));
    QRT_ASSIGN_OR_RETURN(DenseElements mask, built_constant(node, mask_type, "the triangle mask"));
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        // Upper: on or above the k-th diagonal (j - i >= k); lower: on or below it.
        mask.set_int(size_t(i * cols + j), (upper != 0 ? j - i >= k : j - i <= k) ? 1 : 0);
      }
    }
    const int m = emit(OpKind::kConstant, {}, mask.type, {{"value", Attribute::make_dense(mask)}});
    const DenseElements zero = DenseElements::zeros(Type::tensor({}, tx.element));
    const int z = emit(OpKind::kConstant, {}, zero.type, {{"value", Attribute::make_dense(zero)}});
    bind(node, 0, emit(OpKind::kWhere, {m, x, z}, tx));
    return true;
  }
  if (op == "Expand") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, const_ints(node, 1, "shape", {}));
    auto dims = broadcast_shapes(type(x).dims, shape);
    if (!dims.is_ok()) return error(node, dims.status().message(), ErrorCode::kVerify);
    bind(node, 0, emit(OpKind::kBroadcastTo, {x}, Type::tensor(*dims, type(x).element)));
    return true;
  }
  if (op == "Shape") {  // a dynamic shape (fold_node took the static ones)
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    if (a.count("start") || a.count("end")) return error(node, "start/end of a dynamic Shape are not supported");
    bind(node, 0, emit(OpKind::kShape, {x}, Type::tensor({int64_t(type(x).rank())}, ElementType::make_int(64))));
    return true;
  }
  if (op == "ConstantOfShape" || op == "Range" || op == "Size") {
    return error(node, "its inputs must be computable at import (constants or static shapes)");
  }
  return false;
}

// MatMulInteger(a, b, a_zp, b_zp) with a_zp computed at run time (DynamicQuantizeLinear):
// Σ_k (a - za)(b - zb) = Σ_k a·(b - zb) - za·Σ_k (b - zb), the first an integer matmul with a
// zero-point-free a, the second za times the constant column sums. Exact in int32.
Status Importer::matmul_integer_runtime_zp(const onnx::NodeProto& node) {
  QRT_ASSIGN_OR_RETURN(int za, value(node, 2));
  const Type tza = type(za);
  if (tza.num_elements() != 1) {
    return error(node, "a per-row zero point of A (" + tza.to_string() + ") is not supported");
  }
  const DenseElements* b = constant(node, 1);
  if (!b) return error(node, "B must be a constant when A's zero point is computed at run time");
  QRT_ASSIGN_OR_RETURN(const DenseElements* zb, param(node, 3, "zero point of the second operand"));
  QRT_ASSIGN_OR_RETURN(ElementType sa, storage_of(node, 0));
  QRT_ASSIGN_OR_RETURN(const Type ta, input_type(node, 0));
  const Type tb = b->type;
  if (ta.rank() < 2 || tb.rank() < 2) return error(node, "1-D operands are not supported");
  if (!(tza.element == sa)) return error(node, "A's zero point " + tza.to_string() + " must have A's element type");
  QRT_ASSIGN_OR_RETURN(ElementType qa, make_quant_type(node, sa, ta, nullptr, nullptr, 0));
  QRT_ASSIGN_OR_RETURN(ElementType qb, make_quant_type(node, b->type.element, tb, nullptr, zb, int64_t(tb.rank()) - 1));
  QRT_ASSIGN_OR_RETURN(int va, quantized_value(node, 0, qa));
  QRT_ASSIGN_OR_RETURN(int vb, quantized_value(node, 1, qb));
  auto matmul_dims = matmul_result_dims(ta.dims, tb.dims);
  if (!matmul_dims.is_ok()) return error(node, matmul_dims.status().message(), ErrorCode::kVerify);
  const std::vector<int64_t>& dims = *matmul_dims;
  const ElementType acc_type = ElementType::make_uniform(QuantStorage::full_range(32, true), FloatKind::kF32, 1.0, 0);
  const int acc = to_storage_int(emit(OpKind::kMatmul, {va, vb}, Type::tensor(dims, acc_type)));
  // Column sums Σ_k (b - zb[n]) per batch, as [..., 1, N] int32.
  const int64_t k = tb.dims[tb.rank() - 2], n = tb.dims[tb.rank() - 1];
  std::vector<int64_t> sum_dims = tb.dims;
  sum_dims[tb.rank() - 2] = 1;
  const ElementType i32 = ElementType::make_int(32);
  DenseElements sums;
  sums.type = Type::tensor(sum_dims, i32);
  const size_t batches = size_t(tb.num_elements() / (k * n));
  sums.bytes.assign(batches * size_t(n) * 4, 0);
  for (size_t bi = 0; bi < batches; ++bi) {
    for (int64_t c = 0; c < n; ++c) {
      const int64_t zero = qb.zero_points[qb.zero_points.size() == 1 ? 0 : size_t(c)];
      int64_t s = 0;
      for (int64_t r = 0; r < k; ++r) s += b->int_at(bi * size_t(k * n) + size_t(r * n + c)) - zero;
      const int32_t s32 = int32_t(s);
      std::memcpy(sums.bytes.data() + (bi * size_t(n) + size_t(c)) * 4, &s32, 4);
    }
  }
  bind_zero_point_correction(node, acc, dims, za, sums);
  return Status::ok();
}

void Importer::bind_zero_point_correction(const onnx::NodeProto& node, int acc, const std::vector<int64_t>& dims, int zp,
                                          const DenseElements& sums) {
  const ElementType i32 = ElementType::make_int(32);
  const Type tzp = type(zp);
  const int sum_value = emit(OpKind::kConstant, {}, sums.type, {{"value", Attribute::make_dense(sums)}});
  const int zp32 = emit(OpKind::kCast, {zp}, Type::tensor(tzp.dims, i32));
  const int correction = emit(OpKind::kMul, {zp32, sum_value}, Type::tensor(*broadcast_shapes(tzp.dims, sums.type.dims), i32));
  bind(node, 0, emit(OpKind::kSub, {acc, correction}, Type::tensor(*broadcast_shapes(dims, type(correction).dims), i32)));
}

}  // namespace qrt::importers::onnx_detail
