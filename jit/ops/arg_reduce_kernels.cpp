// qrt — argmax / argmin in portable C++ (see arg_reduce_kernels.h). Each outer block keeps the
// best value and index of every inner position while it walks the axis, so the loads run along
// contiguous memory whatever the axis. bf16 and f16 blocks widen to f32 first: exact, so every
// comparison, and so every index, is the one the reference makes.
#include "jit/ops/arg_reduce_kernels.h"

#include <cmath>
#include <type_traits>
#include <vector>

#include "ir/float_format.h"
#include "ir/nn_params.h"
#include "ir/ops.h"
#include "jit/ops/float_widening.h"

namespace qrt::jit {

namespace {

// What describe() says of widened values: "" for other types.
std::string half_note(const ElementType& e) {
  return is_half_float(e) ? std::string(float_kind_name(e.float_kind)) + " values widened to f32 (exact); " : "";
}

// Calls fn with the bytes of elements of type `e` typed (f32, or integer / stored values; not
// bf16/f16, which the kernels widen first).
template <typename Fn>
void visit_elements(const ElementType& e, const uint8_t* bytes, Fn&& fn) {
  if (e.is_float()) return fn(reinterpret_cast<const float*>(bytes));
  const unsigned width = e.is_integer() ? e.int_width : e.storage.width;
  const bool is_signed = e.is_integer() ? e.int_sign != Signedness::kUnsigned : e.storage.is_signed;
  switch (width) {
    case 8: return is_signed ? fn(reinterpret_cast<const int8_t*>(bytes)) : fn(bytes);
    case 16:
      return is_signed ? fn(reinterpret_cast<const int16_t*>(bytes)) : fn(reinterpret_cast<const uint16_t*>(bytes));
    case 32:
      return is_signed ? fn(reinterpret_cast<const int32_t*>(bytes)) : fn(reinterpret_cast<const uint32_t*>(bytes));
    default:
      return is_signed ? fn(reinterpret_cast<const int64_t*>(bytes)) : fn(reinterpret_cast<const uint64_t*>(bytes));
  }
}

class ArgReduceKernel final : public OpKernel {
 public:
  ArgReduceKernel(const Graph& graph, const Op& op, size_t axis)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        in_(graph.values[size_t(op.operands[0])].type),
        axis_(axis),
        is_max_(op.kind == OpKind::kArgMax),
        last_(op.attr("select_last_index") && op.attr("select_last_index")->i != 0) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>&) const override { return result_type_.dims; }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const int64_t len = in_.dims[axis_];
    int64_t inner = 1;
    for (size_t d = axis_ + 1; d < in_.rank(); ++d) inner *= in_.dims[d];
    const int64_t outer = in_.num_elements() / (len * inner);
    Parallel& par = in_.num_elements() >= (int64_t(1) << 18) ? parallel : serial();
    auto* y = reinterpret_cast<int64_t*>(out.bytes());
    if (is_half_float(in_.element)) {
      par.for_each(size_t(outer), [&](size_t o) {
        thread_local std::vector<float> wide;
        wide.resize(size_t(len * inner));
        widen_to_f32(operands[0]->bytes() + int64_t(o) * len * inner * 2, in_.element.float_kind, len * inner, wide.data());
        block(wide.data(), y + int64_t(o) * inner, len, inner);
        release_large(wide);
      });
      return Status::ok();
    }
    par.for_each(size_t(outer), [&](size_t o) {
      visit_elements(in_.element, operands[0]->bytes(), [&](const auto* x) { block(x + int64_t(o) * len * inner, y + int64_t(o) * inner, len, inner); });
    });
    return Status::ok();
  }

  std::string describe() const override {
    return std::string(is_max_ ? "argmax" : "argmin") + " (portable C++; " + half_note(in_.element) +
           "a NaN wins, ties to the " + (last_ ? "last" : "first") + " index)";
  }

 private:
  // One outer block: x[k · inner + j] for k < len, j < inner; y[j] the chosen k.
  template <typename T>
  void block(const T* x, int64_t* y, int64_t len, int64_t inner) const {
    thread_local std::vector<T> best_value;
    best_value.assign(x, x + inner);
    T* best = best_value.data();
    for (int64_t j = 0; j < inner; ++j) y[j] = 0;
    for (int64_t k = 1; k < len; ++k) {
      const T* row = x + k * inner;
      for (int64_t j = 0; j < inner; ++j) {
        const T v = row[j], b = best[j];
        bool better;
        if constexpr (std::is_floating_point_v<T>) {
          better = std::isnan(b) ? last_ && std::isnan(v)
                                 : std::isnan(v) || (is_max_ ? v > b : v < b) || (last_ && v == b);
        } else {
          better = (is_max_ ? v > b : v < b) || (last_ && v == b);
        }
        if (better) {
          best[j] = v;
          y[j] = k;
        }
      }
    }
  }

  Type in_;
  size_t axis_;
  bool is_max_, last_;
};

// qrt.topk: every line along the axis through select_topk (the reference's selection), lines
// spread over the threads.
class TopKKernel final : public OpKernel {
 public:
  TopKKernel(const Graph& graph, const Op& op, size_t axis)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        in_(graph.values[size_t(op.operands[0])].type),
        axis_(axis),
        k_(op.attr("k")->i),
        largest_(!op.attr("largest") || op.attr("largest")->i != 0) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>&) const override { return result_type_.dims; }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const int64_t n = in_.dims[axis_];
    int64_t inner = 1;
    for (size_t d = axis_ + 1; d < in_.rank(); ++d) inner *= in_.dims[d];
    const int64_t outer = n * inner == 0 ? 0 : in_.num_elements() / (n * inner);
    if (out.num_elements() == 0) return Status::ok();  // k = 0 or an empty dimension: no bytes to point into
    Parallel& par = in_.num_elements() >= (int64_t(1) << 16) ? parallel : serial();
    int64_t* y = reinterpret_cast<int64_t*>(out.bytes());
    const int64_t k = k_;
    const bool largest = largest_;
    if (is_half_float(in_.element)) {
      par.for_each(size_t(outer), [&](size_t o) {
        thread_local std::vector<float> wide;
        wide.resize(size_t(n * inner));
        widen_to_f32(operands[0]->bytes() + int64_t(o) * n * inner * 2, in_.element.float_kind, n * inner, wide.data());
        std::vector<int64_t> scratch;
        for (int64_t j = 0; j < inner; ++j) {
          select_topk(wide.data() + j, n, inner, k, largest, y + int64_t(o) * k * inner + j, inner, scratch);
        }
        release_large(wide);
      });
      return Status::ok();
    }
    visit_elements(in_.element, operands[0]->bytes(), [&](const auto* x) {
      par.for_each(size_t(outer), [&](size_t o) {
        std::vector<int64_t> scratch;
        for (int64_t j = 0; j < inner; ++j) {
          select_topk(x + int64_t(o) * n * inner + j, n, inner, k, largest, y + int64_t(o) * k * inner + j, inner, scratch);
        }
      });
    });
    return Status::ok();
  }

  std::string describe() const override {
    return std::string("topk (portable C++; ") + half_note(in_.element) + "the " + (largest_ ? "largest" : "smallest") +
           " k, ties in index order, NaN above all)";
  }

 private:
  Type in_;
  size_t axis_;
  int64_t k_;
  bool largest_;
};

}  // namespace

std::unique_ptr<OpKernel> make_topk_kernel(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::kTopK || op.operands.size() != 1 || !op.attr("axis") || !op.attr("k")) return nullptr;
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  if (!x.has_static_shape() || !y.has_static_shape()) return nullptr;
  const ElementType& e = x.element;
  // u64 stays with the reference (which orders integers as int64).
  const bool ok = (e.is_float() && is_f32_or_narrower(e.float_kind)) ||
                  (e.is_integer() && e.int_width >= 8 && !(e.int_width == 64 && e.int_sign == Signedness::kUnsigned)) ||
                  (e.kind == ElementKind::kUniform && (e.storage.width == 8 || e.storage.width == 16));
  const int64_t axis = op.attr("axis")->i;
  if (!ok || axis < 0 || axis >= int64_t(x.rank()) || op.attr("k")->i > x.dims[size_t(axis)]) return nullptr;
  return std::make_unique<TopKKernel>(graph, op, size_t(axis));
}

std::unique_ptr<OpKernel> make_arg_reduce_kernel(const Graph& graph, const Op& op) {
  if ((op.kind != OpKind::kArgMax && op.kind != OpKind::kArgMin) || op.operands.size() != 1) return nullptr;
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  if (!x.has_static_shape() || !y.has_static_shape() || x.num_elements() == 0 || !op.attr("axis")) return nullptr;
  const ElementType& e = x.element;
  const bool ok = (e.is_float() && is_f32_or_narrower(e.float_kind)) || (e.is_integer() && e.int_width >= 8) ||
                  (e.kind == ElementKind::kUniform && (e.storage.width == 8 || e.storage.width == 16));
  const int64_t axis = op.attr("axis")->i;
  if (!ok || axis < 0 || axis >= int64_t(x.rank())) return nullptr;
  return std::make_unique<ArgReduceKernel>(graph, op, size_t(axis));
}

}  // namespace qrt::jit
