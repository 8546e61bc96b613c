// qrt — batch-group expansion (see expand_batch_groups.h).
#include "passes/expand_batch_groups.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "ir/nn_params.h"
#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

// `t` restricted to rows [begin, end) of dimension 0; per-axis parameters along axis 0 follow.
Type rows_type(const Type& t, int64_t begin, int64_t end) {
  Type r = t;
  r.dims[0] = end - begin;
  ElementType& e = r.element;
  if (e.kind == ElementKind::kUniformPerAxis && e.axis == 0) {
    e.scales = std::vector<double>(e.scales.begin() + begin, e.scales.begin() + end);
    e.zero_points = std::vector<int64_t>(e.zero_points.begin() + begin, e.zero_points.begin() + end);
  }
  return r;
}

// Rows [begin, end) of constant elements `d` (row-major, so one byte range).
DenseElements constant_rows(const DenseElements& d, int64_t begin, int64_t end) {
  DenseElements out = DenseElements::zeros(rows_type(d.type, begin, end));
  const size_t row_bytes = d.size() / size_t(d.type.dims[0]);
  std::memcpy(out.bytes.data(), d.data() + size_t(begin) * row_bytes, size_t(end - begin) * row_bytes);
  return out;
}

class Expander {
 public:
  Expander(const Graph& graph, std::vector<std::string>& log) : graph_(graph), rw_(graph), log_(log) {}

  Graph run() {
    for (const Op& op : graph_.ops) {
      const Attribute* b = op.kind == OpKind::kConv2d ? op.attr("batch_groups") : nullptr;
      if (!b || b->kind != Attribute::Kind::kInt || b->i <= 1) {
        rw_.copy(op);
        continue;
      }
      const std::string name = "qrt.conv2d %" + graph_.values[size_t(op.results[0])].name;
      if (std::string why = why_whole(op, b->i); !why.empty()) {
        log_.push_back(name + ": kept whole (runs on the reference): " + why);
        rw_.copy(op);
        continue;
      }
      split(op, b->i);
      log_.push_back(name + ": batch_groups " + std::to_string(b->i) + " -> " + std::to_string(b->i) +
                     " convolutions and a concat");
    }
    return rw_.finish();
  }

 private:
  const Type& type(int v) const { return graph_.values[size_t(v)].type; }

  // A name no value of the source graph or of the graph under construction has.
  std::string unique(const std::string& base) {
    auto taken = [](const Graph& g, const std::string& n) {
      for (const Value& v : g.values) {
        if (v.name == n) return true;
      }
      return false;
    };
    std::string n = base;
    for (int i = 1; taken(graph_, n) || taken(rw_.graph(), n); ++i) n = base + "_" + std::to_string(i);
    return n;
  }

  const DenseElements* constant(int v) const {
    const Op* p = producer_of(graph_, v);
    const Attribute* a = p && p->kind == OpKind::kConstant ? p->attr("value") : nullptr;
    return a && a->kind == Attribute::Kind::kDense ? &a->dense : nullptr;
  }

  // Why operand `v` cannot be cut into row slices, or "".
  std::string why_not_sliced(int v, const char* what) const {
    const ElementType& e = type(v).element;
    if (e.is_sub_channel()) return std::string("the ") + what + " is quantized block-wise";
    const DenseElements* d = constant(v);
    if (d && is_nibble_packed(d->type.element)) return std::string("the ") + what + " holds fewer than 8 bits per element";
    if (!d && e.kind == ElementKind::kUniformPerAxis) return std::string("the ") + what + " is per-axis and not a constant";
    if (!d && type(v).dims[0] < 0) return std::string("the ") + what + " has a dynamic first dimension";
    return "";
  }

  std::string why_whole(const Op& op, int64_t groups) const {
    const Type& x = type(op.operands[0]);
    const Type& y = type(op.results[0]);
    if (x.rank() != 4 || x.dims[0] < 0) return "a dynamic batch";
    if (x.dims[0] % groups != 0 || type(op.operands[1]).dims[0] % groups != 0) return "batch or channels not divisible";
    if (y.element.kind == ElementKind::kUniformPerAxis) return "a per-axis result (the pieces' concat takes per-layer types)";
    if (std::string why = why_not_sliced(op.operands[1], "filter"); !why.empty()) return why;
    if (op.operands.size() > 2) return why_not_sliced(op.operands[2], "bias");
    return "";
  }

  // Rows [begin, end) of operand `v`: a sliced constant, or a qrt.slice of the value.
  int rows_of(int v, int64_t begin, int64_t end, const SourceLoc& loc, const std::string& base) {
    const Type t = rows_type(type(v), begin, end);
    const std::string name = unique(base);
    if (const DenseElements* d = constant(v)) {
      return rw_.emit(OpKind::kConstant, {}, t, {{"value", Attribute::make_dense(constant_rows(*d, begin, end))}}, loc, name);
    }
    std::vector<int64_t> starts(type(v).rank(), 0), ends(type(v).rank(), std::numeric_limits<int64_t>::max());
    starts[0] = begin;
    ends[0] = end;
    return rw_.emit(OpKind::kSlice, {rw_.at(v)}, t,
                    {{"ends", Attribute::make_int_array(ends)},
                     {"starts", Attribute::make_int_array(starts)},
                     {"steps", Attribute::make_int_array(std::vector<int64_t>(type(v).rank(), 1))}},
                    loc, name);
  }

  void split(const Op& op, int64_t groups) {
    const int x = op.operands[0], f = op.operands[1], y = op.results[0];
    const std::string& yname = graph_.values[size_t(y)].name;
    const Attribute* layout = op.attr("layout");
    const size_t channel_dim = layout && layout->s == "NCHW" ? 1 : 3;
    const int64_t samples = type(x).dims[0] / groups, channels = type(f).dims[0] / groups;
    std::vector<std::pair<std::string, Attribute>> attrs;
    for (const auto& a : op.attrs) {
      if (a.first != "batch_groups") attrs.push_back(a);
    }
    std::vector<int> pieces;
    for (int64_t g = 0; g < groups; ++g) {
      const std::string tag = yname + "_bg" + std::to_string(g);
      // The input's samples of batch group g: a slice of batch rows.
      Type xs = type(x);
      xs.dims[0] = samples;
      std::vector<int64_t> starts(4, 0), ends(4, std::numeric_limits<int64_t>::max());
      starts[0] = g * samples;
      ends[0] = (g + 1) * samples;
      const int xg = rw_.emit(OpKind::kSlice, {rw_.at(x)}, xs,
                              {{"ends", Attribute::make_int_array(ends)},
                               {"starts", Attribute::make_int_array(starts)},
                               {"steps", Attribute::make_int_array({1, 1, 1, 1})}},
                              op.loc, unique(tag + "_x"));
      std::vector<int> operands = {xg, rows_of(f, g * channels, (g + 1) * channels, op.loc, tag + "_filter")};
      if (op.operands.size() > 2) operands.push_back(rows_of(op.operands[2], g * channels, (g + 1) * channels, op.loc, tag + "_bias"));
      Type yt = type(y);
      yt.dims[channel_dim] = channels;
      pieces.push_back(rw_.emit(OpKind::kConv2d, operands, yt, attrs, op.loc, unique(tag)));
    }
    // The concat takes the convolution's own value name.
    rw_.map(y, rw_.emit(OpKind::kConcat, pieces, type(y), {{"axis", Attribute::make_int(int64_t(channel_dim))}}, op.loc, yname));
  }

  const Graph& graph_;
  Rewriter rw_;
  std::vector<std::string>& log_;
};

}  // namespace

Graph expand_batch_groups(const Graph& graph, std::vector<std::string>& log) { return Expander(graph, log).run(); }

}  // namespace qrt::passes
