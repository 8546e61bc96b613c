// qrt — kernel descriptions: what a generated kernel computes, named by its contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "jit/core/isa.h"

namespace qrt::jit {

/// What a kernel computes.
enum class KernelOp : uint8_t {
  kQuantize,    ///< f32 -> 8-bit stored values (quant.qcast, per tensor)
  kDequantize,  ///< 8-bit stored values -> f32 (quant.dcast, per tensor)
  kGemm,        ///< an int8 GEMM micro-kernel: an mr x nr tile of u8 x s8 -> s32 + epilogue
  kDepthwise,   ///< an int8 depthwise-convolution pixel kernel (all channels, all taps)
  kQAdd,        ///< quantized 8-bit add with rescale (parameters at run time)
  kQMul,        ///< quantized 8-bit multiply with rescale
  kRequantize,  ///< 8-bit requantize
  kMaxPool,     ///< 8-bit NHWC max pooling pixel kernel
  kAvgPool,     ///< 8-bit NHWC average pooling pixel kernel
  kPackRows,    ///< GEMM activation rows -> the packed layout of a GEMM path, with row sums
  kClamp,       ///< 8-bit clamp (quantized relu/clamp)
  kF32Gemm,     ///< f32 GEMM rows in the reference's order (k-ordered sums, no FMA)
  kDwInterleave,  ///< depthwise: one input row's windows -> u8 tap quads per channel (dot4 layout)
  kDwRows,        ///< depthwise: one output row from interleaved rows by u8 x s8 quads (vpdpbusd)
  kEwProgram,     ///< an element-wise program (ew_program.h), compiled by Backend::compile_program
  kLut8,          ///< y[i] = table[x[i]] over bytes: a 256-entry table (a single-input 8-bit region)
  kF32Dwconv,     ///< one output row of an NHWC f32 depthwise convolution (the reference's order)
  /// weight-only matmul: f32 rows times 8- or 4-bit weights kept packed, dequantized in
  /// registers per block of k (WoGemmArgs); the reference's order and roundings
  kWoGemm,
  /// dynamic-i8 matmul: f32 rows quantized to i8 per block of k (numerics_dynamic.h) times 8- or
  /// 4-bit weights in the dot4 record layout (DynGemmArgs): exact integer block sums, f32 block terms
  kDynGemm,
  /// TFLite's requantization of int32 accumulators to 8-bit stored values, per channel a Q31
  /// multiplier and shift (RequantQ31Args; numerics::requantize_tflite), double or single rounding
  kRequantQ31,
  /// ONNX's requantization of int32 accumulators to 8-bit stored values, per channel an f32
  /// multiplier applied in f64 (RequantF64Args; numerics::requantize_onnx)
  kRequantF64,
  /// NCHW -> NHWC of 1 to 4 planes of bytes (an image input's layout transpose): y[p·C + c] =
  /// x[c·plane_stride + p] (PlanesArgs), C = desc.channels
  kInterleavePlanes,
  kCount
};

/// The op's name in kernel names and reports, e.g. "gemm", "dwconv".
const char* kernel_op_name(KernelOp op);

/// How a GEMM micro-kernel multiplies u8 activations by s8 weights.
enum class GemmPath : uint8_t {
  kMaddubs,  ///< vpmaddubsw -> vpmaddwd(1) -> vpaddd: only where the weights prove no s16 pair saturates
  kMaddwd,   ///< both sides widened to s16, vpmaddwd -> vpaddd: exact for every input
  kDot4,     ///< u8 x s8 quads summed straight into s32 (vpdpbusd): exact for every input
  /// AArch64 NEON: one k value per step, u8 activations widened to s16 times s16 weights,
  /// multiply-accumulated into s32 by element (smlal): exact for every input.
  kMlal,
  /// AArch64 dot product: s8 quads times s8 quads into s32 (sdot). The packed activations are
  /// a' - 128 (s8); the packer adds 128 · Σ_k w to every column's bias, so the sum is Σ a'·w,
  /// exact for every input.
  kSdot4,
  /// AArch64 i8mm: 2 rows x 8 k of u8 times 8 k x 2 columns of s8 into a 2 x 2 s32 block
  /// (usmmla), k_group 8: exact for every input.
  kUsmmla8,
};

/// k values per column per packed step of `path` (the packed layout's group; GemmTraits::k_group).
unsigned gemm_path_k_group(GemmPath path);

/// The path's name in kernel names: "maddubs", "maddwd", "dot4".
const char* gemm_path_name(GemmPath path);

/// Which code generator produces a kernel of a level: the level's own (asmjit at the SIMD
/// levels, the scalar twins at kScalar) or LLVM (kernel templates specialized per description
/// and compiled for the level's CPU; the portable path of plans with QRT_BACKEND_LLVM).
enum class Generator : uint8_t {
  kNative,  ///< asmjit (x86 levels) or the scalar twins (kScalar)
  kLlvm,    ///< LLVM ORC (jit/llvm)
};

/// The generator's name: "native" or "llvm".
const char* generator_name(Generator g);

/// What a GEMM or depthwise kernel's epilogue stores.
enum class OutKind : uint8_t {
  kS32,  ///< the int32 accumulator itself
  kF32,  ///< f32(acc) * scale[n] (a fused dcast of the accumulator)
  kU8,   ///< clamp(rne(f32(acc) * M[n]) + zo[n], lo, hi) as u8
  kS8,   ///< the same as s8
};

/// A kernel's whole contract: op, storage, baked-in quantization parameters and ISA. Equal
/// descriptions mean identical code, so the code cache is keyed by it.
/// KernelDesc::saturate bits.
enum SaturateBits : uint8_t { kSatLower = 1, kSatUpper = 2 };

/// KernelDesc::weight_round: the type a weight-only kernel rounds each dequantized weight to
/// (round to nearest even), the computation staying in f32.
enum class WeightRound : uint8_t {
  kNone,  ///< f32 weights: no rounding beyond the dcast product's
  kBf16,  ///< bfloat16
  kF16,   ///< IEEE binary16 (overflow to ±inf, subnormals kept)
};

struct KernelDesc {
  KernelOp op = KernelOp::kQuantize;
  Isa isa = Isa::kScalar;      ///< the level the kernel is generated for
  Generator generator = Generator::kNative;  ///< who generates it (names end "_llvm" for LLVM)
  bool storage_signed = true;  ///< i8 (qs8) or u8 (qu8) storage
  float scale = 1.0f;          ///< the compute scale (numerics::compute_scale_f32)
  int32_t zero_point = 0;
  int32_t qmin = -128;         ///< storage bounds (quantize clamps to them)
  int32_t qmax = 127;

  // GEMM micro-kernels (kGemm) and depthwise kernels (kDepthwise).
  GemmPath path = GemmPath::kMaddubs;
  OutKind out = OutKind::kU8;
  uint8_t mr = 0;               ///< rows of the tile (kGemm)
  uint8_t nr = 0;               ///< columns stored (kGemm; at most `panel`)
  uint8_t panel = 16;           ///< kGemm: columns per packed weight panel (the backend's trait)
  bool row_correction = false;  ///< kGemm: subtract rowsum[m] * zw[n] (some weight zero point != 0)
  /// kGemm, 8-bit results: the bounds the saturating narrowing enforces by itself
  /// (kSatLower | kSatUpper), so the tile need not clamp to them: set where every column's
  /// bound on that side is its storage's and the rounded scaled accumulator plus the zero
  /// point provably fits int32. kDwRows: kSatUpper alone, on the same proof per channel.
  uint8_t saturate = 0;
  bool b_signed = false;        ///< kQAdd / kQMul: the second operand's storage is signed
  /// Kernel window positions (kDepthwise; kGemm window tiles, GemmTileArgs::tap_offsets);
  /// window width (kDwInterleave, kDwRows).
  uint16_t taps = 0;
  uint8_t kh = 0;               ///< window height (kDwRows)
  /// kDwRows: each interleaved position serves two output pixels (dilation 1; stride 1 with a
  /// window width that is not a multiple of 4, or stride 2): pixel x reads position x / 2,
  /// the odd pixels by the window shifted pair_shift taps on (DwRowsArgs).
  bool paired_pixels = false;
  /// kDwRows with paired_pixels: taps between the two pixels' windows (the stride, 1 or 2).
  uint8_t pair_shift = 1;
  uint32_t channels = 0;        ///< channels (kDepthwise)
  uint8_t weight_bits = 8;      ///< kWoGemm, kDynGemm: 8 or 4 (two weights per byte); storage_signed: i or u
  /// kWoGemm: the weights have zero points (an int16 per block and column); kDynGemm: the
  /// records hold a u8 z' per column (without them z' is the storage offset: symmetric weights).
  bool weight_zp = false;
  /// kDynGemm: the records hold f16 scales (each exactly the f32 compute scale) instead of f32.
  bool scale_f16 = false;
  /// kWoGemm: the float type each dequantized weight rounds to before its product (the
  /// weights' expressed type: kNone for f32, else bf16 or f16; docs/numerics.md, hybrid matmul).
  WeightRound weight_round = WeightRound::kNone;
  bool single_rounding = false; ///< kRequantQ31: one rounding of the 64-bit product (TFLITE_SINGLE_ROUNDING)
  /// kGemm, 8-bit results: TFLite's fixed-point requantization (a Q31 multiplier and a shift
  /// per column, double rounding: numerics::requantize_tflite) instead of the f32 multiply;
  /// the epilogue block holds the int32 fields of GemmEpilogueField's Q31 variant.
  bool q31 = false;
  /// kGemm on tiles whose inner step takes GemmTraits::k_step bytes of k (AMX: 64): the bytes of
  /// padded k beyond the whole steps (k_padded % k_step, a multiple of the k group); 0 elsewhere.
  uint8_t k_tail = 0;
  /// kGemm tiles of one or two rows (GemmTraits::prefetch_tiles): prefetch the weight stream
  /// ahead of the k loop. GEMVs split over threads take them; on one thread they lose.
  bool prefetch_weights = false;

  /// Compares every field (scale bit for bit).
  bool operator==(const KernelDesc& other) const;
  /// A hash of every field.
  size_t hash() const;
  /// XNNPACK-style name stating the contract and the ISA, e.g. "f32_qs8_quantize__avx2".
  std::string name() const;
};

/// Hash functor for unordered containers.
struct KernelDescHash {
  size_t operator()(const KernelDesc& d) const { return d.hash(); }
};


}  // namespace qrt::jit
