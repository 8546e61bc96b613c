// qrt — ONNX data-movement and logic ops the importer composes from qrt's own (Pad,
// DepthToSpace, SpaceToDepth, Dropout at inference, And / Or / Xor, GreaterOrEqual /
// LessOrEqual, CastLike). Each composition
// moves or selects elements only, so it is exact for every element type it takes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "importers/onnx_importer_impl.h"
#include "importers/onnx_tensors.h"
#include "ir/ops.h"

namespace qrt::importers::onnx_detail {

namespace {

Attribute ints(const std::vector<int64_t>& v) { return Attribute::make_int_array(v); }

}  // namespace

int Importer::slice_axis(int x, size_t axis, int64_t start, int64_t end, int64_t step) {
  const Type t = type(x);
  std::vector<int64_t> starts(t.rank(), 0), ends(t.rank(), std::numeric_limits<int64_t>::max()), steps(t.rank(), 1);
  starts[axis] = start, ends[axis] = end, steps[axis] = step;
  std::vector<int64_t> dims = t.dims;
  dims[axis] = slice_extent(t.dims[axis], start, end, step);
  return emit(OpKind::kSlice, {x}, Type::tensor(dims, t.element),
              {{"ends", ints(ends)}, {"starts", ints(starts)}, {"steps", ints(steps)}});
}

int Importer::concat_axis(const std::vector<int>& parts, size_t axis) {
  const Type t = type(parts[0]);
  std::vector<int64_t> dims = t.dims;
  dims[axis] = 0;
  for (int p : parts) dims[axis] += type(p).dims[axis];
  return emit(OpKind::kConcat, parts, Type::tensor(dims, t.element), {{"axis", Attribute::make_int(int64_t(axis))}});
}

Status Importer::pad(const onnx::NodeProto& node, const Attrs& a) {
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  const Type tx = type(x);
  const size_t rank = tx.rank();
  QRT_ASSIGN_OR_RETURN(std::string mode, attr_string(node, a, "mode", "constant"));
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap") {
    return error(node, "mode '" + mode + "' is not supported (constant, edge, reflect, wrap)");
  }
  std::vector<int64_t> pads;
  double fill = 0.0;
  if (opset_ < 11) {
    QRT_ASSIGN_OR_RETURN(pads, attr_ints(node, a, "pads", {}));
    QRT_ASSIGN_OR_RETURN(float v, attr_float(node, a, "value", 0.0f));
    fill = double(v);
  } else {
    QRT_ASSIGN_OR_RETURN(pads, const_ints(node, 1, "pads", {}));
    if (node.input_size() > 2 && !node.input(2).empty()) {
      const DenseElements* c = constant(node, 2);
      if (!c || c->type.num_elements() != 1) return error(node, "constant_value (input 2) must be a constant scalar");
      fill = c->type.element.is_float() ? c->float_at(0) : double(c->int_at(0));
    }
    if (node.input_size() > 3 && !node.input(3).empty()) {
      // axes (opset 18): the pads name only these axes.
      QRT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, const_ints(node, 3, "axes", {}));
      if (pads.size() != 2 * axes.size()) return error(node, "pads must hold two entries per axis", ErrorCode::kVerify);
      std::vector<int64_t> full(2 * rank, 0);
      for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t ax = axes[i] < 0 ? axes[i] + int64_t(rank) : axes[i];
        if (ax < 0 || ax >= int64_t(rank)) return error(node, "axis " + std::to_string(axes[i]) + " is out of range", ErrorCode::kVerify);
        full[size_t(ax)] = pads[i], full[size_t(ax) + rank] = pads[i + axes.size()];
      }
      pads = full;
    }
  }
  if (pads.size() != 2 * rank) {
    return error(node, "pads has " + std::to_string(pads.size()) + " entries, the input " + std::to_string(rank) +
                           " dimensions", ErrorCode::kVerify);
  }
  for (size_t d = 0; d < rank; ++d) {
    if ((pads[d] != 0 || pads[d + rank] != 0) && tx.dims[d] < 0) return error(node, "pads a dynamic dimension");
    if (pads[d] < -(int64_t(1) << 48) || pads[d] > (int64_t(1) << 48) || pads[d + rank] < -(int64_t(1) << 48) ||
        pads[d + rank] > (int64_t(1) << 48)) {
      return error(node, "a pad beyond qrt's limit of 2^48", ErrorCode::kVerify);
    }
  }
  // Negative pads crop first (a slice per axis).
  for (size_t d = 0; d < rank; ++d) {
    const int64_t b = pads[d], e = pads[d + rank];
    if (b >= 0 && e >= 0) continue;
    const int64_t n = type(x).dims[d], start = b < 0 ? -b : 0, end = e < 0 ? n + e : n;
    if (start >= end) return error(node, "pads crop dimension " + std::to_string(d) + " to nothing", ErrorCode::kVerify);
    x = slice_axis(x, d, start, end, 1);
    pads[d] = std::max<int64_t>(b, 0), pads[d + rank] = std::max<int64_t>(e, 0);
  }
  if (mode == "constant") {
    const ElementType& el = tx.element;
    if (!el.is_float() && !el.is_uniform()) {
      return error(node, "constant padding of " + el.to_string() + " values is not supported (floats and quantized values)");
    }
    if (std::isnan(fill)) return error(node, "a NaN constant_value is not supported");
    bool any = false;
    std::vector<int64_t> dims = type(x).dims;
    for (size_t d = 0; d < rank; ++d) {
      dims[d] += pads[d] + pads[d + rank];
      any = any || pads[d] != 0 || pads[d + rank] != 0;
    }
    if (!any) {
      bind(node, 0, x);
      return Status::ok();
    }
    bind(node, 0, emit(OpKind::kPad, {x}, Type::tensor(dims, el), {{"pads", ints(pads)}, {"value", Attribute::make_float(fill)}}));
    return Status::ok();
  }
  // edge / reflect / wrap: per axis in turn (as numpy's pad), the border slices concatenated
  // around the values. Integers of 8, 16 or 32 bits move as a quantized type of scale 1
  // (quant.scast in and out: the same bits), which the concatenation takes.
  const ElementType el = type(x).element;
  const bool as_stored = el.is_integer();
  if (as_stored) {
    if (el.int_width != 8 && el.int_width != 16 && el.int_width != 32) {
      return error(node, mode + " padding of " + el.to_string() + " values is not supported (8-, 16- and 32-bit integers and floats are)");
    }
    const ElementType q = ElementType::make_uniform(QuantStorage::full_range(el.int_width, el.int_sign != Signedness::kUnsigned),
                                                    FloatKind::kF32, 1.0, 0);
    x = emit(OpKind::kSCast, {x}, Type::tensor(type(x).dims, q));
  }
  for (size_t d = 0; d < rank; ++d) {
    const int64_t b = pads[d], e = pads[d + rank], n = type(x).dims[d];
    if (b == 0 && e == 0) continue;
    if (mode == "reflect" && (b >= n || e >= n)) {
      return error(node, "reflect pads of " + std::to_string(std::max(b, e)) + " need a dimension larger than " +
                             std::to_string(n), ErrorCode::kVerify);
    }
    if (mode == "wrap" && (b > n || e > n)) {
      return error(node, "wrap pads beyond the dimension's " + std::to_string(n) + " elements are not supported");
    }
    std::vector<int> parts;
    auto edge = [&](int64_t at, int64_t count) {
      const int one = slice_axis(x, d, at, at + 1, 1);
      std::vector<int64_t> dims = type(one).dims;
      dims[d] = count;
      return emit(OpKind::kBroadcastTo, {one}, Type::tensor(dims, type(one).element));
    };
    if (b > 0) {
      // Indices b, b - 1, ..., 1 (reflect); n - b, ..., n - 1 (wrap); 0 repeated (edge).
      parts.push_back(mode == "edge" ? edge(0, b) : mode == "reflect" ? slice_axis(x, d, b, 0, -1) : slice_axis(x, d, n - b, n, 1));
    }
    parts.push_back(x);
    if (e > 0) {
      // Indices n - 2, ..., n - 1 - e (reflect; the end counted from the back so that it may
      // reach before index 0); 0, ..., e - 1 (wrap); n - 1 repeated (edge).
      parts.push_back(mode == "edge"      ? edge(n - 1, e)
                      : mode == "reflect" ? slice_axis(x, d, n - 2, n - 2 - e - n, -1)
                                          : slice_axis(x, d, 0, e, 1));
    }
    x = concat_axis(parts, d);
  }
  if (as_stored) x = emit(OpKind::kSCast, {x}, Type::tensor(type(x).dims, el));
  bind(node, 0, x);
  return Status::ok();
}

Result<bool> Importer::layout_op(const onnx::NodeProto& node, const Attrs& a) {
  const std::string& op = node.op_type();
  if (op == "Pad") {
    QRT_RETURN_IF_ERROR(pad(node, a));
    return true;
  }
  if (op == "GridSample") {
    // qrt.grid_sample with opset 20's mode names (opset 16 called them bilinear and bicubic).
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int grid, value(node, 1));
    const Type tx = type(x), tg = type(grid);
    QRT_ASSIGN_OR_RETURN(std::string mode, attr_string(node, a, "mode", opset_ >= 20 ? "linear" : "bilinear"));
    QRT_ASSIGN_OR_RETURN(std::string padding, attr_string(node, a, "padding_mode", "zeros"));
    QRT_ASSIGN_OR_RETURN(int64_t align, attr_int(node, a, "align_corners", 0));
    if (mode == "bilinear") mode = "linear";
    if (mode == "bicubic") mode = "cubic";
    if (mode != "linear" && mode != "nearest" && mode != "cubic") {
      return error(node, "mode '" + mode + "' is not linear, nearest or cubic", ErrorCode::kVerify);
    }
    if (tx.rank() < 3 || tg.rank() != tx.rank()) {
      return error(node, "needs X [N, C, spatial...] and a grid of X's rank, got " + tx.to_string() + " and " + tg.to_string(),
                   ErrorCode::kVerify);
    }
    std::vector<int64_t> dims = {tx.dims[0], tx.dims[1]};
    dims.insert(dims.end(), tg.dims.begin() + 1, tg.dims.end() - 1);
    bind(node, 0, emit(OpKind::kGridSample, {x, grid}, Type::tensor(dims, tx.element),
                       {{"align_corners", Attribute::make_int(align)},
                        {"mode", Attribute::make_string(mode)},
                        {"padding_mode", Attribute::make_string(padding)}}));
    return true;
  }
  if (op == "DepthToSpace" || op == "SpaceToDepth") {
    // A reshape to 6-D, a transpose and a reshape back (NCHW), as the operator defines them.
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    QRT_ASSIGN_OR_RETURN(int64_t b, attr_int(node, a, "blocksize", 0));
    QRT_ASSIGN_OR_RETURN(std::string mode, attr_string(node, a, "mode", "DCR"));
    if (t.rank() != 4 || !t.has_static_shape()) return error(node, "needs a static 4-D (NCHW) input, got " + t.to_string());
    if (b < 1 || b > 4096) return error(node, "blocksize " + std::to_string(b) + " is not in [1, 4096]", ErrorCode::kVerify);
    const int64_t n = t.dims[0], c = t.dims[1], h = t.dims[2], w = t.dims[3];
    std::vector<int64_t> six, perm, out;
    if (op == "DepthToSpace") {
      if (mode != "DCR" && mode != "CRD") return error(node, "mode '" + mode + "' is not supported (DCR, CRD)");
      if (c % (b * b) != 0) return error(node, "channels " + std::to_string(c) + " are not a multiple of blocksize²", ErrorCode::kVerify);
      six = mode == "DCR" ? std::vector<int64_t>{n, b, b, c / (b * b), h, w} : std::vector<int64_t>{n, c / (b * b), b, b, h, w};
      perm = mode == "DCR" ? std::vector<int64_t>{0, 3, 4, 1, 5, 2} : std::vector<int64_t>{0, 1, 4, 2, 5, 3};
      out = {n, c / (b * b), h * b, w * b};
    } else {
      if (h % b != 0 || w % b != 0) return error(node, "spatial sizes are not multiples of the blocksize", ErrorCode::kVerify);
      six = {n, c, h / b, b, w / b, b};
      perm = {0, 3, 5, 1, 2, 4};
      out = {n, c * b * b, h / b, w / b};
    }
    const int r6 = emit(OpKind::kReshape, {x}, Type::tensor(six, t.element));
    std::vector<int64_t> moved(6);
    for (size_t i = 0; i < 6; ++i) moved[i] = six[size_t(perm[i])];
    const int tr = emit(OpKind::kTranspose, {r6}, Type::tensor(moved, t.element), {{"perm", ints(perm)}});
    bind(node, 0, emit(OpKind::kReshape, {tr}, Type::tensor(out, t.element)));
    return true;
  }
  if (op == "Dropout") {
    // Inference: the identity. Training mode must be absent or a constant false; the mask
    // output, if used, is all true.
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    if (node.input_size() > 2 && !node.input(2).empty()) {
      const DenseElements* training = constant(node, 2);
      if (!training || training->type.num_elements() != 1) return error(node, "training_mode must be a constant");
      if (training->int_at(0) != 0) return error(node, "training mode (random dropout) is not supported");
    }
    bind(node, 0, x);
    if (node.output_size() > 1 && !node.output(1).empty()) {
      const Type& t = type(x);
      if (!t.has_static_shape()) return error(node, "the mask output of a dynamic shape is not supported");
      const Type mask_type = Type::tensor(t.dims, ElementType::make_int(1));
      QRT_ASSIGN_OR_RETURN(DenseElements mask, built_constant(node, mask_type, "the mask output"));
      for (size_t i = 0; i < size_t(t.num_elements()); ++i) mask.set_int(i, 1);
      bind(node, 1, emit(OpKind::kConstant, {}, mask.type, {{"value", Attribute::make_dense(mask)}}));
    }
    return true;
  }
  if (op == "And" || op == "Or" || op == "Xor") {
    // Selections on i1: a and b = a ? b : a; a or b = a ? a : b; a xor b = a ? not b : b.
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int y, value(node, 1));
    const ElementType i1 = ElementType::make_int(1);
    if (!(type(x).element == i1) || !(type(y).element == i1)) {
      return error(node, "takes bool tensors, got " + type(x).to_string() + " and " + type(y).to_string());
    }
    auto dims = broadcast_shapes(type(x).dims, type(y).dims);
    if (!dims.is_ok()) return error(node, dims.status().message(), ErrorCode::kVerify);
    const Type out = Type::tensor(*dims, i1);
    if (op == "And") bind(node, 0, emit(OpKind::kWhere, {x, y, x}, out));
    if (op == "Or") bind(node, 0, emit(OpKind::kWhere, {x, x, y}, out));
    if (op == "Xor") bind(node, 0, emit(OpKind::kWhere, {x, emit(OpKind::kNot, {y}, type(y)), y}, out));
    return true;
  }
  if (op == "GreaterOrEqual" || op == "LessOrEqual") {
    // a >= b as (a > b) or (a == b): false where either is NaN, as ONNX defines it.
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int y, value(node, 1));
    if (!(type(x).element == type(y).element)) {
      return error(node, "operands of different types: " + type(x).to_string() + " and " + type(y).to_string());
    }
    auto dims = broadcast_shapes(type(x).dims, type(y).dims);
    if (!dims.is_ok()) return error(node, dims.status().message(), ErrorCode::kVerify);
    const Type out = Type::tensor(*dims, ElementType::make_int(1));
    const int strict = emit(op == "GreaterOrEqual" ? OpKind::kGreater : OpKind::kLess, {x, y}, out);
    bind(node, 0, emit(OpKind::kWhere, {strict, strict, emit(OpKind::kEqual, {x, y}, out)}, out));
    return true;
  }
  if (op == "CastLike") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int like, value(node, 1));
    const ElementType& to = type(like).element;
    if (!to.is_float() && !to.is_integer()) return error(node, "casts to " + to.to_string() + " are not supported");
    bind(node, 0, to == type(x).element ? x : emit(OpKind::kCast, {x}, Type::tensor(type(x).dims, to)));
    return true;
  }
  return false;
}

}  // namespace qrt::importers::onnx_detail
