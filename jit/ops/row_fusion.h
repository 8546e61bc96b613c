// qrt — row fusion: an op whose kernel reads its input one image row at a time (the depthwise
// rows path) takes the rows straight from the kernel of the op producing them (a 1x1
// convolution on the GEMM) where that result has no other reader. Each input row is computed
// into a per-thread buffer when the consumer first needs it and read from there while it is
// in L1: the intermediate tensor (mobilenet_v2's expanded activations, up to 112²·96 bytes)
// is never written, and the consumer does not stream it back from L3 (docs/architecture.md,
// "Row fusion"). The results are the same bytes: both kernels compute what they computed
// apart, row by row. Plans fuse only under QRT_PLAN_ROW_FUSION: on the hosts measured the
// streams it saves were not what bounded the two ops (performance.md, seventh session).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// One fused pair of a graph: `consumer` now runs `kernel` on `operands`; `producer` never runs.
struct RowFusion {
  size_t producer = 0, consumer = 0;
  std::unique_ptr<OpKernel> kernel;  ///< the consumer's result from the producer's input
  std::vector<int> operands;         ///< the producer's input, the consumer's constants, the producer's
};

/// The producer-consumer pairs of a static-shape graph's kernels (`kernels[o]` for op o, null
/// where the reference runs it; `operands[o]` the values each op reads, as the plan has them;
/// `fused_into[o]` >= 0 for ops that never run) that row fusion serves: the consumer's kernel
/// reads_operand_rows(), its operand 0 is the only result of a kernel with a row_producer(),
/// read by no other op and not a graph output. The pairs' kernels are moved into the fused
/// kernels (`kernels` keeps null there).
std::vector<RowFusion> fuse_row_producers(const Graph& graph, std::vector<std::unique_ptr<OpKernel>>& kernels,
                                          const std::vector<std::vector<int>>& operands,
                                          const std::vector<int>& fused_into);

}  // namespace qrt::jit
