// Tests: row fusion (jit/ops/row_fusion.h). Random 1x1 convolution -> depthwise pairs (u8 and
// i8 activations, extreme zero points, per-channel scales, saturating and clamped results,
// strides 1 and 2, 3x3 and 5x5 windows, pads, several images) run fused, with row fusion off
// and on the reference backend through the C API, at every ISA level the host has, on 1 and
// 3 threads: the bytes must agree, and the pairs must fuse wherever the level runs the
// depthwise op on its rows kernels — but not where the 1x1 result has a second reader.
#include <doctest/doctest.h>

#include <qrt.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/host_levels.h"
#include "tests/runtime/runtime_test_util.h"

namespace {

struct PairCase {
  int64_t n = 1, h = 8, w = 8, cin = 8, cm = 16, k = 3, stride = 1;
  int64_t pads[4] = {1, 1, 1, 1};  // top, left, bottom, right
  bool signed_storage = false;     // i8 activations (else u8)
  bool second_reader = false;      // the 1x1 result is also returned
  bool clamp = false;              // the depthwise op clamps its result
};

std::string hex(const std::vector<uint8_t>& bytes) {
  std::string s = "dense<\"0x";
  char buf[3];
  for (uint8_t b : bytes) {
    std::snprintf(buf, sizeof buf, "%02X", b);
    s += buf;
  }
  return s + "\">";
}

std::string dims(std::initializer_list<int64_t> d) {
  std::string s;
  for (int64_t v : d) s += std::to_string(v) + "x";
  return s;
}

std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string scales(const std::vector<double>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + g17(s[i]);
  return out;
}

// An activation type: scale and zero point (in the storage's range).
std::string act(bool is_signed, double scale, int zp) {
  return std::string("!quant.uniform<") + (is_signed ? "i8" : "u8") + ":f32, " + g17(scale) + ":" + std::to_string(zp) + ">";
}

// A constant filter (symmetric i8, per output channel) and its i32 bias, named %f<tag> / %b<tag>.
std::string filter_and_bias(std::mt19937& rng, const std::string& tag, const std::string& fdims, size_t count,
                            int64_t channels, double in_scale, std::vector<double>& wscales) {
  std::vector<uint8_t> f(count), b(size_t(channels) * 4);
  for (uint8_t& v : f) v = uint8_t(int8_t(int(rng() % 255) - 127));
  wscales.resize(size_t(channels));
  std::vector<double> bscales(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    wscales[size_t(c)] = 0.002 + 0.004 * double(rng() % 1000) / 1000.0;
    bscales[size_t(c)] = in_scale * wscales[size_t(c)];
    const int32_t bias = std::uniform_int_distribution<int32_t>(-20000, 20000)(rng);
    std::memcpy(&b[size_t(c) * 4], &bias, 4);
  }
  const std::string ft = "tensor<" + fdims + "!quant.uniform<i8:f32:0, {" + scales(wscales) + "}>>";
  const std::string bt = "tensor<" + std::to_string(channels) + "x!quant.uniform<i32:f32:0, {" + scales(bscales) + "}>>";
  return "  %f" + tag + " = \"qrt.constant\"() {value = " + hex(f) + " : tensor<" + fdims + "i8>} : () -> " + ft + "\n" +
         "  %b" + tag + " = \"qrt.constant\"() {value = " + hex(b) + " : tensor<" + std::to_string(channels) + "xi32>} : () -> " +
         bt + "\n";
}

std::string pair_graph(std::mt19937& rng, const PairCase& pc) {
  const bool s = pc.signed_storage;
  const int lo = s ? -128 : 0, hi = s ? 127 : 255;
  auto zero_point = [&] {  // extreme ones a third of the time
    const int pick = int(rng() % 6);
    return pick == 0 ? lo : pick == 1 ? hi : lo + int(rng() % 256);
  };
  const double sx = 0.05, sm = 0.05 + 0.1 * double(rng() % 100) / 100.0, sy = 0.05 + 0.2 * double(rng() % 100) / 100.0;
  const std::string xt = "tensor<" + dims({pc.n, pc.h, pc.w, pc.cin}) + act(s, sx, zero_point()) + ">";
  const std::string mt = "tensor<" + dims({pc.n, pc.h, pc.w, pc.cm}) + act(s, sm, zero_point()) + ">";
  const int64_t oh = (pc.h + pc.pads[0] + pc.pads[2] - pc.k) / pc.stride + 1;
  const int64_t ow = (pc.w + pc.pads[1] + pc.pads[3] - pc.k) / pc.stride + 1;
  const std::string yt = "tensor<" + dims({pc.n, oh, ow, pc.cm}) + act(s, sy, zero_point()) + ">";
  std::vector<double> w1, w2;
  std::string text = "func.func @main(%x: " + xt + ") -> (" + yt + (pc.second_reader ? ", " + mt : "") + ") {\n";
  text += filter_and_bias(rng, "1", dims({pc.cm, 1, 1, pc.cin}), size_t(pc.cm * pc.cin), pc.cm, sx, w1);
  const std::string ft1 = "tensor<" + dims({pc.cm, 1, 1, pc.cin}) + "!quant.uniform<i8:f32:0, {" + scales(w1) + "}>>";
  std::vector<double> b1(w1.size());
  for (size_t c = 0; c < w1.size(); ++c) b1[c] = sx * w1[c];
  const std::string bt1 = "tensor<" + std::to_string(pc.cm) + "x!quant.uniform<i32:f32:0, {" + scales(b1) + "}>>";
  text += "  %m = \"qrt.conv2d\"(%x, %f1, %b1) {dilations = [1, 1], groups = 1 : i64, layout = \"NHWC\", pads = [0, 0, 0, 0], "
          "strides = [1, 1]} : (" + xt + ", " + ft1 + ", " + bt1 + ") -> " + mt + "\n";
  text += filter_and_bias(rng, "2", dims({pc.cm, pc.k, pc.k, 1}), size_t(pc.cm * pc.k * pc.k), pc.cm, sm, w2);
  const std::string ft2 = "tensor<" + dims({pc.cm, pc.k, pc.k, 1}) + "!quant.uniform<i8:f32:0, {" + scales(w2) + "}>>";
  std::vector<double> b2(w2.size());
  for (size_t c = 0; c < w2.size(); ++c) b2[c] = sm * w2[c];
  const std::string bt2 = "tensor<" + std::to_string(pc.cm) + "x!quant.uniform<i32:f32:0, {" + scales(b2) + "}>>";
  text += "  %y = \"qrt.conv2d\"(%m, %f2, %b2) {" + std::string(pc.clamp ? "clamp_max = 6.0 : f64, clamp_min = 0.0 : f64, " : "") +
          "dilations = [1, 1], groups = " + std::to_string(pc.cm) + " : i64, layout = \"NHWC\", pads = [" +
          std::to_string(pc.pads[0]) + ", " + std::to_string(pc.pads[1]) + ", " + std::to_string(pc.pads[2]) + ", " +
          std::to_string(pc.pads[3]) + "], strides = [" + std::to_string(pc.stride) + ", " + std::to_string(pc.stride) +
          "]} : (" + mt + ", " + ft2 + ", " + bt2 + ") -> " + yt + "\n";
  text += "  return %y" + std::string(pc.second_reader ? ", %m" : "") + " : " + yt + (pc.second_reader ? ", " + mt : "") + "\n}\n";
  return text;
}

struct PairRun {
  std::vector<std::vector<uint8_t>> outputs;
  size_t fused = 0;        // ops whose kernel says "row fusion"
  bool rows_path = false;  // the depthwise op runs on its rows kernels (u8/s8 quads)
};

PairRun run_pair(const std::string& text, const PairCase& pc, qrt_backend backend, const char* isa, unsigned flags,
                 size_t threads, const std::vector<uint8_t>& input) {
  qrt_model_t* model = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_buffer(text.data(), text.size(), "pair.mlir", &model) == QRT_OK, qrt_last_error_message());
  qrt_plan_options opts;
  qrt_plan_options_init(&opts);
  opts.backend = backend;
  opts.isa = isa;
  opts.flags = flags;
  opts.threads = threads;
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(model, &opts, &plan) == QRT_OK, qrt_last_error_message());
  PairRun r;
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  for (size_t o = 0; o < ops; ++o) {
    qrt_op_info info;
    REQUIRE(qrt_plan_op_info(plan, o, &info) == QRT_OK);
    const std::string kernel = info.kernel;
    if (kernel.find("row fusion") != std::string::npos) ++r.fused;
    if (kernel.find("quads: exact") != std::string::npos) r.rows_path = true;
  }
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  const int64_t xd[] = {pc.n, pc.h, pc.w, pc.cin};
  REQUIRE_MESSAGE(qrt_context_set_input(ctx, 0, pc.signed_storage ? QRT_DTYPE_I8 : QRT_DTYPE_U8, 4, xd, input.data(),
                                        input.size()) == QRT_OK,
                  qrt_last_error_message());
  for (int rep = 0; rep < 2; ++rep) {  // a second run reuses the per-thread rows
    REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  }
  size_t outputs = 0;
  qrt_model_num_outputs(model, &outputs);
  r.outputs = qrt_test::output_bytes(ctx, outputs);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(model);
  return r;
}

PairCase random_case(std::mt19937& rng, int round) {
  PairCase pc;
  static const int64_t cins[] = {3, 8, 16, 24, 33};
  static const int64_t cms[] = {16, 24, 40, 96, 100};
  pc.n = 1 + int64_t(rng() % 2);
  pc.h = 5 + int64_t(rng() % 28);
  pc.w = 5 + int64_t(rng() % 28);
  pc.cin = cins[rng() % 5];
  pc.cm = cms[rng() % 5];
  pc.k = rng() % 4 == 0 ? 5 : 3;
  pc.stride = 1 + int64_t(rng() % 2);
  const int64_t half = pc.k / 2;
  switch (rng() % 3) {
    case 0: for (int64_t& p : pc.pads) p = half; break;        // same
    case 1: for (int64_t& p : pc.pads) p = 0; break;           // valid
    default: pc.pads[0] = pc.pads[1] = 0, pc.pads[2] = pc.pads[3] = half; break;  // TF's same at stride 2
  }
  pc.signed_storage = rng() % 2 == 0;
  pc.second_reader = round % 7 == 6;
  pc.clamp = rng() % 3 == 0;
  return pc;
}

}  // namespace

TEST_CASE("row fusion: 1x1 convolution -> depthwise gives the reference's bytes at every level, 1 and 3 threads") {
  std::mt19937 rng(1203);
  size_t fused_graphs = 0, rows_graphs = 0;
  for (int round = 0; round < 28; ++round) {
    PairCase pc = random_case(rng, round);
    // Large enough to split into bands on 3 threads: 3 bands of 40 rows, 2 of 7 wide rows.
    if (round == 0) pc.h = pc.w = 40, pc.cm = 96, pc.n = 1;
    if (round == 1) pc.h = pc.w = 7, pc.cm = 480, pc.n = 1, pc.k = 3, pc.stride = 1;
    // Bands that compute the rows they share (3 of 96 rows, under the 1/20 that computes all first).
    if (round == 2) pc.h = pc.w = 96, pc.cm = 16, pc.cin = 8, pc.n = 1, pc.k = 3;
    const std::string text = pair_graph(rng, pc);
    CAPTURE(text);
    std::vector<uint8_t> input(size_t(pc.n * pc.h * pc.w * pc.cin));
    for (uint8_t& b : input) b = uint8_t(rng());
    const PairRun ref = run_pair(text, pc, QRT_BACKEND_REF, nullptr, 0, 1, input);
    for (const std::string& level : qrt_test::tested_levels()) {
      for (size_t threads : {size_t(1), size_t(3)}) {
        CAPTURE(level);
        CAPTURE(threads);
        const PairRun fused = run_pair(text, pc, QRT_BACKEND_JIT, level.c_str(), QRT_PLAN_ROW_FUSION, threads, input);
        const PairRun apart = run_pair(text, pc, QRT_BACKEND_JIT, level.c_str(), 0, threads, input);
        const PairRun off = run_pair(text, pc, QRT_BACKEND_JIT, level.c_str(), QRT_PLAN_ROW_FUSION | QRT_PLAN_NO_FUSION, threads, input);
        REQUIRE(fused.outputs.size() == ref.outputs.size());
        for (size_t i = 0; i < ref.outputs.size(); ++i) {
          CHECK(fused.outputs[i] == ref.outputs[i]);
          CHECK(apart.outputs[i] == ref.outputs[i]);
        }
        CHECK(apart.fused == 0);  // not by default
        CHECK(off.fused == 0);    // QRT_PLAN_NO_FUSION wins
        // Fused exactly where the level runs the depthwise op on rows and nothing else reads %m.
        CHECK(fused.fused == (apart.rows_path && !pc.second_reader ? 1u : 0u));
        fused_graphs += fused.fused;
        rows_graphs += apart.rows_path ? 1 : 0;
      }
    }
  }
  // The host's levels have rows kernels (x86 AVX2 and up, AArch64 dot product): some pairs fused.
  if (rows_graphs > 0) CHECK(fused_graphs > 0);
  MESSAGE("row fusion: " << fused_graphs << " fused runs of " << rows_graphs << " on the rows path");
}
