// qrt — printer for the MLIR text form (see text_format.h).
#include <set>

#include "ir/ops.h"
#include "ir/text_format.h"

namespace qrt {

namespace {

// MLIR: suffix-id ::= digit+ | (letter | [$._-]) (letter | digit | [$._-])*
bool is_valid_ssa_name(const std::string& n) {
  if (n.empty()) return false;
  const bool all_digits = n.find_first_not_of("0123456789") == std::string::npos;
  if (all_digits) return true;
  if (n[0] >= '0' && n[0] <= '9') return false;
  for (char c : n) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '$' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Keeps the graph's own names where valid and unique; numbers the rest like MLIR (%0, %1...).
std::vector<std::string> assign_names(const Graph& g) {
  std::vector<std::string> names(g.values.size());
  std::set<std::string> used;
  for (size_t i = 0; i < g.values.size(); ++i) {
    const std::string& n = g.values[i].name;
    if (is_valid_ssa_name(n) && used.insert(n).second) names[i] = n;
  }
  int next = 0;
  for (size_t i = 0; i < g.values.size(); ++i) {
    if (!names[i].empty()) continue;
    const bool is_arg = g.values[i].producer < 0;
    std::string candidate;
    do {
      candidate = (is_arg ? "arg" : "") + std::to_string(next++);
    } while (used.count(candidate));
    used.insert(candidate);
    names[i] = candidate;
  }
  return names;
}

std::string type_list(const Graph& g, const std::vector<int>& values) {
  std::string s = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ", ";
    s += g.values[size_t(values[i])].type.to_string();
  }
  return s + ")";
}

}  // namespace

std::string print_graph(const Graph& g) {
  const std::vector<std::string> names = assign_names(g);
  std::string out = "func.func @" + g.name + "(";
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (i) out += ", ";
    const int v = g.inputs[i];
    out += "%" + names[size_t(v)] + ": " + g.values[size_t(v)].type.to_string();
  }
  out += ")";
  if (g.outputs.size() == 1) {
    out += " -> " + g.values[size_t(g.outputs[0])].type.to_string();
  } else if (!g.outputs.empty()) {
    out += " -> " + type_list(g, g.outputs);
  }
  out += " {\n";
  for (const Op& op : g.ops) {
    out += "  ";
    for (size_t i = 0; i < op.results.size(); ++i) {
      out += (i ? ", %" : "%") + names[size_t(op.results[i])];
    }
    out += " = \"" + std::string(op_info(op.kind).name) + "\"(";
    for (size_t i = 0; i < op.operands.size(); ++i) {
      out += (i ? ", %" : "%") + names[size_t(op.operands[i])];
    }
    out += ")";
    if (!op.attrs.empty()) {
      out += " {";
      for (size_t i = 0; i < op.attrs.size(); ++i) {
        if (i) out += ", ";
        out += op.attrs[i].first;
        if (op.attrs[i].second.kind != Attribute::Kind::kUnit) {
          out += " = " + op.attrs[i].second.to_string();
        }
      }
      out += "}";
    }
    out += " : " + type_list(g, op.operands) + " -> ";
    out += op.results.size() == 1 ? g.values[size_t(op.results[0])].type.to_string()
                                  : type_list(g, op.results);
    out += "\n";
  }
  out += "  return";
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    out += (i ? ", %" : " %") + names[size_t(g.outputs[i])];
  }
  if (!g.outputs.empty()) {
    out += " : ";
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      if (i) out += ", ";
      out += g.values[size_t(g.outputs[i])].type.to_string();
    }
  }
  out += "\n}\n";
  if (g.numerics == NumericsProfile::kDefault) return out;
  // A profile other than the default is recorded as a module attribute (valid MLIR: a
  // discardable attribute of the qrt dialect), the function indented inside the module.
  std::string wrapped = std::string("module attributes {qrt.numerics = \"") + numerics_profile_name(g.numerics) + "\"} {\n";
  size_t line = 0;
  while (line < out.size()) {
    const size_t end = out.find('\n', line);
    wrapped += "  " + out.substr(line, end - line + 1);
    line = end + 1;
  }
  return wrapped + "}\n";
}

}  // namespace qrt
