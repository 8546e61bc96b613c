// qrt — the AArch64 backend's kRequantQ31 micro-kernel (TFLite's fixed-point requantization of
// int32 accumulators, jit/core/microkernel.h), written with NEON intrinsics like the other
// fixed kernels: 8 channels per step, each lane computing exactly what
// numerics::requantize_tflite computes, so every byte equals the scalar twin's.
//
// Double rounding is what TFLite's NEON kernels do: sshl by the left shift (capped at 32, since
// sshl reads only the count's low byte; 32 or more gives 0, as the twin's wrapping shift does),
// sqrdmulh (gemmlowp's SaturatingRoundingDoublingHighMul: both round ties toward +inf), then
// RoundingDivideByPOT as a rounding shift srshl (ties toward +inf) after subtracting 1 from
// negative values when the shift is not 0 (sqadd: INT32_MIN stays, its quotient is exact), so
// ties round away from zero.
// Single rounding: smull to 64 bits, srshl by -(31 - shift) (adds 2^(total - 1) without
// overflow, then shifts), sqxtn to int32.
// Then clamp(v, lo - zo, hi - zo) + zo and a narrowing store; a tail of fewer than 8 channels
// takes the scalar formula.
#include <arm_neon.h>

#include <algorithm>

#include "ir/numerics.h"
#include "jit/asmjit_a64/generators.h"

namespace qrt::jit::a64gen {

namespace {

template <bool kSingle>
inline int32x4_t requant4(int32x4_t x, int32x4_t m, int32x4_t s) {
  if constexpr (!kSingle) {
    const int32x4_t left = vminq_s32(vmaxq_s32(s, vdupq_n_s32(0)), vdupq_n_s32(32));
    const int32x4_t neg_right = vminq_s32(s, vdupq_n_s32(0));  // -right
    const int32x4_t h = vqrdmulhq_s32(vshlq_s32(x, left), m);
    const int32x4_t fixup = vshrq_n_s32(vandq_s32(h, neg_right), 31);  // -1: h < 0 and right > 0
    return vrshlq_s32(vqaddq_s32(h, fixup), neg_right);
  } else {
    const int32x4_t neg_total = vsubq_s32(s, vdupq_n_s32(31));  // -(31 - shift): -62..-1
    const int64x2_t lo = vrshlq_s64(vmull_s32(vget_low_s32(x), vget_low_s32(m)), vmovl_s32(vget_low_s32(neg_total)));
    const int64x2_t hi = vrshlq_s64(vmull_high_s32(x, m), vmovl_high_s32(neg_total));
    return vcombine_s32(vqmovn_s64(lo), vqmovn_s64(hi));
  }
}

template <bool kSingle>
void requant_rows(const RequantQ31Args& a, bool is_signed) {
  const int64_t full = a.channels / 8 * 8;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int32_t* acc = a.acc + r * a.acc_stride;
    uint8_t* y = static_cast<uint8_t*>(a.y) + r * a.y_stride;
    for (int64_t j = 0; j < full; j += 8) {
      int16x4_t half[2];
      for (int h = 0; h < 2; ++h) {
        const int64_t c = j + 4 * h;
        int32x4_t v = requant4<kSingle>(vld1q_s32(acc + c), vld1q_s32(a.multiplier + c), vld1q_s32(a.shift + c));
        v = vminq_s32(vmaxq_s32(v, vld1q_s32(a.lo_zo + c)), vld1q_s32(a.hi_zo + c));
        half[h] = vmovn_s32(vaddq_s32(v, vld1q_s32(a.zo + c)));  // in range already: xtn only narrows
      }
      const int16x8_t w = vcombine_s16(half[0], half[1]);
      vst1_u8(y + j, is_signed ? vreinterpret_u8_s8(vmovn_s16(w)) : vmovn_u16(vreinterpretq_u16_s16(w)));
    }
    for (int64_t j = full; j < a.channels; ++j) {
      const numerics::QuantizedMultiplier m{a.multiplier[j], a.shift[j]};
      const int32_t v = numerics::multiply_by_quantized_multiplier(acc[j], m, kSingle);
      y[j] = uint8_t(std::min(std::max(v, a.lo_zo[j]), a.hi_zo[j]) + a.zo[j]);
    }
  }
}

}  // namespace

void a64_requant_q31(const RequantQ31Args* args, const KernelDesc* desc) {
  desc->single_rounding ? requant_rows<true>(*args, desc->storage_signed) : requant_rows<false>(*args, desc->storage_signed);
}

}  // namespace qrt::jit::a64gen
