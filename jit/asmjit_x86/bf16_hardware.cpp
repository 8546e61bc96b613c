// qrt — AVX512-BF16 as plain functions (bf16_hardware.h).
#include "jit/asmjit_x86/bf16_hardware.h"

#include <immintrin.h>

#include <cstring>

namespace qrt::jit {

__attribute__((target("avx512f,avx512vl,avx512bf16"))) uint16_t avx512_bf16_narrow(float f) {
  const __m128bh r = _mm_cvtneps_pbh(_mm_set1_ps(f));
  uint16_t out[8];
  std::memcpy(out, &r, sizeof out);
  return out[0];
}

__attribute__((target("avx512f,avx512vl,avx512bf16"))) float avx512_bf16_dot(const uint16_t* a, const uint16_t* b, int64_t count) {
  __m128 acc = _mm_setzero_ps();
  for (int64_t k = 0; k + 1 < count; k += 2) {
    const __m128i pa = _mm_set1_epi32(int32_t(a[k] | uint32_t(a[k + 1]) << 16));
    const __m128i pb = _mm_set1_epi32(int32_t(b[k] | uint32_t(b[k + 1]) << 16));
    __m128bh va, vb;
    std::memcpy(&va, &pa, sizeof va);
    std::memcpy(&vb, &pb, sizeof vb);
    acc = _mm_dpbf16_ps(acc, va, vb);
  }
  return _mm_cvtss_f32(acc);
}

}  // namespace qrt::jit
