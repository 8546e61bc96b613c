// qrt — scatter_nd and gather_nd in portable C++ (see scatter_kernels.h).
#include "jit/ops/scatter_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "ir/ops.h"
#include "jit/ops/float_widening.h"
#include "jit/ops/plain_element.h"

namespace qrt::jit {

namespace {

enum class Combine { kNone, kAdd, kMul, kMax, kMin };

class ScatterNdKernel final : public OpKernel {
 public:
  ScatterNdKernel(const Graph& graph, const Op& op, Combine combine)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        op_(op),
        idx_(graph.values[size_t(op.operands[1])].type),
        combine_(combine) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>&) const override { return result_type_.dims; }
  // The result may take data's bytes: each slice is read (for a reduction) before it is written.
  bool can_overwrite_operand(size_t index) const override { return index == 0; }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel&) const override {
    const Tensor &data = *operands[0], &idx = *operands[1], &upd = *operands[2];
    if (out.bytes() != data.bytes() && out.byte_size() > 0) std::memcpy(out.bytes(), data.bytes(), out.byte_size());
    const auto& dd = result_type_.dims;
    const size_t q = size_t(idx_.dims.back()), es = out.element_size();
    size_t slice = 1;
    for (size_t d = q; d < dd.size(); ++d) slice *= size_t(dd[d]);
    const size_t tuples = size_t(idx.num_elements()) / q;
    for (size_t t = 0; t < tuples; ++t) {
      size_t base = 0;
      for (size_t d = 0; d < q; ++d) {
        int64_t i = idx.int_at(t * q + d);
        if (i < -dd[d] || i >= dd[d]) {
          return Status::error_at(op_.loc, "'qrt.scatter_nd' op index " + std::to_string(i) + " of tuple " + std::to_string(t) +
                                               " is out of range for dimension " + std::to_string(d) + " of size " +
                                               std::to_string(dd[d]));
        }
        base = base * size_t(dd[d]) + size_t(i < 0 ? i + dd[d] : i);
      }
      if (slice == 0) continue;  // nothing to move (and no bytes to point into)
      uint8_t* to = out.bytes() + base * slice * es;
      const uint8_t* from = upd.bytes() + t * slice * es;
      if (combine_ == Combine::kNone) {
        std::memcpy(to, from, slice * es);
      } else if (is_half_float(result_type_.element)) {
        // bf16/f16: both slices widened (exact), combined in f32 and each result rounded once,
        // as the reference computes them.
        thread_local std::vector<float> y_wide, u_wide;
        const FloatKind kind = result_type_.element.float_kind;
        y_wide.resize(slice);
        u_wide.resize(slice);
        widen_to_f32(to, kind, int64_t(slice), y_wide.data());
        widen_to_f32(from, kind, int64_t(slice), u_wide.data());
        combine_slice(y_wide.data(), u_wide.data(), slice);
        narrow_from_f32(y_wide.data(), kind, int64_t(slice), to);
        release_large(y_wide);
        release_large(u_wide);
      } else {
        with_plain_element(result_type_.element, [&](auto* tag) {
          using T = std::remove_pointer_t<decltype(tag)>;
          combine_slice(reinterpret_cast<T*>(to), reinterpret_cast<const T*>(from), slice);
        });
      }
    }
    return Status::ok();
  }

  std::string describe() const override {
    static const char* names[] = {"none", "add", "mul", "max", "min"};
    const std::string note = combine_ == Combine::kNone ? "" : widening_note(result_type_.element.float_kind);
    return std::string("scatter_nd (portable C++, ") + note + "reduction " + names[int(combine_)] + ")";
  }

 private:
  // y[i] = y[i] (op) u[i]: floats in their type, max / min propagating NaN; integers as the
  // reference computes them (int64, wrapping, stored truncated).
  template <typename T>
  void combine_slice(T* y, const T* u, size_t n) const {
    for (size_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        const T a = y[i], b = u[i];
        switch (combine_) {
          case Combine::kAdd: y[i] = a + b; break;
          case Combine::kMul: y[i] = a * b; break;
          default:
            y[i] = std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN()
                   : combine_ == Combine::kMax    ? std::max(a, b)
                                                  : std::min(a, b);
        }
      } else {
        const int64_t a = int64_t(y[i]), b = int64_t(u[i]);
        switch (combine_) {
          case Combine::kAdd: y[i] = T(uint64_t(a) + uint64_t(b)); break;
          case Combine::kMul: y[i] = T(uint64_t(a) * uint64_t(b)); break;
          case Combine::kMax: y[i] = T(std::max(a, b)); break;
          default: y[i] = T(std::min(a, b)); break;
        }
      }
    }
  }

  Op op_;
  Type idx_;
  Combine combine_;
};

// gather_nd: each index tuple's slice copied as bytes (any element type), tuples spread over
// the threads in blocks of about kGatherNdBlockBytes; an index out of range stops the run with
// the reference's error.
constexpr size_t kGatherNdBlockBytes = 64 * 1024;

class GatherNdKernel final : public OpKernel {
 public:
  GatherNdKernel(const Graph& graph, const Op& op)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        op_(op),
        batch_dims_(op.attr("batch_dims") ? size_t(op.attr("batch_dims")->i) : 0) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const auto &dd = operands[0]->type.dims, &id = operands[1]->type.dims;
    for (size_t d = 0; d < batch_dims_; ++d) {
      if (dd[d] != id[d]) {
        return Status::error_at(op_.loc, "'qrt.gather_nd' op batch dimension " + std::to_string(d) + " differs at run time: data [" +
                                             dims_to_string(dd) + "], indices [" + dims_to_string(id) + "]");
      }
    }
    return checked_result_dims(op_, gather_nd_result_dims(dd, id, batch_dims_));
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const Tensor &data = *operands[0], &idx = *operands[1];
    const auto& dd = data.type.dims;
    const size_t b = batch_dims_, k = size_t(idx.type.dims.back()), es = out.element_size();
    size_t per_batch = 1, slice = 1;
    for (size_t d = b; d + 1 < idx.type.dims.size(); ++d) per_batch *= size_t(idx.type.dims[d]);
    for (size_t d = b + k; d < dd.size(); ++d) slice *= size_t(dd[d]);
    const size_t tuples = k == 0 ? 0 : size_t(idx.num_elements()) / k, slice_bytes = slice * es;
    if (tuples == 0 || slice_bytes == 0) return Status::ok();
    const size_t per_task = std::max<size_t>(1, kGatherNdBlockBytes / slice_bytes);
    const size_t tasks = (tuples + per_task - 1) / per_task;
    // The first failing tuple in tuple order, so the error does not depend on the threads.
    std::vector<size_t> bad(tasks, tuples);
    parallel.for_each(tasks, [&](size_t task) {
      const size_t end = std::min(tuples, (task + 1) * per_task);
      for (size_t t = task * per_task; t < end; ++t) {
        size_t src = t / per_batch;  // the batch, then each indexed dimension, row-major
        for (size_t j = 0; j < k; ++j) {
          const int64_t extent = dd[b + j], i = idx.int_at(t * k + j);
          if (i < -extent || i >= extent) {
            bad[task] = t;
            return;
          }
          src = src * size_t(extent) + size_t(i < 0 ? i + extent : i);
        }
        std::memcpy(out.bytes() + t * slice_bytes, data.bytes() + src * slice_bytes, slice_bytes);
      }
    });
    const size_t first = *std::min_element(bad.begin(), bad.end());
    if (first == tuples) return Status::ok();
    for (size_t j = 0; j < k; ++j) {
      const int64_t extent = dd[b + j], i = idx.int_at(first * k + j);
      if (i < -extent || i >= extent) {
        return Status::error_at(op_.loc, "'qrt.gather_nd' op index " + std::to_string(i) + " of tuple " + std::to_string(first) +
                                             " is out of range for dimension " + std::to_string(b + j) + " of size " +
                                             std::to_string(extent));
      }
    }
    return Status::ok();
  }

  std::string describe() const override { return "gather_nd (portable C++, slices as bytes)"; }

 private:
  Op op_;
  size_t batch_dims_;
};

}  // namespace

std::unique_ptr<OpKernel> make_gather_nd_kernel(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::kGatherNd || op.operands.size() != 2) return nullptr;
  return std::make_unique<GatherNdKernel>(graph, op);
}

std::unique_ptr<OpKernel> make_scatter_nd_kernel(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::kScatterNd || op.operands.size() != 3) return nullptr;
  for (int v : {op.operands[0], op.operands[1], op.operands[2], op.results[0]}) {
    if (!graph.values[size_t(v)].type.has_static_shape()) return nullptr;
  }
  const std::string r = op.attr("reduction") ? op.attr("reduction")->s : "none";
  const Combine c = r == "add" ? Combine::kAdd : r == "mul" ? Combine::kMul : r == "max" ? Combine::kMax : r == "min" ? Combine::kMin : Combine::kNone;
  const ElementType& e = graph.values[size_t(op.results[0])].type.element;
  const bool typed = (e.is_float() && (is_f32_or_narrower(e.float_kind) || e.float_kind == FloatKind::kF64)) ||
                     (e.is_integer() && e.int_width >= 8 && !(e.int_width == 64 && e.int_sign == Signedness::kUnsigned));
  if (c != Combine::kNone && !typed) return nullptr;
  return std::make_unique<ScatterNdKernel>(graph, op, c);
}

}  // namespace qrt::jit
