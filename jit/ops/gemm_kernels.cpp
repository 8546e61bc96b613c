// qrt — GEMM driver: cache blocking over rows, one call per tile (see gemm_kernels.h).
#include "jit/ops/gemm_kernels.h"

#include <algorithm>
#include <vector>

#include "jit/core/code_cache.h"
#include "jit/core/isa.h"
#include "jit/core/microkernel.h"

namespace qrt::jit {

namespace {

// A GEMM task's least work in multiply-adds: ~1.5 µs at the VNNI tiles' rate (longer at
// AVX2's), above the ~1 µs a hand-off to another thread costs.
constexpr int64_t kMinGemmTaskMacs = 512 * 1024;
// Bytes of int32 accumulators a sink gets at a time: they are read back from L2.
constexpr int64_t kSinkBlockBytes = 128 * 1024;

}  // namespace

namespace {

// The tile description every tile of `p` on `backend` shares (mr and nr aside).
KernelDesc tile_desc(const PackedGemm& p, const Backend& backend) {
  KernelDesc d;
  d.op = KernelOp::kGemm;
  d.isa = backend.isa();
  d.generator = backend.generator();
  d.path = p.path;
  d.out = p.out;
  d.row_correction = p.row_correction;
  d.saturate = p.traits.saturating_narrow ? p.saturate : 0;
  d.q31 = p.q31;
  d.panel = uint8_t(p.traits.panel);
  if (p.traits.k_step) d.k_tail = uint8_t(p.k_padded % p.traits.k_step);
  return d;
}

}  // namespace

Result<std::unique_ptr<GemmKernel>> GemmKernel::with_weights(const GemmSpec& spec, const GemmAnalysis& analysis) const {
  QRT_ASSIGN_OR_RETURN(std::unique_ptr<PackedGemm> packed, pack_gemm(spec, analysis, *backend_));
  KernelDesc d = tile_desc(*packed, *backend_), mine = main_desc_;
  d.mr = mine.mr, d.nr = mine.nr, mine.taps = 0;
  if (!(d == mine) || packed->n != packed_->n || packed->tile_rows() != packed_->tile_rows()) {
    return create(spec, analysis, *backend_);
  }
  auto g = std::unique_ptr<GemmKernel>(new GemmKernel());
  g->packed_ = std::move(packed);
  g->backend_ = backend_;
  for (unsigned r = 0; r < kMaxTileRows; ++r) {
    for (unsigned w = 0; w < 2; ++w) {
      g->tiles_[r][w] = tiles_[r][w];
      g->tile_descs_[r][w] = tile_descs_[r][w];
    }
  }
  for (unsigned r = 0; r < kStreamTileRows; ++r) {
    for (unsigned w = 0; w < 2; ++w) {
      g->stream_tiles_[r][w] = stream_tiles_[r][w];
      g->stream_descs_[r][w] = stream_descs_[r][w];
    }
  }
  g->main_desc_ = main_desc_;
  g->main_desc_.taps = 0;
  g->block_bytes_ = block_bytes_;
  return g;
}

Result<std::unique_ptr<GemmKernel>> GemmKernel::create(const GemmSpec& spec, const GemmAnalysis& analysis,
                                                      const Backend& backend) {
  auto g = std::unique_ptr<GemmKernel>(new GemmKernel());
  QRT_ASSIGN_OR_RETURN(g->packed_, pack_gemm(spec, analysis, backend));
  g->backend_ = &backend;
  const PackedGemm& p = *g->packed_;
  const unsigned panel = p.traits.panel;
  if (p.tile_rows() < 1 || p.tile_rows() > kMaxTileRows || panel < 1 || panel > 255) {
    return Status::error(std::string("the ") + backend.name() + " backend's GEMM traits are out of range");
  }
  KernelDesc d = tile_desc(p, backend);
  const unsigned tail = unsigned(p.n % panel);
  for (unsigned mr = 1; mr <= p.tile_rows(); ++mr) {
    d.mr = uint8_t(mr);
    if (p.n >= panel) {
      d.nr = uint8_t(panel);
      g->tile_descs_[mr - 1][0] = d;
      QRT_ASSIGN_OR_RETURN(g->tiles_[mr - 1][0], code_cache().get(d));
    }
    if (tail != 0) {
      d.nr = uint8_t(tail);
      g->tile_descs_[mr - 1][1] = d;
      QRT_ASSIGN_OR_RETURN(g->tiles_[mr - 1][1], code_cache().get(d));
    }
  }
  for (unsigned mr = 1; p.traits.prefetch_tiles && mr <= std::min(kStreamTileRows, p.tile_rows()); ++mr) {
    for (unsigned which = 0; which < 2; ++which) {
      if (!g->tiles_[mr - 1][which]) continue;
      KernelDesc s = g->tile_descs_[mr - 1][which];
      s.prefetch_weights = true;
      g->stream_descs_[mr - 1][which] = s;
      QRT_ASSIGN_OR_RETURN(g->stream_tiles_[mr - 1][which], code_cache().get(s));
    }
  }
  g->main_desc_ = d;
  g->main_desc_.mr = uint8_t(p.tile_rows());
  g->main_desc_.nr = uint8_t(p.n >= panel ? panel : tail);
  return g;
}

std::string GemmKernel::name() const { return main_desc_.name(); }

int64_t GemmKernel::planned_l2_bytes() {
  const int64_t l2 = host_cpu_features().l2_bytes;
  return l2 > 0 ? l2 : 512 * 1024;
}

int64_t GemmKernel::block_rows(int64_t rows) const {
  const int64_t tile = packed_->tile_rows(), row_bytes = std::max<int64_t>(packed_->a_row_bytes(), 1);
  int64_t block = (block_bytes_ > 0 ? block_bytes_ : kDefaultBlockBytes) / row_bytes;
  if (block_bytes_ <= 0) {
    // Every block streams every weight from L3 again: 132 x 6144 x 768 took 6 passes in
    // blocks of 192 KiB (24 rows), and ran 585 GOPS at best against 678 in one pass (Xeon
    // model 207, avx512-vnni; performance.md). Long rows get blocks of kMinBlockRows where
    // half of L2 holds them.
    block = std::max(block, std::min(kMinBlockRows, planned_l2_bytes() / 2 / row_bytes));
  }
  block = std::max<int64_t>(tile, block / tile * tile);
  if (rows > block) {
    // Near-equal blocks: a short last block would cost a whole weight pass for a few rows.
    const int64_t blocks = (rows + block - 1) / block;
    block = ((rows + blocks - 1) / blocks + tile - 1) / tile * tile;
  }
  return block;
}

GemmKernel::WindowSplit GemmKernel::window_split(int64_t cols, int64_t tile) {
  WindowSplit s;
  s.cols = cols;
  if (cols <= 0 || tile <= 0) return s;
  if (tile < 8) {
    s.big = tile, s.count = cols / tile, s.small = cols % tile;
    return s;
  }
  const int64_t tiles = (cols + tile - 1) / tile;
  s.big = (cols + tiles - 1) / tiles;
  s.count = cols - tiles * (s.big - 1);  // cols = count·big + (tiles - count)·(big - 1)
  s.small = s.big - 1;
  return s;
}

std::vector<unsigned> GemmKernel::WindowSplit::heights() const {
  std::vector<unsigned> h;
  if (count > 0) h.push_back(unsigned(big));
  if (count * big < cols && small > 0) h.push_back(unsigned(small));
  return h;
}

Status GemmKernel::add_window_tiles(unsigned taps, const std::vector<unsigned>& heights) {
  const PackedGemm& p = *packed_;
  const unsigned panel = p.traits.panel, tail = unsigned(p.n % panel);
  if (taps == 0 || taps > UINT16_MAX || (p.k_padded / p.traits.k_group) % taps != 0) {
    return Status::error("window tiles need k to split evenly into " + std::to_string(taps) + " taps")
        .with_code(ErrorCode::kUnsupported);
  }
  for (unsigned mr : heights) {
    if (mr < 1 || mr > p.tile_rows()) return Status::error("window tile height out of range").with_code(ErrorCode::kUnsupported);
    KernelDesc d = tile_descs_[mr - 1][p.n >= panel ? 0 : 1];
    d.taps = uint16_t(taps);
    if (std::string why = backend_->why_not(d); !why.empty()) {
      return Status::error(d.name() + ": " + why).with_code(ErrorCode::kUnsupported);
    }
    for (int which = 0; which < 2; ++which) {
      if ((which == 0 && p.n < panel) || (which == 1 && tail == 0)) continue;
      d.nr = uint8_t(which == 0 ? panel : tail);
      window_descs_[mr - 1][which] = d;
      QRT_ASSIGN_OR_RETURN(window_tiles_[mr - 1][which], code_cache().get(d));
    }
  }
  main_desc_.taps = uint16_t(taps);
  return Status::ok();
}

void GemmKernel::run_windows(const Windows& w) const {
  const PackedGemm& p = *packed_;
  const int64_t panel = p.traits.panel, panel_bytes = p.panel_bytes();
  const int64_t ep_bytes = int64_t(kEpFields) * panel * 4, tile = p.tile_rows();
  const unsigned ob = out_bytes();
  GemmTileArgs args;
  args.a_stride = w.pixel_stride;
  args.k_steps = p.k_padded / p.traits.k_group;
  args.tap_steps = args.k_steps / main_desc_.taps;
  args.tap_offsets = w.tap_offsets;
  args.c_stride = w.ldc;
  args.row_sums = nullptr;
  // Per panel, every output row's tiles of one height, then of the other (window_split: the
  // taller ones first in each row) — tiles that keep their configuration loaded meet one
  // shape at a time.
  const WindowSplit split = window_split(w.cols, tile);
  const int64_t tall_end = split.count * split.big;
  auto sweep = [&](bool short_tiles) {
    const int64_t x0 = short_tiles ? tall_end : 0, x1 = short_tiles ? w.cols : tall_end;
    if (x0 == x1) return;  // no tile of this height (none was generated)
    const int64_t mr = short_tiles ? split.small : split.big;
    for (int64_t pn = 0; pn < p.panels; ++pn) {
      const int which = (pn + 1) * panel > p.n ? 1 : 0;
      const void* entry = window_tiles_[mr - 1][which]->entry();
      const KernelDesc& desc = window_descs_[mr - 1][which];
      args.w = p.weights.data() + pn * panel_bytes;
      args.epilogue = p.epilogue.data() + pn * ep_bytes;
      for (int64_t y = 0; y < w.rows; ++y) {
        for (int64_t x = x0; x < x1; x += mr) {
          args.a = w.a + y * w.row_stride + x * w.pixel_stride;
          args.c = w.c + (y * w.cols + x) * w.ldc + pn * panel * ob;
          call_microkernel(entry, args, desc);
        }
      }
    }
  };
  sweep(false);
  sweep(true);
  if (backend_->keeps_thread_state()) backend_->release_thread_state();
}

void GemmKernel::run(const uint8_t* a, int64_t rows, int64_t lda, void* c, int64_t ldc, Parallel& parallel,
                     const AccumulatorSink* sink) const {
  const PackedGemm& p = *packed_;
  const int64_t row_bytes = p.a_row_bytes(), tile = p.tile_rows();
  // As many tasks as the work is worth: a small GEMM (a late 1x1 convolution of a small
  // model) runs on the calling thread alone.
  const int64_t worth = worthwhile_tasks(rows * p.n * p.k, kMinGemmTaskMacs, parallel);
  Parallel& par = worth > 1 ? parallel : serial();
  const int64_t threads = int64_t(par.threads());
  // Packs rows [m0, m0 + mc) into this thread's scratch and multiplies panels [p0, p1).
  const bool unpacked = p.reads_rows_unpacked();
  // Whole rows (every panel) of a block go to the sink (`to`) in sub-blocks.
  auto block = [&](int64_t m0, int64_t mc, int64_t p0, int64_t p1, const AccumulatorSink* to, bool streaming = false) {
    uint8_t* out = static_cast<uint8_t*>(c) + m0 * ldc;
    if (unpacked) {
      // u8 rows of whole k quads: the tiles read them where they are.
      if (to) return run_packed_to_sink(a + m0 * lda, nullptr, mc, lda, m0, *to);
      return run_packed(a + m0 * lda, nullptr, mc, out, ldc, p0, p1, lda, streaming);
    }
    thread_local std::vector<uint8_t> packed_a;
    thread_local std::vector<int32_t> row_sums;
    uint8_t* packed_rows = scratch(packed_a, size_t(mc * row_bytes));
    int32_t* sums = scratch(row_sums, size_t(mc));
    p.pack_a_rows(a + m0 * lda, lda, mc, packed_rows, sums);
    if (to) return run_packed_to_sink(packed_rows, sums, mc, row_bytes, m0, *to);
    run_packed(packed_rows, sums, mc, out, ldc, p0, p1, 0, streaming);
  };
  const int64_t block_m = block_rows(rows);
  if (rows >= 2 * tile * threads || threads == 1) {
    if (worth <= 1) {  // one thread: L2 blocks in order
      for (int64_t m0 = 0; m0 < rows; m0 += block_m) block(m0, std::min(block_m, rows - m0), 0, p.panels, sink);
      return;
    }
    // Row tasks of near-equal size, as many for each thread (balanced_tasks), of four tiles or
    // more where the rows allow (each task packs its rows and streams every panel's weights
    // once), in steps of 4 rows: a task's last tile may be short.
    const int64_t tasks = balanced_tasks(rows, 4 * tile, block_m, worth, par);
    par.for_each(size_t(tasks), [&](size_t t) {
      const int64_t m0 = part_start(rows, tasks, int64_t(t), 4), m1 = part_start(rows, tasks, int64_t(t) + 1, 4);
      if (m1 > m0) block(m0, m1 - m0, 0, p.panels, sink);
    });
    return;
  }
  // Few rows (e.g. 1 x 4096 x 4096): split the weight panels; each task packs the rows again
  // (cheap: the rows are few). With the panels shared out, the threads' cores stream their
  // weights from L3 at once: 1- and 2-row tiles prefetch them (stream_tiles_).
  const int64_t panels_per_task = (p.panels + worth - 1) / worth;
  const int64_t tasks = (p.panels + panels_per_task - 1) / panels_per_task;
  par.for_each(size_t(tasks), [&](size_t t) {
    const int64_t p0 = int64_t(t) * panels_per_task, p1 = std::min(p.panels, p0 + panels_per_task);
    for (int64_t m0 = 0; m0 < rows; m0 += block_m) block(m0, std::min(block_m, rows - m0), p0, p1, nullptr, tasks > 1);
  });
  if (sink) sink->take(static_cast<const int32_t*>(c), ldc / 4, 0, rows);
}

void GemmKernel::run_packed_to_sink(const uint8_t* packed_a, const int32_t* row_sums, int64_t rows, int64_t a_stride,
                                    int64_t first_row, const AccumulatorSink& sink) const {
  const PackedGemm& p = *packed_;
  const int64_t tile = p.tile_rows();
  const int64_t sub = std::max<int64_t>(tile, kSinkBlockBytes / std::max<int64_t>(p.n * 4, 1) / tile * tile);
  thread_local std::vector<int32_t> accumulators;
  int32_t* acc = scratch(accumulators, size_t(std::min(sub, rows) * p.n));
  for (int64_t m = 0; m < rows; m += sub) {
    const int64_t mc = std::min(sub, rows - m);
    run_packed(packed_a + m * a_stride, row_sums ? row_sums + m : nullptr, mc, acc, p.n * 4, 0, -1, a_stride);
    sink.take(acc, p.n, first_row + m, mc);
  }
}

void GemmKernel::run_packed(const uint8_t* packed_a, const int32_t* row_sums, int64_t rows, void* c, int64_t ldc,
                            int64_t panel_begin, int64_t panel_end, int64_t a_stride, bool streaming) const {
  const PackedGemm& p = *packed_;
  const int64_t row_bytes = a_stride > 0 ? a_stride : p.a_row_bytes();
  const int64_t panel = p.traits.panel, k_steps = p.k_padded / p.traits.k_group;
  const int64_t panel_bytes = p.panel_bytes();
  const int64_t ep_bytes = int64_t(kEpFields) * panel * 4;
  const unsigned ob = out_bytes();
  GemmTileArgs args;
  args.a_stride = row_bytes;
  args.k_steps = k_steps;
  args.c_stride = ldc;
  if (panel_end < 0) panel_end = p.panels;
  const int64_t tile = p.tile_rows();
  // Rows [m_begin, m_end) of every panel, one tile (of the rows left, at most `tile`) per call.
  auto sweep = [&](int64_t m_begin, int64_t m_end) {
    for (int64_t pn = panel_begin; pn < panel_end; ++pn) {
      const bool narrow = (pn + 1) * panel > p.n;
      args.w = p.weights.data() + pn * panel_bytes;
      args.epilogue = p.epilogue.data() + pn * ep_bytes;
      for (int64_t m = m_begin; m < m_end; m += tile) {
        const int64_t mr = std::min<int64_t>(tile, m_end - m);
        args.a = packed_a + m * row_bytes;
        args.c = static_cast<uint8_t*>(c) + m * ldc + pn * panel * ob;
        args.row_sums = row_sums ? row_sums + m : nullptr;
        const int which = narrow ? 1 : 0;
        const bool stream = streaming && mr <= int64_t(kStreamTileRows) && stream_tiles_[mr - 1][which];
        if (stream) call_microkernel(stream_tiles_[mr - 1][which]->entry(), args, stream_descs_[mr - 1][which]);
        else call_microkernel(tiles_[mr - 1][which]->entry(), args, tile_descs_[mr - 1][which]);
      }
    }
  };
  if (!backend_->keeps_thread_state()) return sweep(0, rows);
  // Tiles that keep their configuration loaded (AMX) reload it only when the tile shape
  // changes: the whole row tiles of every panel first, then the last, shorter one of each.
  const int64_t whole = rows / tile * tile;
  sweep(0, whole);
  if (whole < rows) sweep(whole, rows);
  backend_->release_thread_state();
}

}  // namespace qrt::jit
