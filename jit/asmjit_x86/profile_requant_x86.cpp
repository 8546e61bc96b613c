// qrt — the x86 backend's requantization micro-kernels of the numerics profiles
// (jit/core/microkernel.h), written with intrinsics like the other stream kernels: 8 (AVX2) or
// 16 (AVX-512) channels per step, each lane computing exactly what the scalar formula
// computes, so every byte equals the scalar twin's.
//
// kRequantQ31 (TFLite's fixed-point requantization, numerics::requantize_tflite):
// Double rounding, per lane (x an accumulator, M its channel's Q31 multiplier, M >= 0):
//   xs = x << left (vpsllvd: counts of 32 or more give 0, as the twin's wrapping shift does);
//   the doubling high-mul on 64-bit products p of the even and the odd lanes (vpmuldq) as
//   floor((p + 2^30) / 2^31), the quotient's low 32 bits taken by a logical shift (|p| < 2^62,
//   so the quotient fits int32). That is gemmlowp's nudge-and-truncate (2^30, or 1 - 2^30 for
//   a negative product, then division toward zero) in one step: for p = -k < 0 both give
//   -floor((k + 2^30 - 1) / 2^31); ties round toward +inf either way, as AArch64's sqrdmulh
//   does. INT32_MIN · INT32_MIN cannot occur with M >= 0;
//   RoundingDivideByPOT: (h >> right) + (remainder > (mask >> 1) + (h < 0)).
// Single rounding: the 64-bit product plus 2^(total - 1), shifted right arithmetically by
// total = 31 - shift, saturated to int32 (vpsravq and vpminsq on AVX-512; on AVX2 the shift by
// sign flips around vpsrlvq and the saturation by vpcmpgtq).
// Then clamp(v, lo - zo, hi - zo) + zo (no int32 overflow: the bounds are in range) and a
// narrowing store. AVX2 leaves a tail of fewer than 8 channels to the scalar formula.
// The kernel walks the block channel group by channel group: a group's derived constants
// (masks, thresholds, the odd lanes' multipliers, the single-rounding terms) are computed once
// and every row of the block (in cache) reuses them; the odd lanes' quotient goes to the high
// half by one left shift of p + 2^30 (bits 31..62 become 32..63).
//
// kRequantF64 (ONNX's, numerics::requantize_onnx): the accumulator and the f32 multiplier
// widened to f64 exactly, one f64 multiply (the product the twin rounds), rounding to the
// nearest even integer (vroundpd / vrndscalepd), the clamp to [lo - zo, hi - zo] in f64 (the
// multipliers are finite, so no NaN), then an exact conversion to int32 and + zo.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "ir/numerics.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

// One channel by the scalar formula (the AVX2 tails).
inline int32_t requant_lane(const RequantQ31Args& a, int64_t j, int32_t acc, bool single_rounding) {
  const numerics::QuantizedMultiplier m{a.multiplier[j], a.shift[j]};
  const int32_t v = numerics::multiply_by_quantized_multiplier(acc, m, single_rounding);
  return std::min(std::max(v, a.lo_zo[j]), a.hi_zo[j]) + a.zo[j];
}

// ---- AVX2 ----

__attribute__((target("avx2"))) inline __m256i avx2_load(const int32_t* p, int64_t j) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + j));
}

// The rows of `a` (either kind's arguments) on AVX2: step(acc, j) gives channels j..j+7 with
// + zo, 8 channels per step; lane(acc, j) one channel of the tail by the scalar formula.
template <typename Args, typename Step, typename Lane>
__attribute__((target("avx2"))) void avx2_rows(const Args& a, bool is_signed, const Step& step, const Lane& lane) {
  const int64_t full = a.channels / 8 * 8;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int32_t* acc = a.acc + r * a.acc_stride;
    uint8_t* y = static_cast<uint8_t*>(a.y) + r * a.y_stride;
    for (int64_t j = 0; j < full; j += 8) {
      const __m256i v = step(acc, j);
      // In range already: the saturating packs only narrow.
      const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + j), is_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
    }
    for (int64_t j = full; j < a.channels; ++j) y[j] = uint8_t(lane(acc, j));
  }
}

// p >> n per 64-bit lane, arithmetically (AVX2 has no 64-bit arithmetic shift: a logical one
// between sign flips), saturated to int32.
__attribute__((target("avx2"))) inline __m256i avx2_shift_saturate(__m256i p, __m256i n) {
  const __m256i max32 = _mm256_set1_epi64x(INT32_MAX), min32 = _mm256_set1_epi64x(INT32_MIN);
  const __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), p);
  const __m256i q = _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(p, sign), n), sign);
  const __m256i high = _mm256_blendv_epi8(q, max32, _mm256_cmpgt_epi64(q, max32));
  return _mm256_blendv_epi8(high, min32, _mm256_cmpgt_epi64(min32, high));
}

// kRequantQ31 on AVX2, as avx512_q31_groups: groups of 8 channels, each group's constants once,
// then every row; channels past the last whole group by the scalar formula.
template <bool kSingle>
__attribute__((target("avx2"))) void avx2_q31_groups(const RequantQ31Args& a, bool is_signed) {
  const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1), nudge = _mm256_set1_epi64x(int64_t(1) << 30);
  const __m256i one64 = _mm256_set1_epi64x(1), low32 = _mm256_set1_epi64x(0xffffffff);
  const int64_t full = a.channels / 8 * 8;
  for (int64_t j = 0; j < full; j += 8) {
    const __m256i m = avx2_load(a.multiplier, j), s = avx2_load(a.shift, j), m_odd = _mm256_srli_epi64(m, 32);
    const __m256i lo = avx2_load(a.lo_zo, j), hi = avx2_load(a.hi_zo, j), zo = avx2_load(a.zo, j);
    const __m256i left = _mm256_max_epi32(s, zero), right = _mm256_max_epi32(_mm256_sub_epi32(zero, s), zero);
    const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one), half = _mm256_srai_epi32(mask, 1);
    const __m256i total = _mm256_sub_epi32(_mm256_set1_epi32(31), s);  // 1..62
    const __m256i n_even = _mm256_and_si256(total, low32), n_odd = _mm256_srli_epi64(total, 32);
    const __m256i r_even = _mm256_sllv_epi64(one64, _mm256_sub_epi64(n_even, one64));
    const __m256i r_odd = _mm256_sllv_epi64(one64, _mm256_sub_epi64(n_odd, one64));
    for (int64_t r = 0; r < a.rows; ++r) {
      const __m256i x = avx2_load(a.acc + r * a.acc_stride, j);
      __m256i v;
      if constexpr (!kSingle) {
        const __m256i xs = _mm256_sllv_epi32(x, left);
        const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(xs, m), nudge), 31);
        // The odd quotient's low 32 bits (bits 31..62 of p + 2^30) moved to the high half.
        const __m256i odd = _mm256_slli_epi64(_mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(xs, 32), m_odd), nudge), 1);
        const __m256i h = _mm256_blend_epi32(even, odd, 0xAA);
        const __m256i threshold = _mm256_add_epi32(half, _mm256_srli_epi32(h, 31));
        const __m256i up = _mm256_cmpgt_epi32(_mm256_and_si256(h, mask), threshold);  // -1 where rounding up
        v = _mm256_sub_epi32(_mm256_srav_epi32(h, right), up);
      } else {
        const __m256i even = avx2_shift_saturate(_mm256_add_epi64(_mm256_mul_epi32(x, m), r_even), n_even);
        const __m256i odd = avx2_shift_saturate(_mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), m_odd), r_odd), n_odd);
        v = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
      }
      v = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(v, lo), hi), zo);
      // In range already: the saturating packs only narrow.
      const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(a.y) + r * a.y_stride + j),
                       is_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
    }
  }
  for (int64_t r = 0; r < a.rows && full < a.channels; ++r) {
    const int32_t* acc = a.acc + r * a.acc_stride;
    uint8_t* y = static_cast<uint8_t*>(a.y) + r * a.y_stride;
    for (int64_t j = full; j < a.channels; ++j) y[j] = uint8_t(requant_lane(a, j, acc[j], kSingle));
  }
}

// ---- AVX-512 ----

#define QRT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

// The rows of `a` (either kind's arguments) on AVX-512: step(acc, j, k) gives channels
// j..j+15 with + zo, lanes outside mask k loaded as 0; the last step runs under a mask, so lanes
// past the row neither load nor store.
template <typename Args, typename Step>
QRT_AVX512 void avx512_rows(const Args& a, const Step& step) {
  const int64_t full = a.channels / 16 * 16;
  const __mmask16 tail = __mmask16((1u << (a.channels - full)) - 1);
  for (int64_t r = 0; r < a.rows; ++r) {
    const int32_t* acc = a.acc + r * a.acc_stride;
    uint8_t* y = static_cast<uint8_t*>(a.y) + r * a.y_stride;
    for (int64_t j = 0; j < full; j += 16) {
      // In range already: vpmovdb only narrows (in a register: its masked store form is slow).
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + j), _mm512_cvtepi32_epi8(step(acc, j, 0xffff)));
    }
    if (tail) _mm512_mask_cvtepi32_storeu_epi8(y + full, tail, step(acc, full, tail));
  }
}

// kRequantQ31 channel group by channel group: each group's constants (the shifts' masks and
// thresholds, the odd lanes' multipliers, the single-rounding terms) are worked out once, then
// every row of the block runs the group (rows stride through a block that is in cache). The
// per-row formula is avx512_requant16's.
template <bool kSingle>
QRT_AVX512 void avx512_q31_groups(const RequantQ31Args& a) {
  const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1), nudge = _mm512_set1_epi64(int64_t(1) << 30);
  const __m512i one64 = _mm512_set1_epi64(1), low32 = _mm512_set1_epi64(0xffffffff);
  const __m512i max32 = _mm512_set1_epi64(INT32_MAX), min32 = _mm512_set1_epi64(INT32_MIN);
  constexpr __mmask16 kOdd = 0xAAAA;
  for (int64_t j = 0; j < a.channels; j += 16) {
    const __mmask16 k = j + 16 <= a.channels ? __mmask16(0xffff) : __mmask16((1u << (a.channels - j)) - 1);
    const __m512i m = _mm512_maskz_loadu_epi32(k, a.multiplier + j), s = _mm512_maskz_loadu_epi32(k, a.shift + j);
    const __m512i lo = _mm512_maskz_loadu_epi32(k, a.lo_zo + j), hi = _mm512_maskz_loadu_epi32(k, a.hi_zo + j);
    const __m512i zo = _mm512_maskz_loadu_epi32(k, a.zo + j), m_odd = _mm512_srli_epi64(m, 32);
    // Double rounding: the left and right shifts, the remainder mask and half of it.
    const __m512i left = _mm512_max_epi32(s, zero), right = _mm512_max_epi32(_mm512_sub_epi32(zero, s), zero);
    const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, right), one), half = _mm512_srai_epi32(mask, 1);
    // Single rounding: the shift total = 31 - shift (1..62) of the even and odd lanes, and 2^(total - 1).
    const __m512i total = _mm512_sub_epi32(_mm512_set1_epi32(31), s);
    const __m512i n_even = _mm512_and_si512(total, low32), n_odd = _mm512_srli_epi64(total, 32);
    const __m512i r_even = _mm512_sllv_epi64(one64, _mm512_sub_epi64(n_even, one64));
    const __m512i r_odd = _mm512_sllv_epi64(one64, _mm512_sub_epi64(n_odd, one64));
    for (int64_t r = 0; r < a.rows; ++r) {
      const __m512i x = _mm512_maskz_loadu_epi32(k, a.acc + r * a.acc_stride + j);
      __m512i v;
      if constexpr (!kSingle) {
        const __m512i xs = _mm512_sllv_epi32(x, left);
        const __m512i even = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epi32(xs, m), nudge), 31);
        // The odd quotient's low 32 bits (bits 31..62 of p + 2^30) moved to the high half.
        const __m512i odd = _mm512_slli_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(xs, 32), m_odd), nudge), 1);
        const __m512i h = _mm512_mask_blend_epi32(kOdd, even, odd);
        const __m512i threshold = _mm512_add_epi32(half, _mm512_srli_epi32(h, 31));
        const __mmask16 up = _mm512_cmpgt_epi32_mask(_mm512_and_si512(h, mask), threshold);
        const __m512i q = _mm512_srav_epi32(h, right);
        v = _mm512_mask_add_epi32(q, up, q, one);
      } else {
        const __m512i pe = _mm512_add_epi64(_mm512_mul_epi32(x, m), r_even);
        const __m512i po = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), m_odd), r_odd);
        const __m512i even = _mm512_max_epi64(_mm512_min_epi64(_mm512_srav_epi64(pe, n_even), max32), min32);
        const __m512i odd = _mm512_max_epi64(_mm512_min_epi64(_mm512_srav_epi64(po, n_odd), max32), min32);
        v = _mm512_mask_blend_epi32(kOdd, even, _mm512_slli_epi64(odd, 32));
      }
      v = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi), zo);
      uint8_t* y = static_cast<uint8_t*>(a.y) + r * a.y_stride + j;
      // In range already: vpmovdb only narrows (in a register: its masked store form is slow).
      if (k == 0xffff) _mm_storeu_si128(reinterpret_cast<__m128i*>(y), _mm512_cvtepi32_epi8(v));
      else _mm512_mask_cvtepi32_storeu_epi8(y, k, v);
    }
  }
}

// ---- kRequantF64 ----

__attribute__((target("avx2"))) inline __m128i avx2_f64_half(__m128i acc, __m128 m, __m128i lo, __m128i hi) {
  __m256d v = _mm256_mul_pd(_mm256_cvtepi32_pd(acc), _mm256_cvtps_pd(m));
  v = _mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm256_min_pd(_mm256_max_pd(v, _mm256_cvtepi32_pd(lo)), _mm256_cvtepi32_pd(hi));
  return _mm256_cvttpd_epi32(v);  // an integer in int32's range: exact
}

struct Avx2F64Step {
  const RequantF64Args& a;
  __attribute__((target("avx2"))) __m256i operator()(const int32_t* acc, int64_t j) const {
    auto load = [](const int32_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    const __m128i v0 = avx2_f64_half(load(acc + j), _mm_loadu_ps(a.multiplier + j), load(a.lo_zo + j), load(a.hi_zo + j));
    const __m128i v1 =
        avx2_f64_half(load(acc + j + 4), _mm_loadu_ps(a.multiplier + j + 4), load(a.lo_zo + j + 4), load(a.hi_zo + j + 4));
    return _mm256_add_epi32(_mm256_set_m128i(v1, v0), avx2_load(a.zo, j));
  }
};

struct F64Lane {
  const RequantF64Args& a;
  int64_t operator()(const int32_t* acc, int64_t j) const {
    return numerics::requantize_onnx(acc[j], a.multiplier[j], a.zo[j], int64_t(a.lo_zo[j]) + a.zo[j],
                                     int64_t(a.hi_zo[j]) + a.zo[j]);
  }
};

QRT_AVX512 inline __m256i avx512_f64_half(__m256i acc, __m256 m, __m256i lo, __m256i hi) {
  __m512d v = _mm512_mul_pd(_mm512_cvtepi32_pd(acc), _mm512_cvtps_pd(m));
  v = _mm512_roundscale_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm512_min_pd(_mm512_max_pd(v, _mm512_cvtepi32_pd(lo)), _mm512_cvtepi32_pd(hi));
  return _mm512_cvttpd_epi32(v);  // an integer in int32's range: exact
}

QRT_AVX512 inline __m512i avx512_f64_step(const RequantF64Args& a, const int32_t* acc, int64_t j, __mmask16 k) {
  const __m512i x = _mm512_maskz_loadu_epi32(k, acc + j), lo = _mm512_maskz_loadu_epi32(k, a.lo_zo + j);
  const __m512i hi = _mm512_maskz_loadu_epi32(k, a.hi_zo + j);
  const __m512 m = _mm512_maskz_loadu_ps(k, a.multiplier + j);
  const __m256i v0 = avx512_f64_half(_mm512_castsi512_si256(x), _mm512_castps512_ps256(m), _mm512_castsi512_si256(lo),
                                     _mm512_castsi512_si256(hi));
  const __m256i v1 = avx512_f64_half(_mm512_extracti64x4_epi64(x, 1),
                                     _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(m), 1)),
                                     _mm512_extracti64x4_epi64(lo, 1), _mm512_extracti64x4_epi64(hi, 1));
  return _mm512_add_epi32(_mm512_inserti64x4(_mm512_castsi256_si512(v0), v1, 1), _mm512_maskz_loadu_epi32(k, a.zo + j));
}

// Masked lanes load 0: multiplier 0, bounds 0, so nothing unusual reaches the conversion.
struct Avx512F64Step {
  const RequantF64Args& a;
  QRT_AVX512 __m512i operator()(const int32_t* acc, int64_t j, __mmask16 k) const { return avx512_f64_step(a, acc, j, k); }
};

}  // namespace

void avx2_requant_f64(const RequantF64Args* args, const KernelDesc* desc) {
  avx2_rows(*args, desc->storage_signed, Avx2F64Step{*args}, F64Lane{*args});
}

void avx512_requant_f64(const RequantF64Args* args, const KernelDesc*) { avx512_rows(*args, Avx512F64Step{*args}); }

void avx2_requant_q31(const RequantQ31Args* args, const KernelDesc* desc) {
  if (desc->single_rounding) return avx2_q31_groups<true>(*args, desc->storage_signed);
  avx2_q31_groups<false>(*args, desc->storage_signed);
}

void avx512_requant_q31(const RequantQ31Args* args, const KernelDesc* desc) {
  if (desc->single_rounding) return avx512_q31_groups<true>(*args);
  avx512_q31_groups<false>(*args);
}

}  // namespace qrt::jit::x86gen
