// qrt — quantized qrt.conv_transpose2d on the convolution kernels: the input is staged with
// zero points between its elements (the stride) and around them (the window's reach less the
// pads), and a stride-1 qrt.conv2d with the filter flipped in both spatial axes computes the
// result on that staging. Integer sums do not depend on their order and the inserted zero
// points contribute exact zeros, so the bytes are the reference's under the default, tflite
// and onnx profiles (whose requantization is the conv2d's). See docs/ops.md.
#pragma once

#include <memory>

#include "jit/ops/select.h"

namespace qrt {
struct Graph;
}

namespace qrt::jit {

/// The graph of the stride-1 qrt.conv2d that computes the quantized qrt.conv_transpose2d `op`
/// of `graph` on its staged input: the staged input as its argument, the flipped filter and
/// the bias as constants, `op`'s result type, dilations and groups, and `graph`'s numerics
/// profile. Null and `*why_not` where no kernel can run `op` this way (float or
/// hybrid operands, dynamic shapes, a filter or bias computed at run time, StableHLO's
/// dequantize-op-quantize formula).
std::shared_ptr<Graph> conv_transpose_as_conv2d(const Graph& graph, const Op& op, std::string* why_not);

/// Chooses the kernel of a qrt.conv_transpose2d: the chosen kernel of conv_transpose_as_conv2d's
/// convolution among `allowed` from `generator`, behind the staging; a null kernel and the
/// reason where there is none.
Result<KernelChoice> select_conv_transpose_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                                  Generator generator);

}  // namespace qrt::jit
