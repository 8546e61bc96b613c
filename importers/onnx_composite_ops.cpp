// qrt — ONNX import of ops that qrt composes from its own (each step one rounding of the
// element type, so every backend gives the reference's values): PRelu, Softplus, Softsign,
// Shrink, Sinh, Cosh, Tan, IsNaN, IsInf, Hardmax, OneHot, Tile, InstanceNormalization and
// EyeLike (a constant), LRN (with a 1x1 convolution); and
// CumSum, Mod, ScatterND and GatherND, one qrt op each; ScatterElements as scatter_nd of full
// tuples; TopK as qrt.topk (the indices) and qrt.gather_elements (the values at them).
// All run on the element-wise, reduction and data-movement kernels; between 8-bit QDQ pairs a
// unary composition becomes one 256-entry table (fold-qdq), as any unary region does.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <onnx/onnx_pb.h>

#include "importers/onnx_importer_impl.h"
#include "importers/onnx_tensors.h"
#include "ir/ops.h"

namespace qrt::importers::onnx_detail {

namespace {

/// A constant of `type` holding `values` (converted to its element type).
DenseElements dense_of_ints(const Type& type, const std::vector<int64_t>& values) {
  DenseElements d = DenseElements::zeros(type);
  for (size_t i = 0; i < values.size(); ++i) d.set_int(i, values[i]);
  return d;
}

/// `dims` with every dimension 1 except `axis`, which is `n`.
std::vector<int64_t> along_axis(size_t rank, size_t axis, int64_t n) {
  std::vector<int64_t> dims(rank, 1);
  dims[axis] = n;
  return dims;
}

}  // namespace

Result<bool> Importer::composite_op(const onnx::NodeProto& node, const Attrs& a) {
  const std::string& op = node.op_type();
  auto constant_of = [&](const DenseElements& d) {
    return emit(OpKind::kConstant, {}, d.type, {{"value", Attribute::make_dense(d)}});
  };
  // 0, 1, ..., n - 1 along `axis` of a rank-`rank` i64 tensor (for comparisons with indices).
  auto iota = [&](size_t rank, size_t axis, int64_t n) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = i;
    return constant_of(dense_of_ints(Type::tensor(along_axis(rank, axis, n), ElementType::make_int(64)), v));
  };
  const bool float_unary = op == "Softplus" || op == "Softsign" || op == "Shrink" || op == "Sinh" || op == "Cosh" ||
                           op == "Tan" || op == "IsNaN" || op == "IsInf";
  if (float_unary) {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    if (!t.element.is_float()) return error(node, "expects a float tensor, got " + t.to_string());
    const Type flags = Type::tensor(t.dims, ElementType::make_int(1));
    auto k = [&](double v) { return float_scalar(v, t.element); };
    auto un = [&](OpKind kind, int operand) { return emit(kind, {operand}, t); };
    auto bin = [&](OpKind kind, int lhs, int rhs) { return emit(kind, {lhs, rhs}, t); };
    int y = -1;
    if (op == "Softplus") {
      // log(1 + e^x) as relu(x) + log1p(e^-|x|): equal in exact arithmetic, and finite
      // where ONNX's own formula overflows (x > 88 in f32).
      y = bin(OpKind::kAdd, emit(OpKind::kRelu, {x}, t), un(OpKind::kLog1p, un(OpKind::kExp, un(OpKind::kNeg, un(OpKind::kAbs, x)))));
    } else if (op == "Softsign") {
      y = bin(OpKind::kDiv, x, bin(OpKind::kAdd, k(1.0), un(OpKind::kAbs, x)));
    } else if (op == "Shrink") {
      // x < -lambd ? x + bias : x > lambd ? x - bias : 0.
      QRT_ASSIGN_OR_RETURN(float lambd, attr_float(node, a, "lambd", 0.5f));
      QRT_ASSIGN_OR_RETURN(float bias, attr_float(node, a, "bias", 0.0f));
      const int below = emit(OpKind::kLess, {x, k(-double(lambd))}, flags);
      const int above = emit(OpKind::kGreater, {x, k(lambd)}, flags);
      const int upper = emit(OpKind::kWhere, {above, bin(OpKind::kSub, x, k(bias)), k(0.0)}, t);
      y = emit(OpKind::kWhere, {below, bin(OpKind::kAdd, x, k(bias)), upper}, t);
    } else if (op == "Sinh") {
      // (expm1(x) - expm1(-x)) / 2: no cancellation near 0, where e^x - e^-x loses every digit.
      y = bin(OpKind::kMul, bin(OpKind::kSub, un(OpKind::kExpm1, x), un(OpKind::kExpm1, un(OpKind::kNeg, x))), k(0.5));
    } else if (op == "Cosh") {
      y = bin(OpKind::kMul, bin(OpKind::kAdd, un(OpKind::kExp, x), un(OpKind::kExp, un(OpKind::kNeg, x))), k(0.5));
    } else if (op == "Tan") {
      y = bin(OpKind::kDiv, un(OpKind::kSin, x), un(OpKind::kCos, x));
    } else if (op == "IsNaN") {
      y = emit(OpKind::kNot, {emit(OpKind::kEqual, {x, x}, flags)}, flags);  // only NaN differs from itself
    } else {
      QRT_ASSIGN_OR_RETURN(int64_t positive, attr_int(node, a, "detect_positive", 1));
      QRT_ASSIGN_OR_RETURN(int64_t negative, attr_int(node, a, "detect_negative", 1));
      if (positive && negative) y = emit(OpKind::kEqual, {un(OpKind::kAbs, x), k(INFINITY)}, flags);
      else if (positive) y = emit(OpKind::kEqual, {x, k(INFINITY)}, flags);
      else if (negative) y = emit(OpKind::kEqual, {x, k(-INFINITY)}, flags);
      else y = emit(OpKind::kEqual, {x, k(NAN)}, flags);  // nothing detected: NaN equals nothing
    }
    bind(node, 0, y);
    return true;
  }
  if (op == "PRelu") {
    // x < 0 ? x · slope : x, the slope broadcast to x's shape (unidirectionally).
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int slope, value(node, 1));
    const Type t = type(x);
    if (!t.element.is_float() || !(type(slope).element == t.element)) {
      return error(node, "expects float x and slope of one type, got " + t.to_string() + " and " + type(slope).to_string());
    }
    auto dims = broadcast_shapes(t.dims, type(slope).dims);
    if (!dims.is_ok() || *dims != t.dims) {
      return error(node, "slope " + type(slope).to_string() + " does not broadcast to x " + t.to_string(), ErrorCode::kVerify);
    }
    const int neg = emit(OpKind::kLess, {x, float_scalar(0.0, t.element)}, Type::tensor(t.dims, ElementType::make_int(1)));
    bind(node, 0, emit(OpKind::kWhere, {neg, emit(OpKind::kMul, {x, slope}, t), x}, t));
    return true;
  }
  if (op == "Hardmax") {
    // 1 where the first maximum along the axis is, else 0: argmax compared with the axis'
    // indices. Before opset 13 the input is read as 2-D, [d0 … d(axis-1)] by the rest.
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    if (!t.element.is_float()) return error(node, "expects a float tensor, got " + t.to_string());
    if (!t.has_static_shape()) return error(node, "needs a static shape, got " + t.to_string());
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", opset_ >= 13 ? -1 : 1));
    if (axis < 0) axis += int64_t(t.rank());
    if (axis < 0 || axis >= int64_t(t.rank())) return error(node, "axis out of range", ErrorCode::kVerify);
    int v = x;
    Type work = t;
    if (opset_ < 13) {
      int64_t outer = 1, inner = 1;
      for (size_t d = 0; d < t.rank(); ++d) {
        int64_t& side = int64_t(d) < axis ? outer : inner;
        if (__builtin_mul_overflow(side, t.dims[d], &side)) {
          return error(node, "the input " + t.to_string() + " read as 2-D overflows int64", ErrorCode::kVerify);
        }
      }
      work = Type::tensor({outer, inner}, t.element);
      v = emit(OpKind::kReshape, {x}, work);
      axis = 1;
    }
    const size_t ax = size_t(axis);
    // The axis' indices become an int64 constant of its length: bounded as OneHot's depth
    // (a fuzzed input declared an axis of 251 million elements: 2 GB before any check).
    if (work.dims[ax] > (int64_t(1) << 24)) {
      return error(node, "axis " + std::to_string(axis) + " of " + work.to_string() + " has " +
                             std::to_string(work.dims[ax]) + " elements, over qrt's limit of 2^24 for Hardmax",
                   ErrorCode::kUnsupported);
    }
    std::vector<int64_t> kept = work.dims;
    kept[ax] = 1;
    const int arg = emit(OpKind::kArgMax, {v}, Type::tensor(kept, ElementType::make_int(64)),
                         {{"axis", Attribute::make_int(axis)}, {"keepdims", Attribute::make_int(1)},
                          {"select_last_index", Attribute::make_int(0)}});
    const int hit = emit(OpKind::kEqual, {iota(work.rank(), ax, work.dims[ax]), arg}, Type::tensor(work.dims, ElementType::make_int(1)));
    int y = emit(OpKind::kCast, {hit}, work);
    if (opset_ < 13) y = emit(OpKind::kReshape, {y}, t);
    bind(node, 0, y);
    return true;
  }
  if (op == "OneHot") {
    // values[1] where index (negative: + depth) equals the position along the new axis,
    // values[0] elsewhere; indices out of [-depth, depth) give values[0] everywhere.
    QRT_ASSIGN_OR_RETURN(int idx, value(node, 0));
    const DenseElements* depth_d = constant(node, 1);
    if (!depth_d || depth_d->type.num_elements() != 1) return error(node, "needs depth as a constant scalar");
    const int64_t depth = depth_d->type.element.is_float() ? int64_t(depth_d->float_at(0)) : depth_d->int_at(0);
    if (depth <= 0 || depth > (int64_t(1) << 24)) {
      return error(node, "depth " + std::to_string(depth) + " is outside 1 .. 2^24", ErrorCode::kVerify);
    }
    QRT_ASSIGN_OR_RETURN(int values, value(node, 2));
    const Type tv = type(values);
    if (tv.num_elements() != 2) return error(node, "values must hold [off, on], got " + tv.to_string(), ErrorCode::kVerify);
    const Type ti = type(idx);
    if (!ti.has_static_shape()) return error(node, "needs static index dimensions, got " + ti.to_string());
    if (!ti.element.is_float() && !ti.element.is_integer()) return error(node, "indices must be numbers, got " + ti.to_string());
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", -1));
    const int64_t rank = int64_t(ti.rank()) + 1;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return error(node, "axis out of range", ErrorCode::kVerify);
    const Type i64 = Type::tensor(ti.dims, ElementType::make_int(64));
    if (!(ti.element == i64.element)) idx = emit(OpKind::kCast, {idx}, i64);  // floats truncate, as ONNX casts
    const int zero = constant_of(dense_of_ints(Type::tensor({}, ElementType::make_int(64)), {0}));
    const int minus_depth = constant_of(dense_of_ints(Type::tensor({}, ElementType::make_int(64)), {-depth}));
    const int negative = emit(OpKind::kLess, {idx, zero}, Type::tensor(ti.dims, ElementType::make_int(1)));
    idx = emit(OpKind::kWhere, {negative, emit(OpKind::kSub, {idx, minus_depth}, i64), idx}, i64);
    std::vector<int64_t> unsqueezed = ti.dims, out = ti.dims;
    unsqueezed.insert(unsqueezed.begin() + axis, 1);
    out.insert(out.begin() + axis, depth);
    idx = emit(OpKind::kReshape, {idx}, Type::tensor(unsqueezed, ElementType::make_int(64)));
    const int hit = emit(OpKind::kEqual, {idx, iota(size_t(rank), size_t(axis), depth)}, Type::tensor(out, ElementType::make_int(1)));
    const Type scalar = Type::tensor({}, tv.element);
    const int off = emit(OpKind::kReshape, {slice_axis(emit(OpKind::kReshape, {values}, Type::tensor({2}, tv.element)), 0, 0, 1, 1)}, scalar);
    const int on = emit(OpKind::kReshape, {slice_axis(emit(OpKind::kReshape, {values}, Type::tensor({2}, tv.element)), 0, 1, 2, 1)}, scalar);
    bind(node, 0, emit(OpKind::kWhere, {hit, on, off}, Type::tensor(out, tv.element)));
    return true;
  }
  if (op == "Tile") {
    // x [d0, d1, …] as [1, d0, 1, d1, …], broadcast to [r0, d0, r1, d1, …], then reshaped to
    // [r0·d0, r1·d1, …]: every copy in order, on the data-movement kernels.
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    QRT_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, const_ints(node, 1, "repeats", {}));
    if (repeats.size() != t.rank()) {
      return error(node, "repeats has " + std::to_string(repeats.size()) + " entries for an input of rank " +
                             std::to_string(t.rank()), ErrorCode::kVerify);
    }
    if (!t.has_static_shape()) return error(node, "needs a static input shape, got " + t.to_string());
    std::vector<int64_t> spread, copies, out;
    for (size_t d = 0; d < t.rank(); ++d) {
      if (repeats[d] < 0) return error(node, "repeats[" + std::to_string(d) + "] is negative", ErrorCode::kVerify);
      spread.insert(spread.end(), {1, t.dims[d]});
      copies.insert(copies.end(), {repeats[d], t.dims[d]});
      int64_t extent = 0;
      if (__builtin_mul_overflow(repeats[d], t.dims[d], &extent)) {
        return error(node, "repeats[" + std::to_string(d) + "] = " + std::to_string(repeats[d]) + " times extent " +
                               std::to_string(t.dims[d]) + " overflows int64", ErrorCode::kVerify);
      }
      out.push_back(extent);
    }
    const int s = emit(OpKind::kReshape, {x}, Type::tensor(spread, t.element));
    const int b = emit(OpKind::kBroadcastTo, {s}, Type::tensor(copies, t.element));
    bind(node, 0, emit(OpKind::kReshape, {b}, Type::tensor(out, t.element)));
    return true;
  }
  if (op == "InstanceNormalization") {
    // Per sample and channel, over the spatial dimensions: layer_norm from axis 2 (scale 1,
    // no bias), then · scale[c] + B[c].
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    if (!t.element.is_float() || t.rank() < 3 || !t.has_static_shape()) {
      return error(node, "expects a float tensor [N, C, spatial...] of static shape, got " + t.to_string());
    }
    QRT_ASSIGN_OR_RETURN(int scale, value(node, 1));
    QRT_ASSIGN_OR_RETURN(int bias, value(node, 2));
    const int64_t c = t.dims[1];
    for (int p : {scale, bias}) {
      if (!(type(p).element == t.element) || type(p).dims != std::vector<int64_t>{c}) {
        return error(node, "scale and B must be " + t.element.to_string() + " of shape [" + std::to_string(c) + "], got " +
                               type(p).to_string(), ErrorCode::kVerify);
      }
    }
    QRT_ASSIGN_OR_RETURN(float eps, attr_float(node, a, "epsilon", 1e-5f));
    const std::vector<int64_t> spatial(t.dims.begin() + 2, t.dims.end());
    QRT_ASSIGN_OR_RETURN(DenseElements ones, built_constant(node, Type::tensor(spatial, t.element), "the spatial ones"));
    const uint64_t one = float_kind_bits(1.0, t.element.float_kind);
    const size_t es = element_byte_size(t.element);
    for (size_t i = 0; i < size_t(ones.type.num_elements()); ++i) std::memcpy(ones.bytes.data() + i * es, &one, es);
    const int normalized = emit(OpKind::kLayerNorm, {x, constant_of(ones)}, t,
                                {{"axis", Attribute::make_int(2)}, {"epsilon", Attribute::make_float(double(eps))}});
    const Type per_channel = Type::tensor(along_axis(t.rank() - 1, 0, c), t.element);  // [C, 1, …] against [N, C, …]
    const int s = emit(OpKind::kReshape, {scale}, per_channel), b = emit(OpKind::kReshape, {bias}, per_channel);
    bind(node, 0, emit(OpKind::kAdd, {emit(OpKind::kMul, {normalized, s}, t), b}, t));
    return true;
  }
  if (op == "CumSum") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    QRT_ASSIGN_OR_RETURN(std::vector<int64_t> axis, const_ints(node, 1, "axis", {}));
    if (axis.size() != 1) return error(node, "needs axis as a constant integer scalar", ErrorCode::kVerify);
    int64_t ax = axis[0];
    if (ax < 0) ax += int64_t(t.rank());
    if (ax < 0 || ax >= int64_t(t.rank())) {
      return error(node, "axis " + std::to_string(axis[0]) + " is not a dimension of " + t.to_string(), ErrorCode::kVerify);
    }
    QRT_ASSIGN_OR_RETURN(int64_t exclusive, attr_int(node, a, "exclusive", 0));
    QRT_ASSIGN_OR_RETURN(int64_t reverse, attr_int(node, a, "reverse", 0));
    bind(node, 0, emit(OpKind::kCumSum, {x}, t,
                       {{"axis", Attribute::make_int(ax)}, {"exclusive", Attribute::make_int(exclusive ? 1 : 0)},
                        {"reverse", Attribute::make_int(reverse ? 1 : 0)}}));
    return true;
  }
  if (op == "TopK") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    int64_t k = 0;
    if (opset_ >= 10) {
      QRT_ASSIGN_OR_RETURN(std::vector<int64_t> ks, const_ints(node, 1, "K", {}));
      if (ks.size() != 1) return error(node, "needs K as a constant with one element", ErrorCode::kVerify);
      k = ks[0];
    } else {
      QRT_ASSIGN_OR_RETURN(k, attr_int(node, a, "k", -1));
    }
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", -1));
    QRT_ASSIGN_OR_RETURN(int64_t largest, attr_int(node, a, "largest", 1));
    if (axis < 0) axis += int64_t(t.rank());
    if (axis < 0 || axis >= int64_t(t.rank())) return error(node, "axis out of range", ErrorCode::kVerify);
    const int64_t n = t.dims[size_t(axis)];
    if (n < 0) return error(node, "needs a static size along axis " + std::to_string(axis) + ", got " + t.to_string());
    if (k < 0 || k > n) {
      return error(node, "K = " + std::to_string(k) + " is outside 0 .. " + std::to_string(n) + " (the size of axis " +
                             std::to_string(axis) + ")", ErrorCode::kVerify);
    }
    std::vector<int64_t> dims = t.dims;
    dims[size_t(axis)] = k;
    // sorted = 0 lets ONNX return any order: qrt's is always best first.
    const int idx = emit(OpKind::kTopK, {x}, Type::tensor(dims, ElementType::make_int(64)),
                         {{"axis", Attribute::make_int(axis)}, {"k", Attribute::make_int(k)},
                          {"largest", Attribute::make_int(largest ? 1 : 0)}});
    bind(node, 0, emit(OpKind::kGatherElements, {x, idx}, Type::tensor(dims, t.element), {{"axis", Attribute::make_int(axis)}}));
    bind(node, 1, idx);
    return true;
  }
  if (op == "ScatterND") {
    QRT_ASSIGN_OR_RETURN(int data, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int idx, value(node, 1));
    QRT_ASSIGN_OR_RETURN(int upd, value(node, 2));
    QRT_ASSIGN_OR_RETURN(std::string reduction, attr_string(node, a, "reduction", "none"));
    if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min") {
      return error(node, "unknown reduction '" + reduction + "'", ErrorCode::kVerify);
    }
    bind(node, 0, emit(OpKind::kScatterNd, {data, idx, upd}, type(data), {{"reduction", Attribute::make_string(reduction)}}));
    return true;
  }
  if (op == "Einsum") {
    QRT_RETURN_IF_ERROR(einsum(node, a));
    return true;
  }
  if (op == "GatherND") {
    QRT_ASSIGN_OR_RETURN(int data, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int idx, value(node, 1));
    const Type td = type(data), ti = type(idx);
    QRT_ASSIGN_OR_RETURN(int64_t b, attr_int(node, a, "batch_dims", 0));
    if (ti.rank() == 0 || b < 0 || b >= int64_t(ti.rank()) || b >= int64_t(td.rank())) {
      return error(node, "batch_dims " + std::to_string(b) + " must be below the ranks of data " + td.to_string() +
                             " and indices " + ti.to_string(), ErrorCode::kVerify);
    }
    const int64_t k = ti.dims.back();
    if (k < 1 || k > int64_t(td.rank()) - b) {
      return error(node, "the indices' last dimension must be static, 1 to " + std::to_string(int64_t(td.rank()) - b) +
                             ", got " + ti.to_string(), ErrorCode::kVerify);
    }
    const Type result = Type::tensor(gather_nd_result_dims(td.dims, ti.dims, size_t(b)), td.element);
    bind(node, 0, emit(OpKind::kGatherNd, {data, idx}, result, {{"batch_dims", Attribute::make_int(b)}}));
    return true;
  }
  if (op == "ScatterElements" || op == "Scatter") {
    // scatter_nd with full index tuples: every coordinate of an index's position (constant
    // grids; the shapes are static), its value along `axis`, concatenated along a new last axis.
    QRT_ASSIGN_OR_RETURN(int data, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int idx, value(node, 1));
    QRT_ASSIGN_OR_RETURN(int upd, value(node, 2));
    const Type td = type(data), ti = type(idx);
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 0));
    QRT_ASSIGN_OR_RETURN(std::string reduction, attr_string(node, a, "reduction", "none"));
    if (axis < 0) axis += int64_t(td.rank());
    if (axis < 0 || axis >= int64_t(td.rank())) return error(node, "axis out of range", ErrorCode::kVerify);
    if (!ti.has_static_shape() || ti.rank() != td.rank() || !ti.element.is_integer()) {
      return error(node, "needs integer indices of data's rank with a static shape, got " + ti.to_string(), ErrorCode::kVerify);
    }
    if (type(upd).dims != ti.dims) {
      return error(node, "updates " + type(upd).to_string() + " must have the indices' shape " + ti.to_string(), ErrorCode::kVerify);
    }
    const Type i64 = Type::tensor(ti.dims, ElementType::make_int(64));
    if (!(ti.element == i64.element)) idx = emit(OpKind::kCast, {idx}, i64);
    std::vector<int64_t> column_dims = ti.dims;
    column_dims.push_back(1);
    const Type column = Type::tensor(column_dims, ElementType::make_int(64));
    std::vector<int> parts;
    for (size_t d = 0; d < ti.rank(); ++d) {
      if (int64_t(d) == axis) {
        parts.push_back(emit(OpKind::kReshape, {idx}, column));
        continue;
      }
      QRT_ASSIGN_OR_RETURN(DenseElements grid, built_constant(node, column, "the index grid"));
      std::vector<int64_t> at(ti.rank(), 0);
      for (size_t i = 0; i < size_t(grid.type.num_elements()); ++i) {
        grid.set_int(i, at[d]);
        for (size_t k = ti.rank(); k-- > 0;) {
          if (++at[k] < ti.dims[k]) break;
          at[k] = 0;
        }
      }
      parts.push_back(constant_of(grid));
    }
    const int tuples = concat_axis(parts, ti.rank());
    bind(node, 0, emit(OpKind::kScatterNd, {data, tuples, upd}, td, {{"reduction", Attribute::make_string(reduction)}}));
    return true;
  }
  if (op == "LRN") {
    // x / (bias + alpha / size · Σ x²)^beta, the sum over a window of channels as a 1x1
    // convolution of x² with a banded 0/1 filter (the f32 convolution kernels run it).
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    if (!t.element.is_float() || t.rank() != 4 || t.dims[1] < 0) {
      return error(node, "expects a float NCHW tensor with a static channel count, got " + t.to_string());
    }
    QRT_ASSIGN_OR_RETURN(int64_t size, attr_int(node, a, "size", 0));
    QRT_ASSIGN_OR_RETURN(float alpha, attr_float(node, a, "alpha", 1e-4f));
    QRT_ASSIGN_OR_RETURN(float beta, attr_float(node, a, "beta", 0.75f));
    QRT_ASSIGN_OR_RETURN(float bias, attr_float(node, a, "bias", 1.0f));
    const int64_t c = t.dims[1];
    if (size < 1) return error(node, "size must be at least 1, got " + std::to_string(size), ErrorCode::kVerify);
    if (c > 4096) return error(node, "a " + std::to_string(c) + "-channel window filter is above qrt's limit of 4096 channels");
    DenseElements band = DenseElements::zeros(Type::tensor({c, c, 1, 1}, t.element));
    const uint64_t one = float_kind_bits(1.0, t.element.float_kind);
    const size_t es = element_byte_size(t.element);
    for (int64_t o = 0; o < c; ++o) {
      for (int64_t i = std::max<int64_t>(0, o - (size - 1) / 2); i <= std::min(c - 1, o + size / 2); ++i) {
        std::memcpy(band.bytes.data() + size_t(o * c + i) * es, &one, es);
      }
    }
    const int squares = emit(OpKind::kMul, {x, x}, t);
    const int sums = emit(OpKind::kConv2d, {squares, constant_of(band)}, t,
                          {{"dilations", Attribute::make_int_array({1, 1})}, {"groups", Attribute::make_int(1)},
                           {"layout", Attribute::make_string("NCHW")}, {"pads", Attribute::make_int_array({0, 0, 0, 0})},
                           {"strides", Attribute::make_int_array({1, 1})}});
    auto k = [&](double v) { return float_scalar(v, t.element); };
    const int scaled = emit(OpKind::kAdd, {k(bias), emit(OpKind::kMul, {sums, k(double(alpha) / double(size))}, t)}, t);
    bind(node, 0, emit(OpKind::kDiv, {x, emit(OpKind::kPow, {scaled, k(beta)}, t)}, t));
    return true;
  }
  if (op == "EyeLike") {
    // A constant: ones on the k-th diagonal of the input's (static, 2-D) shape.
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    if (t.rank() != 2 || !t.has_static_shape()) return error(node, "needs a 2-D input of static shape, got " + t.to_string());
    QRT_ASSIGN_OR_RETURN(int64_t k, attr_int(node, a, "k", 0));
    ElementType e = t.element;
    if (a.count("dtype")) {
      QRT_ASSIGN_OR_RETURN(int64_t dtype, attr_int(node, a, "dtype", 0));
      QRT_ASSIGN_OR_RETURN(e, element_type_of(int(dtype)));
    }
    if (!e.is_float() && !e.is_integer()) return error(node, "makes float or integer tensors, not " + e.to_string());
    QRT_ASSIGN_OR_RETURN(DenseElements eye, built_constant(node, Type::tensor(t.dims, e), "the identity"));
    const uint64_t one = e.is_float() ? float_kind_bits(1.0, e.float_kind) : 1;
    const size_t es = element_byte_size(e);
    for (int64_t i = 0; i < t.dims[0]; ++i) {
      const int64_t j = i + k;
      if (j < 0 || j >= t.dims[1]) continue;
      const size_t at = size_t(i * t.dims[1] + j);
      // Integers through set_int, which packs 2-4-bit elements two per byte (an int4 EyeLike
      // once wrote a byte per element: fuzz_load_onnx -seed=57).
      if (e.is_integer()) eye.set_int(at, 1);
      else std::memcpy(eye.bytes.data() + at * es, &one, es);
    }
    bind(node, 0, constant_of(eye));
    return true;
  }
  if (op == "Mod") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int y, value(node, 1));
    QRT_ASSIGN_OR_RETURN(int64_t fmod, attr_int(node, a, "fmod", 0));
    const Type ta = type(x), tb = type(y);
    if (!(ta.element == tb.element)) {
      return error(node, "operands must have one element type, got " + ta.to_string() + " and " + tb.to_string(), ErrorCode::kVerify);
    }
    if (ta.element.is_float() && fmod == 0) {
      return error(node, "float operands need fmod = 1 (ONNX leaves fmod = 0 undefined for floats)", ErrorCode::kVerify);
    }
    auto dims = broadcast_shapes(ta.dims, tb.dims);
    if (!dims.is_ok()) return error(node, dims.status().message(), ErrorCode::kVerify);
    bind(node, 0, emit(OpKind::kMod, {x, y}, Type::tensor(*dims, ta.element), {{"fmod", Attribute::make_int(fmod ? 1 : 0)}}));
    return true;
  }
  return false;
}

}  // namespace qrt::importers::onnx_detail
