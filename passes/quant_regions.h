// qrt — the propagation pass's view of a graph: quantization points (each quant.qcast, whose
// type propagation decides) and quantization regions (the RFC's logical kernels: a float op, or
// a conv/matmul with its bias add and activation, between dequantized inputs and quantized
// outputs).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace qrt::passes {

/// One quant.qcast of the graph.
struct QuantPoint {
  int op = -1;     ///< the qcast op
  int value = -1;  ///< its (quantized) result
};

/// How a region's port is fed or read.
struct RegionPort {
  int value = -1;           ///< the float value at the port (operand or result)
  int point = -1;           ///< index into points when a qcast/dcast pair quantizes it
  int quant_constant = -1;  ///< a quantized constant (possibly transposed) behind a dcast
  int float_constant = -1;  ///< the float constant op's result behind the port
  std::vector<std::vector<int64_t>> perms;  ///< transposes from the constant to the port, in order
};

/// A logical kernel: the ops it covers and its ports.
struct QuantRegion {
  std::string kernel;               ///< the root op's name, e.g. "qrt.conv2d"
  std::vector<int> ops;             ///< member ops, root first
  std::vector<RegionPort> inputs;   ///< root operands, then a bias from a fused add
  std::vector<RegionPort> outputs;  ///< the last member's result
  std::string unquantized;          ///< why the region stays float ("" when every port is quantized)
};

/// Points and regions of a graph, in program order.
struct QuantView {
  std::vector<QuantPoint> points;
  std::vector<QuantRegion> regions;
  std::vector<int> point_of_value;  ///< value -> point index (its qcast result), or -1
};

/// Finds the points and regions of `graph`. Ops that only compute from constants (weight
/// transposes) and the quantization ops themselves belong to no region.
QuantView find_quant_regions(const Graph& graph);

}  // namespace qrt::passes
