// qrt — instruction-set levels: what a kernel needs, what the host has, and how a plan caps
// them. The one place that reads CPU feature bits (CPUID through the compiler's
// __builtin_cpu_supports on x86-64, getauxval(AT_HWCAP/AT_HWCAP2) on AArch64); no ISA header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qrt::jit {

/// Instruction-set levels a kernel can target. Within one architecture a later level
/// includes what an earlier one needs (avx2-vnni: AVX2 + the VEX vpdpbusd; avx512-vnni:
/// AVX-512 F/BW/VL/DQ + VNNI), except that avx2-vnni and avx512-vnni are independent on real
/// CPUs (Ice Lake has only the latter; Alder Lake only the former); kScalar (portable C++)
/// runs everywhere.
enum class Isa : uint8_t {
  kScalar = 0,   ///< portable C++ (the scalar twins): every host
  kAvx2,         ///< x86-64 AVX2 (+ FMA, BMI2 as every AVX2 CPU has)
  kAvx2Vnni,     ///< AVX2 + AVX-VNNI (VEX-encoded vpdpbusd on ymm)
  kAvx512Vnni,   ///< AVX-512 F/BW/VL/DQ + AVX512-VNNI (vpdpbusd on zmm, mask registers)
  kAvx512Amx,    ///< avx512-vnni + AMX-TILE/AMX-INT8 (tdpbusd on 16x64-byte tiles), granted by the OS
  kNeon,         ///< AArch64 Advanced SIMD
  kNeonDot,      ///< NEON + the dot-product extension (sdot/udot)
  kNeonI8mm,     ///< NEON + dot product + i8mm (smmla/usmmla)
  kCount
};

/// The level's name as users write it: "scalar", "avx2", "avx2-vnni", "avx512-vnni", "avx512-amx", "neon",
/// "neon-dot", "neon-i8mm". Kernel names end in "__" + isa_suffix() (XNNPACK style).
const char* isa_name(Isa isa);
/// The kernel-name suffix, e.g. "avx2", "avx2vnni", "avx512vnni", "neondot".
const char* isa_suffix(Isa isa);
/// Parses a level name (as isa_name prints it); nullopt for anything else.
std::optional<Isa> parse_isa(std::string_view name);
/// Every level name, comma separated, for error messages and --help.
std::string isa_names();

/// A set of levels.
class IsaSet {
 public:
  IsaSet() = default;
  /// Whether `isa` is in the set.
  bool has(Isa isa) const { return (bits_ >> unsigned(isa)) & 1u; }
  /// Adds `isa`.
  void add(Isa isa) { bits_ |= 1u << unsigned(isa); }
  /// The levels in the set, most capable first (the order selection tries them in).
  std::vector<Isa> by_preference() const;
  /// The set's levels joined by ", ".
  std::string to_string() const;
  bool operator==(const IsaSet& o) const { return bits_ == o.bits_; }

 private:
  uint32_t bits_ = 0;
};

/// The levels this host can run (detected once, thread-safe; always includes kScalar).
const IsaSet& host_isas();
/// The most capable level of the host.
Isa host_best_isa();
/// The levels a plan capped at `cap` may use: the host's levels that `cap` includes (cap's
/// architecture, at or below it in its order, plus kScalar). Errors (as text) name the level
/// when the host lacks it.
std::optional<IsaSet> capped_isas(Isa cap, std::string* why_not);
/// Whether `isa` counts as included by `cap` (same architecture and not above it; scalar is
/// under every cap). avx2-vnni and avx512-vnni both include avx2; avx512-vnni does not
/// include avx2-vnni (different encodings, independent CPU features); avx512-amx includes
/// avx512-vnni (its GEMM tiles only; every other kind comes from there).
bool isa_includes(Isa cap, Isa isa);

/// Host CPU facts (informational: qrun --version, qrt_build_info).
struct CpuFeatures {
  std::string vendor;          ///< e.g. "AuthenticAMD" (empty when unknown)
  std::string brand;           ///< the model name the kernel reports (/proc/cpuinfo)
  bool x86 = false;            ///< an x86-64 host
  bool aarch64 = false;        ///< an AArch64 host
  bool avx2 = false;           ///< AVX2 and FMA
  bool f16c = false;           ///< F16C (vcvtph2ps/vcvtps2ph), with AVX2
  bool avx512f = false;        ///< AVX-512 Foundation
  bool avx512bw = false;       ///< AVX-512 BW
  bool avx512_vnni = false;    ///< AVX-512 VNNI
  bool avx_vnni = false;       ///< VEX-encoded VNNI
  bool avx512_vbmi = false;    ///< AVX-512 VBMI (vpermb, vpermi2b: byte tables of 64/128 entries)
  bool avx512_bf16 = false;    ///< AVX512-BF16 with VL (no kernel uses it: docs/numerics.md)
  bool amx_int8 = false;       ///< AMX-TILE + AMX-INT8 in the CPU
  bool amx_granted = false;    ///< and Linux let this process use the tile data (ARCH_REQ_XCOMP_PERM)
  bool neon = false;           ///< AArch64 Advanced SIMD
  bool neon_dot = false;       ///< dot product (asimddp)
  bool neon_i8mm = false;      ///< int8 matrix multiply
  int64_t l2_bytes = 0;        ///< the L2 cache of one core in bytes, from Linux's sysfs (0: unknown)
};

/// Detects the host CPU once (thread-safe) and returns the result.
const CpuFeatures& host_cpu_features();

}  // namespace qrt::jit
