// qrt — quantization-parameter propagation (the RFC): resolves !quant.calibrated and !quant.any
// types into !quant.uniform ones from a target-constraint table, quantizes the constants the
// table's rules cover, keeps parameters given in the graph, and inserts a rescale wherever
// constraints conflict. Every decision is reported.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/constraint_table.h"
#include "passes/pipeline.h"

namespace qrt::passes {

/// One line of the quantization report.
struct QuantDecision {
  std::string value;  ///< the value's name (without %)
  std::string type;   ///< the type chosen (MLIR spelling)
  std::string rule;   ///< which rule chose it, e.g. "from_stats [0, 6.1]", "same_scale with %x via qrt.max_pool2d"
};

/// What propagation decided.
struct PropagationReport {
  std::vector<QuantDecision> values;   ///< per quantized value, in program order
  std::vector<std::string> rescales;   ///< every rescale inserted, with its reason
  std::vector<std::string> notes;      ///< regions left in float and why, rows used
};

/// Propagation options beyond the table.
struct PropagateOptions {
  QuantScheme scheme;                 ///< storage of free activations, weight granularity
  /// Visit regions in this order instead of program order (tests check the result does not
  /// depend on it); empty: program order.
  std::vector<size_t> visit_order;
};

/// Resolves every placeholder type of `graph` (see the file comment):
///  1. each quant.qcast is a point; one with a uniform type is immutable (e.g. learned in
///     quantization-aware training) and is never changed;
///  2. each region is matched to a table row by its kernel and port storages; fixed_scale pins
///     free points; same_scale constraints join points into groups, found by a worklist that
///     revisits the neighbours of every point whose group label changes (the fixpoint does not
///     depend on the visit order);
///  3. a group takes the type of its first pinned point (mapping a per-axis axis through
///     transposes and reshapes), or, without pins, the union of its calibrated ranges in the
///     scheme's storage;
///  4. float constants at weight ports become symmetric per-channel i8 constants, biases i32 at
///     the accumulator scale s_in · s_w;
///  5. where a same_scale port disagrees with its group (two pins) or a fixed_scale output is
///     immutable with other parameters, a rescale (dcast → qcast to the required type) is
///     inserted and reported.
/// Graphs without placeholder types and float constants at quantized ports come back unchanged.
/// Errors name the value that cannot be resolved (e.g. !quant.any with no statistics).
Result<Graph> propagate_quant_params(const Graph& graph, const ConstraintTable& table, const PropagateOptions& options,
                                     PropagationReport* report);

/// The report as text: one line per value ("%v: TYPE  <- RULE"), then rescales and notes.
std::vector<std::string> format_report(const PropagationReport& report);

}  // namespace qrt::passes
