// Saved differential-fuzzer failures: the minimized graph's MLIR text with a comment header
// that names the seed of its inputs (diff_check.h makes inputs from it deterministically).
#pragma once

#include <cstdint>
#include <string>

namespace qrt_fuzz {

/// One saved graph.
struct RegressionCase {
  std::string mlir;         ///< the whole file (comments are valid MLIR)
  uint64_t input_seed = 0;  ///< from the `// inputs-seed: N` line
};

/// Reads `path`; false with `error` naming the file (and the missing line) on failure.
bool read_regression(const std::string& path, RegressionCase* out, std::string* error);
/// Writes `c` to `path` with a header: the inputs-seed line and `finding` as comments.
bool write_regression(const std::string& path, const RegressionCase& c, const std::string& finding,
                      std::string* error);

}  // namespace qrt_fuzz
