// qrt — kernels that copy stored values by index: gather (row copies by index), slice (strided
// row copies), concat (row copies; differently quantized operands requantized with the
// reference's formula) and nearest resize (row copies through per-axis index maps). Plain C++
// that runs on every host; the results are the reference's bytes by construction.
#include <algorithm>
#include <cstring>

#include "ir/numerics.h"
#include "jit/ops/layout_ops.h"

namespace qrt::jit {

namespace {

// qrt.gather: for every outer index and every index value, one row of `inner` elements.
class GatherOpKernel final : public StaticShapeKernel {
 public:
  GatherOpKernel(const Graph& graph, const Op& op, int64_t axis) : StaticShapeKernel(graph, op), axis_(axis) {}

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel&) const override {
    const Tensor &data = *operands[0], &idx = *operands[1];
    const auto& dd = data.type.dims;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis_; ++d) outer *= dd[size_t(d)];
    for (size_t d = size_t(axis_) + 1; d < dd.size(); ++d) inner *= dd[d];
    const int64_t extent = dd[size_t(axis_)], count = idx.num_elements();
    const size_t row = size_t(inner) * data.element_size();
    for (int64_t j = 0; j < count; ++j) {
      int64_t k = idx.int_at(size_t(j));
      if (k < -extent || k >= extent) {
        return Status::error_at(op_.loc, "'qrt.gather' op index " + std::to_string(k) + " (element " + std::to_string(j) +
                                             ") is out of range for dimension " + std::to_string(axis_) + " of size " +
                                             std::to_string(extent));
      }
      if (k < 0) k += extent;
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(y.bytes() + size_t(o * count + j) * row, data.bytes() + size_t(o * extent + k) * row, row);
      }
    }
    return Status::ok();
  }
  std::string describe() const override { return "gather_rows"; }

 private:
  int64_t axis_;
};

// qrt.gather_elements: each index's element along the axis, its other coordinates the
// index's own; the innermost coordinate advances the source by one element (or, along the
// axis, jumps by the index).
class GatherElementsOpKernel final : public StaticShapeKernel {
 public:
  GatherElementsOpKernel(const Graph& graph, const Op& op, int64_t axis) : StaticShapeKernel(graph, op), axis_(size_t(axis)) {}

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel&) const override {
    const Tensor &data = *operands[0], &idx = *operands[1];
    const auto &dd = data.type.dims, &id = idx.type.dims;
    const size_t rank = dd.size(), n = data.element_size();
    std::vector<size_t> stride(rank, 1);
    for (size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * size_t(dd[d + 1]);
    const int64_t extent = dd[axis_];
    std::vector<int64_t> at(rank, 0);
    size_t base = 0;  // the source offset of `at` without the axis coordinate
    for (size_t j = 0; j < size_t(idx.num_elements()); ++j) {
      int64_t k = idx.int_at(j);
      if (k < -extent || k >= extent) {
        return Status::error_at(op_.loc, "'qrt.gather_elements' op index " + std::to_string(k) + " (element " +
                                             std::to_string(j) + ") is out of range for dimension " + std::to_string(axis_) +
                                             " of size " + std::to_string(extent));
      }
      if (k < 0) k += extent;
      std::memcpy(y.bytes() + j * n, data.bytes() + (base + size_t(k) * stride[axis_]) * n, n);
      for (size_t d = rank; d-- > 0;) {
        if (++at[d] < id[d]) {
          if (d != axis_) base += stride[d];
          break;
        }
        if (d != axis_) base -= size_t(at[d] - 1) * stride[d];
        at[d] = 0;
      }
    }
    return Status::ok();
  }
  std::string describe() const override { return "gather_elements"; }

 private:
  size_t axis_;
};

// qrt.resize (nearest): per output row, the source row of every axis but the last from the
// index maps, then the last axis copied through its map (one copy when it is the identity).
class ResizeOpKernel final : public StaticShapeKernel {
 public:
  ResizeOpKernel(const Graph& graph, const Op& op, std::vector<std::vector<int64_t>> maps)
      : StaticShapeKernel(graph, op), maps_(std::move(maps)) {}

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const auto& in = x.type.dims;
    const auto& out = y.type.dims;
    const size_t rank = out.size(), n = x.element_size();
    if (rank == 0) {
      std::memcpy(y.bytes(), x.bytes(), n);
      return Status::ok();
    }
    std::vector<int64_t> strides(rank, 1);
    for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * in[d];
    const int64_t run = out[rank - 1], rows = y.num_elements() / run;
    const std::vector<int64_t>& last = maps_[rank - 1];
    bool identity = in[rank - 1] == run;
    for (int64_t e = 0; identity && e < run; ++e) identity = last[size_t(e)] == e;
    parallel.for_each(size_t(rows), [&](size_t r) {
      int64_t src = 0, rest = int64_t(r);
      for (size_t d = rank - 1; d-- > 0;) {
        src += maps_[d][size_t(rest % out[d])] * strides[d];
        rest /= out[d];
      }
      uint8_t* dst = y.bytes() + r * size_t(run) * n;
      const uint8_t* row = x.bytes() + size_t(src) * n;
      if (identity) {
        std::memcpy(dst, row, size_t(run) * n);
      } else {
        for (int64_t e = 0; e < run; ++e) std::memcpy(dst + size_t(e) * n, row + size_t(last[size_t(e)]) * n, n);
      }
    });
    return Status::ok();
  }
  std::string describe() const override { return "resize_nearest_rows"; }

 private:
  std::vector<std::vector<int64_t>> maps_;  // per axis: the source index of every output index
};

// qrt.concat: per operand, row copies along the axis; an operand quantized differently from
// the result is requantized element by element with the reference's formula.
class ConcatOpKernel final : public StaticShapeKernel {
 public:
  ConcatOpKernel(const Graph& graph, const Op& op, int64_t axis) : StaticShapeKernel(graph, op), axis_(axis) {}

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel&) const override {
    const auto& dims = y.type.dims;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis_; ++d) outer *= dims[size_t(d)];
    for (size_t d = size_t(axis_) + 1; d < dims.size(); ++d) inner *= dims[d];
    const ElementType& oe = y.type.element;
    const size_t n = y.element_size();
    int64_t offset = 0;
    for (const Tensor* t : operands) {
      const int64_t len = t->type.dims[size_t(axis_)];
      if (len * inner == 0) continue;  // an empty piece: no bytes (and perhaps no pointer) to copy
      const ElementType& ie = t->type.element;
      const bool same = !oe.is_uniform() || ie == oe;
      const float m = oe.is_uniform() ? numerics::multiplier(ie.scales[0], oe.scales[0]) : 1.0f;
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t src = o * len * inner, dst = (o * dims[size_t(axis_)] + offset) * inner;
        if (same) {
          std::memcpy(y.bytes() + size_t(dst) * n, t->bytes() + size_t(src) * n, size_t(len * inner) * n);
          continue;
        }
        for (int64_t k = 0; k < len * inner; ++k) {
          y.set_int(size_t(dst + k), numerics::requantize(t->int_at(size_t(src + k)) - ie.zero_points[0], m,
                                                          oe.zero_points[0], oe.storage.min, oe.storage.max));
        }
      }
      offset += len;
    }
    return Status::ok();
  }
  std::string describe() const override { return "concat_rows"; }

 private:
  int64_t axis_;
};

// qrt.slice: the innermost dimension's run is one copy when its step is 1, else strided.
class SliceOpKernel final : public StaticShapeKernel {
 public:
  SliceOpKernel(const Graph& graph, const Op& op, std::vector<int64_t> first, std::vector<int64_t> steps)
      : StaticShapeKernel(graph, op), first_(std::move(first)), steps_(std::move(steps)) {}

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel&) const override {
    const Tensor& x = *operands[0];
    const auto& in = x.type.dims;
    const auto& out = y.type.dims;
    const size_t rank = out.size(), n = x.element_size();
    if (y.num_elements() == 0) return Status::ok();
    std::vector<int64_t> strides(rank, 1);
    for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * in[d];
    const int64_t run = rank == 0 ? 1 : out[rank - 1], outer = y.num_elements() / run;
    const int64_t step = rank == 0 ? 1 : steps_[rank - 1];
    std::vector<int64_t> idx(rank, 0);
    for (int64_t o = 0; o < outer; ++o) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src += (first_[d] + idx[d] * steps_[d]) * strides[d];
      uint8_t* dst = y.bytes() + size_t(o * run) * n;
      if (step == 1) {
        std::memcpy(dst, x.bytes() + size_t(src) * n, size_t(run) * n);
      } else {
        for (int64_t e = 0; e < run; ++e) std::memcpy(dst + size_t(e) * n, x.bytes() + size_t(src + e * step) * n, n);
      }
      for (size_t k = rank >= 1 ? rank - 1 : 0; k-- > 0;) {  // the next row: all but the innermost dimension
        if (++idx[k] < out[k]) break;
        idx[k] = 0;
      }
    }
    return Status::ok();
  }
  std::string describe() const override { return "slice_rows"; }

 private:
  std::vector<int64_t> first_, steps_;
};

}  // namespace

std::unique_ptr<OpKernel> make_gather_kernel(const Graph& graph, const Op& op, int64_t axis) {
  return std::make_unique<GatherOpKernel>(graph, op, axis);
}

std::unique_ptr<OpKernel> make_slice_kernel(const Graph& graph, const Op& op, std::vector<int64_t> first,
                                            std::vector<int64_t> steps) {
  return std::make_unique<SliceOpKernel>(graph, op, std::move(first), std::move(steps));
}

std::unique_ptr<OpKernel> make_concat_kernel(const Graph& graph, const Op& op, int64_t axis) {
  return std::make_unique<ConcatOpKernel>(graph, op, axis);
}

std::unique_ptr<OpKernel> make_gather_elements_kernel(const Graph& graph, const Op& op, int64_t axis) {
  return std::make_unique<GatherElementsOpKernel>(graph, op, axis);
}

std::unique_ptr<OpKernel> make_resize_kernel(const Graph& graph, const Op& op, std::vector<std::vector<int64_t>> maps) {
  return std::make_unique<ResizeOpKernel>(graph, op, std::move(maps));
}

}  // namespace qrt::jit
