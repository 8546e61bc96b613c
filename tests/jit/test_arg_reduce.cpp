// Tests: qrt.argmax / qrt.argmin — the verifier's rules, the reference on hand-computed cases
// (a NaN wins, ties to the first or last index, keepdims), and the portable kernel against the
// reference on random f32, bf16 and f16 (ties and NaN), integer and quantized tensors along
// every axis; topk likewise.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "ir/text_format.h"
#include "op_kernel_check.h"
#include "tensor_util.h"

namespace {

std::string parse_error(const std::string& x, const std::string& op, const std::string& attrs, const std::string& y) {
  auto g = qrt::parse_graph("func.func @main(%x: " + x + ") -> " + y + " {\n  %y = \"" + op + "\"(%x) " + attrs + " : (" +
                            x + ") -> " + y + "\n  return %y : " + y + "\n}\n");
  return g.is_ok() ? "" : g.status().message();
}

}  // namespace

TEST_CASE("argmax and argmin: the verifier's rules") {
  const std::string x = "tensor<2x3xf32>";
  CHECK(parse_error(x, "qrt.argmax", "{axis = 1 : i64}", "tensor<2x1xi64>") == "");
  CHECK(parse_error(x, "qrt.argmin", "{axis = 0 : i64, keepdims = 0 : i64}", "tensor<3xi64>") == "");
  CHECK(parse_error(x, "qrt.argmax", "{axis = 1 : i64}", "tensor<2x1xi32>").find("result must be i64 indices") !=
        std::string::npos);
  CHECK(parse_error(x, "qrt.argmax", "{axis = 2 : i64}", "tensor<2x1xi64>").find("axis 2 is not a dimension") !=
        std::string::npos);
  CHECK(parse_error(x, "qrt.argmax", "{}", "tensor<2x1xi64>").find("needs attribute 'axis'") != std::string::npos);
  CHECK(parse_error(x, "qrt.argmax", "{axis = 1 : i64}", "tensor<2xi64>").find("result shape") != std::string::npos);
  CHECK(parse_error("tensor<2x0xf32>", "qrt.argmax", "{axis = 1 : i64}", "tensor<2x1xi64>").find("reduced dimension is empty") !=
        std::string::npos);
  CHECK(parse_error("tensor<3xi1>", "qrt.argmax", "{axis = 0 : i64}", "tensor<1xi64>").find("expects a float") !=
        std::string::npos);
}

TEST_CASE("argmax and argmin on the reference: NaN wins, ties to the first or last index") {
  using qrt_test::run1;
  const std::string x = "tensor<2x4xf32>";
  const std::vector<double> v = {1, 3, 3, -2, 5, NAN, 0, NAN};
  CHECK(run1("qrt.argmax", "{axis = 1 : i64, keepdims = 0 : i64}", {{x, v}}, "tensor<2xi64>") == std::vector<double>{1, 1});
  CHECK(run1("qrt.argmax", "{axis = 1 : i64, keepdims = 0 : i64, select_last_index = 1 : i64}", {{x, v}},
             "tensor<2xi64>") == std::vector<double>{2, 3});
  CHECK(run1("qrt.argmin", "{axis = 1 : i64}", {{x, v}}, "tensor<2x1xi64>") == std::vector<double>{3, 1});
  CHECK(run1("qrt.argmin", "{axis = 0 : i64}", {{x, v}}, "tensor<1x4xi64>") == std::vector<double>{0, 1, 1, 1});
  // Quantized values compare by stored value.
  CHECK(run1("qrt.argmax", "{axis = 0 : i64, keepdims = 0 : i64}", {{"tensor<3x!quant.uniform<i8:f32, 0.5:-3>>", {-7, 4, 4}}},
             "tensor<i64>") == std::vector<double>{1});
}

TEST_CASE("the argmax and argmin kernels are bit-exact with the reference") {
  std::mt19937 rng(1621);
  int cases = 0;
  const std::vector<std::string> elements = {"f32", "bf16", "f16", "i32", "i8", "!quant.uniform<u8:f32, 0.1:3>",
                                             "!quant.uniform<i16:f32, 0.01>", "i64"};
  for (const std::string& e : elements) {
    for (int axis = 0; axis < 3; ++axis) {
      for (const char* op : {"qrt.argmax", "qrt.argmin"}) {
        const bool last = rng() % 2;
        const std::vector<int64_t> dims = {3, 17, 6};
        std::vector<int64_t> out = dims;
        out[size_t(axis)] = 1;
        const std::string xt = "tensor<" + qrt_test::shape(dims) + e + ">", yt = "tensor<" + qrt_test::shape(out) + "i64>";
        const std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %y = \"" + op + "\"(%x) {axis = " +
                                 std::to_string(axis) + " : i64, select_last_index = " + (last ? "1" : "0") + " : i64} : (" +
                                 xt + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
        CAPTURE(text);
        auto t = qrt::parse_type(xt);
        REQUIRE(t.is_ok());
        qrt::Tensor x = qrt::Tensor::zeros(*t);
        for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
          // Few distinct values (ties; bf16/f16 round some of the thousandths together), a NaN
          // now and then for floats.
          const int v = int(rng() % 7) - 3;
          if (t->element.is_float()) {
            x.set_float(i, rng() % 23 == 0 ? NAN : double(v) + 0.001 * double(rng() % 3));
          } else {
            x.set_int(i, v + (e.find("u8") != std::string::npos ? 3 : 0));
          }
        }
        const std::string how = qrt_test::check_last_op(text, x);
        CHECK_MESSAGE(how.find(std::string(op + 4) + " (portable C++") == 0, how);
        if (e == "bf16" || e == "f16") CHECK_MESSAGE(how.find(e + " values widened to f32") != std::string::npos, how);
        ++cases;
      }
    }
  }
  MESSAGE(cases << " argmax / argmin cases");
}

TEST_CASE("topk: the verifier's rules, hand-computed orders (ties by index, NaN above all), the kernel against the reference") {
  const std::string x = "tensor<2x4xf32>";
  CHECK(parse_error(x, "qrt.topk", "{axis = 1 : i64, k = 2 : i64}", "tensor<2x2xi64>") == "");
  CHECK(parse_error(x, "qrt.topk", "{axis = 1 : i64, k = 5 : i64}", "tensor<2x5xi64>").find("k = 5 is outside 0 .. 4") !=
        std::string::npos);
  CHECK(parse_error(x, "qrt.topk", "{axis = 1 : i64, k = 2 : i64}", "tensor<2x3xi64>").find("result shape") != std::string::npos);
  CHECK(parse_error(x, "qrt.topk", "{axis = 1 : i64, k = 2 : i64, largest = 2 : i64}", "tensor<2x2xi64>")
            .find("largest must be 0 or 1") != std::string::npos);

  using qrt_test::run1;
  const std::vector<double> v = {1, 3, 3, -2, 5, NAN, 0, -INFINITY};
  CHECK(run1("qrt.topk", "{axis = 1 : i64, k = 3 : i64}", {{x, v}}, "tensor<2x3xi64>") == std::vector<double>{1, 2, 0, 1, 0, 2});
  CHECK(run1("qrt.topk", "{axis = 1 : i64, k = 4 : i64, largest = 0 : i64}", {{x, v}}, "tensor<2x4xi64>") ==
        std::vector<double>{3, 0, 1, 2, 3, 2, 0, 1});
  CHECK(run1("qrt.topk", "{axis = 0 : i64, k = 1 : i64}", {{x, v}}, "tensor<1x4xi64>") == std::vector<double>{1, 1, 0, 0});
  CHECK(run1("qrt.topk", "{axis = 1 : i64, k = 0 : i64}", {{x, v}}, "tensor<2x0xi64>").empty());

  std::mt19937 rng(1622);
  int cases = 0;
  for (const std::string& e : {std::string("f32"), std::string("bf16"), std::string("f16"), std::string("i32"),
                               std::string("!quant.uniform<u8:f32, 0.1:3>"), std::string("i64")}) {
    for (int axis = 0; axis < 3; ++axis) {
      for (int largest : {0, 1}) {
        const std::vector<int64_t> dims = {3, 17, 6};
        const int64_t k = int64_t(rng() % uint64_t(dims[size_t(axis)] + 1));
        std::vector<int64_t> out = dims;
        out[size_t(axis)] = k;
        const std::string xt = "tensor<" + qrt_test::shape(dims) + e + ">", yt = "tensor<" + qrt_test::shape(out) + "i64>";
        const std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %y = \"qrt.topk\"(%x) {axis = " +
                                 std::to_string(axis) + " : i64, k = " + std::to_string(k) + " : i64, largest = " +
                                 std::to_string(largest) + " : i64} : (" + xt + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
        CAPTURE(text);
        auto t = qrt::parse_type(xt);
        REQUIRE(t.is_ok());
        qrt::Tensor in = qrt::Tensor::zeros(*t);
        for (size_t i = 0; i < size_t(in.num_elements()); ++i) {
          const int val = int(rng() % 7) - 3;  // few distinct values: ties
          if (t->element.is_float()) in.set_float(i, rng() % 23 == 0 ? NAN : double(val) + 0.001 * double(rng() % 3));
          else in.set_int(i, val + (e.find("u8") != std::string::npos ? 3 : 0));
        }
        const std::string how = qrt_test::check_last_op(text, in);
        CHECK_MESSAGE(how.find("topk (portable C++") == 0, how);
        ++cases;
      }
    }
  }
  CHECK(cases == 36);
}
