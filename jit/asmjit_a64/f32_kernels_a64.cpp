// qrt — the AArch64 backend's f32 micro-kernels, written with NEON intrinsics like the
// weight-only kernel beside them. Both compute exactly the reference's float ops
// (docs/numerics.md): acc = +0, then acc = acc + f32(x·w) in the reference's order, one rounding
// each and no fmla (-ffp-contract=off: fmul, then fadd), then the bias and qrt.clamp's formula.
//   kF32Gemm:   4 rows × one 16-column panel (16 accumulators); k runs four at a time with the
//               rows' activations loaded as vectors and multiplied by element, then one at a time.
//   kF32Dwconv: per output pixel, 16 channels (4 vectors) at a time over the window's taps in
//               (ky, kx) order, then 4 channels, then one.
#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "jit/asmjit_a64/generators.h"
#include "jit/asmjit_a64/neon_f32.h"

namespace qrt::jit::a64gen {

namespace {

// acc[r][h] = acc[r][h] + f32(x · w[h]) for one k.
template <int kRows, int kLane>
inline void step(float32x4_t (&acc)[kRows][4], const float32x4x4_t& w, const float32x4_t (&x)[kRows]) {
  #pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) acc[r][h] = vaddq_f32(acc[r][h], vmulq_laneq_f32(w.val[h], x[r], kLane));
  }
}

template <int kRows>
void f32_tile(const F32GemmArgs& a, int64_t r0, int64_t panel) {
  float32x4_t acc[kRows][4];
  #pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) acc[r][h] = vdupq_n_f32(0.0f);
  }
  const float* w = a.w + panel * a.k * 16;
  const float* xr[kRows];
  for (int r = 0; r < kRows; ++r) xr[r] = a.x + (r0 + r) * a.x_stride;
  int64_t kk = 0;
  for (; kk + 4 <= a.k; kk += 4, w += 64) {
    float32x4_t x[kRows];
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) x[r] = vld1q_f32(xr[r] + kk);
    step<kRows, 0>(acc, vld1q_f32_x4(w), x);
    step<kRows, 1>(acc, vld1q_f32_x4(w + 16), x);
    step<kRows, 2>(acc, vld1q_f32_x4(w + 32), x);
    step<kRows, 3>(acc, vld1q_f32_x4(w + 48), x);
  }
  for (; kk < a.k; ++kk, w += 16) {
    float32x4_t x[kRows];
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) x[r] = vdupq_n_f32(xr[r][kk]);
    step<kRows, 0>(acc, vld1q_f32_x4(w), x);
  }
  const float32x4_t lo = vdupq_n_f32(a.lo), hi = vdupq_n_f32(a.hi);
  const int64_t j0 = panel * 16, cols = std::min<int64_t>(16, a.n - j0);
  #pragma GCC unroll 4
  for (int h = 0; h < 4; ++h) {
    const int64_t hc = cols - 4 * h;
    if (hc <= 0) continue;
    #pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      float32x4_t v = acc[r][h];
      if (a.bias) v = vaddq_f32(v, vld1q_f32(a.bias + j0 + 4 * h));  // bias has n_padded values
      v = clamp4(v, lo, hi);
      float* y = a.y + (r0 + r) * a.y_stride + j0 + 4 * h;
      if (hc >= 4) {
        vst1q_f32(y, v);
      } else {
        float stage[4];
        vst1q_f32(stage, v);
        std::memcpy(y, stage, size_t(hc) * sizeof(float));
      }
    }
  }
}

// One block of 4·kVectors channels from `ch` of output pixel p of a kF32Dwconv row.
template <int kVectors>
inline void dw_block(const F32DwArgs& a, int64_t p, int64_t ch, float32x4_t lo, float32x4_t hi) {
  float32x4_t acc[kVectors];
  for (int h = 0; h < kVectors; ++h) acc[h] = vdupq_n_f32(0.0f);
  for_each_f32_dw_tap(a, p, [&](const float* x, const float* w) {
    #pragma GCC unroll 4
    for (int h = 0; h < kVectors; ++h) acc[h] = vaddq_f32(acc[h], vmulq_f32(vld1q_f32(x + ch + 4 * h), vld1q_f32(w + ch + 4 * h)));
  });
  float* y = a.y + p * a.c + ch;
  #pragma GCC unroll 4
  for (int h = 0; h < kVectors; ++h) {
    float32x4_t v = acc[h];
    if (a.bias) v = vaddq_f32(v, vld1q_f32(a.bias + ch + 4 * h));
    vst1q_f32(y + 4 * h, clamp4(v, lo, hi));
  }
}

}  // namespace

void a64_f32_dwconv(const F32DwArgs* args, const KernelDesc* desc) {
  (void)desc;
  const F32DwArgs& a = *args;
  const float32x4_t lo = vdupq_n_f32(a.lo), hi = vdupq_n_f32(a.hi);
  for (int64_t p = 0; p < a.ow; ++p) {
    int64_t ch = 0;
    for (; ch + 16 <= a.c; ch += 16) dw_block<4>(a, p, ch, lo, hi);
    for (; ch + 4 <= a.c; ch += 4) dw_block<1>(a, p, ch, lo, hi);
    for (; ch < a.c; ++ch) {
      float acc = 0.0f;
      for_each_f32_dw_tap(a, p, [&](const float* x, const float* w) {
        const float prod = x[ch] * w[ch];
        acc = acc + prod;
      });
      if (a.bias) acc = acc + a.bias[ch];
      a.y[p * a.c + ch] = clamp_f32(acc, a.lo, a.hi);
    }
  }
}

void a64_f32_gemm(const F32GemmArgs* args, const KernelDesc* desc) {
  (void)desc;
  const F32GemmArgs& a = *args;
  // Panels outermost: a panel's k x 16 weights stay in cache while every row group reads them
  // (the callers hand over row blocks small enough for their activations to stay too).
  const int64_t panels = (a.n + 15) / 16;
  for (int64_t p = 0; p < panels; ++p) {
    int64_t r0 = 0;
    for (; r0 + 4 <= a.rows; r0 += 4) f32_tile<4>(a, r0, p);
    switch (a.rows - r0) {
      case 3: f32_tile<3>(a, r0, p); break;
      case 2: f32_tile<2>(a, r0, p); break;
      case 1: f32_tile<1>(a, r0, p); break;
      default: break;
    }
  }
}

}  // namespace qrt::jit::a64gen
