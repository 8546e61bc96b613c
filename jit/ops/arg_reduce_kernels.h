// qrt — qrt.argmax / qrt.argmin (and qrt.topk, their k-element form) in portable C++ (the reference's rule: a NaN wins, ties give
// the first index, or the last with select_last_index), for a classifier's last op or a
// detector's per-anchor class.
#pragma once

#include <memory>

#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// A kernel for `op` when it is a qrt.argmax or qrt.argmin of f32, integer (8 to 64 bits) or
/// per-tensor quantized (8 or 16 bits, compared by stored value) values with a static shape;
/// nullptr otherwise (f16/bf16/f64 stay with the reference).
std::unique_ptr<OpKernel> make_arg_reduce_kernel(const Graph& graph, const Op& op);
/// A kernel for `op` when it is a qrt.topk of f32, 8- to 64-bit integer (not u64) or
/// per-tensor quantized 8/16-bit values with a static shape; nullptr otherwise.
std::unique_ptr<OpKernel> make_topk_kernel(const Graph& graph, const Op& op);

}  // namespace qrt::jit
