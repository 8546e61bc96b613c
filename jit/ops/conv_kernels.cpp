// qrt — qrt.conv2d (quantized, constant filter) on the GEMM micro-kernels: one GEMM per
// group, or per run of merged groups (conv_groups.h), each over its channels of the input.
// 1x1 stride-1 unpadded NHWC convolutions are GEMMs over the input as it is; other NHWC
// convolutions read their windows from a padded copy of the input rows in place on the
// window tiles (implicit GEMM: every x86 level's byte tiles and the scalar twins; see
// plan_window_tiles); everything else (NCHW, weight zero points, narrow output rows, int32
// results streamed to a fused consumer) goes through im2col rows built one L2 block at a
// time and packed directly. Depthwise convolutions (one channel per group, no multiplier,
// NHWC) have their own kernel (depthwise_kernels.cpp).
#include <algorithm>
#include <climits>
#include <cstring>
#include <numeric>

#include "ir/nn_params.h"
#include "jit/ops/conv_bytes.h"
#include "jit/ops/conv_groups.h"
#include "jit/ops/gemm_kernels.h"
#include "jit/ops/requant_epilogue.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

namespace {

constexpr int64_t kIm2colBlockBytes = 192 * 1024;
// Bytes of scratch beyond the last im2col row: whole 16-byte moves of short window rows and
// the 4-byte zeroing of the k padding may run past it.
constexpr size_t kIm2colSlack = 16;
// Window heights whose input rows im2col_rows tracks per output row (taller ones go pixel by pixel).
constexpr int64_t kMaxIm2colTaps = 16;
// The most bytes of result rows a row producer makes per call (row_fusion.h): they are read
// back from L1 or L2 by the consumer right away.
constexpr int64_t kRowBlockBytes = 64 * 1024;
// An im2col task's least work in multiply-adds (as kMinGemmTaskMacs: ~1.5 µs at VNNI rates).
constexpr int64_t kMinConvTaskMacs = 512 * 1024;

/// One GEMM of a convolution ready to run: ConvGemmPart's channels, its GEMM and its window tiles.
struct ConvPart {
  int64_t in_offset = 0, in_channels = 0, out_offset = 0;
  std::unique_ptr<GemmKernel> gemm;
  int64_t window_cols = 0;       // plan_window_tiles
  int64_t window_row_bytes = 0;  // window rows: k bytes per tap (0: window pixels)
  std::unique_ptr<GemmKernel> window_gemm;  // window rows rounded up to whole k steps
  /// The GEMM whose window tiles run.
  const GemmKernel& windows() const { return window_gemm ? *window_gemm : *gemm; }
};

class ConvOpKernel final : public SinkableKernel, public RowProducer {
 public:
  /// `parts` (with their GEMMs) cover every output channel; `specs` and `backend` (those of
  /// each part's GEMM) serve only to plan window tiles.
  ConvOpKernel(const Graph& graph, const Op& op, Window2d w, std::vector<int64_t> filter_dims, std::vector<ConvPart> parts,
               uint8_t pad_byte, const std::vector<const GemmSpec*>& specs, const Backend& backend)
      : SinkableKernel(graph.values[size_t(op.results[0])].type), op_(op), w_(w), filter_dims_(std::move(filter_dims)),
        parts_(std::move(parts)), pad_byte_(pad_byte) {
    for (size_t i = 0; i < parts_.size(); ++i) parts_[i].window_cols = plan_window_tiles(parts_[i], *specs[i], backend);
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const Tensor& x = *operands[0];
    const int64_t in_c = x.type.dims[w_.channel_dim()];
    const int64_t filter_c = (w_.nchw ? filter_dims_[1] : filter_dims_[3]) * w_.groups;
    if (in_c != filter_c) {
      return Status::error_at(op_.loc, "'qrt.conv2d' op input has " + std::to_string(in_c) +
                                           " channels at run time, the filter expects " + std::to_string(filter_c));
    }
    std::vector<int64_t> dims = window_output_dims(x.type.dims, w_, filter_dims_[0]);
    if (dims[w_.height_dim()] <= 0 || dims[w_.width_dim()] <= 0) {
      return Status::error_at(op_.loc, "'qrt.conv2d' op the window is larger than the padded input at run time");
    }
    return checked_result_dims(op_, std::move(dims));
  }

  // A sink takes whole rows of every output channel: one GEMM writes them.
  bool takes_sink() const override {
    return !w_.nchw && parts_.size() == 1 && parts_[0].gemm->packed().out == OutKind::kS32;
  }

  // A 1x1 convolution over the input as it is, one GEMM, 8-bit NHWC results: a row of
  // output pixels is a GEMM of that input row's pixels.
  const RowProducer* row_producer() const override {
    if (!direct() || parts_.size() != 1) return nullptr;
    const OutKind out = parts_[0].gemm->packed().out;
    return out == OutKind::kU8 || out == OutKind::kS8 ? this : nullptr;
  }

  void produce_rows(const Tensor& x, int64_t n, int64_t y, int64_t count, uint8_t* out) const override {
    const int64_t h = x.type.dims[1], wd = x.type.dims[2], in_c = x.type.dims[3];
    parts_[0].gemm->run(x.bytes() + (n * h + y) * wd * in_c, count * wd, in_c, out, filter_dims_[0], serial());
  }

  // Rows in whole tiles (a row of 112 pixels is 9 tiles of 12 and one of 4; three rows are
  // 28 tiles), while the block stays within kRowBlockBytes.
  int64_t rows_per_call(int64_t width) const override {
    const int64_t tile = parts_[0].gemm->packed().tile_rows(), row_bytes = std::max<int64_t>(1, width * filter_dims_[0]);
    const int64_t whole = tile / std::gcd(std::max<int64_t>(width, 1), tile);
    if (whole * row_bytes <= kRowBlockBytes) return whole;
    return std::max<int64_t>(1, kRowBlockBytes / row_bytes);
  }

  bool reads_operand(size_t index) const override { return index == 0; }  // weights are prepacked
  bool holds_operand_copy(size_t index) const override { return index != 0; }
  std::string describe() const override {
    const ConvPart& part = parts_[0];
    std::string how;
    if (part.window_cols) {
      how = part.windows().name() + " on windows of the padded input (" +
            (part.window_gemm ? "window rows padded to " + std::to_string(part.window_gemm->packed().k / w_.kh) + " bytes; "
                              : "") +
            part.gemm->packed().path_reason + ")";
    } else {
      how = part.gemm->name() + (direct() ? " on the input rows (" : " via im2col (") + part.gemm->packed().path_reason + ")";
    }
    if (w_.groups == 1) return how;
    const int64_t merged = w_.groups / int64_t(parts_.size());
    return how + "; " + std::to_string(w_.groups) + " groups as " + std::to_string(parts_.size()) + " GEMM" +
           (parts_.size() > 1 ? "s" : "") +
           (merged > 1 ? " of " + std::to_string(merged) + " merged groups each (block-diagonal weights)" : " (one per group)");
  }
  size_t owned_bytes() const override {
    size_t bytes = 0;
    for (const ConvPart& part : parts_) {
      bytes += part.gemm->owned_bytes() + (part.window_gemm ? part.window_gemm->owned_bytes() : 0);
    }
    return bytes;
  }

 private:
  // Each part on its own; parts in parallel (each on one thread) where one part's work would
  // not fill the threads. With a sink (one part, NHWC, int32) each task's pixels go to it
  // from a thread-local buffer while in cache.
  Status run_with_sink(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel,
                       const AccumulatorSink* sink) const override {
    const Tensor& x = *operands[0];
    if (parts_.size() > 1) {
      const PackedGemm& p = parts_[0].gemm->packed();
      const int64_t part_work = y.type.dims[0] * y.type.dims[w_.height_dim()] * y.type.dims[w_.width_dim()] * p.n * p.k;
      if (worthwhile_tasks(part_work, kMinConvTaskMacs, parallel) < int64_t(parallel.threads())) {
        parallel.for_each(parts_.size(), [&](size_t i) { run_part(parts_[i], x, y, serial(), nullptr); });
        return Status::ok();
      }
    }
    for (const ConvPart& part : parts_) run_part(part, x, y, parallel, sink);
    return Status::ok();
  }

  // One part's output channels.
  void run_part(const ConvPart& part, const Tensor& x, Tensor& y, Parallel& parallel, const AccumulatorSink* sink) const {
    const std::vector<int64_t>& dims = y.type.dims;
    const int64_t in_c = x.type.dims[w_.channel_dim()], out_c = filter_dims_[0];
    const GemmKernel& gemm = *part.gemm;
    const unsigned ob = gemm.out_bytes();
    const int64_t pixels = dims[w_.height_dim()] * dims[w_.width_dim()], ow = dims[w_.width_dim()];
    if (direct()) {
      gemm.run(x.bytes() + part.in_offset, dims[0] * pixels, in_c, y.bytes() + part.out_offset * ob, out_c * ob, parallel,
               sink);
      return;
    }
    if (!sink && part.window_cols == ow) return run_windows(part, x, y, parallel);
    const PackedGemm& p = gemm.packed();
    const int64_t row_bytes = p.a_row_bytes(), tile = p.tile_rows();
    // Tasks of output pixels: an L2 block each on one thread; on more, near-equal tasks, as
    // many for each thread (balanced_tasks), no more than the work is worth (worthwhile_tasks).
    const int64_t worth = worthwhile_tasks(pixels * p.n * p.k, kMinConvTaskMacs, parallel);
    Parallel& par = worth > 1 ? parallel : serial();
    const int64_t block = std::max<int64_t>(tile, kIm2colBlockBytes / row_bytes / tile * tile);
    const int64_t chunks =
        worth > 1 ? balanced_tasks(pixels, 2 * tile, block, worth, par) : (pixels + block - 1) / block;
    auto chunk_start = [&](int64_t t) { return worth > 1 ? part_start(pixels, chunks, t, 4) : std::min(pixels, t * block); };
    // NHWC writes the part's columns straight into y; NCHW stages [pixels, n] and transposes.
    const int64_t ldc = (w_.nchw ? p.n : out_c) * ob;
    thread_local std::vector<uint8_t> staged;  // NCHW only; the caller's, filled by the workers
    uint8_t* staging = scratch(staged, w_.nchw ? size_t(pixels * p.n * ob) : 0);
    for (int64_t n = 0; n < dims[0]; ++n) {
      uint8_t* out = w_.nchw ? staging : y.bytes() + size_t((n * pixels * out_c + part.out_offset) * ob);
      par.for_each(size_t(chunks), [&](size_t t) {
        thread_local std::vector<uint8_t> packed, rows;
        thread_local std::vector<int32_t> sums;
        const int64_t m0 = chunk_start(int64_t(t)), mc = chunk_start(int64_t(t) + 1) - m0;
        if (mc <= 0) return;
        uint8_t* packed_rows = scratch(packed, size_t(mc * row_bytes) + kIm2colSlack);
        int32_t* row_sums = scratch(sums, size_t(mc));
        // The task's output rows into y, or through the sink.
        auto multiply = [&](const int32_t* sums_or_null) {
          if (sink) return gemm.run_packed_to_sink(packed_rows, sums_or_null, mc, row_bytes, n * pixels + m0, *sink);
          gemm.run_packed(packed_rows, sums_or_null, mc, out + m0 * ldc, ldc);
        };
        // Byte paths: the windows go straight into the packed rows. Without row sums they are
        // the packed rows already (flipped as they are copied, the k padding zeroed): a
        // separate pass over rows just written would wait for every small store to land.
        // With row sums they are packed in place; the widened path stages them (its packed
        // rows are twice as wide).
        const bool in_place = p.traits.a_bytes == 1;
        if (in_place && !p.row_correction) {
          im2col_rows(part, x, n, m0, mc, ow, packed_rows, row_bytes, p.packed_flip());
          multiply(nullptr);
          return;
        }
        const int64_t stride = in_place ? row_bytes : p.k;
        uint8_t* windows = in_place ? packed_rows : scratch(rows, size_t(mc * p.k) + kIm2colSlack);
        im2col_rows(part, x, n, m0, mc, ow, windows, stride, 0);
        p.pack_a_rows(windows, stride, mc, packed_rows, row_sums);
        multiply(row_sums);
      });
      if (w_.nchw) {
        uint8_t* dst = y.bytes() + size_t((n * out_c + part.out_offset) * pixels * ob);
        for (int64_t m = 0; m < pixels; ++m) {
          for (int64_t o = 0; o < p.n; ++o) {
            std::memcpy(dst + (o * pixels + m) * ob, staging + (m * p.n + o) * ob, ob);
          }
        }
      }
    }
  }

  // The output width whose window tiles exist (0: none; the im2col path serves). Window tiles
  // serve NHWC convolutions with output rows at least half a tile wide (a tile never spans
  // two output rows), not 1x1 GEMMs over the input as it is, in one of two forms:
  // - window rows (dilation 1 along the row): a tap per window row, whose kw·C bytes are one
  //   run of the padded input row, rounded up to whole k steps of the level's tiles. Where
  //   the rounding adds bytes, a second GEMM holds the weights with zero rows there (the tiles
  //   read whatever bytes follow the window row, times zero), if that at most quadruples k;
  // - window pixels (dilated rows): a tap per window position, channels in whole k steps.
  int64_t plan_window_tiles(ConvPart& part, const GemmSpec& spec, const Backend& backend) {
    const PackedGemm& p = part.gemm->packed();
    const Type& y = result_type_;
    if (direct() || w_.nchw || !p.traits.window_taps || !y.has_static_shape() || p.row_correction) return 0;
    const int64_t c = part.in_channels, ow = y.dims[w_.width_dim()], tile = p.tile_rows();
    const int64_t step = std::max<int64_t>(p.traits.k_step, p.traits.k_group);
    if (ow < (tile + 1) / 2) return 0;
    const std::vector<unsigned> heights = GemmKernel::window_split(ow, tile).heights();
    const int64_t run = w_.kw * c, padded_run = (run + step - 1) / step * step;
    if (w_.dw == 1 && padded_run == run && p.k_padded == p.k) {
      if (!part.gemm->add_window_tiles(unsigned(w_.kh), heights).is_ok()) return 0;
      part.window_row_bytes = run;
      return ow;
    }
    if (w_.dw == 1 && padded_run <= 4 * run) {
      GemmSpec rows = spec;
      rows.k = w_.kh * padded_run;
      rows.w.assign(size_t(rows.k * rows.n), 0);
      for (int64_t ky = 0; ky < w_.kh; ++ky) {
        std::copy(spec.w.begin() + ky * run * spec.n, spec.w.begin() + (ky + 1) * run * spec.n,
                  rows.w.begin() + ky * padded_run * spec.n);
      }
      const GemmAnalysis analysis = analyze_gemm(rows);
      if (!analysis.why_not.empty()) return 0;
      auto made = GemmKernel::create(rows, analysis, backend);
      if (!made.is_ok()) return 0;
      std::unique_ptr<GemmKernel> g = std::move(made).value();
      // The same path as the im2col GEMM (its flip and exactness), every k a whole step.
      if (g->packed().path != p.path || g->packed().row_correction || g->packed().k_padded != rows.k ||
          !g->add_window_tiles(unsigned(w_.kh), heights).is_ok()) {
        return 0;
      }
      part.window_gemm = std::move(g);
      part.window_row_bytes = padded_run;
      return ow;
    }
    if (c % step != 0 || p.k_padded != p.k) return 0;
    return part.gemm->add_window_tiles(unsigned(w_.kh * w_.kw), heights).is_ok() ? ow : 0;
  }

  // The window path: per task a band of output rows, whose input rows (the part's channels)
  // are copied once into a padded band (the padding holds the zero point; bytes as the tiles
  // read them, packed_flip), then the window tiles read every tap from the band in place.
  void run_windows(const ConvPart& part, const Tensor& x, Tensor& y, Parallel& parallel) const {
    const auto& d = x.type.dims;
    const auto& od = y.type.dims;
    const int64_t h = d[1], wd = d[2], in_c = d[3], c = part.in_channels, oh = od[1], ow = od[2];
    const PackedGemm& p = part.gemm->packed();
    const int64_t wp = w_.pad_left + wd + w_.pad_right, band_row = wp * c;
    const uint8_t flip = p.packed_flip(), pad = uint8_t(pad_byte_ ^ flip);
    std::vector<int64_t> taps;
    for (int64_t ky = 0; ky < w_.kh; ++ky) {
      if (part.window_row_bytes) taps.push_back(ky * w_.dh * wp * c);  // window rows
      for (int64_t kx = 0; !part.window_row_bytes && kx < w_.kw; ++kx) taps.push_back((ky * w_.dh * wp + kx * w_.dw) * c);
    }
    // Window rows rounded up read up to that many bytes past the band's last row.
    const size_t slack = size_t(part.window_row_bytes);
    // Input rows a band of `rows` output rows reads; tasks of whole output rows, a band in L2.
    auto band_rows = [&](int64_t rows) { return (rows - 1) * w_.sh + (w_.kh - 1) * w_.dh + 1; };
    int64_t most = 1;
    while (most < oh && band_rows(most + 1) * band_row <= kIm2colBlockBytes) ++most;
    const int64_t worth = worthwhile_tasks(d[0] * oh * ow * p.n * p.k, kMinConvTaskMacs, parallel);
    Parallel& par = worth > 1 ? parallel : serial();
    // Near-equal bands of output rows, as many for each thread (balanced_tasks: 28 rows in
    // bands of 4 gave one of two threads 16 rows and the other 12).
    const int64_t per_image = std::max<int64_t>(1, worth / std::max<int64_t>(d[0], 1));
    const int64_t chunks =
        worth > 1 ? balanced_tasks(oh, 1, most, per_image, par) : (oh + most - 1) / most;
    const int64_t ldc = od[3] * part.gemm->out_bytes();
    auto band_start = [&](int64_t i) { return worth > 1 ? part_start(oh, chunks, i) : std::min(oh, i * most); };
    par.for_each(size_t(d[0] * chunks), [&](size_t t) {
      const int64_t n = int64_t(t) / chunks, oy0 = band_start(int64_t(t) % chunks),
                    rows = band_start(int64_t(t) % chunks + 1) - oy0;
      if (rows <= 0) return;
      thread_local std::vector<uint8_t> band_bytes;
      uint8_t* band = scratch(band_bytes, size_t(band_rows(rows) * band_row) + slack);
      for (int64_t r = 0; r < band_rows(rows); ++r) {
        uint8_t* dst = band + r * band_row;
        const int64_t iy = oy0 * w_.sh - w_.pad_top + r;
        if (iy < 0 || iy >= h) {
          std::memset(dst, pad, size_t(band_row));
          continue;
        }
        std::memset(dst, pad, size_t(w_.pad_left * c));
        const uint8_t* src = x.bytes() + ((n * h + iy) * wd) * in_c + part.in_offset;
        if (c == in_c) {
          copy_bytes(dst + w_.pad_left * c, src, size_t(wd * c), flip);
        } else {
          for (int64_t ix = 0; ix < wd; ++ix) copy_bytes(dst + (w_.pad_left + ix) * c, src + ix * in_c, size_t(c), flip);
        }
        std::memset(dst + (w_.pad_left + wd) * c, pad, size_t(w_.pad_right * c));
      }
      GemmKernel::Windows win;
      win.a = band;
      win.pixel_stride = w_.sw * c;
      win.row_stride = w_.sh * band_row;
      win.rows = rows;
      win.cols = ow;
      win.tap_offsets = taps.data();
      win.c = y.bytes() + (n * oh + oy0) * ow * ldc + part.out_offset * part.gemm->out_bytes();
      win.ldc = ldc;
      part.windows().run_windows(win);
    });
  }

  // A 1x1 stride-1 unpadded NHWC convolution: a GEMM over the input's pixels as they are.
  bool direct() const {
    return !w_.nchw && w_.kh == 1 && w_.kw == 1 && w_.sh == 1 && w_.sw == 1 && w_.pad_top == 0 && w_.pad_left == 0 &&
           w_.pad_bottom == 0 && w_.pad_right == 0;
  }

  // GEMM rows [m0, m0 + mc) (output pixels of image n, `ow` per output row) at `dst`,
  // `stride` bytes apart, each XORed with `flip`; the bytes from k to `stride` (< 4) are
  // zeroed. dst has kIm2colSlack bytes beyond the last row. NHWC window rows inside the input
  // are copied with the input rows of each output row worked out once; window rows of at most
  // 16 bytes (a few channels) move as one 16-byte vector each, the bytes past the window row
  // landing where the next window row (or the slack) is written after.
  void im2col_rows(const ConvPart& part, const Tensor& x, int64_t n, int64_t m0, int64_t mc, int64_t ow, uint8_t* dst,
                   int64_t stride, uint8_t flip) const {
    const auto& d = x.type.dims;
    const int64_t h = d[w_.height_dim()], wd = d[w_.width_dim()], c = part.in_channels;
    const int64_t k = w_.kh * w_.kw * c, run = w_.kw * c;
    const uint8_t pad = uint8_t(pad_byte_ ^ flip);
    const Bytes16 flip16 = Bytes16{} ^ flip, pad16 = Bytes16{} ^ pad;
    const int64_t bytes = int64_t(x.byte_size());  // 16-byte reads stay below it
    const uint8_t* xb = x.bytes();
    const int64_t kh = w_.kh, sw_c = w_.sw * c;
    // Output columns whose windows lie inside the input horizontally.
    const int64_t ox_lo = std::min(ow, (w_.pad_left + w_.sw - 1) / w_.sw);
    const int64_t last_ix0 = wd - 1 - (w_.kw - 1) * w_.dw + w_.pad_left;  // < 0: no window fits
    const int64_t ox_hi = last_ix0 < 0 ? ox_lo : std::max(ox_lo, std::min(ow, last_ix0 / w_.sw + 1));
    // Window rows as runs of the input rows: every channel of a pixel is the part's.
    const bool rows_path = !w_.nchw && w_.dw == 1 && w_.kh <= kMaxIm2colTaps && c == d[w_.channel_dim()];
    constexpr int64_t kPadRow = INT64_MIN;
    int64_t src_rows[kMaxIm2colTaps];  // per ky: the offset of the input row's x = -pad_left, or kPadRow
    for (int64_t m = 0; m < mc;) {
      const int64_t oy = (m0 + m) / ow, ox_first = (m0 + m) % ow, ox_end = std::min(ow, ox_first + mc - m);
      for (int64_t ky = 0; rows_path && ky < w_.kh; ++ky) {
        const int64_t iy = oy * w_.sh - w_.pad_top + ky * w_.dh;
        src_rows[ky] = iy < 0 || iy >= h ? kPadRow : ((n * h + iy) * wd - w_.pad_left) * c;
      }
      // Interior pixels of short window rows with every window row inside the input (and
      // 16-byte reads inside it): the tight loop of short_window_rows.
      int64_t fast_lo = ox_end, fast_hi = ox_end;
      const uint8_t* srcs[kMaxIm2colTaps];
      if (rows_path && run <= 16) {
        bool inside = true;
        for (int64_t ky = 0; ky < kh && inside; ++ky) {
          inside = src_rows[ky] != kPadRow;
          if (inside) srcs[ky] = xb + src_rows[ky];
        }
        if (inside) {
          fast_lo = std::max(ox_first, ox_lo);
          const int64_t last_read = bytes - 16 - src_rows[kh - 1];  // the lowest row reads the furthest
          fast_hi = std::min({ox_end, ox_hi, last_read < 0 ? int64_t(0) : last_read / sw_c + 1});
          if (fast_hi <= fast_lo) fast_lo = fast_hi = ox_end;
        }
      }
      for (int64_t ox = ox_first; ox < ox_end; ++ox, ++m) {
        if (ox == fast_lo) {
          short_window_rows(srcs, fast_lo, fast_hi, dst + m * stride, stride, run, sw_c, k, flip16);
          m += fast_hi - fast_lo - 1;
          ox = fast_hi - 1;
          continue;
        }
        uint8_t* row = dst + m * stride;
        if (!rows_path || ox < ox_lo || ox >= ox_hi) {
          im2col_row(part, x, n, oy, ox, row, flip);
        } else if (run <= 16) {
          const int64_t at = ox * sw_c;
          for (int64_t ky = 0; ky < kh; ++ky) {
            const int64_t from = src_rows[ky] + at;
            Bytes16 v = pad16;
            if (src_rows[ky] == kPadRow) {
            } else if (from + 16 <= bytes) {
              v = load16(xb + from) ^ flip16;
            } else {  // the input's last bytes: no read past them
              uint8_t last[16] = {};
              copy_bytes(last, xb + from, std::min<size_t>(size_t(run), 16), flip);  // run <= 16 here
              v = load16(last);
            }
            std::memcpy(row + ky * run, &v, 16);
          }
        } else {
          const int64_t at = ox * sw_c;
          for (int64_t ky = 0; ky < kh; ++ky) {
            if (src_rows[ky] != kPadRow) copy_bytes(row + ky * run, xb + src_rows[ky] + at, size_t(run), flip);
            else fill_bytes(row + ky * run, pad, size_t(run));
          }
        }
        if (stride > k) std::memset(row + k, 0, 4);  // the k padding, into the next row or the slack
      }
    }
  }

  // GEMM rows of output columns [ox_begin, ox_end) (the first at `row`, `stride` apart): window
  // row ky of column ox is the `run` (<= 16) bytes at srcs[ky] + ox·sw_c, each moved as one
  // 16-byte vector (the excess lands on the next window row, written after, or on the slack),
  // XORed with `flip16`; the k padding (stride - k < 4 bytes) is zeroed.
  static void short_window_rows(const uint8_t* const* srcs, int64_t ox_begin, int64_t ox_end, uint8_t* row,
                                int64_t stride, int64_t run, int64_t sw_c, int64_t k, Bytes16 flip16) {
    const int64_t kh = k / run;
    for (int64_t ox = ox_begin; ox < ox_end; ++ox, row += stride) {
      const int64_t at = ox * sw_c;
      for (int64_t ky = 0; ky < kh; ++ky) {
        const Bytes16 v = load16(srcs[ky] + at) ^ flip16;
        std::memcpy(row + ky * run, &v, 16);
      }
      if (stride > k) std::memset(row + k, 0, 4);
    }
  }

  // One GEMM row: the window of output pixel (oy, ox) of image n, in the filter's k order —
  // NHWC: (ky, kx, c); NCHW: (c, ky, kx). Positions in the padding hold the zero point. Every
  // byte is XORed with `flip`. Only the part's channels.
  void im2col_row(const ConvPart& part, const Tensor& x, int64_t n, int64_t oy, int64_t ox, uint8_t* row,
                  uint8_t flip) const {
    const uint8_t pad = uint8_t(pad_byte_ ^ flip);
    const auto& d = x.type.dims;
    const int64_t h = d[w_.height_dim()], wd = d[w_.width_dim()], in_c = d[w_.channel_dim()], c = part.in_channels;
    const uint8_t* src = x.bytes();
    if (!w_.nchw) {
      src += part.in_offset;
      const int64_t ix0 = ox * w_.sw - w_.pad_left, ix_last = ix0 + (w_.kw - 1) * w_.dw;
      for (int64_t ky = 0; ky < w_.kh; ++ky) {
        const int64_t iy = oy * w_.sh - w_.pad_top + ky * w_.dh;
        if (w_.dw == 1 && c == in_c && iy >= 0 && iy < h && ix0 >= 0 && ix_last < wd) {
          // The window row lies inside the input: kw·c contiguous bytes, one copy.
          copy_bytes(row, src + ((n * h + iy) * wd + ix0) * c, size_t(w_.kw * c), flip);
          row += w_.kw * c;
          continue;
        }
        for (int64_t kx = 0; kx < w_.kw; ++kx, row += c) {
          const int64_t ix = ox * w_.sw - w_.pad_left + kx * w_.dw;
          if (iy < 0 || iy >= h || ix < 0 || ix >= wd) {
            fill_bytes(row, pad, size_t(c));
          } else {
            copy_bytes(row, src + ((n * h + iy) * wd + ix) * in_c, size_t(c), flip);
          }
        }
      }
      return;
    }
    for (int64_t ci = 0; ci < c; ++ci) {
      const uint8_t* plane = src + (n * in_c + part.in_offset + ci) * h * wd;
      for (int64_t ky = 0; ky < w_.kh; ++ky) {
        const int64_t iy = oy * w_.sh - w_.pad_top + ky * w_.dh;
        for (int64_t kx = 0; kx < w_.kw; ++kx) {
          const int64_t ix = ox * w_.sw - w_.pad_left + kx * w_.dw;
          *row++ = iy < 0 || iy >= h || ix < 0 || ix >= wd ? pad : uint8_t(plane[iy * wd + ix] ^ flip);
        }
      }
    }
  }

  Op op_;
  Window2d w_;
  std::vector<int64_t> filter_dims_;
  std::vector<ConvPart> parts_;
  uint8_t pad_byte_;
};

}  // namespace

namespace {

struct PreparedConv final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  Window2d w;
  std::vector<int64_t> filter_dims;
  std::vector<ConvGemmPart> parts;  // one GEMM, or one per (merged run of) groups
  uint8_t pad_byte = 0;
};

class QGemmConvFamily final : public OpFamily {
 public:
  const char* name() const override { return "qgemm-conv"; }
  KernelOp kind() const override { return KernelOp::kGemm; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const Type& x = graph.values[size_t(op.operands[0])].type;
    const Type& f = graph.values[size_t(op.operands[1])].type;
    const Type& out = graph.values[size_t(op.results[0])].type;
    ConvOperands operands;
    QRT_ASSIGN_OR_RETURN(std::string why, read_conv_operands(graph, op, operands));
    if (!why.empty()) return refuse(why_not, why);
    auto p = std::make_unique<PreparedConv>();
    p->w = operands.w;
    const Window2d& w = p->w;
    const std::unique_ptr<Tensor>& filter = operands.filter;
    const std::unique_ptr<Tensor>& bias = operands.bias;
    const int64_t out_c = f.dims[0];
    const int64_t per_group = w.nchw ? f.dims[1] : f.dims[3];
    if (per_group * w.kh * w.kw == 0 || out_c == 0) return refuse(why_not, "empty filter");
    // The requantization, clamp and bias of every output channel; split_conv_gemms gives each
    // GEMM its channels' share.
    GemmSpec full;
    if (why = fill_channel_quant(x.element, f.element, out.element, size_t(out_c), full); !why.empty()) {
      return refuse(why_not, why);
    }
    if (why = apply_fused_clamp(op, out.element, full); !why.empty()) return refuse(why_not, why);
    if (why = apply_numerics_profile(graph, x.element, f.element, out.element, full); !why.empty()) {
      return refuse(why_not, why);
    }
    if (bias) {
      full.bias.resize(size_t(out_c));
      for (size_t o = 0; o < full.bias.size(); ++o) full.bias[o] = bias->int_at(o);
    }
    if (why = split_conv_gemms(full, filter->int32_values(), w, out_c, per_group, p->parts); !why.empty()) {
      return refuse(why_not, why);
    }
    p->graph = &graph;
    p->op = &op;
    p->filter_dims = f.dims;
    p->pad_byte = uint8_t(x.element.zero_points[0]);
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    std::string why;
    for (const ConvGemmPart& part : static_cast<const PreparedConv&>(prepared).parts) {
      if (!choose_gemm_path(part.analysis, *backend, &why)) return why;
    }
    return why;
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedConv&>(prepared);
    std::vector<ConvPart> parts;
    std::vector<const GemmSpec*> specs;
    for (const ConvGemmPart& prepared_part : p.parts) {
      ConvPart part;
      part.in_offset = prepared_part.in_offset;
      part.in_channels = prepared_part.in_channels;
      part.out_offset = prepared_part.out_offset;
      QRT_ASSIGN_OR_RETURN(part.gemm, GemmKernel::create(prepared_part.spec, prepared_part.analysis, *backend));
      parts.push_back(std::move(part));
      specs.push_back(&prepared_part.spec);
    }
    return std::unique_ptr<OpKernel>(
        std::make_unique<ConvOpKernel>(*p.graph, *p.op, p.w, p.filter_dims, std::move(parts), p.pad_byte, specs, *backend));
  }
};

}  // namespace

const OpFamily& qgemm_conv_family() {
  static const QGemmConvFamily family;
  return family;
}

}  // namespace qrt::jit
