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

namespace {

// A per-tensor spec of `bits` (8 or 16) storage: full or narrow bounds, extreme zero points.
QuantSpec random_wide_spec(std::mt19937& rng, int bits) {
  QuantSpec q;
  std::uniform_int_distribution<int> coin(0, 1), pick(0, 4);
  q.bits = bits;
  q.is_signed = coin(rng);
  q.lo = q.is_signed ? -(1 << (bits - 1)) : 0;
  q.hi = q.is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  if (pick(rng) == 0) q.lo += 5, q.hi -= 300 >> (16 - bits);
  q.scales = {std::pow(10.0, std::uniform_real_distribution<double>(-4.0, 0.0)(rng))};
  const int p = pick(rng);
  q.zps = {p == 0 ? q.lo : p == 1 ? q.hi : std::uniform_int_distribution<int>(q.lo, q.hi)(rng)};
  return q;
}

// Little-endian bytes of stored values of `bits` (8 or 16) each.
std::vector<uint8_t> stored_bytes(const std::vector<int>& values, int bits) {
  std::vector<uint8_t> b;
  for (int v : values) {
    b.push_back(uint8_t(v));
    if (bits == 16) b.push_back(uint8_t(unsigned(v) >> 8));
  }
  return b;
}

}  // namespace

TEST_CASE("16-bit and mixed-width quantized element-wise ops run as programs of the reference's formulas") {
  // The 8-bit kernels take 8-bit operands and results only: the rest (16-bit activations, as
  // TFLite 16x8 models have between their convolutions) runs as element-wise programs.
  std::mt19937 rng(1618);
  int cases = 0;
  for (const char* op : {"qrt.add", "qrt.mul", "qrt.requantize", "qrt.relu", "qrt.clamp"}) {
    const std::string name = op;
    const bool binary = name == "qrt.add" || name == "qrt.mul", same_type = name == "qrt.relu" || name == "qrt.clamp";
    for (int rep = 0; rep < 12; ++rep) {
      CAPTURE(name);
      CAPTURE(rep);
      // At least one side 16 bits; the others 8 or 16.
      const int wide_side = rep % 3;
      const QuantSpec a = random_wide_spec(rng, wide_side == 0 || rep % 2 ? 16 : 8);
      const QuantSpec b = random_wide_spec(rng, wide_side == 1 || rep % 4 == 1 ? 16 : 8);
      QuantSpec out = same_type ? a : random_wide_spec(rng, wide_side == 2 || (!binary && a.bits == 8) ? 16 : 8);
      if (name == "qrt.mul") out.scales[0] = a.scales[0] * b.scales[0] * (a.bits == 16 ? 3000.0 : 30.0) * (rep + 1);
      const int64_t rows = 3, cols = 1 + rep * 5;
      // Broadcasting: b one value, one row, or the whole shape.
      const std::vector<int64_t> bdims = rep % 3 == 0 ? std::vector<int64_t>{1} : rep % 3 == 1 ? std::vector<int64_t>{1, cols}
                                                                                             : std::vector<int64_t>{rows, cols};
      const std::string shape = std::to_string(rows) + "x" + std::to_string(cols) + "x";
      const std::string at = "tensor<" + shape + a.type() + ">", ot = "tensor<" + shape + out.type() + ">";
      std::string text = "func.func @main(%x: " + at + ") -> " + ot + " {\n";
      if (binary) {
        const std::string bt = "tensor<" + qrt_test::shape(bdims) + b.type() + ">";
        const auto bv = qrt_test::random_values(rng, size_t(bdims.size() == 1 ? 1 : bdims[0] * bdims[1]), b.lo, b.hi);
        text += "  %b = \"qrt.constant\"() {value = " + qrt_test::hex_dense(stored_bytes(bv, b.bits)) + " : tensor<" +
                qrt_test::shape(bdims) + (b.is_signed ? "i" : "ui") + std::to_string(b.bits) + ">} : () -> " + bt + "\n";
        const std::string clamp = qrt_test::random_clamp_attrs(rng, out);
        text += "  %y = \"" + name + "\"(%x, %b)" + (clamp.empty() ? "" : " {" + clamp.substr(2) + "}") + " : (" + at +
                ", " + bt + ") -> " + ot + "\n";
      } else if (name == "qrt.clamp") {
        const double lo = (std::uniform_int_distribution<int>(a.lo, a.hi)(rng) - a.zps[0] + 0.3) * a.scales[0];
        char attrs[128];
        std::snprintf(attrs, sizeof attrs, "{max = %.17g : f64, min = %.17g : f64}", lo + a.scales[0] * 900.0, lo);
        text += "  %y = \"qrt.clamp\"(%x) " + std::string(attrs) + " : (" + at + ") -> " + ot + "\n";
      } else {
        text += "  %y = \"" + name + "\"(%x) : (" + at + ") -> " + ot + "\n";
      }
      text += "  return %y : " + ot + "\n}\n";
      CAPTURE(text);
      auto t = qrt::parse_type(at);
      REQUIRE(t.is_ok());
      qrt::Tensor x = qrt::Tensor::zeros(*t);
      const auto xv = qrt_test::random_values(rng, size_t(rows * cols), a.lo, a.hi);
      for (size_t i = 0; i < xv.size(); ++i) x.set_int(i, xv[i]);
      const std::string how = qrt_test::check_last_op(text, x);
      // 8-bit in and out keep the integer kernels; the rest is a program ("..._ewN(...)").
      const bool all_8bit = a.bits == 8 && out.bits == 8 && (!binary || b.bits == 8);
      if (!all_8bit) CHECK_MESSAGE(how.find("_ew") != std::string::npos, how);
      ++cases;
    }
  }
  MESSAGE(cases << " wide element-wise cases");
}
