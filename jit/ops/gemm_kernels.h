// qrt — a quantized GEMM ready to run: weights prepacked for one backend's traits, that
// backend's tile kernels for every tile shape it needs, and the blocking loop that drives them.
#pragma once

#include <algorithm>

#include <memory>
#include <string>
#include <vector>

#include "jit/core/code_cache.h"
#include "jit/core/parallel.h"
#include "jit/ops/accumulator_sink.h"
#include "jit/ops/gemm_pack.h"

namespace qrt::jit {

/// C[m, n] for activations A[m, k] (u8 or s8 stored values) and the packed weights of a
/// GemmSpec; bit-exact with the reference contract of qrt.matmul.
class GemmKernel {
 public:
  /// Packs the weights for `backend` and generates (or fetches) its tile kernels. Fails with
  /// ErrorCode::kUnsupported where the analysis could not prove the result exact (then the
  /// caller falls back to the reference).
  static Result<std::unique_ptr<GemmKernel>> create(const GemmSpec& spec, const GemmAnalysis& analysis,
                                                    const Backend& backend);
  /// create() on this kernel's backend for weights known only at run time (the rhs of a
  /// matmul of two activations): packs `spec`, and takes this kernel's tiles where the packed
  /// GEMM needs the same ones (the usual case: same shape, path and epilogue), so no code
  /// cache lookups; window tiles are not carried over.
  Result<std::unique_ptr<GemmKernel>> with_weights(const GemmSpec& spec, const GemmAnalysis& analysis) const;

  /// Computes `rows` output rows from stored activation rows `a` (`lda` bytes apart) into `c`
  /// (`ldc` bytes apart), split into tasks over row blocks (or, for few rows, over weight
  /// panels). Thread-safe: per-call scratch is thread-local. With a `sink` (int32 results
  /// only) each row block's accumulators go to it (rows numbered from 0) from a thread-local
  /// buffer instead of `c`; the panel split still writes `c`, then hands all rows over.
  void run(const uint8_t* a, int64_t rows, int64_t lda, void* c, int64_t ldc, Parallel& parallel,
           const AccumulatorSink* sink = nullptr) const;
  /// Computes weight panels [panel_begin, panel_end) of `rows` rows from activations already
  /// packed with packed().pack_a_rows (`a_stride` bytes apart, by default a_row_bytes()) and
  /// their row sums. `streaming`: tiles of 1-2 rows prefetch their weights where the backend
  /// has such tiles (KernelDesc::prefetch_weights; for weight panels split over threads).
  void run_packed(const uint8_t* packed_a, const int32_t* row_sums, int64_t rows, void* c, int64_t ldc,
                  int64_t panel_begin = 0, int64_t panel_end = -1, int64_t a_stride = 0, bool streaming = false) const;
  /// run_packed over every panel for a sink (int32 results): rows in sub-blocks whose
  /// accumulators stay in L2, each handed to `sink` (numbered from `first_row`) from a
  /// thread-local buffer.
  void run_packed_to_sink(const uint8_t* packed_a, const int32_t* row_sums, int64_t rows, int64_t a_stride,
                          int64_t first_row, const AccumulatorSink& sink) const;
  /// Rows per cache block of a GEMM of `rows` rows: packed activations of one block stay in
  /// L2 while every weight panel streams past them, and the blocks are near-equal (a multiple
  /// of the tile height each). By default a block holds kDefaultBlockBytes of rows, or at least
  /// kMinBlockRows rows where those fit in half of the host's L2 (long rows: fewer passes over
  /// the weights); set_block_bytes fixes the bytes instead.
  int64_t block_rows(int64_t rows) const;
  /// Bytes of activation rows per cache block, exactly (benchmarks sweep it:
  /// BM_qrt_gemm_block); 0 restores the default policy. Changes speed only, never results.
  void set_block_bytes(int64_t bytes) { block_bytes_ = bytes; }
  /// The default block's bytes of activation rows.
  static constexpr int64_t kDefaultBlockBytes = 192 * 1024;
  /// The fewest rows a default block holds where they fit in half of L2.
  static constexpr int64_t kMinBlockRows = 256;
  /// The L2 bytes the default blocks plan for: the host's (CpuFeatures::l2_bytes), or 512 KiB
  /// (the smallest of the hosts measured) where Linux does not say.
  static int64_t planned_l2_bytes();

  /// The window tiles along an output row of `cols` pixels: `count` tiles of `big` rows, then
  /// tiles of `small` rows to the row's end. Tiles of 8 rows or more split the row evenly, as
  /// few tiles as `tile` allows in two heights one apart: 28 pixels on 12-row tiles are 10, 9,
  /// 9, where 12, 12, 4 left a 4-row tile a seventh of the work at a fraction of the tall
  /// tiles' rate (3x3 stride 2 56²·64→128: +3%, AMD Zen 5). Shorter tiles keep whole tiles
  /// and one remainder: the ymm levels' 6-row tile against 5-row ones lost 1% at 56 pixels.
  struct WindowSplit {
    int64_t cols = 0, big = 0, count = 0, small = 0;
    /// The heights to generate (add_window_tiles).
    std::vector<unsigned> heights() const;
  };
  static WindowSplit window_split(int64_t cols, int64_t tile);
  /// Generates window tiles (KernelDesc::taps = `taps`, see GemmTileArgs) of the heights
  /// `heights` (1..tile_rows()). Fails with kUnsupported where the backend has none for this
  /// GEMM; then run_windows must not be called.
  Status add_window_tiles(unsigned taps, const std::vector<unsigned>& heights);
  /// The window taps of add_window_tiles (0: none).
  unsigned window_taps() const { return main_desc_.taps; }

  /// Output pixels of a convolution computed from its padded input in place (implicit GEMM).
  struct Windows {
    const uint8_t* a = nullptr;      ///< packed bytes of output pixel (0, 0)'s first window position
    int64_t pixel_stride = 0;        ///< bytes between consecutive output pixels' windows in a row
    int64_t row_stride = 0;          ///< bytes between consecutive output rows' windows
    int64_t rows = 0, cols = 0;      ///< output rows and pixels per row
    const int64_t* tap_offsets = nullptr;  ///< per tap, bytes from a window's start to the tap's k bytes
    uint8_t* c = nullptr;            ///< output pixel (0, 0)
    int64_t ldc = 0;                 ///< bytes between output pixels
  };
  /// Computes every pixel of `w` on the calling thread, one window tile per call: tiles run
  /// along an output row (at most tile_rows() pixels, never across rows), split as
  /// window_split(w.cols, tile_rows()) says; add_window_tiles generated those heights.
  void run_windows(const Windows& w) const;

  /// The packed weights and the chosen path.
  const PackedGemm& packed() const { return *packed_; }
  /// The main tile kernel's contract name, e.g. "qu8_qs8_qu8_gemm_4x16_maddubs__avx2".
  std::string name() const;
  /// Bytes of the packed weights and epilogue parameters.
  size_t owned_bytes() const { return packed_->weights.size() + packed_->epilogue.size(); }
  /// Bytes per output element.
  unsigned out_bytes() const { return packed_->out == OutKind::kS32 || packed_->out == OutKind::kF32 ? 4 : 1; }

 private:
  /// The most rows a tile of any backend has.
  static constexpr unsigned kMaxTileRows = 32;
  std::unique_ptr<PackedGemm> packed_;
  const Backend* backend_ = nullptr;  // the tiles' backend (a process-lifetime singleton)
  // tiles_[mr - 1][0]: full panels; [1]: the last, narrower panel (if any).
  std::shared_ptr<const CompiledKernel> tiles_[kMaxTileRows][2];
  KernelDesc tile_descs_[kMaxTileRows][2];
  KernelDesc main_desc_;
  // The 1- and 2-row tiles with KernelDesc::prefetch_weights (GemmTraits::prefetch_tiles).
  static constexpr unsigned kStreamTileRows = 2;
  std::shared_ptr<const CompiledKernel> stream_tiles_[kStreamTileRows][2];
  KernelDesc stream_descs_[kStreamTileRows][2];
  std::shared_ptr<const CompiledKernel> window_tiles_[kMaxTileRows][2];
  KernelDesc window_descs_[kMaxTileRows][2];
  int64_t block_bytes_ = 0;  // 0: the default policy of block_rows
};

}  // namespace qrt::jit

