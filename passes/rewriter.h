// qrt — builds a rewritten copy of a graph: ops are copied or replaced in program order,
// values of the source graph map to values of the new one.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace qrt::passes {

/// A graph under construction from `source`: its arguments are added up front; copy() and
/// emit() append ops; finish() adds the returned values.
class Rewriter {
 public:
  /// Starts with `source`'s arguments (same types and names).
  explicit Rewriter(const Graph& source);

  /// The new value standing for source value `v` (which must have been mapped).
  int at(int v) const { return map_.at(v); }
  /// True when source value `v` has been mapped.
  bool mapped(int v) const { return map_.count(v) != 0; }
  /// Makes source value `v` stand for new value `nv`.
  void map(int v, int nv) { map_[v] = nv; }

  /// Copies source op `op` with mapped operands; its results keep their types and names.
  /// `replaced` gives new-graph values for some operand positions instead of their mapping.
  void copy(const Op& op, const std::map<size_t, int>& replaced = {});
  /// Appends an op of one result of type `t` named `name`; returns the new value.
  int emit(OpKind kind, std::vector<int> operands, const Type& t, std::vector<std::pair<std::string, Attribute>> attrs,
           SourceLoc loc, const std::string& name);
  /// The graph under construction.
  Graph& graph() { return out_; }
  /// Adds the returned values and returns the graph.
  Graph finish();

 private:
  const Graph& src_;
  std::map<int, int> map_;
  Graph out_;
};

/// Number of uses of each value of `graph` (operands of ops plus returns).
std::vector<int> count_uses(const Graph& graph);

/// Per value: true for constants and values computed from constants alone (weight
/// transposes): data, not activations.
std::vector<bool> constant_values(const Graph& graph);

/// The op defining value `v`, or nullptr for arguments.
const Op* producer_of(const Graph& graph, int v);

/// `t` transposed by `perm` (result dimension i is dimension perm[i]); a per-axis type's
/// channel axis follows its dimension.
Type transposed_type(const Type& t, const std::vector<int64_t>& perm);

/// The `perm` attribute of a qrt.transpose as integers.
std::vector<int64_t> perm_of(const Op& transpose);

/// A name for a new value derived from `base` that no value of `graph` has.
std::string fresh_name(const Graph& graph, const std::string& base);

}  // namespace qrt::passes
