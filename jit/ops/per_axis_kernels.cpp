// qrt — per-axis quant.qcast, quant.dcast and qrt.requantize in portable C++ (see
// per_axis_kernels.h): the reference's per-element formulas with each channel's parameters
// resolved once, over runs of `inner` elements that share a channel.
#include "jit/ops/per_axis_kernels.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/ops/float_widening.h"
#include "jit/ops/profile_kernels.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

namespace {

enum class Mode { kRequantDefault, kRequantTflite, kDequant, kQuantDefault, kQuantTflite };

class PerAxisConvertKernel final : public OpKernel {
 public:
  PerAxisConvertKernel(const Graph& graph, const Op& op, Mode mode, size_t axis, size_t channels)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        in_(graph.values[size_t(op.operands[0])].type.element),
        mode_(mode),
        axis_(axis),
        single_(graph.numerics == NumericsProfile::kTfliteSingleRounding) {
    const ElementType& out = result_type_.element;
    if (mode == Mode::kDequant) floats_ = out.float_kind;
    if (mode == Mode::kQuantDefault || mode == Mode::kQuantTflite) floats_ = in_.float_kind;
    auto at = [](const ElementType& e, size_t c) { return e.num_channels() == 1 ? size_t(0) : c; };
    for (size_t c = 0; c < channels; ++c) {
      Channel ch;
      if (in_.is_quant()) ch.z_in = in_.zero_points[at(in_, c)];
      if (out.is_quant()) ch.z_out = out.zero_points[at(out, c)];
      switch (mode) {
        case Mode::kRequantDefault:
          ch.m = numerics::multiplier(in_.scales[at(in_, c)], out.scales[at(out, c)]);
          break;
        case Mode::kRequantTflite:
          ch.q31 = numerics::quantize_multiplier(double(float(in_.scales[at(in_, c)])) / double(float(out.scales[at(out, c)])),
                                                 single_);
          break;
        case Mode::kDequant:
          ch.m = numerics::compute_scale_f32(in_.scales[at(in_, c)], in_.float_kind);
          ch.scale = in_.scales[at(in_, c)];
          break;
        case Mode::kQuantDefault:
          ch.m = numerics::compute_scale_f32(out.scales[at(out, c)], out.float_kind);
          ch.scale = out.scales[at(out, c)];
          break;
        case Mode::kQuantTflite: ch.m = float(out.scales[at(out, c)]); break;
      }
      channels_.push_back(ch);
    }
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    size_t inner = 1;
    for (size_t d = axis_ + 1; d < x.type.rank(); ++d) inner *= size_t(x.type.dims[d]);
    const size_t channels = channels_.size(), n = size_t(x.num_elements()), rows = inner ? n / inner : 0;
    const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(int64_t(n / 16384), 4 * int64_t(parallel.threads())));
    parallel.for_each(size_t(tasks), [&](size_t t) {
      const size_t begin = rows * t / size_t(tasks), end = rows * (t + 1) / size_t(tasks);
      for (size_t r = begin; r < end; ++r) convert_run(x, out, r * inner, inner, channels_[r % channels]);
    });
    return Status::ok();
  }

  std::string describe() const override {
    static const char* const kNames[] = {"requantize", "requantize (TFLite's Q31 multipliers)", "dequantize", "quantize",
                                         "quantize (TFLite's rounding)"};
    const bool half = floats_ == FloatKind::kBF16 || floats_ == FloatKind::kF16;
    return std::string("per-axis ") + kNames[int(mode_)] + " (portable C++, the reference's formula per channel" +
           (half ? std::string("; ") + float_kind_name(floats_) + " values through f32" : "") +
           (floats_ == FloatKind::kF64 ? "; f64 values" : "") + ")";
  }
  bool can_overwrite_operand(size_t) const override {
    return mode_ == Mode::kRequantDefault || mode_ == Mode::kRequantTflite
               ? in_.storage.width == result_type_.element.storage.width
               : false;
  }

 private:
  struct Channel {
    int64_t z_in = 0, z_out = 0;
    float m = 0.0f;  // requantize: the multiplier; dcast / qcast: the f32 scale
    double scale = 0.0;  // dcast / qcast of f64 values: the scale
    numerics::QuantizedMultiplier q31;
  };

  // Up to 1024 values of the float side at a time, through f32 (bf16 and f16 widen exactly and
  // round once, as the reference stores them).
  static constexpr size_t kBlock = 1024;

  // Elements [first, first + count), all of channel `ch`.
  void convert_run(const Tensor& x, Tensor& y, size_t first, size_t count, const Channel& ch) const {
    const ElementType& out = result_type_.element;
    const bool half = floats_ == FloatKind::kBF16 || floats_ == FloatKind::kF16;
    if (mode_ == Mode::kDequant) {
      if (floats_ == FloatKind::kF64) {
        auto* d = reinterpret_cast<double*>(y.bytes()) + first;
        with_int_storage(in_.storage, x.bytes(), [&](const auto* q) {
          for (size_t i = 0; i < count; ++i) d[i] = numerics::dequantize_f64(int64_t(q[first + i]), ch.z_in, ch.scale);
        });
        return;
      }
      float block[kBlock];
      for (size_t b = 0; b < count; b += kBlock) {
        const size_t len = std::min(kBlock, count - b);
        float* f = half ? block : reinterpret_cast<float*>(y.bytes()) + first + b;
        with_int_storage(in_.storage, x.bytes(), [&](const auto* q) {
          for (size_t i = 0; i < len; ++i) f[i] = numerics::dequantize_f32(int64_t(q[first + b + i]), ch.z_in, ch.m);
        });
        if (half) narrow_from_f32(block, floats_, int64_t(len), y.bytes() + 2 * (first + b));
      }
      return;
    }
    if (mode_ == Mode::kQuantDefault || mode_ == Mode::kQuantTflite) {
      float block[kBlock];
      for (size_t b = 0; b < count; b += kBlock) {
        const size_t len = std::min(kBlock, count - b);
        const float* f = reinterpret_cast<const float*>(x.bytes()) + first + b;
        const double* d = reinterpret_cast<const double*>(x.bytes()) + first + b;
        if (half) {
          widen_to_f32(x.bytes() + 2 * (first + b), floats_, int64_t(len), block);
          f = block;
        } else if (floats_ == FloatKind::kF64 && mode_ == Mode::kQuantTflite) {
          for (size_t i = 0; i < len; ++i) block[i] = float(d[i]);  // TFLite's formula reads f32
          f = block;
        }
        with_int_storage(out.storage, y.bytes(), [&](auto* q) {
          using T = std::remove_pointer_t<decltype(q)>;
          for (size_t i = 0; i < len; ++i) {
            const int64_t v =
                mode_ == Mode::kQuantTflite
                    ? numerics::quantize_tflite(f[i], ch.m, ch.z_out, out.storage.min, out.storage.max)
                : floats_ == FloatKind::kF64
                    ? numerics::quantize_f64(d[i], ch.scale, ch.z_out, out.storage.min, out.storage.max)
                    : numerics::quantize_f32(f[i], ch.m, ch.z_out, out.storage.min, out.storage.max);
            q[first + b + i] = T(v);
          }
        });
      }
      return;
    }
    with_int_storage(in_.storage, x.bytes(), [&](const auto* a) {
      with_int_storage(out.storage, y.bytes(), [&](auto* q) {
        using T = std::remove_pointer_t<decltype(q)>;
        for (size_t i = 0; i < count; ++i) {
          const int64_t v = int64_t(a[first + i]) - ch.z_in;
          q[first + i] = T(mode_ == Mode::kRequantDefault
                               ? numerics::requantize(v, ch.m, ch.z_out, out.storage.min, out.storage.max)
                               : numerics::requantize_tflite(v, ch.q31, ch.z_out, out.storage.min, out.storage.max, single_));
        }
      });
    });
  }

  ElementType in_;
  Mode mode_;
  size_t axis_;
  bool single_;
  FloatKind floats_ = FloatKind::kF32;  // dcast's result, qcast's operand
  std::vector<Channel> channels_;
};


}  // namespace

std::unique_ptr<OpKernel> make_per_axis_convert_kernel(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::kQCast && op.kind != OpKind::kDCast && op.kind != OpKind::kRequantize) return nullptr;
  if (op.operands.size() != 1 || op.results.size() != 1 || fused_clamp(op)) return nullptr;
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  const ElementType& q = op.kind == OpKind::kQCast ? y.element : x.element;
  const ElementType& other = op.kind == OpKind::kQCast ? x.element : y.element;
  // One side per-axis (both share the axis, as the verifier requires), of 8-, 16- or 32-bit
  // storage. Requantize reads no expressed type; a qcast's operand and a dcast's result are the
  // expressed type (f32, bf16, f16 or f64), as the verifier requires.
  const ElementType* per_axis = q.kind == ElementKind::kUniformPerAxis       ? &q
                                : other.kind == ElementKind::kUniformPerAxis ? &other
                                                                            : nullptr;
  if (!per_axis || x.dims.empty() || per_axis->axis < 0 || size_t(per_axis->axis) >= x.rank()) return nullptr;
  const int64_t channels = x.dims[size_t(per_axis->axis)];
  if (channels <= 0 || size_t(channels) != per_axis->num_channels()) return nullptr;
  auto stored = [](const ElementType& e) {
    return e.is_uniform() && (e.storage.width == 8 || e.storage.width == 16 || e.storage.width == 32);
  };
  const bool expressed_float = other.is_float() && other.float_kind == q.float_kind &&
                               (is_f32_or_narrower(other.float_kind) || other.float_kind == FloatKind::kF64);
  if (!stored(q) || (op.kind == OpKind::kRequantize ? !stored(other) : !expressed_float)) return nullptr;
  if (other.is_uniform() && other.kind == ElementKind::kUniformPerAxis && other.axis != per_axis->axis) return nullptr;
  const bool redefined = !profile_formula(graph, op).empty();
  Mode mode;
  if (op.kind == OpKind::kDCast) {
    if (redefined) return nullptr;
    mode = Mode::kDequant;
  } else if (op.kind == OpKind::kQCast) {
    if (redefined && !is_tflite(graph.numerics)) return nullptr;
    mode = redefined ? Mode::kQuantTflite : Mode::kQuantDefault;
  } else {
    if (redefined && !is_tflite(graph.numerics)) return nullptr;
    mode = redefined ? Mode::kRequantTflite : Mode::kRequantDefault;
  }
  return std::make_unique<PerAxisConvertKernel>(graph, op, mode, size_t(per_axis->axis), size_t(channels));
}

}  // namespace qrt::jit
