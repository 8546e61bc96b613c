// qrt — the backend interface: every code generator (asmjit x86, asmjit AArch64, LLVM ORC)
// and the portable scalar twins are peers behind it. A backend serves one ISA level; it
// states its tile traits per kernel kind, says without generating anything why it cannot
// produce a kernel, and generates the ones it can. The operator layer (jit/ops/) packs and
// drives kernels through these traits only, so it never knows which ISA runs.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "ir/status.h"
#include "jit/core/code_cache.h"
#include "jit/core/ew_program.h"
#include "jit/core/kernel.h"

namespace qrt::jit {

/// How a backend's GEMM tiles want their operands for one multiply path.
struct GemmTraits {
  unsigned mr = 0;       ///< rows per micro-kernel tile (the largest; smaller tiles exist too)
  unsigned panel = 0;    ///< columns per packed weight panel (nr of a full tile)
  unsigned k_group = 0;  ///< k values per column per packed step: gemm_path_k_group(path)
  unsigned a_bytes = 0;  ///< bytes per packed activation (1: u8, 2: zero-extended u16)
  bool saturating_narrow = false;  ///< the tiles honour KernelDesc::saturate (drop the clamp)
  bool q31_epilogue = false;       ///< the tiles implement KernelDesc::q31 (TFLite's requantization)
  /// Bytes of k per inner step of the tiles when they take a step wider than the k group
  /// (AMX: 64, one tile row): kernels are generated per k_padded % k_step (KernelDesc::k_tail).
  /// 0: the tiles step one k group at a time.
  unsigned k_step = 0;
  /// The backend declines GEMMs of fewer k values (kUnsupported: the level below serves them),
  /// where its tiles lose to that level's: AMX below one whole 64-byte step. 0: none.
  unsigned min_k = 0;
  /// The tiles also come as window tiles (KernelDesc::taps > 0): a convolution's k read from
  /// its padded input in place, one run of k bytes per window tap (GemmTileArgs::tap_offsets),
  /// instead of from im2col rows.
  bool window_taps = false;
  /// Tiles of 1 and 2 rows also come with KernelDesc::prefetch_weights, for GEMVs whose weight
  /// panels are split over threads (each core streams its share from L3).
  bool prefetch_tiles = false;
};

/// How a backend's depthwise kernel wants its weights: blocks of `block` channels in the
/// layout of microkernel.h (depthwise_lane_channel).
struct DepthwiseTraits {
  unsigned block = 0;       ///< channels per block (desc.panel of its kDepthwise kernels)
  unsigned rows_panel = 0;  ///< lanes per block of the dot4 row path (kDwInterleave + kDwRows); 0: none
  /// The row path multiplies s8 quads (x - 128 for u8 storage, x for s8: sdot) instead of
  /// u8 ones (x, or x + 128 for s8: vpdpbusd); its descriptions carry GemmPath::kSdot4.
  bool rows_signed_quads = false;
  /// The row path has no dot4 instruction (AVX2 without VNNI): it splits each u8 quad into two
  /// u16 word pairs and multiplies them by s16 weights with vpmaddwd, exact as the dot4 is; its
  /// kDwRows descriptions carry GemmPath::kMaddwd and dw_rows_word_weight_offset's weights.
  bool rows_maddwd = false;
};

/// Elements per call unit of the element-wise kinds (convert, add/mul/requantize): the
/// operator layer hands a backend whole blocks and converts the rest with the twin.
struct StreamTraits {
  unsigned block = 0;        ///< elements per step of the stream kernels
  bool masked_tail = false;  ///< the element-wise and convert kernels finish the last
                             ///< n % block elements themselves (ElementwiseArgs::tail, any
                             ///< ConvertArgs::n), so the caller runs no scalar tail
};

/// "" when a kGemm description's tile fits `traits` (rows 1..mr, columns 1..panel, the panel
/// width of the traits), else why not. Backends share it in their why_not().
std::string gemm_tile_why_not(const KernelDesc& desc, const std::optional<GemmTraits>& traits);
/// "" when a depthwise or pooling description is well formed for windowed kernels with
/// `block`-channel depthwise blocks (even, non-zero taps for depthwise; taps and channels).
std::string window_kernel_why_not(const KernelDesc& desc, unsigned block);
/// "" when a kDwInterleave or kDwRows description is well formed for `panel`-lane blocks
/// (window, channels, 8-bit output; desc.q31 only where the rows have that epilogue;
/// desc.paired_pixels only where they serve two pixels per position), else why not.
std::string dw_rows_why_not(const KernelDesc& desc, unsigned panel, bool q31_epilogue = false, bool signed_quads = false,
                            bool paired_pixels = false, bool word_weights = false);

/// A code generator (or the portable twins) for one ISA level.
class Backend {
 public:
  virtual ~Backend() = default;
  /// The backend's name, e.g. "x86" (asmjit), "ref" (scalar twins), "llvm".
  virtual const char* name() const = 0;
  /// The level its kernels need; kernel names end in "__" + isa_suffix(isa()).
  virtual Isa isa() const = 0;
  /// Who generates its kernels (descriptions it serves carry it; the code cache keys on it).
  virtual Generator generator() const { return Generator::kNative; }
  /// Whether this process can run its kernels (the host has the level; the generator works).
  virtual bool available() const = 0;
  /// Tile traits of the GEMM path `path` at this level, or nullopt when it has no such path.
  virtual std::optional<GemmTraits> gemm_traits(GemmPath path) const = 0;
  /// Depthwise weight layout (valid where kDepthwise kernels exist).
  virtual DepthwiseTraits depthwise_traits() const = 0;
  /// Element blocking of kQuantize/kDequantize/kQAdd/kQMul/kRequantize.
  virtual StreamTraits stream_traits() const = 0;
  /// "" when generate(desc) can succeed, else why not — decided without generating code.
  virtual std::string why_not(const KernelDesc& desc) const = 0;
  /// The kernel for `desc` (desc.isa == isa(); why_not(desc) == ""). The code cache calls it
  /// once per description.
  virtual Result<std::shared_ptr<const CompiledKernel>> generate(const KernelDesc& desc) const = 0;
  /// "" when compile_program(program) can succeed (the program is valid), else why not.
  virtual std::string program_why_not(const EwProgram& program) const {
    (void)program;
    return std::string("the ") + name() + " backend compiles no element-wise programs";
  }
  /// The kernel of an element-wise program (entry: EwFn); program_why_not(program) == "".
  /// The program cache (program_cache()) calls it once per program and level.
  virtual Result<std::shared_ptr<const CompiledKernel>> compile_program(const EwProgram& program) const {
    return Status::error(program_why_not(program)).with_code(ErrorCode::kUnsupported);
  }
  /// Whether the backend's GEMM tiles leave per-thread state behind between calls (AMX keeps
  /// its tile configuration, which costs ~46 ns to load, for the next tile): then a driver
  /// calls release_thread_state() on the thread after its last tile of a task.
  virtual bool keeps_thread_state() const { return false; }
  /// Returns the calling thread's state that the tiles left (AMX: tilerelease) to its initial
  /// state, so that the core's idle states and context switches do not carry it.
  virtual void release_thread_state() const {}
};

}  // namespace qrt::jit
