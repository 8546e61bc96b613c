// qrun — repeated runs with latency statistics, the per-op profile and Chrome trace output,
// all through the C API.
#pragma once

#include <qrt.h>

#include <string>

namespace qrt_tools {

/// What to measure after the first run.
struct BenchOptions {
  int iterations = 0;        ///< timed runs (0: none)
  bool profile = false;      ///< print the per-op table
  std::string trace_path;    ///< write a Chrome trace (JSON) of the last run here
};

/// Runs `context` `options.iterations` more times and prints latency min/median/p90/max and
/// throughput; prints the per-op profile (averaged over the timed runs, or of the first run)
/// and writes the trace. Returns "" or an error message.
std::string bench_and_profile(qrt_context_t* context, const qrt_plan_t* plan, size_t threads,
                              const BenchOptions& options);

}  // namespace qrt_tools
