// qrt — the struct-layout record of the LLVM kernel templates: the same expression evaluated
// by clang++ (into the templates' bitcode, kernel_templates.cpp) and by the library's compiler
// (llvm_kernels.cpp), which refuses the templates when the two disagree. No LLVM here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "jit/core/microkernel.h"

namespace qrt::jit::llvm_ir {

/// The sizes of the description and of every argument block, and two field offsets.
inline constexpr std::array<uint64_t, 16> kKernelTemplateAbi = {
    sizeof(KernelDesc),   offsetof(KernelDesc, channels), sizeof(ConvertArgs), sizeof(GemmTileArgs),
    sizeof(PackRowsArgs), sizeof(DepthwiseArgs),          sizeof(PoolArgs),    sizeof(ElementwiseArgs),
    sizeof(ClampArgs),    sizeof(F32GemmArgs),            offsetof(F32GemmArgs, n_padded), sizeof(LutArgs),
    sizeof(F32DwArgs),    sizeof(RequantQ31Args),         offsetof(KernelDesc, single_rounding),
    sizeof(RequantF64Args)};

}  // namespace qrt::jit::llvm_ir
