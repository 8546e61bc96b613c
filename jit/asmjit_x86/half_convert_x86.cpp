// qrt — bf16/f16 array conversions with AVX2 and F16C (jit/core/half_conversions.h): eight
// lanes per step, the bits of the portable code in jit/ops/float_widening.cpp.
// vcvtph2ps and vcvtps2ph round to nearest even whatever MXCSR says (the immediate picks the
// mode; DAZ would only touch f32 subnormals, which narrow to ±0 either way). But vcvtph2ps
// quiets a signalling NaN and vcvtps2ph keeps a NaN's payload, where qrt keeps the first and
// makes the second canonical, so the f16 functions stop at a block holding an f16 inf/NaN or
// an f32 NaN and leave it to the portable code. bf16 is shifts and, for narrowing, the
// nearest-even formula on the bits with a blend for NaN.
#include <immintrin.h>

#include "jit/asmjit_x86/x86_backend.h"
#include "jit/core/isa.h"

namespace qrt::jit {

namespace {

__attribute__((target("avx2,f16c"))) int64_t widen_f16_x8(const uint8_t* src, int64_t count, float* dst) {
  const __m128i exp_mask = _mm_set1_epi16(0x7C00);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    const __m128i special = _mm_cmpeq_epi16(_mm_and_si128(h, exp_mask), exp_mask);
    if (!_mm_testz_si128(special, special)) break;
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  return i;
}

__attribute__((target("avx2,f16c"))) int64_t narrow_f16_x8(const float* src, int64_t count, uint8_t* dst) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) break;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  return i;
}

__attribute__((target("avx2"))) int64_t widen_bf16_x8(const uint8_t* src, int64_t count, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  return i;
}

// Nearest even on the bits (a carry moves into the exponent; the sum cannot wrap, as only NaNs
// lie that high); a NaN keeps its sign and top payload and turns quiet.
__attribute__((target("avx2"))) int64_t narrow_bf16_x8(const float* src, int64_t count, uint8_t* dst) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
  const __m256i half = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(half, odd)), 16);
    const __m256i r = _mm256_blendv_epi8(rounded, _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet), nan);
    // vpackusdw packs within each 128-bit half; the permute joins the halves' results.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm256_castsi256_si128(packed));
  }
  return i;
}

constexpr HalfConversions kAvx2F16c = {"avx2+f16c", 8, widen_bf16_x8, widen_f16_x8, narrow_bf16_x8, narrow_f16_x8};

}  // namespace

const HalfConversions* x86_half_conversions() {
  const CpuFeatures& f = host_cpu_features();
  return f.avx2 && f.f16c ? &kAvx2F16c : nullptr;
}

}  // namespace qrt::jit
