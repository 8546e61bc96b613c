// Saved differential-fuzzer failures (see regression_file.h).
#include "regression_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace qrt_fuzz {

bool read_regression(const std::string& path, RegressionCase* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  out->mlir = ss.str();
  const std::string key = "// inputs-seed: ";
  const size_t at = out->mlir.find(key);
  if (at == std::string::npos) {
    *error = path + ": no '" + key + "N' line (every saved graph names the seed of its inputs)";
    return false;
  }
  char* end = nullptr;
  errno = 0;
  out->input_seed = std::strtoull(out->mlir.c_str() + at + key.size(), &end, 10);
  if (errno || end == out->mlir.c_str() + at + key.size()) {
    *error = path + ": the inputs-seed line holds no number";
    return false;
  }
  return true;
}

bool write_regression(const std::string& path, const RegressionCase& c, const std::string& finding,
                      std::string* error) {
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    *error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  out << "// A graph qrt-fuzz-diff found failing, minimized; replayed by the test suite.\n";
  out << "// inputs-seed: " << c.input_seed << "\n";
  std::stringstream lines(finding);
  std::string line;
  while (std::getline(lines, line)) out << "// found: " << line << "\n";
  out << c.mlir;
  if (!out) {
    *error = path + ": write failed";
    return false;
  }
  return true;
}

}  // namespace qrt_fuzz
