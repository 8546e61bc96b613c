// qrt — the LLVM ORC backend: element-wise programs compiled at run time for one ISA level
// (the level's CPU features given to LLVM, so the loop vectorizer picks its vector width).
// This header includes no LLVM: the kernel list names the backends.
#pragma once

#include <cstddef>
#include <cstdint>

#include "jit/core/backend.h"

namespace qrt::jit {

/// Programs the LLVM backends compiled, and programs they linked from the object cache on disk
/// (QRT_CACHE_DIR), in this process.
struct LlvmCacheStats {
  size_t compiled = 0;
  size_t loaded = 0;
  /// Nanoseconds spent, summed over every compilation and load in this process, per phase:
  /// building the module (for kernels: parsing the embedded templates and adding the
  /// description), O2, code generation to an object, and linking it into the JIT.
  uint64_t build_ns = 0, optimize_ns = 0, codegen_ns = 0, link_ns = 0;
};
LlvmCacheStats llvm_cache_stats();

/// Whether this build has the kernel templates (bitcode of jit/llvm/kernel_templates.cpp, made
/// by clang++-19 at build time) from which LLVM generates every micro-kernel kind.
bool llvm_kernel_templates_built();

/// The LLVM backend of `isa` (scalar: the architecture's baseline, e.g. x86-64 SSE2; avx2;
/// avx512-vnni), or null where this build has no LLVM or the level is not one it serves.
const Backend* llvm_backend(Isa isa);

}  // namespace qrt::jit
