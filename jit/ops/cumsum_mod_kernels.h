// qrt — qrt.cumsum and qrt.mod in portable C++: the reference's formulas (running sums in the
// element's own precision, f32 for f32; C's fmod; the floor or truncated integer remainder),
// for the position ids and index arithmetic of exported transformer and detection graphs.
#pragma once

#include <memory>

#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// A kernel for `op` when it is a qrt.cumsum or qrt.mod of f32, f64 or 8- to 64-bit integer
/// values with static shapes; nullptr otherwise (f16/bf16 stay with the reference).
std::unique_ptr<OpKernel> make_cumsum_mod_kernel(const Graph& graph, const Op& op);

}  // namespace qrt::jit
