// qrt — the kernel list: one row per (kernel kind, ISA level) with the backend that serves
// it. Selection, the twin tests and the benchmarks all walk it; adding a backend means a new
// folder and rows here, nothing else.
#pragma once

#include <vector>

#include "jit/core/backend.h"

namespace qrt::jit {

/// One kernel kind at one level.
struct KernelListRow {
  KernelOp op;
  Isa isa;
  const Backend* backend;
};

/// Every row of the backends built into this library (backends for other architectures are
/// not built), most capable level first within each kind.
const std::vector<KernelListRow>& kernel_list();
/// The backend of `generator` serving `op` at `isa` (element-wise programs: the level's program
/// compiler whatever the generator), or null.
const Backend* kernel_list_backend(KernelOp op, Isa isa, Generator generator = Generator::kNative);

}  // namespace qrt::jit
