// Tests: block-quantized ONNX weights — com.microsoft MatMulNBits (2/4/8 bits, packed or float
// zero points, partial last blocks, bias, g_idx) and DequantizeLinear/QuantizeLinear with
// block_size (opset 21, INT4/UINT4 initializers). Each model runs through the C API on the
// reference, on the JIT at every ISA level this host has and on LLVM where built: the JIT
// gives the reference's bytes through the weight-only kernels, and the reference matches an
// independent float64 evaluation of the ONNX definition. Malformed nodes give clear errors.
#include <doctest/doctest.h>

#include <qrt.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ir/float_format.h"
#include "tests/importers/onnx_builders.h"
#include "tools/npy.h"

namespace {

using namespace onnx_builders;

struct Run {
  std::vector<float> y;
  std::vector<std::string> matmuls;  // the kernel of every qrt.matmul
};

// Runs serialized `bytes` on `backend` capped at `isa` with the one input `x` of shape `dims`
// (f32, or f16 where `half`: x rounded to f16, the f16 output read back as floats); false (and
// no run) where this build cannot make such a plan.
bool run(const std::string& bytes, qrt_backend backend, const char* isa, const std::vector<int64_t>& dims,
         const std::vector<float>& x, Run& r, bool half = false) {
  qrt_model_t* m = nullptr;
  const qrt_status loaded = qrt_model_load_buffer(bytes.data(), bytes.size(), "t.onnx", &m);
  if (loaded != QRT_OK) FAIL_CHECK(std::string(qrt_last_error_message()));
  REQUIRE(loaded == QRT_OK);
  qrt_plan_options o;
  qrt_plan_options_init(&o);
  o.backend = backend;
  o.isa = isa;
  qrt_plan_t* plan = nullptr;
  if (qrt_plan_create(m, &o, &plan) != QRT_OK) {
    qrt_model_destroy(m);
    return false;
  }
  r.matmuls = onnx_builders::matmul_kernels(plan);
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  std::vector<uint16_t> x16;
  for (float v : x) x16.push_back(qrt::f16_bits_from_double(v));
  const qrt_status set = half ? qrt_context_set_input(ctx, 0, QRT_DTYPE_F16, dims.size(), dims.data(), x16.data(), x16.size() * 2)
                              : qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, dims.size(), dims.data(), x.data(), x.size() * 4);
  REQUIRE_MESSAGE(set == QRT_OK, qrt_last_error_message());
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view view;
  REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
  REQUIRE(view.dtype == (half ? QRT_DTYPE_F16 : QRT_DTYPE_F32));
  if (half) {
    r.y.resize(view.bytes / 2);
    for (size_t i = 0; i < r.y.size(); ++i) r.y[i] = qrt::f16_bits_to_float(static_cast<const uint16_t*>(view.data)[i]);
  } else {
    r.y.resize(view.bytes / 4);
    std::memcpy(r.y.data(), view.data, view.bytes);
  }
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
  return true;
}

// Runs the model on every backend and level; checks bytes against the reference, the
// weight-only kernel where `wogemm`, and the reference against `expected` (float64).
void check_everywhere(const std::string& bytes, const std::vector<int64_t>& dims, const std::vector<float>& x,
                      const std::vector<double>& expected, bool wogemm, bool half = false) {
  Run ref;
  REQUIRE_MESSAGE(run(bytes, QRT_BACKEND_REF, nullptr, dims, x, ref, half), qrt_last_error_message());
  REQUIRE(ref.y.size() == expected.size());
  double worst = 0, magnitude = 1e-30;
  for (size_t i = 0; i < expected.size(); ++i) {
    // An f16 result is rounded once: half an f16 ulp of the value (2^-11 relative) on top.
    const double rounding = half ? std::ldexp(std::fabs(expected[i]), -11) : 0.0;
    worst = std::max(worst, std::fabs(double(ref.y[i]) - expected[i]) - rounding);
    magnitude = std::max(magnitude, std::fabs(expected[i]));
  }
  // f32 sums of K products against float64: a few ulps of the largest output.
  CHECK_MESSAGE(worst <= 1e-5 * magnitude, "worst " << worst << " of " << magnitude);
  for (const std::string& level : tested_levels()) {
    CAPTURE(level);
    Run jit;
    REQUIRE_MESSAGE(run(bytes, QRT_BACKEND_JIT, level.c_str(), dims, x, jit, half), qrt_last_error_message());
    CHECK(std::memcmp(jit.y.data(), ref.y.data(), ref.y.size() * 4) == 0);
    REQUIRE(!jit.matmuls.empty());
    for (const std::string& k : jit.matmuls) CHECK_MESSAGE((k.find("_wogemm_") != std::string::npos) == wogemm, k);
  }
  Run llvm;
  if (run(bytes, QRT_BACKEND_LLVM, nullptr, dims, x, llvm, half)) {
    CHECK(std::memcmp(llvm.y.data(), ref.y.data(), ref.y.size() * 4) == 0);
  } else {
    MESSAGE("LLVM backend not in this build: " << qrt_last_error_message());
  }
}

void check_everywhere(const onnx::ModelProto& model, const std::vector<int64_t>& dims, const std::vector<float>& x,
                      const std::vector<double>& expected, bool wogemm, bool half = false) {
  std::string bytes;
  model.SerializeToString(&bytes);
  check_everywhere(bytes, dims, x, expected, wogemm, half);
}

// A MatMulNBits case: A [2, 3, K] times N columns of K codes of `bits` bits.
struct NBits {
  int64_t k = 96, n = 40, bits = 4, block = 32;
  enum class Zp { kNone, kPacked, kFloat } zp = Zp::kPacked;
  bool bias = true;
  bool g_idx = false;
  bool act_order = false;  // g_idx a permutation of the blocks' rows (GPTQ act-order)
  bool half = false;  // f16 A, scales, float zero points, bias and Y
  uint32_t seed = 1;

  int64_t k_blocks() const { return (k + block - 1) / block; }
  int64_t qmax() const { return (int64_t(1) << bits) - 1; }
};

struct NBitsModel {
  onnx::ModelProto model;
  std::vector<int64_t> dims;
  std::vector<float> x;
  std::vector<double> expected;
};

NBitsModel make_nbits(const NBits& c) {
  std::mt19937 rng(c.seed);
  const int64_t kb = c.k_blocks(), blob = c.block * c.bits / 8, per_byte = 8 / c.bits, zp_row = (kb * c.bits + 7) / 8;
  std::vector<uint8_t> b(size_t(c.n * kb * blob), 0), zp_packed(size_t(c.n * zp_row), 0);
  std::vector<float> scales(size_t(c.n * kb)), zp_float(size_t(c.n * kb)), bias(size_t(c.n));
  std::vector<int64_t> codes(size_t(c.n * c.k)), zps(size_t(c.n * kb));
  std::uniform_int_distribution<int64_t> code(0, c.qmax());
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  // The block (group) of each k: k / block_size, or for act-order the same counts over a
  // random permutation of K.
  std::vector<int64_t> group(size_t(c.k));
  std::vector<int64_t> order(size_t(c.k));
  for (int64_t i = 0; i < c.k; ++i) order[size_t(i)] = i;
  if (c.act_order) std::shuffle(order.begin(), order.end(), rng);
  for (int64_t j = 0; j < c.k; ++j) group[size_t(order[size_t(j)])] = j / c.block;
  for (int64_t col = 0; col < c.n; ++col) {
    for (int64_t blk = 0; blk < kb; ++blk) {
      const size_t p = size_t(col * kb + blk);
      scales[p] = std::ldexp(0.5f + 0.5f * std::fabs(unit(rng)), -int(rng() % 8));  // scales across decades
      zps[p] = c.zp == NBits::Zp::kNone ? int64_t(1) << (c.bits - 1) : code(rng);
      zp_float[p] = float(zps[p]);
      zp_packed[size_t(col * zp_row + blk / per_byte)] |= uint8_t(zps[p] << ((blk % per_byte) * c.bits));
      for (int64_t i = 0; i < c.block; ++i) {
        const int64_t kk = blk * c.block + i;
        const int64_t v = code(rng);  // codes past K (a partial last block) are ignored
        if (kk < c.k) codes[size_t(col * c.k + kk)] = v;
        b[size_t(p * blob + i / per_byte)] |= uint8_t(v << ((i % per_byte) * c.bits));
      }
    }
    bias[size_t(col)] = unit(rng);
  }
  NBitsModel r;
  r.dims = {2, 3, c.k};
  r.x.resize(size_t(6 * c.k));
  for (float& v : r.x) v = unit(rng);
  // An f16 model: every float the model holds or takes is an f16 value.
  auto to_half = [&](std::vector<float>& v) {
    if (!c.half) return;
    for (float& f : v) f = qrt::f16_bits_to_float(qrt::f16_bits_from_double(f));
  };
  to_half(r.x);
  to_half(scales);
  to_half(bias);
  const auto float_type = c.half ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::FLOAT;
  auto add_float_values = [&](onnx::GraphProto* graph, const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<float>& v) {
    if (!c.half) return add_floats(graph, name, dims, v);
    std::vector<uint16_t> bits;
    for (float f : v) bits.push_back(qrt::f16_bits_from_double(f));
    add_raw(graph, name, onnx::TensorProto::FLOAT16, dims, bits.data(), bits.size() * 2);
  };
  r.model = empty_model(17);
  auto* ms = r.model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  onnx::GraphProto* g = r.model.mutable_graph();
  g->set_name("nbits");
  add_value(g->mutable_input(), "A", float_type, r.dims);
  add_value(g->mutable_output(), "Y", float_type, {2, 3, c.n});
  add_raw(g, "B", onnx::TensorProto::UINT8, {c.n, kb, blob}, b.data(), b.size());
  add_float_values(g, "scales", {c.n * kb}, scales);
  std::vector<std::string> in = {"A", "B", "scales", "", "", ""};
  if (c.zp == NBits::Zp::kPacked) add_raw(g, "zp", onnx::TensorProto::UINT8, {c.n * zp_row}, zp_packed.data(), zp_packed.size());
  if (c.zp == NBits::Zp::kFloat) add_float_values(g, "zp", {c.n, kb}, zp_float);
  if (c.zp != NBits::Zp::kNone) in[3] = "zp";
  if (c.g_idx) {
    std::vector<int32_t> idx(size_t(c.k));
    for (int64_t i = 0; i < c.k; ++i) idx[size_t(i)] = int32_t(group[size_t(i)]);
    add_raw(g, "g_idx", onnx::TensorProto::INT32, {c.k}, idx.data(), idx.size() * 4);
    in[4] = "g_idx";
  }
  if (c.bias) {
    add_float_values(g, "bias", {c.n}, bias);
    in[5] = "bias";
  }
  while (!in.empty() && in.back().empty()) in.pop_back();
  onnx::NodeProto* node = add_node(g, "MatMulNBits", in, {"Y"});
  node->set_domain("com.microsoft");
  set_int_attr(node, "K", c.k);
  set_int_attr(node, "N", c.n);
  set_int_attr(node, "bits", c.bits);
  set_int_attr(node, "block_size", c.block);
  set_int_attr(node, "accuracy_level", 4);
  // Y = A · dequantize(B)ᵀ + bias, in float64.
  for (int64_t row = 0; row < 6; ++row) {
    for (int64_t col = 0; col < c.n; ++col) {
      double s = c.bias ? bias[size_t(col)] : 0.0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        const size_t p = size_t(col * kb + group[size_t(kk)]);
        s += double(r.x[size_t(row * c.k + kk)]) * double(codes[size_t(col * c.k + kk)] - zps[p]) * double(scales[p]);
      }
      r.expected.push_back(s);
    }
  }
  return r;
}

std::string import_error(const onnx::ModelProto& model) {
  auto g = import(model);
  REQUIRE(!g.is_ok());
  return g.status().message();
}

}  // namespace

TEST_CASE("MatMulNBits: the ONNX definition, the reference's bytes on every backend, weight-only kernels") {
  NBits c;
  SUBCASE("4 bits, packed zero points, bias") {}
  SUBCASE("4 bits, default zero points, a partial last block, no bias") {
    c.k = 80;
    c.zp = NBits::Zp::kNone;
    c.bias = false;
  }
  SUBCASE("4 bits, float zero points, blocks of 16, a trivial g_idx") {
    c.block = 16;
    c.zp = NBits::Zp::kFloat;
    c.g_idx = true;
  }
  SUBCASE("4 bits, act-order g_idx (a permutation of K), a partial last block") {
    c.k = 80;
    c.g_idx = true;
    c.act_order = true;
  }
  SUBCASE("8 bits, packed zero points, one block") {
    c.bits = 8;
    c.k = 64;
    c.block = 64;
  }
  SUBCASE("2 bits (the dequantize-once kernel)") { c.bits = 2; }
  SUBCASE("f16 A, scales, float zero points and bias (computed in f32, rounded to f16 once)") {
    c.half = true;
    c.zp = NBits::Zp::kFloat;
    c.k = 80;
  }
  CAPTURE(c.bits);
  CAPTURE(c.k);
  CAPTURE(c.half);
  const NBitsModel m = make_nbits(c);
  check_everywhere(m.model, m.dims, m.x, m.expected, c.bits != 2, c.half);
  // The weights stay packed: the constant is [K, N] of u{bits} (K rounded up to whole blocks),
  // codes of 4 bits or fewer two per byte (qrt's nibble packing), 8-bit ones a byte each.
  auto g = import(m.model);
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  bool found = false;
  for (const qrt::Op& op : g->ops) {
    if (op.kind != qrt::OpKind::kConstant || !g->values[size_t(op.results[0])].type.element.is_quant()) continue;
    const qrt::Type& t = g->values[size_t(op.results[0])].type;
    CHECK(t.dims == std::vector<int64_t>{c.k_blocks() * c.block, c.n});
    CHECK(t.element.storage.width == unsigned(c.bits));
    CHECK(!t.element.storage.is_signed);
    const size_t elements = size_t(c.k_blocks() * c.block * c.n);
    CHECK(op.attr("value")->dense.size() == (c.bits <= 4 ? elements / 2 : elements));
    found = true;
  }
  CHECK(found);
}

TEST_CASE("MatMulNBits from an fp16 export under dynamic i8: 16-bit scales, no zero-point bytes, the reference's bytes") {
  // An fp16 export's scales are f16 values and its zero points default to 8: the dynamic
  // kernel's records keep the scales at 16 bits and the one zero point in the kernel, 4.5 bits
  // per weight (one 64-column strip of 3 blocks of 32: 3 x (1024 + 128) bytes).
  NBits c;
  c.half = true;
  c.zp = NBits::Zp::kNone;
  const NBitsModel nm = make_nbits(c);
  std::string bytes;
  nm.model.SerializeToString(&bytes);
  std::vector<uint16_t> x16;
  for (float v : nm.x) x16.push_back(qrt::f16_bits_from_double(v));
  std::vector<uint8_t> ref_out;
  std::vector<std::string> levels = {"ref"};
  for (const std::string& l : tested_levels()) levels.push_back(l);
  for (const std::string& level : levels) {
    CAPTURE(level);
    qrt_model_t* m = nullptr;
    REQUIRE(qrt_model_load_buffer(bytes.data(), bytes.size(), "nbits_f16.onnx", &m) == QRT_OK);
    REQUIRE_MESSAGE(qrt_model_apply_passes(m, "lower-hybrid{mode=dynamic-i8}", nullptr) == QRT_OK, qrt_last_error_message());
    qrt_plan_options o;
    qrt_plan_options_init(&o);
    o.backend = level == "ref" ? QRT_BACKEND_REF : QRT_BACKEND_JIT;
    o.isa = level == "ref" ? nullptr : level.c_str();
    qrt_plan_t* plan = nullptr;
    REQUIRE_MESSAGE(qrt_plan_create(m, &o, &plan) == QRT_OK, qrt_last_error_message());
    if (level != "ref") {
      const std::vector<std::string> kernels = onnx_builders::matmul_kernels(plan);
      REQUIRE(kernels.size() == 1);
      CHECK_MESSAGE(kernels[0].find("f32_qu4w_h_f32_dyngemm_") == 0, kernels[0]);
      CHECK_MESSAGE(kernels[0].find("weights packed: 3456 bytes with f16 scales;") != std::string::npos, kernels[0]);
    }
    qrt_context_t* ctx = nullptr;
    REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
    REQUIRE(qrt_context_set_input(ctx, 0, QRT_DTYPE_F16, nm.dims.size(), nm.dims.data(), x16.data(), x16.size() * 2) == QRT_OK);
    REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
    qrt_tensor_view view;
    REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
    const std::vector<uint8_t> out(static_cast<const uint8_t*>(view.data), static_cast<const uint8_t*>(view.data) + view.bytes);
    if (level == "ref") ref_out = out;
    else CHECK(out == ref_out);
    qrt_context_destroy(ctx);
    qrt_plan_destroy(plan);
    qrt_model_destroy(m);
  }
}

TEST_CASE("MatMulNBits: malformed nodes are clear errors naming the node and value") {
  NBits c;
  NBitsModel m = make_nbits(c);
  onnx::NodeProto* node = m.model.mutable_graph()->mutable_node(0);
  auto set_attr = [&](const char* name, int64_t v) {
    for (auto& a : *node->mutable_attribute()) {
      if (a.name() == name) a.set_i(v);
    }
  };
  SUBCASE("bits") {
    set_attr("bits", 3);
    CHECK(import_error(m.model).find("bits = 3 is not supported (2, 4 or 8)") != std::string::npos);
  }
  SUBCASE("block size") {
    set_attr("block_size", 24);
    CHECK(import_error(m.model).find("block_size must be a power of two in [16, 2^20], got 24") != std::string::npos);
  }
  SUBCASE("hostile sizes") {
    set_attr("K", int64_t(1) << 62);
    CHECK(import_error(m.model).find("at most 2^40, got K = 4611686018427387904") != std::string::npos);
  }
  SUBCASE("A of another float type") {
    m.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
    CHECK(import_error(m.model).find("A must be an f32 or f16 tensor, got tensor<2x3x96xf64>") != std::string::npos);
  }
  SUBCASE("f16 A with f32 scales") {
    m.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT16);
    CHECK(import_error(m.model).find("scales must be f16") != std::string::npos);
  }
  SUBCASE("B's shape") {
    set_attr("N", 41);
    CHECK(import_error(m.model).find("B must be uint8 [N, k_blocks, blob_size] = [41x3x16]") != std::string::npos);
  }
  SUBCASE("K against A") {
    set_attr("K", 64);
    CHECK(import_error(m.model).find("as its last dimension") != std::string::npos);
  }
  SUBCASE("scales") {
    m.model.mutable_graph()->mutable_initializer(1)->mutable_dims()->Set(0, 119);
    m.model.mutable_graph()->mutable_initializer(1)->mutable_raw_data()->resize(119 * 4);
    CHECK(import_error(m.model).find("scales must be f32 with N * k_blocks = 120 elements") != std::string::npos);
  }
  SUBCASE("a fractional float zero point") {
    NBits f;
    f.zp = NBits::Zp::kFloat;
    NBitsModel fm = make_nbits(f);
    onnx::TensorProto* zp = fm.model.mutable_graph()->mutable_initializer(2);
    REQUIRE(zp->name() == "zp");
    const float half = 2.5f;
    std::memcpy(zp->mutable_raw_data()->data(), &half, 4);
    CHECK(import_error(fm.model).find("float zero point 2.5") != std::string::npos);
  }
  SUBCASE("g_idx whose blocks are not block_size rows, or out of range") {
    NBits gi;
    gi.g_idx = true;
    NBitsModel gm = make_nbits(gi);
    auto set_first = [&](char v) {
      for (auto& t : *gm.model.mutable_graph()->mutable_initializer()) {
        if (t.name() == "g_idx") (*t.mutable_raw_data())[0] = v;
      }
    };
    set_first(1);
    CHECK(import_error(gm.model).find("g_idx gives block 0 31 rows of K; each block needs 32") != std::string::npos);
    set_first(9);
    CHECK(import_error(gm.model).find("g_idx[0] = 9 is not a block in [0, 3)") != std::string::npos);
  }
  SUBCASE("B computed at run time") {
    node->set_input(1, "A");
    CHECK(import_error(m.model).find("node 'MatMulNBits_node' (MatMulNBits): B 'A' must be a constant") != std::string::npos);
  }
}

namespace {

// x [3, K] · DequantizeLinear(w [K, N] INT4/UINT4, blocks of `block` along K) as opset 21
// writes block-wise weights (w_zp through int32_data, the other path of 4-bit tensors).
onnx::ModelProto make_blocked_dq(int64_t k, int64_t n, int64_t block, bool is_signed, std::vector<float>& x,
                                 std::vector<double>& expected) {
  std::mt19937 rng(7);
  const int64_t lo = is_signed ? -8 : 0, kb = k / block;
  std::uniform_int_distribution<int64_t> code(lo, lo + 15);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<int64_t> w(size_t(k * n)), zps(size_t(kb * n));
  std::vector<float> scales(size_t(kb * n));
  std::vector<uint8_t> w_packed(size_t((k * n + 1) / 2), 0), zp_packed(size_t((kb * n + 1) / 2), 0);
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = code(rng);
    w_packed[i / 2] |= uint8_t((w[i] & 15) << (4 * (i % 2)));
  }
  for (size_t i = 0; i < zps.size(); ++i) {
    zps[i] = code(rng);
    zp_packed[i / 2] |= uint8_t((zps[i] & 15) << (4 * (i % 2)));
    scales[i] = std::ldexp(0.5f + 0.5f * std::fabs(unit(rng)), -int(rng() % 6));
  }
  x.resize(size_t(3 * k));
  for (float& v : x) v = unit(rng);
  const int type = is_signed ? 22 : 21;  // INT4 / UINT4
  onnx::ModelProto model = empty_model(21);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("blocked");
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {3, k});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {3, n});
  add_raw(g, "w", type, {k, n}, w_packed.data(), w_packed.size());
  add_floats(g, "w_scale", {kb, n}, scales);
  onnx::TensorProto* z = g->add_initializer();
  z->set_name("w_zp");
  z->set_data_type(type);
  z->add_dims(kb);
  z->add_dims(n);
  for (uint8_t byte : zp_packed) z->add_int32_data(byte);
  onnx::NodeProto* dq = add_node(g, "DequantizeLinear", {"w", "w_scale", "w_zp"}, {"wf"});
  set_int_attr(dq, "axis", 0);
  set_int_attr(dq, "block_size", block);
  add_node(g, "MatMul", {"x", "wf"}, {"y"});
  for (int64_t row = 0; row < 3; ++row) {
    for (int64_t col = 0; col < n; ++col) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const size_t p = size_t((kk / block) * n + col);
        s += double(x[size_t(row * k + kk)]) * double(w[size_t(kk * n + col)] - zps[p]) * double(scales[p]);
      }
      expected.push_back(s);
    }
  }
  return model;
}

}  // namespace

TEST_CASE("DequantizeLinear with block_size (opset 21, INT4/UINT4): sub-channel weights, weight-only kernels") {
  for (bool is_signed : {true, false}) {
    CAPTURE(is_signed);
    std::vector<float> x;
    std::vector<double> expected;
    const onnx::ModelProto model = make_blocked_dq(64, 37, 16, is_signed, x, expected);
    check_everywhere(model, {3, 64}, x, expected, true);
    auto g = import(model);
    REQUIRE_MESSAGE(g.is_ok(), g.status().message());
    bool sub_channel = false;
    for (const qrt::Value& v : g->values) sub_channel |= v.type.element.is_sub_channel();
    CHECK(sub_channel);
  }
}

TEST_CASE("DequantizeLinear with block_size: blocks that do not tile, mismatched scales, packed sizes") {
  std::vector<float> x;
  std::vector<double> expected;
  onnx::ModelProto model = make_blocked_dq(64, 8, 16, true, x, expected);
  onnx::NodeProto* dq = model.mutable_graph()->mutable_node(0);
  SUBCASE("a partial block") {
    dq->mutable_attribute(1)->set_i(24);
    CHECK(import_error(model).find("dimension 0 of size 64 is not a multiple of block_size 24") != std::string::npos);
  }
  SUBCASE("the scale's block count") {
    dq->mutable_attribute(1)->set_i(32);
    CHECK(import_error(model).find("the scale's dimension 0 is 4, expected 2 blocks of 32") != std::string::npos);
  }
  SUBCASE("a negative block size") {
    dq->mutable_attribute(1)->set_i(-2);
    CHECK(import_error(model).find("block_size must be >= 0, got -2") != std::string::npos);
  }
  SUBCASE("packed 4-bit data of the wrong size") {
    model.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->pop_back();
    CHECK(import_error(model).find("holds 255 bytes of packed 4-bit values, expected 256") != std::string::npos);
  }
}

TEST_CASE("the bundled llm_mlp_nbits.onnx (MatMulNBits gate/up/down, SiLU, residual): packed weights, float64 expectation") {
  const std::string dir = std::string(MODELS_DIR) + "/onnx/";
  std::ifstream in(dir + "llm_mlp_nbits.onnx", std::ios::binary);
  REQUIRE(in.good());
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  qrt_tools::NpyArray x, y;
  std::string error;
  REQUIRE_MESSAGE(qrt_tools::read_npy(dir + "llm_mlp_nbits_x.npy", x, error), error);
  REQUIRE_MESSAGE(qrt_tools::read_npy(dir + "llm_mlp_nbits_expected.npy", y, error), error);
  std::vector<float> xf(x.data.size() / 4), yf(y.data.size() / 4);
  std::memcpy(xf.data(), x.data.data(), x.data.size());
  std::memcpy(yf.data(), y.data.data(), y.data.size());
  // The expectation is float64 rounded to f32 once: within 1e-5 of the largest output.
  check_everywhere(bytes, x.shape, xf, std::vector<double>(yf.begin(), yf.end()), true);
  // Three 4-bit projections of 256x512 stay packed: 3 x 64 KiB of codes.
  qrt_model_t* m = nullptr;
  REQUIRE(qrt_model_load_buffer(bytes.data(), bytes.size(), "llm_mlp_nbits.onnx", &m) == QRT_OK);
  qrt_plan_options o;
  qrt_plan_options_init(&o);
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(m, &o, &plan) == QRT_OK, qrt_last_error_message());
  qrt_weight_memory w;
  w.struct_size = sizeof w;
  REQUIRE(qrt_plan_weight_memory(plan, &w) == QRT_OK);
  CHECK(w.constant_bytes >= size_t(3 * 256 * 512 / 2));
  CHECK(w.constant_bytes < size_t(3 * 256 * 512 / 2 + 4096));  // + the f32 bias
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
}

TEST_CASE("QuantizeLinear's output_dtype (opset 21) picks the storage when no zero point is given") {
  // x / 0.5 rounded half to even, clamped to the storage: int8 keeps the negative values that
  // the default uint8 would clamp to 0.
  auto model_with = [](int64_t output_dtype, bool zero_point) {
    onnx::ModelProto model = empty_model(21);
    onnx::GraphProto* g = model.mutable_graph();
    g->set_name("q");
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {4});
    add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {4});
    add_floats(g, "s", {}, {0.5f});
    std::vector<std::string> in = {"x", "s"};
    if (zero_point) {
      const uint8_t zp = 3;
      add_raw(g, "z", onnx::TensorProto::UINT8, {}, &zp, 1);
      in.push_back("z");
    }
    onnx::NodeProto* q = add_node(g, "QuantizeLinear", in, {"q"});
    if (output_dtype != 0) set_int_attr(q, "output_dtype", output_dtype);
    add_node(g, "DequantizeLinear", {"q", "s"}, {"y"});
    return model;
  };
  const std::vector<float> x = {0.3f, -1.2f, 100.0f, -100.0f};
  SUBCASE("INT8") {
    std::string bytes;
    model_with(onnx::TensorProto::INT8, false).SerializeToString(&bytes);
    Run r;
    REQUIRE_MESSAGE(run(bytes, QRT_BACKEND_REF, nullptr, {4}, x, r), qrt_last_error_message());
    CHECK(r.y == std::vector<float>{0.5f, -1.0f, 63.5f, -64.0f});
    for (const std::string& level : tested_levels()) {
      Run jit;
      REQUIRE(run(bytes, QRT_BACKEND_JIT, level.c_str(), {4}, x, jit));
      CHECK(jit.y == r.y);
    }
  }
  SUBCASE("the default is UINT8") {
    std::string bytes;
    model_with(0, false).SerializeToString(&bytes);
    Run r;
    REQUIRE(run(bytes, QRT_BACKEND_REF, nullptr, {4}, x, r));
    CHECK(r.y == std::vector<float>{0.5f, 0.0f, 100.0f, 0.0f});
  }
  SUBCASE("a zero point of another type, or a float output_dtype, is refused") {
    CHECK(import_error(model_with(onnx::TensorProto::INT8, true)).find("output_dtype i8 differs from the zero point's type ui8") !=
          std::string::npos);
    CHECK(import_error(model_with(onnx::TensorProto::FLOAT, false)).find("output_dtype 1 is not an integer type") !=
          std::string::npos);
  }
}
