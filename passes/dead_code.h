// qrt — dead-op elimination: drops ops whose results nothing uses.
#pragma once

#include "ir/graph.h"

namespace qrt::passes {

/// Returns a copy of `graph` without the ops whose results are neither returned nor used by
/// a kept op. Arguments are always kept (they are the graph's interface); the order of the
/// remaining ops and all names and locations are preserved. `removed_out`, if given, gets
/// the number of ops dropped.
Graph eliminate_dead_ops(const Graph& graph, size_t* removed_out = nullptr);

}  // namespace qrt::passes
