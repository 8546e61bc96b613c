// Tests: ONNX Einsum (importers/onnx_einsum.cpp) against a direct evaluation of the equation
// (every assignment of the labels, summed in double), on the reference and on the JIT backend
// at every level the host has; and its refusals, which must name the node and the reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "jit/ref/reference.h"
#include "tests/importers/onnx_builders.h"
#include "tests/importers/onnx_jit_runner.h"

namespace {

using namespace onnx_builders;

/// One operand: its dimensions and values (small integers, so every f32 sum is exact).
struct Operand {
  std::vector<int64_t> dims;
  std::vector<float> values;
};

Operand random_operand(const std::vector<int64_t>& dims, std::mt19937& rng) {
  Operand o{dims, {}};
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  for (int64_t i = 0; i < n; ++i) o.values.push_back(float(int(rng() % 9) - 4));
  return o;
}

/// `equation` (letters only, explicit output) evaluated directly: the output, row-major. A label
/// repeated within a term reads the diagonal; an operand's dimension of size 1 is broadcast.
std::vector<double> evaluate(const std::string& equation, const std::vector<Operand>& ops) {
  const size_t arrow = equation.find("->");
  std::vector<std::string> terms(1);
  for (char c : equation.substr(0, arrow)) {
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  }
  const std::string out = equation.substr(arrow + 2);
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (size_t d = 0; d < terms[i].size(); ++d) size[terms[i][d]] = std::max(size[terms[i][d]], ops[i].dims[d]);
  }
  std::string labels;
  for (const auto& [c, n] : size) labels += c;
  int64_t n_out = 1;
  for (char c : out) n_out *= size[c];
  std::vector<double> y(static_cast<size_t>(n_out), 0.0);
  std::map<char, int64_t> at;
  for (char c : labels) at[c] = 0;
  auto offset = [&](const std::string& term, const std::vector<int64_t>& dims) {
    int64_t o = 0;
    for (size_t d = 0; d < term.size(); ++d) o = o * dims[d] + (dims[d] == 1 ? 0 : at[term[d]]);
    return o;
  };
  std::vector<int64_t> out_dims;
  for (char c : out) out_dims.push_back(size[c]);
  while (true) {
    double p = 1;
    for (size_t i = 0; i < terms.size(); ++i) p *= ops[i].values[size_t(offset(terms[i], ops[i].dims))];
    y[size_t(offset(out, out_dims))] += p;
    size_t d = labels.size();
    while (d > 0 && ++at[labels[d - 1]] == size[labels[d - 1]]) at[labels[--d]] = 0;
    if (d == 0) break;
  }
  return y;
}

/// An Einsum model: input "x" is operand 0, the others initializers "w1", "w2", ...
OneNode einsum_model(const std::string& equation, const std::vector<Operand>& ops) {
  std::vector<std::string> more;
  for (size_t i = 1; i < ops.size(); ++i) more.push_back("w" + std::to_string(i));
  OneNode m("Einsum", ops[0].dims, more);
  for (size_t i = 1; i < ops.size(); ++i) add_floats(m.g, more[i - 1], ops[i].dims, ops[i].values);
  auto* a = m.node->add_attribute();
  a->set_name("equation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(equation);
  return m;
}

}  // namespace

TEST_CASE("Einsum equals the direct evaluation on the reference and on every JIT level: matmuls, attention, sums, ellipses, diagonals, broadcasting") {
  std::mt19937 rng(77);
  struct Case {
    std::string equation;                   // as the node has it
    std::string direct;                     // the same with letters for ellipses, explicit output
    std::vector<std::vector<int64_t>> dims;  // each operand's
  };
  const std::vector<Case> cases = {
      {"bhid,bhjd->bhij", "bhid,bhjd->bhij", {{2, 3, 4, 5}, {2, 3, 6, 5}}},  // attention scores
      {"bhij,bhjd->bhid", "bhij,bhjd->bhid", {{2, 3, 4, 6}, {2, 3, 6, 5}}},  // attention context
      {"ij,jk->ik", "ij,jk->ik", {{3, 7}, {7, 4}}},
      {"bij,bjk", "bij,bjk->ik", {{2, 3, 4}, {2, 4, 5}}},                      // implicit: b is summed
      {"ij,kj->ik", "ij,kj->ik", {{3, 5}, {4, 5}}},                             // a transposed rhs
      {"ij->ji", "ij->ji", {{3, 4}}},
      {"ij->", "ij->", {{3, 4}}},
      {"ijk->ki", "ijk->ki", {{2, 3, 4}}},                                      // j summed away
      {"i,i->", "i,i->", {{5}, {5}}},                                           // inner product
      {"i,j->ij", "i,j->ij", {{3}, {4}}},                                       // outer product
      {"ijk,jl->il", "ijk,jl->il", {{2, 3, 4}, {3, 5}}},                        // k only in x
      {"...ij,...jk->...ik", "aij,ajk->aik", {{2, 3, 4}, {2, 4, 5}}},
      {"...ij,jk->...ik", "abij,jk->abik", {{2, 2, 3, 4}, {4, 5}}},             // fewer ellipsis dims
      {"...ij->...ji", "aij->aji", {{2, 3, 4}}},
      {"b i j , b j k -> b k i", "bij,bjk->bki", {{2, 3, 4}, {2, 4, 5}}},      // spaces
      {"ij,jk,kl->il", "ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},               // three operands
      {"ii->i", "ii->i", {{4, 4}}},                                             // diagonal
      {"ii", "ii->", {{4, 4}}},                                                 // trace
      {"bii->bi", "bii->bi", {{2, 3, 3}}},
      {"iji->ji", "iji->ji", {{3, 4, 3}}},                                      // copies apart
      {"iii->i", "iii->i", {{3, 3, 3}}},                                        // three copies
      {"iij,jk->ik", "iij,jk->ik", {{3, 3, 4}, {4, 2}}},                        // then a matmul
      {"ii,ii->i", "ii,ii->i", {{1, 1}, {3, 3}}},                               // a broadcast diagonal
      {"...ij,...jk->...ik", "aij,ajk->aik", {{1, 2, 3}, {5, 3, 4}}},           // batch broadcast
      {"...ij,...jk->...ik", "abij,abjk->abik", {{3, 1, 2, 3}, {1, 2, 3, 4}}},  // both ways
      {"ij,ij->ij", "ij,ij->ij", {{2, 1}, {2, 3}}},                             // a label of size 1
      {"i,i->", "i,i->", {{1}, {1}}},                                           // size 1 on both
  };
  const std::vector<std::string> levels = tested_levels();
  for (const Case& c : cases) {
    CAPTURE(c.equation);
    std::vector<Operand> ops;
    for (const auto& d : c.dims) ops.push_back(random_operand(d, rng));
    const std::vector<double> want = evaluate(c.direct, ops);
    OneNode m = einsum_model(c.equation, ops);
    auto g = import(m.model);
    REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
    qrt::Tensor x = qrt::Tensor::zeros(g->values[size_t(g->inputs[0])].type);
    for (size_t i = 0; i < ops[0].values.size(); ++i) x.set_float(i, ops[0].values[i]);
    auto ref = qrt::run_reference(*g, {x.clone()});
    REQUIRE_MESSAGE(ref.is_ok(), ref.status().to_string());
    const qrt::Tensor& r = ref->at(0);
    REQUIRE(size_t(r.num_elements()) == want.size());
    std::vector<double> got;
    for (size_t i = 0; i < want.size(); ++i) got.push_back(r.float_at(i));
    CHECK(got == want);
    for (const std::string& level : levels) {
      CAPTURE(level);
      std::string kernel;
      auto jit = run_jit(*g, {x.clone()}, kernel, "qrt.matmul", level.c_str());
      REQUIRE_MESSAGE(jit.is_ok(), jit.status().to_string());
      CHECK(std::equal(r.bytes(), r.bytes() + r.byte_size(), jit->at(0).bytes()));
    }
  }
}

TEST_CASE("Einsum refusals name the node and the reason") {
  std::mt19937 rng(78);
  const Operand a = random_operand({3, 3}, rng), b = random_operand({4, 5}, rng), c = random_operand({3, 4}, rng);
  CHECK(import_error(einsum_model("ii->i", {c})).find("label 'i' repeats in term 'ii' with sizes 3 and 4: a diagonal must be square") !=
        std::string::npos);
  CHECK(import_error(einsum_model("ij,jk->ik", {a, b})).find("label 'j' has size 3 and 4, which do not broadcast") != std::string::npos);
  CHECK(import_error(einsum_model("...i,...i->...i", {c, b})).find("ellipsis dimension 0 has size 3 and 4, which do not broadcast") !=
        std::string::npos);
  CHECK(import_error(einsum_model("ij,jk->iz", {a, b})).find("output label 'z' names no operand's dimension") != std::string::npos);
  CHECK(import_error(einsum_model("ij->ii", {a})).find("output label 'i' appears twice") != std::string::npos);
  CHECK(import_error(einsum_model("ijk->i", {a})).find("does not fit operand 0 of rank 2") != std::string::npos);
  CHECK(import_error(einsum_model("ij", {a, b})).find("names 1 operands, the node has 2") != std::string::npos);
  CHECK(import_error(einsum_model("i1->i", {a})).find("must be letters and at most one '...'") != std::string::npos);
  const std::string named = import_error(einsum_model("ii->i", {c}));
  CHECK(named.find("node 'Einsum_node' (Einsum)") != std::string::npos);
}
