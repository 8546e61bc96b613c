// Tests: dead-op elimination, text in -> text out.
#include <doctest/doctest.h>

#include "ir/text_format.h"
#include "passes/dead_code.h"

TEST_CASE("unused ops are removed, used chains and names are kept") {
  auto g = qrt::parse_graph(R"(func.func @main(%x: tensor<2xf32>, %unused: tensor<2xf32>) -> tensor<2xf32> {
  %a = "qrt.add"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %dead = "qrt.mul"(%a, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %dead2 = "qrt.relu"(%dead) : (tensor<2xf32>) -> tensor<2xf32>
  %r = "qrt.relu"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
})");
  REQUIRE(g.is_ok());
  size_t removed = 0;
  const qrt::Graph out = qrt::passes::eliminate_dead_ops(*g, &removed);
  CHECK(removed == 2);
  CHECK(qrt::verify_graph(out).is_ok());
  CHECK(qrt::print_graph(out) ==
        "func.func @main(%x: tensor<2xf32>, %unused: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %a = \"qrt.add\"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "  %r = \"qrt.relu\"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  return %r : tensor<2xf32>\n"
        "}\n");
  size_t again = 1;
  qrt::passes::eliminate_dead_ops(out, &again);
  CHECK(again == 0);
}
