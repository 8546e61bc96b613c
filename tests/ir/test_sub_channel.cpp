// Tests: sub-channel (block-wise) `!quant.uniform` types — upstream MLIR's syntax, its printer's
// canonical form and its container rules (mlir-opt-19 predates the type, so these forms come
// from upstream's printer and verifier, not the oracle) — and 4-bit constants packed two per
// byte in dense elements, the text form and .qrt blobs.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "ir/binary_format.h"
#include "ir/qrt_format_generated.h"
#include "ir/text_format.h"
#include "ir/types.h"

namespace {

struct Case {
  const char* input;
  const char* canonical;   // nullptr: invalid
  const char* diagnostic;  // nullptr: valid
};

const Case kSubChannelCases[] = {
    {"tensor<3x4x!quant.uniform<i8:f32:{0:1, 1:2}, {{2.0:10, 3.0:20}, {4.0:30, 5.0:40}, {6.0:50, 7.0:60}}>>",
     "tensor<3x4x!quant.uniform<i8:f32:{0:1, 1:2}, {{2.000000e+00:10, 3.000000e+00:20}, {4.000000e+00:30, "
     "5.000000e+00:40}, {6.000000e+00:50, 7.000000e+00:60}}>>",
     nullptr},
    {"tensor<?x?x!quant.uniform<u16:f32:{0:1,1:2}, {{2.0:10, 3.0:20}, {4.0:30, 5.0:40}}>>",
     "tensor<?x?x!quant.uniform<u16:f32:{0:1, 1:2}, {{2.000000e+00:10, 3.000000e+00:20}, {4.000000e+00:30, "
     "5.000000e+00:40}}>>",
     nullptr},
    // The LLM form: 4-bit weights, blocks of 2 along the reduction (first) axis, per column.
    {"tensor<4x2x!quant.uniform<i4:f32:{0:2, 1:1}, {{0.5, 0.25:-1}, {1.0:3, 2.0}}>>",
     "tensor<4x2x!quant.uniform<i4:f32:{0:2, 1:1}, {{5.000000e-01, 2.500000e-01:-1}, {1.000000e+00:3, "
     "2.000000e+00}}>>",
     nullptr},
    {"tensor<2x6x!quant.uniform<u4:bf16:{1:3}, {{1.0:8, 2.0:8}}>>",
     "tensor<2x6x!quant.uniform<u4:bf16:{1:3}, {{1.000000e+00:8, 2.000000e+00:8}}>>", nullptr},
    {"tensor<2x6x!quant.uniform<u4:bf16:{1:3}, {{1.0:8, 2.0:8}, {1.0, 2.0}}>>", nullptr,
     "<input>:1:1: error: dimension 0 is not quantized, so the scales' extent along it must be 1, got 2"},
    {"tensor<?x?x!quant.uniform<i8:f32:{}, {{2.0:127}}>>",
     "tensor<?x?x!quant.uniform<i8:f32:{}, {{2.000000e+00:127}}>>", nullptr},
    {"tensor<3x5x!quant.uniform<i8:f32:{1:2}, {{1.0, 2.0}}>>", nullptr,
     "<input>:1:1: error: tensor dimension size 5 at axis 1 must be divisible by the corresponding block size 2"},
    {"tensor<4x4x!quant.uniform<i8:f32:{1:2}, {{1.0, 2.0, 3.0}}>>", nullptr,
     "<input>:1:1: error: dimension size 3 of the scales at axis 1 should match (tensor dimension / block size) = 2"},
    {"tensor<4x!quant.uniform<i8:f32:{0:2}, {{1.0, 2.0}}>>", nullptr,
     "<input>:1:1: error: the scales of !quant.uniform<i8:f32:{0:2}, {{1.000000e+00, 2.000000e+00}}> have rank 2, "
     "which must match the rank of the tensor 1"},
    {"tensor<0x4x!quant.uniform<i8:f32:{1:2}, {{1.0, 2.0}}>>", nullptr,
     "<input>:1:1: error: tensor<0x4x!quant.uniform<i8:f32:{1:2}, {{1.000000e+00, 2.000000e+00}}>>: a dimension of "
     "size zero is not allowed with sub-channel quantization"},
    {"!quant.uniform<i8:f32:{0:1}, {1.0}>", nullptr,
     "<input>:1:1: error: scalar types may not use sub-channel quantization (!quant.uniform<i8:f32:{0:1}, "
     "{1.000000e+00}>)"},
    {"tensor<4x4x!quant.uniform<i8:f32:{1:2, 1:2}, {{1.0, 2.0}}>>", nullptr,
     "<input>:1:12: error: duplicate quantized dimension 1 in the block sizes"},
    {"tensor<4x4x!quant.uniform<i8:f32:{1:0}, {{1.0, 2.0}}>>", nullptr,
     "<input>:1:12: error: illegal block size 0 for quantized dimension 1 (must be > 0)"},
    {"tensor<4x4x!quant.uniform<i8:f32:{1:2}, {{1.0, 2.0}, {3.0}}>>", nullptr,
     "<input>:1:53: error: sub-channel scale tensor is invalid; ranks or sizes are not consistent between elements"},
    {"tensor<4x4x!quant.uniform<i8:f32:{1:2}, {{1.0, 0.0}}>>", nullptr,
     "<input>:1:12: error: illegal scale of block 1: 0.000000e+00 (scale must be finite and > 0)"},
    {"tensor<4x4x!quant.uniform<i4:f32:{1:2}, {{1.0, 1.0:8}}>>", nullptr,
     "<input>:1:12: error: zero point 8 of block 1 is outside the storage bounds [-8, 7]"},
    {"tensor<4x4x!quant.uniform<i8:f32:{1:2}, {{1.0, 2.0}>>", nullptr,
     "<input>:1:52: error: expected '}' to close a level of the sub-channel scale tensor, found '>>'"},
};

}  // namespace

TEST_CASE("sub-channel types: upstream MLIR's canonical form or an exact diagnostic") {
  for (const Case& c : kSubChannelCases) {
    CAPTURE(std::string(c.input));
    auto parsed = qrt::parse_type(c.input);
    if (c.canonical) {
      REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
      CHECK(parsed->to_string() == c.canonical);
      auto again = qrt::parse_type(parsed->to_string());
      REQUIRE(again.is_ok());
      CHECK(*again == *parsed);
      CHECK(parsed->element.is_sub_channel());
      CHECK_FALSE(parsed->element.is_uniform());
    } else {
      REQUIRE_FALSE(parsed.is_ok());
      CHECK(parsed.status().to_string() == c.diagnostic);
    }
  }
}

TEST_CASE("sub-channel types transpose with their blocks and parameters") {
  auto t = qrt::parse_type("tensor<4x6x!quant.uniform<i8:f32:{0:2, 1:3}, {{1.0, 2.0}, {3.0:1, 4.0:2}}>>");
  REQUIRE(t.is_ok());
  const qrt::ElementType p = t->element.permuted({1, 0});
  CHECK(p.to_string() == "!quant.uniform<i8:f32:{1:2, 0:3}, {{1.000000e+00, 3.000000e+00:1}, {2.000000e+00, 4.000000e+00:2}}>");
  qrt::Type tt = *t;
  tt.dims = {6, 4};
  tt.element = p;
  CHECK(tt.verify().is_ok());
  CHECK(p.permuted({1, 0}) == t->element);
}

TEST_CASE("4-bit dense elements are packed two per byte, low nibble first") {
  qrt::DenseElements d = qrt::DenseElements::zeros(qrt::Type::tensor({5}, qrt::ElementType::make_int(4)));
  REQUIRE(d.size() == 3);
  const int64_t v[] = {-8, 7, -1, 0, 5};
  for (size_t i = 0; i < 5; ++i) d.set_int(i, v[i]);
  CHECK(d.bytes[0] == 0x78);
  CHECK(d.bytes[1] == 0x0F);
  CHECK(d.bytes[2] == 0x05);
  for (size_t i = 0; i < 5; ++i) CHECK(d.int_at(i) == v[i]);
  qrt::DenseElements u = qrt::DenseElements::zeros(
      qrt::Type::tensor({2}, qrt::ElementType::make_int(4, qrt::Signedness::kUnsigned)));
  u.set_int(0, 15);
  u.set_int(1, 9);
  CHECK(u.int_at(0) == 15);
  CHECK(u.int_at(1) == 9);
  CHECK(u.bytes[0] == 0x9F);
}

TEST_CASE("4-bit constants: text (one hex byte per element, as MLIR) and .qrt (packed) round trips") {
  // 80 elements print as hex (over the threshold); 3 as a list.
  std::string hex = "0x";
  for (int i = 0; i < 80; ++i) hex += (i % 3 == 0) ? "0F" : (i % 3 == 1) ? "07" : "08";
  const std::string text =
      "func.func @main() -> (tensor<80xi4>, tensor<3xui4>) {\n"
      "  %0 = \"qrt.constant\"() {value = dense<\"" + hex + "\"> : tensor<80xi4>} : () -> tensor<80xi4>\n"
      "  %1 = \"qrt.constant\"() {value = dense<[1, 15, 0]> : tensor<3xui4>} : () -> tensor<3xui4>\n"
      "  return %0, %1 : tensor<80xi4>, tensor<3xui4>\n"
      "}\n";
  auto g = qrt::parse_graph(text, "t.mlir");
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  const qrt::DenseElements& d = g->ops[0].attr("value")->dense;
  CHECK(d.size() == 40);
  CHECK(d.int_at(0) == -1);
  CHECK(d.int_at(1) == 7);
  CHECK(d.int_at(2) == -8);
  const std::string printed = qrt::print_graph(*g);
  CHECK(printed.find(hex) != std::string::npos);
  CHECK(printed.find("dense<[1, 15, 0]> : tensor<3xui4>") != std::string::npos);
  auto bin = qrt::write_binary_graph(*g, "qrt test");
  REQUIRE(bin.is_ok());
  auto owner = std::make_shared<std::string>(*bin);
  auto back = qrt::read_binary_graph(owner, reinterpret_cast<const uint8_t*>(owner->data()), owner->size(), "t.qrt");
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  CHECK(back->ops[0].attr("value")->dense.size() == 40);
  CHECK(back->ops[0].attr("value")->dense.is_view());
  CHECK(qrt::print_graph(*back) == printed);
}

TEST_CASE("a sub-channel weight survives .qrt; other ops refuse the type by name") {
  const std::string w_type = "tensor<4x2x!quant.uniform<i4:f32:{0:2, 1:1}, {{5.000000e-01, 2.500000e-01:-1}, "
                             "{1.000000e+00:3, 2.000000e+00}}>>";
  const std::string text =
      "func.func @main(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {\n"
      "  %w = \"qrt.constant\"() {value = dense<[[1, -2], [3, 4], [-8, 7], [0, 5]]> : tensor<4x2xi4>} : () -> " + w_type + "\n"
      "  %y = \"qrt.matmul\"(%x, %w) : (tensor<1x4xf32>, " + w_type + ") -> tensor<1x2xf32>\n"
      "  return %y : tensor<1x2xf32>\n"
      "}\n";
  auto g = qrt::parse_graph(text, "t.mlir");
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  auto bin = qrt::write_binary_graph(*g, "qrt test");
  REQUIRE(bin.is_ok());
  auto owner = std::make_shared<std::string>(*bin);
  auto back = qrt::read_binary_graph(owner, reinterpret_cast<const uint8_t*>(owner->data()), owner->size(), "t.qrt");
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  CHECK(qrt::print_graph(*back) == qrt::print_graph(*g));

  const std::string relu =
      "func.func @main() -> " + w_type + " {\n"
      "  %w = \"qrt.constant\"() {value = dense<0> : tensor<4x2xi4>} : () -> " + w_type + "\n"
      "  %y = \"qrt.relu\"(%w) : (" + w_type + ") -> " + w_type + "\n"
      "  return %y : " + w_type + "\n"
      "}\n";
  auto bad = qrt::parse_graph(relu, "t.mlir");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "'qrt.relu' op operand 0 has the sub-channel quantized type " + w_type +
                                      ", which only constants, quant casts, transposes and the weights (rhs) of a "
                                      "hybrid qrt.matmul may use");
}

TEST_CASE(".qrt version 1 files hold 4-bit values one per byte and are repacked on reading") {
  namespace fb = qrt::fb;
  flatbuffers::FlatBufferBuilder b;
  auto i4 = [&] { return fb::CreateElementType(b, uint8_t(qrt::ElementKind::kInteger), 0, true, 4); };
  auto t = fb::CreateTensorType(b, true, b.CreateVector(std::vector<int64_t>{16}), i4());
  std::vector<flatbuffers::Offset<fb::Value>> values = {fb::CreateValue(b, t, b.CreateString("c"))};
  auto dense_t = fb::CreateTensorType(b, true, b.CreateVector(std::vector<int64_t>{16}), i4());
  std::vector<flatbuffers::Offset<fb::Attribute>> attrs = {
      fb::CreateAttribute(b, b.CreateString("value"), uint8_t(qrt::Attribute::Kind::kDense), false, 0, 0, 0, 0, 0,
                          dense_t, 0)};
  std::vector<flatbuffers::Offset<fb::Op>> ops = {
      fb::CreateOp(b, b.CreateString("qrt.constant"), b.CreateVector(std::vector<uint32_t>{}),
                   b.CreateVector(std::vector<uint32_t>{0}), b.CreateVector(attrs))};
  std::string file;
  auto finish = [&](uint32_t version, uint64_t size) {
    std::vector<fb::Blob> blobs = {fb::Blob(0, size)};  // its offset is patched below
    auto root = fb::CreateGraph(b, version, b.CreateString("qrt 0.1"), b.CreateString("main"), b.CreateVector(values),
                                b.CreateVector(ops), b.CreateVector(std::vector<uint32_t>{}),
                                b.CreateVector(std::vector<uint32_t>{0}), b.CreateVectorOfStructs(blobs));
    fb::FinishGraphBuffer(b, root);
    std::string s(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
    s.resize((s.size() + 63) / 64 * 64, '\0');
    return s;
  };
  std::string meta = finish(1, 16);
  // Point the blob at the end of the metadata: patch its offset in place (the struct is the
  // only 16-byte run with offset 0 and size 16 in the buffer).
  const std::string needle = std::string("\0\0\0\0\0\0\0\0\x10\0\0\0\0\0\0\0", 16);
  const size_t at = meta.rfind(needle);
  REQUIRE(at != std::string::npos);
  const uint64_t offset = meta.size();
  std::memcpy(&meta[at], &offset, 8);
  for (int i = 0; i < 16; ++i) meta.push_back(char(i - 8));  // -8..7, one per byte
  auto owner = std::make_shared<std::string>(meta);
  auto g = qrt::read_binary_graph(owner, reinterpret_cast<const uint8_t*>(owner->data()), owner->size(), "v1.qrt");
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  const qrt::DenseElements& d = g->ops[0].attr("value")->dense;
  CHECK(d.size() == 8);
  CHECK_FALSE(d.is_view());
  for (size_t i = 0; i < 16; ++i) CHECK(d.int_at(i) == int64_t(i) - 8);
}
