// qrt — choosing quantization parameters (see quant_params.h).
#include "ir/quant_params.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/float_format.h"
#include "ir/numerics.h"

namespace qrt {

namespace {

// One nudged (scale, zero point) pair for [min, max] in storage [qmin, qmax]. A scale that is
// not a positive finite number of the expressed type (a range too narrow for the storage's
// steps underflows to 0, and 0 / 0 is no zero point) is an error naming the range.
Result<std::pair<double, int64_t>> nudged(const QuantStorage& storage, FloatKind expressed, double min, double max) {
  const double given_min = min, given_max = max;
  min = std::min(min, 0.0);
  max = std::max(max, 0.0);
  const double qmin = double(storage.min);
  const double qmax = double(storage.max);
  if (max - min <= 0.0) {
    // All zeros: any scale represents them; the zero point must be 0's stored value.
    return std::pair<double, int64_t>{1.0, std::clamp<int64_t>(0, storage.min, storage.max)};
  }
  const double scale = (max - min) / (qmax - qmin);
  const double rounded = round_to_float_kind(scale, expressed);
  if (!(scale > 0.0) || !std::isfinite(scale) || !(rounded > 0.0) || !std::isfinite(rounded)) {
    return Status::error("the range [" + format_mlir_float(given_min, FloatKind::kF64) + ", " +
                         format_mlir_float(given_max, FloatKind::kF64) + "] gives the scale " +
                         format_mlir_float(scale, FloatKind::kF64) + ", which is not a positive finite " +
                         float_kind_name(expressed));
  }
  const double zp_from_min = qmin - min / scale;
  int64_t zp;
  if (zp_from_min <= qmin) {
    zp = storage.min;
  } else if (zp_from_min >= qmax) {
    zp = storage.max;
  } else {
    zp = int64_t(numerics::round_half_even(zp_from_min));
  }
  return std::pair<double, int64_t>{scale, zp};
}

double attr_number(const Attribute& a) { return a.kind == Attribute::Kind::kInt ? double(a.i) : a.f; }

std::vector<double> number_list(const Attribute& a) {
  std::vector<double> out;
  if (a.kind == Attribute::Kind::kArray) {
    for (const Attribute& e : a.array) out.push_back(attr_number(e));
  } else {
    out.push_back(attr_number(a));
  }
  return out;
}

}  // namespace

Result<ElementType> uniform_from_range(const QuantStorage& storage, FloatKind expressed, double min, double max) {
  QRT_ASSIGN_OR_RETURN(const auto nudge, nudged(storage, expressed, min, max));
  return ElementType::make_uniform(storage, expressed, nudge.first, nudge.second);
}

Result<ElementType> per_axis_from_ranges(const QuantStorage& storage, FloatKind expressed, int32_t axis,
                                         const std::vector<double>& mins, const std::vector<double>& maxs) {
  std::vector<double> scales;
  std::vector<int64_t> zps;
  for (size_t c = 0; c < mins.size(); ++c) {
    auto nudge = nudged(storage, expressed, mins[c], maxs[c]);
    if (!nudge.is_ok()) return Status::error("channel " + std::to_string(c) + ": " + nudge.status().message());
    scales.push_back(nudge->first);
    zps.push_back(nudge->second);
  }
  return ElementType::make_per_axis(storage, expressed, axis, std::move(scales), std::move(zps));
}

ElementType symmetric_from_abs_max(const QuantStorage& storage, FloatKind expressed, int32_t axis,
                                   const std::vector<double>& abs_max) {
  std::vector<double> scales;
  for (double m : abs_max) {
    double scale = m > 0.0 ? m / double(storage.max) : 1.0;
    // A maximum so small that its scale rounds to 0 in the expressed type or in the f32 the
    // kernels compute with: the least power of two that does not (every value then quantizes
    // to 0 or a few steps, as it would with the exact scale).
    for (int e = -149; !(round_to_float_kind(scale, expressed) > 0.0 &&
                         numerics::compute_scale_f32(scale, expressed) > 0.0f) && e <= 0; ++e) {
      scale = std::ldexp(1.0, e);
    }
    scales.push_back(scale);
  }
  if (scales.size() == 1) return ElementType::make_uniform(storage, expressed, scales[0], 0);
  std::vector<int64_t> zps(scales.size(), 0);
  return ElementType::make_per_axis(storage, expressed, axis, std::move(scales), std::move(zps));
}

ValueStats read_stats(const Op& op) {
  ValueStats s;
  const DenseElements& layer = op.attr("layerStats")->dense;
  s.min = layer.float_at(0);
  s.max = layer.float_at(1);
  if (const Attribute* axis_stats = op.attr("axisStats")) {
    s.axis = int32_t(op.attr("axis")->i);
    const DenseElements& d = axis_stats->dense;
    for (int64_t c = 0; c < d.type.dims[0]; ++c) {
      s.axis_min.push_back(d.float_at(size_t(2 * c)));
      s.axis_max.push_back(d.float_at(size_t(2 * c + 1)));
    }
  }
  return s;
}

std::vector<std::pair<std::string, Attribute>> stats_attributes(const ValueStats& stats) {
  auto dense_f32 = [](std::vector<int64_t> dims, const std::vector<double>& values) {
    DenseElements d;
    d.type = Type::tensor(std::move(dims), ElementType::make_float(FloatKind::kF32));
    d.bytes.resize(values.size() * 4);
    for (size_t i = 0; i < values.size(); ++i) {
      const float f = float(values[i]);
      std::memcpy(d.bytes.data() + 4 * i, &f, 4);
    }
    return Attribute::make_dense(std::move(d));
  };
  std::vector<std::pair<std::string, Attribute>> attrs;
  if (stats.axis >= 0) {
    std::vector<double> pairs;
    for (size_t c = 0; c < stats.axis_min.size(); ++c) {
      pairs.push_back(stats.axis_min[c]);
      pairs.push_back(stats.axis_max[c]);
    }
    attrs.emplace_back("axis", Attribute::make_int(stats.axis));
    attrs.emplace_back("axisStats", dense_f32({int64_t(stats.axis_min.size()), 2}, pairs));
  }
  attrs.emplace_back("layerStats", dense_f32({2}, {stats.min, stats.max}));
  return attrs;
}

Result<ElementType> fake_quant_element_type(const Op& op, FloatKind expressed) {
  const Attribute* bits_attr = op.attr("num_bits");
  const unsigned bits = bits_attr ? unsigned(bits_attr->i) : 8u;
  const Attribute* signed_attr = op.attr("is_signed");
  const Attribute* narrow_attr = op.attr("narrow_range");
  QuantStorage storage = QuantStorage::full_range(bits, signed_attr && signed_attr->b);
  if (narrow_attr && narrow_attr->b) storage.min += 1;
  const std::vector<double> mins = number_list(*op.attr("min"));
  const std::vector<double> maxs = number_list(*op.attr("max"));
  if (const Attribute* axis = op.attr("axis")) {
    return per_axis_from_ranges(storage, expressed, int32_t(axis->i), mins, maxs);
  }
  return uniform_from_range(storage, expressed, mins[0], maxs[0]);
}

std::pair<int64_t, int64_t> clamp_stored_bounds(const ElementType& e, size_t channel, double min, double max) {
  const int64_t zp = e.zero_points[channel];
  if (e.float_kind == FloatKind::kF64) {
    const double s = e.scales[channel];
    return {numerics::quantize_f64(min, s, zp, e.storage.min, e.storage.max),
            numerics::quantize_f64(max, s, zp, e.storage.min, e.storage.max)};
  }
  const float s = numerics::compute_scale_f32(e.scales[channel], e.float_kind);
  return {numerics::quantize_f32(float(min), s, zp, e.storage.min, e.storage.max),
          numerics::quantize_f32(float(max), s, zp, e.storage.min, e.storage.max)};
}

}  // namespace qrt
