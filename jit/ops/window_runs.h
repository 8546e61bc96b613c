// qrt — internal: how windowed NHWC kernels (depthwise convolution, pooling) walk an output
// row. Pixels whose window touches the padding get one row of tap pointers each (padding taps
// point at `pad`); the interior run gets a single row that the kernel steps along the input.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/nn_params.h"

namespace qrt::jit {

/// The output pixels [first, last] of a row whose windows lie inside the input horizontally
/// (first > last when there are none).
struct InteriorColumns {
  int64_t first = 0, last = -1;
};

/// Computes the interior columns of an output row of width `ow` over an input of width `wd`.
inline InteriorColumns interior_columns(const Window2d& w, int64_t wd, int64_t ow) {
  InteriorColumns r;
  r.first = std::min<int64_t>(ow, (w.pad_left + w.sw - 1) / w.sw);
  const int64_t span = wd - 1 - (w.kw - 1) * w.dw + w.pad_left;
  r.last = span >= 0 ? std::min<int64_t>(ow - 1, span / w.sw) : -1;
  return r;
}

/// The bytes `pad` must hold for for_each_window_run over output rows of width `ow`: one pixel's
/// channels, plus the interior run's steps (the run advances `pad` too). The interior windows
/// lie inside the input row, so this is at most an input row: a stride far beyond the input
/// (a hostile model: fuzz_c_api -seed=59 asked 64 GB for one output pixel) costs nothing.
inline int64_t window_pad_bytes(const Window2d& w, int64_t wd, int64_t ow, int64_t channels) {
  const InteriorColumns in = interior_columns(w, wd, ow);
  return channels + (in.first <= in.last ? (in.last - in.first) * w.sw * channels : 0);
}

/// Calls `run(from, to, taps, stepping)` for the pixel runs of output row `oy` of image `n`:
/// `taps` holds `taps_per_pixel` pointers per pixel (stepping: one row for the whole run).
/// `pad` must stay readable for window_pad_bytes(w, wd, ow, c) bytes.
/// Extra taps beyond kh·kw (padding to an even count) point at `pad`.
template <typename Run>
void for_each_window_run(const Window2d& w, const uint8_t* x, int64_t n, int64_t h, int64_t wd, int64_t c, int64_t oy,
                         int64_t ow, unsigned taps_per_pixel, const uint8_t* pad, std::vector<const uint8_t*>& ptrs,
                         Run run) {
  ptrs.resize(size_t(ow) * taps_per_pixel);
  auto fill = [&](int64_t ox) {
    const uint8_t** row = ptrs.data() + ox * taps_per_pixel;
    for (int64_t ky = 0; ky < w.kh; ++ky) {
      const int64_t iy = oy * w.sh - w.pad_top + ky * w.dh;
      for (int64_t kx = 0; kx < w.kw; ++kx) {
        const int64_t ix = ox * w.sw - w.pad_left + kx * w.dw;
        const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < wd;
        row[ky * w.kw + kx] = inside ? x + ((n * h + iy) * wd + ix) * c : pad;
      }
    }
    for (int64_t t = w.kh * w.kw; t < int64_t(taps_per_pixel); ++t) row[t] = pad;
  };
  const InteriorColumns in = interior_columns(w, wd, ow);
  const bool has_interior = in.first <= in.last;
  const int64_t left_end = has_interior ? in.first : ow;
  for (int64_t ox = 0; ox < left_end; ++ox) fill(ox);
  if (left_end > 0) run(int64_t(0), left_end, ptrs.data(), false);
  if (!has_interior) return;
  fill(in.first);
  run(in.first, in.last + 1, ptrs.data() + in.first * taps_per_pixel, true);
  for (int64_t ox = in.last + 1; ox < ow; ++ox) fill(ox);
  if (in.last + 1 < ow) run(in.last + 1, ow, ptrs.data() + (in.last + 1) * taps_per_pixel, false);
}

}  // namespace qrt::jit
