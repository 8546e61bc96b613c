// Tests: fused element-wise regions. Random chains of element-wise ops (float math, integer
// arithmetic that wraps, casts, broadcast operands, quantized values entering and leaving,
// values with a second reader or returned as outputs) run fused, unfused and on the reference
// backend through the C API, at every ISA level the host has; the outputs must agree (any NaN
// equals any NaN) and fusion must have formed regions.
#include <doctest/doctest.h>

#include <qrt.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/host_levels.h"

namespace {

const char* const kF = "tensor<4x37xf32>";
const char* const kI = "tensor<4x37xi32>";
const char* const kQ = "tensor<4x37x!quant.uniform<u8:f32, 0.05:128>>";
const char* const kQo = "tensor<4x37x!quant.uniform<i8:f32, 0.02:-5>>";

// A random chain over the arguments %x (f32), %b (a broadcast row), %s (a scalar), %i (i32)
// and %q (u8 quantized); returns the function's text.
std::string random_chain(std::mt19937& rng, size_t length) {
  std::string body;
  std::vector<std::string> floats = {"%x"}, outputs;
  int next = 0;
  auto fresh = [&] { return "%v" + std::to_string(next++); };
  auto emit = [&](const std::string& result, const std::string& op, const std::vector<std::string>& args,
                  const std::vector<std::string>& types, const std::string& rt, const std::string& attrs = "") {
    std::string a, t;
    for (size_t i = 0; i < args.size(); ++i) {
      a += (i ? ", " : "") + args[i];
      t += (i ? ", " : "") + types[i];
    }
    body += "  " + result + " = \"" + op + "\"(" + a + ")" + attrs + " : (" + t + ") -> " + rt + "\n";
  };
  if (rng() % 2) {
    const std::string v = fresh();
    emit(v, "quant.dcast", {"%q"}, {kQ}, kF);
    floats.push_back(v);
  }
  for (size_t step = 0; step < length; ++step) {
    const std::string cur = floats.back();
    // Sometimes an older value: it gets a second reader, which ends a region there.
    const std::string other = rng() % 5 == 0 ? floats[rng() % floats.size()] : "%x";
    const std::string v = fresh();
    switch (rng() % 9) {
      case 0:
      case 1: {
        static const char* ops[] = {"qrt.add", "qrt.sub", "qrt.mul", "qrt.div", "qrt.max", "qrt.min"};
        const int pick = int(rng() % 3);
        const std::string rhs = pick == 0 ? "%b" : pick == 1 ? "%s" : other;
        const std::string rt = pick == 0 ? "tensor<37xf32>" : pick == 1 ? "tensor<f32>" : kF;
        emit(v, ops[rng() % 6], {cur, rhs}, {kF, rt}, kF);
        break;
      }
      case 2:
      case 3: {
        static const char* ops[] = {"qrt.exp", "qrt.tanh", "qrt.erf", "qrt.gelu", "qrt.neg", "qrt.relu", "qrt.logistic"};
        emit(v, ops[rng() % 7], {cur}, {kF}, kF);
        break;
      }
      case 4: emit(v, "qrt.clamp", {cur}, {kF}, kF, " {max = 0.75 : f64, min = -0.5 : f64}"); break;
      case 5: {  // into integers and back: multiply, wrap at 32 bits, cast back
        const std::string i1 = v, i2 = fresh(), i3 = fresh(), back = fresh();
        const std::string scaled = fresh();
        emit(scaled, "qrt.mul", {cur, "%s"}, {kF, "tensor<f32>"}, kF);
        emit(i1, "qrt.cast", {scaled}, {kF}, kI);
        emit(i2, "qrt.mul", {i1, "%i"}, {kI, kI}, kI);
        emit(i3, "qrt.sub", {i2, "%i"}, {kI, kI}, kI);
        emit(back, "qrt.cast", {i3}, {kI}, kF);
        floats.push_back(back);
        continue;
      }
      case 6: {  // a comparison selecting between two values
        const std::string c = v, w = fresh();
        emit(c, "qrt.less", {cur, "%b"}, {kF, "tensor<37xf32>"}, "tensor<4x37xi1>");
        emit(w, "qrt.where", {c, cur, other}, {"tensor<4x37xi1>", kF, kF}, kF);
        floats.push_back(w);
        continue;
      }
      case 7: {  // through a quantized value and back
        const std::string q = v, d = fresh();
        emit(q, "quant.qcast", {cur}, {kF}, kQo);
        emit(d, "quant.dcast", {q}, {kQo}, kF);
        floats.push_back(d);
        continue;
      }
      default:
        if (rng() % 3 == 0) outputs.push_back(cur);  // an intermediate also returned
        emit(v, "qrt.add", {cur, "%x"}, {kF, kF}, kF);
        break;
    }
    floats.push_back(v);
  }
  std::string result = floats.back(), rtype = kF;
  if (rng() % 2) {
    result = fresh();
    emit(result, "quant.qcast", {floats.back()}, {kF}, kQo);
    rtype = kQo;
  }
  std::string rets = result, rtypes = rtype;
  for (const std::string& o : outputs) rets += ", " + o, rtypes += ", " + std::string(kF);
  return std::string("func.func @main(%x: ") + kF + ", %b: tensor<37xf32>, %s: tensor<f32>, %i: " + kI + ", %q: " + kQ +
         ") -> (" + rtypes + ") {\n" + body + "  return " + rets + " : " + rtypes + "\n}\n";
}

struct Run {
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<qrt_dtype> dtypes;
  size_t fused_roots = 0;
};

qrt_plan_t* make_plan(const qrt_model_t* model, qrt_backend backend, unsigned flags, const char* isa) {
  qrt_plan_options opts;
  qrt_plan_options_init(&opts);
  opts.backend = backend;
  opts.flags = flags;
  opts.isa = isa;
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(model, &opts, &plan) == QRT_OK, qrt_last_error_message());
  return plan;
}

Run run(const std::string& text, qrt_backend backend, unsigned flags, const char* isa,
        const std::vector<std::vector<uint8_t>>& inputs) {
  qrt_model_t* model = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_buffer(text.data(), text.size(), "chain.mlir", &model) == QRT_OK,
                  qrt_last_error_message() << "\n" << text);
  qrt_plan_t* plan = make_plan(model, backend, flags, isa);
  Run r;
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  for (size_t o = 0; o < ops; ++o) {
    qrt_op_info info;
    REQUIRE(qrt_plan_op_info(plan, o, &info) == QRT_OK);
    if (std::string(info.kernel).find("(fuses ops") != std::string::npos) ++r.fused_roots;
  }
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  const std::vector<std::vector<int64_t>> dims = {{4, 37}, {37}, {}, {4, 37}, {4, 37}};
  const qrt_dtype dtypes[] = {QRT_DTYPE_F32, QRT_DTYPE_F32, QRT_DTYPE_F32, QRT_DTYPE_I32, QRT_DTYPE_U8};
  for (size_t i = 0; i < inputs.size(); ++i) {
    REQUIRE_MESSAGE(qrt_context_set_input(ctx, i, dtypes[i], dims[i].size(), dims[i].data(), inputs[i].data(),
                                          inputs[i].size()) == QRT_OK,
                    qrt_last_error_message());
  }
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  size_t outputs = 0;
  qrt_model_num_outputs(model, &outputs);
  for (size_t i = 0; i < outputs; ++i) {
    qrt_tensor_view view;
    REQUIRE(qrt_context_output(ctx, i, &view) == QRT_OK);
    const auto* p = static_cast<const uint8_t*>(view.data);
    r.outputs.emplace_back(p, p + view.bytes);
    r.dtypes.push_back(view.dtype);
  }
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(model);
  return r;
}

// Byte equality where any two f32 NaNs are equal.
bool same(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, qrt_dtype dtype) {
  if (a.size() != b.size()) return false;
  if (dtype != QRT_DTYPE_F32) return a == b;
  for (size_t i = 0; i < a.size(); i += 4) {
    float x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    if (std::memcmp(&x, &y, 4) != 0 && !(std::isnan(x) && std::isnan(y))) return false;
  }
  return true;
}

std::vector<std::string> levels() { return qrt_test::tested_levels(); }

}  // namespace

TEST_CASE("fused element-wise regions give the reference's bytes at every level") {
  std::mt19937 rng(2027);
  size_t regions = 0, graphs = 0;
  for (int round = 0; round < 40; ++round) {
    const std::string text = random_chain(rng, 2 + rng() % 10);
    CAPTURE(text);
    std::vector<std::vector<uint8_t>> inputs(5);
    auto floats = [&](size_t n, float scale) {
      std::vector<uint8_t> b(n * 4);
      for (size_t k = 0; k < n; ++k) {
        const float v = std::uniform_real_distribution<float>(-scale, scale)(rng);
        std::memcpy(&b[k * 4], &v, 4);
      }
      return b;
    };
    inputs[0] = floats(4 * 37, 3.0f);
    inputs[1] = floats(37, 2.0f);
    inputs[2] = floats(1, 1000.0f);
    inputs[3].resize(4 * 37 * 4);
    for (size_t k = 0; k < 4 * 37; ++k) {
      const int32_t v = int32_t(rng());  // products of these wrap at 32 bits
      std::memcpy(&inputs[3][k * 4], &v, 4);
    }
    inputs[4].resize(4 * 37);
    for (uint8_t& v : inputs[4]) v = uint8_t(rng());
    const Run want = run(text, QRT_BACKEND_REF, 0, nullptr, inputs);
    for (const std::string& level : levels()) {
      CAPTURE(level);
      const Run fused = run(text, QRT_BACKEND_JIT, 0, level.c_str(), inputs);
      const Run unfused = run(text, QRT_BACKEND_JIT, QRT_PLAN_NO_FUSION, level.c_str(), inputs);
      CHECK(unfused.fused_roots == 0);
      regions += fused.fused_roots;
      for (size_t i = 0; i < want.outputs.size(); ++i) {
        CHECK_MESSAGE(same(fused.outputs[i], want.outputs[i], want.dtypes[i]), "output " << i << " fused differs");
        CHECK_MESSAGE(same(unfused.outputs[i], want.outputs[i], want.dtypes[i]), "output " << i << " unfused differs");
      }
    }
    ++graphs;
  }
  MESSAGE(graphs << " random chains, " << regions << " fused regions over all levels");
  CHECK(regions >= graphs);  // most chains fuse somewhere
}

TEST_CASE("bf16 and f16 regions fuse, each op's result rounded to the type as the reference stores it") {
  std::mt19937 rng(2028);
  for (const std::string h : {"bf16", "f16"}) {
    CAPTURE(h);
    const std::string H = "tensor<4x37x" + h + ">", B = "tensor<37x" + h + ">";
    // The product and sum round to the type before gelu reads them; a second reader of %a
    // (the output) keeps it stored too.
    const std::string text =
        "func.func @main(%x: tensor<4x37xf32>, %b: tensor<37xf32>) -> (tensor<4x37xf32>, " + H + ") {\n"
        "  %xh = \"qrt.cast\"(%x) : (tensor<4x37xf32>) -> " + H + "\n"
        "  %bh = \"qrt.cast\"(%b) : (tensor<37xf32>) -> " + B + "\n"
        "  %m = \"qrt.mul\"(%xh, %bh) : (" + H + ", " + B + ") -> " + H + "\n"
        "  %a = \"qrt.add\"(%m, %xh) : (" + H + ", " + H + ") -> " + H + "\n"
        "  %g = \"qrt.gelu\"(%a) : (" + H + ") -> " + H + "\n"
        "  %e = \"qrt.exp\"(%g) : (" + H + ") -> " + H + "\n"
        "  %y = \"qrt.cast\"(%e) : (" + H + ") -> tensor<4x37xf32>\n"
        "  return %y, %a : tensor<4x37xf32>, " + H + "\n}\n";
    CAPTURE(text);
    std::vector<std::vector<uint8_t>> inputs(2);
    for (size_t k = 0; k < 2; ++k) {
      const size_t n = k == 0 ? 4 * 37 : 37;
      inputs[k].resize(n * 4);
      for (size_t i = 0; i < n; ++i) {
        const float v = std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng);
        std::memcpy(&inputs[k][i * 4], &v, 4);
      }
    }
    const Run want = run(text, QRT_BACKEND_REF, 0, nullptr, inputs);
    size_t regions = 0;
    for (const std::string& level : levels()) {
      CAPTURE(level);
      const Run fused = run(text, QRT_BACKEND_JIT, 0, level.c_str(), inputs);
      regions += fused.fused_roots;
      REQUIRE(fused.outputs.size() == want.outputs.size());
      for (size_t i = 0; i < want.outputs.size(); ++i) {
        CHECK_MESSAGE(same(fused.outputs[i], want.outputs[i], want.dtypes[i]), "output " << i << " differs");
      }
    }
    CHECK(regions >= 1);
  }
}

namespace {

// A chain from a u8 or i8 tensor through float ops (and quantized round trips) to an 8-bit
// result: a function of one byte, which the plan runs as a 256-entry table.
std::string random_byte_chain(std::mt19937& rng, const std::string& in_type, const std::string& out_type) {
  const std::string f = "tensor<2x128xf32>";
  std::string body = "  %v0 = \"quant.dcast\"(%q) : (" + in_type + ") -> " + f + "\n";
  int next = 1;
  const size_t length = 1 + rng() % 6;
  for (size_t step = 0; step < length; ++step) {
    const std::string cur = "%v" + std::to_string(next - 1), v = "%v" + std::to_string(next++);
    static const char* ops[] = {"qrt.exp", "qrt.tanh", "qrt.erf", "qrt.gelu", "qrt.neg", "qrt.relu", "qrt.logistic"};
    switch (rng() % 4) {
      case 0: body += "  " + v + " = \"qrt.clamp\"(" + cur + ") {max = 6.0 : f64, min = 0.0 : f64} : (" + f + ") -> " + f + "\n"; break;
      case 1: {  // a quantized round trip inside the region
        const std::string q = "tensor<2x128x!quant.uniform<i8:f32, 0.03:7>>", d = "%v" + std::to_string(next++);
        body += "  " + v + " = \"quant.qcast\"(" + cur + ") : (" + f + ") -> " + q + "\n";
        body += "  " + d + " = \"quant.dcast\"(" + v + ") : (" + q + ") -> " + f + "\n";
        break;
      }
      default: body += "  " + v + " = \"" + ops[rng() % 7] + "\"(" + cur + ") : (" + f + ") -> " + f + "\n"; break;
    }
  }
  body += "  %r = \"quant.qcast\"(%v" + std::to_string(next - 1) + ") : (" + f + ") -> " + out_type + "\n";
  return "func.func @main(%q: " + in_type + ") -> " + out_type + " {\n" + body + "  return %r : " + out_type + "\n}\n";
}

// Runs `model` (one [2, 128] byte input) on `bytes` and returns its output's bytes;
// `*kernels` gets the plan's kernel descriptions, one per line.
std::vector<uint8_t> run_bytes(const qrt_model_t* model, qrt_backend backend, unsigned flags, const char* isa,
                               const std::vector<uint8_t>& bytes, std::string* kernels) {
  qrt_plan_t* plan = make_plan(model, backend, flags, isa);
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  kernels->clear();
  for (size_t o = 0; o < ops; ++o) {
    qrt_op_info info;
    REQUIRE(qrt_plan_op_info(plan, o, &info) == QRT_OK);
    *kernels += std::string(info.kernel) + "\n";
  }
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  const int64_t dims[] = {2, 128};
  qrt_tensor_info in_info;
  qrt_model_input_info(model, 0, &in_info);
  REQUIRE(qrt_context_set_input(ctx, 0, in_info.dtype, 2, dims, bytes.data(), bytes.size()) == QRT_OK);
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view view;
  REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
  const auto* p = static_cast<const uint8_t*>(view.data);
  std::vector<uint8_t> out(p, p + view.bytes);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  return out;
}

}  // namespace

TEST_CASE("single-input 8-bit regions run as byte tables with the reference's bytes at every level") {
  std::mt19937 rng(2028);
  const char* const types[] = {"tensor<2x128x!quant.uniform<u8:f32, 0.05:128>>", "tensor<2x128x!quant.uniform<i8:f32, 0.1:-20>>",
                               "tensor<2x128x!quant.uniform<u8<1:250>:f32, 0.002:3>>"};
  size_t tables = 0;
  for (int round = 0; round < 24; ++round) {
    // Inputs take every byte, so only full-range input types; narrow bounds on the result.
    const std::string text = random_byte_chain(rng, types[rng() % 2], types[rng() % 3]);
    CAPTURE(text);
    // Every byte value once: the table is checked entry by entry.
    std::vector<uint8_t> bytes(256);
    for (size_t i = 0; i < 256; ++i) bytes[i] = uint8_t(i * 37 + 11);
    qrt_model_t* model = nullptr;
    REQUIRE(qrt_model_load_buffer(text.data(), text.size(), "bytes.mlir", &model) == QRT_OK);
    // A table, or the byte clamp a table that is a clamp runs as.
    auto run_one = [&](qrt_backend backend, unsigned flags, const char* isa, bool* table) {
      std::string kernels;
      std::vector<uint8_t> out = run_bytes(model, backend, flags, isa, bytes, &kernels);
      *table = kernels.find("256-entry table") != std::string::npos;
      return out;
    };
    bool table = false;
    const std::vector<uint8_t> want = run_one(QRT_BACKEND_REF, 0, nullptr, &table);
    // Chains of clamps and round trips only become integer requantize and clamp kernels
    // (fold-qdq); any float function makes the chain a program, and so a table.
    bool has_function = false;
    for (const char* f : {"exp", "tanh", "erf", "gelu", "neg", "relu", "logistic"}) {
      has_function = has_function || text.find(std::string("\"qrt.") + f + "\"") != std::string::npos;
    }
    for (const std::string& level : levels()) {
      CAPTURE(level);
      const std::vector<uint8_t> fused = run_one(QRT_BACKEND_JIT, 0, level.c_str(), &table);
      if (has_function) CHECK(table);  // one byte's function: a table at every level
      tables += table;
      CHECK(fused == want);
      // Unfused, an op that fold-qdq made one program (dcast -> logistic -> qcast) is a table too.
      const std::vector<uint8_t> unfused = run_one(QRT_BACKEND_JIT, QRT_PLAN_NO_FUSION, level.c_str(), &table);
      CHECK(unfused == want);
      if (std::string(qrt_build_info()).find("llvm (every kernel from LLVM: built") != std::string::npos &&
          level != "avx2-vnni") {
        CHECK(run_one(QRT_BACKEND_LLVM, 0, level.c_str(), &table) == want);
        if (has_function) CHECK(table);
      }
    }
    qrt_model_destroy(model);
  }
  MESSAGE(tables << " table regions over all levels");
  CHECK(tables >= 24);
}

TEST_CASE("a byte region whose table is a clamp of the stored values runs as the byte clamp kernel") {
  // relu(-(-x)) between QDQ pairs of one type (fold-qdq makes a lone relu an integer clamp;
  // the negations keep this one a program): the table is clamp(x, 128, 255) (zero point 128),
  // and a narrower output type adds its bound: clamp(x, 128, 250).
  for (const std::string out : {"tensor<2x128x!quant.uniform<u8:f32, 0.05:128>>", "tensor<2x128x!quant.uniform<u8<0:250>:f32, 0.05:128>>"}) {
    const std::string in = "tensor<2x128x!quant.uniform<u8:f32, 0.05:128>>", f = "tensor<2x128xf32>";
    const std::string text = "func.func @main(%q: " + in + ") -> " + out + " {\n  %d = \"quant.dcast\"(%q) : (" + in + ") -> " +
                             f + "\n  %a = \"qrt.neg\"(%d) : (" + f + ") -> " + f +
                             "\n  %b = \"qrt.neg\"(%a) : (" + f + ") -> " + f + "\n  %r = \"qrt.relu\"(%b) : (" + f + ") -> " + f + "\n  %y = \"quant.qcast\"(%r) : (" + f +
                             ") -> " + out + "\n  return %y : " + out + "\n}\n";
    CAPTURE(text);
    const std::string bounds = out.find("<0:250>") != std::string::npos ? "clamp(x, 128, 250)" : "clamp(x, 128, 255)";
    qrt_model_t* model = nullptr;
    REQUIRE(qrt_model_load_buffer(text.data(), text.size(), "relu.mlir", &model) == QRT_OK);
    std::vector<uint8_t> bytes(256);
    for (size_t i = 0; i < 256; ++i) bytes[i] = uint8_t(i * 37 + 11);
    std::string kernels;
    const std::vector<uint8_t> want = run_bytes(model, QRT_BACKEND_REF, 0, nullptr, bytes, &kernels);
    for (const std::string& level : levels()) {
      CAPTURE(level);
      CHECK(run_bytes(model, QRT_BACKEND_JIT, 0, level.c_str(), bytes, &kernels) == want);
      // The scalar level's clamp is its twin; every level names the clamp it found.
      CHECK_MESSAGE(kernels.find("qu8_clamp__") != std::string::npos, kernels);
      CHECK_MESSAGE(kernels.find("its 256-entry table is " + bounds) != std::string::npos, kernels);
    }
    qrt_model_destroy(model);
  }
}

TEST_CASE("byte regions that read a value twice and take constants (LeakyRelu, HardSwish) run as tables") {
  // relu(x) + 0.1 · min(x, 0) and x · clamp(x · (1/6) + 0.5, 0, 1) between QDQ pairs, as the
  // ONNX importer writes them: x is read twice inside the region and the constants become
  // immediates, so the region is a function of one byte. A third form also returns x's
  // dequantized value: read outside the region, x stays a stored value and the rest a program.
  const std::string in = "tensor<2x128x!quant.uniform<i8:f32, 0.05:-3>>", out = "tensor<2x128x!quant.uniform<u8:f32, 0.03:100>>";
  const std::string f = "tensor<2x128xf32>";
  const std::string head = "  %d = \"quant.dcast\"(%q) : (" + in + ") -> " + f + "\n";
  const std::string leaky =
      "  %p = \"qrt.relu\"(%d) : (" + f + ") -> " + f + "\n  %n = \"qrt.clamp\"(%d) {max = 0.0 : f32, min = 0xFF800000 : f32} : (" + f +
      ") -> " + f + "\n  %k = \"qrt.constant\"() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>\n  %m = \"qrt.mul\"(%n, %k) : (" +
      f + ", tensor<f32>) -> " + f + "\n  %s = \"qrt.add\"(%p, %m) : (" + f + ", " + f + ") -> " + f + "\n";
  const std::string swish =
      "  %a = \"qrt.constant\"() {value = dense<0.166666672> : tensor<f32>} : () -> tensor<f32>\n  %b = \"qrt.constant\"() {value = "
      "dense<0.5> : tensor<f32>} : () -> tensor<f32>\n  %t = \"qrt.mul\"(%d, %a) : (" + f + ", tensor<f32>) -> " + f +
      "\n  %u = \"qrt.add\"(%t, %b) : (" + f + ", tensor<f32>) -> " + f + "\n  %c = \"qrt.clamp\"(%u) {max = 1.0 : f32, min = 0.0 : f32} : (" +
      f + ") -> " + f + "\n  %s = \"qrt.mul\"(%d, %c) : (" + f + ", " + f + ") -> " + f + "\n";
  const std::string tail = "  %y = \"quant.qcast\"(%s) : (" + f + ") -> " + out + "\n";
  struct Form {
    std::string text;
    bool table;
  };
  const Form forms[] = {
      {"func.func @main(%q: " + in + ") -> " + out + " {\n" + head + leaky + tail + "  return %y : " + out + "\n}\n", true},
      {"func.func @main(%q: " + in + ") -> " + out + " {\n" + head + swish + tail + "  return %y : " + out + "\n}\n", true},
      {"func.func @main(%q: " + in + ") -> (" + out + ", " + f + ") {\n" + head + leaky + tail + "  return %y, %d : " + out + ", " + f +
           "\n}\n",
       false}};
  std::vector<uint8_t> bytes(256);
  for (size_t i = 0; i < 256; ++i) bytes[i] = uint8_t(i * 37 + 11);
  for (const Form& form : forms) {
    CAPTURE(form.text);
    qrt_model_t* model = nullptr;
    REQUIRE_MESSAGE(qrt_model_load_buffer(form.text.data(), form.text.size(), "act.mlir", &model) == QRT_OK, qrt_last_error_message());
    std::string kernels;
    const std::vector<uint8_t> want = run_bytes(model, QRT_BACKEND_REF, 0, nullptr, bytes, &kernels);
    for (const std::string& level : levels()) {
      CAPTURE(level);
      CHECK(run_bytes(model, QRT_BACKEND_JIT, 0, level.c_str(), bytes, &kernels) == want);
      CHECK_MESSAGE((kernels.find("256-entry table") != std::string::npos) == form.table, kernels);
    }
    qrt_model_destroy(model);
  }
}
