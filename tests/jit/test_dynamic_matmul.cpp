// Tests: matmuls with activations = "dynamic_i8" (docs/numerics.md, "Dynamic i8 activations").
// The activation quantization by hand; the verifier's rules; and the kDynGemm kernels of the
// level under test bit-exact with the reference on random cases: 4- and 8-bit weights, signed
// and unsigned, per-layer, per-column and block-wise parameters (blocks that are and are not
// multiples of 8, blocks along N too), zero points at the storage bounds, row counts across the
// row groups and the 64-row chunk, column tails, bias, fused clamps, and rows that are zero,
// subnormal, huge or hold NaN or infinity.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir/float_format.h"
#include "ir/numerics.h"
#include "ir/numerics_dynamic.h"
#include "ir/ops.h"
#include "ir/text_format.h"
#include "jit/core/microkernel.h"
#include "op_kernel_check.h"

namespace {

using namespace qrt;

struct DynCase {
  int64_t m = 1, k = 1, n = 1;
  unsigned bits = 4;
  bool is_signed = true;
  int form = 0;             // 0 per-layer, 1 per column, 2 blocks along K, 3 blocks along K and N
  int64_t block = 32;       // forms 2 and 3
  int zp_kind = 0;          // 0 zero, 1 random, 2 the storage's bounds
  /// 0 any f32 value; 1 normal f16 values (llama.cpp's Q4_0, f16 MatMulNBits): the records
  /// hold f16 scales; 2 f16 values, the first subnormal in f16: the records keep f32 scales.
  int scale_kind = 0;
  bool bias = false, clamp = false;
  FloatKind fk = FloatKind::kF32;  // activations, the weights' expressed type, bias and result
};

// The weights' type; *f16_scales: whether every compute scale is a normal f16 value (the
// records then hold f16 scales), judged apart from the packer.
ElementType weight_type(const DynCase& c, std::mt19937& rng, bool* f16_scales) {
  const QuantStorage s = QuantStorage::full_range(c.bits, c.is_signed);
  bool first_scale = true;
  *f16_scales = true;
  auto zp = [&]() -> int64_t {
    if (c.zp_kind == 0) return c.is_signed ? 0 : (int64_t(1) << (c.bits - 1));
    if (c.zp_kind == 2) return rng() % 2 ? s.min : s.max;
    return std::uniform_int_distribution<int64_t>(s.min, s.max)(rng);
  };
  auto scale = [&] {
    const bool first = std::exchange(first_scale, false);
    double v = std::ldexp(1.0 + double(rng() % 1000) / 1000.0, int(rng() % 12) - 10);
    if (c.scale_kind == 2 && first) v = std::ldexp(1.0 + double(rng() % 4) / 4.0, -20);  // f16 subnormal
    else if (c.scale_kind >= 1) v = std::ldexp(1.0 + double(rng() % 1024) / 1024.0, int(rng() % 12) - 10);
    const float f = numerics::compute_scale_f32(v, c.fk);
    *f16_scales = *f16_scales && f >= 0x1p-14f && f16_bits_to_float(f16_bits_from_double(double(f))) == f;
    return v;
  };
  if (c.form == 0) return ElementType::make_uniform(s, c.fk, scale(), zp());
  if (c.form == 1) {
    std::vector<double> scales;
    std::vector<int64_t> zps;
    for (int64_t j = 0; j < c.n; ++j) scales.push_back(scale()), zps.push_back(zp());
    return ElementType::make_per_axis(s, c.fk, 1, std::move(scales), std::move(zps));
  }
  // Blocks along N divide N (the verifier's rule): 5, 2 or all of N.
  const int64_t bn = c.form != 3 ? 1 : c.n % 5 == 0 ? 5 : c.n % 2 == 0 ? 2 : c.n;
  const int64_t kb = (c.k + c.block - 1) / c.block, nb = (c.n + bn - 1) / bn;
  std::vector<double> scales;
  std::vector<int64_t> zps;
  for (int64_t i = 0; i < kb * nb; ++i) scales.push_back(scale()), zps.push_back(zp());
  return ElementType::make_sub_channel(s, c.fk, {0, 1}, {c.block, bn}, {kb, nb}, std::move(scales), std::move(zps));
}

// The graph text of a case: y = matmul(x, w (, b)) {activations = "dynamic_i8"}.
// *f16_scales: as weight_type says.
std::string dyn_text(const DynCase& c, std::mt19937& rng, bool* f16_scales) {
  Graph g;
  const ElementType f32 = ElementType::make_float(c.fk);
  const int x = g.add_input(Type::tensor({c.m, c.k}, f32), "x");
  const ElementType we = weight_type(c, rng, f16_scales);
  DenseElements d = DenseElements::zeros(Type::tensor({c.k, c.n}, ElementType::make_int(c.bits, Signedness::kSignless)));
  for (size_t i = 0; i < size_t(c.k * c.n); ++i) {
    d.set_int(i, std::uniform_int_distribution<int64_t>(we.storage.min, we.storage.max)(rng));
  }
  const int w = g.add_op(OpKind::kConstant, {}, {Type::tensor({c.k, c.n}, we)}, {{"value", Attribute::make_dense(std::move(d))}});
  std::vector<int> operands = {x, g.result(w)};
  if (c.bias) {
    DenseElements b = DenseElements::zeros(Type::tensor({c.n}, f32));
    for (size_t j = 0; j < size_t(c.n); ++j) {
      const double v = double(int(rng() % 2001) - 1000) / 64.0;
      if (c.fk == FloatKind::kF32) {
        const float f = float(v);
        std::memcpy(b.bytes.data() + j * 4, &f, 4);
      } else {
        const uint16_t bits = c.fk == FloatKind::kBF16 ? bf16_bits_from_double(v) : f16_bits_from_double(v);
        std::memcpy(b.bytes.data() + j * 2, &bits, 2);
      }
    }
    operands.push_back(g.result(g.add_op(OpKind::kConstant, {}, {Type::tensor({c.n}, f32)}, {{"value", Attribute::make_dense(std::move(b))}})));
  }
  std::vector<std::pair<std::string, Attribute>> attrs = {{"activations", Attribute::make_string("dynamic_i8")}};
  if (c.clamp) {
    attrs.push_back({"clamp_min", Attribute::make_float(-0.5, FloatKind::kF32)});
    attrs.push_back({"clamp_max", Attribute::make_float(2.0, FloatKind::kF32)});
  }
  const int y = g.add_op(OpKind::kMatmul, operands, {Type::tensor({c.m, c.n}, f32)}, attrs);
  g.outputs = {g.result(y)};
  return print_graph(g);
}

// Activations over many decades (stored rounded to the case's type); row 1 of 3 or more is all
// zero, row 2 subnormal (zero in f16); with
// `specials`, the last row holds a NaN and the one before an infinity.
Tensor dyn_input(const DynCase& c, std::mt19937& rng, bool specials) {
  Tensor x = Tensor::zeros(Type::tensor({c.m, c.k}, ElementType::make_float(c.fk)));
  std::uniform_real_distribution<float> mag(-1.0f, 1.0f);
  // f16 tops out at 65504: its rows span fewer decades (the specials below add infinities).
  const int decades = c.fk == FloatKind::kF16 ? 20 : 30;
  for (int64_t r = 0; r < c.m; ++r) {
    const float row_scale = std::ldexp(1.0f, int(rng() % unsigned(decades)) - decades / 2);
    for (int64_t kk = 0; kk < c.k; ++kk) {
      float v = mag(rng) * row_scale * (kk % 7 == 3 ? 100.0f : 1.0f);
      if (c.m >= 3 && r == 1) v = 0.0f;
      if (c.m >= 3 && r == 2) v = std::ldexp(mag(rng), -140);
      x.set_float(size_t(r * c.k + kk), double(v));
    }
  }
  if (specials && c.m >= 5) {
    x.set_float(size_t((c.m - 1) * c.k + c.k / 2), std::numeric_limits<double>::quiet_NaN());
    x.set_float(size_t((c.m - 2) * c.k), -std::numeric_limits<double>::infinity());
  }
  return x;
}

}  // namespace

TEST_CASE("dynamic i8 activation quantization: symmetric per block, ties to even, clamp, zero and non-finite blocks") {
  const float x[] = {127.0f, -63.5f, 62.5f, 0.4f, -0.5f, 1.5f};
  int8_t q[6];
  int32_t sum = 0;
  CHECK(numerics::quantize_block_i8(x, 6, q, &sum) == 1.0f);  // d = 127 / 127
  const int8_t want[] = {127, -64, 62, 0, 0, 2};
  for (int i = 0; i < 6; ++i) CHECK(q[i] == want[i]);
  CHECK(sum == 127 - 64 + 62 + 2);
  const float zeros[] = {0.0f, -0.0f, 0.0f};
  CHECK(numerics::quantize_block_i8(zeros, 3, q, &sum) == 0.0f);
  CHECK((q[0] == 0 && q[1] == 0 && q[2] == 0 && sum == 0));
  const float tiny[] = {1e-45f, -1e-45f};  // d = a / 127 underflows to 0: the block quantizes to 0
  CHECK(numerics::quantize_block_i8(tiny, 2, q, &sum) == 0.0f);
  CHECK((q[0] == 0 && q[1] == 0));
  const float nan_block[] = {1.0f, std::numeric_limits<float>::quiet_NaN(), 3.0f};
  CHECK(std::isnan(numerics::quantize_block_i8(nan_block, 3, q, &sum)));
  CHECK((q[0] == 0 && q[2] == 0 && sum == 0));
  const float inf_block[] = {1.0f, -INFINITY};
  CHECK(std::isnan(numerics::quantize_block_i8(inf_block, 2, q, &sum)));
  const float third[] = {3.0f, 1.0f, -2.0f};  // d = f32(3 / 127); 1 / d = 42.33 -> 42, -2 / d -> -85
  CHECK(numerics::quantize_block_i8(third, 3, q, &sum) == 3.0f / 127.0f);
  CHECK((q[0] == 127 && q[1] == 42 && q[2] == -85 && sum == 84));
}

TEST_CASE("activations = \"dynamic_i8\" is verified: value, hybrid f32/bf16/f16 matmul, at most 8 bits, scales per column or block") {
  auto verify = [](const std::string& wtype, const std::string& attr, const std::string& xtype = "tensor<2x4xf32>") {
    const std::string ytype = "tensor<2x3x" + xtype.substr(xtype.rfind('x') + 1);
    const std::string text = "func.func @main(%x: " + xtype + ", %w: " + wtype + ") -> " + ytype + " {\n"
                             "  %y = \"qrt.matmul\"(%x, %w) {activations = " + attr + "} : (" + xtype + ", " + wtype +
                             ") -> " + ytype + "\n  return %y : " + ytype + "\n}\n";
    auto g = parse_graph(text);
    return g.is_ok() ? std::string() : g.status().message();
  };
  const std::string per_column = "tensor<4x3x!quant.uniform<i4:f32:1, {0.5, 0.25:-1, 1.0}>>";
  CHECK(verify(per_column, "\"dynamic_i8\"").empty());
  CHECK(verify("tensor<4x3x!quant.uniform<u8:f32:{0:2, 1:1}, {{0.5:3, 0.25, 1.0}, {1.0, 2.0:200, 0.5}}>>", "\"dynamic_i8\"").empty());
  CHECK(verify(per_column, "\"dynamic_u8\"").find("must be \"dynamic_i8\"") != std::string::npos);
  CHECK(verify(per_column, "1 : i64").find("must be \"dynamic_i8\"") != std::string::npos);
  CHECK(verify("tensor<4x3x!quant.uniform<i16:f32, 0.5>>", "\"dynamic_i8\"").find("at most 8 bits") != std::string::npos);
  // Blocks beyond 65536 values could overflow the int32 block sums.
  const std::string big = "tensor<131088x3x!quant.uniform<i8:f32:{0:65544, 1:3}, {{0.5}, {0.5}}>>";
  CHECK(verify(big, "\"dynamic_i8\"", "tensor<2x131088xf32>").find("at most 65536 k values") != std::string::npos);
  CHECK(verify("tensor<4x3xf32>", "\"dynamic_i8\"").find("needs f32, bf16 or f16 activations times quantized weights") != std::string::npos);
  CHECK(verify("tensor<4x3x!quant.uniform<i8:f16, 0.5>>", "\"dynamic_i8\"", "tensor<2x4xf16>").empty());
  CHECK(verify("tensor<4x3x!quant.uniform<u4:bf16, 0.5:8>>", "\"dynamic_i8\"", "tensor<2x4xbf16>").empty());
  CHECK(verify("tensor<4x3x!quant.uniform<i8:f64, 0.5>>", "\"dynamic_i8\"", "tensor<2x4xf64>")
            .find("needs f32, bf16 or f16 activations") != std::string::npos);
}

TEST_CASE("dynamic i8 matmul kernels are bit-exact with the reference") {
  std::mt19937 rng(2026);
  int cases = 0;
  const int64_t ms[] = {1, 2, 3, 4, 5, 7, 9, 70};
  const int64_t ks[] = {5, 32, 40, 100, 257};
  const int64_t ns[] = {1, 17, 64, 100, 130};
  const int64_t blocks[] = {32, 20, 64, 7, 128};
  int f16_cases = 0, zp_bytes = 0;
  for (int i = 0; i < 72; ++i) {
    DynCase c;
    c.bits = i % 2 ? 4 : 8;
    c.is_signed = i % 4 < 2;
    c.form = i / 4 % 4;
    c.m = ms[size_t(i) % 8];
    c.k = ks[size_t(i / 3) % 5];
    c.n = ns[size_t(i / 5) % 5];
    if (c.form >= 2) {  // blocks divide K (the verifier's rule); 20 and 7 are not multiples of 8
      c.block = blocks[size_t(i / 7) % 5];
      c.k = c.block * (1 + i % 4);
    }
    c.zp_kind = i / 2 % 3;
    c.scale_kind = i / 5 % 3;
    c.bias = i % 3 == 0;
    c.clamp = i % 5 == 0;
    bool f16_scales = false;
    const std::string text = dyn_text(c, rng, &f16_scales);
    CAPTURE(text.substr(0, 600));
    const Tensor x = dyn_input(c, rng, i % 6 == 1);
    const std::string how = qrt_test::check_last_op(text, x);
    const std::string expect = std::string("f32_") + (c.is_signed ? "qs" : "qu") + std::to_string(c.bits) + "w";
    CHECK_MESSAGE(how.find(expect) == 0, how);
    CHECK_MESSAGE(how.find("_dyngemm") != std::string::npos, how);
    // The record format: f16 scales exactly where every scale is a normal f16 (kind 1 always,
    // kind 2 never); zero-point bytes only where the zero points differ (one for all, as 0 or
    // unsigned storage's middle, goes in the kernel's description).
    if (c.scale_kind == 1) CHECK(f16_scales);
    if (c.scale_kind == 2) CHECK(!f16_scales);
    CHECK_MESSAGE((how.find(" f16 scales") != std::string::npos) == f16_scales, how);
    CHECK_MESSAGE((how.find("_h_f32_dyngemm") != std::string::npos) == f16_scales, how);
    if (c.zp_kind == 0 || c.form == 0) CHECK_MESSAGE(how.find("zero points") == std::string::npos, how);
    if (c.zp_kind == 1 && c.form != 0 && c.n >= 17) CHECK_MESSAGE(how.find("and zero points") != std::string::npos, how);
    zp_bytes += how.find("and zero points") != std::string::npos;
    f16_cases += f16_scales;
    ++cases;
  }
  MESSAGE(cases << " dynamic i8 matmul cases, " << f16_cases << " with f16 scales, " << zp_bytes << " with zero-point bytes");
  CHECK(f16_cases >= 20);
  CHECK(zp_bytes >= 10);
}

TEST_CASE("dynamic i8 matmul kernels with bf16 and f16 activations and results are bit-exact with the reference") {
  // The activations widen to f32 exactly and the f32 result rounds once (docs/numerics.md), so
  // the kernels match the reference on the same cases as f32, weights expressed in that type.
  std::mt19937 rng(2611);
  const int64_t ms[] = {1, 3, 5, 6, 70};
  const int64_t ns[] = {1, 17, 64, 130};
  for (int i = 0; i < 32; ++i) {
    DynCase c;
    c.fk = i % 2 ? FloatKind::kBF16 : FloatKind::kF16;
    c.bits = i / 2 % 2 ? 4 : 8;
    c.is_signed = i / 4 % 2 == 0;
    c.form = i / 3 % 4;
    c.m = ms[size_t(i) % 5];
    c.n = ns[size_t(i / 5) % 4];
    c.k = c.form >= 2 ? c.block * (1 + i % 3) : 40 + i;
    c.zp_kind = i % 3;
    c.scale_kind = i / 7 % 2;
    c.bias = i % 3 != 1;
    c.clamp = i % 4 == 1;
    bool f16_scales = false;
    const std::string text = dyn_text(c, rng, &f16_scales);
    CAPTURE(text.substr(0, 600));
    const Tensor x = dyn_input(c, rng, i % 5 == 2);
    const std::string how = qrt_test::check_last_op(text, x);
    CHECK_MESSAGE(how.find("_dyngemm") != std::string::npos, how);
    CHECK_MESSAGE(how.find(std::string(float_kind_name(c.fk)) + " activations widened to f32") != std::string::npos, how);
    CHECK_MESSAGE(how.find(std::string("results rounded once to ") + float_kind_name(c.fk)) != std::string::npos, how);
    CHECK_MESSAGE((how.find(" f16 scales") != std::string::npos) == f16_scales, how);
  }
}

TEST_CASE("dynamic i8 records widen every positive normal f16 scale exactly") {
  // The kernels widen f16 scales by rebiasing the exponent (f32_of_normal_f16), which is exact
  // only for positive normal values — the only ones the packer stores.
  int checked = 0;
  for (uint32_t h = 0x0400; h < 0x7C00; ++h) {
    const uint8_t bytes[2] = {uint8_t(h), uint8_t(h >> 8)};
    REQUIRE(qrt::jit::dyn_record_scale(bytes, 0, true) == f16_bits_to_float(uint16_t(h)));
    ++checked;
  }
  CHECK(checked == 30720);
}
