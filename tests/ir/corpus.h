// Test helper: the text of tests/data/oracle_corpus.mlir (every op and many types).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace qrt_test {

/// The corpus graph's text.
inline std::string corpus_text() {
  std::ifstream in(std::string(TESTS_DATA_DIR) + "/oracle_corpus.mlir");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace qrt_test
