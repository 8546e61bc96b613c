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

}  // namespace

__attribute__((target("avx512f,avx512bw"))) void avx512_pack_rows(const PackRowsArgs* args, const KernelDesc* desc) {
  // The byte paths only: the levels that use this kernel have no widened (u16) path.
  const int64_t k = args->k, full = k / 64 * 64;
  const __m512i flip = _mm512_set1_epi8(desc->storage_signed ? char(0x80) : char(0)), zero = _mm512_setzero_si512();
  // The last, partial chunk [full, k_padded): k_padded rounds k up to the k group (< 64
  // more), so one chunk holds it. Loaded under the k mask (the rest reads as 0, never past
  // the row), flipped only there, stored under the k_padded mask (the zero padding).
  const __mmask64 load_mask = low_lanes(k - full), store_mask = low_lanes(args->k_padded - full);
  const __m512i tail_flip = _mm512_maskz_mov_epi8(load_mask, flip);
  for (int64_t r = 0; r < args->rows; ++r) {
    const uint8_t* src = args->src + r * args->src_stride;
    uint8_t* dst = args->dst + r * args->dst_stride;
    __m512i sums = zero;  // vpsadbw against zero: eight u64 partial sums
    for (int64_t i = 0; i < full; i += 64) {
      const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(src + i), flip);
      sums = _mm512_add_epi64(sums, _mm512_sad_epu8(v, zero));
      _mm512_storeu_si512(dst + i, v);
    }
    if (store_mask) {
      const __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(load_mask, src + full), tail_flip);
      sums = _mm512_add_epi64(sums, _mm512_sad_epu8(v, zero));
      _mm512_mask_storeu_epi8(dst + full, store_mask, v);
    }
    if (args->sums) args->sums[r] = int32_t(_mm512_reduce_add_epi64(sums));
  }
}

}  // namespace qrt::jit::x86gen
