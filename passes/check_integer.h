// qrt — the final check of the quantization pipeline: between two integer kernels no
// quant.dcast/quant.qcast may survive unless a report line says why.
#pragma once

#include "ir/graph.h"
#include "passes/pipeline.h"

namespace qrt::passes {

/// Logs a summary (integer kernels, the values entering and leaving integer form) and one line
/// per dequantize → float op(s) → quantize path whose ends are integer kernels, naming the float
/// op and why it stays float (no integer kernel, or mismatched parameters fold-qdq refused).
/// Returns the number of such paths.
size_t check_integer(const Graph& graph, PassLog& log);

}  // namespace qrt::passes
