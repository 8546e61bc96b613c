// Tests: StableHLO's quantized ops on kernels (jit/ops/stablehlo_kernels.cpp) — conversions
// (byte tables, portable C++), and dequantize → float kernel → quantize for the other ops —
// bit-exact with the reference under the stablehlo profile at the level under test: f32, f16
// and bf16 expressed types, 8-, 16- and 32-bit storage, per-axis operands and results, ties,
// NaN and infinities, fused clamps. (Contractions: test_gemm_kernels.cpp, test_conv_kernels.cpp,
// test_conv_transpose.cpp; random graphs: qrt-fuzz-diff --numerics stablehlo.)
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/jit/ew_test_util.h"
#include "tests/jit/op_kernel_check.h"

namespace {

constexpr const char* kWrapper = "stablehlo dequantize-op-quantize: ";

// A random `!quant.uniform` of `bits` storage expressed in `expressed`, per tensor or (axis >= 0)
// per axis over `channels`: zero points at a bound or anywhere, scales over four decades.
struct QType {
  std::string text;
  int64_t lo = 0, hi = 0;
  double scale = 1.0;  // the first channel's
};
QType random_qtype(std::mt19937& rng, unsigned bits, bool is_signed, const std::string& expressed, int axis = -1,
                   int64_t channels = 1) {
  QType q;
  q.lo = is_signed ? -(int64_t(1) << (bits - 1)) : 0;
  q.hi = is_signed ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
  // 32-bit zero points stay small: f16's and bf16's zero point must be exact in them.
  const int64_t span = bits == 32 ? 1000 : q.hi - q.lo;
  auto zp = [&] {
    const uint32_t p = rng() % 4;
    if (bits < 32 && p == 0) return q.lo;
    if (bits < 32 && p == 1) return q.hi;
    return (bits == 32 ? -500 : q.lo) + int64_t(rng() % uint64_t(span + 1));
  };
  bool first = true;
  auto param = [&] {
    char buf[64];
    const double scale = std::pow(10.0, std::uniform_real_distribution<double>(-3.0, 1.0)(rng));
    std::snprintf(buf, sizeof buf, "%.9g:%lld", scale, static_cast<long long>(zp()));
    if (first) q.scale = std::strtod(buf, nullptr);
    first = false;
    return std::string(buf);
  };
  q.text = "!quant.uniform<" + std::string(is_signed ? "i" : "u") + std::to_string(bits) + ":" + expressed;
  if (axis < 0) {
    q.text += ", " + param() + ">";
  } else {
    q.text += ":" + std::to_string(axis) + ", {";
    for (int64_t c = 0; c < channels; ++c) q.text += (c ? ", " : "") + param();
    q.text += "}>";
  }
  return q;
}

// A tensor of `type` text: stored values anywhere in [lo, hi], a bound one time in eight; or,
// for float types, values on and between the steps of `step` (ties included), beyond any
// storage, and NaN and infinities.
qrt::Tensor random_input(std::mt19937& rng, const std::string& type, int64_t lo, int64_t hi, double step) {
  auto t = qrt::parse_type(type);
  REQUIRE_MESSAGE(t.is_ok(), type);
  qrt::Tensor x = qrt::Tensor::zeros(*t);
  for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
    if (!x.type.element.is_float()) {
      const uint32_t p = rng() % 16;
      x.set_int(i, p == 0 ? lo : p == 1 ? hi : lo + int64_t(rng() % uint64_t(hi - lo + 1)));
      continue;
    }
    const uint32_t p = rng() % 8;
    const double steps = double(int64_t(rng() % 600) - 300);
    double v = p == 0 ? double(qrt_test::special_f32(rng)) : p < 4 ? (steps + 0.5) * step : (steps + std::uniform_real_distribution<double>(-1, 1)(rng)) * step;
    x.set_float(i, v);
  }
  return x;
}

// One op `op` (with `attrs`, e.g. " {axis = 1 : i64}") of arguments `args` to `result`, checked
// under the stablehlo profile; returns the kernel's description.
std::string check(const std::vector<std::string>& args, const std::vector<qrt::Tensor>& inputs, const std::string& op,
                  const std::string& attrs, const std::string& result, bool expect_kernel = true) {
  std::string sig, operands, types;
  for (size_t i = 0; i < args.size(); ++i) {
    sig += (i ? ", " : "") + std::string("%a") + std::to_string(i) + ": " + args[i];
    operands += (i ? ", %a" : "%a") + std::to_string(i);
    types += (i ? ", " : "") + args[i];
  }
  const std::string text = "func.func @main(" + sig + ") -> " + result + " {\n  %y = \"" + op + "\"(" + operands + ")" +
                           attrs + " : (" + types + ") -> " + result + "\n  return %y : " + result + "\n}\n";
  CAPTURE(text);
  return qrt_test::check_last_op(qrt_test::with_profile(text, "stablehlo"), inputs, expect_kernel);
}

}  // namespace

TEST_CASE("stablehlo quantize, dequantize and requantize on kernels are bit-exact with the reference") {
  std::mt19937 rng(71);
  int tables = 0, wrapped = 0;
  const char* kinds[] = {"f32", "f16", "bf16"};
  for (int rep = 0; rep < 90; ++rep) {
    const std::string expressed = kinds[rep % 3];
    const int what = (rep / 3) % 3;  // 0: qcast, 1: dcast, 2: requantize
    const unsigned bits = rep % 7 == 3 ? 16 : rep % 11 == 5 && what == 0 ? 32 : 8;
    const bool is_signed = bits == 32 || rng() % 2;
    const bool axis = rep % 5 == 4;
    const int64_t c = 1 + int64_t(rng() % 5);
    const std::string dims = "2x" + std::to_string(1 + rng() % 37) + "x" + std::to_string(c) + "x";
    const QType q = random_qtype(rng, bits, is_signed, expressed, axis ? 2 : -1, c);
    const std::string qt = "tensor<" + dims + q.text + ">", ft = "tensor<" + dims + expressed + ">";
    CAPTURE(qt);
    std::string how;
    if (what == 0) {
      // Values on and between the result's steps: x / s lands on ties, where a reciprocal
      // multiply or another rounding would differ.
      how = check({ft}, {random_input(rng, ft, 0, 0, q.scale)}, "quant.qcast", "", qt);
    } else if (what == 1) {
      how = check({qt}, {random_input(rng, qt, q.lo, q.hi, 0)}, "quant.dcast", "", ft);
      if (expressed == "f32") continue;  // f32's dequantize is the default formula: the default kernels
    } else {
      const unsigned out_bits = rep % 4 == 1 ? 16 : 8;
      const QType o = random_qtype(rng, out_bits, rng() % 2, expressed, axis && rng() % 2 ? 2 : -1, c);
      how = check({qt}, {random_input(rng, qt, q.lo, q.hi, 0)}, "qrt.requantize", "", "tensor<" + dims + o.text + ">");
      if (bits == 8 && out_bits == 8 && !axis && o.text.find(":2,") == std::string::npos) {
        // 256 possible results: the formula in a byte table.
        CHECK_MESSAGE((how.find("_lut8_") != std::string::npos || how.find("_clamp_") != std::string::npos), how);
        ++tables;
        continue;
      }
    }
    CHECK_MESSAGE(how.find(kWrapper) == 0, how);
    wrapped += how.find(kWrapper) == 0;
  }
  MESSAGE(tables << " byte-table requantizations, " << wrapped << " portable conversions");
  CHECK(tables >= 5);
  CHECK(wrapped >= 50);
}

TEST_CASE("stablehlo add, mul, pools, mean, softmax, logistic and concat run dequantize, the float kernel, quantize") {
  std::mt19937 rng(73);
  int f32_kernels = 0, f32_cases = 0, narrow_kernels = 0, narrow_cases = 0;
  const char* kinds[] = {"f32", "f32", "f16", "bf16"};
  for (int rep = 0; rep < 96; ++rep) {
    const std::string e = kinds[rep % 4];
    const int op = (rep / 4) % 8;
    const int64_t n = 1 + int64_t(rng() % 2), h = 2 + int64_t(rng() % 6), w = 2 + int64_t(rng() % 6),
                  c = 1 + int64_t(rng() % 19);
    const std::string dims = std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c) + "x";
    auto qtype = [&](int axis = -1) {
      const unsigned bits = rng() % 6 == 0 ? 16 : 8;
      return random_qtype(rng, bits, bits == 16 || rng() % 2, e, axis, c);
    };
    // Per-channel results where the op allows them (element-wise ops).
    const QType a = qtype(), b = qtype(), out = qtype((op <= 1 || op == 7) && rng() % 3 == 0 ? 3 : -1);
    const std::string at = "tensor<" + dims + a.text + ">";
    std::vector<qrt::Tensor> in{random_input(rng, at, a.lo, a.hi, 0)};
    std::vector<std::string> args{at};
    std::string name, attrs, yt = "tensor<" + dims + out.text + ">";
    // A fused clamp on the binary ops now and then: bounds in real units around zero.
    const std::string clamp = rng() % 3 == 0 ? " {clamp_max = 0.75 : f64, clamp_min = -0.5 : f64}" : "";
    switch (op) {
      case 0:
      case 1: {
        name = op == 0 ? "qrt.add" : "qrt.mul";
        // numpy broadcasting: a per-channel row, or a full tensor.
        const std::string bt = rng() % 2 ? "tensor<" + std::to_string(c) + "x" + b.text + ">" : "tensor<" + dims + b.text + ">";
        args.push_back(bt);
        in.push_back(random_input(rng, bt, b.lo, b.hi, 0));
        attrs = clamp;
        break;
      }
      case 2:
        name = "qrt.avg_pool2d";
        attrs = " {kernel = [2, 2], pads = [0, 1, 1, 0], strides = [1, 1]}";
        yt = "tensor<" + std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c) + "x" +
             out.text + ">";
        break;
      case 3:
        name = "qrt.mean";
        attrs = " {axes = [1, 2], keepdims = 1 : i64}";
        yt = "tensor<" + std::to_string(n) + "x1x1x" + std::to_string(c) + "x" + out.text + ">";
        break;
      case 4:
        name = "qrt.softmax";
        attrs = " {axis = " + std::to_string(rng() % 2 ? 3 : 1) + " : i64}";
        break;
      case 5:
        name = "qrt.logistic";
        break;
      case 6: {
        name = "qrt.concat";
        attrs = " {axis = 3 : i64}";
        const std::string bt = "tensor<" + std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w) + "x3x" + b.text + ">";
        args.push_back(bt);
        in.push_back(random_input(rng, bt, b.lo, b.hi, 0));
        yt = "tensor<" + std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c + 3) +
             "x" + out.text + ">";
        break;
      }
      default:
        name = "qrt.requantize";  // the 16- and per-axis forms (8-bit per tensor is a table)
        break;
    }
    CAPTURE(rep);
    const std::string how = check(args, in, name, attrs, yt, false);
    const bool on_kernel = how.find(kWrapper) == 0 || how.find("_lut8_") != std::string::npos ||
                           how.find("_clamp_") != std::string::npos;
    // Every op has a float kernel to wrap: f32, and f16/bf16 on programs (add, mul, logistic),
    // the row kernels (softmax) and the widening pools and means.
    CHECK_MESSAGE(on_kernel, how);
    if (e == "f32") {
      f32_kernels += on_kernel;
      ++f32_cases;
    } else {
      narrow_kernels += on_kernel;
      ++narrow_cases;
    }
  }
  MESSAGE(f32_kernels << " of " << f32_cases << " f32 cases and " << narrow_kernels << " of " << narrow_cases
                      << " f16/bf16 cases on kernels");
  CHECK(f32_cases >= 40);
  CHECK(narrow_cases >= 40);
}

TEST_CASE("stablehlo average pools and means with f64 expressed types wrap the f64 float kernels") {
  std::mt19937 rng(74);
  for (int rep = 0; rep < 16; ++rep) {
    const int64_t n = 1 + int64_t(rng() % 2), h = 2 + int64_t(rng() % 6), w = 2 + int64_t(rng() % 6), c = 1 + int64_t(rng() % 19);
    const std::string dims = std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c) + "x";
    auto qtype = [&] {
      const unsigned bits = rng() % 4 == 0 ? 16 : 8;
      return random_qtype(rng, bits, bits == 16 || rng() % 2, "f64", -1, c);
    };
    const QType a = qtype(), out = qtype();
    const std::string at = "tensor<" + dims + a.text + ">";
    const bool pool = rep % 2 == 0;
    const std::string name = pool ? "qrt.avg_pool2d" : "qrt.mean";
    const std::string attrs = pool ? " {kernel = [2, 2], pads = [0, 1, 1, 0], strides = [1, 1]}" : " {axes = [1, 2], keepdims = 1 : i64}";
    const std::string yt = pool ? "tensor<" + dims + out.text + ">"
                                : "tensor<" + std::to_string(n) + "x1x1x" + std::to_string(c) + "x" + out.text + ">";
    CAPTURE(rep);
    const std::string how = check({at}, {random_input(rng, at, a.lo, a.hi, 0)}, name, attrs, yt, false);
    CHECK_MESSAGE(how.find(kWrapper) == 0, how);
    CHECK_MESSAGE(how.find(pool ? "f64_avgpool_2x2" : "f64_mean") != std::string::npos, how);
  }
}

TEST_CASE("stablehlo ops the wrapper cannot run say why and stay on the reference") {
  // f8 expressed types: no float kernels compute in them.
  auto g = qrt::parse_graph(qrt_test::with_profile(R"(func.func @main(%x: tensor<4x!quant.uniform<i8:f8E4M3FN, 0.5:1>>) -> tensor<4x!quant.uniform<i8:f8E4M3FN, 0.25:-3>> {
  %y = "qrt.requantize"(%x) : (tensor<4x!quant.uniform<i8:f8E4M3FN, 0.5:1>>) -> tensor<4x!quant.uniform<i8:f8E4M3FN, 0.25:-3>>
  return %y : tensor<4x!quant.uniform<i8:f8E4M3FN, 0.25:-3>>
})", "stablehlo"));
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  auto choice = qrt::jit::select_kernel(*g, g->ops.back(), qrt_test::test_isas());
  REQUIRE(choice.is_ok());
  CHECK(!choice->kernel);
  CHECK_MESSAGE(choice->why_not.find("numerics profile stablehlo") != std::string::npos, choice->why_not);
  CHECK_MESSAGE(choice->why_not.find("f8E4M3FN") != std::string::npos, choice->why_not);
}
