// Tests: the quantize/dequantize kernels of the level under test (QRT_TEST_ISA) are
// bit-exact with the reference numerics for every length (tails), extreme zero points,
// narrow bounds, wide-ranging scales, ties, NaN, infinities and saturation; the code cache
// generates each kernel once; casts between f32, bf16 and f16 give the reference's bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "ir/numerics.h"
#include "ir/text_format.h"
#include "isa_levels.h"
#include "jit/core/code_cache.h"
#include "jit/ops/select.h"
#include "op_kernel_check.h"

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

// The kernel chosen for the graph's op at the test's level; it must exist.
std::unique_ptr<qrt::jit::OpKernel> convert_kernel(const qrt::Graph& g) {
  auto choice = qrt::jit::select_kernel(g, g.ops[0], qrt_test::test_isas());
  REQUIRE_MESSAGE(choice.is_ok(), choice.status().to_string());
  REQUIRE_MESSAGE(choice->kernel != nullptr, choice->why_not);
  return std::move(choice->kernel);
}

// Runs `k` on `in` into a tensor of `type`.
qrt::Tensor run_kernel(const qrt::jit::OpKernel& k, const qrt::Tensor& in, const qrt::Type& type) {
  qrt::Tensor out = qrt::Tensor::zeros(type);
  REQUIRE(k.run_into({&in}, out, qrt::jit::serial()).is_ok());
  return out;
}

}  // namespace

TEST_CASE("quantize kernels are bit-exact with the reference") {
  const char* types[] = {
      "!quant.uniform<i8:f32, 0.0039215689>",          "!quant.uniform<i8:f32, 0.5:-128>",
      "!quant.uniform<i8:f32, 0.5:127>",               "!quant.uniform<u8:f32, 1.0e-08:255>",
      "!quant.uniform<u8:f32, 1000.0:0>",              "!quant.uniform<i8<-127:127>:f32, 0.25:3>",
      "!quant.uniform<u8<10:200>:f32, 3.0:100>",       "!quant.uniform<i8:f32, 1.17549435e-38:-7>",
      // 16-bit storage runs as an element-wise program of the same formula.
      "!quant.uniform<i16:f32, 0.001:-32768>",         "!quant.uniform<u16:f32, 1.0e-05:65535>",
      "!quant.uniform<i16<-32767:32767>:f32, 0.25:3>",
  };
  std::mt19937 rng(42);
  for (const char* type : types) {
    for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 64, 1003}) {
      CAPTURE(type);
      CAPTURE(n);
      const qrt::Graph g = convert_graph(true, type, n);
      const auto k = convert_kernel(g);
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
      const qrt::Tensor y = run_kernel(*k, x, g.values[1].type);
      for (size_t i = 0; i < n; ++i) {
        const int64_t want = qrt::numerics::quantize_f32(float(x.float_at(i)), scale, e.zero_points[0],
                                                         e.storage.min, e.storage.max);
        REQUIRE_MESSAGE(y.int_at(i) == want, "element " << i << " x = " << x.float_at(i));
      }
    }
  }
}

TEST_CASE("dequantize kernels are bit-exact with the reference for every stored value") {
  for (const char* type : {"!quant.uniform<i8:f32, 0.0039215689:-128>", "!quant.uniform<u8:f32, 7.5:255>",
                           "!quant.uniform<i8:f32, 1.0e-30:127>", "!quant.uniform<u8:f32, 0.1>",
                           "!quant.uniform<i16:f32, 3.0e-05:-32768>", "!quant.uniform<u16:f32, 0.5:40000>"}) {
    const qrt::Graph g = convert_graph(false, type, 259);
    const auto k = convert_kernel(g);
    qrt::Tensor q = qrt::Tensor::zeros(g.values[0].type);
    const qrt::ElementType& e = g.values[0].type.element;
    // Every 8-bit value; 16-bit ones 256 apart across the range, both ends included.
    const int64_t step = (e.storage.max - e.storage.min + 1) / 256;
    for (size_t i = 0; i < 259; ++i) q.set_int(i, std::min(e.storage.max, e.storage.min + int64_t(i % 256) * step + int64_t(i / 256) * (step - 1)));
    const qrt::Tensor x = run_kernel(*k, q, g.values[1].type);
    const float scale = qrt::numerics::compute_scale_f32(e.scales[0], e.float_kind);
    for (size_t i = 0; i < 259; ++i) {
      const float want = qrt::numerics::dequantize_f32(q.int_at(i), e.zero_points[0], scale);
      REQUIRE(std::memcmp(x.bytes() + 4 * i, &want, 4) == 0);
    }
  }
}

TEST_CASE("the code cache generates a kernel once, also under concurrent requests") {
  // A scale no other test uses, so that this test's kernel is new to the process.
  const qrt::Graph g = convert_graph(true, "!quant.uniform<i8:f32, 0.12345:-5>", 16);
  const size_t before = qrt::jit::code_cache().generated();
  std::vector<std::thread> threads;
  std::vector<std::string> names(8);
  for (size_t t = 0; t < names.size(); ++t) {
    threads.emplace_back([&, t] {
      auto choice = qrt::jit::select_kernel(g, g.ops[0], qrt_test::test_isas());
      if (choice.is_ok() && choice->kernel) names[t] = choice->kernel->describe();
    });
  }
  for (auto& th : threads) th.join();
  CHECK(qrt::jit::code_cache().generated() == before + 1);
  auto chosen = qrt::jit::select_kernel(g, g.ops[0], qrt_test::test_isas());
  REQUIRE(chosen.is_ok());
  for (const std::string& n : names) CHECK(n == std::string("f32_qs8_quantize__") + qrt::jit::isa_suffix(chosen->isa));
  const qrt::Graph per_axis = convert_graph(true, "!quant.uniform<i8:f32:0, {0.5, 0.25}>", 2);
  // Per-axis types have no vector kernel; the portable per-axis conversion runs them.
  auto choice = qrt::jit::select_kernel(per_axis, per_axis.ops[0], qrt_test::test_isas());
  REQUIRE(choice.is_ok());
  REQUIRE(choice->kernel != nullptr);
  CHECK(choice->kernel->describe().find("per-axis quantize (portable C++") == 0);
  CHECK(choice->chain.find("per-axis types are not supported by this kernel") != std::string::npos);
}

TEST_CASE("casts between f32, bf16 and f16 run in portable C++ with the reference's bytes") {
  // Every direction with a 2-byte side, on values around the types' edges: zeros, subnormals
  // of each type, ties, f16's overflow, infinities and NaN; 40000 elements split across tasks.
  std::mt19937 rng(73);
  const char* kinds[] = {"f32", "bf16", "f16"};
  for (const char* from : kinds) {
    for (const char* to : kinds) {
      if (std::string(from) == to) continue;
      CAPTURE(from);
      CAPTURE(to);
      const std::string xt = std::string("tensor<40000x") + from + ">", yt = std::string("tensor<40000x") + to + ">";
      const std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %y = \"qrt.cast\"(%x) : (" + xt + ") -> " + yt +
                               "\n  return %y : " + yt + "\n}\n";
      auto t = qrt::parse_type(xt);
      REQUIRE(t.is_ok());
      qrt::Tensor x = qrt::Tensor::zeros(*t);
      const float specials[] = {0.0f, -0.0f, 65504.0f, 65520.0f, -65536.0f, 6.0e-8f, 2.9802322e-08f, 1.0e-40f, 1.00048828125f,
                                1.00390625f, INFINITY, -INFINITY, NAN, 3.0e38f};
      for (size_t i = 0; i < 40000; ++i) {
        uint32_t bits = uint32_t(rng());
        if (i % 3) bits = (bits & 0x80000000u) | (0x30000000u + uint32_t(rng() % 0x18000000u));  // 2^-31 .. 2^17
        float v;
        std::memcpy(&v, &bits, 4);
        if (i < std::size(specials)) v = specials[i];
        x.set_float(i, double(v));  // stored rounded to the source type
      }
      const std::string how = qrt_test::check_last_op(text, x);
      CHECK_MESSAGE(how.find(std::string("cast_") + from + "_" + to) == 0, how);
    }
  }
}
