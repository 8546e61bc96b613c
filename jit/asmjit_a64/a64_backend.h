// qrt — the AArch64 backend (asmjit a64 generators), one Backend per ISA level it serves.
// This header includes no asmjit: the kernel list names the backends.
#pragma once

#include "jit/core/backend.h"

namespace qrt::jit {

/// The NEON level: GEMM tiles on smlal (the exact widened path) and their activation packing.
const Backend& a64_neon_backend();
/// The dot-product level: GEMM tiles on sdot (s8 quads; the bias carries the offset).
const Backend& a64_neon_dot_backend();
/// The i8mm level: GEMM tiles on usmmla (2 x 8 by 8 x 2 blocks).
const Backend& a64_neon_i8mm_backend();

}  // namespace qrt::jit
