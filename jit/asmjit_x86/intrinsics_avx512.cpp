// qrt — the x86 backend's AVX-512 micro-kernels written with intrinsics (see
// intrinsics_avx2.cpp for why these are not generated): each has the ABI of
// jit/core/microkernel.h and the scalar twin in jit/ref/twins.cpp.
#include <immintrin.h>

#include <algorithm>

#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

// The bits below `n` (0..64) of a 64-lane mask.
__mmask64 low_lanes(int64_t n) { return n >= 64 ? ~__mmask64(0) : (__mmask64(1) << n) - 1; }

// table[v] for the 64 bytes of v, the table in t0..t3 (64 entries each).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline __m512i lookup256(__m512i v, __m512i t0, __m512i t1,
                                                                              __m512i t2, __m512i t3) {
  const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi);
}

}  // namespace

__attribute__((target("avx512f,avx512bw"))) void avx512_pack_rows(const PackRowsArgs* args, const KernelDesc* desc) {
  // The byte paths only: the levels that use this kernel have no widened (u16) path.
  const int64_t k = args->k, full = k / 64 * 64;
  const __m512i flip = _mm512_set1_epi8(desc->storage_signed ? char(0x80) : char(0)), zero = _mm512_setzero_si512();
  // sdot4 (AMX's tdpbssd) stores a' - 128 as s8: the u8 a' with its top bit flipped back.
  const __m512i store_flip = _mm512_set1_epi8(desc->path == GemmPath::kSdot4 ? char(0x80) : char(0));
  // The last, partial chunk [full, k_padded): k_padded rounds k up to the k group (< 64
  // more), so one chunk holds it. Loaded under the k mask (the rest reads as 0, never past
  // the row), flipped only there, stored under the k_padded mask (the zero padding).
  const __mmask64 load_mask = low_lanes(k - full), store_mask = low_lanes(args->k_padded - full);
  const __m512i tail_flip = _mm512_maskz_mov_epi8(load_mask, flip);
  const __m512i tail_store_flip = _mm512_maskz_mov_epi8(load_mask, store_flip);  // padding stays 0
  for (int64_t r = 0; r < args->rows; ++r) {
    const uint8_t* src = args->src + r * args->src_stride;
    uint8_t* dst = args->dst + r * args->dst_stride;
    __m512i sums = zero;  // vpsadbw against zero: eight u64 partial sums
    for (int64_t i = 0; i < full; i += 64) {
      const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(src + i), flip);
      sums = _mm512_add_epi64(sums, _mm512_sad_epu8(v, zero));
      _mm512_storeu_si512(dst + i, _mm512_xor_si512(v, store_flip));
    }
    if (store_mask) {
      const __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(load_mask, src + full), tail_flip);
      sums = _mm512_add_epi64(sums, _mm512_sad_epu8(v, zero));
      _mm512_mask_storeu_epi8(dst + full, store_mask, _mm512_xor_si512(v, tail_store_flip));
    }
    if (args->sums) args->sums[r] = int32_t(_mm512_reduce_add_epi64(sums));
  }
}

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void avx512_lut8(const LutArgs* args, const KernelDesc*) {
  // vpermi2b looks up 128 entries (the index's low 7 bits) in two registers: one lookup in
  // each table half, then the index's top bit picks the half. The tail runs under a mask.
  const uint8_t* table = args->table;
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  const uint8_t* x = args->x;
  uint8_t* y = args->y;
  const int64_t n = int64_t(args->n);
  int64_t i = 0;
  for (; i + 128 <= n; i += 128) {
    const __m512i a = _mm512_loadu_si512(x + i), b = _mm512_loadu_si512(x + i + 64);
    _mm512_storeu_si512(y + i, lookup256(a, t0, t1, t2, t3));
    _mm512_storeu_si512(y + i + 64, lookup256(b, t0, t1, t2, t3));
  }
  for (; i < n; i += 64) {
    const __mmask64 m = low_lanes(n - i);
    _mm512_mask_storeu_epi8(y + i, m, lookup256(_mm512_maskz_loadu_epi8(m, x + i), t0, t1, t2, t3));
  }
}

}  // namespace qrt::jit::x86gen
