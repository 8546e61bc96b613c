// qrt — choosing quantization parameters: from a real range (fake-quant nudging, calibration),
// symmetric per-channel weights, and the attributes of quant.stats and qrt.fake_quant.
// The reference interpreter (fake_quant semantics) and the passes (conversion, propagation)
// both use these, so a converted graph computes what the original op did.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace qrt {

/// The per-layer uniform type of `storage` that covers the real range [min, max], the way
/// TensorFlow's fake_quant and MLIR's fakeQuantAttrsToType nudge it:
///   scale = (max - min) / (qmax - qmin);  zero point = rne(qmin - min / scale) clamped to
///   [qmin, qmax], so that 0.0 is exactly representable.
/// The range is first widened to contain 0. A range of width 0 gives scale 1.0 and the
/// zero point that represents 0. A range whose scale is not a positive finite number of
/// `expressed` (too narrow: it underflows to 0; or infinite) is an error naming the range.
Result<ElementType> uniform_from_range(const QuantStorage& storage, FloatKind expressed, double min, double max);

/// Per-axis uniform type with one nudged (scale, zero point) per channel (see above; errors
/// name the channel).
Result<ElementType> per_axis_from_ranges(const QuantStorage& storage, FloatKind expressed, int32_t axis,
                                         const std::vector<double>& mins, const std::vector<double>& maxs);

/// Symmetric quantization of `abs_max` per channel into `storage` (zero point 0, scale =
/// abs_max / storage.max; 1.0 for an all-zero channel; at least the least power of two that
/// stays positive in the expressed type and in f32, for a tiny maximum). One channel gives a
/// per-layer type.
ElementType symmetric_from_abs_max(const QuantStorage& storage, FloatKind expressed, int32_t axis,
                                   const std::vector<double>& abs_max);

/// A `quant.stats` op's statistics.
struct ValueStats {
  double min = 0.0;               ///< layerStats[0]
  double max = 0.0;               ///< layerStats[1]
  int32_t axis = -1;              ///< axis of axisStats, -1 when absent
  std::vector<double> axis_min;   ///< per-channel minima (axisStats[:, 0])
  std::vector<double> axis_max;   ///< per-channel maxima (axisStats[:, 1])
};

/// Reads the statistics of a verified `quant.stats` op.
ValueStats read_stats(const Op& op);
/// The attributes of a `quant.stats` op holding `stats` (layerStats, and axisStats/axis when
/// per-channel statistics are present).
std::vector<std::pair<std::string, Attribute>> stats_attributes(const ValueStats& stats);

/// The `!quant.uniform` type a verified `qrt.fake_quant` op with operand element type
/// `expressed` quantizes to: storage from num_bits / is_signed / narrow_range, parameters
/// nudged from min/max (per-axis when `axis` is set), or the nudging's error.
Result<ElementType> fake_quant_element_type(const Op& op, FloatKind expressed);

/// The stored bounds [lo, hi] that qrt.clamp {min, max} keeps for channel `channel` of the
/// uniform type `e`: min and max quantized with the channel's scale and zero point (f64
/// arithmetic for f64 expressed types, f32 otherwise, as qcast does), inside the storage bounds.
std::pair<int64_t, int64_t> clamp_stored_bounds(const ElementType& e, size_t channel, double min, double max);

}  // namespace qrt
