// qrt — kernels for numerics profiles whose formulas differ from the default only in how a
// quantized contraction's int32 accumulator becomes a stored value (tflite, onnx): the
// contraction runs on the generated kernels into int32 accumulators, then the profile's
// requantization runs in portable C++ (docs/numerics.md, "Profiles").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// Calls fn with `bytes` as a pointer to the stored integers of storage `st` (1 or 2 bytes).
template <typename Bytes, typename Fn>
void with_storage(const QuantStorage& st, Bytes* bytes, Fn&& fn) {
  using I8 = std::conditional_t<std::is_const_v<Bytes>, const int8_t, int8_t>;
  using U8 = std::conditional_t<std::is_const_v<Bytes>, const uint8_t, uint8_t>;
  using I16 = std::conditional_t<std::is_const_v<Bytes>, const int16_t, int16_t>;
  using U16 = std::conditional_t<std::is_const_v<Bytes>, const uint16_t, uint16_t>;
  if (st.width <= 8) {
    st.is_signed ? fn(reinterpret_cast<I8*>(bytes)) : fn(reinterpret_cast<U8*>(bytes));
  } else {
    st.is_signed ? fn(reinterpret_cast<I16*>(bytes)) : fn(reinterpret_cast<U16*>(bytes));
  }
}

/// with_storage for 8-, 16- or 32-bit storage (accumulators included).
template <typename Bytes, typename Fn>
void with_int_storage(const QuantStorage& st, Bytes* bytes, Fn&& fn) {
  if (st.width <= 16) return with_storage(st, bytes, fn);
  using I32 = std::conditional_t<std::is_const_v<Bytes>, const int32_t, int32_t>;
  using U32 = std::conditional_t<std::is_const_v<Bytes>, const uint32_t, uint32_t>;
  st.is_signed ? fn(reinterpret_cast<I32*>(bytes)) : fn(reinterpret_cast<U32*>(bytes));
}

/// Per output channel of a requantizing contraction: the zero point and the stored bounds,
/// narrowed by the op's fused clamp exactly as the reference's qrt.clamp narrows them.
struct ChannelOutputs {
  std::vector<int64_t> zo, lo, hi;
};
/// ChannelOutputs of `op`'s result type `out` (per tensor or per channel) for `channels` channels.
ChannelOutputs channel_outputs(const Op& op, const ElementType& out, size_t channels);

/// For `op` (a quantized qrt.matmul or qrt.conv2d of `graph`) whose profile formula is only
/// its requantization: a graph under the default profile whose last op is `op` producing the
/// int32 accumulator type (zero point 0, scale s_x · s_w[n], per output channel where the
/// weights are) without its fused clamp; it holds the producer chains of the operands
/// computable from constants, and the other operands are its arguments. The kernels of that
/// op compute the accumulators. nullopt for any other op or profile.
std::optional<std::shared_ptr<Graph>> accumulator_graph(const Graph& graph, const Op& op);

/// The same for a quantized matmul or conv2d under the default profile whose result has 9-
/// to 16-bit storage (which no contraction kernel's epilogue writes): the kernels compute the
/// accumulators, the default requantization follows. nullopt for any other op or profile.
std::optional<std::shared_ptr<Graph>> wide_result_accumulator_graph(const Graph& graph, const Op& op);

/// Wraps `contraction` (a kernel of op `op_index` of `acc_graph`, writing int32 accumulators)
/// into the kernel of the same op of `graph`: accumulators into a scratch tensor, then the
/// profile's per-channel requantization and the op's fused clamp. Under the tflite profiles,
/// 8-bit results with the channels innermost requantize on the kRequantQ31 micro-kernel of
/// the best level in `allowed` that has one (from `generator`); the rest element by element.
std::unique_ptr<OpKernel> make_profile_requant_kernel(const Graph& graph, const Op& op,
                                                      std::shared_ptr<Graph> acc_graph,
                                                      std::unique_ptr<OpKernel> contraction, const IsaSet& allowed,
                                                      Generator generator);

/// TFLite's quantized qrt.add or qrt.mul (tflite profiles) of two per-tensor operands of static
/// shapes that broadcast to the result's, 8- or 16-bit storage: a portable C++ kernel of the
/// profile's formula; nullptr for any other op or profile. Bytes in and out run through
/// 256-entry tables and the kRequantQ31 micro-kernel (the best in `allowed` from `generator`).
std::unique_ptr<OpKernel> make_profile_binary_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                                     Generator generator);

/// TFLite's quantized qrt.softmax (along any axis) or int8 qrt.logistic (tflite
/// profiles, where profile_formula names them) of a static shape without a fused clamp: a
/// portable C++ kernel of the profile's formula (the logistic as a 256-entry table); nullptr
/// for any other op or profile.
std::unique_ptr<OpKernel> make_profile_activation_kernel(const Graph& graph, const Op& op);

/// TFLite's quantized qrt.mean (tflite profiles, where profile_formula names it) of static
/// shapes, 8- or 16-bit storage, over one contiguous block of axes, without a fused clamp: a
/// portable C++ kernel of the reference's formula (profile_reduce_kernels.cpp); nullptr for
/// anything else.
std::unique_ptr<OpKernel> make_profile_mean_kernel(const Graph& graph, const Op& op);

/// TFLite's quantized qrt.avg_pool2d (tflite profiles, where profile_formula names it: equal
/// input and output parameters) of static NHWC shapes, 8- or 16-bit storage, without a fused
/// clamp: a portable C++ kernel of the reference's formula (profile_reduce_kernels.cpp);
/// nullptr for anything else.
std::unique_ptr<OpKernel> make_profile_avg_pool_kernel(const Graph& graph, const Op& op);

/// A quantized qrt.mean (one contiguous block of reduced axes), qrt.avg_pool2d or
/// qrt.max_pool2d (NHWC) of per-tensor 8- or 16-bit values with static shapes, under a
/// profile that does not redefine the op (profile_formula empty), without a fused clamp: the reference's formula in portable C++ (exact
/// sums, then f32(s_in / (s_out · count)) as the reference applies it; max pooling of one
/// storage in and out). For the pools and means the pool kernels do not take (16-bit values, a
/// mean over other axes); nullptr for anything else.
std::unique_ptr<OpKernel> make_portable_pool_kernel(const Graph& graph, const Op& op);
/// TFLite's `quant.qcast` (f32 to per-tensor 8/16-bit storage) and `qrt.requantize` (per
/// tensor, 8/16/32-bit inputs to 8/16-bit results) under the tflite profiles, without a fused clamp: 8-bit to 8-bit
/// requantization as a 256-entry byte table of the reference's formula (the best table kernel
/// in `allowed` from `generator`), the rest per element in portable C++
/// (profile_cast_kernels.cpp); nullptr for anything else.
std::unique_ptr<OpKernel> make_profile_cast_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                                   Generator generator);

}  // namespace qrt::jit
