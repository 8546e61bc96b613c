// qrt — the x86 backend's dynamic-i8 matmul micro-kernels (kDynGemm), written with intrinsics
// like weight_only_x86.cpp. The activations arrive quantized (i8 per row and block of k, with
// their scale and Σ q); the weights stay packed in kDynGemm's record layout (microkernel.h), as
// unsigned quads u, 4 or 8 bits. Each block's integer sums are exact:
//   avx512-vnni: vpdpbusd (u8 weights × s8 activations → s32), 64 columns (4 zmm) × up to 4 rows;
//   avx2-vnni:   {vex} vpdpbusd on ymm, 16 columns (2 ymm) × up to 2 rows;
//   avx2:        vpmaddubsw + vpmaddwd; 4-bit u ≤ 15 times |q| ≤ 127 never saturates a pair
//                (2·15·127 = 3810); 8-bit u is split into nibbles, u = 16·h + l, each exact.
// The block term f32(t) · f32(d · s) is then added to the row's f32 sums in block order, exactly
// as numerics::dynamic_i8_block_term and the reference do (-ffp-contract=off: no FMA).
//
// Loop order: a strip of 64 columns, a chunk of up to 64 rows, then block by block (one record,
// 1.1–1.3 KiB for 4-bit blocks of 32) every row group of the chunk, so a record is read from
// memory once per chunk and the rows' f32 sums wait in a 16 KiB buffer in L1.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ir/numerics_dynamic.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

constexpr int64_t kRowChunk = 64;  // rows whose f32 sums wait in the buffer (64 x 64 floats)

#define QRT_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

inline int32_t quad_at(const int8_t* q) {
  int32_t v;
  std::memcpy(&v, q, 4);
  return v;
}

// What a call's records hold (microkernel.h): where the parameters are, f16 or f32 scales,
// z' bytes or one z' for every column.
struct RecordFormat {
  DynRecordLayout layout;
  bool scale_f16 = false, zps = false;
  int32_t common_zp = 0;  ///< every column's z' without zps (KernelDesc::zero_point)
};

RecordFormat record_format(const DynGemmArgs& a, const KernelDesc& d) {
  return {dyn_record_layout(a.block_padded, d), d.scale_f16, d.weight_zp, d.zero_point};
}

// The records are one sequential stream (a strip's blocks, then the next strip's). A GEMV
// spends little time per record, and the hardware prefetcher alone kept fewer lines in flight
// than one core can: each record's lines are requested kPrefetchBytes ahead of their use.
// (Prefetches past the end of the records do not fault.)
constexpr int64_t kPrefetchBytes = 4096;

inline void prefetch_ahead(const uint8_t* rec, int64_t record) {
  for (int64_t i = 0; i < record; i += 64) _mm_prefetch(reinterpret_cast<const char*>(rec + kPrefetchBytes + i), _MM_HINT_T0);
}

// ---- AVX-512 VNNI: 64 columns, up to 4 rows ----

template <int kBits, int kRows>
QRT_AVX512VNNI inline void avx512_block(const DynGemmArgs& a, const RecordFormat& f, const uint8_t* rec, int64_t b, int64_t r0,
                                        float* sums) {
  constexpr int64_t kGroupBytes = kBits == 4 ? 256 : 512;
  const int64_t groups = a.block_padded / 8;
  __m512i acc[kRows][4];
  #pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 4
    for (int s = 0; s < 4; ++s) acc[r][s] = _mm512_setzero_si512();
  }
  const int8_t* xq[kRows];
  for (int r = 0; r < kRows; ++r) xq[r] = a.xq + (r0 + r) * a.x_stride + b * a.block_padded;
  const __m512i low_nibbles = _mm512_set1_epi8(0x0F);
  for (int64_t g = 0; g < groups; ++g) {
    const uint8_t* gp = rec + g * kGroupBytes;
    __m512i first[kRows], second[kRows];
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      first[r] = _mm512_set1_epi32(quad_at(xq[r] + 8 * g));
      second[r] = _mm512_set1_epi32(quad_at(xq[r] + 8 * g + 4));
    }
    #pragma GCC unroll 4
    for (int s = 0; s < 4; ++s) {
      __m512i lo, hi;
      if constexpr (kBits == 4) {
        const __m512i v = _mm512_loadu_si512(gp + 64 * s);
        lo = _mm512_and_si512(v, low_nibbles);
        hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low_nibbles);
      } else {
        lo = _mm512_loadu_si512(gp + 64 * s);
        hi = _mm512_loadu_si512(gp + 256 + 64 * s);
      }
      #pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        acc[r][s] = _mm512_dpbusd_epi32(acc[r][s], lo, first[r]);
        acc[r][s] = _mm512_dpbusd_epi32(acc[r][s], hi, second[r]);
      }
    }
  }
  // t = Σ q·u − z'·Σ q; sum = sum + f32(t) · f32(d · scale).
  // The scales: f32, or positive normal f16 widened exactly (f32_of_normal_f16: the exponent
  // rebiased by integer adds, no F16C needed); z': bytes, or one for every column.
  const uint8_t* scales = rec + f.layout.scales;
  __m512 scale[4];
  __m512i zp[4];
  #pragma GCC unroll 4
  for (int s = 0; s < 4; ++s) {
    if (f.scale_f16) {
      const __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + 32 * s)));
      scale[s] = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(h, 13), _mm512_set1_epi32(0x38000000)));
    } else {
      scale[s] = _mm512_loadu_ps(reinterpret_cast<const float*>(scales) + 16 * s);
    }
    zp[s] = f.zps ? _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rec + f.layout.zps + 16 * s)))
                  : _mm512_set1_epi32(f.common_zp);
  }
  #pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    const __m512i xsum = _mm512_set1_epi32(a.xsum[(r0 + r) * a.blocks + b]);
    const __m512 d = _mm512_set1_ps(a.xd[(r0 + r) * a.blocks + b]);
    #pragma GCC unroll 4
    for (int s = 0; s < 4; ++s) {
      const __m512i t = _mm512_sub_epi32(acc[r][s], _mm512_mullo_epi32(zp[s], xsum));
      const __m512 term = _mm512_mul_ps(_mm512_cvtepi32_ps(t), _mm512_mul_ps(d, scale[s]));
      float* p = sums + r * 64 + 16 * s;
      _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), term));
    }
  }
}

QRT_AVX512VNNI inline __m512 clamp16(__m512 v, __m512 lo, __m512 hi) {
  // v < lo ? lo : v > hi ? hi : v — ordered compares, so NaN passes.
  v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), v, lo);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), v, hi);
}

template <int kBits>
QRT_AVX512VNNI void avx512_dyn(const DynGemmArgs& a, const RecordFormat& f) {
  alignas(64) float sums[kRowChunk * 64];
  const int64_t record = f.layout.bytes;
  const __m512 lo = _mm512_set1_ps(a.lo), hi = _mm512_set1_ps(a.hi);
  for (int64_t j0 = 0; j0 < a.n; j0 += 64) {
    const uint8_t* strip = a.w + j0 / 64 * a.blocks * record;
    const int64_t cols = std::min<int64_t>(64, a.n - j0);
    for (int64_t c0 = 0; c0 < a.rows; c0 += kRowChunk) {
      const int64_t rows = std::min(kRowChunk, a.rows - c0);
      std::memset(sums, 0, size_t(rows * 64) * sizeof(float));
      for (int64_t b = 0; b < a.blocks; ++b) {
        const uint8_t* rec = strip + b * record;
        prefetch_ahead(rec, record);
        int64_t r = 0;
        for (; r + 4 <= rows; r += 4) avx512_block<kBits, 4>(a, f, rec, b, c0 + r, sums + r * 64);
        switch (rows - r) {
          case 3: avx512_block<kBits, 3>(a, f, rec, b, c0 + r, sums + r * 64); break;
          case 2: avx512_block<kBits, 2>(a, f, rec, b, c0 + r, sums + r * 64); break;
          case 1: avx512_block<kBits, 1>(a, f, rec, b, c0 + r, sums + r * 64); break;
          default: break;
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        float* y = a.y + (c0 + r) * a.y_stride + j0;
        for (int s = 0; s < 4 && 16 * s < cols; ++s) {
          const int64_t left = cols - 16 * s;
          const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
          __m512 v = _mm512_loadu_ps(sums + r * 64 + 16 * s);
          if (a.bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, a.bias + j0 + 16 * s));
          _mm512_mask_storeu_ps(y + 16 * s, m, clamp16(v, lo, hi));
        }
      }
    }
  }
}

// ---- AVX2 (with or without AVX-VNNI): 16 columns, up to 2 rows ----

namespace plain {
#define QRT_DYN_TARGET __attribute__((target("avx2,fma")))
constexpr bool kVnni = false;
#include "jit/asmjit_x86/dynamic_gemm_avx2.inc"
#undef QRT_DYN_TARGET
}  // namespace plain

namespace vnni {
#define QRT_DYN_TARGET __attribute__((target("avx2,fma,avxvnni")))
constexpr bool kVnni = true;
#include "jit/asmjit_x86/dynamic_gemm_avx2.inc"
#undef QRT_DYN_TARGET
}  // namespace vnni

}  // namespace

void avx512_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc) {
  const RecordFormat f = record_format(*args, *desc);
  desc->weight_bits == 4 ? avx512_dyn<4>(*args, f) : avx512_dyn<8>(*args, f);
}

void avx2_vnni_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc) {
  const RecordFormat f = record_format(*args, *desc);
  desc->weight_bits == 4 ? vnni::avx2_dyn<4>(*args, f) : vnni::avx2_dyn<8>(*args, f);
}

void avx2_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc) {
  const RecordFormat f = record_format(*args, *desc);
  desc->weight_bits == 4 ? plain::avx2_dyn<4>(*args, f) : plain::avx2_dyn<8>(*args, f);
}

}  // namespace qrt::jit::x86gen
