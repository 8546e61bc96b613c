// Tests: the GEMM kernels of the level under test (qrt.matmul with constant weights) are
// bit-exact with the reference for shapes with every kind of tail, u8/s8 activations and
// weights, extreme zero points, narrow bounds, per-channel scales over a wide range,
// saturating outputs, bias and the int32 accumulator output; both multiply paths are
// exercised and chosen for the right reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/float_format.h"
#include "jit/kernel_list.h"
#include "jit/ops/gemm_kernels.h"
#include "jit/ops/gemm_pack.h"
#include "jit/ops/select.h"
#include "jit/core/parallel.h"
#include "jit/core/tensor.h"
#include "jit/ref/scalar_backend.h"
#include "op_kernel_check.h"
#include "tests/slow_host.h"

namespace {

using qrt_test::QuantSpec;

struct MatmulCase : qrt_test::QuantCase {
  int64_t m = 1, k = 1, n = 1;
};

MatmulCase random_case(std::mt19937& rng, int64_t m, int64_t k, int64_t n) {
  MatmulCase c;
  static_cast<qrt_test::QuantCase&>(c) = qrt_test::random_quant_case(rng, k, n, 1, 1);
  c.m = m, c.k = k, c.n = n;
  return c;
}

double acc_scale(const MatmulCase& c, size_t j) { return c.x.scales[0] * c.w.scales[c.w.scales.size() == 1 ? 0 : j]; }

// The graph text of a case, with random weights (|w - zw| <= w_dev) and bias.
std::string matmul_text(const MatmulCase& c, std::mt19937& rng, int w_dev) {
  using qrt_test::shape;
  const std::string xt = "tensor<" + shape({c.m, c.k}) + c.x.type() + ">";
  const std::string wt = "tensor<" + shape({c.k, c.n}) + c.w.type() + ">";
  std::string ot;
  if (c.accumulator_out) {
    std::string s = "!quant.uniform<i32:f32:1, {";
    for (int64_t j = 0; j < c.n; ++j) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%s%.17g", j ? ", " : "", acc_scale(c, size_t(j)));
      s += buf;
    }
    ot = "tensor<" + shape({c.m, c.n}) + s + "}>>";
  } else {
    ot = "tensor<" + shape({c.m, c.n}) + c.out.type() + ">";
  }
  std::vector<int> w(size_t(c.k * c.n));
  for (int64_t kk = 0; kk < c.k; ++kk) {
    for (int64_t j = 0; j < c.n; ++j) {
      const int zw = c.w.zps[c.w.zps.size() == 1 ? 0 : size_t(j)];
      const int lo = std::max(c.w.lo, zw - w_dev), hi = std::min(c.w.hi, zw + w_dev);
      w[size_t(kk * c.n + j)] = qrt_test::random_values(rng, 1, lo, hi)[0];
    }
  }
  std::string text = "func.func @main(%x: " + xt + ") -> " + ot + " {\n";
  text += "  %w = \"qrt.constant\"() {value = " + qrt_test::hex_dense(qrt_test::bytes_of(w)) + " : tensor<" +
          shape({c.k, c.n}) + (c.w.is_signed ? "i8" : "ui8") + ">} : () -> " + wt + "\n";
  std::string operands = "%x, %w", types = xt + ", " + wt;
  if (c.bias) {
    std::vector<uint8_t> bytes;
    std::string bt = "tensor<" + std::to_string(c.n) + "x!quant.uniform<i32:f32:0, {";
    for (int64_t j = 0; j < c.n; ++j) {
      const int32_t b = std::uniform_int_distribution<int32_t>(-100000, 100000)(rng);
      bytes.resize(bytes.size() + 4);
      std::memcpy(bytes.data() + bytes.size() - 4, &b, 4);
      char buf[48];
      std::snprintf(buf, sizeof buf, "%s%.17g", j ? ", " : "", acc_scale(c, size_t(j)));
      bt += buf;
    }
    bt += "}>>";
    text += "  %b = \"qrt.constant\"() {value = " + qrt_test::hex_dense(bytes) + " : tensor<" + std::to_string(c.n) +
            "xi32>} : () -> " + bt + "\n";
    operands += ", %b";
    types += ", " + bt;
  }
  const std::string attrs = c.clamp_attrs.empty() ? "" : " {" + c.clamp_attrs.substr(2) + "}";
  text += "  %y = \"qrt.matmul\"(" + operands + ")" + attrs + " : (" + types + ") -> " + ot + "\n";
  text += "  return %y : " + ot + "\n}\n";
  return text;
}

qrt::Tensor random_input(const MatmulCase& c, std::mt19937& rng, std::vector<int64_t> dims) {
  auto t = qrt::parse_type("tensor<" + qrt_test::shape(dims) + c.x.type() + ">");
  REQUIRE(t.is_ok());
  qrt::Tensor x = qrt::Tensor::zeros(*t);
  const auto v = qrt_test::random_values(rng, size_t(x.num_elements()), c.x.lo, c.x.hi);
  for (size_t i = 0; i < v.size(); ++i) x.set_int(i, v[i]);
  return x;
}

}  // namespace

namespace {

// The level's one path where it has no pair-sum path (VNNI: dot4; AArch64: usmmla8, sdot4 or
// mlal): exact for every input, so chosen whatever the weights. nullopt on pair-sum levels.
std::optional<qrt::jit::GemmPath> only_exact_path(const qrt::jit::Backend& backend) {
  using qrt::jit::GemmPath;
  if (backend.gemm_traits(GemmPath::kMaddubs)) return std::nullopt;
  for (GemmPath p : {GemmPath::kUsmmla8, GemmPath::kDot4, GemmPath::kSdot4, GemmPath::kMlal}) {
    if (backend.gemm_traits(p)) return p;
  }
  return std::nullopt;
}

// The least k the level's GEMM tiles take (GemmTraits::min_k; AMX: one 64-byte step); smaller
// GEMMs go to the level below.
int64_t min_k_of(const qrt::jit::Backend& backend) {
  int64_t k = 0;
  for (qrt::jit::GemmPath p : {qrt::jit::GemmPath::kMaddubs, qrt::jit::GemmPath::kMaddwd, qrt::jit::GemmPath::kDot4,
                               qrt::jit::GemmPath::kMlal, qrt::jit::GemmPath::kSdot4, qrt::jit::GemmPath::kUsmmla8}) {
    if (const auto t = backend.gemm_traits(p)) k = std::max<int64_t>({k, t->min_k, t->k_step});
  }
  return k;
}

}  // namespace

TEST_CASE("GEMM kernels are bit-exact with the reference matmul") {
  std::mt19937 rng(7);
  std::map<std::string, int> on_path;  // tiles' path names ("_maddubs", ...) -> cases
  int cases = 0;
  const std::vector<std::string> paths = {"maddubs", "maddwd", "dot4", "mlal", "sdot4", "usmmla8"};
  // k 124 and 131 leave 60 and 4 bytes beyond whole 64-byte steps (the AMX tiles' k tails);
  // m 32 and 33 fill the AMX tile's 32 rows and pass them.
  for (int64_t m : {1, 2, 3, 4, 5, 7, 13, 32, 33}) {
    for (int64_t k : {1, 2, 3, 4, 5, 17, 64, 124, 131}) {
      for (int64_t n : {1, 7, 15, 16, 17, 40}) {
        const MatmulCase c = random_case(rng, m, k, n);
        // Half the cases with small weights (vpmaddubsw provably exact), half full range.
        const int w_dev = (cases % 2 == 0) ? 40 : 255;
        const std::string text = matmul_text(c, rng, w_dev);
        CAPTURE(text);
        const std::string how = qrt_test::check_last_op(text, random_input(c, rng, {m, k}));
        for (const std::string& p : paths) on_path[p] += how.find("_" + p + "_") != std::string::npos || how.find("_" + p + "__") != std::string::npos;
        ++cases;
      }
    }
  }
  std::string counts;
  for (const std::string& p : paths) counts += " " + p + " " + std::to_string(on_path[p]);
  MESSAGE(cases << " cases; tiles per path:" << counts);
  const qrt::jit::Backend& backend = qrt_test::test_backend(qrt::jit::KernelOp::kGemm);
  if (backend.gemm_traits(qrt::jit::GemmPath::kDot4) && backend.gemm_traits(qrt::jit::GemmPath::kSdot4)) {
    // AMX: u8 rows on tdpbusd (dot4), s8 rows on tdpbssd (sdot4); k < 64 on avx512-vnni's dot4.
    CHECK(on_path["dot4"] + on_path["sdot4"] == cases);
    CHECK(on_path["dot4"] > 50);
    CHECK(on_path["sdot4"] > 50);
  } else if (const auto only = only_exact_path(backend)) {
    CHECK(on_path[qrt::jit::gemm_path_name(*only)] == cases);  // exact for every input: the level's only path
  } else if (backend.gemm_traits(qrt::jit::GemmPath::kMaddubs)) {
    CHECK(on_path["maddubs"] > 50);
    CHECK(on_path["maddwd"] > 50);
  }
}

TEST_CASE("GEMMs over long rows (k of 1100 and 2108, with k tails) are bit-exact with the reference matmul") {
  // Weight panels larger than L1 at every level; AMX k tails of 12 (1100) and 60 (2108)
  // bytes; rows across the 32-row tile; column tails. (Few cases: the reference's sums are
  // the cost, and the sanitizer trees run this at every level.)
  std::mt19937 rng(71);
  int cases = 0;
  for (int64_t k : {1100, 2108}) {
    for (int64_t m : {5, 33}) {
      for (int64_t n : {17, 40}) {
        const MatmulCase c = random_case(rng, m, k, n);
        const std::string text = matmul_text(c, rng, cases % 2 ? 40 : 255);
        CAPTURE(text.substr(0, 400));
        qrt_test::check_last_op(text, random_input(c, rng, {m, k}));
        ++cases;
      }
    }
  }
  MESSAGE(cases << " long-row cases");
}

TEST_CASE("the s16 pair-sum path (vpmaddubsw) is chosen only where no weight pair can saturate") {
  using qrt::jit::GemmPath;
  const qrt::jit::Backend& backend = qrt_test::test_backend(qrt::jit::KernelOp::kGemm);
  // On a level with one path exact for every input, that path is chosen whatever the weights.
  const std::optional<GemmPath> only = only_exact_path(backend);
  auto path_of = [&](qrt::jit::GemmSpec spec) {
    // Zero weights up to the level's least k (n = 1 here): they cannot saturate a pair.
    spec.k = std::max(spec.k, min_k_of(backend));
    spec.w.resize(size_t(spec.k * spec.n), 0);
    auto p = qrt::jit::pack_gemm(spec, qrt::jit::analyze_gemm(spec), backend);
    REQUIRE(p.is_ok());
    return (*p)->path;
  };
  qrt::jit::GemmSpec s;
  s.k = 4, s.n = 1;
  s.w_zero_point = {0};
  s.out = qrt::jit::OutKind::kS32;
  // u8 activations up to 255: two weights of 64 and 64 give 255 * 128 = 32640 <= 32767.
  s.w = {64, 64, -128, 127};
  CHECK(qrt::jit::analyze_gemm(s).pair_sum_exact);  // (-128, 127): opposite signs never saturate
  CHECK(path_of(s) == only.value_or(GemmPath::kMaddubs));
  s.w = {65, 64, 0, 0};  // 255 * 129 = 32895 > 32767
  CHECK_FALSE(qrt::jit::analyze_gemm(s).pair_sum_exact);
  CHECK(qrt::jit::analyze_gemm(s).path_reason.find("k = 0, n = 0") != std::string::npos);
  CHECK(path_of(s) == only.value_or(GemmPath::kMaddwd));
  // The same weights are safe when the activations' bounds are narrower.
  s.a_max = 200;
  CHECK(qrt::jit::analyze_gemm(s).pair_sum_exact);
  CHECK(path_of(s) == only.value_or(GemmPath::kMaddubs));
  // s8 activations are flipped to u8: [-128, 127] becomes [0, 255]. A level with both quad
  // paths (AMX) reads s8 rows as they are, on sdot4.
  s.a_signed = true, s.a_min = -128, s.a_max = 127;
  CHECK_FALSE(qrt::jit::analyze_gemm(s).pair_sum_exact);
  const bool both_quads = backend.gemm_traits(GemmPath::kDot4) && backend.gemm_traits(GemmPath::kSdot4);
  CHECK(path_of(s) == (both_quads ? GemmPath::kSdot4 : only.value_or(GemmPath::kMaddwd)));
}

TEST_CASE("plans prefer the activation storage their level's GEMM tiles read in place") {
  // jit::activations_read_unsigned against the tiles themselves (PackedGemm::reads_rows_unpacked),
  // for the native backend of the test's level and, where it is built, LLVM's.
  std::vector<const qrt::jit::Backend*> backends = {&qrt_test::test_backend(qrt::jit::KernelOp::kGemm)};
  const qrt::jit::Isa best = qrt_test::test_isas().by_preference().front();
  if (const qrt::jit::Backend* llvm = qrt::jit::kernel_list_backend(qrt::jit::KernelOp::kGemm, best, qrt::jit::Generator::kLlvm)) {
    backends.push_back(llvm);
  }
  for (const qrt::jit::Backend* backend : backends) {
    const std::string name = backend->name();
    CAPTURE(name);
    // Weights |w| <= 63 prove the pair sums (the AVX2 level's u8 path, vpmaddubsw, serves them);
    // k a multiple of every level's k group and step.
    auto reads_in_place = [&](bool a_signed) {
      qrt::jit::GemmSpec s;
      s.k = std::max<int64_t>(128, min_k_of(*backend)), s.n = 16;
      s.w.resize(size_t(s.k * s.n));
      for (size_t i = 0; i < s.w.size(); ++i) s.w[i] = int32_t(i * 37 % 127) - 63;
      s.w_zero_point.assign(size_t(s.n), 0);
      s.a_signed = a_signed, s.a_min = a_signed ? -128 : 0, s.a_max = a_signed ? 127 : 255;
      s.out = qrt::jit::OutKind::kS32;
      auto p = qrt::jit::pack_gemm(s, qrt::jit::analyze_gemm(s), *backend);
      REQUIRE_MESSAGE(p.is_ok(), p.status().to_string());
      return (*p)->reads_rows_unpacked();
    };
    const bool u8_in_place = reads_in_place(false), s8_in_place = reads_in_place(true);
    CAPTURE(u8_in_place);
    CAPTURE(s8_in_place);
    const std::optional<bool> preferred = qrt::jit::activations_read_unsigned(qrt_test::test_isas(), backend->generator());
    if (!preferred) CHECK(u8_in_place == s8_in_place);  // either storage serves (or neither)
    else CHECK((*preferred ? u8_in_place && !s8_in_place : s8_in_place && !u8_in_place));
  }
}

TEST_CASE("matmuls the GEMM kernels cannot prove exact are left to the reference") {
  qrt::jit::GemmSpec s;
  s.k = 40000, s.n = 1;
  s.w.assign(size_t(s.k), 127);
  s.w_zero_point = {-128};
  s.a_zero_point = 255;
  s.out = qrt::jit::OutKind::kS32;
  const qrt::jit::GemmAnalysis a = qrt::jit::analyze_gemm(s);
  CHECK(a.why_not.find("could leave int32") != std::string::npos);
  auto p = qrt::jit::pack_gemm(s, a, qrt_test::test_backend(qrt::jit::KernelOp::kGemm));
  REQUIRE_FALSE(p.is_ok());
  CHECK(p.status().code() == qrt::ErrorCode::kUnsupported);
}

TEST_CASE("GEMM f32 output (a fused dcast of the accumulator) and s32 output match the scalar formula") {
  std::mt19937 rng(41);
  for (qrt::jit::OutKind out : {qrt::jit::OutKind::kF32, qrt::jit::OutKind::kS32}) {
    for (int64_t n : {1, 9, 16, 37}) {
      // k 23, or 64 more where the level takes no shorter k (AMX: then a 24-byte k tail).
      const int64_t m = 7, k = 23 + (min_k_of(qrt_test::test_backend(qrt::jit::KernelOp::kGemm)) > 23 ? 64 : 0);
      qrt::jit::GemmSpec s;
      s.k = k, s.n = n;
      s.a_signed = true, s.a_zero_point = -7, s.a_min = -128, s.a_max = 127;
      s.w = qrt_test::random_values(rng, size_t(k * n), -127, 127);
      s.w_zero_point.assign(size_t(n), 0);
      s.w_zero_point[0] = 5;  // exercises the row-sum correction
      for (int64_t j = 0; j < n; ++j) s.bias.push_back(int64_t(j * 1000 - 3000));
      s.out = out;
      for (int64_t j = 0; j < n; ++j) s.multiplier.push_back(float(0.001 * double(j + 1)));
      auto g = qrt::jit::GemmKernel::create(s, qrt::jit::analyze_gemm(s), qrt_test::test_backend(qrt::jit::KernelOp::kGemm));
      REQUIRE(g.is_ok());
      const auto a = qrt_test::random_values(rng, size_t(m * k), -128, 127);
      std::vector<uint8_t> a_bytes = qrt_test::bytes_of(a), c(size_t(m * n * 4));
      (*g)->run(a_bytes.data(), m, k, c.data(), n * 4, qrt::jit::serial());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          int64_t acc = s.bias[size_t(j)];
          for (int64_t kk = 0; kk < k; ++kk) {
            acc += int64_t(a[size_t(i * k + kk)] - s.a_zero_point) * (s.w[size_t(kk * n + j)] - s.w_zero_point[size_t(j)]);
          }
          if (out == qrt::jit::OutKind::kS32) {
            int32_t got;
            std::memcpy(&got, c.data() + (i * n + j) * 4, 4);
            CHECK(got == acc);
          } else {
            float got;
            std::memcpy(&got, c.data() + (i * n + j) * 4, 4);
            CHECK(got == float(acc) * s.multiplier[size_t(j)]);  // dcast: f32(acc) * scale, one rounding
          }
        }
      }
    }
  }
}

TEST_CASE("GEMM cache blocks: near-equal tile multiples, long rows in fewer blocks, the same bytes at every size") {
  std::mt19937 rng(43);
  const qrt::jit::Backend& backend = qrt_test::test_backend(qrt::jit::KernelOp::kGemm);
  // 301 rows of 1100 bytes: the 192 KiB default holds fewer than kMinBlockRows of them.
  const int64_t m = 301, k = 1100, n = 20;
  qrt::jit::GemmSpec s;
  s.k = k, s.n = n;
  s.a_zero_point = 3;
  s.w = qrt_test::random_values(rng, size_t(k * n), -127, 127);
  s.w_zero_point.assign(size_t(n), 0);
  s.bias.assign(size_t(n), 77);
  s.out = qrt::jit::OutKind::kS32;
  auto g = qrt::jit::GemmKernel::create(s, qrt::jit::analyze_gemm(s), backend);
  REQUIRE(g.is_ok());
  qrt::jit::GemmKernel& gemm = **g;
  const int64_t tile = gemm.packed().tile_rows(), row_bytes = gemm.packed().a_row_bytes();
  const int64_t l2 = qrt::jit::GemmKernel::planned_l2_bytes();
  const int64_t least = std::max(qrt::jit::GemmKernel::kDefaultBlockBytes / row_bytes,
                                 std::min(qrt::jit::GemmKernel::kMinBlockRows, l2 / 2 / row_bytes)) / tile * tile;
  for (int64_t rows : {int64_t(1), tile, m, 4 * m}) {
    const int64_t block = gemm.block_rows(rows);
    CAPTURE(rows);
    CHECK(block % tile == 0);
    const int64_t blocks = (rows + block - 1) / block;
    CHECK(blocks == (rows + std::max(least, tile) - 1) / std::max(least, tile));  // no more blocks than the least block needs
    CHECK((blocks - 1) * block < rows);                                          // every block holds rows
    if (blocks > 1) CHECK(rows - (blocks - 1) * block > block - blocks * tile);  // the last one is not short
  }
  gemm.set_block_bytes(3 * 1024);  // exactly: one tile or a few per block
  CHECK(gemm.block_rows(m) == std::max<int64_t>(tile, 3 * 1024 / row_bytes / tile * tile));
  const auto a = qrt_test::random_values(rng, size_t(m * k), 0, 255);
  const std::vector<uint8_t> a_bytes = qrt_test::bytes_of(a);
  std::vector<std::vector<uint8_t>> results;
  for (int64_t bytes : {int64_t(0), int64_t(3 * 1024), int64_t(1) << 30}) {
    gemm.set_block_bytes(bytes);
    std::vector<uint8_t> c(size_t(m * n * 4));
    gemm.run(a_bytes.data(), m, k, c.data(), n * 4, qrt::jit::serial());
    results.push_back(c);
  }
  CHECK(results[1] == results[0]);
  CHECK(results[2] == results[0]);
  for (int64_t i : {int64_t(0), m / 2, m - 1}) {  // and the scalar formula, on rows of each block
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = s.bias[size_t(j)];
      for (int64_t kk = 0; kk < k; ++kk) acc += int64_t(a[size_t(i * k + kk)] - s.a_zero_point) * s.w[size_t(kk * n + j)];
      int32_t got;
      std::memcpy(&got, results[0].data() + (i * n + j) * 4, 4);
      CHECK(got == acc);
    }
  }
}

namespace {

// `text` (a function's head and its weights) completed with the bias constant of value
// `bias_value` and type `bias_type` (none where the value is empty), the matmul of `operands`
// (of `types`), and the return of its result of type `yt`.
// `v` appended as the little-endian bytes of an f32, bf16 or f16 element (rounded to nearest even).
void append_float(std::vector<uint8_t>& bytes, float v, const std::string& kind) {
  if (kind == "f32") {
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    bytes.insert(bytes.end(), b, b + 4);
    return;
  }
  const uint16_t bits = kind == "bf16" ? qrt::bf16_bits_from_double(v) : qrt::f16_bits_from_double(v);
  bytes.push_back(uint8_t(bits & 0xff));
  bytes.push_back(uint8_t(bits >> 8));
}

std::string finish_matmul_text(std::string text, std::string operands, std::string types, const std::string& bias_value,
                               const std::string& bias_type, const std::string& yt) {
  if (!bias_value.empty()) {
    text += "  %b = \"qrt.constant\"() {value = " + bias_value + " : " + bias_type + "} : () -> " + bias_type + "\n";
    operands += ", %b";
    types += ", " + bias_type;
  }
  return text + "  %y = \"qrt.matmul\"(" + operands + ") : (" + types + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
}

}  // namespace

TEST_CASE("f32, bf16, f16 and hybrid (quantized-weight) matmul kernels keep the reference's rounding order") {
  // bf16 and f16 operands widen to f32 exactly, dequantized weights round to the expressed type
  // (the dcast formula) and each result rounds once, as the reference computes them.
  std::mt19937 rng(43);
  std::uniform_real_distribution<float> mag(-3.0f, 3.0f);
  int cases = 0;
  // 0: float weights; 1: per-column i8 weights, which take the weight-only kernel;
  // 2: per-column i16 weights, which are dequantized once for the f32 GEMM.
  for (const std::string kind : {"f32", "bf16", "f16"}) {
    for (int weights : {0, 1, 2}) {
      if (kind != "f32" && weights == 1) continue;  // bf16/f16 weight-only kernels: the next test
      const bool hybrid = weights != 0;
      for (int64_t m : {1, 3, 4, 9}) {
        for (int64_t k : {1, 7, 64}) {
          for (int64_t n : {1, 8, 17, 40}) {
            const bool bias = (cases % 2) == 0;
            const std::string xt = "tensor<" + qrt_test::shape({m, k}) + kind + ">";
            const std::string yt = "tensor<" + qrt_test::shape({m, n}) + kind + ">";
            std::string wt, wconst;
            if (hybrid) {
              std::string scales;
              const std::string storage = weights == 1 ? "i8" : "i16";
              for (int64_t j = 0; j < n; ++j) scales += (j ? ", " : "") + std::to_string(0.01 * double(j + 1)) + ":" + std::to_string(int(j % 5) - 2);
              wt = "tensor<" + qrt_test::shape({k, n}) + "!quant.uniform<" + storage + ":" + kind + ":1, {" + scales + "}>>";
              std::vector<uint8_t> bytes;
              for (int v : qrt_test::random_values(rng, size_t(k * n), weights == 1 ? -128 : -32768, weights == 1 ? 127 : 32767)) {
                bytes.push_back(uint8_t(v & 0xff));
                if (weights == 2) bytes.push_back(uint8_t((v >> 8) & 0xff));  // little-endian i16
              }
              wconst = qrt_test::hex_dense(bytes) + " : tensor<" + qrt_test::shape({k, n}) + storage + ">";
            } else {
              wt = "tensor<" + qrt_test::shape({k, n}) + kind + ">";
              std::vector<uint8_t> bytes;
              for (size_t i = 0; i < size_t(k * n); ++i) {
                // Magnitudes over many decades, so that rounding order matters.
                append_float(bytes, mag(rng) * std::pow(10.0f, float(int(rng() % 7) - 3)) * (i % 13 == 0 ? -0.0f : 1.0f), kind);
              }
              wconst = qrt_test::hex_dense(bytes) + " : " + wt;
            }
            std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %w = \"qrt.constant\"() {value = " +
                               wconst + "} : () -> " + wt + "\n";
            std::string operands = "%x, %w", types = xt + ", " + wt;
            std::string bias_value;
            if (bias) {
              std::vector<uint8_t> bytes;
              for (size_t j = 0; j < size_t(n); ++j) append_float(bytes, mag(rng) * 100.0f, kind);
              bias_value = qrt_test::hex_dense(bytes);
            }
            text = finish_matmul_text(text, operands, types, bias_value, "tensor<" + std::to_string(n) + "x" + kind + ">", yt);
            CAPTURE(text);
            auto t = qrt::parse_type(xt);
            REQUIRE(t.is_ok());
            qrt::Tensor x = qrt::Tensor::zeros(*t);
            for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
              x.set_float(i, double(mag(rng) * std::pow(10.0f, float(int(rng() % 9) - 4))));
            }
            const std::string how = qrt_test::check_last_op(text, x);
            // The first channel's zero point is -2, so the weight-only kernel carries zero points.
            const std::string expect = weights == 0 ? "f32_f32_f32_gemm" : weights == 2 ? "f32_qc16w_f32_gemm"
                                                                        : "f32_qs8w_zp_f32_wogemm";
            CHECK_MESSAGE(how.find(expect) == 0, how);
            if (kind != "f32") CHECK_MESSAGE(how.find(kind + " operands widened to f32") != std::string::npos, how);
            ++cases;
          }
        }
      }
    }
  }
  MESSAGE(cases << " float/hybrid matmul cases");
}

TEST_CASE("weight-only matmuls over bf16 and f16 round each dequantized weight to that type") {
  // bf16/f16 activations, weights expressed in the same type and results: the kernel widens
  // the activations, rounds every dequantized weight to the type (the dcast formula), sums in
  // f32 and rounds the result once. Scales from 2^-23 to 2^10: f16 weights overflow to inf and
  // go subnormal, bf16 ones keep 8 bits.
  std::mt19937 rng(53);
  std::uniform_real_distribution<float> mag(-3.0f, 3.0f);
  int cases = 0;
  for (const char* kind : {"bf16", "f16"}) {
    for (const char* storage : {"i8", "u4"}) {
      // 8200 rows (a prefill): more widened floats than a thread keeps between calls, so the
      // buffers are given back after each run and made again by the next.
      for (int64_t m : {1, 5, 8200}) {
        for (int64_t k : {3, 33}) {
          for (int64_t n : {7, 40, 70}) {
            if (m == 8200 && (k != 33 || n != 7)) continue;
            const bool four = std::string(storage) == "u4", bias = (cases % 2) == 0;
            const std::string xt = "tensor<" + qrt_test::shape({m, k}) + kind + ">";
            const std::string yt = "tensor<" + qrt_test::shape({m, n}) + kind + ">";
            std::string scales;
            for (int64_t j = 0; j < n; ++j) {
              // (The verifier refuses a scale that is zero in the expressed type: f16 stops near 2^-24.)
              const double scale = std::ldexp(double(500 + rng() % 501) / 1000.0, int(rng() % 33) - 22);
              const int zp = four ? int(rng() % 16) : int(rng() % 256) - 128;
              char buf[64];
              std::snprintf(buf, sizeof buf, "%.9e:%d", scale, zp);
              scales += (j ? ", " : "") + std::string(buf);
            }
            const std::string wt = "tensor<" + qrt_test::shape({k, n}) + "!quant.uniform<" + storage + ":" + kind + ":1, {" + scales + "}>>";
            std::vector<int> values = qrt_test::random_values(rng, size_t(k * n), four ? 0 : -128, four ? 15 : 127);
            std::string dense = "dense<[";
            for (int64_t r = 0; r < k; ++r) {
              dense += r ? ", [" : "[";
              for (int64_t j = 0; j < n; ++j) dense += (j ? ", " : "") + std::to_string(values[size_t(r * n + j)]);
              dense += "]";
            }
            dense += "]>";
            const std::string st = "tensor<" + qrt_test::shape({k, n}) + (four ? "ui4" : "i8") + ">";
            std::string text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n  %w = \"qrt.constant\"() {value = " + dense +
                               " : " + st + "} : () -> " + wt + "\n";
            std::string operands = "%x, %w", types = xt + ", " + wt;
            std::string bias_value;
            if (bias) {
              bias_value = "dense<[";
              for (int64_t j = 0; j < n; ++j) bias_value += (j ? ", " : "") + std::to_string(double(int(mag(rng) * 100.0f)) / 4.0);
              bias_value += "]>";
            }
            text = finish_matmul_text(text, operands, types, bias_value, "tensor<" + std::to_string(n) + "x" + kind + ">", yt);
            CAPTURE(text);
            auto t = qrt::parse_type(xt);
            REQUIRE(t.is_ok());
            qrt::Tensor x = qrt::Tensor::zeros(*t);
            for (size_t i = 0; i < size_t(x.num_elements()); ++i) x.set_float(i, double(mag(rng) * std::pow(2.0f, float(int(rng() % 9) - 4))));
            const std::string how = qrt_test::check_last_op(text, x);
            CHECK_MESSAGE(how.find(std::string("_") + kind + "_f32_wogemm") != std::string::npos, how);
            ++cases;
          }
        }
      }
    }
  }
  MESSAGE(cases << " bf16/f16 weight-only matmul cases");
}

TEST_CASE("batched f32, bf16 and f16 matmuls of two activations keep the reference's rounding order") {
  // bf16 and f16 operands widen to f32 exactly and each result rounds once, as the reference's.
  std::mt19937 rng(47);
  std::uniform_real_distribution<float> mag(-3.0f, 3.0f);
  auto random_values = [&](const std::vector<int64_t>& dims, const std::string& kind) {
    auto t = qrt::parse_type("tensor<" + qrt_test::shape(dims) + kind + ">");
    REQUIRE(t.is_ok());
    qrt::Tensor x = qrt::Tensor::zeros(*t);
    for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
      // Magnitudes over many decades, so that the summation order shows.
      x.set_float(i, double(mag(rng) * std::pow(10.0f, float(int(rng() % 9) - 4))));
    }
    return x;
  };
  struct Shapes {
    std::vector<int64_t> a, b, y;
  };
  // Attention shapes (heads as a batch), broadcast batches on either side, a plain 2-D
  // activation product, tails of the 4-row tiles and 16-column panels, K = 1.
  const std::vector<Shapes> cases = {
      {{2, 4, 16, 8}, {2, 4, 8, 16}, {2, 4, 16, 16}}, {{1, 3, 9, 5}, {1, 3, 5, 17}, {1, 3, 9, 17}},
      {{3, 7, 6}, {1, 6, 5}, {3, 7, 5}},             {{2, 1, 5, 3}, {4, 3, 2}, {2, 4, 5, 2}},
      {{5, 33}, {33, 18}, {5, 18}},                   {{2, 6, 1}, {2, 1, 40}, {2, 6, 40}}};
  int with_bias = 0;
  for (const std::string kind : {"f32", "bf16", "f16"}) {
    for (const Shapes& c : cases) {
      for (bool bias : {false, true}) {
        const std::string at = "tensor<" + qrt_test::shape(c.a) + kind + ">", bt = "tensor<" + qrt_test::shape(c.b) + kind + ">";
        const std::string yt = "tensor<" + qrt_test::shape(c.y) + kind + ">";
        std::string text = "func.func @main(%a: " + at + ", %b: " + bt + ") -> " + yt + " {\n";
        std::string operands = "%a, %b", types = at + ", " + bt, attrs;
        if (bias) {
          // A constant bias added after each k-ordered sum, then a fused clamp (StableHLO's
          // matmuls of two activations need both).
          const int64_t n = c.y.back();
          const std::string ct = "tensor<" + std::to_string(n) + "x" + kind + ">";
          std::string values;
          for (int64_t j = 0; j < n; ++j) values += (j ? ", " : "") + std::to_string(mag(rng) * 0.01f);  // rounded to the type
          text += "  %c = \"qrt.constant\"() {value = dense<[" + values + "]> : " + ct + "} : () -> " + ct + "\n";
          operands += ", %c", types += ", " + ct;
          attrs = " {clamp_max = 0.5 : f64, clamp_min = -0.25 : f64}";
        }
        text += "  %y = \"qrt.matmul\"(" + operands + ")" + attrs + " : (" + types + ") -> " + yt + "\n  return %y : " + yt +
                "\n}\n";
        CAPTURE(text);
        const std::string how = qrt_test::check_last_op(text, {random_values(c.a, kind), random_values(c.b, kind)});
        CHECK(how.find("f32_f32_f32_gemm") == 0);
        CHECK(how.find("batched") != std::string::npos);
        if (kind != "f32") CHECK_MESSAGE(how.find(kind + " operands widened to f32") != std::string::npos, how);
        with_bias += how.find("bias added after the sum") != std::string::npos;
      }
    }
  }
  CHECK(with_bias == 3 * int(cases.size()));
}

TEST_CASE("quantized matmuls of two activations (batched, broadcast) run on the GEMM kernels, bit-exact") {
  // The right-hand side is a function argument: packed per run. Attention shapes, broadcast
  // batches on either side, panel and tile tails, K = 1; random quantization (per-axis along N,
  // extreme zero points, fused clamps, int32 accumulator results, a bias); right-hand values
  // sometimes near their zero points, so that a level with the pair-sum path takes it for them.
  std::mt19937 rng(53);
  struct Shapes {
    std::vector<int64_t> a, b, y;
  };
  const std::vector<Shapes> shapes = {
      {{2, 4, 16, 8}, {2, 4, 8, 16}, {2, 4, 16, 16}}, {{1, 3, 9, 5}, {1, 3, 5, 17}, {1, 3, 9, 17}},
      {{3, 7, 6}, {1, 6, 5}, {3, 7, 5}},             {{2, 1, 5, 3}, {4, 3, 2}, {2, 4, 5, 2}},
      {{5, 33}, {33, 18}, {5, 18}},                   {{2, 6, 1}, {2, 1, 40}, {2, 6, 40}},
      {{7, 64}, {3, 64, 35}, {3, 7, 35}},             {{3, 13, 72}, {72, 40}, {3, 13, 40}}};
  int cases = 0;
  for (int round = 0; round < 32; ++round) {
    const Shapes& sh = shapes[size_t(round) % shapes.size()];
    const int64_t k = sh.a.back(), n = sh.b.back();
    const int rank = int(sh.y.size());
    qrt_test::QuantCase q = qrt_test::random_quant_case(rng, k, n, int(sh.b.size()) - 1, rank - 1);
    using qrt_test::shape;
    const std::string at = "tensor<" + shape(sh.a) + q.x.type() + ">", bt = "tensor<" + shape(sh.b) + q.w.type() + ">";
    auto acc_scales = [&] {
      std::string s;
      for (int64_t j = 0; j < n; ++j) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "%s%.17g", j ? ", " : "", q.x.scales[0] * q.w.scales[q.w.scales.size() == 1 ? 0 : size_t(j)]);
        s += buf;
      }
      return s;
    };
    const std::string yt = q.accumulator_out ? "tensor<" + shape(sh.y) + "!quant.uniform<i32:f32:" + std::to_string(rank - 1) +
                                                   ", {" + acc_scales() + "}>>"
                                             : "tensor<" + shape(sh.y) + q.out.type() + ">";
    std::string text = "func.func @main(%a: " + at + ", %b: " + bt + ") -> " + yt + " {\n";
    std::string operands = "%a, %b", types = at + ", " + bt;
    if (q.bias) {
      std::vector<uint8_t> bytes;
      for (int64_t j = 0; j < n; ++j) {
        const int32_t b = std::uniform_int_distribution<int32_t>(-100000, 100000)(rng);
        bytes.resize(bytes.size() + 4);
        std::memcpy(bytes.data() + bytes.size() - 4, &b, 4);
      }
      const std::string biast = "tensor<" + std::to_string(n) + "x!quant.uniform<i32:f32:0, {" + acc_scales() + "}>>";
      text += "  %c = \"qrt.constant\"() {value = " + qrt_test::hex_dense(bytes) + " : tensor<" + std::to_string(n) +
              "xi32>} : () -> " + biast + "\n";
      operands += ", %c";
      types += ", " + biast;
    }
    const std::string attrs = q.clamp_attrs.empty() || q.accumulator_out ? "" : " {" + q.clamp_attrs.substr(2) + "}";
    text += "  %y = \"qrt.matmul\"(" + operands + ")" + attrs + " : (" + types + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
    CAPTURE(text);
    auto make = [&](const std::string& type, const QuantSpec& spec, bool near_zero_point) {
      auto t = qrt::parse_type(type);
      REQUIRE(t.is_ok());
      qrt::Tensor v = qrt::Tensor::zeros(*t);
      const size_t count = size_t(v.num_elements()), last = size_t(t->dims.back());
      for (size_t i = 0; i < count; ++i) {
        const int zp = spec.zps[spec.zps.size() == 1 ? 0 : i % last];
        const int lo = near_zero_point ? std::max(spec.lo, zp - 20) : spec.lo, hi = near_zero_point ? std::min(spec.hi, zp + 20) : spec.hi;
        v.set_int(i, qrt_test::random_values(rng, 1, lo, hi)[0]);
      }
      return v;
    };
    const std::string how = qrt_test::check_last_op(text, {make(at, q.x, false), make(bt, q.w, round % 3 == 0)});
    CHECK_MESSAGE(how.find("_gemm_") != std::string::npos, how);
    CHECK_MESSAGE(how.find("right-hand side packed per run") != std::string::npos, how);
    ++cases;
  }
  MESSAGE(cases << " matmuls of two quantized activations");
}

namespace {

// A scalar-level backend that offers one GEMM path with the AArch64 tiles' traits and runs
// the twins: pack_gemm's layout for that path (k group, sdot4's activation offset folded into
// the bias, rows read unpacked) is then tested on every host, not only under qemu.
class OnePathBackend final : public qrt::jit::Backend {
 public:
  explicit OnePathBackend(qrt::jit::GemmPath path) : path_(path) {}
  const char* name() const override { return "one-path"; }
  qrt::jit::Isa isa() const override { return qrt::jit::Isa::kScalar; }
  bool available() const override { return true; }
  std::optional<qrt::jit::GemmTraits> gemm_traits(qrt::jit::GemmPath path) const override {
    if (path != path_) return std::nullopt;
    return qrt::jit::GemmTraits{4, 16, qrt::jit::gemm_path_k_group(path), 1, false};
  }
  qrt::jit::DepthwiseTraits depthwise_traits() const override { return {16, 0}; }
  qrt::jit::StreamTraits stream_traits() const override { return {8}; }
  std::string why_not(const qrt::jit::KernelDesc&) const override { return "generates nothing: the twins serve"; }
  qrt::Result<std::shared_ptr<const qrt::jit::CompiledKernel>> generate(const qrt::jit::KernelDesc& d) const override {
    return qrt::Status::error(d.name() + ": " + why_not(d));
  }

 private:
  qrt::jit::GemmPath path_;
};

}  // namespace

TEST_CASE("the AArch64 GEMM paths' packing (mlal, sdot4, usmmla8) gives the widened path's bytes") {
  using qrt::jit::GemmPath;
  using qrt::jit::OutKind;
  std::mt19937 rng(2811);
  int cases = 0, unpacked = 0;
  for (GemmPath path : {GemmPath::kMlal, GemmPath::kSdot4, GemmPath::kUsmmla8}) {
    const OnePathBackend backend(path);
    for (int i = 0; i < 48; ++i) {
      qrt::jit::GemmSpec s;
      s.k = int64_t(1 + rng() % 70), s.n = int64_t(1 + rng() % 40);
      if (i % 4 == 0) s.k = 8 * int64_t(1 + rng() % 8);  // whole k groups: rows may be read unpacked
      s.a_signed = rng() % 2;
      s.a_min = s.a_signed ? -128 : 0, s.a_max = s.a_signed ? 127 : 255;
      s.a_zero_point = s.a_min + int32_t(rng() % 256);
      s.w_signed = rng() % 2;
      const bool wzp = rng() % 2;
      s.out = OutKind(rng() % 4);
      for (int64_t j = 0; j < s.n; ++j) {
        s.w_zero_point.push_back(wzp ? int32_t(rng() % 7) - 3 + (s.w_signed ? 0 : 128) : (s.w_signed ? 0 : 128));
        s.bias.push_back(int64_t(rng() % 20001) - 10000);
        s.multiplier.push_back(s.out == OutKind::kS32 ? 1.0f : std::ldexp(1.0f + float(rng() % 100) / 100, -int(8 + rng() % 6)));
        const int32_t lo = s.out == OutKind::kS8 ? -128 : 0;
        s.out_zero_point.push_back(lo + int32_t(rng() % 256));
        s.out_lo.push_back(lo);
        s.out_hi.push_back(lo + 255);
      }
      for (int64_t e = 0; e < s.k * s.n; ++e) s.w.push_back(s.w_signed ? int32_t(rng() % 256) - 128 : int32_t(rng() % 256));
      const qrt::jit::GemmAnalysis analysis = qrt::jit::analyze_gemm(s);
      REQUIRE(analysis.why_not.empty());
      auto fast = qrt::jit::GemmKernel::create(s, analysis, backend);
      auto widened = qrt::jit::GemmKernel::create(s, analysis, qrt::jit::scalar_backend());
      REQUIRE(fast.is_ok());
      REQUIRE(widened.is_ok());
      CHECK((*fast)->packed().path == path);
      unpacked += (*fast)->packed().reads_rows_unpacked();
      const int64_t m = int64_t(1 + rng() % 9);
      std::vector<uint8_t> a(size_t(m * s.k));
      for (auto& x : a) x = uint8_t(rng());
      const int64_t ldc = s.n * (*fast)->out_bytes();
      std::vector<uint8_t> c1(size_t(m * ldc), 0x5A), c2(size_t(m * ldc), 0xA5);
      (*fast)->run(a.data(), m, s.k, c1.data(), ldc, qrt::jit::serial());
      (*widened)->run(a.data(), m, s.k, c2.data(), ldc, qrt::jit::serial());
      CHECK_MESSAGE(c1 == c2, (*fast)->name() << " k " << s.k << " n " << s.n << " m " << m);
      ++cases;
    }
  }
  MESSAGE(cases << " GEMMs, " << unpacked << " reading rows unpacked");
  CHECK(unpacked > 0);
}

TEST_CASE("matmul under the tflite and onnx profiles: kernel accumulators, the profile's requantization") {
  std::mt19937 rng(31);
  int cases = 0;
  for (const char* profile : {"tflite", "tflite-single-rounding", "onnx"}) {
    CAPTURE(std::string(profile));
    for (int64_t m : {1, 3, 13}) {
      for (int64_t k : {5, 64, 131}) {
        for (int64_t n : {7, 17, 40}) {
          const MatmulCase c = random_case(rng, m, k, n);
          const std::string text = qrt_test::with_profile(matmul_text(c, rng, 255), profile);
          CAPTURE(text);
          const std::string how = qrt_test::check_last_op(text, random_input(c, rng, {m, k}));
          // The profile's requantization after the kernel, or (tflite, where the level's tiles have
          // it) in the tiles' epilogue.
          if (how.find("requantization") != std::string::npos || how.find("_q31__") != std::string::npos) ++cases;
        }
      }
    }
  }
  // Worth several tasks at three threads (check_last_op runs three too): few rows split the
  // weight panels (the accumulators go to the requantization after every panel is done), more
  // rows go block by block.
  // On a slow host (qemu, sanitizers) the double-rounding profile only: the two differ only in
  // the requantization kernel, which the cases above cover in both.
  for (const char* profile : {"tflite", "tflite-single-rounding"}) {
    if (qrt_test::slow_host() && std::string(profile) != "tflite") continue;
    for (int64_t m : {2, 77}) {
      MatmulCase c = random_case(rng, m, 1024, 520);
      const std::string text = qrt_test::with_profile(matmul_text(c, rng, 255), profile);
      const std::string how = qrt_test::check_last_op(text, random_input(c, rng, {m, 1024}));
      if (how.find("q31requant") != std::string::npos || how.find("_q31__") != std::string::npos) ++cases;
    }
  }
  MESSAGE(cases << " profile matmul cases requantized by the profile");
  CHECK(cases > 40);  // the rest have int32 accumulator results, the same in every profile
}

TEST_CASE("matmul under stablehlo: dequantized operands on the f32 GEMM, then StableHLO's quantize") {
  // Per-channel weights, biases, fused clamps, saturation and i32 results, as above; the
  // weights and bias dequantized at plan time, the activations through a byte table.
  std::mt19937 rng(37);
  int cases = 0;
  for (int64_t m : {1, 3, 13}) {
    for (int64_t k : {5, 64, 131}) {
      for (int64_t n : {7, 17, 40}) {
        const MatmulCase c = random_case(rng, m, k, n);
        const std::string text = qrt_test::with_profile(matmul_text(c, rng, 255), "stablehlo");
        CAPTURE(text);
        const std::string how = qrt_test::check_last_op(text, random_input(c, rng, {m, k}));
        CHECK_MESSAGE(how.find("stablehlo dequantize-op-quantize: dequantize (1 byte table), f32_f32_f32_gemm") == 0, how);
        cases += how.find("stablehlo") == 0;
      }
    }
  }
  CHECK(cases == 27);
}
