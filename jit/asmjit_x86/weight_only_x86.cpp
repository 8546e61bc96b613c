// qrt — the x86 backend's weight-only matmul micro-kernels (kWoGemm), written with intrinsics
// like intrinsics_avx2.cpp: the weights stay packed (8 or 4 bits) and are dequantized in
// registers, f32(q − zp) · scale per block (rounded to bf16 or f16 where the weights' expressed
// type is: KernelDesc::weight_round), then multiplied and added in the reference's order
// (one rounding each, no FMA: -ffp-contract=off) with the columns across the lanes, so every
// output is bit-exact with the scalar twin (jit/ref/twins.cpp) and the reference.
//   avx512-vnni: 64 columns (4 zmm) x up to 4 rows per step, masked column tails.
//   avx2:        16 columns (2 ymm) x up to 4 rows per step, tails through a staging copy.
// Weight rows are kk·w_stride bytes apart (the constant's own row-major layout). K is walked
// in chunks of rows (for_each_wo_chunk, jit/core/weight_only_chunks.h), all column strips of a chunk before the next, with the
// partial sums kept in y between chunks; bias and clamp come with the last chunk.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "jit/asmjit_x86/generators.h"
#include "jit/core/weight_only_chunks.h"

namespace qrt::jit::x86gen {

namespace {

constexpr int64_t kPrefetchBytes = 256;  // how far along its row an 8-bit step prefetches
// (a 4-bit AVX-512 step prefetches its place in the next chunk instead: beyond the LLC that ran
// the 4096x11008 stack at 5.8 / 9.0 GB/s with 1 / 2 threads against 5.0 / 6.8 along the row,
// while 8-bit weights ran best along the row)

using KChunk = WoChunk;

#define QRT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define QRT_AVX2 __attribute__((target("avx2")))
// AVX2 tiles that round weights to f16 (vcvtps2ph): the backend requires F16C for them.
#define QRT_AVX2_F16C __attribute__((target("avx2,f16c")))

// KernelDesc::weight_round as a template argument.
constexpr int kRoundNone = 0, kRoundBf16 = 1, kRoundF16 = 2;

// bfloat16 rounding on the bits (twin::round_to_bf16): + 0x7FFF + the lowest kept bit, the
// low half cleared. A dequantized weight is NaN only as the product 0 · inf (a scale that is
// inf in f32), the default NaN 0xFFC00000, which this keeps a NaN; so no NaN test.
QRT_AVX512 inline __m512 round_bf16_16(__m512 w) {
  const __m512i b = _mm512_castps_si512(w);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
  const __m512i r = _mm512_and_si512(_mm512_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7FFF)), lsb),
                                     _mm512_set1_epi32(int32_t(0xFFFF0000u)));
  return _mm512_castsi512_ps(r);
}

template <int kRound>
QRT_AVX512 inline __m512 round_weights16(__m512 w) {
  if constexpr (kRound == kRoundBf16) return round_bf16_16(w);
  if constexpr (kRound == kRoundF16) return _mm512_cvtph_ps(_mm512_cvtps_ph(w, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  return w;
}

template <int kRound>
QRT_AVX2_F16C inline __m256 round_weights8(__m256 w) {
  if constexpr (kRound == kRoundBf16) {
    const __m256i b = _mm256_castps_si256(w);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7FFF)), lsb),
                                       _mm256_set1_epi32(int32_t(0xFFFF0000u)));
    return _mm256_castsi256_ps(r);  // (no NaN test: see round_bf16_16)
  }
  if constexpr (kRound == kRoundF16) return _mm256_cvtph_ps(_mm256_cvtps_ph(w, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  return w;
}

// ---- AVX-512: 64 columns per step ----

// Stored weights of columns [0, 64) of one row (cols valid ones), as 64 sign- or
// zero-extended bytes in column order.
template <int kBits, bool kSigned>
QRT_AVX512 inline __m512i load_row64(const uint8_t* row, int64_t cols) {
  if constexpr (kBits == 8) {
    const __mmask64 m = cols >= 64 ? ~__mmask64(0) : (__mmask64(1) << cols) - 1;
    return _mm512_maskz_loadu_epi8(m, row);
  } else {
    const int64_t bytes = std::min<int64_t>(32, (cols + 1) / 2);
    const __mmask32 m = bytes >= 32 ? ~__mmask32(0) : (__mmask32(1) << bytes) - 1;
    // Each byte to a 16-bit lane, then (low nibble) | (high nibble << 8): the bytes of the
    // lanes are columns 2i, 2i + 1, i.e. column order.
    const __m512i b = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(m, row));
    const __m512i lo = _mm512_and_si512(b, _mm512_set1_epi16(0x0F));
    const __m512i hi = _mm512_slli_epi16(_mm512_srli_epi16(b, 4), 8);
    __m512i v = _mm512_or_si512(lo, hi);
    if constexpr (kSigned) {  // (v ^ 8) − 8 sign-extends a nibble within its byte
      const __m512i eight = _mm512_set1_epi8(8);
      v = _mm512_sub_epi8(_mm512_xor_si512(v, eight), eight);
    }
    return v;
  }
}

// The 16 columns of quarter c of 64 stored bytes as int32.
template <bool kSigned>
QRT_AVX512 inline __m512i widen_quarter(__m512i bytes, int c) {
  __m128i q;
  switch (c) {
    case 0: q = _mm512_extracti32x4_epi32(bytes, 0); break;
    case 1: q = _mm512_extracti32x4_epi32(bytes, 1); break;
    case 2: q = _mm512_extracti32x4_epi32(bytes, 2); break;
    default: q = _mm512_extracti32x4_epi32(bytes, 3); break;
  }
  return kSigned ? _mm512_cvtepi8_epi32(q) : _mm512_cvtepu8_epi32(q);
}

QRT_AVX512 inline __m512 clamp16(__m512 v, __m512 lo, __m512 hi) {
  // v < lo ? lo : v > hi ? hi : v — ordered compares, so NaN passes.
  v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), v, lo);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), v, hi);
}

template <int kBits, bool kSigned, bool kZp, int kRound, int kRows>
QRT_AVX512 void avx512_wo_tile(const WoGemmArgs& a, int64_t r0, int64_t j0, const KChunk& kc) {
  const int64_t cols = std::min<int64_t>(64, a.n - j0);
  __mmask16 mask[4];
  #pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    const int64_t left = cols - 16 * c;
    mask[c] = left >= 16 ? __mmask16(0xFFFF) : left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1);
  }
  // The partial sums of earlier chunks wait in y (stored and reloaded exactly).
  __m512 acc[kRows][4];
  #pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      acc[r][c] = kc.first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask[c], a.y + (r0 + r) * a.y_stride + j0 + 16 * c);
    }
  }
  const uint8_t* wcol = a.w + (kBits == 8 ? j0 : j0 / 2);
  const float* xr = a.x + r0 * a.x_stride;
  {
    const int64_t p = kc.k0 / a.block * a.p_stride + j0;
    __m512 scale[4];
    __m512i zp[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    #pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      scale[c] = _mm512_maskz_loadu_ps(mask[c], a.scales + p + 16 * c);
      if constexpr (kZp) zp[c] = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(mask[c], a.zps + p + 16 * c));
    }
    // 4 bits: f32(q − zp) as (2^23 + v) − (2^23 + zp), exact, where 2^23 + v is v or-ed into
    // the mantissa of 2^23 (v ^ 8 for signed storage: then 8 more is subtracted).
    __mmask8 byte_mask[4];
    __m512 offset[4];
    if constexpr (kBits == 4) {
      const float base = 8388608.0f + (kSigned ? 8.0f : 0.0f);
      #pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const int64_t left = std::clamp<int64_t>((cols - 16 * c + 1) / 2, 0, 8);
        byte_mask[c] = __mmask8((1u << left) - 1);
        offset[c] = kZp ? _mm512_add_ps(_mm512_cvtepi32_ps(zp[c]), _mm512_set1_ps(base)) : _mm512_set1_ps(base);
      }
    }
    const __m512i low_nibble = _mm512_set1_epi32(0x0F);
    const __m512i exponent = _mm512_set1_epi32(kSigned ? 0x4B000008 : 0x4B000000);
    for (int64_t kk = kc.k0; kk < kc.k1; ++kk) {
      const uint8_t* row = wcol + kk * a.w_stride;
      _mm_prefetch(reinterpret_cast<const char*>(row + (kBits == 4 ? kWoChunkRows * a.w_stride : kPrefetchBytes)), _MM_HINT_T0);
      __m512 w[4];
      if constexpr (kBits == 4) {
        #pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
          // 8 bytes -> (b0, b0 >> 4, b1, b1 >> 4, ...) -> 16 dword lanes, the low nibble kept.
          const __m128i b = _mm_maskz_loadu_epi8(byte_mask[c], row + 8 * c);
          const __m512i d = _mm512_cvtepu8_epi32(_mm_unpacklo_epi8(b, _mm_srli_epi16(b, 4)));
          // (d & 0xF) | exponent, or (d & 0xF) ^ (exponent | 8) for signed storage.
          const __m512i v = _mm512_ternarylogic_epi32(d, low_nibble, exponent, kSigned ? 0x6A : 0xEA);
          w[c] = round_weights16<kRound>(_mm512_mul_ps(_mm512_sub_ps(_mm512_castsi512_ps(v), offset[c]), scale[c]));
        }
      } else {
        const __m512i bytes = load_row64<kBits, kSigned>(row, cols);
        #pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
          __m512i q = widen_quarter<kSigned>(bytes, c);
          if constexpr (kZp) q = _mm512_sub_epi32(q, zp[c]);
          w[c] = round_weights16<kRound>(_mm512_mul_ps(_mm512_cvtepi32_ps(q), scale[c]));
        }
      }
      #pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        const __m512 xv = _mm512_set1_ps(xr[r * a.x_stride + kk]);
        #pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_add_ps(acc[r][c], _mm512_mul_ps(xv, w[c]));
      }
    }
  }
  if (!kc.last) {
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      #pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) _mm512_mask_storeu_ps(a.y + (r0 + r) * a.y_stride + j0 + 16 * c, mask[c], acc[r][c]);
    }
    return;
  }
  const __m512 lo = _mm512_set1_ps(a.lo), hi = _mm512_set1_ps(a.hi);
  #pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    if (!mask[c]) continue;
    const __m512 bias = a.bias ? _mm512_maskz_loadu_ps(mask[c], a.bias + j0 + 16 * c) : _mm512_setzero_ps();
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      __m512 v = acc[r][c];
      if (a.bias) v = _mm512_add_ps(v, bias);
      _mm512_mask_storeu_ps(a.y + (r0 + r) * a.y_stride + j0 + 16 * c, mask[c], clamp16(v, lo, hi));
    }
  }
}

template <int kBits, bool kSigned, bool kZp, int kRound>
void avx512_wo_run(const WoGemmArgs& a) {
  run_wo_tiles<64>(a, [&](auto rows, int64_t r0, int64_t j0, const KChunk& kc) {
    avx512_wo_tile<kBits, kSigned, kZp, kRound, decltype(rows)::value>(a, r0, j0, kc);
  });
}

// ---- AVX2: 16 columns per step ----

// Stored weights of columns [0, 16) of one row as 16 sign- or zero-extended bytes.
template <int kBits, bool kSigned>
QRT_AVX2 inline __m128i load_row16(const uint8_t* row, int64_t cols) {
  const int64_t bytes = kBits == 8 ? std::min<int64_t>(16, cols) : std::min<int64_t>(8, (cols + 1) / 2);
  alignas(16) uint8_t stage[16] = {};
  const uint8_t* src = row;
  if (bytes < (kBits == 8 ? 16 : 8)) {  // a tail: never read past the row's last byte
    std::memcpy(stage, row, size_t(bytes));
    src = stage;
  }
  if constexpr (kBits == 8) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  } else {
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src)));
    const __m128i lo = _mm_and_si128(b, _mm_set1_epi16(0x0F));
    const __m128i hi = _mm_slli_epi16(_mm_srli_epi16(b, 4), 8);
    __m128i v = _mm_or_si128(lo, hi);
    if constexpr (kSigned) {
      const __m128i eight = _mm_set1_epi8(8);
      v = _mm_sub_epi8(_mm_xor_si128(v, eight), eight);
    }
    return v;
  }
}

template <bool kSigned>
QRT_AVX2 inline __m256i widen_half(__m128i bytes, int h) {
  const __m128i q = h == 0 ? bytes : _mm_srli_si128(bytes, 8);
  return kSigned ? _mm256_cvtepi8_epi32(q) : _mm256_cvtepu8_epi32(q);
}

QRT_AVX2 inline __m256 clamp8(__m256 v, __m256 lo, __m256 hi) {
  v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, lo, _CMP_LT_OQ));
  return _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GT_OQ));
}

// 8 floats from p (cols of them valid; the rest read as 0).
QRT_AVX2 inline __m256 load8f(const float* p, int64_t cols) {
  if (cols >= 8) return _mm256_loadu_ps(p);
  alignas(32) float stage[8] = {};
  if (cols > 0) std::memcpy(stage, p, size_t(cols) * sizeof(float));
  return _mm256_load_ps(stage);
}

QRT_AVX2 inline __m256i load8zp(const int16_t* p, int64_t cols) {
  alignas(16) int16_t stage[8] = {};
  if (cols > 0) std::memcpy(stage, p, size_t(std::min<int64_t>(cols, 8)) * sizeof(int16_t));
  return _mm256_cvtepi16_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(stage)));
}

QRT_AVX2 inline void store8f(float* p, __m256 v, int64_t cols) {
  if (cols >= 8) {
    _mm256_storeu_ps(p, v);
  } else if (cols > 0) {
    alignas(32) float stage[8];
    _mm256_store_ps(stage, v);
    std::memcpy(p, stage, size_t(cols) * sizeof(float));
  }
}

template <int kBits, bool kSigned, bool kZp, int kRound, int kRows>
QRT_AVX2_F16C void avx2_wo_tile(const WoGemmArgs& a, int64_t r0, int64_t j0, const KChunk& kc) {
  const int64_t cols = std::min<int64_t>(16, a.n - j0);
  __m256 acc[kRows][2];
  #pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 4
    for (int h = 0; h < 2; ++h) {
      acc[r][h] = kc.first ? _mm256_setzero_ps() : load8f(a.y + (r0 + r) * a.y_stride + j0 + 8 * h, cols - 8 * h);
    }
  }
  const uint8_t* wcol = a.w + (kBits == 8 ? j0 : j0 / 2);
  const float* xr = a.x + r0 * a.x_stride;
  {
    const int64_t p = kc.k0 / a.block * a.p_stride + j0;
    const __m256 scale[2] = {load8f(a.scales + p, cols), load8f(a.scales + p + 8, cols - 8)};
    __m256i zp[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    if constexpr (kZp) {
      zp[0] = load8zp(a.zps + p, cols);
      zp[1] = load8zp(a.zps + p + 8, cols - 8);
    }
    for (int64_t kk = kc.k0; kk < kc.k1; ++kk) {
      const uint8_t* row = wcol + kk * a.w_stride;
      _mm_prefetch(reinterpret_cast<const char*>(row + kPrefetchBytes), _MM_HINT_T0);
      const __m128i bytes = load_row16<kBits, kSigned>(row, cols);
      __m256 w[2];
      #pragma GCC unroll 4
      for (int h = 0; h < 2; ++h) {
        __m256i q = widen_half<kSigned>(bytes, h);
        if constexpr (kZp) q = _mm256_sub_epi32(q, zp[h]);
        w[h] = round_weights8<kRound>(_mm256_mul_ps(_mm256_cvtepi32_ps(q), scale[h]));
      }
      #pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        const __m256 xv = _mm256_set1_ps(xr[r * a.x_stride + kk]);
        acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_mul_ps(xv, w[0]));
        acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_mul_ps(xv, w[1]));
      }
    }
  }
  if (!kc.last) {
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      #pragma GCC unroll 4
      for (int h = 0; h < 2; ++h) store8f(a.y + (r0 + r) * a.y_stride + j0 + 8 * h, acc[r][h], cols - 8 * h);
    }
    return;
  }
  const __m256 lo = _mm256_set1_ps(a.lo), hi = _mm256_set1_ps(a.hi);
  #pragma GCC unroll 4
  for (int h = 0; h < 2; ++h) {
    const int64_t hc = cols - 8 * h;
    if (hc <= 0) continue;
    const __m256 bias = a.bias ? load8f(a.bias + j0 + 8 * h, hc) : _mm256_setzero_ps();
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      __m256 v = acc[r][h];
      if (a.bias) v = _mm256_add_ps(v, bias);
      store8f(a.y + (r0 + r) * a.y_stride + j0 + 8 * h, clamp8(v, lo, hi), hc);
    }
  }
}

template <int kBits, bool kSigned, bool kZp, int kRound>
void avx2_wo_run(const WoGemmArgs& a) {
  run_wo_tiles<16>(a, [&](auto rows, int64_t r0, int64_t j0, const KChunk& kc) {
    avx2_wo_tile<kBits, kSigned, kZp, kRound, decltype(rows)::value>(a, r0, j0, kc);
  });
}

// One instantiation per (bits, signedness, zero points, weight rounding) of `run`.
template <template <int, bool, bool, int> class Run, int kRound>
void dispatch_rounded(const WoGemmArgs& a, const KernelDesc& d) {
  const bool s = d.storage_signed, z = d.weight_zp;
  if (d.weight_bits == 8) {
    if (s) z ? Run<8, true, true, kRound>::go(a) : Run<8, true, false, kRound>::go(a);
    else z ? Run<8, false, true, kRound>::go(a) : Run<8, false, false, kRound>::go(a);
  } else {
    if (s) z ? Run<4, true, true, kRound>::go(a) : Run<4, true, false, kRound>::go(a);
    else z ? Run<4, false, true, kRound>::go(a) : Run<4, false, false, kRound>::go(a);
  }
}

template <template <int, bool, bool, int> class Run>
void dispatch(const WoGemmArgs& a, const KernelDesc& d) {
  switch (d.weight_round) {
    case WeightRound::kNone: return dispatch_rounded<Run, kRoundNone>(a, d);
    case WeightRound::kBf16: return dispatch_rounded<Run, kRoundBf16>(a, d);
    case WeightRound::kF16: return dispatch_rounded<Run, kRoundF16>(a, d);
  }
}

template <int kBits, bool kSigned, bool kZp, int kRound>
struct Avx512Run {
  static void go(const WoGemmArgs& a) { avx512_wo_run<kBits, kSigned, kZp, kRound>(a); }
};

template <int kBits, bool kSigned, bool kZp, int kRound>
struct Avx2Run {
  static void go(const WoGemmArgs& a) { avx2_wo_run<kBits, kSigned, kZp, kRound>(a); }
};

}  // namespace

void avx512_wo_gemm(const WoGemmArgs* args, const KernelDesc* desc) { dispatch<Avx512Run>(*args, *desc); }

void avx2_wo_gemm(const WoGemmArgs* args, const KernelDesc* desc) { dispatch<Avx2Run>(*args, *desc); }

}  // namespace qrt::jit::x86gen
