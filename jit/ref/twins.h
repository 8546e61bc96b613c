// qrt — the scalar twins: a portable C++ implementation of every micro-kernel ABI
// (jit/core/microkernel.h), bit-exact with every backend's kernel of the same description.
// They are the scalar backend's kernels (every host) and the yardstick of the kernel-list
// tests.
#pragma once

#include "jit/core/microkernel.h"

namespace qrt::jit {

/// kQuantize / kDequantize (desc->op decides) over args->n elements (any n).
void twin_convert(const ConvertArgs* args, const KernelDesc* desc);
/// kGemm: one desc->mr x desc->nr tile in the packed layout of desc->path and desc->panel.
void twin_gemm(const GemmTileArgs* args, const KernelDesc* desc);
/// kPackRows: one activation row into the layout of desc->path, with its sum.
void twin_pack_rows(const PackRowsArgs* args, const KernelDesc* desc);
/// kDepthwise: args->pixels output pixels of desc->channels channels and desc->taps taps.
void twin_depthwise(const DepthwiseArgs* args, const KernelDesc* desc);
/// kMaxPool / kAvgPool (desc->op decides).
void twin_pool(const PoolArgs* args, const KernelDesc* desc);
/// kQAdd / kQMul / kRequantize (desc->op decides) over args->blocks * 8 elements.
void twin_elementwise(const ElementwiseArgs* args, const KernelDesc* desc);
/// kClamp.
void twin_clamp(const ClampArgs* args, const KernelDesc* desc);
/// kF32Gemm.
void twin_f32_gemm(const F32GemmArgs* args, const KernelDesc* desc);

/// The twin of kernel kind `op` as a micro-kernel entry point (null for kCount).
const void* twin_entry(KernelOp op);

}  // namespace qrt::jit
