// qrt — named passes and pipelines: the verifier runs after every pass, dead ops go last.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace qrt::passes {

/// The pipeline plans use when none is given.
inline const char* kDefaultPipeline = "fold-pad,fold-qdq";

/// Every pass a pipeline may name, in a sensible order: "fold-pad", "fold-qdq".
const std::vector<std::string>& pass_names();

/// Runs the comma-separated passes of `spec` in order ("" runs none; "default" is
/// kDefaultPipeline), verifying the graph after each, then dead-op elimination. Unknown names
/// are an error listing the known ones. `report`, if given, gets one line per decision.
Result<Graph> run_pipeline(const Graph& graph, const std::string& spec, std::vector<std::string>* report = nullptr);

}  // namespace qrt::passes
