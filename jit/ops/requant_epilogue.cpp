// qrt — the shared requantization epilogue (see requant_epilogue.h).
#include "jit/ops/requant_epilogue.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "ir/numerics.h"
#include "ir/ops.h"
#include "ir/quant_params.h"
#include "ir/types.h"
#include "jit/core/microkernel.h"
#include "jit/ops/op_kernel.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

std::string fill_channel_quant(const ElementType& x, const ElementType& w, const ElementType& out, size_t n,
                               ChannelQuant& q) {
  if (x.kind != ElementKind::kUniform) return "activations are not per-tensor quantized";
  if (!w.is_uniform()) return "weights are not uniformly quantized";
  if (!out.is_uniform()) return "the result is not uniformly quantized";
  if (x.storage.width != 8 || w.storage.width != 8) return "activations and weights must have 8-bit storage";
  if (w.num_channels() != 1 && w.num_channels() != n) return "weight channels do not match the output columns";
  if (out.num_channels() != 1 && out.num_channels() != n) return "result channels do not match the output columns";
  q.a_signed = x.storage.is_signed;
  q.a_zero_point = int32_t(x.zero_points[0]);
  q.a_min = int32_t(x.storage.min);
  q.a_max = int32_t(x.storage.max);
  q.w_signed = w.storage.is_signed;
  q.w_zero_point.resize(n);
  auto ch = [](const ElementType& e, size_t j) { return e.num_channels() == 1 ? 0 : j; };
  for (size_t j = 0; j < n; ++j) q.w_zero_point[j] = int32_t(w.zero_points[ch(w, j)]);
  // The accumulator type stores acc unchanged (docs/numerics.md, qrt.matmul).
  bool accumulator_out = out.storage.width == 32 && out.storage.is_signed;
  for (size_t j = 0; j < n && accumulator_out; ++j) {
    accumulator_out = out.zero_points[ch(out, j)] == 0 && scales_match(accumulator_scale(x, w, j), out.scales[ch(out, j)]);
  }
  if (accumulator_out) {
    q.out = OutKind::kS32;
    return "";
  }
  if (out.storage.width != 8) return "requantization to " + std::to_string(out.storage.width) + "-bit storage";
  q.out = out.storage.is_signed ? OutKind::kS8 : OutKind::kU8;
  q.out_lo.assign(n, int32_t(out.storage.min));
  q.out_hi.assign(n, int32_t(out.storage.max));
  q.multiplier.resize(n);
  q.out_zero_point.resize(n);
  for (size_t j = 0; j < n; ++j) {
    q.multiplier[j] = numerics::multiplier(accumulator_scale(x, w, j), out.scales[ch(out, j)]);
    q.out_zero_point[j] = int32_t(out.zero_points[ch(out, j)]);
  }
  return "";
}

Result<std::string> read_conv_operands(const Graph& graph, const Op& op, ConvOperands& out) {
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& f = graph.values[size_t(op.operands[1])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  if (!x.element.is_quant() || !f.element.is_quant()) return std::string("float and hybrid convolutions run on the reference");
  out.filter = constant_operand(graph, op.operands[1]);
  if (!out.filter) return std::string("the filter is not a constant");
  QRT_ASSIGN_OR_RETURN(out.w, conv2d_window(op, f.dims));
  if (f.element.kind == ElementKind::kUniformPerAxis && f.element.axis != 0) {
    return std::string("per-axis filters must be quantized along the output channels");
  }
  if (y.element.kind == ElementKind::kUniformPerAxis && y.element.axis != int32_t(out.w.channel_dim())) {
    return std::string("a per-axis result must be quantized along its channels");
  }
  if (op.operands.size() > 2) {
    out.bias = constant_operand(graph, op.operands[2]);
    if (!out.bias) return std::string("the bias is not a constant");
  }
  return std::string();
}

std::string apply_fused_clamp(const Op& op, const ElementType& out, ChannelQuant& q) {
  const std::optional<FusedClamp> c = fused_clamp(op);
  if (!c) return "";
  if (q.out != OutKind::kU8 && q.out != OutKind::kS8) return "a clamp fused into an int32 or f32 result";
  for (size_t j = 0; j < q.out_lo.size(); ++j) {
    // Inside the storage bounds and lo <= hi: quantization is monotonic and clamps (so the
    // intersection with the storage bounds is never empty).
    const auto [lo, hi] = clamp_stored_bounds(out, out.num_channels() == 1 ? 0 : j, c->min, c->max);
    q.out_lo[j] = int32_t(lo);
    q.out_hi[j] = int32_t(hi);
  }
  return "";
}

std::string apply_numerics_profile(const Graph& graph, const ElementType& x, const ElementType& w,
                                   const ElementType& out, ChannelQuant& q) {
  // int32 accumulators are the same integers in every profile.
  if (graph.numerics == NumericsProfile::kDefault || q.out == OutKind::kS32) return "";
  if (graph.numerics != NumericsProfile::kTflite) {
    return std::string("the integer kernels' epilogues implement the default and tflite profiles, not ") +
           numerics_profile_name(graph.numerics);
  }
  if (q.out != OutKind::kU8 && q.out != OutKind::kS8) return "tflite requantization to other than 8-bit storage";
  // The reference's multipliers (AccumulatorRequant), so kernel and reference agree by construction.
  const AccumulatorRequant requant(graph.numerics, x, w, out, q.out_zero_point.size());
  q.q31 = true;
  q.q31_multiplier.clear();
  q.q31_shift.clear();
  for (const numerics::QuantizedMultiplier& m : requant.q31()) {
    q.q31_multiplier.push_back(m.multiplier);
    q.q31_shift.push_back(m.shift);
  }
  return "";
}

int64_t activation_deviation(const ChannelQuant& q) {
  return std::max<int64_t>(std::llabs(int64_t(q.a_min) - q.a_zero_point), std::llabs(int64_t(q.a_max) - q.a_zero_point));
}

std::string int32_bound_why_not(int64_t channel, int64_t bound) {
  if (bound <= std::numeric_limits<int32_t>::max()) return "";
  return "channel " + std::to_string(channel) + " could leave int32 (bound " + std::to_string(bound) +
         "); the reference checks it at run time";
}

std::string multipliers_why_not(const ChannelQuant& q) {
  if (q.q31) return "";  // Q31 multipliers are finite by construction
  for (float m : q.multiplier) {
    if (!std::isfinite(m)) return "a requantization multiplier is not finite";
  }
  return "";
}

void put_epilogue_lane(uint8_t* block, unsigned width, unsigned lane, const ChannelQuant& q, size_t j,
                       int32_t folded_bias, int32_t zw) {
  auto put = [&](size_t field, const void* v) { std::memcpy(block + (field * width + lane) * 4, v, 4); };
  put(kEpBias, &folded_bias);
  put(kEpWeightZeroPoint, &zw);
  if (q.q31) {
    const int32_t zo = q.out_zero_point[j], shift = q.q31_shift[j];
    const int32_t lo = q.out_lo[j] - zo, hi = q.out_hi[j] - zo;
    const int32_t left = std::max(shift, 0), right = std::max(-shift, 0);
    const int32_t mask = int32_t((int64_t(1) << right) - 1), threshold = mask >> 1;
    put(kEpMultiplier, &q.q31_multiplier[j]);
    put(kEpLowerBound, &lo);
    put(kEpUpperBound, &hi);
    put(kEpOutputZeroPoint, &zo);
    put(kEpQ31LeftShift, &left);
    put(kEpQ31RightShift, &right);
    put(kEpQ31RemainderMask, &mask);
    put(kEpQ31Threshold, &threshold);
    return;
  }
  if (q.out != OutKind::kS32) put(kEpMultiplier, &q.multiplier[j]);
  if (q.out == OutKind::kU8 || q.out == OutKind::kS8) {
    const int32_t zo = q.out_zero_point[j];
    const float lo = float(q.out_lo[j] - zo), hi = float(q.out_hi[j] - zo);
    put(kEpLowerBound, &lo);
    put(kEpUpperBound, &hi);
    put(kEpOutputZeroPoint, &zo);
  }
}

}  // namespace qrt::jit
