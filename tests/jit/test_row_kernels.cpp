// Tests: the row kernels (softmax over the last or an inner axis, layer norm, dynamic quantization with
// its three results) against the reference, and the LLVM object cache on disk.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "ew_test_util.h"
#include "jit/llvm/llvm_backend.h"
#include "jit/ops/select.h"

using namespace qrt::jit;
using namespace qrt_test;

TEST_CASE("softmax and layer norm kernels are bit-exact with the reference") {
  std::mt19937 rng(13);
  int cases = 0;
  for (const char* dims : {"4x128", "2x3x17", "1x1", "5x1", "3x300"}) {
    const std::string f = std::string("tensor<") + dims + "xf32>";
    for (const char* beta : {"", ", beta = 0.5 : f64"}) {
      const std::string how = check_op(rng, {f}, "\"qrt.softmax\"", f, std::string(" {axis = -1 : i64") + beta + "}");
      CHECK_MESSAGE(how.find("softmax__") != std::string::npos, how);
      ++cases;
    }
    const std::string q = std::string("tensor<") + dims + "x!quant.uniform<u8:f32, 0.00390625:0>>";
    const std::string qi = std::string("tensor<") + dims + "x!quant.uniform<i8:f32, 0.125:-7>>";
    CHECK(check_op(rng, {qi}, "\"qrt.softmax\"", q, " {axis = -1 : i64}").find("softmax__") != std::string::npos);
  }
  // Inner axes (ONNX's Softmax over the channels of NCHW): each outer block transposed into rows.
  for (const auto& [dims, axis] : std::vector<std::pair<std::string, int>>{{"2x5x3x7", 1}, {"4x9x2", 0}, {"3x6x11", 1},
                                                                           {"2x1x5", 1}, {"3x4x5x6", 2}}) {
    const std::string f = "tensor<" + dims + "xf32>";
    const std::string attrs = " {axis = " + std::to_string(axis) + " : i64}";
    std::string how = check_op(rng, {f}, "\"qrt.softmax\"", f, attrs);
    CHECK_MESSAGE(how.find("an inner axis transposed into rows") != std::string::npos, how);
    const std::string qi = "tensor<" + dims + "x!quant.uniform<i8:f32, 0.125:-7>>";
    const std::string q = "tensor<" + dims + "x!quant.uniform<u8:f32, 0.00390625:0>>";
    how = check_op(rng, {qi}, "\"qrt.softmax\"", q, attrs);
    CHECK_MESSAGE(how.find("an inner axis transposed into rows") != std::string::npos, how);
    cases += 2;
  }
  // 16-bit quantized values (TFLite 16x8 models' softmax: int16 in, int16 out).
  for (const auto& [dims, axis] : std::vector<std::pair<std::string, int>>{{"4x37", -1}, {"2x6x5", 1}}) {
    const std::string attrs = " {axis = " + std::to_string(axis) + " : i64}";
    const std::string qi = "tensor<" + dims + "x!quant.uniform<i16:f32, 3.0e-04>>";
    const std::string qo = "tensor<" + dims + "x!quant.uniform<i16:f32, 3.0517578125e-05>>";
    const std::string qu = "tensor<" + dims + "x!quant.uniform<u16:f32, 1.0e-03:30000>>";
    CHECK(check_op(rng, {qi}, "\"qrt.softmax\"", qo, attrs).find("i16_i16_softmax__") == 0);
    CHECK(check_op(rng, {qu}, "\"qrt.softmax\"", qo, attrs).find("u16_i16_softmax__") == 0);
    cases += 2;
  }
  for (const auto& [x, w, axis] : std::vector<std::tuple<std::string, std::string, int>>{
           {"3x64", "64", 1}, {"2x5x33", "33", 2}, {"2x5x6", "5x6", 1}, {"7x1", "1", 1}}) {
    const std::string xt = "tensor<" + x + "xf32>", wt = "tensor<" + w + "xf32>";
    const std::string attrs = " {axis = " + std::to_string(axis) + " : i64, epsilon = 1.0e-05 : f64}";
    CHECK(check_op(rng, {xt, wt, wt}, "\"qrt.layer_norm\"", xt, attrs).find("layernorm") != std::string::npos);
    CHECK(check_op(rng, {xt, wt}, "\"qrt.layer_norm\"", xt, attrs).find("layernorm") != std::string::npos);
    cases += 2;
  }
  // bf16 and f16 (loads widened exactly, each result rounded once) over the last and an inner
  // axis (the verifier wants the input's type for the result); layer norm with and without bias.
  for (const char* kind : {"bf16", "f16"}) {
    for (const auto& [dims, axis] : std::vector<std::pair<std::string, int>>{{"3x77", -1}, {"2x9x5", 1}, {"1x1", -1}}) {
      const std::string h = "tensor<" + dims + "x" + kind + ">";
      for (const char* beta : {"", ", beta = 0.75 : f64"}) {
        const std::string attrs = " {axis = " + std::to_string(axis) + " : i64" + beta + "}";
        const std::string how = check_op(rng, {h}, "\"qrt.softmax\"", h, attrs);
        CHECK_MESSAGE(how.find(std::string(kind) + "_" + kind + "_softmax__") == 0, how);
        ++cases;
      }
    }
    for (const auto& [x, w, axis] : std::vector<std::tuple<std::string, std::string, int>>{
             {"3x64", "64", 1}, {"2x5x6", "5x6", 1}, {"41x600", "600", 1}}) {  // the last: several row blocks
      const std::string xt = "tensor<" + x + "x" + kind + ">", wt = "tensor<" + w + "x" + kind + ">";
      const std::string attrs = " {axis = " + std::to_string(axis) + " : i64, epsilon = 1.0e-05 : f64}";
      std::string how = check_op(rng, {xt, wt, wt}, "\"qrt.layer_norm\"", xt, attrs);
      CHECK_MESSAGE(how.find(std::string(kind) + "_layernorm (" + kind + " operands widened") == 0, how);
      how = check_op(rng, {xt, wt}, "\"qrt.layer_norm\"", xt, attrs);
      CHECK_MESSAGE(how.find(std::string(kind) + "_layernorm") == 0, how);
      cases += 2;
    }
  }
  MESSAGE(cases << " softmax and layer norm cases");
}

TEST_CASE("the dynamic quantization kernel computes all three results as the reference does") {
  std::mt19937 rng(17);
  int cases = 0;
  for (int64_t n : {1, 5, 64, 1000, 70000, 200003}) {
    for (int pattern = 0; pattern < 4; ++pattern) {
      const std::string xt = "tensor<" + std::to_string(n) + "xf32>", qt = "tensor<" + std::to_string(n) + "xui8>";
      const std::string text = "func.func @main(%x: " + xt + ") -> " + qt + " {\n  %q, %s, %z = \"qrt.dynamic_quantize\"(%x) : (" +
                               xt + ") -> (" + qt + ", tensor<f32>, tensor<ui8>)\n  return %q : " + qt + "\n}\n";
      auto g = qrt::parse_graph(text);
      REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
      auto choice = select_kernel(*g, g->ops.back(), qrt_test::test_isas());
      REQUIRE(choice.is_ok());
      REQUIRE_MESSAGE(choice->kernel, choice->why_not);
      CHECK(choice->kernel->describe().find("_dynamic_quantize__") != std::string::npos);
      auto x = qrt::parse_type(xt);
      qrt::Tensor in = qrt::Tensor::zeros(*x);
      for (int64_t i = 0; i < n; ++i) {
        // Mixed signs with NaN and infinities; all positive; all zero (scale 0); all negative.
        const float v = pattern == 0 ? special_f32(rng)
                        : pattern == 1 ? std::abs(special_f32(rng)) + 0.001f
                        : pattern == 2 ? 0.0f
                                       : -std::abs(std::uniform_real_distribution<float>(0.01f, 40.0f)(rng));
        in.set_float(size_t(i), double(pattern == 0 && std::isinf(v) ? 3.0f : v));  // infinities make the scale inf
      }
      const qrt::Op& op = g->ops.back();
      auto want = qrt::evaluate_op_results(*g, op, {&in});
      REQUIRE(want.is_ok());
      for (bool threads : {false, true}) {
        std::vector<qrt::Tensor> got;
        std::vector<qrt::Tensor*> ptrs;
        for (int r : op.results) got.push_back(qrt::Tensor::zeros(g->values[size_t(r)].type));
        for (auto& t : got) ptrs.push_back(&t);
        qrt_test::ThreeThreads three;
        REQUIRE(choice->kernel->run_results_into({&in}, ptrs, threads ? static_cast<Parallel&>(three) : serial()).is_ok());
        for (size_t r = 0; r < got.size(); ++r) {
          CHECK_MESSAGE(std::memcmp(got[r].bytes(), (*want)[r].bytes(), got[r].byte_size()) == 0,
                        "result " << r << " differs (n " << n << ", pattern " << pattern << ")");
        }
      }
      ++cases;
    }
  }
  MESSAGE(cases << " dynamic quantization cases");
}

TEST_CASE("the LLVM object cache on disk links what an earlier compilation stored") {
  const auto backends = program_backends();
  if (backends.empty()) return;
  char dir_template[] = "/tmp/qrt-cache-test-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  REQUIRE(setenv("QRT_CACHE_DIR", dir.c_str(), 1) == 0);
  // A program no other test compiles: gelu(x) * c with a constant from the clock.
  EwProgram p;
  p.inputs = {{EwStorage::kF32, false}};
  EwInstr load, gelu, c, mul;
  load.op = EwOp::kLoad;
  gelu.op = EwOp::kGelu;
  c.op = EwOp::kConst;
  c.f = 1.0f + float(std::random_device()() % 100000) * 1e-6f;
  mul.op = EwOp::kMul;
  mul.a = 1;
  mul.b = 2;
  p.code = {load, gelu, c, mul};
  p.result = 3;
  const Backend* b = backends.front();
  std::vector<float> x(100), y1(100), y2(100), y3(100);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) * 0.1f - 5.0f;
  auto run = [&](std::vector<float>& y) {
    auto code = b->compile_program(p);
    REQUIRE_MESSAGE(code.is_ok(), code.status().to_string());
    EwArgs args{};
    args.in[0] = x.data();
    args.out = y.data();
    args.n = int64_t(x.size());
    args.rows = 1;
    reinterpret_cast<EwFn>(const_cast<void*>((*code)->entry()))(&args, &p);
  };
  const LlvmCacheStats before = llvm_cache_stats();
  run(y1);
  const LlvmCacheStats cold = llvm_cache_stats();
  CHECK(cold.compiled == before.compiled + 1);
  run(y2);  // the same program again: linked from the file the first compilation wrote
  const LlvmCacheStats warm = llvm_cache_stats();
  CHECK(warm.loaded == cold.loaded + 1);
  CHECK(warm.compiled == cold.compiled);
  CHECK(std::memcmp(y1.data(), y2.data(), y1.size() * 4) == 0);
  // A damaged file is a miss: compiled again and overwritten.
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ofstream(entry.path(), std::ios::binary | std::ios::trunc) << "not an object";
  }
  run(y3);
  CHECK(llvm_cache_stats().compiled == warm.compiled + 1);
  CHECK(std::memcmp(y1.data(), y3.data(), y1.size() * 4) == 0);
  unsetenv("QRT_CACHE_DIR");
  std::filesystem::remove_all(dir);
}
