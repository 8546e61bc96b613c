// Tests: re-storing 8-bit activations in the other signedness (passes/activation_storage.h):
// which values change and which keep their storage (and the reason reported), the shifted
// zero points and bounds, both directions, and the same output bytes as the source graph on
// the reference under every profile that runs it.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "ir/text_format.h"
#include "passes/activation_storage.h"
#include "tests/passes/pass_test_util.h"

namespace {

using pass_test::parse;

// A dense constant of `count` random bytes.
std::string dense(std::mt19937& rng, size_t count) {
  static const char* hex = "0123456789ABCDEF";
  std::string s = "dense<\"0x";
  for (size_t i = 0; i < count; ++i) {
    const unsigned b = unsigned(rng() % 256);
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s + "\">";
}

std::string q(const std::string& dims, const std::string& storage, const std::string& params) {
  return "tensor<" + dims + "x!quant.uniform<" + storage + ":f32, " + params + ">>";
}

// x -> conv (padded) -> %a; %a -> conv -> %b; add(%a, %b) -> %c; max_pool -> %p;
// requantize -> %r; reshape -> %s; conv -> %y (returned). `s` is the activations' storage
// ("i8" or "u8"), `z` a zero point in it.
std::string chain(std::mt19937& rng, const std::string& s, int z) {
  const std::string zs = std::to_string(z);
  const std::string x = q("1x6x6x4", s, "0.5:" + zs), f = "tensor<4x3x3x4x!quant.uniform<i8:f32:0, {0.25, 0.125, 0.5, 0.0625}>>";
  const std::string a = q("1x6x6x4", s, "0.75:" + std::to_string(z + 7)), b = q("1x6x6x4", s, "0.5:" + std::to_string(z - 9));
  const std::string c = q("1x6x6x4", s, "1.25:" + std::to_string(z + 3)), p = q("1x3x3x4", s, "1.25:" + std::to_string(z + 3));
  const std::string r = q("1x3x3x4", s, "0.375:" + std::to_string(z + 100)), rs = q("1x3x3x4", s, "0.375:" + std::to_string(z + 100));
  const std::string f2 = "tensor<3x1x1x4x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125}>>";
  const std::string y = q("1x3x3x3", s, "2.0:" + zs);
  std::string t = "func.func @main(%x: " + x + ") -> " + y + " {\n";
  t += "  %f = \"qrt.constant\"() {value = " + dense(rng, 4 * 9 * 4) + " : tensor<4x3x3x4xi8>} : () -> " + f + "\n";
  t += "  %f2 = \"qrt.constant\"() {value = " + dense(rng, 3 * 4) + " : tensor<3x1x1x4xi8>} : () -> " + f2 + "\n";
  t += "  %a = \"qrt.conv2d\"(%x, %f) {pads = [1, 1, 1, 1]} : (" + x + ", " + f + ") -> " + a + "\n";
  t += "  %b = \"qrt.conv2d\"(%a, %f) {pads = [1, 1, 1, 1]} : (" + a + ", " + f + ") -> " + b + "\n";
  t += "  %c = \"qrt.add\"(%a, %b) : (" + a + ", " + b + ") -> " + c + "\n";
  t += "  %p = \"qrt.max_pool2d\"(%c) {kernel = [2, 2], strides = [2, 2]} : (" + c + ") -> " + p + "\n";
  t += "  %r = \"qrt.requantize\"(%p) : (" + p + ") -> " + r + "\n";
  t += "  %s = \"qrt.reshape\"(%r) : (" + r + ") -> " + rs + "\n";
  t += "  %y = \"qrt.conv2d\"(%s, %f2) : (" + rs + ", " + f2 + ") -> " + y + "\n";
  t += "  return %y : " + y + "\n}\n";
  return t;
}

const qrt::ElementType& element(const qrt::Graph& g, const std::string& name) {
  for (const qrt::Value& v : g.values) {
    if (v.name == name) return v.type.element;
  }
  FAIL("no value %" << name);
  return g.values[0].type.element;
}

// Runs `g` and `out` on the reference with the same random inputs; their outputs must be
// the same bytes.
void check_same_outputs(const qrt::Graph& g, const qrt::Graph& out, std::mt19937& rng) {
  REQUIRE_MESSAGE(qrt::verify_graph(out).is_ok(), qrt::verify_graph(out).to_string());
  for (int round = 0; round < 4; ++round) {
    std::vector<qrt::Tensor> inputs;
    for (int v : g.inputs) {
      const qrt::ElementType& e = g.values[size_t(v)].type.element;
      qrt::Tensor t = qrt::Tensor::zeros(g.values[size_t(v)].type);
      for (size_t i = 0; i < size_t(t.num_elements()); ++i) {
        t.set_int(i, e.storage.min + int64_t(rng() % uint64_t(e.storage.max - e.storage.min + 1)));
      }
      inputs.push_back(std::move(t));
    }
    pass_test::check_same_reference_outputs(g, out, inputs);
  }
}

}  // namespace

TEST_CASE("activation storage: a chain's internal i8 values become u8 with zero points + 128, the same outputs") {
  std::mt19937 rng(7);
  for (int z : {-128, -20, 0, 27}) {
    CAPTURE(z);
    qrt::Graph g = parse(chain(rng, "i8", z == -128 ? -118 : z));
    for (qrt::NumericsProfile profile : {qrt::NumericsProfile::kDefault, qrt::NumericsProfile::kTflite,
                                         qrt::NumericsProfile::kTfliteSingleRounding, qrt::NumericsProfile::kOnnx}) {
      g.numerics = profile;
      qrt::passes::ActivationStorageReport report;
      const qrt::Graph out = qrt::passes::retype_activation_storage(g, true, &report);
      CHECK(report.values == 6);  // %a, %b, %c and %p (linked by the pool), %r and %s (by the reshape)
      CHECK(report.groups == 4);
      CHECK(report.kept_groups == 2);  // the input and the output
      for (const char* name : {"a", "b", "c", "p", "r", "s"}) {
        CAPTURE(name);
        const qrt::ElementType &before = element(g, name), &after = element(out, name);
        CHECK_FALSE(after.storage.is_signed);
        CHECK(after.storage.min == 0);
        CHECK(after.storage.max == 255);
        CHECK(after.zero_points[0] == before.zero_points[0] + 128);
        CHECK(after.scales == before.scales);
      }
      CHECK(element(out, "x") == element(g, "x"));
      CHECK(element(out, "y") == element(g, "y"));
      CHECK(element(out, "f") == element(g, "f"));  // weights are data
      check_same_outputs(g, out, rng);
    }
  }
}

TEST_CASE("activation storage: u8 to i8 (to=i8), narrow bounds shifted, and the pipeline's report") {
  std::mt19937 rng(11);
  std::string text = chain(rng, "u8", 128);
  // Narrow bounds on one internal value: u8<1:255> becomes i8<-127:127>.
  const std::string wide = "!quant.uniform<u8:f32, 0.375:228>", narrow = "!quant.uniform<u8<1:255>:f32, 0.375:228>";
  for (size_t at = text.find(wide); at != std::string::npos; at = text.find(wide, at + narrow.size())) {
    text.replace(at, wide.size(), narrow);
  }
  const qrt::Graph g = parse(text);
  std::vector<std::string> report;
  const qrt::Graph out = pass_test::run_pipeline(g, "activation-storage{to=i8}", report);
  CHECK(pass_test::has_line(report, "activation-storage: 6 value(s) in 4 group(s) now stored as i8, 2 group(s) kept"));
  CHECK(pass_test::has_line(report, "%x keeps its storage: %x is a graph input"));
  CHECK(pass_test::has_line(report, "%y keeps its storage: %y is a graph output"));
  const qrt::ElementType& r = element(out, "r");
  CHECK(r.storage.is_signed);
  CHECK(r.storage.min == -127);
  CHECK(r.storage.max == 127);
  CHECK(r.zero_points[0] == 100);
  CHECK(qrt::print_graph(out).find("!quant.uniform<i8<-127:127>:f32, 3.750000e-01:100>") != std::string::npos);
  check_same_outputs(g, out, rng);
  // Back again: the source graph's types.
  std::vector<std::string> again;
  const qrt::Graph back = pass_test::run_pipeline(out, "activation-storage", again);
  CHECK(qrt::print_graph(back) == qrt::print_graph(g));
  // A bad option names the pass, the option and the choices.
  auto bad = qrt::passes::run_pipeline(g, "activation-storage{to=u4}");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("activation-storage") != std::string::npos);
  CHECK(bad.status().message().find("u8, i8") != std::string::npos);
}

TEST_CASE("activation storage: values read by mean, avg_pool2d or scast, their linked groups and stablehlo keep theirs; add operands go alone") {
  std::mt19937 rng(13);
  const std::string x = q("1x4x4x4", "i8", "0.5:-3"), f = "tensor<4x1x1x4x!quant.uniform<i8:f32:0, {0.25, 0.125, 0.5, 0.0625}>>";
  const std::string a = q("1x4x4x4", "i8", "0.75:5"), m = q("1x4", "i8", "0.5:-1"), b = q("1x4x4x4", "i8", "0.25:9");
  const std::string pb = q("1x2x2x4", "i8", "0.25:9"), e = q("1x4x4x4", "i8", "0.3:2"), d = q("1x4x4x4", "i8", "0.6:-4");
  const std::string o = q("1x4x4x4", "i8", "0.4:1"), pa = q("1x2x2x4", "i8", "0.4:1");
  std::string t = "func.func @main(%x: " + x + ") -> (" + m + ", tensor<1x2x2x4xi8>, " + pa + ") {\n";
  t += "  %f = \"qrt.constant\"() {value = " + dense(rng, 16) + " : tensor<4x1x1x4xi8>} : () -> " + f + "\n";
  // %a: read by a mean (kept). %b: its max pool's result is scast (kept, with the pool).
  t += "  %a = \"qrt.conv2d\"(%x, %f) : (" + x + ", " + f + ") -> " + a + "\n";
  t += "  %m = \"qrt.mean\"(%a) {axes = [1, 2]} : (" + a + ") -> " + m + "\n";
  t += "  %b = \"qrt.conv2d\"(%a, %f) : (" + a + ", " + f + ") -> " + b + "\n";
  t += "  %pb = \"qrt.max_pool2d\"(%b) {kernel = [2, 2], strides = [2, 2]} : (" + b + ") -> " + pb + "\n";
  t += "  %sc = \"quant.scast\"(%pb) : (" + pb + ") -> tensor<1x2x2x4xi8>\n";
  // %e and %d: the add's operands, re-stored each on its own; its result %o, read by an
  // average pool, keeps its storage.
  t += "  %e = \"qrt.conv2d\"(%x, %f) : (" + x + ", " + f + ") -> " + e + "\n";
  t += "  %d = \"qrt.conv2d\"(%x, %f) : (" + x + ", " + f + ") -> " + d + "\n";
  t += "  %o = \"qrt.add\"(%e, %d) : (" + e + ", " + d + ") -> " + o + "\n";
  t += "  %pa = \"qrt.avg_pool2d\"(%o) {kernel = [2, 2], strides = [2, 2]} : (" + o + ") -> " + pa + "\n";
  t += "  return %m, %sc, %pa : " + m + ", tensor<1x2x2x4xi8>, " + pa + "\n}\n";
  const qrt::Graph g = parse(t);
  qrt::passes::ActivationStorageReport report;
  const qrt::Graph out = qrt::passes::retype_activation_storage(g, true, &report);
  CHECK(report.values == 2);
  std::string lines;
  for (const std::string& l : report.lines) lines += l + "\n";
  CAPTURE(lines);
  CHECK(lines.find("%a keeps its storage: %a is an operand of 'qrt.mean'") != std::string::npos);
  CHECK(lines.find("is a result of 'quant.scast'") == std::string::npos);  // the i8 integer is not quantized
  CHECK(lines.find("%b keeps its storage: %pb is an operand of 'quant.scast'") != std::string::npos);
  CHECK(lines.find("keeps its storage: %o is an operand of 'qrt.avg_pool2d'") != std::string::npos);
  for (const char* name : {"a", "b", "pb", "o"}) CHECK(element(out, name) == element(g, name));
  for (const char* name : {"e", "d"}) CHECK(element(out, name).zero_points[0] == element(g, name).zero_points[0] + 128);
  check_same_outputs(g, out, rng);

  // Under stablehlo nothing changes, even where the default profile re-stores.
  qrt::Graph s = parse(chain(rng, "i8", 0));
  s.numerics = qrt::NumericsProfile::kStableHlo;
  const qrt::Graph kept = qrt::passes::retype_activation_storage(s, true, &report);
  CHECK(report.values == 0);
  CHECK(qrt::print_graph(kept) == qrt::print_graph(s));
}
