// qrt — fused element-wise regions: chains (and trees) of element-wise ops whose inner
// results have one reader each become one element-wise program, run where the region's last
// op runs. No intermediate tensor is written; each region reads its inputs once and writes
// its result once (docs/architecture.md, "Fused element-wise regions").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "jit/core/isa.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// One fused region of a graph.
struct FusedRegion {
  std::vector<size_t> ops;           ///< the region's ops in program order; the last is its root
  std::vector<int> inputs;           ///< the values it reads (the kernel's operands, in order)
  std::unique_ptr<OpKernel> kernel;  ///< computes the root's result from `inputs`
  std::string chain;                 ///< what each level said, as KernelChoice::chain
  Isa isa = Isa::kScalar;            ///< the level of the kernel
};

/// The regions of `graph` (static shapes only) with two or more ops whose programs a backend
/// among `allowed` compiles. An op joins the region of an operand when that operand has no
/// other reader, is not a graph output, and has the op's result shape. A region that maps one
/// 8-bit tensor to an 8-bit tensor of its shape (e.g. dcast -> logistic -> qcast) is a
/// function of one byte: it runs as a 256-entry table (kLut8 of `generator` where a level has
/// it), built at plan time from the program's scalar twin, so it equals the program exactly.
Result<std::vector<FusedRegion>> fuse_elementwise_regions(const Graph& graph, const IsaSet& allowed,
                                                          Generator generator = Generator::kNative);

}  // namespace qrt::jit
