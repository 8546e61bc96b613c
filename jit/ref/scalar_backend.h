// qrt — the scalar backend: the portable twins as a backend of their own (level "scalar").
// It runs every kernel kind on every host — the JIT's path where no code generator serves —
// with the same packed layouts as the AVX2 kernels, so its kernels can stand in for theirs.
#pragma once

#include "jit/core/backend.h"

namespace qrt::jit {

/// The scalar backend (always available).
const Backend& scalar_backend();

}  // namespace qrt::jit
