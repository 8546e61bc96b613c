// qrt — kernel descriptions (see kernel.h).
#include "jit/core/kernel.h"

#include <cstring>
#include <functional>

namespace qrt::jit {

bool KernelDesc::operator==(const KernelDesc& o) const {
  return op == o.op && isa == o.isa && generator == o.generator && storage_signed == o.storage_signed &&
         std::memcmp(&scale, &o.scale, sizeof scale) == 0 && zero_point == o.zero_point && qmin == o.qmin &&
         qmax == o.qmax && path == o.path && out == o.out && mr == o.mr && nr == o.nr && panel == o.panel &&
         row_correction == o.row_correction && saturate == o.saturate && b_signed == o.b_signed && taps == o.taps && kh == o.kh && paired_pixels == o.paired_pixels && pair_shift == o.pair_shift && channels == o.channels &&
         weight_bits == o.weight_bits && weight_zp == o.weight_zp && single_rounding == o.single_rounding && q31 == o.q31 && k_tail == o.k_tail &&
         prefetch_weights == o.prefetch_weights && weight_round == o.weight_round && scale_f16 == o.scale_f16;
}

size_t KernelDesc::hash() const {
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &scale, 4);
  size_t h = std::hash<uint64_t>()((uint64_t(uint8_t(op)) << 56) | (uint64_t(uint8_t(isa)) << 48) |
                                   (uint64_t(storage_signed) << 40) | (uint64_t(generator) << 36) | scale_bits);
  h ^= std::hash<uint64_t>()((uint64_t(uint32_t(zero_point)) << 32) | uint32_t(qmin)) + 0x9e3779b97f4a7c15ull + (h << 6);
  h ^= std::hash<uint32_t>()(uint32_t(qmax)) + 0x9e3779b97f4a7c15ull + (h << 6);
  h ^= std::hash<uint64_t>()((uint64_t(uint8_t(path)) << 56) | (uint64_t(uint8_t(out)) << 48) |
                             (uint64_t(mr) << 40) | (uint64_t(nr) << 32) | (uint64_t(panel) << 16) | (uint64_t(row_correction) << 31) | (uint64_t(b_signed) << 30) | (uint64_t(paired_pixels) << 27) | (uint64_t(saturate) << 28) |
                             (uint64_t(taps) << 0)) + 0x9e3779b97f4a7c15ull + (h << 6);
  h ^= std::hash<uint64_t>()((uint64_t(k_tail) << 58) | (uint64_t(q31) << 57) | (uint64_t(scale_f16) << 49) | (uint64_t(prefetch_weights) << 47) | (uint64_t(pair_shift & 3) << 50) | (uint64_t(uint8_t(weight_round)) << 52) | (uint64_t(single_rounding) << 56) | (uint64_t(weight_zp) << 48) | (uint64_t(weight_bits) << 40) | (uint64_t(kh) << 32) | channels) +
       0x9e3779b97f4a7c15ull + (h << 6);
  return h;
}

namespace {

const char* out_name(OutKind k) {
  switch (k) {
    case OutKind::kS32: return "s32";
    case OutKind::kF32: return "f32";
    case OutKind::kU8: return "qu8";
    case OutKind::kS8: return "qs8";
  }
  return "?";
}

}  // namespace

const char* generator_name(Generator g) { return g == Generator::kLlvm ? "llvm" : "native"; }

const char* kernel_op_name(KernelOp op) {
  switch (op) {
    case KernelOp::kQuantize: return "quantize";
    case KernelOp::kDequantize: return "dequantize";
    case KernelOp::kGemm: return "gemm";
    case KernelOp::kDepthwise: return "dwconv";
    case KernelOp::kQAdd: return "add";
    case KernelOp::kQMul: return "mul";
    case KernelOp::kRequantize: return "requantize";
    case KernelOp::kMaxPool: return "maxpool";
    case KernelOp::kAvgPool: return "avgpool";
    case KernelOp::kPackRows: return "packrows";
    case KernelOp::kClamp: return "clamp";
    case KernelOp::kF32Gemm: return "f32gemm";
    case KernelOp::kDwInterleave: return "dwinterleave";
    case KernelOp::kDwRows: return "dwrows";
    case KernelOp::kEwProgram: return "ewprogram";
    case KernelOp::kLut8: return "lut8";
    case KernelOp::kF32Dwconv: return "f32dwconv";
    case KernelOp::kWoGemm: return "wogemm";
    case KernelOp::kDynGemm: return "dyngemm";
    case KernelOp::kRequantQ31: return "q31requant";
    case KernelOp::kRequantF64: return "f64requant";
    case KernelOp::kInterleavePlanes: return "planes";
    case KernelOp::kCount: break;
  }
  return "?";
}

const char* gemm_path_name(GemmPath path) {
  switch (path) {
    case GemmPath::kMaddubs: return "maddubs";
    case GemmPath::kMaddwd: return "maddwd";
    case GemmPath::kDot4: return "dot4";
    case GemmPath::kMlal: return "mlal";
    case GemmPath::kSdot4: return "sdot4";
    case GemmPath::kUsmmla8: return "usmmla8";
  }
  return "?";
}

unsigned gemm_path_k_group(GemmPath path) {
  switch (path) {
    case GemmPath::kMaddwd: return 2;
    case GemmPath::kMlal: return 1;
    case GemmPath::kUsmmla8: return 8;
    case GemmPath::kMaddubs:
    case GemmPath::kDot4:
    case GemmPath::kSdot4: return 4;
  }
  return 4;
}

std::string KernelDesc::name() const {
  const std::string suffix = std::string("__") + isa_suffix(isa) + (generator == Generator::kLlvm ? "_llvm" : "");
  const std::string path_name = gemm_path_name(path);
  if (op == KernelOp::kGemm) {
    // e.g. qu8_qs8_qu8_gemm_4x16_maddubs__avx2 (activations, weights, output; tile; method).
    return std::string("qu8_qs8_") + out_name(out) + "_gemm_" + std::to_string(mr) + "x" + std::to_string(nr) +
           "_" + path_name + (row_correction ? "_wzp" : "") + (saturate == (kSatLower | kSatUpper) ? "_sat" : saturate == kSatLower ? "_satlo" : saturate ? "_sathi" : "") + (k_tail ? "_kt" + std::to_string(k_tail) : "") +
           (q31 ? "_q31" : "") + (taps ? "_taps" + std::to_string(taps) : "") + (prefetch_weights ? "_pf" : "") + suffix;
  }
  if (op == KernelOp::kDepthwise) {
    return std::string(storage_signed ? "qs8" : "qu8") + "_qs8_" + out_name(out) + "_dwconv_" + std::to_string(taps) + "p" +
           std::to_string(channels) + "c" + suffix;
  }
  if (op == KernelOp::kDwInterleave) {
    // e.g. qs8_dwinterleave_3w32c__avx512vnni (input, window width, channels).
    return std::string(storage_signed ? "qs8" : "qu8") + "_dwinterleave_" + std::to_string(taps) + "w" +
           std::to_string(channels) + "c" + (path == GemmPath::kSdot4 ? "_s8q" : "") + suffix;
  }
  if (op == KernelOp::kDwRows) {
    // e.g. qu8_qs8_qu8_dwrows_3x3p32c_dot4__avx512vnni (input, weights, output, window, channels).
    return std::string(storage_signed ? "qs8" : "qu8") + "_qs8_" + out_name(out) + "_dwrows_" + std::to_string(kh) + "x" +
           std::to_string(taps) + "p" + std::to_string(channels) + "c_" + (path == GemmPath::kSdot4 ? "sdot4" : path == GemmPath::kMaddwd ? "maddwd" : "dot4") + (saturate & kSatUpper ? "_sathi" : "") + (paired_pixels ? (pair_shift == 1 ? "_pairs" : "_pairs" + std::to_string(pair_shift)) : "") + (k_tail ? "_kt" + std::to_string(k_tail) : "") +
           (q31 ? "_q31" : "") + suffix;
  }
  if (op == KernelOp::kMaxPool || op == KernelOp::kAvgPool) {
    return std::string(storage_signed ? "qs8_" : "qu8_") + out_name(out) + (op == KernelOp::kMaxPool ? "_maxpool_" : "_avgpool_") +
           std::to_string(taps) + "p" + std::to_string(channels) + "c" + suffix;
  }
  if (op == KernelOp::kQAdd || op == KernelOp::kQMul || op == KernelOp::kRequantize) {
    // e.g. qs8_qs8_qs8_add__avx2 (a, b, result), qu8_qs8_requantize__avx2 (input, result).
    const char* what = op == KernelOp::kQAdd ? "add" : op == KernelOp::kQMul ? "mul" : "requantize";
    std::string s = storage_signed ? "qs8_" : "qu8_";
    if (op != KernelOp::kRequantize) s += b_signed ? "qs8_" : "qu8_";
    return s + out_name(out) + "_" + what + suffix;
  }
  const std::string q = storage_signed ? "qs8" : "qu8";
  if (op == KernelOp::kPackRows) {
    // e.g. qu8_packrows_maddwd__avx2 (flip: s8 rows become u8).
    return q + "_packrows_" + path_name + suffix;
  }
  if (op == KernelOp::kClamp) return q + "_clamp" + suffix;
  if (op == KernelOp::kLut8) return "x8_x8_lut8" + suffix;
  // e.g. s32_qs8_q31requant_sr__avx512vnni (accumulators, result; _sr: single rounding).
  if (op == KernelOp::kRequantQ31) return "s32_" + q + "_q31requant" + (single_rounding ? "_sr" : "") + suffix;
  if (op == KernelOp::kRequantF64) return "s32_" + q + "_f64requant" + suffix;
  // e.g. x8_interleave3planes__avx512vnni (bytes of either signedness: a copy).
  if (op == KernelOp::kInterleavePlanes) return "x8_interleave" + std::to_string(channels) + "planes" + suffix;
  // The tile the native kernels use (the LLVM templates block the same way).
  if (op == KernelOp::kF32Gemm) {
    const bool a64 = isa == Isa::kNeon || isa == Isa::kNeonDot || isa == Isa::kNeonI8mm;
    return std::string("f32_f32_f32_gemm_") +
           (isa == Isa::kAvx512Vnni ? "12x32" : isa == Isa::kScalar ? "1x1" : a64 ? "4x16" : "6x16") + suffix;
  }
  if (op == KernelOp::kF32Dwconv) return "f32_f32_f32_dwconv" + suffix;
  if (op == KernelOp::kWoGemm) {
    // e.g. f32_qs4w_f32_wogemm_4x64__avx512vnni (activations, packed weights, output; tile);
    // f32_qs4w_bf16_f32_wogemm_...: the weights dequantize to bf16 (WeightRound).
    const char* tile = isa == Isa::kAvx512Vnni ? "4x64" : isa == Isa::kScalar ? "1x1" : "4x16";
    const char* round = weight_round == WeightRound::kBf16 ? "_bf16" : weight_round == WeightRound::kF16 ? "_f16" : "";
    return std::string("f32_") + (storage_signed ? "qs" : "qu") + std::to_string(weight_bits) + "w" +
           (weight_zp ? "_zp" : "") + round + "_f32_wogemm_" + tile + suffix;
  }
  if (op == KernelOp::kDynGemm) {
    // e.g. f32_qs4w_zp_h_f32_dyngemm_4x64__avx512vnni (activations quantized per call, packed
    // weights with zero points and f16 scales, output).
    const char* tile = isa == Isa::kAvx512Vnni                           ? "4x64"
                       : isa == Isa::kNeonDot || isa == Isa::kNeonI8mm ? "4x16"
                       : isa == Isa::kScalar                           ? "1x1"
                                                                       : "2x16";
    return std::string("f32_") + (storage_signed ? "qs" : "qu") + std::to_string(weight_bits) + "w" + (weight_zp ? "_zp" : "") +
           (scale_f16 ? "_h" : "") + "_f32_dyngemm_" + tile + suffix;
  }
  const std::string body = op == KernelOp::kQuantize ? "f32_" + q + "_quantize" : q + "_f32_dequantize";
  return body + suffix;
}

}  // namespace qrt::jit
