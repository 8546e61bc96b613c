// qrt — qrt.scatter_nd in portable C++: data copied (or updated in place when the plan lets the
// result overwrite it, as a KV cache's update does), then each index tuple's slice of updates
// written or combined, tuples in order (the reference's rule); and qrt.gather_nd, the slices
// that index tuples name copied out, over the threads.
#pragma once

#include <memory>

#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// A kernel for `op` when it is a qrt.scatter_nd with static shapes: any element type with
/// reduction "none" (slices move as bytes), f32, f64, bf16, f16 (widened to f32, each result
/// rounded once) and 8- to 64-bit integers with "add", "mul", "max" or "min"; nullptr otherwise.
std::unique_ptr<OpKernel> make_scatter_nd_kernel(const Graph& graph, const Op& op);

/// A kernel for `op` when it is a qrt.gather_nd: any element type (slices move as bytes), any
/// shapes (the result's follow the operands' at run time); nullptr otherwise.
std::unique_ptr<OpKernel> make_gather_nd_kernel(const Graph& graph, const Op& op);

}  // namespace qrt::jit
