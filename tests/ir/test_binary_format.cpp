// Tests: the .qrt binary container — lossless text -> binary -> text, weights read in place
// (views, 64-byte aligned), and truncated, corrupted, wrong-version and hostile files refused.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "ir/binary_format.h"
#include "ir/qrt_format_generated.h"
#include "ir/text_format.h"
#include "tests/ir/corpus.h"

namespace {

qrt::Result<qrt::Graph> read(const std::string& bytes, const char* name = "t.qrt") {
  auto owner = std::make_shared<std::string>(bytes);
  return qrt::read_binary_graph(owner, reinterpret_cast<const uint8_t*>(owner->data()), owner->size(), name);
}

std::string write(const qrt::Graph& g) {
  auto w = qrt::write_binary_graph(g, "qrt test");
  REQUIRE_MESSAGE(w.is_ok(), w.status().to_string());
  return *w;
}

// A .qrt file built field by field, which the writer would never produce: %r = qrt.relu(%a)
// on two f32 values of dims [4] (`is_tensor` false: scalar types with dimensions), with the
// function's input list `inputs`.
std::string relu_file(bool is_tensor, const std::vector<uint32_t>& inputs) {
  namespace fb = qrt::fb;
  flatbuffers::FlatBufferBuilder b;
  auto type = [&] {
    return fb::CreateTensorType(b, is_tensor, b.CreateVector(std::vector<int64_t>{4}),
                                fb::CreateElementType(b, 0, uint8_t(qrt::FloatKind::kF32)));
  };
  auto in_t = type();
  auto out_t = type();
  std::vector<flatbuffers::Offset<fb::Value>> values = {fb::CreateValue(b, in_t, b.CreateString("a")),
                                                        fb::CreateValue(b, out_t, b.CreateString("r"))};
  std::vector<flatbuffers::Offset<fb::Op>> ops = {
      fb::CreateOp(b, b.CreateString("qrt.relu"), b.CreateVector(std::vector<uint32_t>{0}),
                   b.CreateVector(std::vector<uint32_t>{1}), b.CreateVector(std::vector<flatbuffers::Offset<fb::Attribute>>{}))};
  auto root = fb::CreateGraph(b, 2, b.CreateString("qrt test"), b.CreateString("main"), b.CreateVector(values),
                              b.CreateVector(ops), b.CreateVector(inputs), b.CreateVector(std::vector<uint32_t>{1}),
                              b.CreateVectorOfStructs(std::vector<fb::Blob>{}));
  fb::FinishGraphBuffer(b, root);
  std::string file(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  file.resize((file.size() + 63) / 64 * 64, '\0');
  return file;
}

}  // namespace

TEST_CASE("text -> binary -> text is lossless") {
  auto g = qrt::parse_graph(qrt_test::corpus_text(), "c.mlir");
  REQUIRE(g.is_ok());
  const std::string bytes = write(*g);
  CHECK(bytes.size() % 64 == 0);
  CHECK(qrt::looks_like_binary_graph(bytes.data(), bytes.size()));
  auto back = read(bytes);
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  CHECK(qrt::print_graph(*back) == qrt::print_graph(*g));
  CHECK(write(*back) == bytes);  // and binary -> binary is stable
}

TEST_CASE("weights are views into the file, 64-byte aligned") {
  auto g = qrt::parse_graph(qrt_test::corpus_text(), "c.mlir");
  REQUIRE(g.is_ok());
  auto owner = std::make_shared<std::string>(write(*g));
  const auto* base = reinterpret_cast<const uint8_t*>(owner->data());
  auto back = qrt::read_binary_graph(owner, base, owner->size(), "v.qrt");
  REQUIRE(back.is_ok());
  int views = 0;
  for (const qrt::Op& op : back->ops) {
    const qrt::Attribute* v = op.attr("value");
    if (!v) continue;
    CHECK(v->dense.is_view());
    CHECK(v->dense.data() >= base);
    CHECK(v->dense.data() + v->dense.size() <= base + owner->size());
    CHECK((v->dense.data() - base) % 64 == 0);
    ++views;
  }
  CHECK(views >= 8);
  CHECK(owner.use_count() > 1);  // the graph keeps the file alive
}

TEST_CASE("damaged files are refused with a clear message, never a crash") {
  auto g = qrt::parse_graph(qrt_test::corpus_text(), "c.mlir");
  REQUIRE(g.is_ok());
  const std::string good = write(*g);
  CHECK(read(std::string(good.data(), 7)).status().to_string() ==
        "t.qrt: error: not a .qrt file (no \"QRTB\" identifier at byte offset 4)");
  CHECK(read("hello world, not a graph").status().to_string() ==
        "t.qrt: error: not a .qrt file (no \"QRTB\" identifier at byte offset 4)");
  int refused = 0;
  for (size_t cut = 8; cut < good.size(); cut += good.size() / 40) {
    auto r = read(good.substr(0, cut));
    if (!r.is_ok()) {
      ++refused;
      CHECK(r.status().to_string().rfind("t.qrt: error: ", 0) == 0);
    }
  }
  CHECK(refused > 30);
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string bad = good;
    bad[rng() % bad.size()] ^= char(1 + rng() % 255);
    auto r = read(bad);  // a flipped weight byte is still a valid file; anything else is refused
    if (!r.is_ok()) CHECK(r.status().message().size() > 10);
  }
}

TEST_CASE("versions, unknown ops and out-of-range blobs are named") {
  namespace fb = qrt::fb;
  auto build = [](uint32_t version, const char* op_name, uint64_t blob_offset, const char* numerics = nullptr) {
    flatbuffers::FlatBufferBuilder b;
    auto f32 = fb::CreateElementType(b, 0, uint8_t(qrt::FloatKind::kF32));
    auto t = fb::CreateTensorType(b, true, b.CreateVector(std::vector<int64_t>{4}), f32);
    std::vector<flatbuffers::Offset<fb::Value>> values = {fb::CreateValue(b, t, b.CreateString("c"))};
    auto dense_t = fb::CreateTensorType(b, true, b.CreateVector(std::vector<int64_t>{4}),
                                        fb::CreateElementType(b, 0, uint8_t(qrt::FloatKind::kF32)));
    std::vector<flatbuffers::Offset<fb::Attribute>> attrs = {
        fb::CreateAttribute(b, b.CreateString("value"), uint8_t(qrt::Attribute::Kind::kDense), false, 0, 0, 0, 0, 0,
                            dense_t, 0)};
    std::vector<flatbuffers::Offset<fb::Op>> ops = {
        fb::CreateOp(b, b.CreateString(op_name), b.CreateVector(std::vector<uint32_t>{}),
                     b.CreateVector(std::vector<uint32_t>{0}), b.CreateVector(attrs))};
    std::vector<fb::Blob> blobs = {fb::Blob(blob_offset, 16)};
    auto root = fb::CreateGraph(b, version, b.CreateString("qrt 9.9"), b.CreateString("main"), b.CreateVector(values),
                                b.CreateVector(ops), b.CreateVector(std::vector<uint32_t>{}),
                                b.CreateVector(std::vector<uint32_t>{0}), b.CreateVectorOfStructs(blobs),
                                numerics ? b.CreateString(numerics) : 0);
    fb::FinishGraphBuffer(b, root);
    std::string s(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
    s.resize((s.size() + 63) / 64 * 64, '\0');
    const size_t at = s.size();
    s.append(16, '\x01');
    return std::make_pair(s, at);
  };
  auto [ok_file, at] = build(1, "qrt.constant", 0);
  auto [fixed, at2] = build(1, "qrt.constant", at);
  CHECK(read(fixed).is_ok());
  CHECK(read(build(2, "qrt.constant", at).first).is_ok());
  CHECK(read(build(3, "qrt.constant", at).first).is_ok());
  CHECK(read(build(4, "qrt.constant", at).first).status().to_string() ==
        "t.qrt: error: .qrt format version 4 (written by qrt 9.9) is not readable by this qrt, which reads versions 1 to 3");
  CHECK(read(build(0, "qrt.constant", at).first).status().to_string() ==
        "t.qrt: error: .qrt format version 0 (written by qrt 9.9) is not readable by this qrt, which reads versions 1 to 3");
  // Numerics profiles (version 3): known names load; unknown names, or a profile in an older
  // file, are refused by name.
  auto tflite = read(build(3, "qrt.constant", at, "tflite").first);
  REQUIRE(tflite.is_ok());
  CHECK(tflite->numerics == qrt::NumericsProfile::kTflite);
  CHECK(read(build(3, "qrt.constant", at, "gemmlowp").first).status().to_string() ==
        "t.qrt: error: the numerics profile 'gemmlowp' is unknown (profiles: default, stablehlo, "
        "tflite, tflite-single-rounding, onnx)");
  CHECK(read(build(2, "qrt.constant", at, "tflite").first).status().to_string() ==
        "t.qrt: error: a numerics profile in a version 2 file (profiles came with version 3)");
  CHECK(read(build(1, "qrt.frobnicate", at).first).status().to_string() ==
        "t.qrt: error: op 0 is 'qrt.frobnicate', which this qrt does not know (a newer producer?)");
  CHECK(read(build(1, "qrt.constant", 1u << 30).first).status().message().find(
            "weight blob 0 at byte offset 1073741824 (16 bytes) lies outside the") == 0);
  CHECK(read(build(1, "qrt.constant", 8).first).status().message().find("is not 64-byte aligned") != std::string::npos);
  (void)ok_file;
  (void)at2;
}

TEST_CASE("a function name the text form cannot spell is refused (a libFuzzer finding)") {
  // The printer writes the name as a bare identifier; "mai\x01" printed text that did not
  // parse again (fuzz_load_binary, 2026-11-25).
  auto g = qrt::parse_graph(qrt_test::corpus_text());
  REQUIRE(g.is_ok());
  for (const std::string& name : {std::string("mai\x01", 4), std::string("9lives"), std::string("a b"), std::string(300, 'x')}) {
    CAPTURE(name);
    g->name = name;
    auto back = read(write(*g));
    REQUIRE(!back.is_ok());
    CHECK(back.status().message().find("is not an identifier") != std::string::npos);
  }
  g->name = "_ok.name$2";
  auto back = read(write(*g));
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  CHECK(back->name == "_ok.name$2");
  CHECK(qrt::parse_graph(qrt::print_graph(*back)).is_ok());
}

TEST_CASE("a scalar type with dimensions is refused, naming the value (an audit finding)") {
  // is_tensor = false with dims: the scalars printed without their dimensions but verified
  // (and were sized at run time) with them.
  auto ok = read(relu_file(true, {0}));
  REQUIRE_MESSAGE(ok.is_ok(), ok.status().to_string());
  CHECK(read(relu_file(false, {0})).status().to_string() ==
        "t.qrt: error: value 0: the scalar type f32 has 1 dimension(s) [4]; only tensor types have dimensions");
}

TEST_CASE("tf32 weights with bits above the 19 tf32 stores are refused (fuzz_load_binary, seed 34)") {
  // The finding's input is replayed from tests/data/fuzz_findings/; this names the message.
  auto g = qrt::parse_graph(
      "func.func @main() -> tensor<2xtf32> {\n"
      "  %0 = \"qrt.constant\"() {value = dense<[0x3F800, 0x7FFFF]> : tensor<2xtf32>} : () -> tensor<2xtf32>\n"
      "  return %0 : tensor<2xtf32>\n}\n");
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  std::string bytes = write(*g);
  REQUIRE(read(bytes).is_ok());
  const std::string second("\xFF\xFF\x07\x00", 4);  // element 1, little-endian
  const size_t at = bytes.find(second);
  REQUIRE(at != std::string::npos);
  bytes[at + 2] = '\x0F';  // sets bit 19
  auto bad = read(bytes);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message() == "weight blob 0 (tensor<2xtf32>): element 1 at byte offset " + std::to_string(at) +
                                      " sets bits above the low 19 that tf32 stores");
}

TEST_CASE("an input list that repeats a value is refused (fuzz_load_binary, seed 38)") {
  // The value printed as two arguments of one name, which the parser refuses as a
  // redefinition (2026-11-27; the input is replayed from tests/data/fuzz_findings/).
  auto ok = read(relu_file(true, {0}));
  REQUIRE_MESSAGE(ok.is_ok(), ok.status().to_string());
  CHECK(read(relu_file(true, {0, 0})).status().to_string() == "t.qrt: error: input 1 repeats value 0 (input 0)");
}
