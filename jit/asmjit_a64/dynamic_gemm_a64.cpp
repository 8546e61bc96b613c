// qrt — the AArch64 backend's dynamic-i8 matmul micro-kernel (kDynGemm) on the dot product
// (neon-dot, neon-i8mm) or, at plain neon, on widening multiplies that compute the same int32
// sums (dot4_lane), written with NEON intrinsics like the x86 backend's (dynamic_gemm_x86.cpp). The activations
// arrive quantized (i8 per row and block of k, with their scale and Σ q); the weights stay
// packed in kDynGemm's record layout (microkernel.h) as unsigned quads u of 4 or 8 bits, which
// is sdot's by-element layout: lane c of a 16-byte load holds four k values of column c.
//   4-bit: u ≤ 15 is a non-negative s8, so sdot takes the nibbles as they are.
//   8-bit: u ∈ [0, 255] is not an s8; the kernel flips the top bit (w = u − 128) and folds the
//          128 into the zero point: Σ q·u − z'·Σ q = Σ q·w − (z' − 128)·Σ q.
// Both sums are exact in int32 (wrapping arithmetic, and the verifier bounds the block so the
// result fits). The block term f32(t) · f32(d · s) is then added to the row's f32 sums in block
// order, as numerics::dynamic_i8_block_term and the reference do (-ffp-contract=off: no fmla).
//
// Loop order: a strip of 64 columns, a chunk of up to 64 rows, then block by block and quarter
// by quarter (16 columns: 4 rows x 4 accumulators = 16 of the 32 vector registers), so a record
// is read from memory once per chunk and the rows' f32 sums wait in a 16 KiB buffer in L1.
#include <arm_neon.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "jit/asmjit_a64/generators.h"
#include "jit/asmjit_a64/neon_f32.h"

namespace qrt::jit::a64gen {

namespace {

constexpr int64_t kRowChunk = 64;  // rows whose f32 sums wait in the buffer (64 x 64 floats)

// The dot-product intrinsics are declared for armv8.2-a+dotprod; the sdot quarter carries the
// same target so that they inline (the rest of the build targets plain armv8-a). The helpers
// below have no target: they inline into both quarters.
#define QRT_A64_DOT __attribute__((target("arch=armv8.2-a+dotprod")))

// The quarter's weights of group g as s8 quads (sdot's by-element layout): k 8g..8g+3 in
// `first`, 8g+4..8g+7 in `second`, 16 columns in 4 vectors each.
template <int kBits>
inline void load_group(const uint8_t* gp, int8x16_t first[4], int8x16_t second[4]) {
  const uint8x16x4_t v = vld1q_u8_x4(gp);
  if constexpr (kBits == 4) {
    const uint8x16_t low_nibbles = vdupq_n_u8(0x0F);
    #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      first[j] = vreinterpretq_s8_u8(vandq_u8(v.val[j], low_nibbles));
      second[j] = vreinterpretq_s8_u8(vshrq_n_u8(v.val[j], 4));
    }
  } else {
    const uint8x16_t top_bit = vdupq_n_u8(0x80);
    const uint8x16x4_t h = vld1q_u8_x4(gp + 256);
    #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      first[j] = vreinterpretq_s8_u8(veorq_u8(v.val[j], top_bit));
      second[j] = vreinterpretq_s8_u8(veorq_u8(h.val[j], top_bit));
    }
  }
}

// sdot by element without the dot product (plain NEON): lane c of the result adds the four
// products of w's bytes 4c..4c+3 with x's quad `lane`, widened to 16 bits (each |product| <=
// 2^14) and summed pairwise into 32 bits — the same int32 sum, exactly.
inline int32x4_t dot4_lane(int32x4_t acc, int8x16_t w, int8x8_t x, int lane) {
  const int8x16_t xq = vreinterpretq_s8_s32(vdupq_n_s32(vget_lane_s32(vreinterpret_s32_s8(x), 0)));
  const int8x16_t xq1 = vreinterpretq_s8_s32(vdupq_n_s32(vget_lane_s32(vreinterpret_s32_s8(x), 1)));
  const int8x16_t q = lane == 0 ? xq : xq1;
  const int32x4_t lo = vpaddlq_s16(vmull_s8(vget_low_s8(w), vget_low_s8(q)));
  const int32x4_t hi = vpaddlq_s16(vmull_high_s8(w, q));
  return vaddq_s32(acc, vpaddq_s32(lo, hi));
}

// What a call's records hold (microkernel.h): where the parameters are, f16 or f32 scales,
// z' bytes or one z' for every column.
struct RecordFormat {
  DynRecordLayout layout;
  bool scale_f16 = false, zps = false;
  int32_t common_zp = 0;  ///< every column's z' without zps (KernelDesc::zero_point)
};

// t = Σ q·u − z'·Σ q; sum = sum + f32(t) · f32(d · scale) for block b's quarter (accumulators
// acc of rows r0..), as numerics::dynamic_i8_block_term.
template <int kBits, int kRows>
inline void add_block_terms(const DynGemmArgs& a, const RecordFormat& f, const uint8_t* rec, int64_t b, int64_t r0, int quarter,
                            const int32x4_t (&acc)[kRows][4], float* sums) {
  float32x4_t scale[4];
  int32x4_t zp[4];
  if (f.zps) {
    const uint8x16_t z = vld1q_u8(rec + f.layout.zps + 16 * quarter);
    const uint16x8_t lo = vmovl_u8(vget_low_u8(z)), hi = vmovl_high_u8(z);
    zp[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(lo)));
    zp[1] = vreinterpretq_s32_u32(vmovl_high_u16(lo));
    zp[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(hi)));
    zp[3] = vreinterpretq_s32_u32(vmovl_high_u16(hi));
  } else {
    zp[0] = zp[1] = zp[2] = zp[3] = vdupq_n_s32(f.common_zp);
  }
  #pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    if (f.scale_f16) {
      // Positive normal f16 widened exactly (f32_of_normal_f16): the exponent rebiased.
      const uint32x4_t h = vmovl_u16(vld1_u16(reinterpret_cast<const uint16_t*>(rec + f.layout.scales) + 16 * quarter + 4 * j));
      scale[j] = vreinterpretq_f32_u32(vaddq_u32(vshlq_n_u32(h, 13), vdupq_n_u32(0x38000000)));
    } else {
      scale[j] = vld1q_f32(reinterpret_cast<const float*>(rec + f.layout.scales) + 16 * quarter + 4 * j);
    }
    if constexpr (kBits == 8) zp[j] = vsubq_s32(zp[j], vdupq_n_s32(128));
  }
  #pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    const int32_t xsum = a.xsum[(r0 + r) * a.blocks + b];
    const float d = a.xd[(r0 + r) * a.blocks + b];
    #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const int32x4_t t = vmlsq_n_s32(acc[r][j], zp[j], xsum);
      const float32x4_t term = vmulq_f32(vcvtq_f32_s32(t), vmulq_n_f32(scale[j], d));
      float* p = sums + r * 64 + 16 * quarter + 4 * j;
      vst1q_f32(p, vaddq_f32(vld1q_f32(p), term));
    }
  }
}

// Adds block b's terms for rows r0..r0+kRows-1 and the 16 columns of quarter `quarter` of the
// strip whose record for b is `rec` to sums (row r at sums + r·64), each (group, row, column
// vector) through `dot(acc, first, second, x)`. Always inlined, and the quarters below are
// flattened, so that `dot` runs inline under its quarter's target.
template <int kBits, int kRows, typename Dot>
__attribute__((always_inline)) inline void quarter_sums(const DynGemmArgs& a, const RecordFormat& f, const uint8_t* rec,
                                                        int64_t b, int64_t r0, int quarter, float* sums, const Dot& dot) {
  constexpr int64_t kGroupBytes = kBits == 4 ? 256 : 512;
  int32x4_t acc[kRows][4];
  const int8_t* xq[kRows];
  #pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[r][j] = vdupq_n_s32(0);
    xq[r] = a.xq + (r0 + r) * a.x_stride + b * a.block_padded;
  }
  for (int64_t g = 0; g < a.block_padded / 8; ++g) {
    int8x16_t first[4], second[4];
    load_group<kBits>(rec + g * kGroupBytes + 64 * quarter, first, second);
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const int8x8_t x = vld1_s8(xq[r] + 8 * g);
      #pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) acc[r][j] = dot(acc[r][j], first[j], second[j], x);
    }
  }
  add_block_terms<kBits, kRows>(a, f, rec, b, r0, quarter, acc, sums);
}

// sdot by element, under the dotprod target.
struct SdotStep {
  QRT_A64_DOT int32x4_t operator()(int32x4_t acc, int8x16_t first, int8x16_t second, int8x8_t x) const {
    return vdotq_lane_s32(vdotq_lane_s32(acc, first, x, 0), second, x, 1);
  }
};

// The same sums at plain neon (dot4_lane).
struct WideningStep {
  int32x4_t operator()(int32x4_t acc, int8x16_t first, int8x16_t second, int8x8_t x) const {
    return dot4_lane(dot4_lane(acc, first, x, 0), second, x, 1);
  }
};

template <int kBits, int kRows>
QRT_A64_DOT __attribute__((flatten)) void dot_quarter(const DynGemmArgs& a, const RecordFormat& f, const uint8_t* rec,
                                                      int64_t b, int64_t r0, int quarter, float* sums) {
  quarter_sums<kBits, kRows>(a, f, rec, b, r0, quarter, sums, SdotStep());
}
template <int kBits, int kRows>
void neon_quarter(const DynGemmArgs& a, const RecordFormat& f, const uint8_t* rec, int64_t b, int64_t r0, int quarter,
                  float* sums) {
  quarter_sums<kBits, kRows>(a, f, rec, b, r0, quarter, sums, WideningStep());
}

template <int kBits, bool kDot>
void run_dyn(const DynGemmArgs& a, const KernelDesc& d) {
  alignas(64) float sums[kRowChunk * 64];
  const RecordFormat f{dyn_record_layout(a.block_padded, d), d.scale_f16, d.weight_zp, d.zero_point};
  const int64_t record = f.layout.bytes;
  const float32x4_t lo = vdupq_n_f32(a.lo), hi = vdupq_n_f32(a.hi);
  for (int64_t j0 = 0; j0 < a.n; j0 += kDynStripCols) {
    const uint8_t* strip = a.w + j0 / kDynStripCols * a.blocks * record;
    const int64_t cols = std::min<int64_t>(kDynStripCols, a.n - j0);
    const int quarters = int((cols + 15) / 16);
    for (int64_t c0 = 0; c0 < a.rows; c0 += kRowChunk) {
      const int64_t rows = std::min(kRowChunk, a.rows - c0);
      std::memset(sums, 0, size_t(rows * 64) * sizeof(float));
      for (int64_t b = 0; b < a.blocks; ++b) {
        const uint8_t* rec = strip + b * record;
        for (int q = 0; q < quarters; ++q) {
          auto quarter = [&](auto rows_here, int64_t r) {
            constexpr int kRows = decltype(rows_here)::value;
            if constexpr (kDot) dot_quarter<kBits, kRows>(a, f, rec, b, c0 + r, q, sums + r * 64);
            else neon_quarter<kBits, kRows>(a, f, rec, b, c0 + r, q, sums + r * 64);
          };
          int64_t r = 0;
          for (; r + 4 <= rows; r += 4) quarter(std::integral_constant<int, 4>(), r);
          switch (rows - r) {
            case 3: quarter(std::integral_constant<int, 3>(), r); break;
            case 2: quarter(std::integral_constant<int, 2>(), r); break;
            case 1: quarter(std::integral_constant<int, 1>(), r); break;
            default: break;
          }
        }
      }
      // + bias, the clamp, and the store: whole vectors, then the last columns one by one.
      for (int64_t r = 0; r < rows; ++r) {
        const float* s = sums + r * 64;
        float* y = a.y + (c0 + r) * a.y_stride + j0;
        const float* bias = a.bias ? a.bias + j0 : nullptr;
        int64_t j = 0;
        for (; j + 4 <= cols; j += 4) {
          float32x4_t v = vld1q_f32(s + j);
          if (bias) v = vaddq_f32(v, vld1q_f32(bias + j));
          vst1q_f32(y + j, clamp4(v, lo, hi));
        }
        for (; j < cols; ++j) {
          float v = s[j];
          if (bias) v = v + bias[j];
          y[j] = clamp_f32(v, a.lo, a.hi);
        }
      }
    }
  }
}

}  // namespace

void a64_dot_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc) {
  desc->weight_bits == 4 ? run_dyn<4, true>(*args, *desc) : run_dyn<8, true>(*args, *desc);
}

void a64_neon_dyn_gemm(const DynGemmArgs* args, const KernelDesc* desc) {
  desc->weight_bits == 4 ? run_dyn<4, false>(*args, *desc) : run_dyn<8, false>(*args, *desc);
}

}  // namespace qrt::jit::a64gen
