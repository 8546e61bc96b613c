// qrt — what the JIT backends can see of the host: CPU features (asmjit) and LLVM.
#pragma once

#include <string>

namespace qrt {

/// Host CPU facts as the x86 code generator sees them (asmjit's CPU detection).
struct CpuFeatures {
  std::string vendor;          ///< e.g. "AMD" (empty when unknown)
  std::string brand;           ///< marketing name
  bool x86 = false;            ///< an x86-64 host
  bool avx2 = false;           ///< AVX2 (the current JIT target)
  bool fma = false;            ///< FMA3
  bool avx512f = false;        ///< AVX-512 Foundation
  bool avx512bw = false;       ///< AVX-512 BW
  bool avx512_vnni = false;    ///< AVX-512 VNNI (vpdpbusd)
  bool avx_vnni = false;       ///< VEX-encoded VNNI
  bool aarch64 = false;        ///< an AArch64 host
};

/// Detects the host CPU once (thread-safe) and returns the result.
const CpuFeatures& host_cpu_features();

/// The portable LLVM path as seen from this process.
struct LlvmInfo {
  std::string version;    ///< LLVM version string, e.g. "19.1.7"
  std::string host_cpu;   ///< LLVM's name for the host CPU, e.g. "znver3"
  bool orc_jit = false;   ///< an ORC LLJIT instance could be created for the host
  std::string error;      ///< why not, when orc_jit is false
};

/// Queries LLVM once (thread-safe) and returns the result.
const LlvmInfo& llvm_info();

}  // namespace qrt
