// qrt — internal to the AArch64 backend: the asmjit a64 generators, each with the ABI of
// jit/core/microkernel.h.
#pragma once

#include <memory>
#include <string>

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
/// Whether quantize/dequantize parameters are in the range the NEON kernels compute exactly
/// (zero point and bounds within ±2^16): "" or why not.
inline std::string convert_why_not(const KernelDesc& d) {
  const bool small = d.qmin <= d.qmax && d.zero_point >= -65536 && d.zero_point <= 65536 && d.qmin >= -65536 &&
                     d.qmax <= 65536;
  return small ? "" : "zero point or bounds beyond +-65536";
}
/// kQuantize / kDequantize (ConvertArgs), 8 elements per step; convert_why_not(desc) == "".
Result<std::shared_ptr<ExecutableCode>> generate_convert(const KernelDesc& desc);
/// kQAdd / kQMul / kRequantize (ElementwiseArgs), 8 elements per step; every NEON level.
Result<std::shared_ptr<ExecutableCode>> generate_elementwise(const KernelDesc& desc);

}  // namespace qrt::jit::a64gen
