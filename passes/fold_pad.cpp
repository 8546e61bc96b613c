// qrt — pad folding (see fold_pad.h).
#include "passes/fold_pad.h"

#include <algorithm>
#include <vector>

#include "ir/nn_params.h"

namespace qrt::passes {

namespace {

std::vector<int64_t> ints(const Attribute* a, std::vector<int64_t> fallback) {
  if (!a) return fallback;
  std::vector<int64_t> v;
  for (const Attribute& e : a->array) v.push_back(e.i);
  return v;
}

}  // namespace

Graph fold_pad_into_conv(const Graph& graph, size_t* folded_out) {
  Graph g = graph;
  std::vector<int> readers(g.values.size(), 0);
  for (const Op& op : g.ops) {
    for (int v : op.operands) ++readers[size_t(v)];
  }
  for (int v : g.outputs) ++readers[size_t(v)];
  size_t folded = 0;
  for (Op& conv : g.ops) {
    if (conv.kind != OpKind::kConv2d) continue;
    const int padded = conv.operands[0];
    const int producer = g.values[size_t(padded)].producer;
    if (producer < 0 || readers[size_t(padded)] != 1) continue;
    const Op& pad = g.ops[size_t(producer)];
    if (pad.kind != OpKind::kPad) continue;
    const Type& in = g.values[size_t(pad.operands[0])].type;
    if (!in.element.is_uniform() || in.element.kind != ElementKind::kUniform || in.rank() != 4) continue;
    if (!(in.element == g.values[size_t(padded)].type.element)) continue;
    if (pad.attr("value") && pad.attr("value")->f != 0.0) continue;
    const Attribute* layout = conv.attr("layout");
    const bool nchw = layout && layout->s == "NCHW";
    // Pad's pads: [begin of each dim..., end of each dim...]; the conv's: [top, left, bottom, right].
    const std::vector<int64_t> p = ints(pad.attr("pads"), {});
    if (p.size() != 8) continue;
    const size_t hd = nchw ? 2 : 1, wd = nchw ? 3 : 2, cd = nchw ? 1 : 3;
    if (p[0] != 0 || p[4] != 0 || p[cd] != 0 || p[cd + 4] != 0) continue;  // batch and channels unpadded
    std::vector<int64_t> c = ints(conv.attr("pads"), {0, 0, 0, 0});
    // Both are at most 2^31 - 1 (verified), so the sums fit; a sum past that limit would make
    // a conv the verifier refuses, so the pad stays.
    c[0] += p[hd];
    c[1] += p[wd];
    c[2] += p[hd + 4];
    c[3] += p[wd + 4];
    if (std::any_of(c.begin(), c.end(), [](int64_t v) { return v > kMaxWindowParam; })) continue;
    conv.operands[0] = pad.operands[0];
    conv.set_attr("pads", Attribute::make_int_array(c));
    ++folded;
  }
  if (folded_out) *folded_out = folded;
  return g;
}

}  // namespace qrt::passes
