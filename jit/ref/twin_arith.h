// qrt — the scalar twins' arithmetic, step by step as the vector kernels do it: wrapping
// int32 sums, vcvtps2dq rounding, NaN-to-bound clamping, saturating 8-bit packs and the
// epilogue of one accumulator. Shared by the twins (twins.cpp) and the LLVM backend's kernel
// templates (jit/llvm/kernel_templates.cpp), which must compute the same bits.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "jit/core/microkernel.h"

namespace qrt::jit::twin {

// int32 arithmetic that wraps like vpaddd / vpsubd / vpmulld (no signed overflow in C++).
inline int32_t wrap_add(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); }
inline int32_t wrap_sub(int32_t a, int32_t b) { return int32_t(uint32_t(a) - uint32_t(b)); }
inline int32_t wrap_mul(int32_t a, int32_t b) { return int32_t(uint32_t(a) * uint32_t(b)); }

// Unaligned loads of element i of a 32-bit array (the epilogue blocks mix int32 and f32).
inline int32_t load_i32(const void* p, size_t i) {
  int32_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(p) + 4 * i, 4);
  return v;
}
inline float load_f32(const void* p, size_t i) {
  float v;
  std::memcpy(&v, static_cast<const uint8_t*>(p) + 4 * i, 4);
  return v;
}

// One stored 8-bit value, sign- or zero-extended (vpmovsx / vpmovzx).
inline int32_t stored(const uint8_t* p, bool is_signed) { return is_signed ? int32_t(int8_t(*p)) : int32_t(*p); }

// vcvtps2dq in the default rounding mode: nearest even; NaN and out-of-range values give the
// "integer indefinite" 0x80000000 (never reached inside the contracts' bounds, but defined).
inline int32_t cvtps2dq(float t) {
  if (!(t >= -2147483648.0f && t < 2147483648.0f)) return INT32_MIN;
  return int32_t(std::nearbyint(t));
}

// vmaxps(t, lo) then vminps(t, hi): each returns its second operand unless the first compares
// greater (smaller), so a NaN lane becomes a bound — written out rather than std::max/min,
// which keep the NaN.
inline float clamp_ps(float t, float lo, float hi) {
  t = t > lo ? t : lo;
  return t < hi ? t : hi;
}

// A finite or infinite f32 rounded to bfloat16 (nearest even), as the vector kernels do it
// on the bits: + 0x7FFF + the lowest kept bit, then the low 16 bits cleared (overflow carries
// into the exponent: ±inf). NaN passes through.
inline float round_to_bf16(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return v;
  b = (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u;
  std::memcpy(&v, &b, 4);
  return v;
}

// An f32 rounded to IEEE binary16 (nearest even), as vcvtps2ph: |v| >= 65520 becomes ±inf;
// below 2^-14 the step is 2^-24 (subnormals); above, 10 fraction bits are kept. NaN passes.
inline float round_to_f16(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  const uint32_t sign = b & 0x80000000u, mag = b & 0x7FFFFFFFu;
  if (mag >= 0x7F800000u) return v;
  float m;
  std::memcpy(&m, &mag, 4);
  uint32_t r;
  if (m >= 65520.0f) {
    r = 0x7F800000u;
  } else if (m < 6.103515625e-05f) {
    // Multiples of 2^-24: m · 2^24 < 1024 is exact and rounds to an integer by the 2^23 trick.
    const float t = (m * 16777216.0f + 8388608.0f) - 8388608.0f;
    const float q = t * 5.9604644775390625e-08f;
    std::memcpy(&r, &q, 4);
  } else {
    r = (mag + 0xFFFu + ((mag >> 13) & 1u)) & ~0x1FFFu;
  }
  r |= sign;
  std::memcpy(&v, &r, 4);
  return v;
}

// A dequantized weight rounded to the kWoGemm description's weight type.
inline float round_weight(float w, WeightRound round) {
  return round == WeightRound::kBf16 ? round_to_bf16(w) : round == WeightRound::kF16 ? round_to_f16(w) : w;
}

// The packs vpackssdw then vpacksswb / vpackuswb: saturate to the 8-bit output type.
inline uint8_t narrow(int32_t v, bool to_signed) {
  return to_signed ? uint8_t(int8_t(std::clamp(v, -128, 127))) : uint8_t(std::clamp(v, 0, 255));
}

// The 8-bit requantization tail shared by every kernel: clamp, round, + zo, narrow.
inline uint8_t requantize_tail(float t, float lo, float hi, int32_t zo, bool to_signed) {
  return narrow(wrap_add(cvtps2dq(clamp_ps(t, lo, hi)), zo), to_signed);
}

// The epilogue of one accumulator for output kind `out`, stored at `dst`: s32 as is; f32:
// f32(acc)·m; 8-bit: clamp(f32(acc)·m, lo, hi) rounded, + zo. float(int32) is vcvtdq2ps:
// exact below 2^24, else rounded to nearest even.
inline void store_epilogue(int32_t acc, OutKind out, float m, float lo, float hi, int32_t zo, uint8_t* dst) {
  switch (out) {
    case OutKind::kS32: std::memcpy(dst, &acc, 4); return;
    case OutKind::kF32: {
      const float y = float(acc) * m;
      std::memcpy(dst, &y, 4);
      return;
    }
    case OutKind::kU8:
    case OutKind::kS8: *dst = requantize_tail(float(acc) * m, lo, hi, zo, out == OutKind::kS8); return;
  }
}

inline unsigned out_bytes(OutKind out) { return out == OutKind::kS32 || out == OutKind::kF32 ? 4 : 1; }

// The pointer of tap t for pixel p (see DepthwiseArgs): the pixel's pointer row lies
// p · taps_stride bytes into the array (the kernels step it in bytes), and every pointer of
// the row moves p · pixel_step bytes (stepping mode).
inline const uint8_t* tap(const uint8_t* const* taps, int64_t taps_stride, int64_t pixel_step, int64_t p, unsigned t) {
  const uint8_t* ptr;
  std::memcpy(&ptr, reinterpret_cast<const uint8_t*>(taps) + p * taps_stride + 8 * int64_t(t), sizeof ptr);
  return ptr + p * pixel_step;
}

}  // namespace qrt::jit::twin
