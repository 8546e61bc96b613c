// qrt — internal: helpers shared by the reference interpreter's files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/ops.h"
#include "jit/core/tensor.h"

namespace qrt::ref_detail {

inline Status op_error(const Op& op, const std::string& message) {
  return Status::error_at(op.loc, std::string("'") + op_info(op.kind).name + "' op " + message);
}

/// The accumulator width of a quantized contraction of `x` by `w` (docs/numerics.md, "Wide
/// accumulation"): int32 for 8-bit operands, for a result of the accumulator type (i32
/// storage) and where TFLite keeps int32 accumulators (tflite profiles with an i32 bias);
/// int64 otherwise.
struct AccumulatorWidth {
  bool int64 = false;
  AccumulatorWidth(NumericsProfile profile, const ElementType& x, const ElementType& w, const Tensor* bias,
                   bool accumulator_out) {
    const ElementType* b = bias ? &bias->type.element : nullptr;
    int64 = accumulates_in_i64(x, w) && !accumulator_out &&
            !(is_tflite(profile) && b && b->storage.width == 32);
  }
  /// Adds `bias` to `acc`: false where the sum leaves the accumulator's range.
  bool add_bias_and_check(int64_t& acc, int64_t bias) const {
    if (__builtin_add_overflow(acc, bias, &acc)) return false;
    return int64 || (acc >= INT32_MIN && acc <= INT32_MAX);
  }
  const char* name() const { return int64 ? "int64" : "int32"; }
};

/// Per-element quantization parameters of a uniform type laid out over `dims`: per-layer,
/// per-axis (the channel of element i) or sub-channel (the block of element i).
struct QuantView {
  const ElementType* e = nullptr;
  size_t inner = 1;     // elements per step along the channel axis
  size_t channels = 1;  // size of the channel axis (1 for per-layer)
  // Sub-channel: per dimension, the tensor's row-major stride, its block size and the
  // parameters' row-major stride (0 along dimensions with one block).
  std::vector<size_t> dim_stride, block, param_stride;
  std::vector<int64_t> dims_;

  QuantView(const ElementType& element, const std::vector<int64_t>& dims) : e(&element) {
    if (element.kind == ElementKind::kUniformPerAxis) {
      channels = size_t(dims[size_t(element.axis)]);
      for (size_t d = size_t(element.axis) + 1; d < dims.size(); ++d) inner *= size_t(dims[d]);
    }
    if (element.kind == ElementKind::kUniformSubChannel) {
      const size_t rank = dims.size();
      dims_ = dims;
      dim_stride.assign(rank, 1);
      param_stride.assign(rank, 0);
      block.assign(rank, 1);
      size_t ps = 1;
      for (size_t d = rank; d-- > 0;) {
        if (d + 1 < rank) dim_stride[d] = dim_stride[d + 1] * size_t(dims[d + 1]);
        const int64_t b = element.block_size_along(d);
        block[d] = b > 0 ? size_t(b) : size_t(dims[d]);
        param_stride[d] = element.param_dims[d] > 1 ? ps : 0;
        ps *= size_t(element.param_dims[d]);
      }
    }
  }
  size_t channel(size_t i) const {
    if (!dims_.empty() || e->kind == ElementKind::kUniformSubChannel) {
      size_t p = 0;
      for (size_t d = 0; d < dims_.size(); ++d) p += (i / dim_stride[d] % size_t(dims_[d])) / block[d] * param_stride[d];
      return p;
    }
    return channels == 1 ? 0 : (i / inner) % channels;
  }
  double scale(size_t i) const { return e->scales[channel(i)]; }
  int64_t zp(size_t i) const { return e->zero_points[channel(i)]; }
};

// The integers of an array attribute (absent: empty).
inline std::vector<int64_t> ints_of(const Attribute* a) {
  std::vector<int64_t> v;
  if (a) {
    for (const Attribute& e : a->array) v.push_back(e.i);
  }
  return v;
}

inline bool is_f64(const ElementType& e) { return e.float_kind == FloatKind::kF64; }

inline Tensor make_result(const Type& declared, std::vector<int64_t> dims) {
  Type t = declared;
  t.dims = std::move(dims);
  return Tensor::zeros(t);
}

/// Checks a computed shape against the op's declared (possibly partly dynamic) result type,
/// and the per-axis integrity rule for dimensions that were dynamic until now.
inline Status check_result_shape(const Op& op, const Type& declared, const std::vector<int64_t>& dims) {
  bool ok = declared.dims.size() == dims.size();
  for (size_t i = 0; ok && i < dims.size(); ++i) ok = declared.dims[i] < 0 || declared.dims[i] == dims[i];
  if (!ok) {
    return op_error(op, "computed result shape [" + dims_to_string(dims) +
                            "] contradicts its type " + declared.to_string());
  }
  if (declared.element.kind == ElementKind::kUniformPerAxis &&
      size_t(dims[size_t(declared.element.axis)]) != declared.element.num_channels()) {
    return op_error(op, "channel axis has size " + std::to_string(dims[size_t(declared.element.axis)]) +
                            " at run time but the type has " +
                            std::to_string(declared.element.num_channels()) + " scales");
  }
  if (declared.element.is_sub_channel()) {
    Type t = declared;
    t.dims = dims;
    Status s = t.verify_sub_channel_container();
    if (!s.is_ok()) return op_error(op, "result at run time: " + s.message());
  }
  return Status::ok();
}

/// Kernels of the neural-network ops (reference_nn.cpp).
/// `profile`: the graph's numerics profile (requantization of quantized convolutions; TFLite's
/// rounded average where the op's profile formula is TFLite's).
Result<Tensor> eval_conv2d(const Op& op, const std::vector<const Tensor*>& in, const Type& rt, NumericsProfile profile);
Result<Tensor> eval_pool2d(const Op& op, const Tensor& x, const Type& rt, NumericsProfile profile);
Result<Tensor> eval_transpose(const Op& op, const Tensor& x, const Type& rt);
Result<Tensor> eval_concat(const Op& op, const std::vector<const Tensor*>& in, const Type& rt);
Result<Tensor> eval_pad(const Op& op, const Tensor& x, const Type& rt);
Result<Tensor> eval_softmax_logistic(const Op& op, const Tensor& x, const Type& rt);
/// `profile`: TFLite's integer mean where the op's profile formula is TFLite's.
Result<Tensor> eval_mean(const Op& op, const Tensor& x, const Type& rt, NumericsProfile profile);
/// The math ops of ir/ops_math.cpp, and integer qrt.add / qrt.mul (reference_math.cpp).
Result<Tensor> eval_math(const Op& op, const std::vector<const Tensor*>& in, const Type& rt);
/// Reductions, argmax / argmin, topk and cumsum along axes, and scatter_nd
/// (reference_axis_ops.cpp).
Result<Tensor> eval_axis_op(const Op& op, const std::vector<const Tensor*>& in, const Type& rt);
/// qrt.grid_sample (reference_sample.cpp).
Result<Tensor> eval_grid_sample(const Op& op, const Tensor& x, const Tensor& grid, const Type& rt);
/// qrt.dynamic_quantize: its three results (stored values, scale, zero point).
std::vector<Tensor> eval_dynamic_quantize(const Graph& g, const Op& op, const Tensor& x);

}  // namespace qrt::ref_detail
