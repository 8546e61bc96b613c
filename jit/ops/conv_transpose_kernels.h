// qrt — quantized qrt.conv_transpose2d on the convolution kernels, by sub-pixel phases: the
// outputs of each residue (rh, rw) of the stride meet one subset of the filter taps, so each
// phase is a stride-1 qrt.conv2d of the input (padded with its zero point) with those taps
// flipped, and its results go to every stride-th output. No product meets an inserted zero.
// Integer sums do not depend on their order, so the bytes are the reference's under the
// default, tflite and onnx profiles (whose requantization is the conv2d's). See docs/ops.md.
#pragma once

#include <memory>
#include <string>

#include "jit/ops/select.h"

namespace qrt::jit {

/// Chooses the kernel of a qrt.conv_transpose2d: per phase, the kernel chosen for that phase's
/// convolution among `allowed` from `generator`, behind the padding and the output scatter.
/// A null kernel and the reason where some phase has none, or where the op stays on the
/// reference (float or hybrid operands, dynamic shapes, a filter or bias computed at run time,
/// StableHLO's dequantize-op-quantize formula).
Result<KernelChoice> select_conv_transpose_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                                  Generator generator);

}  // namespace qrt::jit
