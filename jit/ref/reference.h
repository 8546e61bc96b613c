// qrt — the scalar reference interpreter: the oracle every other backend matches.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "jit/core/tensor.h"

namespace qrt {

/// Runs a verified graph on `inputs` (one per function argument, in order) exactly as
/// docs/numerics.md specifies, and returns one tensor per returned value.
/// Dynamic dimensions of the arguments take the sizes of the given inputs. Errors name the
/// input or the op (with its source location) at fault: wrong element type or shape, an
/// int32 accumulator that would overflow, a computed shape that contradicts a static type.
Result<std::vector<Tensor>> run_reference(const Graph& graph, std::vector<Tensor> inputs);

/// Lets a backend run op `op_index` itself: returns its single result, or nullopt to leave
/// the op to the reference.
using OpOverride = std::function<std::optional<Result<Tensor>>(size_t op_index,
                                                                const std::vector<const Tensor*>& operands)>;

/// run_reference with a per-op override (how backends run their kernels and fall back to
/// the reference for everything else). Inputs are validated the same way.
Result<std::vector<Tensor>> run_graph(const Graph& graph, std::vector<Tensor> inputs, const OpOverride& override_op);

/// Evaluates one op of `graph` on concrete operand tensors (used by run_reference and by
/// backends that fall back to the reference for single ops).
Result<Tensor> evaluate_op_reference(const Graph& graph, const Op& op,
                                     const std::vector<const Tensor*>& operands);

/// What the reference requires of any result of `op` whose dims are computed at run time:
/// the rank and every static dimension of its declared type (and a per-axis type's channel
/// count). Backends that compute result shapes themselves check theirs with it.
Status check_op_result_shape(const Op& op, const Type& declared, const std::vector<int64_t>& dims);

/// Evaluates one op with any number of results (qrt.dynamic_quantize has three).
Result<std::vector<Tensor>> evaluate_op_results(const Graph& graph, const Op& op,
                                                const std::vector<const Tensor*>& operands);

}  // namespace qrt
