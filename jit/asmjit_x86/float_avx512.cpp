// qrt — the x86 backend's AVX-512 f32 micro-kernels (kF32Gemm, kF32Dwconv), written with
// intrinsics like intrinsics_avx512.cpp. Both keep the reference's order exactly: a separate
// vmulps and vaddps per product (one rounding each, no FMA), k (or the window's taps) in
// increasing order, so the results are the scalar twins' bytes (jit/ref/twins.cpp). On Zen 4
// and Zen 5 the adds run on their own pipes, so the pair costs what one FMA would.
#include <immintrin.h>

#include <algorithm>

#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

#define QRT_AVX512 __attribute__((target("avx512f"), always_inline)) inline

constexpr int kGemmRows = 12;  // 12 x 32: 24 accumulators, two weight vectors, a broadcast

QRT_AVX512 __mmask16 low16(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1); }

// qrt.clamp on 16 lanes: max(lo, v) and min(hi, v) return v when it is NaN, and v when both
// are zeros (the second operand), as v < lo ? lo : v > hi ? hi : v does. (The maskz forms
// with every lane set are the same instructions; GCC 12 warns on the plain ones' undefined
// pass-through operand.)
QRT_AVX512 __m512 clamp16(__m512 v, __m512 lo, __m512 hi) {
  return _mm512_maskz_min_ps(0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, v));
}

// 16 lanes at p: all of them (Full), or those of m (the rest read as 0, never touched).
template <bool Full>
QRT_AVX512 __m512 load16(__mmask16 m, const float* p) {
  if constexpr (Full) return _mm512_loadu_ps(p);
  return _mm512_maskz_loadu_ps(m, p);
}
template <bool Full>
QRT_AVX512 void store16(float* p, __mmask16 m, __m512 v) {
  if constexpr (Full) {
    _mm512_storeu_ps(p, v);
  } else {
    _mm512_mask_storeu_ps(p, m, v);
  }
}

// Rows [0, R) by vectors [0, V) of 16 columns from column j0: k in order, then bias, clamp.
template <int R, int V>
QRT_AVX512 void gemm_tile(const F32GemmArgs* a, const float* x, float* y, int64_t j0) {
  __m512 acc[R][V];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  const int64_t xs = a->x_stride, panel = 16 * a->k;
  const float* w = a->w + j0 * a->k;  // the panel of columns [j0, j0 + 16); the next follows it
  for (int64_t kk = 0; kk < a->k; ++kk, w += 16) {
    __m512 b[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) b[v] = _mm512_loadu_ps(w + panel * v);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_set1_ps(x[r * xs + kk]);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_add_ps(acc[r][v], _mm512_mul_ps(xv, b[v]));
    }
  }
  const __m512 lo = _mm512_set1_ps(a->lo), hi = _mm512_set1_ps(a->hi);
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) {
    const int64_t col = j0 + 16 * v;
    if (col >= a->n) break;
    const __mmask16 m = low16(a->n - col);
    const __m512 bias = a->bias ? _mm512_loadu_ps(a->bias + col) : _mm512_setzero_ps();
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512 t = a->bias ? _mm512_add_ps(acc[r][v], bias) : acc[r][v];
      if (a->n - col >= 16) {
        _mm512_storeu_ps(y + r * a->y_stride + col, clamp16(t, lo, hi));
      } else {
        _mm512_mask_storeu_ps(y + r * a->y_stride + col, m, clamp16(t, lo, hi));
      }
    }
  }
}

template <int V>
QRT_AVX512 void gemm_rows(const F32GemmArgs* a, const float* x, float* y, int64_t rows, int64_t j0) {
  switch (rows) {
    case 1: return gemm_tile<1, V>(a, x, y, j0);
    case 2: return gemm_tile<2, V>(a, x, y, j0);
    case 3: return gemm_tile<3, V>(a, x, y, j0);
    case 4: return gemm_tile<4, V>(a, x, y, j0);
    case 5: return gemm_tile<5, V>(a, x, y, j0);
    case 6: return gemm_tile<6, V>(a, x, y, j0);
    case 7: return gemm_tile<7, V>(a, x, y, j0);
    case 8: return gemm_tile<8, V>(a, x, y, j0);
    case 9: return gemm_tile<9, V>(a, x, y, j0);
    case 10: return gemm_tile<10, V>(a, x, y, j0);
    case 11: return gemm_tile<11, V>(a, x, y, j0);
    default: return gemm_tile<kGemmRows, V>(a, x, y, j0);
  }
}

// One channel block [ch0, ch0 + 16) of a depthwise row, any window: every tap checked.
QRT_AVX512 __m512 dw_pixel_checked(const F32DwArgs* a, int64_t p, int64_t ch0, __mmask16 m) {
  __m512 acc = _mm512_setzero_ps();
  const int64_t c = a->c, col0 = p * a->stride - a->pad_left;
  for (int64_t ky = 0; ky < a->kh; ++ky) {
    const float* row = a->rows[ky];
    if (!row) continue;
    for (int64_t kx = 0; kx < a->kw; ++kx) {
      const int64_t col = col0 + kx * a->dilation;
      if (col < 0 || col >= a->iw) continue;
      const __m512 xv = _mm512_maskz_loadu_ps(m, row + col * c + ch0);
      const __m512 wv = _mm512_maskz_loadu_ps(m, a->w + (ky * a->kw + kx) * c + ch0);
      acc = _mm512_add_ps(acc, _mm512_mul_ps(xv, wv));
    }
  }
  return acc;
}

// Pixels [begin, end) of a channel block, every tap checked, then bias and clamp.
QRT_AVX512 void dw_pixels_checked(const F32DwArgs* a, int64_t begin, int64_t end, int64_t ch0, __mmask16 m, __m512 bias,
                                  __m512 lo, __m512 hi) {
  for (int64_t p = begin; p < end; ++p) {
    __m512 acc = dw_pixel_checked(a, p, ch0, m);
    if (a->bias) acc = _mm512_add_ps(acc, bias);
    _mm512_mask_storeu_ps(a->y + p * a->c + ch0, m, clamp16(acc, lo, hi));
  }
}

// P interior pixels from p of a 3-wide window's channel block: P independent sums, so the
// adds of neighbouring pixels overlap (each sum is a chain of up to nine dependent adds).
template <int P, bool Full>
QRT_AVX512 void dw_pixels_3wide(const F32DwArgs* a, const float* const* rows, const __m512 (&w)[3][3], int64_t p,
                                int64_t ch0, __mmask16 m, __m512 bias, __m512 lo, __m512 hi) {
  const int64_t c = a->c, step = a->dilation * c, pixel = a->stride * c;
  __m512 acc[P];
#pragma GCC unroll 4
  for (int i = 0; i < P; ++i) acc[i] = _mm512_setzero_ps();
#pragma GCC unroll 3
  for (int ky = 0; ky < 3; ++ky) {
    if (!rows[ky]) continue;
    const float* x = rows[ky] + (p * a->stride - a->pad_left) * c + ch0;
#pragma GCC unroll 3
    for (int kx = 0; kx < 3; ++kx) {
#pragma GCC unroll 4
      for (int i = 0; i < P; ++i) {
        acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(load16<Full>(m, x + i * pixel + kx * step), w[ky][kx]));
      }
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < P; ++i) {
    const __m512 t = a->bias ? _mm512_add_ps(acc[i], bias) : acc[i];
    store16<Full>(a->y + (p + i) * c + ch0, m, clamp16(t, lo, hi));
  }
}

// A 3-wide window's channel block with its nine weight vectors in registers: the edge pixels
// check their columns, the interior ones run four at a time.
template <bool Full>
QRT_AVX512 void dw_block_3wide(const F32DwArgs* a, int64_t ch0, __mmask16 m, __m512 lo, __m512 hi) {
  const int64_t c = a->c, kh = a->kh;
  __m512 w[3][3];
#pragma GCC unroll 3
  for (int ky = 0; ky < 3; ++ky) {
#pragma GCC unroll 3
    for (int kx = 0; kx < 3; ++kx) {
      w[ky][kx] = ky < kh ? _mm512_maskz_loadu_ps(m, a->w + (ky * 3 + kx) * c + ch0) : _mm512_setzero_ps();
    }
  }
  const float* rows[3] = {kh > 0 ? a->rows[0] : nullptr, kh > 1 ? a->rows[1] : nullptr, kh > 2 ? a->rows[2] : nullptr};
  const __m512 bias = a->bias ? _mm512_maskz_loadu_ps(m, a->bias + ch0) : _mm512_setzero_ps();
  int64_t first, last;
  f32_dw_interior(*a, &first, &last);
  dw_pixels_checked(a, 0, first, ch0, m, bias, lo, hi);
  int64_t p = first;
  for (; p + 4 <= last; p += 4) dw_pixels_3wide<4, Full>(a, rows, w, p, ch0, m, bias, lo, hi);
  for (; p < last; ++p) dw_pixels_3wide<1, Full>(a, rows, w, p, ch0, m, bias, lo, hi);
  dw_pixels_checked(a, last, a->ow, ch0, m, bias, lo, hi);
}

}  // namespace

__attribute__((target("avx512f"))) void avx512_f32_gemm(const F32GemmArgs* args, const KernelDesc*) {
  // Column blocks outside, row blocks inside: a block's k x 32 weight panel is read by every
  // row block while it is in cache; the caller's rows (a few tiles) stay in L1.
  for (int64_t j0 = 0; j0 < args->n; j0 += 32) {
    const bool two = args->n - j0 > 16;  // then n_padded >= j0 + 32
    for (int64_t r0 = 0; r0 < args->rows; r0 += kGemmRows) {
      const int64_t rows = std::min<int64_t>(kGemmRows, args->rows - r0);
      const float* x = args->x + r0 * args->x_stride;
      float* y = args->y + r0 * args->y_stride;
      if (two) {
        gemm_rows<2>(args, x, y, rows, j0);
      } else {
        gemm_rows<1>(args, x, y, rows, j0);
      }
    }
  }
}

__attribute__((target("avx512f"))) void avx512_f32_dwconv(const F32DwArgs* args, const KernelDesc*) {
  const __m512 lo = _mm512_set1_ps(args->lo), hi = _mm512_set1_ps(args->hi);
  for (int64_t ch0 = 0; ch0 < args->c; ch0 += 16) {
    const __mmask16 m = low16(args->c - ch0);
    if (args->kw == 3 && args->kh <= 3) {
      // Whole blocks without masks (plain loads and stores), the channel tail under its mask.
      if (args->c - ch0 >= 16) {
        dw_block_3wide<true>(args, ch0, m, lo, hi);
      } else {
        dw_block_3wide<false>(args, ch0, m, lo, hi);
      }
      continue;
    }
    const __m512 bias = args->bias ? _mm512_maskz_loadu_ps(m, args->bias + ch0) : _mm512_setzero_ps();
    dw_pixels_checked(args, 0, args->ow, ch0, m, bias, lo, hi);
  }
}

}  // namespace qrt::jit::x86gen
