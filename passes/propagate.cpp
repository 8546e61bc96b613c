// qrt — quantization-parameter propagation (see propagate.h).
#include "passes/propagate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <optional>

#include "ir/numerics.h"
#include "ir/ops.h"
#include "ir/quant_params.h"
#include "passes/quant_regions.h"
#include "passes/rewriter.h"

namespace qrt::passes {

namespace {

enum class Origin : uint8_t { kImmutable, kFixed, kStats, kAny, kDerived };

struct PointState {
  ElementType type;
  Origin origin = Origin::kStats;
  bool resolved = false;
  bool has_range = false;
  double lo = 0.0, hi = 0.0;
  QuantStorage storage;
  std::string rule;
};

// A same_scale edge from an input port's point to the output port's point of one region.
struct Edge {
  int from = -1, to = -1;
  std::vector<int> axis_map;  // input axis -> output axis (-1: that axis does not survive)
  size_t region = 0;
  int port = 0;               // the input port (root operand) index
  std::string constraint;
};

struct Rescale {
  ElementType type;
  std::string reason;
};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Axis correspondence of a reshape: input axis a maps to output axis b when everything before
// both holds the same elements and the axes have the same extent.
std::vector<int> reshape_axis_map(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  auto prefixes = [](const std::vector<int64_t>& d) {
    std::vector<std::pair<int64_t, int>> p{{1, 0}};  // (product of static dims, dynamic count)
    for (int64_t x : d) p.push_back(x < 0 ? std::make_pair(p.back().first, p.back().second + 1)
                                          : std::make_pair(p.back().first * x, p.back().second));
    return p;
  };
  const auto pi = prefixes(in), po = prefixes(out);
  std::vector<int> map(in.size(), -1);
  for (size_t a = 0; a < in.size(); ++a) {
    for (size_t b = 0; b < out.size(); ++b) {
      if (pi[a] == po[b] && in[a] == out[b]) map[a] = int(b);
    }
  }
  return map;
}

std::optional<ElementType> map_type(const ElementType& t, const std::vector<int>& axis_map) {
  if (t.kind != ElementKind::kUniformPerAxis) return t;
  if (size_t(t.axis) >= axis_map.size() || axis_map[size_t(t.axis)] < 0) return std::nullopt;
  ElementType m = t;
  m.axis = axis_map[size_t(t.axis)];
  return m;
}

std::vector<int> inverse(const std::vector<int>& map, size_t out_rank) {
  std::vector<int> inv(out_rank, -1);
  for (size_t a = 0; a < map.size(); ++a) {
    if (map[a] >= 0) inv[size_t(map[a])] = int(a);
  }
  return inv;
}

class Propagator {
 public:
  Propagator(const Graph& g, const ConstraintTable& table, const PropagateOptions& options)
      : g_(g), table_(table), opt_(options), view_(find_quant_regions(g)) {}

  Result<Graph> run(PropagationReport& report) {
    init_points();
    match_rows(report);
    apply_fixed_scales();
    build_edges();
    label_groups();
    QRT_RETURN_IF_ERROR(resolve_groups());
    find_conflicts(report);
    QRT_RETURN_IF_ERROR(quantize_constants(report));
    for (size_t p = 0; p < view_.points.size(); ++p) {
      report.values.push_back({name(view_.points[p].value), st_[p].type.to_string(), st_[p].rule});
    }
    return rewrite();
  }

 private:
  const std::string& name(int v) const { return g_.values[size_t(v)].name; }
  const Type& type(int v) const { return g_.values[size_t(v)].type; }

  void init_points() {
    st_.resize(view_.points.size());
    for (size_t p = 0; p < view_.points.size(); ++p) {
      const ElementType& e = type(view_.points[p].value).element;
      PointState& s = st_[p];
      s.type = e;
      if (e.is_uniform()) {
        s.origin = Origin::kImmutable;
        s.resolved = true;
        s.storage = e.storage;
        s.rule = "immutable: given in the graph";
      } else if (e.kind == ElementKind::kCalibrated) {
        s.origin = Origin::kStats;
        s.has_range = true;
        s.lo = e.cal_min;
        s.hi = e.cal_max;
        s.storage = opt_.scheme.activations;
      } else {
        s.origin = Origin::kAny;
        s.storage = e.storage;
      }
    }
  }

  std::string port_storage(const RegionPort& p) const {
    if (p.point >= 0) return storage_name(st_[size_t(p.point)].storage);
    if (p.quant_constant >= 0) return storage_name(type(p.quant_constant).element.storage);
    return "";
  }

  std::vector<size_t> region_order() const {
    if (!opt_.visit_order.empty()) return opt_.visit_order;
    std::vector<size_t> order(view_.regions.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    return order;
  }

  void match_rows(PropagationReport& report) {
    rows_.assign(view_.regions.size(), nullptr);
    for (size_t r = 0; r < view_.regions.size(); ++r) {
      const QuantRegion& region = view_.regions[r];
      const std::string at = region.kernel + " %" + name(region.outputs[0].value);
      if (!region.unquantized.empty()) {
        // Only worth a note when something around it is quantized.
        bool any = false;
        for (const RegionPort& p : region.inputs) any = any || p.point >= 0;
        if (any || region.outputs[0].point >= 0) report.notes.push_back(at + ": stays float: " + region.unquantized);
        continue;
      }
      PortStorages ins, outs;
      for (const RegionPort& p : region.inputs) ins.push_back(port_storage(p));
      for (const RegionPort& p : region.outputs) outs.push_back(port_storage(p));
      rows_[r] = table_.lookup(region.kernel, ins, outs);
      if (!rows_[r]) {
        std::string sig;
        for (const auto& s : ins) sig += (sig.empty() ? "" : ", ") + (s.empty() ? std::string("float constant") : s);
        report.notes.push_back(at + ": no table row for (" + sig + ") -> (" + outs[0] + "); its points keep their own rules");
      }
    }
  }

  // The point at a port of region r, or -1.
  int point_at(size_t r, const Port& port) const {
    const QuantRegion& region = view_.regions[r];
    const auto& ports = port.output ? region.outputs : region.inputs;
    return size_t(port.index) < ports.size() ? ports[size_t(port.index)].point : -1;
  }

  void apply_fixed_scales() {
    for (size_t r : region_order()) {
      if (!rows_[r]) continue;
      for (const Constraint& c : rows_[r]->constraints) {
        if (c.kind != ConstraintKind::kFixedScale) continue;
        const int p = point_at(r, c.ports[0]);
        if (p < 0) continue;
        PointState& s = st_[size_t(p)];
        // The kernel's fixed output is full-range storage of the point's width and sign (its
        // zero point may lie outside narrow bounds, e.g. 0 for u8<1:250>: a rescale follows).
        const ElementType fixed = ElementType::make_uniform(QuantStorage::full_range(s.storage.width, s.storage.is_signed),
                                                            s.type.float_kind, c.scale, c.zero_point);
        const std::string rule = c.to_string() + " of " + rows_[r]->signature.to_string();
        if (s.origin == Origin::kImmutable) {
          if (!(s.type == fixed)) fixed_conflicts_[p] = {fixed, rule + " conflicts with the immutable " + s.type.to_string()};
          continue;
        }
        s.type = fixed;
        s.origin = Origin::kFixed;
        s.resolved = true;
        s.rule = rule;
      }
    }
  }

  std::vector<int> axis_map(size_t r, int port) const {
    const Op& root = g_.ops[size_t(view_.regions[r].ops[0])];
    const Type& in_t = type(root.operands[size_t(port)]);
    const Type& out_t = type(view_.regions[r].outputs[0].value);
    if (root.kind == OpKind::kTranspose) {
      std::vector<int> map(in_t.rank(), -1);
      const auto& perm = root.attr("perm")->array;
      for (size_t i = 0; i < perm.size(); ++i) map[size_t(perm[i].i)] = int(i);
      return map;
    }
    if (root.kind == OpKind::kReshape) return reshape_axis_map(in_t.dims, out_t.dims);
    std::vector<int> map(in_t.rank(), -1);
    for (size_t a = 0; a < map.size() && in_t.rank() == out_t.rank(); ++a) map[a] = int(a);
    return map;
  }

  // Edges in program order (so reports and tie-breaks never depend on the visit order).
  void build_edges() {
    adj_.assign(view_.points.size(), {});
    for (size_t r = 0; r < view_.regions.size(); ++r) {
      if (!rows_[r]) continue;
      for (const Constraint& c : rows_[r]->constraints) {
        if (c.kind != ConstraintKind::kSameScale) continue;
        const int to = point_at(r, out(0));
        for (const Port& port : c.ports) {
          if (port.output) continue;
          const size_t n = port.index < 0 ? view_.regions[r].inputs.size() : 1;
          for (size_t k = 0; k < n; ++k) {
            const int index = port.index < 0 ? int(k) : port.index;
            const int from = point_at(r, in(index));
            if (from < 0 || to < 0) continue;
            edges_.push_back({from, to, axis_map(r, index), r, index, c.to_string() + " of " + view_.regions[r].kernel});
            adj_[size_t(from)].push_back(edges_.size() - 1);
            adj_[size_t(to)].push_back(edges_.size() - 1);
          }
        }
      }
    }
  }

  // Worklist: every point starts as its own group label; a point adopting a smaller label
  // sends its neighbours back to the list. The fixpoint (the smallest point index of each
  // connected group) is the same whatever order points are visited in.
  void label_groups() {
    label_.resize(view_.points.size());
    std::deque<int> work;
    for (size_t p = 0; p < label_.size(); ++p) label_[p] = int(p);
    for (size_t r : region_order()) {
      for (const RegionPort& port : view_.regions[r].inputs) if (port.point >= 0) work.push_back(port.point);
      for (const RegionPort& port : view_.regions[r].outputs) if (port.point >= 0) work.push_back(port.point);
    }
    for (size_t p = 0; p < label_.size(); ++p) work.push_back(int(p));
    while (!work.empty()) {
      const int p = work.front();
      work.pop_front();
      for (size_t e : adj_[size_t(p)]) {
        const int n = edges_[e].from == p ? edges_[e].to : edges_[e].from;
        if (label_[size_t(n)] > label_[size_t(p)]) {
          label_[size_t(n)] = label_[size_t(p)];
          work.push_back(n);
        } else if (label_[size_t(n)] < label_[size_t(p)]) {
          label_[size_t(p)] = label_[size_t(n)];
          work.push_back(p);
        }
      }
    }
  }

  Status resolve_from_range(std::vector<int> points, const std::string& why) {
    bool any = false;
    double lo = 0, hi = 0;
    for (int p : points) {
      if (!st_[size_t(p)].has_range) continue;
      lo = any ? std::min(lo, st_[size_t(p)].lo) : st_[size_t(p)].lo;
      hi = any ? std::max(hi, st_[size_t(p)].hi) : st_[size_t(p)].hi;
      any = true;
    }
    if (!any) {
      const int p = points[0];
      return Status::error("cannot choose quantization parameters for %" + name(view_.points[size_t(p)].value) +
                           ": " + type(view_.points[size_t(p)].value).element.to_string() +
                           " has no calibration statistics and no constraint fixes it");
    }
    const PointState& first = st_[size_t(points[0])];
    auto chosen = uniform_from_range(first.storage, first.type.float_kind, lo, hi);
    if (!chosen.is_ok()) {
      return Status::error("cannot choose quantization parameters for %" + name(view_.points[size_t(points[0])].value) +
                           ": " + chosen.status().message());
    }
    const ElementType t = *chosen;
    std::string rule = "from_stats [" + num(lo) + ", " + num(hi) + "], asymmetric " + storage_name(first.storage);
    if (points.size() > 1) {
      rule += ": union over the same_scale group";
      for (int p : points) rule += " %" + name(view_.points[size_t(p)].value);
    }
    for (int p : points) {
      st_[size_t(p)].type = t;
      st_[size_t(p)].resolved = true;
      st_[size_t(p)].origin = Origin::kDerived;
      st_[size_t(p)].rule = rule + why;
    }
    return Status::ok();
  }

  Status resolve_groups() {
    std::map<int, std::vector<int>> groups;
    for (size_t p = 0; p < label_.size(); ++p) groups[label_[p]].push_back(int(p));
    for (auto& [label, points] : groups) {
      std::vector<int> pins;
      for (int p : points) {
        if (st_[size_t(p)].origin == Origin::kImmutable || st_[size_t(p)].origin == Origin::kFixed) pins.push_back(p);
      }
      if (pins.empty()) {
        QRT_RETURN_IF_ERROR(resolve_from_range(points, ""));
        continue;
      }
      // Breadth-first from the pins in program order: each free point takes the first pin's
      // type that reaches it, its per-axis axis carried through transposes and reshapes.
      std::deque<int> queue(pins.begin(), pins.end());
      std::vector<bool> done(st_.size(), false);
      for (int p : pins) done[size_t(p)] = true;
      while (!queue.empty()) {
        const int u = queue.front();
        queue.pop_front();
        for (size_t e : adj_[size_t(u)]) {
          const Edge& edge = edges_[e];
          const int n = edge.from == u ? edge.to : edge.from;
          if (done[size_t(n)]) continue;
          const auto map = edge.from == u ? edge.axis_map : inverse(edge.axis_map, type(view_.points[size_t(n)].value).rank());
          const std::optional<ElementType> t = map_type(st_[size_t(u)].type, map);
          if (!t) continue;
          done[size_t(n)] = true;
          st_[size_t(n)].type = *t;
          st_[size_t(n)].resolved = true;
          st_[size_t(n)].origin = Origin::kDerived;
          st_[size_t(n)].rule = edge.constraint + ": the same type as %" + name(view_.points[size_t(u)].value);
          queue.push_back(n);
        }
      }
      for (int p : points) {
        if (!done[size_t(p)]) {
          // Its own range, in the storage of the group's first pin.
          st_[size_t(p)].storage = st_[size_t(pins[0])].storage;
          QRT_RETURN_IF_ERROR(resolve_from_range({p}, " (the per-axis type of its same_scale group cannot reach it)"));
        }
      }
    }
    return Status::ok();
  }

  void find_conflicts(PropagationReport& report) {
    for (const Edge& e : edges_) {
      const PointState& a = st_[size_t(e.from)];
      const PointState& b = st_[size_t(e.to)];
      const std::optional<ElementType> mapped = map_type(a.type, e.axis_map);
      if (mapped && *mapped == b.type) continue;
      const std::optional<ElementType> want =
          map_type(b.type, inverse(e.axis_map, type(view_.points[size_t(e.from)].value).rank()));
      const Op& root = g_.ops[size_t(view_.regions[e.region].ops[0])];
      const std::string what = "%" + name(view_.points[size_t(e.from)].value) + " (" + a.type.to_string() + ") -> " +
                               (want ? want->to_string() : std::string("?")) + " before " + view_.regions[e.region].kernel +
                               " %" + name(root.results[0]) + " operand " + std::to_string(e.port);
      if (!want) {
        report.notes.push_back("no rescale possible for " + what + ": the per-axis axis does not survive the op");
        continue;
      }
      const std::string reason = e.constraint + " conflicts: %" + name(view_.points[size_t(e.to)].value) + " is " +
                                 b.type.to_string() + " (" + b.rule + ")";
      rescales_[{view_.regions[e.region].ops[0], e.port}] = {*want, reason};
      report.rescales.push_back("rescale " + what + ": " + reason);
    }
    for (const auto& [p, fc] : fixed_conflicts_) {
      report.rescales.push_back("rescale %" + name(view_.points[size_t(p)].value) + " from " + fc.type.to_string() +
                                " after its producer: " + fc.reason);
    }
  }

  const ElementType* port_type(size_t r, int index) const {
    const RegionPort& p = view_.regions[r].inputs[size_t(index)];
    if (p.point >= 0) return &st_[size_t(p.point)].type;
    if (p.quant_constant >= 0) return &type(p.quant_constant).element;
    auto it = constants_.find(p.float_constant);
    return it == constants_.end() ? nullptr : &it->second.first.element;
  }

  // The constant's elements as doubles, and its dims.
  std::vector<double> values_of(int v) const {
    const DenseElements& d = producer_of(g_, v)->attr("value")->dense;
    std::vector<double> out(size_t(d.type.num_elements()));
    for (size_t i = 0; i < out.size(); ++i) out[i] = d.float_at(i);
    return out;
  }

  void add_constant(int v, ElementType e, const std::vector<int64_t>& stored, const std::string& rule) {
    Type t = type(v);
    t.element = e;
    DenseElements d = DenseElements::zeros(Type::tensor(t.dims, ElementType::make_int(e.storage.width)));
    for (size_t i = 0; i < stored.size(); ++i) d.set_int(i, stored[i]);
    quantized_data_[v] = std::move(d);
    constants_[v] = {t, rule};
  }

  // Quantizes float constant v per channel along `axis` (-1: per tensor) with `make_type`.
  void quantize_weights(const RegionPort& port, const Constraint& c, const std::string& row) {
    const int v = port.float_constant;
    if (constants_.count(v)) return;
    const Type& t = type(v);
    // The port's axis, carried back through the transposes to the constant's own axis.
    int axis = c.axis < 0 ? int(type(port.value).rank()) + c.axis : c.axis;
    for (auto it = port.perms.rbegin(); it != port.perms.rend(); ++it) axis = int((*it)[size_t(axis)]);
    if (!c.per_channel) axis = -1;
    const std::vector<double> w = values_of(v);
    const int64_t channels = axis < 0 ? 1 : t.dims[size_t(axis)];
    int64_t inner = 1;
    for (size_t d = size_t(axis) + 1; axis >= 0 && d < t.rank(); ++d) inner *= t.dims[d];
    auto channel = [&](size_t i) { return axis < 0 ? 0 : size_t((int64_t(i) / inner) % channels); };
    std::vector<double> abs_max(size_t(channels), 0.0);
    for (size_t i = 0; i < w.size(); ++i) abs_max[channel(i)] = std::max(abs_max[channel(i)], std::fabs(w[i]));
    const ElementType e = symmetric_from_abs_max(QuantStorage::full_range(8, true), t.element.float_kind, axis, abs_max);
    std::vector<int64_t> q(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      const float s = numerics::compute_scale_f32(e.scales[e.num_channels() == 1 ? 0 : channel(i)], e.float_kind);
      q[i] = numerics::quantize_f32(float(w[i]), s, 0, e.storage.min, e.storage.max);
    }
    add_constant(v, e, q, c.to_string() + " of " + row);
  }

  Status quantize_bias(size_t r, const Constraint& c, const std::string& row, PropagationReport& report) {
    const RegionPort& bias = view_.regions[r].inputs[size_t(c.ports[0].index)];
    const ElementType* x = port_type(r, c.ports[1].index);
    const ElementType* w = port_type(r, c.ports[2].index);
    if (!x || !w || !x->is_uniform() || !w->is_uniform()) return Status::ok();
    if (bias.quant_constant >= 0) {
      const ElementType& be = type(bias.quant_constant).element;
      for (size_t n = 0; n < be.num_channels(); ++n) {
        if (!scales_match(accumulator_scale(*x, *w, n), be.scales[n])) {
          report.notes.push_back("%" + name(bias.quant_constant) + ": immutable bias scale differs from " + c.to_string());
          break;
        }
      }
      return Status::ok();
    }
    const int v = bias.float_constant;
    if (v < 0 || constants_.count(v)) return Status::ok();
    const std::vector<double> b = values_of(v);
    std::vector<double> scales(b.size());
    std::vector<int64_t> q(b.size());
    for (size_t n = 0; n < b.size(); ++n) {
      scales[n] = accumulator_scale(*x, *w, w->num_channels() == 1 ? 0 : n);
      q[n] = numerics::quantize_f64(b[n], scales[n], 0, INT32_MIN, INT32_MAX);
    }
    const ElementType e =
        b.size() == 1 || w->num_channels() == 1
            ? ElementType::make_uniform(QuantStorage::full_range(32, true), type(v).element.float_kind, scales[0], 0)
            : ElementType::make_per_axis(QuantStorage::full_range(32, true), type(v).element.float_kind, 0, scales,
                                         std::vector<int64_t>(b.size(), 0));
    add_constant(v, e, q, c.to_string() + " of " + row);
    return Status::ok();
  }

  Status quantize_constants(PropagationReport& report) {
    for (size_t r = 0; r < view_.regions.size(); ++r) {
      if (!rows_[r]) continue;
      const std::string row = rows_[r]->signature.to_string();
      for (const Constraint& c : rows_[r]->constraints) {
        if (c.kind != ConstraintKind::kWeights) continue;
        const RegionPort& p = view_.regions[r].inputs[size_t(c.ports[0].index)];
        if (p.float_constant >= 0) quantize_weights(p, c, row);
      }
      for (const Constraint& c : rows_[r]->constraints) {
        if (c.kind == ConstraintKind::kAccumulator) QRT_RETURN_IF_ERROR(quantize_bias(r, c, row, report));
      }
    }
    for (const auto& [v, info] : constants_) report.values.push_back({name(v), info.first.element.to_string(), info.second});
    return Status::ok();
  }

  Graph rewrite() {
    Rewriter rw(g_);
    for (size_t o = 0; o < g_.ops.size(); ++o) {
      const Op& op = g_.ops[o];
      const int point = op.kind == OpKind::kQCast ? view_.point_of_value[size_t(op.results[0])] : -1;
      if (op.kind == OpKind::kConstant && constants_.count(op.results[0])) {
        const int v = op.results[0];
        const int q = rw.emit(OpKind::kConstant, {}, constants_[v].first,
                              {{"value", Attribute::make_dense(quantized_data_[v])}}, op.loc, fresh_name(g_, name(v) + "_q"));
        rw.map(v, rw.emit(OpKind::kDCast, {q}, type(v), {}, op.loc, name(v)));
        continue;
      }
      if (point >= 0) {
        Type t = type(op.results[0]);
        int x = rw.at(op.operands[0]);
        if (auto fc = fixed_conflicts_.find(point); fc != fixed_conflicts_.end()) {
          Type ft = t;
          ft.element = fc->second.type;
          const int q = rw.emit(OpKind::kQCast, {x}, ft, {}, op.loc, fresh_name(g_, name(op.results[0]) + "_fixed"));
          x = rw.emit(OpKind::kDCast, {q}, type(op.operands[0]), {}, op.loc, fresh_name(g_, name(op.results[0]) + "_fixed_dq"));
        }
        t.element = st_[size_t(point)].type;
        rw.map(op.results[0], rw.emit(OpKind::kQCast, {x}, t, {}, op.loc, name(op.results[0])));
        continue;
      }
      std::map<size_t, int> rescaled;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        auto rs = rescales_.find({int(o), int(i)});
        if (rs == rescales_.end()) continue;
        // dcast(x_q) -> qcast(required) -> dcast: fold-qdq turns it into one requantize.
        const int v = op.operands[i];
        Type qt = type(v);
        qt.element = rs->second.type;
        const int q = rw.emit(OpKind::kQCast, {rw.at(v)}, qt, {}, op.loc, fresh_name(g_, name(v) + "_rescaled"));
        const int d = rw.emit(OpKind::kDCast, {q}, type(v), {}, op.loc, fresh_name(g_, name(v) + "_rescaled_dq"));
        rescaled[i] = d;
      }
      rw.copy(op, rescaled);
    }
    return rw.finish();
  }

  const Graph& g_;
  const ConstraintTable& table_;
  PropagateOptions opt_;
  QuantView view_;
  std::vector<PointState> st_;
  std::vector<const ConstraintRow*> rows_;
  std::vector<Edge> edges_;
  std::vector<std::vector<size_t>> adj_;
  std::vector<int> label_;
  std::map<int, Rescale> fixed_conflicts_;
  std::map<std::pair<int, int>, Rescale> rescales_;
  std::map<int, std::pair<Type, std::string>> constants_;
  std::map<int, DenseElements> quantized_data_;
};

}  // namespace

Result<Graph> propagate_quant_params(const Graph& graph, const ConstraintTable& table, const PropagateOptions& options,
                                     PropagationReport* report) {
  PropagationReport local;
  return Propagator(graph, table, options).run(report ? *report : local);
}

std::vector<std::string> format_report(const PropagationReport& report) {
  std::vector<std::string> lines;
  for (const QuantDecision& d : report.values) lines.push_back("%" + d.value + " : " + d.type + "  <- " + d.rule);
  for (const std::string& r : report.rescales) lines.push_back(r);
  for (const std::string& n : report.notes) lines.push_back("note: " + n);
  return lines;
}

}  // namespace qrt::passes
