// qrt — the reference kernels of the math ops (ir/ops_math.cpp): arithmetic and comparisons
// with broadcasting, unary functions, gelu, layer_norm, gather, slice, broadcast_to, cast and
// shape (reductions and the other ops along an axis: reference_axis_ops.cpp). Float ops compute in f32 (f16/bf16/f32 elements; f64 in
// double), integer arithmetic in int64 wrapped to the element width (docs/numerics.md).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/nn_params.h"
#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/ref/reference_util.h"

namespace qrt::ref_detail {

namespace {

// The broadcast shape of all operands, checked against the declared result.
Result<std::vector<int64_t>> broadcast_all(const Op& op, const std::vector<const Tensor*>& in, const Type& rt) {
  std::vector<int64_t> dims = in[0]->type.dims;
  for (size_t i = 1; i < in.size(); ++i) {
    auto shape = broadcast_shapes(dims, in[i]->type.dims);
    if (!shape.is_ok()) return op_error(op, shape.status().message());
    dims = *shape;
  }
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  return dims;
}

// Calls fn(out_index, operand_indices) for every element of `out`, row-major.
template <typename Fn>
void for_each_nary(const std::vector<int64_t>& out, const std::vector<const Tensor*>& in, Fn fn) {
  std::vector<std::vector<size_t>> strides;
  for (const Tensor* t : in) strides.push_back(broadcast_strides(t->type.dims, out));
  std::vector<size_t> at(in.size(), 0);
  std::vector<int64_t> idx(out.size(), 0);
  size_t total = 1;
  for (int64_t d : out) total *= size_t(d);
  for (size_t i = 0; i < total; ++i) {
    fn(i, at);
    for (size_t k = out.size(); k-- > 0;) {
      ++idx[k];
      for (size_t j = 0; j < in.size(); ++j) at[j] += strides[j][k];
      if (idx[k] < out[k]) break;
      for (size_t j = 0; j < in.size(); ++j) at[j] -= strides[j][k] * size_t(out[k]);
      idx[k] = 0;
    }
  }
}

template <typename T>
T float_binary(OpKind kind, T a, T b) {
  switch (kind) {
    case OpKind::kAdd: return a + b;
    case OpKind::kSub: return a - b;
    case OpKind::kMul: return a * b;
    case OpKind::kDiv: return a / b;
    case OpKind::kPow:
      if constexpr (sizeof(T) == 4) {
        return numerics::pow_f32(a, b);
      } else {
        return numerics::pow_f64(a, b);
      }
    case OpKind::kMax: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : std::max(a, b);
    case OpKind::kMod: return std::fmod(a, b);  // exact; the verifier allows only fmod = 1 for floats
    default: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : std::min(a, b);
  }
}

Result<Tensor> eval_arithmetic(const Op& op, const std::vector<const Tensor*>& in, const Type& rt) {
  QRT_ASSIGN_OR_RETURN(auto dims, broadcast_all(op, in, rt));
  Tensor y = make_result(rt, dims);
  const Tensor &a = *in[0], &b = *in[1];
  Status status = Status::ok();
  for_each_nary(dims, in, [&](size_t i, const std::vector<size_t>& at) {
    if (rt.element.is_integer()) {
      const int64_t x = a.int_at(at[0]), z = b.int_at(at[1]);
      int64_t v = 0;
      switch (op.kind) {
        case OpKind::kAdd: v = int64_t(uint64_t(x) + uint64_t(z)); break;
        case OpKind::kSub: v = int64_t(uint64_t(x) - uint64_t(z)); break;
        case OpKind::kMul: v = int64_t(uint64_t(x) * uint64_t(z)); break;
        case OpKind::kDiv:
          if (z == 0 || (x == std::numeric_limits<int64_t>::min() && z == -1)) {
            if (status.is_ok()) status = op_error(op, "integer division by zero (or overflow) at element " + std::to_string(i));
            return;
          }
          v = x / z;
          break;
        case OpKind::kMod:
          if (z == 0) {
            if (status.is_ok()) status = op_error(op, "integer modulo by zero at element " + std::to_string(i));
            return;
          }
          v = z == -1 ? 0 : x % z;  // (INT64_MIN % -1 overflows in C++; the remainder is 0)
          if (!(op.attr("fmod") && op.attr("fmod")->i != 0) && v != 0 && (v < 0) != (z < 0)) v += z;
          break;
        case OpKind::kMax: v = std::max(x, z); break;
        default: v = std::min(x, z); break;
      }
      y.set_int(i, v);
    } else if (is_f64(rt.element)) {
      y.set_float(i, float_binary<double>(op.kind, a.float_at(at[0]), b.float_at(at[1])));
    } else {
      y.set_float(i, float_binary<float>(op.kind, float(a.float_at(at[0])), float(b.float_at(at[1]))));
    }
  });
  QRT_RETURN_IF_ERROR(status);
  return y;
}

Result<Tensor> eval_compare(const Op& op, const std::vector<const Tensor*>& in, const Type& rt) {
  QRT_ASSIGN_OR_RETURN(auto dims, broadcast_all(op, in, rt));
  Tensor y = make_result(rt, dims);
  const bool ints = in[0]->type.element.is_integer();
  for_each_nary(dims, in, [&](size_t i, const std::vector<size_t>& at) {
    bool r;
    if (ints) {
      const int64_t a = in[0]->int_at(at[0]), b = in[1]->int_at(at[1]);
      r = op.kind == OpKind::kEqual ? a == b : op.kind == OpKind::kLess ? a < b : a > b;
    } else {
      const double a = in[0]->float_at(at[0]), b = in[1]->float_at(at[1]);
      r = op.kind == OpKind::kEqual ? a == b : op.kind == OpKind::kLess ? a < b : a > b;
    }
    y.set_int(i, r ? 1 : 0);
  });
  return y;
}

Result<Tensor> eval_where(const Op& op, const std::vector<const Tensor*>& in, const Type& rt) {
  QRT_ASSIGN_OR_RETURN(auto dims, broadcast_all(op, in, rt));
  Tensor y = make_result(rt, dims);
  const unsigned n = y.element_size();
  for_each_nary(dims, in, [&](size_t i, const std::vector<size_t>& at) {
    const bool c = in[0]->int_at(at[0]) != 0;
    std::copy_n(c ? in[1]->bytes() + at[1] * n : in[2]->bytes() + at[2] * n, n, y.bytes() + i * n);
  });
  return y;
}

float unary_f32(const Op& op, float x, bool tanh_gelu) {
  switch (op.kind) {
    case OpKind::kSqrt: return std::sqrt(x);
    case OpKind::kReciprocal: return 1.0f / x;
    case OpKind::kExp: return numerics::exp_f32(x);
    case OpKind::kTanh: return numerics::tanh_f32(x);
    case OpKind::kErf: return numerics::erf_f32(x);
    case OpKind::kNeg: return -x;
    case OpKind::kAbs: return std::fabs(x);
    case OpKind::kSign: return numerics::sign_f32(x);
    case OpKind::kFloor: return std::floor(x);
    case OpKind::kCeil: return std::ceil(x);
    case OpKind::kRoundEven: return float(numerics::round_half_even(x));
    case OpKind::kRoundAway: return std::round(x);
    case OpKind::kRsqrt: return numerics::rsqrt_f32(x);
    case OpKind::kLog: return numerics::log_f32(x);
    case OpKind::kLog1p: return numerics::log1p_f32(x);
    case OpKind::kExpm1: return numerics::expm1_f32(x);
    case OpKind::kSin: return numerics::sin_f32(x);
    case OpKind::kCos: return numerics::cos_f32(x);
    case OpKind::kCbrt: return numerics::cbrt_f32(x);
    case OpKind::kAsin: return numerics::asin_f32(x);
    case OpKind::kAcos: return numerics::acos_f32(x);
    case OpKind::kAtan: return numerics::atan_f32(x);
    case OpKind::kAsinh: return numerics::asinh_f32(x);
    case OpKind::kAcosh: return numerics::acosh_f32(x);
    case OpKind::kAtanh: return numerics::atanh_f32(x);
    default: return numerics::gelu_f32(x, tanh_gelu);
  }
}

double unary_f64(const Op& op, double x, bool tanh_gelu) {
  switch (op.kind) {
    case OpKind::kSqrt: return std::sqrt(x);
    case OpKind::kReciprocal: return 1.0 / x;
    case OpKind::kExp: return std::exp(x);
    case OpKind::kTanh: return std::tanh(x);
    case OpKind::kErf: return std::erf(x);
    case OpKind::kNeg: return -x;
    case OpKind::kAbs: return std::fabs(x);
    case OpKind::kSign: return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x;
    case OpKind::kFloor: return std::floor(x);
    case OpKind::kCeil: return std::ceil(x);
    case OpKind::kRoundEven: return numerics::round_half_even(x);
    case OpKind::kRoundAway: return std::round(x);
    case OpKind::kRsqrt: return 1.0 / std::sqrt(x);
    case OpKind::kLog: return std::log(x);
    case OpKind::kLog1p: return std::log1p(x);
    case OpKind::kExpm1: return std::expm1(x);
    case OpKind::kSin: return std::sin(x);
    case OpKind::kCos: return std::cos(x);
    case OpKind::kCbrt: return std::cbrt(x);
    case OpKind::kAsin: return std::asin(x);
    case OpKind::kAcos: return std::acos(x);
    case OpKind::kAtan: return std::atan(x);
    case OpKind::kAsinh: return std::asinh(x);
    case OpKind::kAcosh: return std::acosh(x);
    case OpKind::kAtanh: return std::atanh(x);
    default:
      return tanh_gelu ? 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
                       : 0.5 * x * (1.0 + std::erf(x * 0.7071067811865476));
  }
}

Tensor eval_unary(const Op& op, const Tensor& x, const Type& rt) {
  Tensor y = make_result(rt, x.type.dims);
  const Attribute* approx = op.attr("approximate");
  const bool tanh_gelu = approx && approx->s == "tanh";
  for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
    if (rt.element.is_integer()) {
      y.set_int(i, int64_t(0 - uint64_t(x.int_at(i))));  // kNeg, wrapping
    } else if (is_f64(rt.element)) {
      y.set_float(i, unary_f64(op, x.float_at(i), tanh_gelu));
    } else {
      y.set_float(i, unary_f32(op, float(x.float_at(i)), tanh_gelu));
    }
  }
  return y;
}

Tensor eval_cast(const Tensor& x, const Type& rt) {
  Tensor y = make_result(rt, x.type.dims);
  const ElementType &from = x.type.element, &to = rt.element;
  const bool to_bool = to.is_integer() && to.int_width == 1;
  for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
    if (to.is_float()) {
      y.set_float(i, from.is_float() ? x.float_at(i) : double(x.int_at(i)));
    } else if (from.is_float()) {
      const double v = x.float_at(i);
      if (to_bool) {
        y.set_int(i, v != 0.0 ? 1 : 0);
      } else {
        // Truncate toward zero, saturate to the target's range; NaN becomes 0. The range is
        // [lo, top): `top` (2^w unsigned, 2^(w-1) signed) is exact in double where the largest
        // value of a 64-bit type is not (it rounds up to top, whose conversion is undefined).
        const bool is_unsigned = to.int_sign == Signedness::kUnsigned;
        const unsigned w = to.int_width;
        const double lo = is_unsigned ? 0.0 : -std::ldexp(1.0, int(w) - 1);
        const double top = is_unsigned ? std::ldexp(1.0, int(w)) : std::ldexp(1.0, int(w) - 1);
        const uint64_t max = is_unsigned ? (w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1) : (uint64_t(1) << (w - 1)) - 1;
        const double t = std::isnan(v) ? 0.0 : std::trunc(v);
        if (t >= top) {
          y.set_int(i, int64_t(max));
        } else {
          const double c = std::max(t, lo);
          y.set_int(i, is_unsigned && c >= 9.2e18 ? int64_t(uint64_t(c)) : int64_t(c));
        }
      }
    } else {
      y.set_int(i, to_bool ? (x.int_at(i) != 0 ? 1 : 0) : x.int_at(i));  // integers wrap to the width
    }
  }
  return y;
}

Result<Tensor> eval_layer_norm(const Op& op, const std::vector<const Tensor*>& in, const Type& rt) {
  const Tensor& x = *in[0];
  const int64_t axis = op.attr("axis")->i;
  const double eps = op.attr("epsilon")->f;
  // The verifier accepts a scale or bias whose dimensions are left dynamic; at run time they
  // must be the normalized dimensions, whose elements are read one for one.
  const std::vector<int64_t> normalized(x.type.dims.begin() + axis, x.type.dims.end());
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i]->type.dims != normalized) {
      return op_error(op, std::string(i == 1 ? "scale" : "bias") + " has shape [" + dims_to_string(in[i]->type.dims) +
                              "] at run time; the normalized dimensions are [" + dims_to_string(normalized) + "]");
    }
  }
  Tensor y = make_result(rt, x.type.dims);
  size_t n = 1;
  for (size_t d = size_t(axis); d < x.type.dims.size(); ++d) n *= size_t(x.type.dims[d]);
  const size_t rows = n == 0 ? 0 : size_t(x.num_elements()) / n;
  const bool f64 = is_f64(rt.element);
  for (size_t r = 0; r < rows; ++r) {
    // Mean and variance in double, summed in order; one f32 normalization per element.
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) sum += x.float_at(r * n + i);
    const double mean = sum / double(n);
    double sq = 0.0;
    for (size_t i = 0; i < n; ++i) {
      const double c = x.float_at(r * n + i) - mean;
      sq += c * c;
    }
    const double rstd = 1.0 / std::sqrt(sq / double(n) + eps);
    for (size_t i = 0; i < n; ++i) {
      const double scale = in[1]->float_at(i), bias = in.size() > 2 ? in[2]->float_at(i) : 0.0;
      if (f64) {
        y.set_float(r * n + i, (x.float_at(r * n + i) - mean) * rstd * scale + bias);
      } else {
        const float normalized = float((x.float_at(r * n + i) - mean) * rstd);
        y.set_float(r * n + i, double(normalized * float(scale) + float(bias)));
      }
    }
  }
  return y;
}

Result<Tensor> eval_gather(const Op& op, const Tensor& data, const Tensor& idx, const Type& rt) {
  const int64_t axis = op.attr("axis") ? op.attr("axis")->i : 0;
  const auto& dd = data.type.dims;
  std::vector<int64_t> dims(dd.begin(), dd.begin() + axis);
  dims.insert(dims.end(), idx.type.dims.begin(), idx.type.dims.end());
  dims.insert(dims.end(), dd.begin() + axis + 1, dd.end());
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  size_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= size_t(dd[size_t(d)]);
  for (size_t d = size_t(axis) + 1; d < dd.size(); ++d) inner *= size_t(dd[d]);
  const int64_t extent = dd[size_t(axis)];
  const size_t n_idx = size_t(idx.num_elements()), bytes = inner * data.element_size();
  for (size_t j = 0; j < n_idx; ++j) {
    int64_t k = idx.int_at(j);
    if (k < -extent || k >= extent) {
      return op_error(op, "index " + std::to_string(k) + " (element " + std::to_string(j) +
                              ") is out of range for dimension " + std::to_string(axis) + " of size " +
                              std::to_string(extent));
    }
    if (k < 0) k += extent;
    for (size_t o = 0; o < outer; ++o) {
      std::copy_n(data.bytes() + (o * size_t(extent) + size_t(k)) * bytes, bytes, y.bytes() + (o * n_idx + j) * bytes);
    }
  }
  return y;
}

Result<Tensor> eval_gather_elements(const Op& op, const Tensor& data, const Tensor& idx, const Type& rt) {
  const size_t axis = size_t(op.attr("axis")->i);
  const auto &dd = data.type.dims, &id = idx.type.dims;
  for (size_t d = 0; d < dd.size(); ++d) {
    if (d != axis && id[d] > dd[d]) {
      return op_error(op, "indices dimension " + std::to_string(d) + " (" + std::to_string(id[d]) + ") exceeds the data's (" +
                              std::to_string(dd[d]) + ") at run time");
    }
  }
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, id));
  Tensor y = make_result(rt, id);
  const std::vector<size_t> strides = broadcast_strides(dd, dd);
  const unsigned n = y.element_size();
  const int64_t extent = dd[axis];
  std::vector<int64_t> at(id.size(), 0);
  for (size_t j = 0; j < size_t(idx.num_elements()); ++j) {
    int64_t k = idx.int_at(j);
    if (k < -extent || k >= extent) {
      return op_error(op, "index " + std::to_string(k) + " (element " + std::to_string(j) + ") is out of range for dimension " +
                              std::to_string(axis) + " of size " + std::to_string(extent));
    }
    if (k < 0) k += extent;
    size_t src = 0;
    for (size_t d = 0; d < at.size(); ++d) src += size_t(d == axis ? k : at[d]) * strides[d];
    std::copy_n(data.bytes() + src * n, n, y.bytes() + j * n);
    for (size_t d = at.size(); d-- > 0;) {
      if (++at[d] < id[d]) break;
      at[d] = 0;
    }
  }
  return y;
}

Result<Tensor> eval_slice(const Op& op, const Tensor& x, const Type& rt) {
  const std::vector<int64_t> starts = ints_of(op.attr("starts")), ends = ints_of(op.attr("ends"));
  const size_t rank = x.type.dims.size();
  std::vector<int64_t> steps = op.attr("steps") ? ints_of(op.attr("steps")) : std::vector<int64_t>(rank, 1);
  std::vector<int64_t> dims(rank), first(rank);
  for (size_t d = 0; d < rank; ++d) {
    dims[d] = slice_extent(x.type.dims[d], starts[d], ends[d], steps[d]);
    first[d] = slice_start(x.type.dims[d], starts[d], steps[d]);
  }
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  const unsigned n = y.element_size();
  const std::vector<size_t> in_strides = broadcast_strides(x.type.dims, x.type.dims);
  std::vector<int64_t> idx(rank, 0);
  for (size_t i = 0; i < size_t(y.num_elements()); ++i) {
    size_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += size_t(first[d] + idx[d] * steps[d]) * in_strides[d];
    std::copy_n(x.bytes() + src * n, n, y.bytes() + i * n);
    for (size_t k = rank; k-- > 0;) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return y;
}

// Nearest-neighbour resize: every output element copies the input element at the source
// index of each axis (resize_nearest_indices).
// Linear or cubic qrt.resize: ONNX's reference interpolates the innermost axis first, in
// double, and each outer axis over those double results; the result is rounded once. Axis by
// axis from the last, each output element of a pass is its taps' weighted sum in tap order (or
// the copied element), which is the same arithmetic.
Tensor eval_resize_interpolated(const Op& op, const Tensor& x, const Type& rt, const std::vector<int64_t>& dims,
                                const std::vector<double>& scales, const std::string& coord) {
  const std::string mode = op.attr("mode")->s;
  const double a = op.attr("cubic_coeff_a") ? op.attr("cubic_coeff_a")->f : -0.75;
  const bool exclude = op.attr("exclude_outside") && op.attr("exclude_outside")->i != 0;
  std::vector<int64_t> shape = x.type.dims;
  std::vector<double> cur(size_t(x.num_elements()));
  for (size_t i = 0; i < cur.size(); ++i) cur[i] = x.float_at(i);
  for (size_t d = shape.size(); d-- > 0;) {
    const ResizeAxisTaps t = resize_axis_taps(shape[d], dims[d], scales[d], coord, mode, a, exclude);
    size_t outer = 1, inner = 1;
    for (size_t k = 0; k < d; ++k) outer *= size_t(shape[k]);
    for (size_t k = d + 1; k < shape.size(); ++k) inner *= size_t(shape[k]);
    const size_t in_len = size_t(shape[d]), out_len = size_t(dims[d]);
    std::vector<double> next(outer * out_len * inner);
    for (size_t o = 0; o < outer; ++o) {
      for (size_t j = 0; j < out_len; ++j) {
        for (size_t i = 0; i < inner; ++i) {
          auto at = [&](int64_t src) { return cur[(o * in_len + size_t(src)) * inner + i]; };
          double v;
          if (t.copy[j] >= 0) {
            v = at(t.copy[j]);
          } else {
            v = 0.0;
            for (int k = 0; k < t.taps; ++k) {
              const double term = t.weight[j * size_t(t.taps) + size_t(k)] * at(t.index[j * size_t(t.taps) + size_t(k)]);
              v = k == 0 ? term : v + term;
            }
          }
          next[(o * out_len + j) * inner + i] = v;
        }
      }
    }
    cur = std::move(next);
    shape[d] = dims[d];
  }
  Tensor y = make_result(rt, dims);
  for (size_t i = 0; i < cur.size(); ++i) y.set_float(i, cur[i]);
  return y;
}

Result<Tensor> eval_resize(const Op& op, const Tensor& x, const Type& rt) {
  std::vector<double> scales;
  const std::vector<int64_t> dims = resize_output_dims(op, x.type.dims, rt.dims, &scales);
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  if (Status fits = Type::tensor(dims, rt.element).verify(); !fits.is_ok()) return op_error(op, fits.message());
  const std::string coord = op.attr("coordinate_transformation_mode") ? op.attr("coordinate_transformation_mode")->s : "half_pixel";
  if (op.attr("mode") && op.attr("mode")->s != "nearest") return eval_resize_interpolated(op, x, rt, dims, scales, coord);
  const std::string nearest = op.attr("nearest_mode") ? op.attr("nearest_mode")->s : "round_prefer_floor";
  std::vector<std::vector<int64_t>> maps;
  for (size_t d = 0; d < dims.size(); ++d) {
    maps.push_back(resize_nearest_indices(x.type.dims[d], dims[d], scales[d], coord, nearest));
  }
  Tensor y = make_result(rt, dims);
  const unsigned n = y.element_size();
  const std::vector<size_t> strides = broadcast_strides(x.type.dims, x.type.dims);
  std::vector<int64_t> idx(dims.size(), 0);
  for (size_t i = 0; i < size_t(y.num_elements()); ++i) {
    size_t src = 0;
    for (size_t d = 0; d < dims.size(); ++d) src += size_t(maps[d][size_t(idx[d])]) * strides[d];
    std::copy_n(x.bytes() + src * n, n, y.bytes() + i * n);
    for (size_t k = dims.size(); k-- > 0;) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return y;
}

Result<Tensor> eval_broadcast_to(const Op& op, const Tensor& x, const Type& rt) {
  std::vector<int64_t> target = rt.dims;
  for (size_t d = 0; d < target.size(); ++d) {
    const size_t from_end = target.size() - d;
    if (target[d] < 0) target[d] = from_end <= x.type.dims.size() ? x.type.dims[x.type.dims.size() - from_end] : 1;
  }
  auto dims = broadcast_shapes(x.type.dims, target);
  if (!dims.is_ok()) return op_error(op, dims.status().message());
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, *dims));
  Tensor y = make_result(rt, *dims);
  const unsigned n = y.element_size();
  for_each_nary(*dims, {&x}, [&](size_t i, const std::vector<size_t>& at) {
    std::copy_n(x.bytes() + at[0] * n, n, y.bytes() + i * n);
  });
  return y;
}

}  // namespace

Result<Tensor> eval_math(const Op& op, const std::vector<const Tensor*>& in, const Type& rt) {
  switch (op.kind) {
    case OpKind::kAdd:
    case OpKind::kMul:
    case OpKind::kSub:
    case OpKind::kDiv:
    case OpKind::kPow:
    case OpKind::kMax:
    case OpKind::kMod:
    case OpKind::kMin: return eval_arithmetic(op, in, rt);
    case OpKind::kEqual:
    case OpKind::kLess:
    case OpKind::kGreater: return eval_compare(op, in, rt);
    case OpKind::kWhere: return eval_where(op, in, rt);
    case OpKind::kGather: return eval_gather(op, *in[0], *in[1], rt);
    case OpKind::kGatherElements: return eval_gather_elements(op, *in[0], *in[1], rt);
    case OpKind::kSlice: return eval_slice(op, *in[0], rt);
    case OpKind::kBroadcastTo: return eval_broadcast_to(op, *in[0], rt);
    case OpKind::kResize: return eval_resize(op, *in[0], rt);
    case OpKind::kGridSample: return eval_grid_sample(op, *in[0], *in[1], rt);
    case OpKind::kReduceSum:
    case OpKind::kReduceMax:
    case OpKind::kReduceMin:
    case OpKind::kReduceProd:
    case OpKind::kArgMax:
    case OpKind::kArgMin:
    case OpKind::kCumSum:
    case OpKind::kTopK:
    case OpKind::kScatterNd:
    case OpKind::kGatherNd: return eval_axis_op(op, in, rt);
    case OpKind::kShape: {
      Tensor y = make_result(rt, {int64_t(in[0]->type.dims.size())});
      for (size_t d = 0; d < in[0]->type.dims.size(); ++d) y.set_int(d, in[0]->type.dims[d]);
      return y;
    }
    default: break;
  }
  const Tensor& x = *in[0];
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, x.type.dims));
  if (is_float_unary_function(op.kind)) return eval_unary(op, x, rt);
  switch (op.kind) {
    case OpKind::kNot: {
      Tensor y = make_result(rt, x.type.dims);
      for (size_t i = 0; i < size_t(x.num_elements()); ++i) y.set_int(i, x.int_at(i) != 0 ? 0 : 1);
      return y;
    }
    case OpKind::kCast: return eval_cast(x, rt);
    case OpKind::kLayerNorm: return eval_layer_norm(op, in, rt);
    case OpKind::kNeg: return eval_unary(op, x, rt);
    default: break;
  }
  return op_error(op, "has no reference implementation");
}

}  // namespace qrt::ref_detail
