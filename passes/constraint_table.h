// qrt — the target-constraint table of the quantization propagation RFC: for a logical kernel
// (a quantization region: one integer kernel with its input and output ports) and a signature
// of storage types per port, the constraints its quantization parameters must satisfy.
// The table is data: a target adds rows for the kernels it has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/types.h"

namespace qrt::passes {

/// A port of a region: input `index` (an operand) or output `index` (a result).
struct Port {
  bool output = false;  ///< false: operand
  int index = 0;        ///< operand or result number
  /// "in0", "out0".
  std::string to_string() const { return (output ? "out" : "in") + std::to_string(index); }
  bool operator==(const Port&) const = default;
};

/// Shorthand: operand port `i`.
inline Port in(int i) { return Port{false, i}; }
/// Shorthand: result port `i`.
inline Port out(int i) { return Port{true, i}; }

/// What one constraint requires (the RFC's constraint functions, by kind).
enum class ConstraintKind : uint8_t {
  kSameScale,        ///< all `ports` share one type (pooling, reshape, concat, pad, transpose, relu)
  kFixedScale,       ///< `ports[0]` has exactly `scale` and `zero_point` (softmax, logistic, tanh)
  kAccumulator,      ///< `ports[0]` (a bias) = i32, zero point 0, scale s(ports[1]) · s(ports[2])[c]
  kWeights,          ///< `ports[0]` is a constant quantized symmetrically, per channel along `axis`
  kFromStats,        ///< `ports[0]` is chosen from its calibration range (asymmetric)
};

/// One constraint function of a table row.
struct Constraint {
  ConstraintKind kind = ConstraintKind::kFromStats;
  std::vector<Port> ports;   ///< the ports it speaks about
  double scale = 0.0;        ///< kFixedScale
  int64_t zero_point = 0;    ///< kFixedScale
  int axis = 0;              ///< kWeights: channel axis of the port's value (negative: from the end)
  bool per_channel = true;   ///< kWeights: false gives one scale for the whole tensor
  /// The RFC's shorthand, e.g. "same_scale(in0, out0)", "fixed_scale(out0, 0.00390625, 0)".
  std::string to_string() const;
};

/// same_scale over `ports`.
Constraint same_scale(std::vector<Port> ports);
/// fixed_scale: `port` has exactly (scale, zero point).
Constraint fixed_scale(Port port, double scale, int64_t zero_point);
/// accumulator (multiplier) scale: bias = i32 with scale s(input) · s(weights).
Constraint accumulator_scale(Port bias, Port input, Port weights);
/// weights: symmetric, per channel along `axis` (or per tensor).
Constraint symmetric_weights(Port port, int axis, bool per_channel = true);
/// from_stats: asymmetric, from the port's calibrated range.
Constraint from_stats(Port port);

/// A row's key: the logical kernel and the storage type of each port, operands first, e.g.
/// {"qrt.conv2d", {"u8", "i8", "i32"}, {"u8"}}. "*" matches any storage; "f" marks a port that
/// stays float (hybrid kernels).
struct KernelSignature {
  std::string kernel;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  /// "qrt.conv2d(u8, i8, i32) -> (u8)".
  std::string to_string() const;
};

/// One row: a kernel the target has and the constraints its ports must satisfy.
struct ConstraintRow {
  KernelSignature signature;
  std::vector<Constraint> constraints;
};

/// The storage a port has so far, for lookup: "" when still free (calibrated, or a float constant
/// the row's weights/bias rule will quantize), else "u8", "i8", "i32", ... or "f" for float.
using PortStorages = std::vector<std::string>;

/// The table: rows in the order added. lookup() returns the compatible row with the fewest "*"
/// (ties: the earliest added), where a free port is compatible with any storage.
class ConstraintTable {
 public:
  /// Appends a row.
  void add(ConstraintRow row) { rows_.push_back(std::move(row)); }
  /// The best row for `kernel` with these port storages, or nullptr.
  const ConstraintRow* lookup(const std::string& kernel, const PortStorages& inputs, const PortStorages& outputs) const;
  /// All rows.
  const std::vector<ConstraintRow>& rows() const { return rows_; }

 private:
  std::vector<ConstraintRow> rows_;
};

/// The quantization scheme free ports get.
struct QuantScheme {
  QuantStorage activations = QuantStorage::full_range(8, false);  ///< u8 (default) or i8
  bool per_channel_weights = true;                                 ///< else one scale per tensor
};

/// Parses "u8" / "i8" / "u16" ... into a full-range storage; false on anything else.
bool parse_storage(const std::string& text, QuantStorage& out);
/// "u8", "i8", "i32" for a storage (bounds are not part of the signature).
std::string storage_name(const QuantStorage& storage);

/// qrt's x86 table for `scheme`: the kernels the JIT has (conv2d and matmul with i8 weights and
/// an i32 bias, element-wise add/mul, the same-scale ops, fixed-scale softmax/logistic), with
/// rows for the scheme's activation storage first.
ConstraintTable default_constraint_table(const QuantScheme& scheme);

}  // namespace qrt::passes
