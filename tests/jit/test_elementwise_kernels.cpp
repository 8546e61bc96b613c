// Tests: quantized add, mul and requantize on the generated element-wise kernel are bit-exact
// with the reference for every length (tails), every signedness combination, extreme zero
// points, narrow output bounds, and scales that make results saturate.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "op_kernel_check.h"

namespace {

using qrt_test::QuantSpec;

QuantSpec random_spec(std::mt19937& rng, bool narrow_ok) {
  QuantSpec q;
  std::uniform_int_distribution<int> coin(0, 1), pick(0, 4);
  q.is_signed = coin(rng);
  q.lo = q.is_signed ? -128 : 0;
  q.hi = q.is_signed ? 127 : 255;
  if (narrow_ok && pick(rng) == 0) q.lo += 5, q.hi -= 30;
  q.scales = {std::pow(10.0, std::uniform_real_distribution<double>(-3.0, 1.0)(rng))};
  const int p = pick(rng);
  q.zps = {p == 0 ? q.lo : p == 1 ? q.hi : std::uniform_int_distribution<int>(q.lo, q.hi)(rng)};
  return q;
}

}  // namespace

TEST_CASE("quantized add, mul and requantize kernels are bit-exact with the reference") {
  std::mt19937 rng(17);
  int cases = 0;
  for (const char* op : {"qrt.add", "qrt.mul", "qrt.requantize"}) {
    const bool binary = std::string(op) != "qrt.requantize";
    for (int64_t n : {1, 7, 8, 9, 31, 64, 1003}) {
      for (int rep = 0; rep < 6; ++rep) {
        const QuantSpec a = random_spec(rng, true), b = random_spec(rng, true);
        QuantSpec out = random_spec(rng, true);
        if (std::string(op) == "qrt.mul") out.scales[0] = a.scales[0] * b.scales[0] * 100.0 * (rep + 1) / 3.0;
        const std::string s = std::to_string(n);
        const std::string at = "tensor<" + s + "x" + a.type() + ">", bt = "tensor<" + s + "x" + b.type() + ">",
                          ot = "tensor<" + s + "x" + out.type() + ">";
        std::string text = "func.func @main(%x: " + at + ") -> " + ot + " {\n";
        if (binary) {
          const auto bv = qrt_test::random_values(rng, size_t(n), b.lo, b.hi);
          text += "  %b = \"qrt.constant\"() {value = " + qrt_test::hex_dense(qrt_test::bytes_of(bv)) + " : tensor<" +
                  s + (b.is_signed ? "xi8" : "xui8") + ">} : () -> " + bt + "\n";
          const std::string clamp = qrt_test::random_clamp_attrs(rng, out);
          const std::string attrs = clamp.empty() ? "" : " {" + clamp.substr(2) + "}";
          text += "  %y = \"" + std::string(op) + "\"(%x, %b)" + attrs + " : (" + at + ", " + bt + ") -> " + ot + "\n";
        } else {
          text += "  %y = \"qrt.requantize\"(%x) : (" + at + ") -> " + ot + "\n";
        }
        text += "  return %y : " + ot + "\n}\n";
        CAPTURE(text);
        auto t = qrt::parse_type(at);
        REQUIRE(t.is_ok());
        qrt::Tensor x = qrt::Tensor::zeros(*t);
        const auto xv = qrt_test::random_values(rng, size_t(n), a.lo, a.hi);
        for (size_t i = 0; i < xv.size(); ++i) x.set_int(i, xv[i]);
        const std::string how = qrt_test::check_last_op(text, x);
        CHECK(how.find(std::string("__") + qrt::jit::isa_suffix(qrt_test::test_backend(qrt::jit::KernelOp::kQAdd).isa())) != std::string::npos);
        ++cases;
      }
    }
  }
  MESSAGE(cases << " element-wise cases");
}
