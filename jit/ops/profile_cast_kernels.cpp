// qrt — TFLite's quantize and requantize (tflite profiles) on kernels instead of the reference:
// - `qrt.requantize` of 8-bit per-tensor values to 8-bit per-tensor values has 256 possible
//   results, so the reference's formula (numerics::requantize_tflite: q - z_in times the Q31
//   form of f32(s_in) / f32(s_out), + z_out) fills a table once and the run is the byte table
//   kernel (kLut8, or the byte clamp where the table is one); 16-bit storage, and 32-bit
//   inputs (accumulators), run the formula per element in C++.
// - `quant.qcast` of f32 values to per-tensor 8- or 16-bit storage runs the reference's
//   numerics::quantize_tflite (one f32 division, rounding half away from zero) per element in
//   C++, the elements split over the threads.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/ops/ew_ops.h"
#include "jit/ops/profile_kernels.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

namespace {

// Elements per task (a few µs of scalar formula).
constexpr int64_t kCastTaskElements = 16 * 1024;

bool per_tensor(const ElementType& e) { return e.kind == ElementKind::kUniform && e.scales.size() == 1; }

// TFLite's quantize (f32 in) or requantize, element by element in tasks of kCastTaskElements.
class ProfileCastKernel final : public OpKernel {
 public:
  enum class Kind { kQuantize, kRequantize };

  ProfileCastKernel(const Graph& graph, const Op& op, Kind kind)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        in_(graph.values[size_t(op.operands[0])].type.element),
        kind_(kind),
        single_(graph.numerics == NumericsProfile::kTfliteSingleRounding),
        profile_(numerics_profile_name(graph.numerics)) {
    const ElementType& out = result_type_.element;
    if (kind_ == Kind::kRequantize) {
      m_ = numerics::quantize_multiplier(double(float(in_.scales[0])) / double(float(out.scales[0])), single_);
    }
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;  // element-wise: the operand's run-time shape
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const int64_t n = y.num_elements(), tasks = (n + kCastTaskElements - 1) / kCastTaskElements;
    const ElementType& out = result_type_.element;
    const Tensor& x = *operands[0];
    parallel.for_each(size_t(tasks), [&](size_t t) {
      const int64_t begin = int64_t(t) * kCastTaskElements, end = std::min(n, begin + kCastTaskElements);
      // The storage types are dispatched once per task, not per element.
      with_storage(out.storage, y.bytes(), [&](auto* py) {
        using Out = std::remove_reference_t<decltype(*py)>;
        if (kind_ == Kind::kQuantize) {
          const float* xf = reinterpret_cast<const float*>(x.bytes());
          const float scale = float(out.scales[0]);
          for (int64_t i = begin; i < end; ++i) {
            py[i] = Out(numerics::quantize_tflite(xf[i], scale, out.zero_points[0], out.storage.min, out.storage.max));
          }
          return;
        }
        auto requantize = [&](const auto* px) {
          for (int64_t i = begin; i < end; ++i) {
            const int64_t q = int64_t(px[i]) - in_.zero_points[0];
            py[i] = Out(numerics::requantize_tflite(q, m_, out.zero_points[0], out.storage.min, out.storage.max, single_));
          }
        };
        with_int_storage(in_.storage, x.bytes(), requantize);  // 32-bit inputs: accumulators
      });
    });
    return Status::ok();
  }

  bool can_overwrite_operand(size_t) const override {
    // In place only where an element's input is as wide as its result (read before written).
    return kind_ == Kind::kRequantize && in_.storage.width == result_type_.element.storage.width;
  }

  std::string describe() const override {
    return kind_ == Kind::kQuantize
               ? "quantize with " + profile_ + "'s formula (portable C++: f32 division, rounding half away from zero)"
               : "requantize with " + profile_ + "'s formula (portable C++: Q31 multiplier and rounding shift)";
  }

 private:
  ElementType in_;
  Kind kind_;
  bool single_;
  numerics::QuantizedMultiplier m_{};
  std::string profile_;
};

// The 256 results of TFLite's requantize of 8-bit `in` to 8-bit `out`, by input byte.
std::vector<uint8_t> requantize_table(const ElementType& in, const ElementType& out, bool single) {
  const numerics::QuantizedMultiplier m =
      numerics::quantize_multiplier(double(float(in.scales[0])) / double(float(out.scales[0])), single);
  std::vector<uint8_t> table(256);
  for (int b = 0; b < 256; ++b) {
    const int64_t q = in.storage.is_signed ? int64_t(int8_t(b)) : int64_t(b);
    const int64_t v = numerics::requantize_tflite(q - in.zero_points[0], m, out.zero_points[0], out.storage.min,
                                                  out.storage.max, single);
    table[size_t(b)] = uint8_t(v);
  }
  return table;
}

}  // namespace

std::unique_ptr<OpKernel> make_profile_cast_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                                   Generator generator) {
  if (!is_tflite(graph.numerics) || (op.kind != OpKind::kQCast && op.kind != OpKind::kRequantize) ||
      profile_formula(graph, op).empty() || fused_clamp(op) || op.operands.size() != 1) {
    return nullptr;
  }
  const ElementType& in = graph.values[size_t(op.operands[0])].type.element;
  const ElementType& out = graph.values[size_t(op.results[0])].type.element;
  if (!per_tensor(out) || out.storage.width > 16) return nullptr;
  if (op.kind == OpKind::kQCast) {
    if (!in.is_float() || in.float_kind != FloatKind::kF32) return nullptr;
    return std::make_unique<ProfileCastKernel>(graph, op, ProfileCastKernel::Kind::kQuantize);
  }
  if (!per_tensor(in) || in.storage.width > 32) return nullptr;
  const bool single = graph.numerics == NumericsProfile::kTfliteSingleRounding;
  if (in.storage.width == 8 && out.storage.width == 8) {
    const std::string name = std::string(numerics_profile_name(graph.numerics)) + " requantize";
    for (Isa isa : allowed.by_preference()) {
      std::string why;
      auto kernel = make_byte_table_kernel(graph, op, requantize_table(in, out, single), in.storage.is_signed,
                                           out.storage.is_signed, name, "", isa, generator, &why);
      if (kernel.is_ok() && *kernel) return std::move(kernel).value();
    }
  }
  return std::make_unique<ProfileCastKernel>(graph, op, ProfileCastKernel::Kind::kRequantize);
}

}  // namespace qrt::jit
