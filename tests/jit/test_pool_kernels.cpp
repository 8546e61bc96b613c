// Tests: quantized max and average pooling (NHWC) on the generated kernel are bit-exact with
// the reference: channel tails, strides, padding on every side (with and without
// count_include_pad), global pooling, u8 and s8, and rescaling averages that saturate; 16-bit
// pools and means over any axes in portable C++.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "op_kernel_check.h"

namespace {

struct PoolCase {
  int64_t n = 1, h = 7, w = 9, c = 5, kh = 3, kw = 3, sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool include_pad = false;
};

// Pooling case `variant` (0..5) over `c` channels: 3x3 unpadded, 3x3 pad 1 (without and with
// count_include_pad), 2x2 stride 2 with end padding, a global 7x9 window, a one-sided pad.
PoolCase pool_variant(int variant, int64_t c) {
  PoolCase pc;
  pc.c = c;
  switch (variant) {
    case 0: break;
    case 1: pc.pt = pc.pl = pc.pb = pc.pr = 1; break;
    case 2: pc.pt = pc.pl = pc.pb = pc.pr = 1, pc.include_pad = true; break;
    case 3: pc.kh = pc.kw = 2, pc.sh = pc.sw = 2, pc.pb = pc.pr = 1; break;
    case 4: pc.kh = 7, pc.kw = 9, pc.n = 2; break;
    default: pc.kh = 1, pc.kw = 3, pc.sw = 2, pc.pl = 2; break;
  }
  return pc;
}

// `bits`: the storage of the input (and of the result, or 8 for an average in one case of two).
std::string check_pool(const PoolCase& pc, bool is_max, std::mt19937& rng, int bits = 8) {
  using qrt_test::shape;
  qrt_test::QuantSpec x, out;
  std::uniform_int_distribution<int> coin(0, 1);
  auto full_range = [](qrt_test::QuantSpec& q, int b) {
    q.bits = b;
    q.lo = q.is_signed ? -(1 << (b - 1)) : 0;
    q.hi = q.is_signed ? (1 << (b - 1)) - 1 : (1 << b) - 1;
  };
  x.is_signed = coin(rng);
  full_range(x, bits);
  x.scales = {0.05};
  x.zps = {qrt_test::random_values(rng, 1, x.lo, x.hi)[0]};
  out = x;
  if (!is_max) {
    out.is_signed = coin(rng);
    full_range(out, bits == 16 && coin(rng) ? 16 : 8);
    if (out.bits == 8 && bits == 16) x.scales = {0.05 / 256};
    out.scales = {0.05 * std::pow(10.0, std::uniform_real_distribution<double>(-1.0, 0.5)(rng))};
    out.zps = {qrt_test::random_values(rng, 1, out.lo, out.hi)[0]};
  }
  const int64_t oh = (pc.h + pc.pt + pc.pb - pc.kh) / pc.sh + 1, ow = (pc.w + pc.pl + pc.pr - pc.kw) / pc.sw + 1;
  const std::string xt = "tensor<" + shape({pc.n, pc.h, pc.w, pc.c}) + x.type() + ">";
  const std::string ot = "tensor<" + shape({pc.n, oh, ow, pc.c}) + out.type() + ">";
  auto list = [](std::vector<int64_t> v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  const std::string text = "func.func @main(%x: " + xt + ") -> " + ot + " {\n  %y = \"qrt." +
                           (is_max ? "max" : "avg") + "_pool2d\"(%x) {" +
                           (is_max ? "" : "count_include_pad = " + std::to_string(pc.include_pad ? 1 : 0) + " : i64, ") +
                           "kernel = " + list({pc.kh, pc.kw}) +
                           ", pads = " + list({pc.pt, pc.pl, pc.pb, pc.pr}) + ", strides = " + list({pc.sh, pc.sw}) +
                           "} : (" + xt + ") -> " + ot + "\n  return %y : " + ot + "\n}\n";
  CAPTURE(text);
  qrt::Tensor input = qrt_test::random_stored_tensor(rng, xt, x.lo, x.hi);
  return qrt_test::check_last_op(text, input);
}

// A float pooling op over `kind` ("f32", "f64", "bf16", "f16") values in either layout; returns the
// kernel's description.
std::string check_float_pool(const PoolCase& pc, bool is_max, const std::string& kind, bool nchw, std::mt19937& rng) {
  using qrt_test::shape;
  const int64_t oh = (pc.h + pc.pt + pc.pb - pc.kh) / pc.sh + 1, ow = (pc.w + pc.pl + pc.pr - pc.kw) / pc.sw + 1;
  const std::string xt = "tensor<" + (nchw ? shape({pc.n, pc.c, pc.h, pc.w}) : shape({pc.n, pc.h, pc.w, pc.c})) + kind + ">";
  const std::string ot = "tensor<" + (nchw ? shape({pc.n, pc.c, oh, ow}) : shape({pc.n, oh, ow, pc.c})) + kind + ">";
  auto list = [](std::vector<int64_t> v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  const std::string text = "func.func @main(%x: " + xt + ") -> " + ot + " {\n  %y = \"qrt." + (is_max ? "max" : "avg") +
                           "_pool2d\"(%x) {" +
                           (is_max ? "" : "count_include_pad = " + std::to_string(pc.include_pad ? 1 : 0) + " : i64, ") +
                           "kernel = " + list({pc.kh, pc.kw}) + (nchw ? ", layout = \"NCHW\"" : "") +
                           ", pads = " + list({pc.pt, pc.pl, pc.pb, pc.pr}) + ", strides = " + list({pc.sh, pc.sw}) +
                           "} : (" + xt + ") -> " + ot + "\n  return %y : " + ot + "\n}\n";
  CAPTURE(text);
  auto t = qrt::parse_type(xt);
  REQUIRE(t.is_ok());
  qrt::Tensor input = qrt::Tensor::zeros(*t);
  std::uniform_real_distribution<float> any(-3.0f, 3.0f);
  // Magnitudes over decades (f16 overflows past 65504 and keeps subnormals), some specials.
  for (size_t i = 0; i < size_t(input.num_elements()); ++i) {
    double v = double(any(rng) * std::pow(10.0f, float(int(rng() % 11) - 6)));
    if (kind == "f64") v *= 1.0 + double(rng() % 1000003) * 1e-13;  // all 53 bits, so double sums round
    input.set_float(i, v);
  }
  const double specials[] = {NAN, -NAN, INFINITY, -INFINITY, -0.0, 65504.0, 70000.0, 1e-7};
  for (int k = 0; k < 4; ++k) input.set_float(size_t(rng() % uint64_t(input.num_elements())), specials[rng() % 8]);
  return qrt_test::check_last_op(text, input);
}

}  // namespace

TEST_CASE("quantized max and average pooling kernels are bit-exact with the reference") {
  std::mt19937 rng(23);
  int cases = 0;
  for (int64_t c : {1, 5, 16, 17, 40}) {
    for (int variant = 0; variant < 6; ++variant) {
      const PoolCase pc = pool_variant(variant, c);
      for (bool is_max : {true, false}) {
        const std::string how = check_pool(pc, is_max, rng);
        CHECK(how.find(is_max ? "_maxpool_" : "_avgpool_") != std::string::npos);
        ++cases;
      }
    }
  }
  MESSAGE(cases << " pooling cases");
}

TEST_CASE("a quantized mean over H and W runs as a global average pool, bit-exact") {
  std::mt19937 rng(29);
  for (bool keepdims : {false, true}) {
    for (int64_t c : {3, 16, 35}) {
      const std::string x = "tensor<2x5x7x" + std::to_string(c) + "x!quant.uniform<i8:f32, 0.1:-3>>";
      const std::string y = "tensor<2x" + std::string(keepdims ? "1x1x" : "") + std::to_string(c) +
                            "x!quant.uniform<u8:f32, 0.02:100>>";
      const std::string text = "func.func @main(%x: " + x + ") -> " + y + " {\n  %y = \"qrt.mean\"(%x) {axes = [2, 1]" +
                               (keepdims ? ", keepdims = 1 : i64" : "") + "} : (" + x + ") -> " + y +
                               "\n  return %y : " + y + "\n}\n";
      CAPTURE(text);
      qrt::Tensor input = qrt_test::random_stored_tensor(rng, x, -128, 127);
      CHECK(qrt_test::check_last_op(text, input).find("_avgpool_35p") != std::string::npos);
    }
  }
}

TEST_CASE("f32, f64, bf16 and f16 max and average pooling in both layouts are bit-exact with the reference") {
  std::mt19937 rng(31);
  int cases = 0;
  for (const char* kind : {"f32", "bf16", "f16", "f64"}) {
    for (int variant = 0; variant < 6; ++variant) {
      const PoolCase pc = pool_variant(variant, 1 + variant * 3);  // 1 to 16 channels: vector tails in NHWC
      for (bool nchw : {false, true}) {
        for (bool is_max : {true, false}) {
          const std::string how = check_float_pool(pc, is_max, kind, nchw, rng);
          CHECK_MESSAGE(how.find(std::string(kind) + (is_max ? "_maxpool_" : "_avgpool_")) == 0, how);
          const bool half = std::string(kind) == "bf16" || std::string(kind) == "f16";
          CHECK_MESSAGE((how.find("widened to f32") != std::string::npos) == half, how);
          ++cases;
        }
      }
    }
  }
  MESSAGE(cases << " float pooling cases");
}

TEST_CASE("f32, f64, bf16 and f16 mean and reduce_{sum,max,min,prod} over any axes are bit-exact with the reference, NaN and infinities included") {
  std::mt19937 rng(30);
  std::uniform_real_distribution<float> any(-3.0f, 3.0f);
  // (dims, axes): global pools of NHWC and NCHW, the last axis alone, every axis, the first.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{2, 5, 7, 35}, {1, 2}}, {{2, 35, 5, 7}, {2, 3}}, {{3, 4, 9}, {2}}, {{3, 4, 9}, {0, 1, 2}}, {{6, 17}, {0}},
      {{1, 7, 7, 1280}, {1, 2}}, {{2, 3001}, {1}}};  // the last: bf16/f16 widened in blocks of 4096 rows and a tail
  int count = 0;
  for (const std::string kind : {"f32", "bf16", "f16", "f64"}) {
    for (const char* op : {"mean", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod"}) {
      for (const auto& [dims, axes] : cases) {
        for (bool keepdims : {false, true}) {
          std::string x = "tensor<", y = "tensor<", list;
          for (size_t d = 0; d < dims.size(); ++d) {
            x += std::to_string(dims[d]) + "x";
            const bool reduced = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
            if (!reduced) y += std::to_string(dims[d]) + "x";
            else if (keepdims) y += "1x";
          }
          for (size_t a = 0; a < axes.size(); ++a) list += (a ? ", " : "") + std::to_string(axes[a]);
          x += kind + ">";
          y += kind + ">";
          const std::string text = "func.func @main(%x: " + x + ") -> " + y + " {\n  %y = \"qrt." + op + "\"(%x) {axes = [" + list + "]" +
                                   (keepdims ? ", keepdims = 1 : i64" : "") + "} : (" + x + ") -> " + y +
                                   "\n  return %y : " + y + "\n}\n";
          CAPTURE(text);
          auto t = qrt::parse_type(x);
          REQUIRE(t.is_ok());
          qrt::Tensor input = qrt::Tensor::zeros(*t);
          // Magnitudes over decades (the order of the f32 sums shows; f16 sums and products
          // overflow, and reduce_sum's double rounds to bf16/f16 directly), and a few specials.
          for (size_t i = 0; i < size_t(input.num_elements()); ++i) {
            double v = double(any(rng) * std::pow(10.0f, float(int(rng() % 7) - 3)));
            if (kind == "f64") v *= 1.0 + double(rng() % 1000003) * 1e-13;  // all 53 bits, so double sums round
            input.set_float(i, v);
          }
          // Specials in some rounds only: a NaN makes a whole reduce_max / reduce_min output NaN.
          if (rng() % 2) {
            const double specials[] = {NAN, INFINITY, -INFINITY, -0.0};
            for (double s : specials) input.set_float(size_t(rng() % uint64_t(input.num_elements())), s);
          }
          const std::string how = qrt_test::check_last_op(text, input);
          CHECK_MESSAGE(how.find(kind + "_" + op) == 0, how);
          ++count;
        }
      }
    }
  }
  MESSAGE(count << " float reduction cases");
}

TEST_CASE("16-bit pooling and means over other axes run in portable C++, bit-exact") {
  std::mt19937 rng(1619);
  int cases = 0;
  for (int variant = 0; variant < 6; ++variant) {
    const PoolCase pc = pool_variant(variant, 3 + variant * 5);
    for (bool is_max : {true, false}) {
      const std::string how = check_pool(pc, is_max, rng, 16);
      CHECK_MESSAGE(how.find("(portable C++") != std::string::npos, how);
      ++cases;
    }
  }
  // Means over the last axis, and over two middle ones, of 8- and 16-bit values.
  for (const char* x : {"tensor<3x5x7x!quant.uniform<i8:f32, 0.1:-3>>", "tensor<3x5x7x!quant.uniform<u16:f32, 0.001:40000>>",
                        "tensor<3x5x7x!quant.uniform<i16:f32, 0.002:-32768>>"}) {
    for (const char* axes : {"[2]", "[1, 2]", "[0, 1]"}) {
      const std::string a = axes;
      const std::string kept = a == "[2]" ? "3x5x" : a == "[1, 2]" ? "3x" : "7x";
      const std::string y = "tensor<" + kept + "!quant.uniform<i16:f32, 0.0005:17>>";
      const std::string text = "func.func @main(%x: " + std::string(x) + ") -> " + y + " {\n  %y = \"qrt.mean\"(%x) {axes = " +
                               a + "} : (" + x + ") -> " + y + "\n  return %y : " + y + "\n}\n";
      CAPTURE(text);
      auto t = qrt::parse_type(x);
      REQUIRE(t.is_ok());
      qrt::Tensor input = qrt::Tensor::zeros(*t);
      const qrt::ElementType& e = t->element;
      const auto v = qrt_test::random_values(rng, size_t(input.num_elements()), int(e.storage.min), int(e.storage.max));
      for (size_t i = 0; i < v.size(); ++i) input.set_int(i, v[i]);
      const std::string how = qrt_test::check_last_op(text, input);
      CHECK_MESSAGE(how.find("mean with the default formula") != std::string::npos, how);
      ++cases;
    }
  }
  MESSAGE(cases << " portable pooling cases");
}
