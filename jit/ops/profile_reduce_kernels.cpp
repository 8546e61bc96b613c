// qrt — TFLite's quantized mean (tflite profiles) as a portable C++ kernel: the exact centred
// sums over the reduced axes with the kept innermost axis across the lanes (the loop compilers
// vectorize), then the reference's per-output formula (tflite_mean in reference_profiles.h).
// The reduced axes must be one contiguous block (NHWC spatial means, the form TFLite's MEAN
// takes in image models); other axis sets stay with the reference.
#include <algorithm>
#include <vector>

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
        single_(graph.numerics == NumericsProfile::kTfliteSingleRounding),
        m_(tflite_mean_multiplier(in_, result_type_.element, single_)),
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
    return "mean with " + profile_ + "'s formula (portable C++: exact sums, then the Q31 multiplier and the rounding division)";
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
      const int64_t v = tflite_mean(s[i] - centre, reduced_, m_, single_, oe);
      out.set_int(size_t(o * inner_ + i0 + i), v);
    }
  }

  ElementType in_;
  int64_t outer_, reduced_, inner_;
  bool single_;
  numerics::QuantizedMultiplier m_;
  std::string profile_;
};

}  // namespace

std::unique_ptr<OpKernel> make_profile_mean_kernel(const Graph& graph, const Op& op) {
  if (!is_tflite(graph.numerics) || op.kind != OpKind::kMean || profile_formula(graph, op).empty() || fused_clamp(op)) {
    return nullptr;
  }
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
  return std::make_unique<ProfileMeanKernel>(graph, op, outer, count, inner);
}

}  // namespace qrt::jit
