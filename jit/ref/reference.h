// qrt — the scalar reference interpreter: the oracle every other backend matches.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "jit/tensor.h"

namespace qrt {

/// Runs a verified graph on `inputs` (one per function argument, in order) exactly as
/// docs/numerics.md specifies, and returns one tensor per returned value.
/// Dynamic dimensions of the arguments take the sizes of the given inputs. Errors name the
/// input or the op (with its source location) at fault: wrong element type or shape, an
/// int32 accumulator that would overflow, a computed shape that contradicts a static type.
Result<std::vector<Tensor>> run_reference(const Graph& graph, std::vector<Tensor> inputs);

/// Evaluates one op of `graph` on concrete operand tensors (used by run_reference and by
/// backends that fall back to the reference for single ops).
Result<Tensor> evaluate_op_reference(const Graph& graph, const Op& op,
                                     const std::vector<const Tensor*>& operands);

}  // namespace qrt
