// Test helper: the ISA levels this host has, through the public C API.
#pragma once

#include <qrt.h>

#include <cstdlib>

#include <string>
#include <vector>

#include "tests/slow_host.h"

namespace qrt_test {

/// The host's ISA levels, best first, as qrt_host_isas() lists them ("avx2, scalar").
inline std::vector<std::string> host_levels() {
  std::vector<std::string> levels;
  const std::string all = qrt_host_isas();
  for (size_t at = 0; at < all.size();) {
    const size_t comma = all.find(", ", at);
    levels.push_back(all.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    at = comma == std::string::npos ? all.size() : comma + 2;
  }
  return levels;
}

/// The levels a test that loops over the host's levels runs them at: all of them, but on a slow
/// host (tests/slow_host.h: qemu, the sanitizer trees) the best and scalar only, unless
/// QRT_TEST_ALL_LEVELS is set. The levels between run there in their own jit-<level> tests, and
/// every level runs these loops in the native tree; under qemu and ASan each level of the model
/// and importer loops cost CI minutes.
inline std::vector<std::string> tested_levels() {
  std::vector<std::string> levels = host_levels();
  if (!slow_host() || std::getenv("QRT_TEST_ALL_LEVELS") != nullptr || levels.size() <= 2) return levels;
  return {levels.front(), levels.back()};
}

}  // namespace qrt_test
