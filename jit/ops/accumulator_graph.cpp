// qrt — the graph of one contraction into its accumulators (see accumulator_graph.h).
#include "jit/ops/accumulator_graph.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "ir/nn_params.h"
#include "ir/ops.h"

namespace qrt::jit {

int contraction_channel_axis(const Graph& graph, const Op& op) {
  const Type& result = graph.values[size_t(op.results[0])].type;
  if (op.kind == OpKind::kMatmul) return int(result.rank()) - 1;
  auto w = conv2d_window(op, graph.values[size_t(op.operands[1])].type.dims);
  return w.is_ok() ? int(w->channel_dim()) : -1;
}

std::optional<std::shared_ptr<Graph>> contraction_accumulator_graph(const Graph& graph, const Op& op,
                                                                    const AccumulatorGraphOptions& options) {
  const Type& result = graph.values[size_t(op.results[0])].type;
  const int axis = contraction_channel_axis(graph, op);
  // Results stored in one or two bytes (the storage the epilogue writes).
  // Dynamic dimensions are fine (a batch of ?), but the channels are per-channel parameters.
  if (axis < 0 || result.dims[size_t(axis)] < 0 || result.element.is_sub_channel() || result.element.storage.width > 16) {
    return std::nullopt;
  }
  const ElementType& x = graph.values[size_t(op.operands[0])].type.element;
  const ElementType& w = graph.values[size_t(op.operands[1])].type.element;
  const size_t channels = size_t(result.dims[size_t(axis)]);
  if (w.is_sub_channel() || (w.num_channels() != 1 && w.num_channels() != channels) ||
      (result.element.num_channels() != 1 && result.element.num_channels() != channels)) {
    return std::nullopt;
  }
  const QuantStorage i32 = QuantStorage::full_range(32, true);
  ElementType acc;
  if (w.num_channels() == 1) {
    acc = ElementType::make_uniform(i32, result.element.float_kind, accumulator_scale(x, w, 0), 0);
  } else {
    std::vector<double> scales;
    for (size_t c = 0; c < channels; ++c) scales.push_back(accumulator_scale(x, w, c));
    acc = ElementType::make_per_axis(i32, result.element.float_kind, int32_t(axis), std::move(scales),
                                     std::vector<int64_t>(channels, 0));
  }
  // Not a copy of the whole graph (one per contraction would grow with the square of the
  // graph): the op alone, with the producer chains of the operands computable from constants
  // (its kernels prepack those) and the other operands as arguments.
  std::vector<int8_t> constant(graph.values.size(), -1);  // memo: -1 unknown, 0 no, 1 yes
  std::vector<bool> needed(graph.ops.size(), false);
  std::function<bool(int)> from_constants = [&](int v) -> bool {
    if (constant[size_t(v)] >= 0) return constant[size_t(v)] == 1;
    const int p = graph.values[size_t(v)].producer;
    bool yes = p >= 0;
    for (size_t i = 0; yes && i < graph.ops[size_t(p)].operands.size(); ++i) {
      yes = from_constants(graph.ops[size_t(p)].operands[i]);
    }
    if (yes) needed[size_t(p)] = true;
    constant[size_t(v)] = yes ? 1 : 0;
    return yes;
  };
  auto sub = std::make_shared<Graph>();
  sub->name = graph.name;
  std::vector<int> remap(graph.values.size(), -1);
  const size_t kept = options.without_bias ? std::min<size_t>(2, op.operands.size()) : op.operands.size();
  if (options.lhs && from_constants(op.operands[0])) return std::nullopt;
  for (size_t i = 0; i < kept; ++i) {
    const int v = op.operands[i];
    if (!from_constants(v) && remap[size_t(v)] < 0) {
      Type t = graph.values[size_t(v)].type;
      if (i == 0 && options.lhs) t.element = *options.lhs;
      remap[size_t(v)] = sub->add_input(t, graph.values[size_t(v)].name);
    }
  }
  auto copy_op = [&](const Op& o, std::vector<Type> result_types, std::vector<std::pair<std::string, Attribute>> attrs,
                     size_t operand_count) {
    std::vector<int> operands;
    for (size_t i = 0; i < operand_count; ++i) operands.push_back(remap[size_t(o.operands[i])]);
    const int k = sub->add_op(o.kind, std::move(operands), result_types, std::move(attrs), o.loc);
    for (size_t r = 0; r < o.results.size(); ++r) remap[size_t(o.results[r])] = sub->ops[size_t(k)].results[r];
  };
  const size_t index = size_t(&op - graph.ops.data());
  for (size_t o = 0; o < index; ++o) {
    if (!needed[o]) continue;
    std::vector<Type> types;
    for (int r : graph.ops[o].results) types.push_back(graph.values[size_t(r)].type);
    copy_op(graph.ops[o], std::move(types), graph.ops[o].attrs, graph.ops[o].operands.size());
  }
  Type acc_type = result;
  acc_type.element = acc;
  std::vector<std::pair<std::string, Attribute>> attrs = op.attrs;
  std::erase_if(attrs, [](const auto& a) { return a.first == "clamp_min" || a.first == "clamp_max"; });
  copy_op(op, {acc_type}, std::move(attrs), kept);
  sub->outputs.push_back(sub->result(int(sub->ops.size()) - 1));
  return sub;
}

}  // namespace qrt::jit
