// Tests: what a plan keeps resident for its weights (qrt_plan_weight_memory, qrun --profile's
// memory line). A weight-only model keeps its weights as stored — 4-bit values two per byte —
// and its kernels add only f32 scales and i16 zero points; the f32 path it replaces held a
// dequantized f32 copy, 8x the packed 4-bit size. Kernels that prepare their own copy of a
// constant (packed panels, dynamic-i8 records) let the plan drop the constant's bytes, so the
// weights are held once.
#include <doctest/doctest.h>

#include <qrt.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

namespace {

// x[1, K] · W[K, N] with W a random f32 constant, as MLIR text.
std::string float_matmul(int64_t k, int64_t n) {
  std::mt19937 rng(11);
  std::normal_distribution<float> d(0.0f, 0.05f);
  static const char* digits = "0123456789ABCDEF";
  std::string hex;
  hex.reserve(size_t(k * n) * 8);
  for (int64_t i = 0; i < k * n; ++i) {
    const float v = d(rng);
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    for (uint8_t x : b) {
      hex += digits[x >> 4];
      hex += digits[x & 15];
    }
  }
  const std::string ks = std::to_string(k), ns = std::to_string(n);
  const std::string wt = "tensor<" + ks + "x" + ns + "xf32>";
  return "func.func @main(%x: tensor<1x" + ks + "xf32>) -> tensor<1x" + ns + "xf32> {\n  %w = \"qrt.constant\"() {value = dense<\"0x" +
         hex + "\"> : " + wt + "} : () -> " + wt + "\n  %y = \"qrt.matmul\"(%x, %w) : (tensor<1x" + ks + "xf32>, " + wt +
         ") -> tensor<1x" + ns + "xf32>\n  return %y : tensor<1x" + ns + "xf32>\n}\n";
}

struct Measured {
  qrt_weight_memory memory{};
  std::string kernel;
};

Measured measure(const std::string& text, const char* passes) {
  qrt_model_t* m = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_buffer(text.data(), text.size(), "weights", &m) == QRT_OK, qrt_last_error_message());
  if (passes) {
    REQUIRE_MESSAGE(qrt_model_apply_passes(m, passes, nullptr) == QRT_OK, qrt_last_error_message());
  }
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(m, nullptr, &plan) == QRT_OK, qrt_last_error_message());
  Measured r;
  r.memory.struct_size = sizeof r.memory;
  REQUIRE_MESSAGE(qrt_plan_weight_memory(plan, &r.memory) == QRT_OK, qrt_last_error_message());
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  for (size_t i = 0; i < ops; ++i) {
    qrt_op_info info;
    qrt_plan_op_info(plan, i, &info);
    if (std::strcmp(info.op, "qrt.matmul") == 0) r.kernel = info.kernel;
  }
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
  return r;
}

}  // namespace

TEST_CASE("weight-only plans keep the weights packed: resident bytes = stored bytes + scales") {
  const int64_t k = 512, n = 384;
  const std::string text = float_matmul(k, n);
  const size_t weights = size_t(k * n);

  // The float model: the f32 GEMM's padded panel copy; the plan drops the constant it came from.
  const Measured f = measure(text, nullptr);
  CHECK(f.memory.constant_bytes == 0);
  CHECK(f.memory.parameter_bytes == 0);
  CHECK(f.memory.kernel_bytes >= weights * 4);
  CHECK(f.memory.kernel_bytes < weights * 4 + 64 * size_t(k) * 4);  // + at most a panel of padding

  // 4-bit, blocks of 32 along K: two weights per byte, a (scale, zero point) per block and
  // column in the type (f64 + i64) and in the kernel (f32 + i16). No dequantized copy.
  const Measured b32 = measure(text, "quantize-weights{bits=i4 block=32}");
  CAPTURE(b32.kernel);
  CHECK(b32.kernel.find("f32_qs4w_zp_f32_wogemm_") == 0);
  const size_t params = size_t(k / 32 * n);
  CHECK(b32.memory.constant_bytes == weights / 2);
  CHECK(b32.memory.parameter_bytes == params * 16);
  CHECK(b32.memory.kernel_bytes == params * (4 + 2));
  MESSAGE("i4 block 32: " << b32.memory.constant_bytes << " B stored, " << b32.memory.parameter_bytes << " B parameters, "
                          << b32.memory.kernel_bytes << " B in kernels; f32: " << f.memory.constant_bytes << " + "
                          << f.memory.kernel_bytes);

  // Per column: resident = the packed size plus the type's scales, within 5% (the kernel's
  // f32 scales and i16 zero points are the difference).
  const Measured col = measure(text, "quantize-weights{bits=i4}");
  const size_t stored = col.memory.constant_bytes;
  CHECK(stored == weights / 2);
  CHECK(col.memory.parameter_bytes == size_t(n) * 16);
  CHECK(double(stored + col.memory.parameter_bytes + col.memory.kernel_bytes) <=
        1.05 * double(stored + col.memory.parameter_bytes));

  // 8-bit symmetric per column: no zero points in the kernel.
  const Measured s8 = measure(text, "quantize-weights{bits=i8 symmetric=true}");
  CHECK(s8.kernel.find("f32_qs8w_f32_wogemm_") == 0);
  CHECK(s8.memory.constant_bytes == weights);
  CHECK(s8.memory.kernel_bytes == size_t(n) * 4);

  // Dynamic i8 activations: the kernel's records hold the 4-bit weights as stored plus an f32
  // scale and a zero-point byte per block and column, and the plan keeps nothing else.
  const Measured dyn = measure(text, "quantize-weights{bits=i4 block=32},lower-hybrid{mode=dynamic-i8}");
  CAPTURE(dyn.kernel);
  CHECK(dyn.kernel.find("_zp_f32_dyngemm_") != std::string::npos);
  CHECK(dyn.memory.constant_bytes == 0);
  CHECK(dyn.memory.parameter_bytes == params * 16);  // the value's type keeps its scales
  CHECK(dyn.memory.kernel_bytes == weights / 2 + params * (4 + 1));
  MESSAGE("i4 block 32, dynamic i8: " << dyn.memory.kernel_bytes << " B in kernels, no constant bytes");
  // llama.cpp's Q4_0 form (symmetric, f16 scales): an f16 scale per block and column, no zero
  // points: 4.5 bits per weight.
  const Measured q40 = measure(text, "quantize-weights{bits=i4 block=32 symmetric=true scales=f16},lower-hybrid{mode=dynamic-i8}");
  CAPTURE(q40.kernel);
  CHECK(q40.kernel.find("f32_qs4w_h_f32_dyngemm_") == 0);
  CHECK(q40.memory.kernel_bytes == weights / 2 + params * 2);
  CHECK(double(q40.memory.kernel_bytes) * 8 / double(weights) == 4.5);
  // u4 symmetric: one zero point (8) for the whole weight, as ONNX's MatMulNBits defaults it: no
  // zero-point bytes either.
  const Measured u4 = measure(text, "quantize-weights{bits=u4 block=32 symmetric=true scales=f16},lower-hybrid{mode=dynamic-i8}");
  CAPTURE(u4.kernel);
  CHECK(u4.kernel.find("f32_qu4w_h_f32_dyngemm_") == 0);
  CHECK(u4.memory.kernel_bytes == weights / 2 + params * 2);
  // Per column, 8-bit: resident = the packed size plus the type's scales, within 5%.
  const Measured dyn8 = measure(text, "quantize-weights{bits=i8},lower-hybrid{mode=dynamic-i8}");
  CHECK(dyn8.kernel.find("_dyngemm_") != std::string::npos);
  CHECK(dyn8.memory.constant_bytes == 0);
  CHECK(dyn8.memory.parameter_bytes == size_t(n) * 16);
  CHECK(double(dyn8.memory.kernel_bytes + dyn8.memory.parameter_bytes) <= 1.05 * double(weights + size_t(n) * 16));

  // A struct_size the library does not know is refused by name.
  qrt_model_t* m = nullptr;
  REQUIRE(qrt_model_load_buffer(text.data(), text.size(), "weights", &m) == QRT_OK);
  qrt_plan_t* plan = nullptr;
  REQUIRE(qrt_plan_create(m, nullptr, &plan) == QRT_OK);
  qrt_weight_memory bad{};
  bad.struct_size = 3;
  CHECK(qrt_plan_weight_memory(plan, &bad) == QRT_INVALID_ARGUMENT);
  CHECK(std::string(qrt_last_error_message()).find("struct_size 3") != std::string::npos);
  CHECK(qrt_plan_weight_memory(plan, nullptr) == QRT_INVALID_ARGUMENT);
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
}
