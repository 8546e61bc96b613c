// qrt — cumsum and mod in portable C++ (see cumsum_mod_kernels.h). CumSum keeps one running
// sum per inner position while it walks the axis, so loads run along contiguous memory
// whatever the axis; each sum adds in the order the reference does. Mod walks the broadcast
// shape with one offset per operand.
#include "jit/ops/cumsum_mod_kernels.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "ir/ops.h"
#include "jit/ops/plain_element.h"

namespace qrt::jit {

namespace {

class CumSumKernel final : public OpKernel {
 public:
  CumSumKernel(const Graph& graph, const Op& op)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        axis_(size_t(op.attr("axis")->i)),
        exclusive_(op.attr("exclusive") && op.attr("exclusive")->i != 0),
        reverse_(op.attr("reverse") && op.attr("reverse")->i != 0) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>&) const override { return result_type_.dims; }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const auto& d = result_type_.dims;
    size_t outer = 1, inner = 1;
    for (size_t k = 0; k < axis_; ++k) outer *= size_t(d[k]);
    for (size_t k = axis_ + 1; k < d.size(); ++k) inner *= size_t(d[k]);
    const size_t len = size_t(d[axis_]);
    Parallel& par = result_type_.num_elements() >= (int64_t(1) << 18) ? parallel : serial();
    with_plain_element(result_type_.element, [&](auto* type_tag) {
      using T = std::remove_pointer_t<decltype(type_tag)>;
      // Integers sum in 64 bits (wrapping, then truncated as the reference stores them).
      using Acc = std::conditional_t<std::is_floating_point_v<T>, T, uint64_t>;
      const T* x = reinterpret_cast<const T*>(operands[0]->bytes());
      T* y = reinterpret_cast<T*>(out.bytes());
      par.for_each(outer, [&](size_t o) {
        std::vector<Acc> acc(inner, Acc(0));
        for (size_t s = 0; s < len; ++s) {
          const size_t row = (o * len + (reverse_ ? len - 1 - s : s)) * inner;
          for (size_t j = 0; j < inner; ++j) {
            const Acc v = Acc(x[row + j]);
            if (exclusive_) {
              y[row + j] = T(acc[j]);
              acc[j] = acc[j] + v;
            } else {
              acc[j] = acc[j] + v;
              y[row + j] = T(acc[j]);
            }
          }
        }
      });
    });
    return Status::ok();
  }

  std::string describe() const override {
    return std::string("cumsum (portable C++") + (exclusive_ ? ", exclusive" : "") + (reverse_ ? ", reverse" : "") + ")";
  }

 private:
  size_t axis_;
  bool exclusive_, reverse_;
};

class ModKernel final : public OpKernel {
 public:
  ModKernel(const Graph& graph, const Op& op)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        op_(op),
        a_(graph.values[size_t(op.operands[0])].type.dims),
        b_(graph.values[size_t(op.operands[1])].type.dims),
        fmod_(op.attr("fmod") && op.attr("fmod")->i != 0) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>&) const override { return result_type_.dims; }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel&) const override {
    const auto& dims = result_type_.dims;
    const std::vector<size_t> sa = broadcast_strides(a_, dims), sb = broadcast_strides(b_, dims);
    Status status = Status::ok();
    with_plain_element(result_type_.element, [&](auto* type_tag) {
      using T = std::remove_pointer_t<decltype(type_tag)>;
      const T* a = reinterpret_cast<const T*>(operands[0]->bytes());
      const T* b = reinterpret_cast<const T*>(operands[1]->bytes());
      T* y = reinterpret_cast<T*>(out.bytes());
      std::vector<int64_t> idx(dims.size(), 0);
      size_t ia = 0, ib = 0;
      const size_t total = size_t(result_type_.num_elements());
      for (size_t i = 0; i < total; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
          y[i] = std::fmod(a[ia], b[ib]);
        } else {
          // The reference's integers: 64-bit values, the result stored truncated.
          const int64_t x = int64_t(a[ia]), z = int64_t(b[ib]);
          if (z == 0) {
            status = Status::error_at(op_.loc, "'qrt.mod' op integer modulo by zero at element " + std::to_string(i));
            return;
          }
          int64_t v = z == -1 ? 0 : x % z;
          if (!fmod_ && v != 0 && (v < 0) != (z < 0)) v += z;
          y[i] = T(v);
        }
        for (size_t k = dims.size(); k-- > 0;) {
          ++idx[k];
          ia += sa[k];
          ib += sb[k];
          if (idx[k] < dims[k]) break;
          ia -= sa[k] * size_t(dims[k]);
          ib -= sb[k] * size_t(dims[k]);
          idx[k] = 0;
        }
      }
    });
    return status;
  }

  std::string describe() const override { return std::string("mod (portable C++, ") + (fmod_ ? "fmod)" : "floor)"); }

 private:
  Op op_;
  std::vector<int64_t> a_, b_;
  bool fmod_;
};

}  // namespace

std::unique_ptr<OpKernel> make_cumsum_mod_kernel(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::kCumSum && op.kind != OpKind::kMod) return nullptr;
  const Type& y = graph.values[size_t(op.results[0])].type;
  for (int v : op.operands) {
    if (!graph.values[size_t(v)].type.has_static_shape()) return nullptr;
  }
  const ElementType& e = y.element;
  const bool ok = (e.is_float() && (e.float_kind == FloatKind::kF32 || e.float_kind == FloatKind::kF64)) ||
                  (e.is_integer() && e.int_width >= 8);
  if (!ok || !y.has_static_shape()) return nullptr;
  if (op.kind == OpKind::kCumSum) return std::make_unique<CumSumKernel>(graph, op);
  return std::make_unique<ModKernel>(graph, op);
}

}  // namespace qrt::jit
