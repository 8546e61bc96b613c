// The differential check: one graph on every backend, ISA level and thread count the host
// offers, each output compared bit for bit with the reference backend's (docs/numerics.md:
// every level computes the same bits; any NaN equals any NaN). Uses only the public C API.
#pragma once

#include <qrt.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace qrt_fuzz {

/// One way to plan and run a graph.
struct RunConfig {
  std::string label;            ///< e.g. "jit@avx2/3t", "llvm@avx512-vnni", "jit@avx2/nofuse"
  qrt_backend backend = QRT_BACKEND_JIT;
  std::string isa;              ///< "" for the host's best
  size_t threads = 1;
  unsigned flags = 0;           ///< QRT_PLAN_* bits
  bool no_passes = false;       ///< plan with passes = "" (and compare with a reference without them)
};

/// What to cover.
struct ConfigOptions {
  bool llvm = true;             ///< the LLVM backend too, where this build has it
  size_t threads = 3;           ///< the multi-threaded runs' thread count (1: none)
};

/// The configurations for this host: the JIT at every ISA level the host has, at 1 and
/// `threads` threads; the best level without element-wise fusion and without graph passes;
/// and the LLVM backend at its levels the host has.
std::vector<RunConfig> host_configs(const ConfigOptions& options);

/// The outcome of checking one graph.
struct DiffOutcome {
  enum Kind { kSame, kInvalid, kMismatch, kSkipped } kind = kSame;
  std::string message;          ///< what differed (config, output, element, values, kernels)
  int runs = 0;                 ///< plans run, the references included
};

/// Counts of the kernels the JIT plans chose ("reference" where none), across checks.
using KernelCounts = std::map<std::string, int64_t>;

/// Loads `mlir`, fills every input from `input_seed` (quantized: stored values over the
/// storage bounds, sometimes only the bounds; f32: values around the graph's scales with
/// some infinities and NaNs), runs the reference once per pass setting, then every config,
/// and compares. kInvalid: the graph did not load or the reference refused it (a generator or
/// verifier bug; the message says which). `kernels` (may be null) gets the chosen kernels.
DiffOutcome diff_graph(const std::string& mlir, uint64_t input_seed, const std::vector<RunConfig>& configs,
                       KernelCounts* kernels = nullptr);

/// Resource bounds for models nobody generated (the loader fuzz targets).
struct DiffBudget {
  int64_t max_input_elements = int64_t{1} << 22;  ///< per input; dynamic dimensions become 1
  size_t max_memory = 0;  ///< every plan's memory budget (qrt_plan_options.max_memory; 0: the default)
};

/// diff_graph on a loaded model. kSkipped where an input exceeds `budget` or a plan its
/// memory budget (QRT_OUT_OF_MEMORY from qrt_plan_create).
DiffOutcome diff_model(const qrt_model_t* model, uint64_t input_seed, const std::vector<RunConfig>& configs,
                       KernelCounts* kernels = nullptr, const DiffBudget& budget = {});

}  // namespace qrt_fuzz
