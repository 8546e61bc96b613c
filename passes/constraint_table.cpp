// qrt — the target-constraint table (see constraint_table.h).
#include "passes/constraint_table.h"

#include <cstdio>

namespace qrt::passes {

namespace {

std::string join_ports(const std::vector<Port>& ports) {
  std::string s;
  for (const Port& p : ports) s += (s.empty() ? "" : ", ") + (p.index < 0 ? std::string(p.output ? "out*" : "in*") : p.to_string());
  return s;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

bool port_matches(const std::string& want, const std::string& have) {
  return want == "*" || have.empty() || want == have;
}

}  // namespace

std::string Constraint::to_string() const {
  switch (kind) {
    case ConstraintKind::kSameScale: return "same_scale(" + join_ports(ports) + ")";
    case ConstraintKind::kFixedScale:
      return "fixed_scale(" + join_ports(ports) + ", " + number(scale) + ", " + std::to_string(zero_point) + ")";
    case ConstraintKind::kAccumulator:
      return "accumulator_scale(" + ports[0].to_string() + " = " + ports[1].to_string() + " x " + ports[2].to_string() + ")";
    case ConstraintKind::kWeights:
      return "symmetric_weights(" + ports[0].to_string() + (per_channel ? ", axis " + std::to_string(axis) : std::string(", per tensor")) + ")";
    case ConstraintKind::kFromStats: return "from_stats(" + join_ports(ports) + ")";
  }
  return "?";
}

Constraint same_scale(std::vector<Port> ports) {
  Constraint c;
  c.kind = ConstraintKind::kSameScale;
  c.ports = std::move(ports);
  return c;
}

Constraint fixed_scale(Port port, double scale, int64_t zero_point) {
  Constraint c;
  c.kind = ConstraintKind::kFixedScale;
  c.ports = {port};
  c.scale = scale;
  c.zero_point = zero_point;
  return c;
}

Constraint accumulator_scale(Port bias, Port input, Port weights) {
  Constraint c;
  c.kind = ConstraintKind::kAccumulator;
  c.ports = {bias, input, weights};
  return c;
}

Constraint symmetric_weights(Port port, int axis, bool per_channel) {
  Constraint c;
  c.kind = ConstraintKind::kWeights;
  c.ports = {port};
  c.axis = axis;
  c.per_channel = per_channel;
  return c;
}

Constraint from_stats(Port port) {
  Constraint c;
  c.kind = ConstraintKind::kFromStats;
  c.ports = {port};
  return c;
}

std::string KernelSignature::to_string() const {
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& e : v) s += (s.empty() ? "" : ", ") + e;
    return "(" + s + ")";
  };
  return kernel + list(inputs) + " -> " + list(outputs);
}

const ConstraintRow* ConstraintTable::lookup(const std::string& kernel, const PortStorages& inputs,
                                             const PortStorages& outputs) const {
  const ConstraintRow* best = nullptr;
  int best_wild = 1 << 30;
  for (const ConstraintRow& row : rows_) {
    const KernelSignature& s = row.signature;
    // "*..." as the last operand entry matches any number of further operands (concat).
    const bool variadic = !s.inputs.empty() && s.inputs.back() == "*...";
    if (s.kernel != kernel || s.outputs.size() != outputs.size()) continue;
    if (variadic ? inputs.size() + 1 < s.inputs.size() : inputs.size() != s.inputs.size()) continue;
    bool ok = true;
    int wild = 0;
    for (size_t i = 0; ok && i < inputs.size(); ++i) {
      const std::string& want = variadic && i + 1 >= s.inputs.size() ? std::string("*") : s.inputs[i];
      ok = port_matches(want, inputs[i]);
      wild += want == "*";
    }
    for (size_t i = 0; ok && i < outputs.size(); ++i) {
      ok = port_matches(s.outputs[i], outputs[i]);
      wild += s.outputs[i] == "*";
    }
    if (ok && wild < best_wild) {
      best = &row;
      best_wild = wild;
    }
  }
  return best;
}

bool parse_storage(const std::string& text, QuantStorage& out) {
  if (text.size() < 2 || (text[0] != 'u' && text[0] != 'i')) return false;
  unsigned width = 0;
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || width > 64) return false;
    width = width * 10 + unsigned(text[i] - '0');
  }
  if (width < 2 || width > 32) return false;
  out = QuantStorage::full_range(width, text[0] == 'i');
  return true;
}

std::string storage_name(const QuantStorage& storage) {
  return (storage.is_signed ? "i" : "u") + std::to_string(storage.width);
}

ConstraintTable default_constraint_table(const QuantScheme& scheme) {
  ConstraintTable t;
  const std::string preferred = storage_name(scheme.activations);
  const std::string other = preferred == "u8" ? "i8" : "u8";
  const bool pc = scheme.per_channel_weights;
  for (const std::string& act : {preferred, other}) {
    // Integer GEMM-based kernels: i8 weights symmetric per output channel, an i32 bias at the
    // accumulator's scale, activations from calibration.
    for (const char* kernel : {"qrt.conv2d", "qrt.matmul"}) {
      const int axis = std::string(kernel) == "qrt.conv2d" ? 0 : -1;
      t.add({{kernel, {act, "i8", "i32"}, {act}},
             {from_stats(in(0)), symmetric_weights(in(1), axis, pc), accumulator_scale(in(2), in(0), in(1)),
              from_stats(out(0))}});
      t.add({{kernel, {act, "i8"}, {act}}, {from_stats(in(0)), symmetric_weights(in(1), axis, pc), from_stats(out(0))}});
    }
    // Element-wise kernels rescale each operand to the result: every port is free.
    for (const char* kernel : {"qrt.add", "qrt.mul"}) {
      t.add({{kernel, {act, act}, {act}}, {from_stats(in(0)), from_stats(in(1)), from_stats(out(0))}});
    }
    // Fixed output ranges: [0, 1) in steps of 1/256.
    for (const char* kernel : {"qrt.softmax", "qrt.logistic"}) {
      t.add({{kernel, {"*"}, {act}}, {fixed_scale(out(0), 1.0 / 256.0, act == "u8" ? 0 : -128)}});
    }
    // Reductions and averages accumulate in i32 and narrow once: both sides free (a rescale
    // of the input to the output's narrower range would saturate before averaging).
    t.add({{"qrt.mean", {act}, {act}}, {from_stats(in(0)), from_stats(out(0))}});
    t.add({{"qrt.avg_pool2d", {act}, {act}}, {from_stats(in(0)), from_stats(out(0))}});
  }
  // Ops that only move, select or pad stored values, or are monotone (max, clamp): one type
  // on both sides; a rescale before them equals one after.
  for (const char* kernel : {"qrt.max_pool2d", "qrt.reshape", "qrt.transpose", "qrt.pad",
                             "qrt.relu", "qrt.clamp"}) {
    t.add({{kernel, {"*"}, {"*"}}, {same_scale({in(0), out(0)})}});
  }
  t.add({{"qrt.concat", {"*..."}, {"*"}}, {same_scale({Port{false, -1}, out(0)})}});
  return t;
}

}  // namespace qrt::passes
