// Tests' access to ONNX's backend node tests (Debian's libonnx-testdata): where they live and
// how a file of one is read.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace qrt_test {

/// The node tests' directory: one folder per test, model.onnx and test_data_set_0/.
inline const std::filesystem::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

/// The bytes of file `p` (empty when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace qrt_test
