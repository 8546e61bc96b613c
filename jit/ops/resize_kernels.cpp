// qrt — linear and cubic qrt.resize (ONNX Resize's interpolating modes) in portable C++, with
// the reference's arithmetic (docs/numerics.md, "Resize"): axis by axis from the innermost,
// each output element of a pass is the weighted sum of its taps in tap order, in double (or
// the element copied where its source coordinate is an integer), and the result is rounded
// once to the element type. The taps of every axis are computed when the plan is made; axes
// that keep their size and map every index onto itself are skipped (copying is what the
// reference's pass does there).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ir/float_format.h"
#include "ir/nn_params.h"
#include "jit/ops/layout_ops.h"

namespace qrt::jit {

namespace {

// Output elements per task of a pass.
constexpr size_t kResizeTaskElements = 16 * 1024;

struct AxisPass {
  size_t axis = 0;
  ResizeAxisTaps taps;
};

class InterpolatingResizeKernel final : public OpKernel {
 public:
  InterpolatingResizeKernel(const Graph& graph, const Op& op, std::vector<AxisPass> passes, std::vector<int64_t> in_dims)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        passes_(std::move(passes)),
        in_dims_(std::move(in_dims)),
        kind_(result_type_.element.float_kind),
        mode_(op.attr("mode")->s) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>&) const override { return result_type_.dims; }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const size_t n_in = size_t(x.num_elements());
    // Ping-pong buffers of doubles on the calling thread, kept between runs.
    // (Tasks on other threads get pointers: a thread_local named inside them is theirs.)
    thread_local std::vector<double> a, b;
    if (a.size() < n_in) a.resize(n_in);
    double* first = a.data();
    for_each_range(parallel, n_in, [&](size_t begin, size_t end) { load(x, first, begin, end); });
    std::vector<int64_t> shape = in_dims_;
    std::vector<double>* cur = &a;
    std::vector<double>* next = &b;
    for (const AxisPass& p : passes_) {
      size_t outer = 1, inner = 1;
      for (size_t k = 0; k < p.axis; ++k) outer *= size_t(shape[k]);
      for (size_t k = p.axis + 1; k < shape.size(); ++k) inner *= size_t(shape[k]);
      const size_t in_len = size_t(shape[p.axis]), out_len = p.taps.copy.size(), rows = outer * out_len;
      if (next->size() < rows * inner) next->resize(rows * inner);
      const double* src = cur->data();
      double* dst = next->data();
      const size_t rows_per_task = std::max<size_t>(1, kResizeTaskElements / std::max<size_t>(inner, 1));
      parallel.for_each((rows + rows_per_task - 1) / rows_per_task, [&](size_t t) {
        for (size_t r = t * rows_per_task; r < std::min(rows, (t + 1) * rows_per_task); ++r) {
          interpolate_row(p.taps, r % out_len, src + r / out_len * in_len * inner, dst + r * inner, inner);
        }
      });
      shape[p.axis] = int64_t(out_len);
      std::swap(cur, next);
    }
    const double* v = cur->data();
    for_each_range(parallel, size_t(out.num_elements()), [&](size_t begin, size_t end) { store(v, out, begin, end); });
    return Status::ok();
  }

  std::string describe() const override {
    return mode_ + " resize (portable C++: f64 taps, axis by axis from the innermost, one rounding; " +
           std::to_string(passes_.size()) + " axis pass" + (passes_.size() == 1 ? "" : "es") + ")";
  }
  size_t owned_bytes() const override {
    size_t bytes = 0;
    for (const AxisPass& p : passes_) {
      bytes += p.taps.copy.size() * sizeof(int64_t) + p.taps.index.size() * sizeof(int64_t) + p.taps.weight.size() * sizeof(double);
    }
    return bytes;
  }

 private:
  template <typename Fn>
  static void for_each_range(Parallel& parallel, size_t n, Fn&& fn) {
    parallel.for_each((n + kResizeTaskElements - 1) / kResizeTaskElements, [&](size_t t) {
      fn(t * kResizeTaskElements, std::min(n, (t + 1) * kResizeTaskElements));
    });
  }

  // Output index j of one axis for `inner` adjacent lanes: `src` is the slice of the input
  // axis (in_len × inner), `dst` the lanes of output index j.
  static void interpolate_row(const ResizeAxisTaps& t, size_t j, const double* src, double* dst, size_t inner) {
    if (t.copy[j] >= 0) {
      std::memcpy(dst, src + size_t(t.copy[j]) * inner, inner * sizeof(double));
      return;
    }
    const int64_t* index = &t.index[j * size_t(t.taps)];
    const double* weight = &t.weight[j * size_t(t.taps)];
    const double* p0 = src + size_t(index[0]) * inner;
    for (size_t i = 0; i < inner; ++i) dst[i] = weight[0] * p0[i];
    for (int k = 1; k < t.taps; ++k) {
      const double* pk = src + size_t(index[k]) * inner;
      const double w = weight[k];
      for (size_t i = 0; i < inner; ++i) dst[i] = dst[i] + w * pk[i];
    }
  }

  void load(const Tensor& x, double* v, size_t begin, size_t end) const {
    if (kind_ == FloatKind::kF32) {
      const float* f = reinterpret_cast<const float*>(x.bytes());
      for (size_t i = begin; i < end; ++i) v[i] = double(f[i]);
    } else if (kind_ == FloatKind::kF64) {
      std::memcpy(v + begin, x.bytes() + begin * sizeof(double), (end - begin) * sizeof(double));
    } else {
      const uint16_t* h = reinterpret_cast<const uint16_t*>(x.bytes());
      for (size_t i = begin; i < end; ++i) v[i] = float_kind_from_bits(h[i], kind_);
    }
  }

  void store(const double* v, Tensor& y, size_t begin, size_t end) const {
    if (kind_ == FloatKind::kF32) {
      float* f = reinterpret_cast<float*>(y.bytes());
      for (size_t i = begin; i < end; ++i) f[i] = float(v[i]);  // round to nearest even
    } else if (kind_ == FloatKind::kF64) {
      std::memcpy(y.bytes() + begin * sizeof(double), v + begin, (end - begin) * sizeof(double));
    } else {
      uint16_t* h = reinterpret_cast<uint16_t*>(y.bytes());
      for (size_t i = begin; i < end; ++i) h[i] = uint16_t(float_kind_bits(v[i], kind_));
    }
  }

  std::vector<AxisPass> passes_;  // innermost axis first
  std::vector<int64_t> in_dims_;
  FloatKind kind_;
  std::string mode_;
};

}  // namespace

std::unique_ptr<OpKernel> make_interpolating_resize_kernel(const Graph& graph, const Op& op, std::string* why_not) {
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  const FloatKind kind = x.element.float_kind;
  if (!x.element.is_float() || (kind != FloatKind::kF32 && kind != FloatKind::kF64 && kind != FloatKind::kF16 &&
                                kind != FloatKind::kBF16)) {
    *why_not = "interpolation of " + x.element.to_string() + " values";
    return nullptr;
  }
  if (!x.has_static_shape() || !y.has_static_shape()) {
    *why_not = "dynamic shapes run on the reference";
    return nullptr;
  }
  std::vector<double> scales;
  const std::vector<int64_t> dims = resize_output_dims(op, x.dims, y.dims, &scales);
  const std::string coord = op.attr("coordinate_transformation_mode") ? op.attr("coordinate_transformation_mode")->s : "half_pixel";
  const double a = op.attr("cubic_coeff_a") ? op.attr("cubic_coeff_a")->f : -0.75;
  const bool exclude = op.attr("exclude_outside") && op.attr("exclude_outside")->i != 0;
  std::vector<AxisPass> passes;
  for (size_t d = dims.size(); d-- > 0;) {
    AxisPass p;
    p.axis = d;
    p.taps = resize_axis_taps(x.dims[d], dims[d], scales[d], coord, op.attr("mode")->s, a, exclude);
    if (p.taps.copy.size() != size_t(dims[d])) {
      *why_not = "an unknown coordinate transformation or mode";
      return nullptr;
    }
    bool identity = x.dims[d] == dims[d];
    for (int64_t j = 0; identity && j < dims[d]; ++j) identity = p.taps.copy[size_t(j)] == j;
    if (!identity) passes.push_back(std::move(p));
  }
  return std::make_unique<InterpolatingResizeKernel>(graph, op, std::move(passes), x.dims);
}

}  // namespace qrt::jit
