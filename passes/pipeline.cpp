// qrt — pass pipelines (see pipeline.h).
#include "passes/pipeline.h"

#include <sstream>

#include "passes/dead_code.h"
#include "passes/fold_pad.h"
#include "passes/fold_qdq.h"

namespace qrt::passes {

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = {"fold-pad", "fold-qdq"};
  return names;
}

Result<Graph> run_pipeline(const Graph& graph, const std::string& spec_in, std::vector<std::string>* report) {
  const std::string spec = spec_in == "default" ? kDefaultPipeline : spec_in;
  std::vector<std::string> names;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) names.push_back(item);
  }
  Graph g = graph;
  for (const std::string& name : names) {
    if (name == "fold-pad") {
      size_t folded = 0;
      g = fold_pad_into_conv(g, &folded);
      if (report) report->push_back("fold-pad: " + std::to_string(folded) + " pad(s) folded into convolutions");
    } else if (name == "fold-qdq") {
      QdqFoldReport r;
      g = fold_qdq(g, &r);
      if (report) {
        report->push_back("fold-qdq: " + std::to_string(r.folded) + " region(s) folded");
        for (const std::string& line : r.lines) report->push_back("  " + line);
      }
    } else {
      std::string known;
      for (const std::string& n : pass_names()) known += (known.empty() ? "" : ", ") + n;
      return Status::error("unknown pass '" + name + "' (passes: " + known + ")").with_code(ErrorCode::kInvalidArgument);
    }
    if (Status s = verify_graph(g); !s.is_ok()) {
      return Status::error("pass '" + name + "' produced an invalid graph: " + s.to_string());
    }
  }
  size_t removed = 0;
  g = eliminate_dead_ops(g, &removed);
  if (report && !names.empty()) report->push_back("dead ops removed: " + std::to_string(removed));
  return g;
}

}  // namespace qrt::passes
