// qrt — what the JIT backends can see of the host: CPU features and ISA levels (isa.h) and
// the LLVM ORC path (jit/llvm/).
#pragma once

#include <string>

#include "jit/core/isa.h"

namespace qrt {

using jit::CpuFeatures;
using jit::host_cpu_features;

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
