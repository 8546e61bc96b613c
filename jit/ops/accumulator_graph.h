// qrt — the graph of one quantized contraction into its int32 accumulators: how the numerics
// profiles (profile_kernels.h) and the 16-bit activation kernels (wide_input_kernels.h) let
// the 8-bit contraction kernels compute the integer part of an op they cannot finish.
#pragma once

#include <memory>
#include <optional>

#include "ir/graph.h"

namespace qrt::jit {

/// The output-channel axis of a quantized qrt.matmul (its last) or qrt.conv2d (by layout)
/// result, or -1.
int contraction_channel_axis(const Graph& graph, const Op& op);

/// How contraction_accumulator_graph changes the op it copies.
struct AccumulatorGraphOptions {
  /// Replaces the activations' element type (same scale: the accumulator type stays the
  /// op's); the activations must then be computed at run time, not from constants.
  const ElementType* lhs = nullptr;
  /// Leaves out the bias (the caller adds it to the accumulators).
  bool without_bias = false;
};

/// For `op` (a quantized qrt.matmul or qrt.conv2d of `graph`) whose result stores at most 16
/// bits, per tensor or per output channel: a graph under the default profile whose last op is
/// `op` producing the int32 accumulator type (zero point 0, scale s_x · s_w[n], per output
/// channel where the weights are) without its fused clamp. It holds the producer chains of the
/// operands computable from constants (the kernels prepack those); the other operands are its
/// arguments, in the op's operand order. nullopt where the result cannot be requantized per
/// channel (or `options` cannot apply).
std::optional<std::shared_ptr<Graph>> contraction_accumulator_graph(const Graph& graph, const Op& op,
                                                                    const AccumulatorGraphOptions& options);

}  // namespace qrt::jit
