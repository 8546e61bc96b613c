// qrt — the AArch64 backend's weight-only matmul micro-kernel (kWoGemm), written with NEON
// intrinsics like the x86 backend's (weight_only_x86.cpp): the weights stay packed (8 or 4 bits)
// and are dequantized in registers, f32(q − zp) · scale per block (rounded to bf16 or f16 where
// the weights are expressed in it: KernelDesc::weight_round), then multiplied and added in
// the reference's order (one rounding each, no fmla: -ffp-contract=off) with the columns across
// the lanes, so every output is bit-exact with the scalar twin (jit/ref/twins.cpp) and the
// reference. 16 columns (4 vectors) x up to 4 rows per step on every NEON level; column tails
// go through a staging copy, so no load reads past the weights' row.
// K is walked in chunks of rows (never across a block; jit/core/weight_only_chunks.h), all tiles
// of a chunk before the next, with the partial sums kept in y between chunks; bias and clamp
// come with the last chunk.
#include <arm_neon.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "jit/asmjit_a64/generators.h"
#include "jit/asmjit_a64/neon_f32.h"
#include "jit/core/weight_only_chunks.h"

namespace qrt::jit::a64gen {

namespace {

constexpr int64_t kStep = 16;  // columns per tile

using KChunk = WoChunk;

// 16 stored weights of one row, columns j0..j0+15 (cols of them valid; the rest read as 0),
// as bytes holding q (8-bit: the byte; 4-bit: the nibble, sign-extended when signed).
template <int kBits, bool kSigned>
inline uint8x16_t load_row16(const uint8_t* row, int64_t cols) {
  if constexpr (kBits == 8) {
    if (cols >= 16) return vld1q_u8(row);
    uint8_t stage[16] = {};
    std::memcpy(stage, row, size_t(cols));
    return vld1q_u8(stage);
  } else {
    uint8x8_t packed;
    if (cols >= 16) {
      packed = vld1_u8(row);
    } else {
      uint8_t stage[8] = {};
      std::memcpy(stage, row, size_t((cols + 1) / 2));
      packed = vld1_u8(stage);
    }
    // Byte i holds column 2i in its low nibble and 2i + 1 in its high one.
    const uint8x8x2_t z = vzip_u8(vand_u8(packed, vdup_n_u8(0x0F)), vshr_n_u8(packed, 4));
    uint8x16_t v = vcombine_u8(z.val[0], z.val[1]);
    if constexpr (kSigned) v = vsubq_u8(veorq_u8(v, vdupq_n_u8(8)), vdupq_n_u8(8));  // (v ^ 8) − 8
    return v;
  }
}

// Quarter h (columns 4h..4h+3) of 16 weight bytes, widened to int32.
template <bool kSigned>
inline int32x4_t widen_quarter(uint8x16_t bytes, int h) {
  if constexpr (kSigned) {
    const int16x8_t half = h < 2 ? vmovl_s8(vget_low_s8(vreinterpretq_s8_u8(bytes)))
                                 : vmovl_s8(vget_high_s8(vreinterpretq_s8_u8(bytes)));
    return h % 2 == 0 ? vmovl_s16(vget_low_s16(half)) : vmovl_s16(vget_high_s16(half));
  } else {
    const uint16x8_t half = h < 2 ? vmovl_u8(vget_low_u8(bytes)) : vmovl_u8(vget_high_u8(bytes));
    return vreinterpretq_s32_u32(h % 2 == 0 ? vmovl_u16(vget_low_u16(half)) : vmovl_u16(vget_high_u16(half)));
  }
}

// 4 floats from p (cols of them valid; the rest read as 0), and the matching store.
inline float32x4_t load4f(const float* p, int64_t cols) {
  if (cols >= 4) return vld1q_f32(p);
  float stage[4] = {};
  if (cols > 0) std::memcpy(stage, p, size_t(cols) * sizeof(float));
  return vld1q_f32(stage);
}
inline void store4f(float* p, float32x4_t v, int64_t cols) {
  if (cols >= 4) {
    vst1q_f32(p, v);
  } else if (cols > 0) {
    float stage[4];
    vst1q_f32(stage, v);
    std::memcpy(p, stage, size_t(cols) * sizeof(float));
  }
}
inline int32x4_t load4zp(const int16_t* p, int64_t cols) {
  int16_t stage[4] = {};
  if (cols > 0) std::memcpy(stage, p, size_t(std::min<int64_t>(cols, 4)) * sizeof(int16_t));
  return vmovl_s16(vld1_s16(stage));
}

// KernelDesc::weight_round as a template argument.
constexpr int kRoundNone = 0, kRoundBf16 = 1, kRoundF16 = 2;

// A dequantized weight rounded to its expressed type (twin::round_weight): bf16 on the bits
// (+ 0x7FFF + the lowest kept bit, the low half cleared; a weight is NaN only as 0 · inf, the
// default NaN, which stays NaN), f16 by fcvtn / fcvtl (FPCR's default: nearest even, no
// flushing; overflow to ±inf).
template <int kRound>
inline float32x4_t round_weights4(float32x4_t w) {
  if constexpr (kRound == kRoundBf16) {
    const uint32x4_t b = vreinterpretq_u32_f32(w);
    const uint32x4_t lsb = vandq_u32(vshrq_n_u32(b, 16), vdupq_n_u32(1));
    return vreinterpretq_f32_u32(vandq_u32(vaddq_u32(vaddq_u32(b, vdupq_n_u32(0x7FFF)), lsb), vdupq_n_u32(0xFFFF0000u)));
  }
  if constexpr (kRound == kRoundF16) return vcvt_f32_f16(vcvt_f16_f32(w));
  return w;
}

template <int kBits, bool kSigned, bool kZp, int kRound, int kRows>
void wo_tile(const WoGemmArgs& a, int64_t r0, int64_t j0, const KChunk& kc) {
  const int64_t cols = std::min<int64_t>(kStep, a.n - j0);
  float32x4_t acc[kRows][4];
  #pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) {
      acc[r][h] = kc.first ? vdupq_n_f32(0.0f) : load4f(a.y + (r0 + r) * a.y_stride + j0 + 4 * h, cols - 4 * h);
    }
  }
  const uint8_t* wcol = a.w + (kBits == 8 ? j0 : j0 / 2);
  const float* xr = a.x + r0 * a.x_stride;
  const int64_t p = kc.k0 / a.block * a.p_stride + j0;
  float32x4_t scale[4];
  int32x4_t zp[4];
  #pragma GCC unroll 4
  for (int h = 0; h < 4; ++h) {
    scale[h] = load4f(a.scales + p + 4 * h, cols - 4 * h);
    zp[h] = kZp ? load4zp(a.zps + p + 4 * h, cols - 4 * h) : vdupq_n_s32(0);
  }
  for (int64_t kk = kc.k0; kk < kc.k1; ++kk) {
    const uint8x16_t bytes = load_row16<kBits, kSigned>(wcol + kk * a.w_stride, cols);
    float32x4_t w[4];
    #pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) {
      int32x4_t q = widen_quarter<kSigned>(bytes, h);
      if constexpr (kZp) q = vsubq_s32(q, zp[h]);
      w[h] = round_weights4<kRound>(vmulq_f32(vcvtq_f32_s32(q), scale[h]));
    }
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const float x = xr[r * a.x_stride + kk];
      #pragma GCC unroll 4
      for (int h = 0; h < 4; ++h) acc[r][h] = vaddq_f32(acc[r][h], vmulq_n_f32(w[h], x));
    }
  }
  if (!kc.last) {
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      #pragma GCC unroll 4
      for (int h = 0; h < 4; ++h) store4f(a.y + (r0 + r) * a.y_stride + j0 + 4 * h, acc[r][h], cols - 4 * h);
    }
    return;
  }
  const float32x4_t lo = vdupq_n_f32(a.lo), hi = vdupq_n_f32(a.hi);
  #pragma GCC unroll 4
  for (int h = 0; h < 4; ++h) {
    const int64_t hc = cols - 4 * h;
    if (hc <= 0) continue;
    const float32x4_t bias = a.bias ? load4f(a.bias + j0 + 4 * h, hc) : vdupq_n_f32(0.0f);
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      float32x4_t v = acc[r][h];
      if (a.bias) v = vaddq_f32(v, bias);
      store4f(a.y + (r0 + r) * a.y_stride + j0 + 4 * h, clamp4(v, lo, hi), hc);
    }
  }
}

template <int kBits, bool kSigned, bool kZp, int kRound>
void wo_run(const WoGemmArgs& a) {
  run_wo_tiles<kStep>(a, [&](auto rows, int64_t r0, int64_t j0, const KChunk& kc) {
    wo_tile<kBits, kSigned, kZp, kRound, decltype(rows)::value>(a, r0, j0, kc);
  });
}

// One instantiation per (bits, signedness, zero points) at weight rounding kRound.
template <int kRound>
void wo_dispatch(const WoGemmArgs& a, const KernelDesc& d) {
  const bool s = d.storage_signed, z = d.weight_zp;
  if (d.weight_bits == 8) {
    if (s) z ? wo_run<8, true, true, kRound>(a) : wo_run<8, true, false, kRound>(a);
    else z ? wo_run<8, false, true, kRound>(a) : wo_run<8, false, false, kRound>(a);
  } else {
    if (s) z ? wo_run<4, true, true, kRound>(a) : wo_run<4, true, false, kRound>(a);
    else z ? wo_run<4, false, true, kRound>(a) : wo_run<4, false, false, kRound>(a);
  }
}

}  // namespace

void a64_wo_gemm(const WoGemmArgs* args, const KernelDesc* d) {
  switch (d->weight_round) {
    case WeightRound::kNone: return wo_dispatch<kRoundNone>(*args, *d);
    case WeightRound::kBf16: return wo_dispatch<kRoundBf16>(*args, *d);
    case WeightRound::kF16: return wo_dispatch<kRoundF16>(*args, *d);
  }
}

}  // namespace qrt::jit::a64gen
