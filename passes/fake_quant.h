// qrt — fake-quant conversion: qrt.fake_quant becomes a quant.qcast → quant.dcast pair with the
// matching !quant.uniform type, as the MLIR quantization design describes.
#pragma once

#include "ir/graph.h"
#include "passes/pipeline.h"

namespace qrt::passes {

/// Rewrites every `y = qrt.fake_quant(x)` into `q = quant.qcast(x); y = quant.dcast(q)` where q's
/// type is the one fake_quant_element_type() derives from the op's min/max/num_bits/narrow_range/
/// is_signed/axis (per-axis when `axis` is set). The result is bit-identical to the op it
/// replaces: the reference defines fake_quant as exactly this pair. One log line per op. Fails,
/// naming the op, only where the verifier would have (a range whose scale underflows).
Result<Graph> convert_fake_quant(const Graph& graph, PassLog& log);

}  // namespace qrt::passes
