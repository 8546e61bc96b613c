// Test helper: the ISA levels this host has, through the public C API.
#pragma once

#include <qrt.h>

#include <string>
#include <vector>

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

}  // namespace qrt_test
