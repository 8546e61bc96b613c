// qrt — int8 GEMM: the ISA-free exactness analysis that decides how a GEMM may multiply, and
// weights prepacked in the layout of a backend's tile traits (see docs/performance.md, "GEMM").
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
#include "jit/core/aligned_bytes.h"
#include "jit/core/backend.h"
#include "jit/ops/requant_epilogue.h"

namespace qrt::jit {

/// What a quantized GEMM computes: k × n stored weights, per-column bias and quantization.
struct GemmSpec : ChannelQuant {
  int64_t k = 0, n = 0;
  std::vector<int32_t> w;             ///< k × n stored weights, row-major
  std::vector<int64_t> bias;          ///< per column, or empty
};

/// The ISA-free facts about a GemmSpec: whether it can run exactly at all, and whether the
/// u8 x s8 -> s16 pair-sum path (vpmaddubsw and its kin) is exact for it.
struct GemmAnalysis {
  std::string why_not;           ///< "" when an integer GEMM can compute it exactly
  bool pair_sum_exact = false;   ///< no weight pair can saturate an s16 pair sum
  std::string path_reason;       ///< why (names the first saturating pair where not)
  bool row_correction = false;   ///< some zw' != 0
  /// KernelDesc::saturate bits: for 8-bit results with |f32(acc) · multiplier| <= 2^30 in
  /// every column, each side where every column's bound is the storage's.
  uint8_t saturate = 0;
  bool q31 = false;  ///< GemmSpec::q31: only tiles with the Q31 epilogue (GemmTraits::q31_epilogue) serve
  bool a_signed = false;  ///< GemmSpec::a_signed: a level with both quad paths takes s8 rows on sdot4 (no flip)
};

/// Proves, per column and k pair, whether an s16 pair sum can saturate for any activation
/// inside the storage bounds, and that every result fits int32. Packs nothing.
GemmAnalysis analyze_gemm(const GemmSpec& spec);

/// Prepacked weights and epilogue constants of one GEMM for one backend's traits.
struct PackedGemm {
  int64_t k = 0, n = 0;
  int64_t k_padded = 0;        ///< k rounded up to the k group
  int64_t panels = 0;          ///< ceil(n / panel)
  GemmPath path = GemmPath::kMaddubs;
  GemmTraits traits;           ///< the backend's tile traits for `path`
  Isa isa = Isa::kScalar;      ///< the backend's level
  Generator generator = Generator::kNative;  ///< who generated its kernels
  std::string path_reason;     ///< why this path
  bool row_correction = false; ///< some zw' != 0
  uint8_t saturate = 0;        ///< GemmAnalysis::saturate
  bool q31 = false;            ///< GemmSpec::q31: the tiles' epilogue is TFLite's requantization
  bool a_flip = false;         ///< activations are s8: flip the sign bit when packing
  OutKind out = OutKind::kU8;
  AlignedBytes weights;        ///< panel-major packed s8 weights
  AlignedBytes epilogue;       ///< panels × kEpFields × panel 32-bit values
  KernelDesc pack_desc;        ///< the activation-row packing kernel
  std::shared_ptr<const CompiledKernel> pack_kernel;

  /// Rows per micro-kernel tile.
  unsigned tile_rows() const { return traits.mr; }
  /// Bytes per packed activation row.
  int64_t a_row_bytes() const { return int64_t(traits.a_bytes) * k_padded; }
  /// k groups of the window block that follows each panel's steps where the tiles step
  /// GemmTraits::k_step bytes at a time and k_padded leaves a tail (see pack_gemm); else 0.
  int64_t window_steps() const {
    return traits.k_step && k_padded % traits.k_step ? int64_t(traits.k_step / traits.k_group) : 0;
  }
  /// Bytes of one panel of packed weights: its k steps, then the window block if any.
  int64_t panel_bytes() const { return (k_padded / traits.k_group + window_steps()) * traits.panel * traits.k_group; }
  /// Whether the tiles can read activation rows as they are (u8, bytes, k a whole number
  /// of k groups, no row sums): then no pack is needed at all.
  /// The XOR that turns a stored activation byte into its packed byte on the byte paths:
  /// 0x80 for s8 rows (a' = a + 128), and once more on sdot4 (a' - 128).
  uint8_t packed_flip() const { return uint8_t((a_flip != (path == GemmPath::kSdot4)) ? 0x80 : 0); }
  /// (sdot4 packs a' - 128, which is what s8 rows hold, so there s8 rows are read as they are.)
  bool reads_rows_unpacked() const {
    return traits.a_bytes == 1 && a_flip == (path == GemmPath::kSdot4) && k_padded == k && !row_correction;
  }
  /// Packs `rows` activation rows of k stored values (`src_stride` bytes apart) into `dst`
  /// (a_row_bytes() apart); with row_correction, sums[r] = Σ a' of row r (else `sums` is not
  /// written). In place (src == dst, src_stride == a_row_bytes()) unless a_bytes == 2.
  void pack_a_rows(const uint8_t* src, int64_t src_stride, int64_t rows, uint8_t* dst, int32_t* sums) const;
};

/// Packs `spec` for `backend`: the pair-sum path where the analysis proves it exact and the
/// backend has it, else the exact widened path. Fails with ErrorCode::kUnsupported where the
/// analysis refused the GEMM or the backend has no fitting path.
Result<std::unique_ptr<PackedGemm>> pack_gemm(const GemmSpec& spec, const GemmAnalysis& analysis, const Backend& backend);

/// The path pack_gemm would choose on `backend` for `analysis`, or nullopt (and why).
std::optional<GemmPath> choose_gemm_path(const GemmAnalysis& analysis, const Backend& backend, std::string* why_not);

}  // namespace qrt::jit
