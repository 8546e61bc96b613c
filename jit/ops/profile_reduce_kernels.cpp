// qrt — TFLite's quantized mean and average pool (tflite profiles) as portable C++ kernels: the
// exact sums over the reduced axes or the window with the channels across the lanes (the loops
// compilers vectorize), then the reference's per-output formula (tflite_mean in
// reference_profiles.h; numerics::average_tflite for the pool). The mean's reduced axes must be
// one contiguous block (NHWC spatial means, the form TFLite's MEAN takes in image models); the
// pool must be NHWC. Other forms stay with the reference.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ir/nn_params.h"
#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/core/aligned_bytes.h"
#include "jit/ops/profile_kernels.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

namespace {

// Kept outputs per task slice: the int64 sums of one slice stay in L1.
constexpr int64_t kInnerSlice = 512;

class ProfileMeanKernel final : public OpKernel {
 public:
  ProfileMeanKernel(const Graph& graph, const Op& op, int64_t outer, int64_t reduced, int64_t inner)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        in_(graph.values[size_t(op.operands[0])].type.element),
        outer_(outer),
        reduced_(reduced),
        inner_(inner),
        tflite_(is_tflite(graph.numerics) && !profile_formula(graph, op).empty()),
        single_(graph.numerics == NumericsProfile::kTfliteSingleRounding),
        m_(tflite_ ? tflite_mean_multiplier(in_, result_type_.element, single_) : numerics::QuantizedMultiplier{}),
        m_f32_(numerics::multiplier(in_.scales[0], result_type_.element.scales[0] * double(reduced))),
        profile_(numerics_profile_name(graph.numerics)) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>&) const override { return result_type_.dims; }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const int64_t slices = (inner_ + kInnerSlice - 1) / kInnerSlice, tasks = outer_ * slices;
    // Worth other threads only for large inputs (a classifier's global mean is ~60k values).
    Parallel& par = outer_ * reduced_ * inner_ >= (int64_t(1) << 18) ? parallel : serial();
    par.for_each(size_t(tasks), [&](size_t t) {
      const int64_t o = int64_t(t) / slices, i0 = int64_t(t) % slices * kInnerSlice;
      const int64_t len = std::min(kInnerSlice, inner_ - i0);
      with_storage(in_.storage, operands[0]->bytes(), [&](const auto* x) { reduce(x, out, o, i0, len); });
    });
    return Status::ok();
  }

  std::string describe() const override {
    return tflite_ ? "mean with " + profile_ + "'s formula (portable C++: exact sums, then the Q31 multiplier and the rounding division)"
                   : std::string("mean with the default formula (portable C++: exact sums, then the f32 multiplier)");
  }

 private:
  // Outputs [i0, i0 + len) of outer index o.
  template <typename T>
  void reduce(const T* x, Tensor& out, int64_t o, int64_t i0, int64_t len) const {
    thread_local std::vector<int64_t> sums;
    int64_t* s = scratch(sums, size_t(len));
    std::fill(s, s + len, int64_t(0));
    const T* base = x + o * reduced_ * inner_ + i0;
    for (int64_t r = 0; r < reduced_; ++r) {
      const T* row = base + r * inner_;
      for (int64_t i = 0; i < len; ++i) s[i] += int64_t(row[i]);
    }
    // Σ (q - z) = Σ q - count·z, exact in int64.
    const int64_t centre = reduced_ * in_.zero_points[0];
    const ElementType& oe = result_type_.element;
    for (int64_t i = 0; i < len; ++i) {
      const int64_t v = tflite_ ? tflite_mean(s[i] - centre, reduced_, m_, single_, oe)
                                : numerics::requantize(s[i] - centre, m_f32_, oe.zero_points[0], oe.storage.min,
                                                       oe.storage.max);
      out.set_int(size_t(o * inner_ + i0 + i), v);
    }
  }

  ElementType in_;
  int64_t outer_, reduced_, inner_;
  bool tflite_, single_;
  numerics::QuantizedMultiplier m_;  // tflite profiles
  float m_f32_;                      // the default: f32(s_in / (s_out · count))
  std::string profile_;
};

// TFLite's average pool of equal input and output parameters (eval_pool2d under tflite): per
// output pixel and channel, v = Σ q over the window's positions inside the input − count·z +
// divisor·z (divisor = the window's size with count_include_pad, else count), divided by the
// divisor rounding half away from zero, clamped to the storage. NHWC, one task per output row.
class ProfileAvgPoolKernel final : public OpKernel {
 public:
  ProfileAvgPoolKernel(const Graph& graph, const Op& op, const Window2d& w)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        in_(graph.values[size_t(op.operands[0])].type),
        w_(w),
        mode_(op.kind == OpKind::kMaxPool2d                                          ? Mode::kMax
              : is_tflite(graph.numerics) && !profile_formula(graph, op).empty() ? Mode::kTflite
                                                                                 : Mode::kDefault),
        profile_(numerics_profile_name(graph.numerics)) {
    if (mode_ != Mode::kDefault) return;
    // The default's multiplier per divisor, f32(s_in / (s_out · divisor)).
    m_.push_back(0.0f);  // divisor 0 never occurs: every window reaches the input
    for (int64_t d = 1; d <= w.kh * w.kw; ++d) {
      m_.push_back(numerics::multiplier(in_.element.scales[0], result_type_.element.scales[0] * double(d)));
    }
  }

  /// Whether every multiplier the default formula uses is finite (else the reference runs).
  bool finite() const {
    return std::all_of(m_.begin(), m_.end(), [](float m) { return std::isfinite(m); });
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>&) const override { return result_type_.dims; }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const std::vector<int64_t>& y = result_type_.dims;
    Parallel& par = in_.num_elements() >= (int64_t(1) << 18) ? parallel : serial();
    par.for_each(size_t(y[0] * y[1]), [&](size_t t) {
      with_storage(in_.element.storage, operands[0]->bytes(), [&](const auto* x) {
        with_storage(result_type_.element.storage, out.bytes(), [&](auto* o) { pool_row(x, o, int64_t(t)); });
      });
    });
    return Status::ok();
  }

  std::string describe() const override {
    if (mode_ == Mode::kMax) return "max pool of " + std::to_string(in_.element.storage.width) + "-bit values (portable C++)";
    if (mode_ == Mode::kDefault) return "average pool with the default formula (portable C++: exact sums, then the f32 multiplier)";
    return "average pool with " + profile_ + "'s formula (portable C++: exact sums, division rounding half away from zero)";
  }

 private:
  // Output row t = n · OH + oh.
  template <typename T, typename U>
  void pool_row(const T* x, U* y, int64_t t) const {
    const int64_t C = in_.dims[3], OH = result_type_.dims[1], OW = result_type_.dims[2];
    const int64_t n = t / OH, oh = t % OH, z = in_.element.zero_points[0];
    const ElementType& oe = result_type_.element;
    thread_local std::vector<int32_t> sums;
    int32_t* s = scratch(sums, size_t(C));
    if (mode_ == Mode::kMax) return max_row(x, y, t);
    for (int64_t ow = 0; ow < OW; ++ow) {
      std::fill(s, s + C, 0);
      int64_t count = 0;
      for_each_inside(x, n, oh, ow, [&](const T* px) {
        for (int64_t c = 0; c < C; ++c) s[c] += int32_t(px[c]);  // within int32: see the factory
        ++count;
      });
      const int64_t divisor = w_.count_include_pad ? w_.kh * w_.kw : count;
      U* py = y + (t * OW + ow) * C;
      if (mode_ == Mode::kDefault) {
        // Σ (q − z) over the positions inside, times f32(s_in / (s_out · divisor)).
        const float m = m_[size_t(divisor)];
        for (int64_t c = 0; c < C; ++c) {
          py[c] = U(numerics::requantize(int64_t(s[c]) - count * z, m, oe.zero_points[0], oe.storage.min, oe.storage.max));
        }
        continue;
      }
      const int64_t shift = (divisor - count) * z;
      for (int64_t c = 0; c < C; ++c) {
        const int64_t v = numerics::average_tflite(int64_t(s[c]) + shift, divisor);
        py[c] = U(numerics::clamp_i64(v, oe.storage.min, oe.storage.max));
      }
    }
  }

  // Calls fn(pixel) for each input pixel of output (n, oh, ow)'s window inside the input, rows
  // then columns.
  template <typename T, typename Fn>
  void for_each_inside(const T* x, int64_t n, int64_t oh, int64_t ow, Fn&& fn) const {
    const int64_t H = in_.dims[1], W = in_.dims[2], C = in_.dims[3];
    for (int64_t ky = 0; ky < w_.kh; ++ky) {
      const int64_t ih = oh * w_.sh - w_.pad_top + ky;
      if (ih < 0 || ih >= H) continue;
      for (int64_t kx = 0; kx < w_.kw; ++kx) {
        const int64_t iw = ow * w_.sw - w_.pad_left + kx;
        if (iw >= 0 && iw < W) fn(x + ((n * H + ih) * W + iw) * C);
      }
    }
  }

  // Output row t of the max pool: the largest stored value among the positions inside.
  template <typename T, typename U>
  void max_row(const T* x, U* y, int64_t t) const {
    const int64_t C = in_.dims[3], OH = result_type_.dims[1], OW = result_type_.dims[2];
    const int64_t n = t / OH, oh = t % OH;
    for (int64_t ow = 0; ow < OW; ++ow) {
      U* py = y + (t * OW + ow) * C;
      bool first = true;
      for_each_inside(x, n, oh, ow, [&](const T* px) {
        for (int64_t c = 0; c < C; ++c) py[c] = first ? U(px[c]) : std::max(py[c], U(px[c]));
        first = false;
      });
    }
  }

  enum class Mode { kTflite, kDefault, kMax };
  Type in_;
  Window2d w_;
  Mode mode_;
  std::vector<float> m_;  // kDefault: by divisor
  std::string profile_;
};

}  // namespace

namespace {

std::unique_ptr<OpKernel> mean_kernel(const Graph& graph, const Op& op) {
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  if (!x.has_static_shape() || !y.has_static_shape() || x.element.kind != ElementKind::kUniform ||
      x.element.storage.width > 16 || y.element.storage.width > 16 || !op.attr("axes")) {
    return nullptr;
  }
  std::vector<bool> reduced(x.rank(), false);
  for (const Attribute& a : op.attr("axes")->array) {
    if (a.i < 0 || size_t(a.i) >= x.rank()) return nullptr;  // the verifier's to report
    reduced[size_t(a.i)] = true;
  }
  // One contiguous block of reduced axes: [outer | reduced | inner].
  const auto first = std::find(reduced.begin(), reduced.end(), true);
  if (first == reduced.end()) return nullptr;
  const auto past = std::find(first, reduced.end(), false);
  if (std::find(past, reduced.end(), true) != reduced.end()) return nullptr;
  int64_t outer = 1, count = 1, inner = 1;
  for (size_t d = 0; d < x.rank(); ++d) {
    const int64_t n = x.dims[d];
    if (reduced[d]) count *= n;
    else if (d < size_t(first - reduced.begin())) outer *= n;
    else inner *= n;
  }
  if (count == 0 || y.num_elements() != outer * inner) return nullptr;
  if (profile_formula(graph, op).empty() &&
      !std::isfinite(numerics::multiplier(x.element.scales[0], y.element.scales[0] * double(count)))) {
    return nullptr;
  }
  return std::make_unique<ProfileMeanKernel>(graph, op, outer, count, inner);
}

std::unique_ptr<OpKernel> pool_kernel(const Graph& graph, const Op& op) {
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  if (!x.has_static_shape() || !y.has_static_shape() || x.rank() != 4 || y.rank() != 4 ||
      x.element.kind != ElementKind::kUniform || y.element.kind != ElementKind::kUniform ||
      x.element.storage.width > 16 || y.element.storage.width > 16) {
    return nullptr;
  }
  // Max pooling moves stored values: one storage in and out.
  if (op.kind == OpKind::kMaxPool2d && !(x.element.storage == y.element.storage)) return nullptr;
  Result<Window2d> w = pool2d_window(op);
  if (!w.is_ok() || w.value().nchw || y.num_elements() == 0) return nullptr;
  // The window's sums stay in int32: at most kh·kw values below 2^16 each.
  if (w.value().kh * w.value().kw > (int64_t(1) << 15)) return nullptr;
  const int64_t oh = window_output_size(x.dims[1], w.value().kh, w.value().sh, 1, w.value().pad_top, w.value().pad_bottom);
  const int64_t ow = window_output_size(x.dims[2], w.value().kw, w.value().sw, 1, w.value().pad_left, w.value().pad_right);
  if (y.dims[0] != x.dims[0] || y.dims[1] != oh || y.dims[2] != ow || y.dims[3] != x.dims[3]) return nullptr;
  auto kernel = std::make_unique<ProfileAvgPoolKernel>(graph, op, w.value());
  return kernel->finite() ? std::move(kernel) : nullptr;
}

}  // namespace

std::unique_ptr<OpKernel> make_profile_mean_kernel(const Graph& graph, const Op& op) {
  if (!is_tflite(graph.numerics) || op.kind != OpKind::kMean || profile_formula(graph, op).empty() || fused_clamp(op)) {
    return nullptr;
  }
  return mean_kernel(graph, op);
}

std::unique_ptr<OpKernel> make_profile_avg_pool_kernel(const Graph& graph, const Op& op) {
  if (!is_tflite(graph.numerics) || op.kind != OpKind::kAvgPool2d || profile_formula(graph, op).empty() || fused_clamp(op)) {
    return nullptr;
  }
  return pool_kernel(graph, op);
}

std::unique_ptr<OpKernel> make_portable_pool_kernel(const Graph& graph, const Op& op) {
  // The default formulas, under every profile that does not redefine the op (max pooling
  // selects stored values: the same everywhere).
  if (!profile_formula(graph, op).empty() || fused_clamp(op) || op.operands.empty()) return nullptr;
  if (!graph.values[size_t(op.operands[0])].type.element.is_quant()) return nullptr;
  if (op.kind == OpKind::kMean) return mean_kernel(graph, op);
  if (op.kind == OpKind::kAvgPool2d || op.kind == OpKind::kMaxPool2d) return pool_kernel(graph, op);
  return nullptr;
}

}  // namespace qrt::jit
