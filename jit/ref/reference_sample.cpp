// qrt — the reference kernel of qrt.grid_sample (ONNX GridSample, ir/ops_nn.cpp): every
// output element samples x at the grid's normalized position, with ONNX's reference (and
// PyTorch's grid_sampler) steps: denormalize, round (nearest), bring an outside coordinate
// back (border, reflection), then interpolate axis by axis, fetching each tap through the
// padding mode. Coordinates are rounded to f32 after each step where the grid is not f64, as
// ONNX's reference stores them; the interpolation sums in f64 and rounds once to x's type.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "ir/ops.h"
#include "jit/ref/reference_util.h"

namespace qrt::ref_detail {

namespace {

enum class Padding { kZeros, kBorder, kReflection };

// One spatial axis of x: its size and the borders a coordinate must lie within
// ([-0.5, size - 0.5], or [0, size - 1] with align_corners).
struct SampleAxis {
  int64_t size = 0;
  double lo = 0, hi = 0;
};

// Reflects `v` by the nearer border until it lies within [lo, hi] (ONNX's _gs_reflect).
double reflect(double v, double lo, double hi) {
  const double range = hi - lo;
  if (!(range > 0.0)) return lo;  // one pixel with align_corners: every position is it
  if (v < lo || v > hi) {
    const double dx = v < lo ? lo - v : v - hi;
    const double n = std::floor(dx / range);
    const double r = dx - n * range;
    const bool even = std::fmod(n, 2.0) == 0.0;
    return (v < lo) == even ? lo + r : hi - r;
  }
  return v;
}

// floor(v) as an index; NaN and magnitudes beyond any tensor land far outside every axis.
int64_t index_floor(double v) {
  constexpr double kFar = 1e15;
  if (!(v > -kFar)) return int64_t(-kFar);
  if (v > kFar) return int64_t(kFar);
  return int64_t(std::floor(v));
}

// The element along `axis` that tap index `i` reads, or -1 for a zero (zeros padding).
int64_t fetch_index(int64_t i, const SampleAxis& axis, Padding padding) {
  if (i >= 0 && i < axis.size) return i;
  switch (padding) {
    case Padding::kZeros: return -1;
    case Padding::kBorder: return std::clamp<int64_t>(i, 0, axis.size - 1);
    case Padding::kReflection: {
      // ONNX's reference truncates the reflected position toward zero.
      const int64_t r = int64_t(reflect(double(i), axis.lo, axis.hi));
      return std::clamp<int64_t>(r, 0, axis.size - 1);
    }
  }
  return -1;
}

// Keys' cubic convolution weights with a = -0.75 for a position t in [0, 1) past the second
// of four taps.
std::array<double, 4> cubic_weights(double t) {
  constexpr double a = -0.75;
  const double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  return {((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
          ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1, ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a};
}

// The taps of one axis for one output position: element indices (-1: a zero) and weights.
struct AxisTaps {
  int count = 0;
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
};

}  // namespace

Result<Tensor> eval_grid_sample(const Op& op, const Tensor& x, const Tensor& grid, const Type& rt) {
  const size_t r = x.type.dims.size() - 2;
  const int64_t batch = x.type.dims[0], channels = x.type.dims[1];
  if (grid.type.dims[0] != batch || grid.type.dims[r + 1] != int64_t(r)) {
    return op_error(op, "grid " + grid.type.to_string() + " does not fit x " + x.type.to_string());
  }
  std::vector<int64_t> dims = {batch, channels};
  dims.insert(dims.end(), grid.type.dims.begin() + 1, grid.type.dims.begin() + 1 + std::ptrdiff_t(r));
  QRT_RETURN_IF_ERROR(check_result_shape(op, rt, dims));
  Tensor y = make_result(rt, dims);
  if (y.num_elements() == 0) return y;

  const std::string mode = op.attr("mode") ? op.attr("mode")->s : "linear";
  const std::string pad_name = op.attr("padding_mode") ? op.attr("padding_mode")->s : "zeros";
  const Padding padding = pad_name == "border" ? Padding::kBorder : pad_name == "reflection" ? Padding::kReflection : Padding::kZeros;
  const bool align = op.attr("align_corners") && op.attr("align_corners")->i != 0;
  std::vector<SampleAxis> axes(r);
  size_t spatial = 1;
  for (size_t a = 0; a < r; ++a) {
    const int64_t size = x.type.dims[a + 2];
    if (size == 0 && padding != Padding::kZeros) {
      return op_error(op, "samples an empty spatial dimension of x " + x.type.to_string() + " with " + pad_name + " padding");
    }
    axes[a] = {size, align ? 0.0 : -0.5, align ? double(size) - 1.0 : double(size) - 0.5};
    spatial *= size_t(size);
  }
  // Row-major strides of x's spatial dimensions.
  std::vector<size_t> stride(r, 1);
  for (size_t a = r; a-- > 1;) stride[a - 1] = stride[a] * size_t(axes[a].size);
  const bool f32_coordinates = grid.type.element.float_kind != FloatKind::kF64;
  auto coordinate = [&](double v) { return f32_coordinates ? double(float(v)) : v; };
  size_t positions = 1;
  for (size_t a = 0; a < r; ++a) positions *= size_t(dims[a + 2]);

  std::vector<AxisTaps> taps(r);
  for (int64_t n = 0; n < batch; ++n) {
    for (size_t p = 0; p < positions; ++p) {
      bool any_zero_axis = false;
      for (size_t a = 0; a < r; ++a) {
        const SampleAxis& ax = axes[a];
        // The last grid entry indexes the innermost spatial dimension.
        const double g = grid.float_at((size_t(n) * positions + p) * r + (r - 1 - a));
        double v = coordinate(align ? (g + 1) / 2.0 * double(ax.size - 1) : ((g + 1) * double(ax.size) - 1) / 2.0);
        if (mode == "nearest") v = r == 3 ? std::round(v) : std::nearbyint(v);  // PyTorch's 3-D and 2-D rules
        if (v < ax.lo || v > ax.hi) {
          if (padding == Padding::kBorder) v = coordinate(std::clamp(v, 0.0, double(ax.size - 1)));
          if (padding == Padding::kReflection) v = coordinate(reflect(v, ax.lo, ax.hi));
        }
        AxisTaps& t = taps[a];
        const int64_t base = index_floor(v);
        if (mode == "nearest") {
          // v is whole here (or not finite, and then far outside): its floor is the index.
          t.count = 1;
          t.index[0] = fetch_index(base, ax, padding);
          t.weight[0] = 1.0;
        } else if (mode == "linear") {
          const double f = v - double(base);
          t.count = 2;
          t.weight = {1 - f, f, 0, 0};
          for (int k = 0; k < 2; ++k) t.index[size_t(k)] = fetch_index(base + k, ax, padding);
        } else {
          t.count = 4;
          t.weight = cubic_weights(v - double(base));
          for (int k = 0; k < 4; ++k) t.index[size_t(k)] = fetch_index(base - 1 + k, ax, padding);
        }
        any_zero_axis = any_zero_axis || ax.size == 0;
      }
      for (int64_t c = 0; c < channels; ++c) {
        const size_t plane = size_t(n * channels + c) * spatial;
        // Axis by axis from the innermost, as ONNX's reference nests its 1-D interpolations.
        auto sum = [&](auto&& self, size_t a, size_t offset) -> double {
          const AxisTaps& t = taps[a];
          double acc = 0;
          for (int k = 0; k < t.count; ++k) {
            const int64_t i = t.index[size_t(k)];
            double v = 0;
            if (i >= 0) v = a + 1 == r ? x.float_at(plane + offset + size_t(i)) : self(self, a + 1, offset + size_t(i) * stride[a]);
            acc = k == 0 ? t.weight[0] * v : acc + t.weight[size_t(k)] * v;
          }
          return acc;
        };
        const double value = any_zero_axis ? 0.0 : sum(sum, 0, 0);
        y.set_float((size_t(n * channels + c)) * positions + p, value);
      }
    }
  }
  return y;
}

}  // namespace qrt::ref_detail
