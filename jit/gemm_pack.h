// qrt — int8 GEMM weights prepacked for the AVX2 micro-kernels, and the exactness analysis
// that decides how each GEMM multiplies (see docs/performance.md, "GEMM").
//
// Every quantized GEMM is computed as u8 activations times s8 weights:
//   s8 activations become u8 by flipping the sign bit (a' = a + 128, za' = za + 128) and
//   u8 weights become s8 the same way (w' = w - 128, zw' = zw - 128); products of
//   differences are unchanged. Then
//     Σ_k (a'-za')(w'-zw') = Σ a'w' - zw'·Σ_k a' - za'·Σ_k w' + K·za'·zw'
//   The last two terms and the bias fold into one int32 per column at pack time; the second
//   (row sums times weight zero points) is added in the epilogue only when some zw' != 0.
//   int32 arithmetic wraps, and the true result is proven to fit, so the sum is exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/status.h"
#include "jit/kernel.h"

namespace qrt::jit {

/// Columns per packed weight panel (two ymm registers of 8 int32 lanes).
constexpr unsigned kGemmPanel = 16;
/// Rows of the largest micro-kernel tile of any path.
constexpr unsigned kGemmMaxRows = 6;
/// Rows of the micro-kernel tile of `path`: vpmaddubsw needs a register for its s16 ones, so
/// it has 4 rows x 2 accumulators; vpmaddwd fits 6 x 2.
constexpr unsigned gemm_tile_rows(GemmPath path) { return path == GemmPath::kMaddubs ? 4 : 6; }
/// K is padded to a multiple of this (one vpmaddubsw dword); padding is zero on both sides.
constexpr unsigned kGemmKStep = 4;

/// Per-panel epilogue fields, each kGemmPanel 32-bit values, in this order.
enum GemmEpilogueField : size_t {
  kEpBias = 0,            ///< int32: bias - za'·colsum + K·za'·zw'
  kEpWeightZeroPoint,     ///< int32: zw' (used with row sums)
  kEpMultiplier,          ///< f32: requantization multiplier M[n], or the dcast scale (f32 output)
  kEpLowerBound,          ///< f32: lo - zo[n]
  kEpUpperBound,          ///< f32: hi - zo[n]
  kEpOutputZeroPoint,     ///< int32: zo[n]
  kEpFields
};

/// The argument block of a generated tile kernel: void tile(const GemmTileArgs*).
struct GemmTileArgs {
  const void* a;            ///< packed activations of the tile's first row
  int64_t a_stride;         ///< bytes between packed activation rows
  const void* w;            ///< the weight panel
  int64_t k_steps;          ///< padded K / 4 (maddubs) or padded K / 2 (maddwd)
  void* c;                  ///< output of the tile's first row
  int64_t c_stride;         ///< bytes between output rows
  const void* epilogue;     ///< the panel's epilogue block
  const int32_t* row_sums;  ///< Σ_k a' of the tile's rows (row_correction kernels only)
};

/// A 64-byte aligned byte buffer.
class AlignedBytes {
 public:
  AlignedBytes() = default;
  /// Zero-filled storage of `size` bytes.
  explicit AlignedBytes(size_t size);
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

/// What a quantized GEMM computes, in storage terms (see docs/numerics.md, qrt.matmul).
struct GemmSpec {
  int64_t k = 0, n = 0;
  bool a_signed = false;              ///< activations: s8 or u8 storage
  int32_t a_zero_point = 0;
  int32_t a_min = 0, a_max = 255;     ///< the activations' storage bounds
  bool w_signed = true;               ///< weights: s8 or u8 storage
  std::vector<int32_t> w;             ///< k × n stored weights, row-major
  std::vector<int32_t> w_zero_point;  ///< per column (n values)
  std::vector<int64_t> bias;          ///< per column, or empty
  OutKind out = OutKind::kU8;
  std::vector<float> multiplier;      ///< per column: M[n] (u8/s8 output) or dcast scale (f32 output)
  std::vector<int32_t> out_zero_point;  ///< per column (u8/s8 output)
  int32_t out_min = 0, out_max = 255;   ///< output storage bounds (u8/s8 output)
};

/// Prepacked weights and epilogue constants of one GEMM, and how it will be computed.
struct PackedGemm {
  int64_t k = 0, n = 0;
  int64_t k_padded = 0;        ///< k rounded up to kGemmKStep
  int64_t panels = 0;          ///< ceil(n / kGemmPanel)
  GemmPath path = GemmPath::kMaddubs;
  std::string path_reason;     ///< why this path (names the first saturating pair for maddwd)
  bool row_correction = false; ///< some zw' != 0
  bool a_flip = false;         ///< activations are s8: flip the sign bit when packing
  OutKind out = OutKind::kU8;
  AlignedBytes weights;        ///< panel-major packed s8 weights
  AlignedBytes epilogue;       ///< panels × kEpFields × kGemmPanel 32-bit values

  /// Rows per micro-kernel tile.
  unsigned tile_rows() const { return gemm_tile_rows(path); }
  /// Bytes per packed activation row.
  int64_t a_row_bytes() const { return path == GemmPath::kMaddubs ? k_padded : 2 * k_padded; }
  /// Packs one activation row (k stored values) into `dst` and returns Σ a'.
  int32_t pack_a_row(const uint8_t* src, uint8_t* dst) const;
};

/// Packs `spec`: chooses the multiply path by proving, per column and k pair, whether a
/// vpmaddubsw pair sum can leave s16 for any activation inside the storage bounds; checks
/// that every result fits int32 (else an error saying why the JIT cannot run it).
Result<std::unique_ptr<PackedGemm>> pack_gemm(const GemmSpec& spec);

}  // namespace qrt::jit
