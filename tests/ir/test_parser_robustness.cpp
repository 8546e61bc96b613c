// Tests: the parser on damaged input — deterministic mutations of a rich graph (truncation,
// byte flips, insertions, deletions) must give an error or a graph that round-trips, never a
// crash, hang or assertion. Run under -Db_sanitize=address,undefined to catch memory errors.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "ir/text_format.h"
#include "tests/ir/corpus.h"

namespace {

std::string corpus() { return qrt_test::corpus_text(); }

}  // namespace

TEST_CASE("damaged graphs give an error or a graph that round-trips") {
  const std::string base = corpus();
  REQUIRE(base.size() > 1000);
  REQUIRE(qrt::parse_graph(base, "c.mlir").is_ok());
  std::mt19937_64 rng(20261121);
  const char alphabet[] = "%\"(){}<>[]:,=-x?!.0123456789abcdefiu \n";
  int errors = 0, parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = base;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = size_t(rng() % text.size());
      switch (rng() % 4) {
        case 0: text.resize(pos); break;                                         // truncate
        case 1: text[pos] = alphabet[rng() % (sizeof alphabet - 1)]; break;      // replace
        case 2: text.insert(pos, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
        default: text.erase(pos, 1 + size_t(rng() % 8)); break;                  // delete
      }
      if (text.empty()) text = "x";
    }
    auto g = qrt::parse_graph(text, "m.mlir");
    if (!g.is_ok()) {
      ++errors;
      const std::string msg = g.status().to_string();
      CHECK(msg.rfind("m.mlir:", 0) == 0);  // always located
      CHECK(msg.find(": error: ") != std::string::npos);
      continue;
    }
    ++parsed;
    const std::string printed = qrt::print_graph(*g);
    auto again = qrt::parse_graph(printed, "p.mlir");
    REQUIRE_MESSAGE(again.is_ok(), again.status().to_string());
    CHECK(qrt::print_graph(*again) == printed);
  }
  CHECK(errors > 1000);
  MESSAGE("mutations: " << errors << " rejected, " << parsed << " accepted and round-tripped");
}

TEST_CASE("nesting deeper than 64 levels is refused with its location, not recursed into") {
  // A dense literal and an array attribute at the limit parse; one more level, or a
  // million, is an error naming the limit (a fuzzer's 21 KB of brackets overflowed the stack).
  auto dense = [](int depth) {
    std::string shape;
    for (int i = 0; i < depth; ++i) shape += "1x";
    const std::string lit = std::string(size_t(depth), '[') + "1.0" + std::string(size_t(depth), ']');
    const std::string t = "tensor<" + shape + "f32>";
    return "func.func @main() -> " + t + " {\n  %c = \"qrt.constant\"() {value = dense<" + lit + "> : " + t + "} : () -> " + t +
           "\n  return %c : " + t + "\n}\n";
  };
  auto array = [](int depth) {
    const std::string a = std::string(size_t(depth), '[') + "1" + std::string(size_t(depth), ']');
    return "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  %y = \"qrt.relu\"(%x) {note = " + a +
           "} : (tensor<2xf32>) -> tensor<2xf32>\n  return %y : tensor<2xf32>\n}\n";
  };
  CHECK(qrt::parse_graph(dense(64), "d.mlir").is_ok());
  for (int depth : {65, 1000000}) {
    CAPTURE(depth);
    const auto deep = qrt::parse_graph(dense(depth), "d.mlir");
    REQUIRE(!deep.is_ok());
    CHECK(deep.status().message().find("dense literal nests deeper than 64 levels") != std::string::npos);
    CHECK(deep.status().to_string().find("d.mlir:2:") != std::string::npos);
  }
  // Array attributes: parsed whatever the op does with them (the verifier may refuse the name).
  const auto at_limit = qrt::parse_graph(array(64), "a.mlir");
  CHECK((at_limit.is_ok() || at_limit.status().message().find("nests deeper") == std::string::npos));
  const auto too_deep = qrt::parse_graph(array(1000000), "a.mlir");
  REQUIRE(!too_deep.is_ok());
  CHECK(too_deep.status().message().find("array attribute nests deeper than 64 levels") != std::string::npos);
}
