// qrt — activation storage signedness (see activation_storage.h).
#include "passes/activation_storage.h"

#include <numeric>

#include "ir/ops.h"
#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

// How an op uses one of its values, as far as re-storing it goes.
enum class Use : uint8_t {
  kFree,       // the op's formula reads q - zp (or writes rne(...) + zp): either storage, any mix
  kLinked,     // the op keeps or compares stored values: re-stored with the op's other ones
  kForbidden,  // anything else: the value keeps its storage
};

// Ops that keep or compare stored values: their 8-bit operands and results re-store together.
bool keeps_stored_values(OpKind kind) {
  switch (kind) {
    case OpKind::kMaxPool2d:
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kConcat:
    case OpKind::kSlice:
    case OpKind::kRelu:
    case OpKind::kClamp:
      return true;
    default:
      return false;
  }
}

Use operand_use(OpKind kind, size_t index) {
  switch (kind) {
    case OpKind::kConv2d:
    case OpKind::kMatmul:
      return index == 0 ? Use::kFree : Use::kForbidden;  // weights and biases are data
    case OpKind::kRequantize:
    case OpKind::kDCast:
    case OpKind::kAdd:
    case OpKind::kMul:
      return Use::kFree;
    default:
      return keeps_stored_values(kind) ? Use::kLinked : Use::kForbidden;
  }
}

// A result re-stores as the op's first operand does (a dcast's result is float, never a
// candidate); a qcast's result, of a float operand, on its own.
Use result_use(OpKind kind) { return kind == OpKind::kQCast ? Use::kFree : operand_use(kind, 0); }

// Union-find over value indices.
struct Groups {
  std::vector<int> parent;
  explicit Groups(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int v) {
    while (parent[size_t(v)] != v) v = parent[size_t(v)] = parent[size_t(parent[size_t(v)])];
    return v;
  }
  void join(int a, int b) { parent[size_t(find(a))] = find(b); }
};

std::string value_name(const Graph& g, int v) {
  const std::string& name = g.values[size_t(v)].name;
  return name.empty() ? "value #" + std::to_string(v) : "%" + name;
}

}  // namespace

Graph retype_activation_storage(const Graph& graph, bool to_unsigned, ActivationStorageReport* report) {
  ActivationStorageReport local;
  ActivationStorageReport& r = report ? *report : local;
  r = {};
  if (graph.numerics == NumericsProfile::kStableHlo) {
    r.lines.push_back("unchanged: the stablehlo profile adds zero points before rounding");
    return graph;
  }
  const size_t n = graph.values.size();
  // Candidates: per-tensor 8-bit values of the source signedness whose shifted zero point
  // stays inside the new storage (it always does when it lies in the old one).
  const int64_t shift = to_unsigned ? 128 : -128;
  auto candidate = [&](int v) {
    const ElementType& e = graph.values[size_t(v)].type.element;
    if (e.kind != ElementKind::kUniform || e.storage.width != 8 || e.storage.is_signed != to_unsigned) return false;
    const int64_t zp = e.zero_points[0] + shift;
    return zp >= (to_unsigned ? 0 : -128) && zp <= (to_unsigned ? 255 : 127);
  };
  Groups groups(n);
  std::vector<std::string> kept_why(n);  // per value: why its group keeps its storage
  auto forbid = [&](int v, std::string why) {
    if (kept_why[size_t(v)].empty()) kept_why[size_t(v)] = std::move(why);
  };
  for (int v : graph.inputs) forbid(v, "a graph input");
  for (int v : graph.outputs) forbid(v, "a graph output");
  for (const Op& op : graph.ops) {
    const std::string name = op_info(op.kind).name;
    if (op.kind == OpKind::kConstant) {
      for (int v : op.results) forbid(v, "a constant");
      continue;
    }
    int linked = -1;  // the first linked 8-bit value of the op
    auto place = [&](int v, Use use, const char* role) {
      if (!graph.values[size_t(v)].type.element.is_quant()) return;
      if (use == Use::kForbidden) {
        forbid(v, std::string(role) + " of '" + name + "'");
      } else if (use == Use::kLinked) {
        if (linked < 0) {
          linked = v;
        } else {
          groups.join(v, linked);
        }
      }
    };
    for (size_t i = 0; i < op.operands.size(); ++i) place(op.operands[i], operand_use(op.kind, i), "an operand");
    for (int v : op.results) place(v, result_use(op.kind), "a result");
  }
  // A group is re-stored when every member is a candidate and none is kept.
  std::vector<int> blocker(n, -1);  // per group root: a member that keeps the group
  for (size_t v = 0; v < n; ++v) {
    const int root = groups.find(int(v));
    if ((!candidate(int(v)) || !kept_why[v].empty()) && blocker[size_t(root)] < 0) blocker[size_t(root)] = int(v);
  }
  // Groups of constants and values computed from constants alone are data, not activations:
  // they are not reported.
  const std::vector<bool> data = constant_values(graph);
  std::vector<bool> data_group(n, true);
  for (size_t v = 0; v < n; ++v) data_group[size_t(groups.find(int(v)))] = data_group[size_t(groups.find(int(v)))] && data[v];
  Graph out = graph;
  std::vector<bool> counted(n, false);
  for (size_t v = 0; v < n; ++v) {
    const int root = groups.find(int(v));
    if (!candidate(int(v))) continue;
    if (data_group[size_t(root)]) continue;  // weights (and their transposes): not activations
    const bool keep = blocker[size_t(root)] >= 0;
    if (!counted[size_t(root)]) {
      counted[size_t(root)] = true;
      if (keep) {
        ++r.kept_groups;
        const int b = blocker[size_t(root)];
        const std::string why = kept_why[size_t(b)].empty() ? "of type " + graph.values[size_t(b)].type.to_string()
                                                            : kept_why[size_t(b)];
        r.lines.push_back(value_name(graph, int(v)) + " keeps its storage: " + value_name(graph, b) + " is " + why);
      } else {
        ++r.groups;
      }
    }
    if (keep) continue;
    ElementType& e = out.values[v].type.element;
    e.storage.is_signed = !to_unsigned;
    e.storage.min += shift;
    e.storage.max += shift;
    e.zero_points[0] += shift;
    ++r.values;
  }
  return out;
}

}  // namespace qrt::passes
