// qrt — the reference kernels of the ops along axes (ir/ops_math.cpp): reduce_sum / max / min
// / prod, argmax / argmin, topk and cumsum, scatter_nd, which writes slices at index tuples,
// and gather_nd, which reads them. Floats combine in the element's precision or in double as each op's entry in
// docs/numerics.md says; integers in int64 wrapped to the element width.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ir/nn_params.h"
#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/ref/reference_util.h"

namespace qrt::ref_detail {

namespace {

// argmax / argmin along one axis: per output position, the first (or, with select_last_index,
// the last) index of the extreme value; a NaN wins over every number (numpy's rule for both).
// Quantized values compare by stored value (dequantization is monotonic).
Result<Tensor> eval_arg_reduce(const Op& op, const Tensor& x, const Type& rt) {
  const size_t axis = size_t(op.attr("axis")->i);
  const bool keepdims = !op.attr("keepdims") || op.attr("keepdims")->i != 0;
  const bool last = op.attr("select_last_index") && op.attr("select_last_index")->i != 0;
  const bool is_max = op.kind == OpKind::kArgMax;
  std::vector<bool> reduced(x.type.dims.size(), false);
  reduced[axis] = true;
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, reduction_dims(x.type.dims, reduced, keepdims)));
  Tensor y = make_result(rt, reduction_dims(x.type.dims, reduced, keepdims));
  const int64_t len = x.type.dims[axis];
  if (len == 0) return op_error(op, "the reduced dimension is empty: no index to return");
  // Products of the dimensions around the axis (either may be 0: nothing to compute).
  size_t inner = 1, outer = 1;
  for (size_t d = axis + 1; d < x.type.dims.size(); ++d) inner *= size_t(x.type.dims[d]);
  for (size_t d = 0; d < axis; ++d) outer *= size_t(x.type.dims[d]);
  const bool floats = x.type.element.is_float();
  for (size_t o = 0; o < outer; ++o) {
    for (size_t j = 0; j < inner; ++j) {
      int64_t best = 0;
      auto at = [&](int64_t k) { return (o * size_t(len) + size_t(k)) * inner + j; };
      for (int64_t k = 1; k < len; ++k) {
        bool better;
        if (floats) {
          const double v = x.float_at(at(k)), b = x.float_at(at(best));
          if (std::isnan(b)) {
            better = last && std::isnan(v);
          } else if (std::isnan(v)) {
            better = true;
          } else {
            better = is_max ? (v > b || (last && v == b)) : (v < b || (last && v == b));
          }
        } else {
          const int64_t v = x.int_at(at(k)), b = x.int_at(at(best));
          better = is_max ? (v > b || (last && v == b)) : (v < b || (last && v == b));
        }
        if (better) best = k;
      }
      y.set_int(o * inner + j, best);
    }
  }
  return y;
}

Result<Tensor> eval_reduce(const Op& op, const Tensor& x, const Type& rt) {
  const std::vector<int64_t> axes = ints_of(op.attr("axes"));
  const bool keepdims = op.attr("keepdims") && op.attr("keepdims")->i != 0;
  std::vector<bool> reduced(x.type.dims.size(), false);
  for (int64_t a : axes) reduced[size_t(a)] = true;
  const std::vector<int64_t> kept = reduction_dims(x.type.dims, reduced, true);
  const std::vector<int64_t> out_dims = reduction_dims(x.type.dims, reduced, keepdims);
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, out_dims));
  Tensor y = make_result(rt, out_dims);
  const size_t count = size_t(y.num_elements());
  // Sum, max, min or product: each input element combines into the output element it
  // reduces to, in row-major order; floats in double (f32 operands rounded to float first),
  // integers in 64 bits, sums and products wrapping.
  const OpKind kind = op.kind;
  const bool ints = rt.element.is_integer();
  const double init = kind == OpKind::kReduceMax ? -INFINITY : kind == OpKind::kReduceMin ? INFINITY
                      : kind == OpKind::kReduceProd ? 1.0 : 0.0;
  const int64_t iinit = kind == OpKind::kReduceMax   ? std::numeric_limits<int64_t>::min()
                        : kind == OpKind::kReduceMin ? std::numeric_limits<int64_t>::max()
                        : kind == OpKind::kReduceProd ? 1 : 0;
  std::vector<double> acc(count, init);
  std::vector<int64_t> iacc(count, iinit);
  std::vector<bool> nan(count, false);
  const auto out_strides = broadcast_strides(kept, x.type.dims);
  std::vector<int64_t> idx(x.type.dims.size(), 0);
  size_t o = 0;
  for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
    if (ints) {
      const int64_t v = x.int_at(i);
      switch (kind) {
        case OpKind::kReduceMax: iacc[o] = std::max(iacc[o], v); break;
        case OpKind::kReduceMin: iacc[o] = std::min(iacc[o], v); break;
        case OpKind::kReduceProd: iacc[o] = int64_t(uint64_t(iacc[o]) * uint64_t(v)); break;
        default: iacc[o] = int64_t(uint64_t(iacc[o]) + uint64_t(v)); break;
      }
    } else {
      const double v = is_f64(rt.element) ? x.float_at(i) : double(float(x.float_at(i)));
      if (std::isnan(v)) nan[o] = true;
      switch (kind) {
        case OpKind::kReduceMax: acc[o] = std::max(acc[o], v); break;
        case OpKind::kReduceMin: acc[o] = std::min(acc[o], v); break;
        case OpKind::kReduceProd: acc[o] = acc[o] * v; break;
        default: acc[o] = acc[o] + v; break;
      }
    }
    for (size_t k = idx.size(); k-- > 0;) {
      ++idx[k];
      o += out_strides[k];
      if (idx[k] < x.type.dims[k]) break;
      o -= out_strides[k] * size_t(x.type.dims[k]);
      idx[k] = 0;
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (ints) {
      y.set_int(i, iacc[i]);
    } else {
      y.set_float(i, nan[i] ? NAN : acc[i]);
    }
  }
  return y;
}

// The k best indices of every line along the axis (select_topk on the values: floats in
// double, integers and quantized stored values in 64 bits; either keeps their order).
Result<Tensor> eval_topk(const Op& op, const Tensor& x, const Type& rt) {
  const size_t axis = size_t(op.attr("axis")->i);
  const int64_t k = op.attr("k")->i;
  const bool largest = !op.attr("largest") || op.attr("largest")->i != 0;
  std::vector<int64_t> dims = x.type.dims;
  if (k > dims[axis]) {
    return op_error(op, "k = " + std::to_string(k) + " exceeds dimension " + std::to_string(axis) + " of size " +
                            std::to_string(dims[axis]));
  }
  dims[axis] = k;
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  size_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= size_t(x.type.dims[d]);
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= size_t(dims[d]);
  const int64_t n = x.type.dims[axis];
  std::vector<double> line(static_cast<size_t>(n));
  std::vector<int64_t> iline(static_cast<size_t>(n)), best(static_cast<size_t>(k)), scratch;
  const bool ints = !x.type.element.is_float();
  for (size_t o = 0; o < outer; ++o) {
    for (size_t j = 0; j < inner; ++j) {
      for (int64_t i = 0; i < n; ++i) {
        const size_t at = (o * size_t(n) + size_t(i)) * inner + j;
        if (ints) iline[size_t(i)] = x.int_at(at);
        else line[size_t(i)] = x.float_at(at);
      }
      if (ints) select_topk(iline.data(), n, 1, k, largest, best.data(), 1, scratch);
      else select_topk(line.data(), n, 1, k, largest, best.data(), 1, scratch);
      for (int64_t i = 0; i < k; ++i) y.set_int((o * size_t(k) + size_t(i)) * inner + j, best[size_t(i)]);
    }
  }
  return y;
}

// Running sums along the axis, in order (from the end with reverse): f64 in double, integers
// in 64 bits (wrapping), other floats in f32, each output rounded to the element type.
Result<Tensor> eval_cumsum(const Op& op, const Tensor& x, const Type& rt) {
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, x.type.dims));
  Tensor y = make_result(rt, x.type.dims);
  const size_t axis = size_t(op.attr("axis")->i);
  const bool exclusive = op.attr("exclusive") && op.attr("exclusive")->i != 0;
  const bool reverse = op.attr("reverse") && op.attr("reverse")->i != 0;
  const auto& d = x.type.dims;
  size_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= size_t(d[k]);
  for (size_t k = axis + 1; k < d.size(); ++k) inner *= size_t(d[k]);
  const size_t len = size_t(d[axis]);
  const bool ints = rt.element.is_integer(), wide = is_f64(rt.element);
  for (size_t o = 0; o < outer; ++o) {
    for (size_t j = 0; j < inner; ++j) {
      int64_t iacc = 0;
      double dacc = 0;
      float facc = 0;
      for (size_t s = 0; s < len; ++s) {
        const size_t i = (o * len + (reverse ? len - 1 - s : s)) * inner + j;
        if (ints) {
          const int64_t v = x.int_at(i);
          if (!exclusive) iacc = int64_t(uint64_t(iacc) + uint64_t(v));
          y.set_int(i, iacc);
          if (exclusive) iacc = int64_t(uint64_t(iacc) + uint64_t(v));
        } else if (wide) {
          const double v = x.float_at(i);
          if (!exclusive) dacc += v;
          y.set_float(i, dacc);
          if (exclusive) dacc += v;
        } else {
          const float v = float(x.float_at(i));
          if (!exclusive) facc += v;
          y.set_float(i, double(facc));
          if (exclusive) facc += v;
        }
      }
    }
  }
  return y;
}

// A copy of data with each slice of updates written at (or combined into) the slice its index
// tuple names, tuples in row-major order (a later duplicate overwrites with "none"). Floats
// combine in the element type's precision (f32 arithmetic for f16/bf16, rounded), max and min
// propagate NaN; integers wrap.
Result<Tensor> eval_scatter_nd(const Op& op, const Tensor& data, const Tensor& idx, const Tensor& upd, const Type& rt) {
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, data.type.dims));
  Tensor y = data;
  y.type = rt;
  y.type.dims = data.type.dims;
  const std::string reduction = op.attr("reduction") ? op.attr("reduction")->s : "none";
  const auto& dd = data.type.dims;
  const size_t q = size_t(idx.type.dims.back());
  size_t slice = 1;
  for (size_t d = q; d < dd.size(); ++d) slice *= size_t(dd[d]);
  const size_t tuples = q == 0 ? 0 : size_t(idx.num_elements()) / q;
  // Dimensions left dynamic must still agree at run time: updates hold one slice per tuple.
  if (size_t(upd.num_elements()) != tuples * slice) {
    return op_error(op, "updates hold " + std::to_string(upd.num_elements()) + " elements at run time, " +
                            std::to_string(tuples) + " index tuples need " + std::to_string(tuples * slice));
  }
  const bool ints = !rt.element.is_float(), wide = is_f64(rt.element);
  for (size_t t = 0; t < tuples; ++t) {
    size_t base = 0;
    for (size_t d = 0; d < q; ++d) {
      int64_t i = idx.int_at(t * q + d);
      if (i < -dd[d] || i >= dd[d]) {
        return op_error(op, "index " + std::to_string(i) + " of tuple " + std::to_string(t) + " is out of range for dimension " +
                                std::to_string(d) + " of size " + std::to_string(dd[d]));
      }
      if (i < 0) i += dd[d];
      base = base * size_t(dd[d]) + size_t(i);
    }
    base *= slice;
    for (size_t e = 0; e < slice; ++e) {
      const size_t at = base + e, from = t * slice + e;
      if (reduction == "none") {
        if (ints) y.set_int(at, upd.int_at(from));
        else y.set_float(at, upd.float_at(from));
      } else if (ints) {
        const int64_t a = y.int_at(at), b = upd.int_at(from);
        const int64_t v = reduction == "add"   ? int64_t(uint64_t(a) + uint64_t(b))
                          : reduction == "mul" ? int64_t(uint64_t(a) * uint64_t(b))
                          : reduction == "max" ? std::max(a, b)
                                               : std::min(a, b);
        y.set_int(at, v);
      } else {
        const double a = y.float_at(at), b = upd.float_at(from);
        auto combine = [&](auto x, auto z) -> decltype(x) {
          if (reduction == "add") return x + z;
          if (reduction == "mul") return x * z;
          if (std::isnan(x) || std::isnan(z)) return std::numeric_limits<decltype(x)>::quiet_NaN();
          return reduction == "max" ? std::max(x, z) : std::min(x, z);
        };
        y.set_float(at, wide ? combine(a, b) : double(combine(float(a), float(b))));
      }
    }
  }
  return y;
}

// ONNX GatherND: for each of the B = prod(data.dims[:b]) batches and each index tuple of
// that batch, the slice data[batch][tuple] (data.dims[b + k:]) is copied, stored bytes for
// any element type. A negative index counts from the end; one out of range is an error.
Result<Tensor> eval_gather_nd(const Op& op, const Tensor& data, const Tensor& idx, const Type& rt) {
  const size_t b = op.attr("batch_dims") ? size_t(op.attr("batch_dims")->i) : 0;
  const auto &dd = data.type.dims, &id = idx.type.dims;
  for (size_t d = 0; d < b; ++d) {
    if (dd[d] != id[d]) {
      return op_error(op, "batch dimension " + std::to_string(d) + " differs at run time: data [" + dims_to_string(dd) +
                              "], indices [" + dims_to_string(id) + "]");
    }
  }
  const size_t k = size_t(id.back());
  const std::vector<int64_t> dims = gather_nd_result_dims(dd, id, b);
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  size_t batches = 1, tuples = 1, slice = 1;
  for (size_t d = 0; d < b; ++d) batches *= size_t(dd[d]);
  for (size_t d = b; d + 1 < id.size(); ++d) tuples *= size_t(id[d]);
  for (size_t d = b + k; d < dd.size(); ++d) slice *= size_t(dd[d]);
  const size_t es = y.element_size();
  for (size_t n = 0; n < batches; ++n) {
    for (size_t t = 0; t < tuples; ++t) {
      const size_t tuple = n * tuples + t;
      size_t src = n;  // the batch, then each indexed dimension, in row-major order
      for (size_t j = 0; j < k; ++j) {
        const int64_t extent = dd[b + j];
        int64_t i = idx.int_at(tuple * k + j);
        if (i < -extent || i >= extent) {
          return op_error(op, "index " + std::to_string(i) + " of tuple " + std::to_string(tuple) +
                                  " is out of range for dimension " + std::to_string(b + j) + " of size " + std::to_string(extent));
        }
        src = src * size_t(extent) + size_t(i < 0 ? i + extent : i);
      }
      std::copy_n(data.bytes() + src * slice * es, slice * es, y.bytes() + tuple * slice * es);
    }
  }
  return y;
}

}  // namespace

Result<Tensor> eval_axis_op(const Op& op, const std::vector<const Tensor*>& in, const Type& rt) {
  switch (op.kind) {
    case OpKind::kReduceSum:
    case OpKind::kReduceMax:
    case OpKind::kReduceMin:
    case OpKind::kReduceProd: return eval_reduce(op, *in[0], rt);
    case OpKind::kArgMax:
    case OpKind::kArgMin: return eval_arg_reduce(op, *in[0], rt);
    case OpKind::kCumSum: return eval_cumsum(op, *in[0], rt);
    case OpKind::kTopK: return eval_topk(op, *in[0], rt);
    case OpKind::kScatterNd: return eval_scatter_nd(op, *in[0], *in[1], *in[2], rt);
    case OpKind::kGatherNd: return eval_gather_nd(op, *in[0], *in[1], rt);
    default: return op_error(op, "is not an op along axes");
  }
}

}  // namespace qrt::ref_detail
