// qrt — AVX512-BF16's conversion and dot product as plain functions, for
// bench/bf16_contract, which compares them with the numerics contract (docs/numerics.md
// says why no kernel uses them).
#pragma once

#include <cstdint>

namespace qrt::jit {

/// vcvtneps2bf16 of one f32 (host_cpu_features().avx512_bf16 only).
uint16_t avx512_bf16_narrow(float f);

/// One lane of vdpbf16ps over a[k]·b[k], k = 0..count-1 in pairs (count even), starting from 0
/// (host_cpu_features().avx512_bf16 only).
float avx512_bf16_dot(const uint16_t* a, const uint16_t* b, int64_t count);

}  // namespace qrt::jit
