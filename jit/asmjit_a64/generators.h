// qrt — internal to the AArch64 backend: the asmjit a64 generators, each with the ABI of
// jit/core/microkernel.h.
#pragma once

#include <memory>

#include "jit/asmjit_common/asmjit_finish.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"

namespace qrt::jit::a64gen {

using asmjit_common::finish;

/// Rows of every AArch64 GEMM tile (16 columns per panel).
constexpr unsigned kGemmRows = 4;

/// kGemm: one tile (GemmTileArgs) of the mlal (NEON), sdot4 (dot product) or usmmla8 (i8mm)
/// path, 1..4 rows x 1..16 columns.
Result<std::shared_ptr<ExecutableCode>> generate_gemm(const KernelDesc& desc);
/// kQAdd / kQMul / kRequantize (ElementwiseArgs), 8 elements per step; every NEON level.
Result<std::shared_ptr<ExecutableCode>> generate_elementwise(const KernelDesc& desc);

}  // namespace qrt::jit::a64gen
