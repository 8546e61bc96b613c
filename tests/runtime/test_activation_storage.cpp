// Tests: plans re-store internal 8-bit activations in the storage the best level's GEMM tiles
// read in place (passes/activation_storage.h, jit::activations_read_unsigned): u8 on the x86
// levels below avx512-amx, on neon, neon-i8mm and scalar; i8 on neon-dot. Through the C API
// an int8 and a uint8 network's convolutions then write and read that storage (the kernel
// names say so), graph inputs and outputs keep their types, and every level gives the
// reference backend's bytes.
#include <doctest/doctest.h>

#include <qrt.h>

#include <random>
#include <string>
#include <vector>

#include "tests/host_levels.h"

namespace {

/// The storage the network's activations are written in: "i8" or "u8".
struct Storage {
  std::string name;
  int zero_shift;  ///< added to the i8 network's zero points (0 or 128)
  qrt_dtype dtype;
};
const Storage kInt8Network{"i8", 0, QRT_DTYPE_I8}, kUint8Network{"u8", 128, QRT_DTYPE_U8};

std::string q(const Storage& st, const std::string& dims, double scale, int zero_point) {
  return "tensor<" + dims + "x!quant.uniform<" + st.name + ":f32, " + std::to_string(scale) + ":" +
         std::to_string(zero_point + st.zero_shift) + ">>";
}

// An int8 block as TFLite writes it (or its uint8 twin, every zero point + 128): a padded 3x3
// convolution, a depthwise one, a 1x1 projection, a residual add with the input (which keeps
// its storage: the add mixes them), a max pool and a final 1x1 convolution returned.
std::string network(std::mt19937& rng, const Storage& st) {
  auto dense = [&](size_t n) {
    static const char* hex = "0123456789ABCDEF";
    std::string s = "dense<\"0x";
    for (size_t i = 0; i < n; ++i) {
      const unsigned b = unsigned(rng() % 255 + 1);  // symmetric int8 weights: never -128
      s += hex[b >> 4];
      s += hex[b & 15];
    }
    return s + "\">";
  };
  auto scales = [](int n, double base) {
    std::string s = "{";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(base * (1 + i % 3));
    return s + "}";
  };
  const std::string x = q(st, "1x10x10x8", 0.02, -14), a = q(st, "1x10x10x32", 0.05, -128),
                    d = q(st, "1x10x10x32", 0.04, -128);
  const std::string p = q(st, "1x10x10x8", 0.03, 5), s = q(st, "1x10x10x8", 0.035, -2), m = q(st, "1x5x5x8", 0.035, -2);
  const std::string y = q(st, "1x5x5x16", 0.1, 3);
  const std::string f1 = "tensor<32x3x3x8x!quant.uniform<i8:f32:0, " + scales(32, 0.004) + ">>";
  const std::string f2 = "tensor<32x3x3x1x!quant.uniform<i8:f32:0, " + scales(32, 0.01) + ">>";
  const std::string f3 = "tensor<8x1x1x32x!quant.uniform<i8:f32:0, " + scales(8, 0.003) + ">>";
  const std::string f4 = "tensor<16x1x1x8x!quant.uniform<i8:f32:0, " + scales(16, 0.006) + ">>";
  std::string t = "func.func @main(%x: " + x + ") -> " + y + " {\n";
  t += "  %f1 = \"qrt.constant\"() {value = " + dense(32 * 9 * 8) + " : tensor<32x3x3x8xi8>} : () -> " + f1 + "\n";
  t += "  %f2 = \"qrt.constant\"() {value = " + dense(32 * 9) + " : tensor<32x3x3x1xi8>} : () -> " + f2 + "\n";
  t += "  %f3 = \"qrt.constant\"() {value = " + dense(8 * 32) + " : tensor<8x1x1x32xi8>} : () -> " + f3 + "\n";
  t += "  %f4 = \"qrt.constant\"() {value = " + dense(16 * 8) + " : tensor<16x1x1x8xi8>} : () -> " + f4 + "\n";
  t += "  %a = \"qrt.conv2d\"(%x, %f1) {clamp_max = 6.0 : f32, clamp_min = 0.0 : f32, pads = [1, 1, 1, 1]} : (" + x +
       ", " + f1 + ") -> " + a + "\n";
  t += "  %d = \"qrt.conv2d\"(%a, %f2) {clamp_max = 6.0 : f32, clamp_min = 0.0 : f32, groups = 32 : i64, pads = [1, 1, 1, 1]} : (" +
       a + ", " + f2 + ") -> " + d + "\n";
  t += "  %p = \"qrt.conv2d\"(%d, %f3) : (" + d + ", " + f3 + ") -> " + p + "\n";
  t += "  %s = \"qrt.add\"(%p, %x) : (" + p + ", " + x + ") -> " + s + "\n";
  t += "  %m = \"qrt.max_pool2d\"(%s) {kernel = [2, 2], strides = [2, 2]} : (" + s + ") -> " + m + "\n";
  t += "  %y = \"qrt.conv2d\"(%m, %f4) : (" + m + ", " + f4 + ") -> " + y + "\n";
  t += "  return %y : " + y + "\n}\n";
  return t;
}

struct Outcome {
  std::vector<uint8_t> output;
  std::vector<std::string> conv_kernels;
};

Outcome run(const std::string& text, const Storage& st, qrt_backend backend, const char* isa,
            const std::vector<uint8_t>& input) {
  qrt_model_t* model = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_buffer(text.data(), text.size(), "block.mlir", &model) == QRT_OK, qrt_last_error_message());
  qrt_plan_options opts;
  qrt_plan_options_init(&opts);
  opts.backend = backend;
  opts.isa = isa;
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(model, &opts, &plan) == QRT_OK, qrt_last_error_message());
  Outcome r;
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  for (size_t o = 0; o < ops; ++o) {
    qrt_op_info info;
    REQUIRE(qrt_plan_op_info(plan, o, &info) == QRT_OK);
    if (std::string(info.op) == "qrt.conv2d") r.conv_kernels.push_back(info.kernel);
  }
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  const int64_t dims[] = {1, 10, 10, 8};
  REQUIRE_MESSAGE(qrt_context_set_input(ctx, 0, st.dtype, 4, dims, input.data(), input.size()) == QRT_OK,
                  qrt_last_error_message());
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view view;
  REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
  CHECK(view.dtype == st.dtype);  // the output keeps its type
  const auto* bytes = static_cast<const uint8_t*>(view.data);
  r.output.assign(bytes, bytes + view.bytes);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(model);
  return r;
}

// The storage a level's plans keep internal activations in: its preference, else the model's.
std::string internal_storage(const std::string& level, const Storage& st) {
  if (level == "avx2" || level == "avx2-vnni" || level == "avx512-vnni" || level == "neon" || level == "neon-i8mm" ||
      level == "scalar") {
    return "u8";
  }
  return level == "neon-dot" ? "i8" : st.name;
}

// The storage of a kernel name's results: "qu8_qs8_qs8_gemm..." -> "s8".
std::string result_storage(const std::string& kernel) {
  const size_t first = kernel.find('_'), second = kernel.find('_', first + 1), third = kernel.find('_', second + 1);
  if (third == std::string::npos || kernel[second + 1] != 'q') return "?";
  return kernel.substr(second + 2, third - second - 2);
}

}  // namespace

TEST_CASE("plans store a network's internal 8-bit activations as the best level reads them, with the reference's bytes") {
  std::mt19937 rng(5);
  size_t restored_levels = 0;
  for (const Storage* net : {&kInt8Network, &kUint8Network}) {
    const Storage& st = *net;
    for (int round = 0; round < 3; ++round) {
      const std::string text = network(rng, st);
      CAPTURE(text);
      std::vector<uint8_t> input(10 * 10 * 8);
      for (uint8_t& b : input) b = uint8_t(rng());
      const Outcome want = run(text, st, QRT_BACKEND_REF, nullptr, input);
      // Every level, under qemu too (not tested_levels()): the network is small, and the
      // smaller AArch64 CPUs of CI do not run this suite, so `max` covers neon-dot's i8 here.
      for (const std::string& level : qrt_test::host_levels()) {
        CAPTURE(level);
        const Outcome got = run(text, st, QRT_BACKEND_JIT, level.c_str(), input);
        CHECK(got.output == want.output);
        REQUIRE(got.conv_kernels.size() == 4);
        // Kernel names spell u8 "u8" and i8 "s8" (e.g. "qu8_qs8_qs8_gemm..."), their results'
        // storage third (their first is the storage the tiles read, after any flipping copy).
        // The first convolution writes the internal %a, and so on; the last writes the output,
        // which keeps the network's storage.
        const std::string outer = st.name == "u8" ? "u8" : "s8", inner = internal_storage(level, st) == "u8" ? "u8" : "s8";
        const std::string want_results[4] = {inner, inner, inner, outer};
        for (size_t c = 0; c < 4; ++c) {
          CAPTURE(got.conv_kernels[c]);
          CHECK(result_storage(got.conv_kernels[c]) == want_results[c]);
        }
        if (inner != outer) ++restored_levels;
      }
    }
  }
  if (restored_levels == 0) MESSAGE("no level here prefers an activation storage: only unchanged plans were compared");
}
