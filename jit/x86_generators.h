// qrt — internal: the x86 code generators behind the code cache (jit/asmjit_x86/).
#pragma once

#include <memory>

#include "jit/code_cache.h"
#include "jit/kernel.h"

namespace qrt::jit {

/// Generates the AVX2 body of a quantize or dequantize kernel: it converts `blocks` groups of
/// 8 elements, `void body(const void* in, void* out, size_t blocks)`; the caller converts the
/// remaining n % 8 elements with the scalar twin (jit/ref/numerics.h).
Result<std::shared_ptr<ExecutableCode>> generate_avx2_convert(const KernelDesc& desc);

}  // namespace qrt::jit
