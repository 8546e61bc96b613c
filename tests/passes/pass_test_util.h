// Test helpers shared by the pass tests: parsing a graph and searching a pass report.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/text_format.h"

namespace pass_test {

/// Parses `text`, failing the test with the parser's message when it is invalid.
inline qrt::Graph parse(const std::string& text) {
  auto g = qrt::parse_graph(text);
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  return std::move(g).value();
}

/// True when some report line contains `part`; otherwise the whole report is printed.
inline bool has_line(const std::vector<std::string>& report, const std::string& part) {
  const bool found =
      std::any_of(report.begin(), report.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
  if (!found) {
    std::string all;
    for (const std::string& l : report) all += l + "\n";
    const std::string message = "not in the report:\n" + all;
    MESSAGE(message);
  }
  return found;
}

}  // namespace pass_test
