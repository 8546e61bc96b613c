// qrt — the AArch64 backend's requantization micro-kernels of the numerics profiles
// (jit/core/microkernel.h), written with NEON intrinsics like the other fixed kernels: 8
// channels per step, each lane computing exactly what the scalar formula computes, so every
// byte equals the scalar twin's.
//
// kRequantQ31 (TFLite's, numerics::requantize_tflite):
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
//
// kRequantF64 (ONNX's, numerics::requantize_onnx): accumulator and multiplier widened to f64
// exactly, one fmul, frintn (nearest even), the clamp in f64, fcvtzs (exact) and + zo.
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

// The rows of `a` (either kind's arguments): `lanes4(acc, c)` gives channels c..c+3 before
// + zo, 8 channels per step; `lane(acc, j)` one channel of the tail, + zo included.
template <typename Args, typename Lanes4, typename Lane>
void requant_rows(const Args& a, bool is_signed, Lanes4 lanes4, Lane lane) {
  const int64_t full = a.channels / 8 * 8;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int32_t* acc = a.acc + r * a.acc_stride;
    uint8_t* y = static_cast<uint8_t*>(a.y) + r * a.y_stride;
    for (int64_t j = 0; j < full; j += 8) {
      int16x4_t half[2];
      for (int h = 0; h < 2; ++h) {
        const int64_t c = j + 4 * h;
        half[h] = vmovn_s32(vaddq_s32(lanes4(acc, c), vld1q_s32(a.zo + c)));  // in range already: xtn only narrows
      }
      const int16x8_t w = vcombine_s16(half[0], half[1]);
      vst1_u8(y + j, is_signed ? vreinterpret_u8_s8(vmovn_s16(w)) : vmovn_u16(vreinterpretq_u16_s16(w)));
    }
    for (int64_t j = full; j < a.channels; ++j) y[j] = uint8_t(lane(acc, j));
  }
}

template <bool kSingle>
void q31_rows(const RequantQ31Args& a, bool is_signed) {
  requant_rows(
      a, is_signed,
      [&a](const int32_t* acc, int64_t c) {
        const int32x4_t v = requant4<kSingle>(vld1q_s32(acc + c), vld1q_s32(a.multiplier + c), vld1q_s32(a.shift + c));
        return vminq_s32(vmaxq_s32(v, vld1q_s32(a.lo_zo + c)), vld1q_s32(a.hi_zo + c));
      },
      [&a](const int32_t* acc, int64_t j) {
        const numerics::QuantizedMultiplier m{a.multiplier[j], a.shift[j]};
        const int32_t v = numerics::multiply_by_quantized_multiplier(acc[j], m, kSingle);
        return std::min(std::max(v, a.lo_zo[j]), a.hi_zo[j]) + a.zo[j];
      });
}

// Two lanes of kRequantF64 before + zo.
inline int64x2_t f64_pair(int32x2_t acc, float32x2_t m, int32x2_t lo, int32x2_t hi) {
  float64x2_t v = vrndnq_f64(vmulq_f64(vcvtq_f64_s64(vmovl_s32(acc)), vcvt_f64_f32(m)));
  v = vminq_f64(vmaxq_f64(v, vcvtq_f64_s64(vmovl_s32(lo))), vcvtq_f64_s64(vmovl_s32(hi)));
  return vcvtq_s64_f64(v);
}

void f64_rows(const RequantF64Args& a, bool is_signed) {
  requant_rows(
      a, is_signed,
      [&a](const int32_t* acc, int64_t c) {
        const int32x4_t x = vld1q_s32(acc + c), lo = vld1q_s32(a.lo_zo + c), hi = vld1q_s32(a.hi_zo + c);
        const float32x4_t m = vld1q_f32(a.multiplier + c);
        const int64x2_t v0 = f64_pair(vget_low_s32(x), vget_low_f32(m), vget_low_s32(lo), vget_low_s32(hi));
        const int64x2_t v1 = f64_pair(vget_high_s32(x), vget_high_f32(m), vget_high_s32(lo), vget_high_s32(hi));
        return vcombine_s32(vmovn_s64(v0), vmovn_s64(v1));
      },
      [&a](const int32_t* acc, int64_t j) {
        return numerics::requantize_onnx(acc[j], a.multiplier[j], a.zo[j], int64_t(a.lo_zo[j]) + a.zo[j],
                                         int64_t(a.hi_zo[j]) + a.zo[j]);
      });
}

}  // namespace

void a64_requant_f64(const RequantF64Args* args, const KernelDesc* desc) { f64_rows(*args, desc->storage_signed); }

void a64_requant_q31(const RequantQ31Args* args, const KernelDesc* desc) {
  desc->single_rounding ? q31_rows<true>(*args, desc->storage_signed) : q31_rows<false>(*args, desc->storage_signed);
}

}  // namespace qrt::jit::a64gen
