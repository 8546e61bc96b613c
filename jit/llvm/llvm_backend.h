// qrt — the LLVM ORC backend: element-wise programs compiled at run time for one ISA level
// (the level's CPU features given to LLVM, so the loop vectorizer picks its vector width).
// This header includes no LLVM: the kernel list names the backends.
#pragma once

#include "jit/core/backend.h"

namespace qrt::jit {

/// The LLVM backend of `isa` (scalar: the architecture's baseline, e.g. x86-64 SSE2; avx2;
/// avx512-vnni), or null where this build has no LLVM or the level is not one it serves.
const Backend* llvm_backend(Isa isa);

}  // namespace qrt::jit
