// qrt — the x86 backend's AVX2 micro-kernels written with intrinsics: they move or add
// bytes in fixed patterns, so generating code per description would buy nothing. Each has the
// ABI of jit/core/microkernel.h and the scalar twin in jit/ref/twins.cpp.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

// One row of avx2_pack_rows; returns its sum, or 0 without `want_sum` (rows without row
// sums skip the vpsadbw per step and the reductions per row).
template <bool want_sum>
__attribute__((target("avx2"))) inline int32_t pack_row(const uint8_t* src, uint8_t* dst, int64_t k, int64_t k_padded,
                                                        uint8_t flip, bool widen) {
  const __m256i flip_v = _mm256_set1_epi8(char(flip)), zero = _mm256_setzero_si256();
  __m256i sums = zero;
  int64_t i = 0;
  // 32 activations per step; the row sum by vpsadbw against zero.
  for (; i + 32 <= k; i += 32) {
    const __m256i v = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)), flip_v);
    if (want_sum) sums = _mm256_add_epi64(sums, _mm256_sad_epu8(v, zero));
    if (widen) {
      auto* d = reinterpret_cast<__m256i*>(dst + 2 * i);
      _mm256_storeu_si256(d, _mm256_cvtepu8_epi16(_mm256_castsi256_si128(v)));
      _mm256_storeu_si256(d + 1, _mm256_cvtepu8_epi16(_mm256_extracti128_si256(v, 1)));
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), v);
    }
  }
  // Short rows (1x1 convolutions over few channels, first layers) spend most of their time
  // here: one 16-value and one 8-value step before the scalar tail.
  const __m128i flip16 = _mm_set1_epi8(char(flip)), zero16 = _mm_setzero_si128();
  __m128i sums16 = zero16;
  if (i + 16 <= k) {
    const __m128i v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)), flip16);
    if (want_sum) sums16 = _mm_add_epi64(sums16, _mm_sad_epu8(v, zero16));
    if (widen) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i), _mm256_cvtepu8_epi16(v));
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), v);
    i += 16;
  }
  if (i + 8 <= k) {
    // Only the low 8 bytes are flipped: the zeroed high half must add nothing to the sum.
    const __m128i v = _mm_xor_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i)),
                                    _mm_unpacklo_epi64(flip16, zero16));
    if (want_sum) sums16 = _mm_add_epi64(sums16, _mm_sad_epu8(v, zero16));
    if (widen) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm_cvtepu8_epi16(v));
    else _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + i), v);
    i += 8;
  }
  int32_t sum = 0;
  if (want_sum) {
    alignas(32) int64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sums);
    sum = int32_t(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
    alignas(16) int64_t lanes16[2];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes16), sums16);
    sum += int32_t(lanes16[0] + lanes16[1]);
  }
  if (!widen) {
    for (; i < k; ++i) {
      dst[i] = uint8_t(src[i] ^ flip);
      sum += dst[i];
    }
    std::memset(dst + k, 0, size_t(k_padded - k));
  } else {
    // 16-bit values through memcpy: a row may start at any byte (PackRowsArgs strides).
    for (; i < k; ++i) {
      const uint16_t v = uint8_t(src[i] ^ flip);
      std::memcpy(dst + 2 * i, &v, 2);
      sum += v;
    }
    std::memset(dst + 2 * k, 0, size_t(k_padded - k) * 2);
  }
  return sum;
}

}  // namespace

__attribute__((target("avx2"))) void avx2_pack_rows(const PackRowsArgs* args, const KernelDesc* desc) {
  const uint8_t flip = desc->storage_signed ? 0x80 : 0;
  const bool widen = desc->path == GemmPath::kMaddwd;
  if (!args->sums) {
    for (int64_t r = 0; r < args->rows; ++r) {
      pack_row<false>(args->src + r * args->src_stride, args->dst + r * args->dst_stride, args->k, args->k_padded, flip,
                      widen);
    }
    return;
  }
  for (int64_t r = 0; r < args->rows; ++r) {
    args->sums[r] = pack_row<true>(args->src + r * args->src_stride, args->dst + r * args->dst_stride, args->k,
                                   args->k_padded, flip, widen);
  }
}

__attribute__((target("avx2"))) void avx2_clamp(const ClampArgs* args, const KernelDesc* desc) {
  const uint8_t* x = args->x;
  uint8_t* y = args->y;
  const size_t n = args->n;
  const int lo = args->lo, hi = args->hi;
  const bool is_signed = desc->storage_signed;
  size_t i = 0;
  const __m256i l = _mm256_set1_epi8(char(lo)), h = _mm256_set1_epi8(char(hi));
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i r = is_signed ? _mm256_min_epi8(_mm256_max_epi8(v, l), h) : _mm256_min_epu8(_mm256_max_epu8(v, l), h);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), r);
  }
  for (; i < n; ++i) {
    const int v = is_signed ? int(int8_t(x[i])) : int(x[i]);
    y[i] = uint8_t(std::min(std::max(v, lo), hi));
  }
}

__attribute__((target("avx2"))) void avx2_lut8(const LutArgs* args, const KernelDesc*) {
  // vpshufb looks up 16 entries and yields 0 where the index byte's top bit is set. Sixteen
  // sub-tables by high nibble: for sub-table h, v - 16h lies in [0, 15] exactly where v's high
  // nibble is h; adding 0x70 with unsigned saturation keeps the low nibble there with the top
  // bit clear, and sets the top bit everywhere else, so each byte gets one sub-table's entry.
  // (A vpblendvb tree over the sixteen lookups measured no faster.)
  const uint8_t* x = args->x;
  uint8_t* y = args->y;
  const size_t n = args->n;
  __m256i t[16];
  for (int h = 0; h < 16; ++h) {
    t[h] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(args->table + 16 * h)));
  }
  const __m256i bias = _mm256_set1_epi8(0x70), sixteen = _mm256_set1_epi8(16);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    __m256i r = _mm256_shuffle_epi8(t[0], _mm256_adds_epu8(v, bias));
    for (int h = 1; h < 16; ++h) {
      v = _mm256_sub_epi8(v, sixteen);
      r = _mm256_or_si256(r, _mm256_shuffle_epi8(t[h], _mm256_adds_epu8(v, bias)));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), r);
  }
  for (; i < n; ++i) y[i] = args->table[x[i]];
}

namespace {

// The vpshufb indices of output chunk k (bytes 16k..16k+15 of 16 pixels' 48) from plane c:
// byte b is pixel (16k + b) / 3 of plane (16k + b) % 3, or zero (0x80) where another plane
// supplies it.
__attribute__((target("avx2"))) __m256i three_plane_indices(unsigned k, unsigned c) {
  alignas(32) uint8_t idx[32];
  for (unsigned b = 0; b < 16; ++b) {
    const unsigned at = 16 * k + b;
    idx[b] = idx[b + 16] = at % 3 == c ? uint8_t(at / 3) : uint8_t(0x80);
  }
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(idx));
}

// 32 bytes of plane `plane` from pixel p on; 32 bytes at y + at. (Lambdas would not take the
// function's target attribute.)
__attribute__((target("avx2"))) inline __m256i load_plane(const uint8_t* x, int64_t plane_stride, unsigned plane, int64_t p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + int64_t(plane) * plane_stride + p));
}
__attribute__((target("avx2"))) inline void store32(uint8_t* y, int64_t at, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + at), v);
}

// Stores a result whose 128-bit lanes belong 48 bytes apart (lane 0: pixels 0-15, lane 1:
// pixels 16-31 of the step).
__attribute__((target("avx2"))) inline void store_lanes(uint8_t* y, __m256i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(y), _mm256_castsi256_si128(v));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(y + 48), _mm256_extracti128_si256(v, 1));
}

}  // namespace

__attribute__((target("avx2"))) void avx2_interleave_planes(const PlanesArgs* args, const KernelDesc* desc) {
  const unsigned c = desc->channels;
  const uint8_t* x = args->x;
  uint8_t* y = args->y;
  const int64_t n = args->pixels, ps = args->plane_stride;
  int64_t p = 0;
  if (c == 1) {
    std::memcpy(y, x, size_t(n));
    return;
  }
  if (c == 3) {
    __m256i idx[3][3];
    for (unsigned k = 0; k < 3; ++k) {
      for (unsigned i = 0; i < 3; ++i) idx[k][i] = three_plane_indices(k, i);
    }
    for (; p + 32 <= n; p += 32) {
      const __m256i r = load_plane(x, ps, 0, p), g = load_plane(x, ps, 1, p), b = load_plane(x, ps, 2, p);
      for (unsigned k = 0; k < 3; ++k) {
        const __m256i v = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(r, idx[k][0]), _mm256_shuffle_epi8(g, idx[k][1])),
                                          _mm256_shuffle_epi8(b, idx[k][2]));
        store_lanes(y + 3 * p + 16 * k, v);
      }
    }
  } else if (c == 2) {
    for (; p + 32 <= n; p += 32) {
      const __m256i a = load_plane(x, ps, 0, p), b = load_plane(x, ps, 1, p);
      // Per 128-bit lane: pixels 0-7 (lo) and 8-15 (hi) of the lane's 16.
      const __m256i lo = _mm256_unpacklo_epi8(a, b), hi = _mm256_unpackhi_epi8(a, b);
      store32(y, 2 * p, _mm256_permute2x128_si256(lo, hi, 0x20));
      store32(y, 2 * p + 32, _mm256_permute2x128_si256(lo, hi, 0x31));
    }
  } else if (c == 4) {
    for (; p + 32 <= n; p += 32) {
      const __m256i a = load_plane(x, ps, 0, p), b = load_plane(x, ps, 1, p), e = load_plane(x, ps, 2, p), f = load_plane(x, ps, 3, p);
      const __m256i ab_lo = _mm256_unpacklo_epi8(a, b), ab_hi = _mm256_unpackhi_epi8(a, b);
      const __m256i ef_lo = _mm256_unpacklo_epi8(e, f), ef_hi = _mm256_unpackhi_epi8(e, f);
      // Per 128-bit lane, pixels 0-3, 4-7, 8-11 and 12-15 of the lane's 16.
      const __m256i q0 = _mm256_unpacklo_epi16(ab_lo, ef_lo), q1 = _mm256_unpackhi_epi16(ab_lo, ef_lo);
      const __m256i q2 = _mm256_unpacklo_epi16(ab_hi, ef_hi), q3 = _mm256_unpackhi_epi16(ab_hi, ef_hi);
      store32(y, 4 * p, _mm256_permute2x128_si256(q0, q1, 0x20));
      store32(y, 4 * p + 32, _mm256_permute2x128_si256(q2, q3, 0x20));
      store32(y, 4 * p + 64, _mm256_permute2x128_si256(q0, q1, 0x31));
      store32(y, 4 * p + 96, _mm256_permute2x128_si256(q2, q3, 0x31));
    }
  }
  for (; p < n; ++p) {
    for (unsigned i = 0; i < c; ++i) y[p * c + i] = x[int64_t(i) * ps + p];
  }
}

}  // namespace qrt::jit::x86gen
