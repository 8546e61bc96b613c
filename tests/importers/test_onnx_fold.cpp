// Tests: the ONNX importer's import-time folding of shape sub-graphs (importers/onnx_fold.cpp)
// on sizes taken from the file: results are checked against the folding limit before anything
// is allocated, hostile extents and counts are refused naming the node, and the folds that
// legitimate exporters rely on still give the right constants.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "importers/onnx_importer.h"
#include "ir/text_format.h"
#include "tests/importers/onnx_builders.h"

namespace {

using namespace onnx_builders;

/// A model whose one output "y" is node `op` over the INT64 initializers `inits` (1-D each,
/// in input order; an empty name leaves that input out).
struct FoldModel {
  onnx::ModelProto model = empty_model(13);
  onnx::GraphProto* g = model.mutable_graph();
  onnx::NodeProto* node = nullptr;
  FoldModel(const std::string& op, const std::vector<std::pair<std::string, std::vector<int64_t>>>& inits,
            bool scalars = false) {
    std::vector<std::string> names;
    for (const auto& [name, values] : inits) {
      if (!name.empty()) add_int64s(g, name, values, scalars);
      names.push_back(name);
    }
    node = add_node(g, op, names, {"y"});
    g->add_output()->set_name("y");
  }
};

/// The import error of `m`, "" when it imports.
std::string error_of(const FoldModel& m) {
  auto g = import(m.model);
  return g.is_ok() ? "" : g.status().message();
}

/// The integers of the constant `m`'s output folded to (the graph's output is a qrt constant).
std::vector<int64_t> folded(const FoldModel& m) {
  auto g = import(m.model);
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  const int producer = g->values[size_t(g->outputs.at(0))].producer;
  REQUIRE(producer >= 0);
  const qrt::Op& op = g->ops[size_t(producer)];
  REQUIRE_MESSAGE(op.kind == qrt::OpKind::kConstant, qrt::print_graph(*g));
  const qrt::DenseElements& d = op.attr("value")->dense;
  std::vector<int64_t> v;
  for (size_t i = 0; i < size_t(d.type.num_elements()); ++i) v.push_back(d.int_at(i));
  return v;
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();

}  // namespace

TEST_CASE("ONNX folding: a size from the file is checked before anything is allocated for it") {
  // The fuzzer's finding (2026-11-29): a ConstantOfShape of ~2^59 elements asked for 864 PB.
  const std::string too_many = "elements qrt folds at import";
  CHECK(error_of(FoldModel("ConstantOfShape", {{"s", {int64_t(1) << 40, int64_t(1) << 40, 3}}}))
            .find("'ConstantOfShape_node' (ConstantOfShape): shape [1099511627776, 1099511627776, 3] has more than the "
                  "1048576 " + too_many) != std::string::npos);
  CHECK(error_of(FoldModel("ConstantOfShape", {{"s", {1024, 1025}}})).find(too_many) != std::string::npos);
  CHECK(error_of(FoldModel("ConstantOfShape", {{"s", {4, -2}}})).find("shape [4, -2] has a negative extent") !=
        std::string::npos);
  CHECK(error_of(FoldModel("ConstantOfShape", {{"s", {kMax, 0}}})).find("shape [9223372036854775807, 0] has an extent over "
                                                                          "qrt's limit of 2^48") != std::string::npos);
  // A zero extent makes the count 0, however large the others.
  CHECK(folded(FoldModel("ConstantOfShape", {{"s", {int64_t(1) << 40, 0}}})).empty());
  // Range's count, in 128 bits: INT64_MAX elements are refused, not pushed one by one.
  CHECK(error_of(FoldModel("Range", {{"a", {0}}, {"b", {kMax}}, {"c", {1}}}, true))
            .find("Range(0, 9223372036854775807, 1) has more than the 1048576 " + too_many) != std::string::npos);
  CHECK(error_of(FoldModel("Range", {{"a", {kMax}}, {"b", {kMin}}, {"c", {-1}}}, true)).find(too_many) !=
        std::string::npos);
  // The largest span with a step that keeps it short: no intermediate overflows.
  CHECK(folded(FoldModel("Range", {{"a", {kMin}}, {"b", {kMax}}, {"c", {kMax}}}, true)) ==
        std::vector<int64_t>{kMin, -1, kMax - 1});
  // Inputs that are not scalars were read past their end.
  CHECK(error_of(FoldModel("Range", {{"a", {}}, {"b", {4}}, {"c", {1}}})).find("input 0 has 0 elements, not 1") !=
        std::string::npos);
  // Unsqueeze with a repeated axis took more dimensions from its input than it has.
  {
    FoldModel m("Unsqueeze", {{"x", {7, 8}}, {"axes", {0, 0}}});
    CHECK(error_of(m).find("axis 0 is listed twice") != std::string::npos);
  }
  // Nodes listing fewer inputs than the op reads: no fold, and the op's own import refuses them.
  for (const std::string op : {"Reshape", "Gather", "Add", "Where", "Range"}) {
    CAPTURE(op);
    CHECK_FALSE(error_of(FoldModel(op, {{"x", {1, 2, 3, 4}}})).empty());
  }
  // A Reshape target whose product overflows int64 is left to the op's own import, which
  // refuses it (it multiplied past INT64_MAX too: UBSan in CI, 2026-11-29).
  CHECK(error_of(FoldModel("Reshape", {{"x", {1, 2, 3, 4}}, {"shape", {int64_t(1) << 40, int64_t(1) << 40}}}))
            .find("the target shape's element count overflows int64") != std::string::npos);
}

TEST_CASE("ONNX folding: a ConstantOfShape value must be one element") {
  FoldModel m("ConstantOfShape", {{"s", {2, 3}}});
  auto* a = m.node->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(2);
  a->mutable_t()->add_int64_data(7);
  a->mutable_t()->add_int64_data(8);
  CHECK(error_of(m).find("value has 2 elements, not 1") != std::string::npos);
  a->mutable_t()->clear_int64_data();
  a->mutable_t()->clear_dims();
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(7);
  CHECK(folded(m) == std::vector<int64_t>(6, 7));
}

TEST_CASE("ONNX folding: what exporters compute still folds to the right constants") {
  CHECK(folded(FoldModel("Range", {{"a", {10}}, {"b", {0}}, {"c", {-3}}}, true)) == std::vector<int64_t>{10, 7, 4, 1});
  CHECK(folded(FoldModel("Range", {{"a", {0}}, {"b", {7}}, {"c", {2}}}, true)) == std::vector<int64_t>{0, 2, 4, 6});
  CHECK(folded(FoldModel("Range", {{"a", {5}}, {"b", {5}}, {"c", {1}}}, true)).empty());
  CHECK(folded(FoldModel("Range", {{"a", {5}}, {"b", {9}}, {"c", {-1}}}, true)).empty());
  CHECK(folded(FoldModel("Unsqueeze", {{"x", {7, 8}}, {"axes", {0, 2}}})) == std::vector<int64_t>{7, 8});
  CHECK(folded(FoldModel("Reshape", {{"x", {1, 2, 3, 4}}, {"shape", {2, -1}}})) == std::vector<int64_t>{1, 2, 3, 4});
  CHECK(folded(FoldModel("Gather", {{"x", {5, 6, 7}}, {"i", {2, 0, 2}}})) == std::vector<int64_t>{7, 5, 7});
  CHECK(folded(FoldModel("Mul", {{"x", {2, 3}}, {"y", {4}}})) == std::vector<int64_t>{8, 12});
  // The limit itself still folds: 1024 x 1024 by broadcasting.
  FoldModel big("Add", {{"x", std::vector<int64_t>(1024, 1)}, {"y", std::vector<int64_t>(1024, 2)}});
  big.g->mutable_initializer(0)->clear_dims();
  big.g->mutable_initializer(0)->add_dims(1024);
  big.g->mutable_initializer(0)->add_dims(1);
  CHECK(folded(big).size() == size_t(1) << 20);
  // One past it by broadcasting is not folded: the sum is a qrt op over two constants.
  FoldModel bigger("Add", {{"x", std::vector<int64_t>(2048, 1)}, {"y", std::vector<int64_t>(1024, 2)}});
  bigger.g->mutable_initializer(0)->clear_dims();
  bigger.g->mutable_initializer(0)->add_dims(2048);
  bigger.g->mutable_initializer(0)->add_dims(1);
  auto g = import(bigger.model);
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  CHECK(qrt::print_graph(*g).find("qrt.add") != std::string::npos);
}

TEST_CASE("ONNX composite ops: sizes from the file are checked before constants are built for them") {
  // Hardmax compares argmax with an int64 constant of the axis' indices. The fuzzer's finding
  // (2026-11-29, fuzz_load_onnx -seed=52): an input declared [251624180] asked for 2 GB.
  auto hardmax = [](int opset, const std::vector<int64_t>& dims, int64_t axis) {
    onnx::ModelProto m = empty_model(opset);
    onnx::GraphProto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, dims);
    onnx::NodeProto* n = add_node(g, "Hardmax", {"x"}, {"y"});
    auto* a = n->add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(axis);
    g->add_output()->set_name("y");
    auto r = import(m);
    return r.is_ok() ? std::string() : r.status().message();
  };
  CHECK(hardmax(13, {251624180}, 0).find("axis 0 of tensor<251624180xf32> has 251624180 elements, over qrt's limit of "
                                         "2^24 for Hardmax") != std::string::npos);
  CHECK(hardmax(13, {2, 1 << 24}, 1).empty());  // the limit itself
  // Before opset 13 the input is read as 2-D: the product of the trailing dimensions.
  CHECK(hardmax(11, {3, 1 << 12, 1 << 13}, 1).find("has 33554432 elements, over") != std::string::npos);
  // Inputs past 2^48 elements are refused before (the 2-D product is checked all the same).
  CHECK(hardmax(11, {2, int64_t(1) << 40, int64_t(1) << 40}, 1).find("has more elements than qrt supports (2^48)") !=
        std::string::npos);
  // Tile's output extents are repeats times extents, from the file.
  onnx::ModelProto m = empty_model(13);
  onnx::GraphProto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {3, 5});
  add_int64s(g, "r", {int64_t(1) << 62, 1});
  add_node(g, "Tile", {"x", "r"}, {"y"});
  g->add_output()->set_name("y");
  auto tiled = import(m);
  REQUIRE_FALSE(tiled.is_ok());
  CHECK(tiled.status().message().find("repeats[0] = 4611686018427387904 times extent 3 overflows int64") !=
        std::string::npos);
}

TEST_CASE("ONNX import: constants built from declared sizes are refused past 256 MiB, before allocating") {
  // One node over a float input "x" of `dims`, its outputs listed; the import error or "".
  auto import_error = [](const std::string& op, const std::vector<int64_t>& dims, std::vector<std::string> outputs) {
    onnx::ModelProto m = empty_model(13);
    onnx::GraphProto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, dims);
    add_node(g, op, {"x"}, outputs);
    for (const std::string& o : outputs) g->add_output()->set_name(o);
    auto r = import(m);
    return r.is_ok() ? std::string() : r.status().message();
  };
  const std::string limit = "bytes, over qrt's limit of 256 MiB for constants the importer builds";
  CHECK(import_error("EyeLike", {8193, 8192}, {"y"}).find("(EyeLike): the identity would be a constant tensor<8193x8192xf32> "
                                                         "of 268468224 " + limit) != std::string::npos);
  CHECK(import_error("EyeLike", {3, 5}, {"y"}).empty());
  CHECK(import_error("Trilu", {int64_t(1) << 20, int64_t(1) << 20}, {"y"}).find("the triangle mask would be a constant "
                                                                                "tensor<1048576x1048576xi1> of 1099511627776 " +
                                                                                limit) != std::string::npos);
  CHECK(import_error("Trilu", {2, 4, 4}, {"y"}).empty());
  CHECK(import_error("Dropout", {int64_t(1) << 30, 64}, {"y", "mask"}).find("the mask output would be a constant") !=
        std::string::npos);
  CHECK(import_error("Dropout", {2, 3}, {"y", "mask"}).empty());
}

TEST_CASE("ONNX constants of 2-4-bit integers are built element by element, packed two per byte") {
  // fuzz_load_onnx -seed=57: an EyeLike over an INT4 input [41, 33] wrote one byte per
  // element into the 677 bytes that hold its 1353 packed elements (ASan: heap-buffer-overflow).
  const int kInt4 = 22, kUint4 = 21;  // onnx::TensorProto::INT4 / UINT4 (opset 21)
  for (const int type : {kInt4, kUint4}) {
    CAPTURE(type);
    onnx::ModelProto m = empty_model(21);
    onnx::GraphProto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", type, {41, 33});
    onnx::NodeProto* n = add_node(g, "EyeLike", {"x"}, {"y"});
    auto* k = n->add_attribute();
    k->set_name("k");
    k->set_type(onnx::AttributeProto::INT);
    k->set_i(-2);
    g->add_output()->set_name("y");
    auto r = import(m);
    REQUIRE_MESSAGE(r.is_ok(), r.status().message());
    const qrt::Op& op = r->ops.back();
    REQUIRE(op.kind == qrt::OpKind::kConstant);
    const qrt::DenseElements& eye = op.attr("value")->dense;
    REQUIRE(eye.size() == (41 * 33 + 1) / 2);
    for (int64_t i = 0; i < 41; ++i) {
      for (int64_t j = 0; j < 33; ++j) CHECK(eye.int_at(size_t(i * 33 + j)) == (j == i - 2 ? 1 : 0));
    }
  }
  // ConstantOfShape's value spread over 7 INT4 elements (it copied the value's byte 7 times
  // into 4 bytes).
  onnx::ModelProto m = empty_model(21);
  onnx::GraphProto* g = m.mutable_graph();
  add_int64s(g, "s", {7});
  onnx::NodeProto* n = add_node(g, "ConstantOfShape", {"s"}, {"y"});
  auto* v = n->add_attribute();
  v->set_name("value");
  v->set_type(onnx::AttributeProto::TENSOR);
  v->mutable_t()->set_data_type(kInt4);
  v->mutable_t()->add_dims(1);
  v->mutable_t()->set_raw_data(std::string(1, char(0x0D)));  // -3 in the low nibble
  g->add_output()->set_name("y");
  auto r = import(m);
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  const qrt::DenseElements& c = r->ops.back().attr("value")->dense;
  REQUIRE(c.size() == 4);
  for (size_t i = 0; i < 7; ++i) CHECK(c.int_at(i) == -3);
}

TEST_CASE("DequantizeLinear refuses a scale or zero point with no elements") {
  // fuzz_load_onnx -seed=58: a zero point of shape [0] was read at element 0 (UBSan: a null
  // pointer passed to memcpy).
  for (const bool empty_scale : {false, true}) {
    CAPTURE(empty_scale);
    onnx::ModelProto m = empty_model(13);
    onnx::GraphProto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::INT8, {2, 3});
    add_floats(g, "s", {empty_scale ? int64_t(0) : int64_t(1)}, empty_scale ? std::vector<float>{} : std::vector<float>{0.5f});
    const int8_t zp = 1;
    add_raw(g, "z", onnx::TensorProto::INT8, {empty_scale ? int64_t(1) : int64_t(0)}, &zp, empty_scale ? 1 : 0);
    add_node(g, "DequantizeLinear", {"x", "s", "z"}, {"y"});
    g->add_output()->set_name("y");
    auto r = import(m);
    REQUIRE(!r.is_ok());
    CHECK(r.status().message().find(empty_scale ? "the scale holds no elements" : "the zero point holds no elements") !=
          std::string::npos);
  }
}

TEST_CASE("Concat without inputs is refused by name") {
  // fuzz_c_api -seed=57: a Concat node whose inputs a mutation moved to another field read
  // the first of an empty list (UBSan); with one input it imports as a copy.
  for (const int inputs : {0, 1}) {
    CAPTURE(inputs);
    onnx::ModelProto m = empty_model(13);
    onnx::GraphProto* g = m.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
    add_node(g, "Concat", inputs ? std::vector<std::string>{"x"} : std::vector<std::string>{}, {"y"});
    auto* axis = g->mutable_node(0)->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    g->add_output()->set_name("y");
    auto r = import(m);
    if (inputs == 0) {
      REQUIRE(!r.is_ok());
      CHECK(r.status().message().find("Concat") != std::string::npos);
      CHECK(r.status().message().find("expects at least one input") != std::string::npos);
    } else {
      REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    }
  }
}
