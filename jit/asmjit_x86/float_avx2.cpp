// qrt — the x86 backend's AVX2 f32 micro-kernels (kF32Gemm, kF32Dwconv), written with
// intrinsics. As float_avx512.cpp: a separate multiply and add per product (no FMA), k or the
// window's taps in increasing order, so the results are the scalar twins' bytes.
#include <immintrin.h>

#include <algorithm>

#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

#define QRT_AVX2 __attribute__((target("avx2"), always_inline)) inline

constexpr int kGemmRows = 6;  // 6 x 16: twelve accumulators, two weight vectors, a broadcast

// The lanes below n (0..8) as a vmaskmov mask.
QRT_AVX2 __m256i low8(int64_t n) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(std::min<int64_t>(n, 8))), lane);
}

// qrt.clamp on 8 lanes (see clamp16 in float_avx512.cpp: NaN and equal zeros give v).
QRT_AVX2 __m256 clamp8(__m256 v, __m256 lo, __m256 hi) { return _mm256_min_ps(hi, _mm256_max_ps(lo, v)); }

template <int R, int V>
QRT_AVX2 void gemm_tile(const F32GemmArgs* a, const float* x, float* y, int64_t j0) {
  __m256 acc[R][V];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_ps();
  }
  const int64_t xs = a->x_stride;
  const float* w = a->w + j0 * a->k;  // the 16-column panel of j0 (j0 is a multiple of 16)
  for (int64_t kk = 0; kk < a->k; ++kk, w += 16) {
    __m256 b[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) b[v] = _mm256_loadu_ps(w + 8 * v);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_broadcast_ss(x + r * xs + kk);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_add_ps(acc[r][v], _mm256_mul_ps(xv, b[v]));
    }
  }
  const __m256 lo = _mm256_set1_ps(a->lo), hi = _mm256_set1_ps(a->hi);
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) {
    const int64_t col = j0 + 8 * v;
    if (col >= a->n) break;
    const __m256i m = low8(a->n - col);
    const __m256 bias = a->bias ? _mm256_loadu_ps(a->bias + col) : _mm256_setzero_ps();
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 t = a->bias ? _mm256_add_ps(acc[r][v], bias) : acc[r][v];
      if (a->n - col >= 8) {
        _mm256_storeu_ps(y + r * a->y_stride + col, clamp8(t, lo, hi));
      } else {
        _mm256_maskstore_ps(y + r * a->y_stride + col, m, clamp8(t, lo, hi));
      }
    }
  }
}

template <int V>
QRT_AVX2 void gemm_rows(const F32GemmArgs* a, const float* x, float* y, int64_t rows, int64_t j0) {
  switch (rows) {
    case 1: return gemm_tile<1, V>(a, x, y, j0);
    case 2: return gemm_tile<2, V>(a, x, y, j0);
    case 3: return gemm_tile<3, V>(a, x, y, j0);
    case 4: return gemm_tile<4, V>(a, x, y, j0);
    case 5: return gemm_tile<5, V>(a, x, y, j0);
    default: return gemm_tile<kGemmRows, V>(a, x, y, j0);
  }
}

// One block of 8 channels of one pixel, any window: every tap checked.
QRT_AVX2 __m256 dw_pixel_checked(const F32DwArgs* a, int64_t p, int64_t ch0, __m256i m) {
  __m256 acc = _mm256_setzero_ps();
  const int64_t c = a->c, col0 = p * a->stride - a->pad_left;
  for (int64_t ky = 0; ky < a->kh; ++ky) {
    const float* row = a->rows[ky];
    if (!row) continue;
    for (int64_t kx = 0; kx < a->kw; ++kx) {
      const int64_t col = col0 + kx * a->dilation;
      if (col < 0 || col >= a->iw) continue;
      const __m256 xv = _mm256_maskload_ps(row + col * c + ch0, m);
      const __m256 wv = _mm256_maskload_ps(a->w + (ky * a->kw + kx) * c + ch0, m);
      acc = _mm256_add_ps(acc, _mm256_mul_ps(xv, wv));
    }
  }
  return acc;
}

// 8 lanes at p: all of them (Full: a plain load or store), or those of m (vmaskmovps, which
// AMD cores run slowly, only for the channel tail).
template <bool Full>
QRT_AVX2 __m256 load8(__m256i m, const float* p) {
  if constexpr (Full) return _mm256_loadu_ps(p);
  return _mm256_maskload_ps(p, m);
}
template <bool Full>
QRT_AVX2 void store8(float* p, __m256i m, __m256 v) {
  if constexpr (Full) {
    _mm256_storeu_ps(p, v);
  } else {
    _mm256_maskstore_ps(p, m, v);
  }
}

// Pixels [begin, end) of a block of 8 channels, every tap checked, then bias and clamp.
QRT_AVX2 void dw_pixels_checked(const F32DwArgs* a, int64_t begin, int64_t end, int64_t ch0, __m256i m, __m256 bias,
                                __m256 lo, __m256 hi) {
  for (int64_t p = begin; p < end; ++p) {
    __m256 acc = dw_pixel_checked(a, p, ch0, m);
    if (a->bias) acc = _mm256_add_ps(acc, bias);
    _mm256_maskstore_ps(a->y + p * a->c + ch0, m, clamp8(acc, lo, hi));
  }
}

// P interior pixels from p of a 3-wide window's block of 8 channels (P independent sums).
template <int P, bool Full>
QRT_AVX2 void dw_pixels_3wide(const F32DwArgs* a, const float* const* rows, const __m256 (&w)[3][3], int64_t p,
                              int64_t ch0, __m256i m, __m256 bias, __m256 lo, __m256 hi) {
  const int64_t c = a->c, step = a->dilation * c, pixel = a->stride * c;
  __m256 acc[P];
#pragma GCC unroll 4
  for (int i = 0; i < P; ++i) acc[i] = _mm256_setzero_ps();
#pragma GCC unroll 3
  for (int ky = 0; ky < 3; ++ky) {
    if (!rows[ky]) continue;
    const float* x = rows[ky] + (p * a->stride - a->pad_left) * c + ch0;
#pragma GCC unroll 3
    for (int kx = 0; kx < 3; ++kx) {
#pragma GCC unroll 4
      for (int i = 0; i < P; ++i) {
        acc[i] = _mm256_add_ps(acc[i], _mm256_mul_ps(load8<Full>(m, x + i * pixel + kx * step), w[ky][kx]));
      }
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < P; ++i) {
    const __m256 t = a->bias ? _mm256_add_ps(acc[i], bias) : acc[i];
    store8<Full>(a->y + (p + i) * c + ch0, m, clamp8(t, lo, hi));
  }
}

// A 3-wide window's block of 8 channels, its nine weight vectors in registers: the edge
// pixels check their columns, the interior ones run two at a time (16 registers).
template <bool Full>
QRT_AVX2 void dw_block_3wide(const F32DwArgs* a, int64_t ch0, __m256i m, __m256 lo, __m256 hi) {
  const int64_t c = a->c, kh = a->kh;
  __m256 w[3][3];
#pragma GCC unroll 3
  for (int ky = 0; ky < 3; ++ky) {
#pragma GCC unroll 3
    for (int kx = 0; kx < 3; ++kx) {
      w[ky][kx] = ky < kh ? _mm256_maskload_ps(a->w + (ky * 3 + kx) * c + ch0, m) : _mm256_setzero_ps();
    }
  }
  const float* rows[3] = {kh > 0 ? a->rows[0] : nullptr, kh > 1 ? a->rows[1] : nullptr, kh > 2 ? a->rows[2] : nullptr};
  const __m256 bias = a->bias ? _mm256_maskload_ps(a->bias + ch0, m) : _mm256_setzero_ps();
  int64_t first, last;
  f32_dw_interior(*a, &first, &last);
  dw_pixels_checked(a, 0, first, ch0, m, bias, lo, hi);
  int64_t p = first;
  for (; p + 2 <= last; p += 2) dw_pixels_3wide<2, Full>(a, rows, w, p, ch0, m, bias, lo, hi);
  for (; p < last; ++p) dw_pixels_3wide<1, Full>(a, rows, w, p, ch0, m, bias, lo, hi);
  dw_pixels_checked(a, last, a->ow, ch0, m, bias, lo, hi);
}

}  // namespace

__attribute__((target("avx2"))) void avx2_f32_gemm(const F32GemmArgs* args, const KernelDesc*) {
  for (int64_t j0 = 0; j0 < args->n; j0 += 16) {
    const bool two = args->n - j0 > 8;  // n_padded is a multiple of 16: the second vector exists
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

__attribute__((target("avx2"))) void avx2_f32_dwconv(const F32DwArgs* args, const KernelDesc*) {
  const __m256 lo = _mm256_set1_ps(args->lo), hi = _mm256_set1_ps(args->hi);
  for (int64_t ch0 = 0; ch0 < args->c; ch0 += 8) {
    const __m256i m = low8(args->c - ch0);
    if (args->kw == 3 && args->kh <= 3) {
      if (args->c - ch0 >= 8) {
        dw_block_3wide<true>(args, ch0, m, lo, hi);
      } else {
        dw_block_3wide<false>(args, ch0, m, lo, hi);
      }
      continue;
    }
    const __m256 bias = args->bias ? _mm256_maskload_ps(args->bias + ch0, m) : _mm256_setzero_ps();
    dw_pixels_checked(args, 0, args->ow, ch0, m, bias, lo, hi);
  }
}

}  // namespace qrt::jit::x86gen
