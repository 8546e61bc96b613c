// qrt — the pass manager: named passes with options, pipelines, the verifier after every pass,
// timing per pass and the IR after each pass on request; dead ops go last.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace qrt::passes {

/// The pipeline plans use when none is given: fake-quant ops become qcast/dcast pairs,
/// propagation resolves any placeholder types (and reports every quantized value), pads fold
/// into convolutions, QDQ regions into integer kernels, clamps into their producers, and the
/// integer check explains every quantize/dequantize left between integer kernels.
inline const char* kDefaultPipeline = "fake-quant,propagate,fold-pad,fold-qdq,expand-batch-groups,lower-hybrid,to-nhwc,fuse-clamp,check-integer";

/// Post-training quantization of a graph carrying quant.stats: statistics to calibrated types,
/// then the default pipeline.
inline const char* kCalibratePipeline = "calibrate,fake-quant,propagate,fold-pad,fold-qdq,expand-batch-groups,lower-hybrid,to-nhwc,fuse-clamp,check-integer";

/// A pass's options, `name{key=value key2=value2}` in a pipeline.
class PassOptions {
 public:
  /// The value of `key`, or `fallback` when not given.
  std::string get(const std::string& key, const std::string& fallback) const;
  /// The value of `key`, which must be one of `allowed` (error naming the pass otherwise).
  Result<std::string> choice(const std::string& pass, const std::string& key, const std::vector<std::string>& allowed,
                             const std::string& fallback) const;
  /// Every option given (the pipeline parser fills it).
  std::map<std::string, std::string> values;
};

/// What a pass writes into the report: one line per decision.
using PassLog = std::vector<std::string>;

/// One registered pass.
struct PassInfo {
  const char* name;                  ///< e.g. "fold-qdq"
  const char* summary;               ///< one line for --help and docs
  std::vector<const char*> options;  ///< option keys it accepts
  /// Runs the pass; errors are bad options or graphs it cannot handle.
  Result<Graph> (*run)(const Graph& graph, const PassOptions& options, PassLog& log);
};

/// Every pass a pipeline may name, in a sensible order.
const std::vector<PassInfo>& registered_passes();

/// Names of the registered passes.
std::vector<std::string> pass_names();

/// How run_pipeline reports.
struct PipelineOptions {
  std::vector<std::string>* report = nullptr;  ///< one line per decision, prefixed "pass: "
  bool print_ir_after_all = false;             ///< append "// -----// IR after P //----- //" and the IR
  bool timing = false;                         ///< append one "timing:" line per pass
};

/// Runs the comma-separated passes of `spec` in order ("" runs none; "default" is
/// kDefaultPipeline; a pass may carry options, `propagate{activations=i8}`), verifying the graph
/// after each, then dead-op elimination. Unknown names and options are errors listing the
/// known ones.
Result<Graph> run_pipeline(const Graph& graph, const std::string& spec, const PipelineOptions& options);

/// run_pipeline with only a report.
Result<Graph> run_pipeline(const Graph& graph, const std::string& spec, std::vector<std::string>* report = nullptr);

}  // namespace qrt::passes
