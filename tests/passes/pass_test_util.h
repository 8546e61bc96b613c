// Test helpers shared by the pass tests: parsing a graph, running a pipeline and searching a
// pass report.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/text_format.h"
#include "jit/ref/reference.h"
#include "passes/pipeline.h"

namespace pass_test {

/// Parses `text`, failing the test with the parser's message and the text when it is invalid.
inline qrt::Graph parse(const std::string& text) {
  auto g = qrt::parse_graph(text);
  REQUIRE_MESSAGE(g.is_ok(), std::string(g.status().to_string() + "\n" + text));
  return std::move(g).value();
}

/// Runs the pass `pipeline` on g, failing the test when it fails; the passes' report lines are
/// appended to `report`.
inline qrt::Graph run_pipeline(const qrt::Graph& g, const std::string& pipeline, std::vector<std::string>& report) {
  auto out = qrt::passes::run_pipeline(g, pipeline, &report);
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  return std::move(out).value();
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

/// Runs `before` and `after` (a pass's result) on the reference with `inputs`; their outputs
/// must be the same shapes, types and bytes.
inline void check_same_reference_outputs(const qrt::Graph& before, const qrt::Graph& after,
                                         const std::vector<qrt::Tensor>& inputs) {
  auto want = qrt::run_reference(before, inputs);
  auto got = qrt::run_reference(after, inputs);
  REQUIRE_MESSAGE(want.is_ok(), want.status().to_string());
  REQUIRE_MESSAGE(got.is_ok(), got.status().to_string());
  REQUIRE(want->size() == got->size());
  for (size_t i = 0; i < want->size(); ++i) {
    const qrt::Tensor &a = (*want)[i], &b = (*got)[i];
    REQUIRE(a.type.dims == b.type.dims);
    REQUIRE(a.type.element == b.type.element);
    REQUIRE(a.byte_size() == b.byte_size());
    CHECK(std::equal(a.bytes(), a.bytes() + a.byte_size(), b.bytes()));
  }
}

}  // namespace pass_test
