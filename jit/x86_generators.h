// qrt — internal: the x86 code generators behind the code cache (jit/asmjit_x86/).
#pragma once

#include <memory>

#include "jit/code_cache.h"
#include "jit/kernel.h"

namespace qrt::jit {

/// Generates the AVX2 body of a quantize or dequantize kernel: it converts `blocks` groups of
/// 8 elements, `void body(const void* in, void* out, size_t blocks)`; the caller converts the
/// remaining n % 8 elements with the scalar twin (ir/numerics.h).
Result<std::shared_ptr<ExecutableCode>> generate_avx2_convert(const KernelDesc& desc);

/// Generates a GEMM tile kernel (KernelOp::kGemm): `void tile(const GemmTileArgs*)`, see
/// jit/gemm_pack.h.
Result<std::shared_ptr<ExecutableCode>> generate_avx2_gemm(const KernelDesc& desc);

/// Generates a depthwise-convolution kernel (KernelOp::kDepthwise), see jit/depthwise_kernels.h.
Result<std::shared_ptr<ExecutableCode>> generate_avx2_depthwise(const KernelDesc& desc);

/// Generates a quantized add / mul / requantize kernel, see jit/elementwise_kernels.h.
Result<std::shared_ptr<ExecutableCode>> generate_avx2_elementwise(const KernelDesc& desc);

/// Generates a max / average pooling kernel, see jit/pool_kernels.h.
Result<std::shared_ptr<ExecutableCode>> generate_avx2_pool(const KernelDesc& desc);

}  // namespace qrt::jit
