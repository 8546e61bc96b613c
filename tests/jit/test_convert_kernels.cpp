// Tests: the AVX2 quantize/dequantize kernels are bit-exact with the reference numerics for
// every length (tails), extreme zero points, narrow bounds, wide-ranging scales, ties, NaN,
// infinities and saturation; the code cache generates each kernel once. Skipped, never
// faked, on CPUs without AVX2.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "ir/text_format.h"
#include "jit/convert_kernels.h"
#include "jit/host_info.h"
#include "ir/numerics.h"

namespace {

// A one-op graph `qcast` or `dcast` over tensor<Nx...> with the given quant type.
qrt::Graph convert_graph(bool quantize, const std::string& qtype, size_t n) {
  const std::string f = "tensor<" + std::to_string(n) + "xf32>";
  const std::string q = "tensor<" + std::to_string(n) + "x" + qtype + ">";
  const std::string in = quantize ? f : q, out = quantize ? q : f;
  auto g = qrt::parse_graph("func.func @main(%x: " + in + ") -> " + out + " {\n  %y = \"quant." +
                            std::string(quantize ? "qcast" : "dcast") + "\"(%x) : (" + in + ") -> " + out +
                            "\n  return %y : " + out + "\n}\n");
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  return std::move(g).value();
}

}  // namespace

TEST_CASE("AVX2 quantize is bit-exact with the reference") {
  if (!qrt::host_cpu_features().avx2) {
    MESSAGE("no AVX2 on this CPU: skipped");
    return;
  }
  const char* types[] = {
      "!quant.uniform<i8:f32, 0.0039215689>",          "!quant.uniform<i8:f32, 0.5:-128>",
      "!quant.uniform<i8:f32, 0.5:127>",               "!quant.uniform<u8:f32, 1.0e-08:255>",
      "!quant.uniform<u8:f32, 1000.0:0>",              "!quant.uniform<i8<-127:127>:f32, 0.25:3>",
      "!quant.uniform<u8<10:200>:f32, 3.0:100>",       "!quant.uniform<i8:f32, 1.17549435e-38:-7>",
  };
  std::mt19937 rng(42);
  for (const char* type : types) {
    for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 64, 1003}) {
      CAPTURE(type);
      CAPTURE(n);
      const qrt::Graph g = convert_graph(true, type, n);
      REQUIRE(qrt::jit::ConvertKernel::why_not(g, g.ops[0]) == "");
      auto k = qrt::jit::ConvertKernel::create(g, g.ops[0]);
      REQUIRE_MESSAGE(k.is_ok(), k.status().to_string());
      qrt::Tensor x = qrt::Tensor::zeros(g.values[0].type);
      const qrt::ElementType& e = g.values[1].type.element;
      const float scale = qrt::numerics::compute_scale_f32(e.scales[0], e.float_kind);
      const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 3.0e38f, -3.0e38f, 1.0e-45f};
      for (size_t i = 0; i < n; ++i) {
        float v;
        switch (rng() % 4) {
          case 0: v = specials[rng() % 8]; break;
          case 1: v = (float(int(rng() % 600) - 300) + 0.5f) * scale; break;  // ties
          case 2: v = std::uniform_real_distribution<float>(-300, 300)(rng) * scale; break;
          default: v = std::uniform_real_distribution<float>(-1e6f, 1e6f)(rng); break;
        }
        x.set_float(i, v);
      }
      qrt::Tensor y = qrt::Tensor::zeros(g.values[1].type);
      k->run(x, y);
      for (size_t i = 0; i < n; ++i) {
        const int64_t want = qrt::numerics::quantize_f32(float(x.float_at(i)), scale, e.zero_points[0],
                                                         e.storage.min, e.storage.max);
        REQUIRE_MESSAGE(y.int_at(i) == want, "element " << i << " x = " << x.float_at(i));
      }
    }
  }
}

TEST_CASE("AVX2 dequantize is bit-exact with the reference for every stored value") {
  if (!qrt::host_cpu_features().avx2) return;
  for (const char* type : {"!quant.uniform<i8:f32, 0.0039215689:-128>", "!quant.uniform<u8:f32, 7.5:255>",
                           "!quant.uniform<i8:f32, 1.0e-30:127>", "!quant.uniform<u8:f32, 0.1>"}) {
    const qrt::Graph g = convert_graph(false, type, 259);
    auto k = qrt::jit::ConvertKernel::create(g, g.ops[0]);
    REQUIRE(k.is_ok());
    qrt::Tensor q = qrt::Tensor::zeros(g.values[0].type);
    const qrt::ElementType& e = g.values[0].type.element;
    for (size_t i = 0; i < 259; ++i) q.set_int(i, e.storage.min + int64_t(i % 256));
    qrt::Tensor x = qrt::Tensor::zeros(g.values[1].type);
    k->run(q, x);
    const float scale = qrt::numerics::compute_scale_f32(e.scales[0], e.float_kind);
    for (size_t i = 0; i < 259; ++i) {
      const float want = qrt::numerics::dequantize_f32(q.int_at(i), e.zero_points[0], scale);
      REQUIRE(std::memcmp(x.bytes() + 4 * i, &want, 4) == 0);
    }
  }
}

TEST_CASE("the code cache generates a kernel once, also under concurrent requests") {
  if (!qrt::host_cpu_features().avx2) return;
  const qrt::Graph g = convert_graph(true, "!quant.uniform<i8:f32, 0.123:-5>", 16);
  const size_t before = qrt::jit::code_cache().generated();
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (size_t t = 0; t < ok.size(); ++t) {
    threads.emplace_back([&, t] { ok[t] = qrt::jit::ConvertKernel::create(g, g.ops[0]).is_ok(); });
  }
  for (auto& th : threads) th.join();
  CHECK(std::count(ok.begin(), ok.end(), 1) == 8);
  CHECK(qrt::jit::code_cache().generated() == before + 1);
  CHECK(qrt::jit::ConvertKernel::create(g, g.ops[0])->desc().name() == "f32_qs8_quantize__avx2");
  const qrt::Graph per_axis = convert_graph(true, "!quant.uniform<i8:f32:0, {0.5, 0.25}>", 2);
  CHECK(qrt::jit::ConvertKernel::why_not(per_axis, per_axis.ops[0]) ==
        "per-axis types are not supported by this kernel");
}
