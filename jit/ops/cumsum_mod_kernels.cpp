// qrt — cumsum and mod in portable C++ (see cumsum_mod_kernels.h). CumSum keeps one running
// sum per inner position while it walks the axis, so loads run along contiguous memory
// whatever the axis; each sum adds in the order the reference does. Mod walks the broadcast
// shape with one offset per operand. bf16 and f16 widen to f32 (exact): cumsum keeps the
// reference's f32 running sums and rounds each output once; fmod is exact in any precision.
#include "jit/ops/cumsum_mod_kernels.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "ir/float_format.h"
#include "ir/ops.h"
#include "jit/ops/float_widening.h"
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
    const ElementType& e = result_type_.element;
    if (is_half_float(e)) {
      // bf16 / f16: each outer block widened, summed in f32 as the reference sums, rounded once.
      par.for_each(outer, [&](size_t o) {
        thread_local std::vector<float> x, y;
        const size_t block = len * inner;
        x.resize(block);
        y.resize(block);
        widen_to_f32(operands[0]->bytes() + o * block * 2, e.float_kind, int64_t(block), x.data());
        cumsum_block(x.data(), y.data(), len, inner);
        narrow_from_f32(y.data(), e.float_kind, int64_t(block), out.bytes() + o * block * 2);
        release_large(x);
        release_large(y);
      });
      return Status::ok();
    }
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
    const FloatKind k = result_type_.element.float_kind;
    const bool half = is_half_float(result_type_.element);
    return std::string("cumsum (portable C++") + (half ? "; " + std::string(float_kind_name(k)) + " widened to f32, f32 sums, each output rounded once" : "") +
           (exclusive_ ? ", exclusive" : "") + (reverse_ ? ", reverse" : "") + ")";
  }

 private:
  // One f32 block of `len` rows of `inner` values: the running sums along the rows.
  void cumsum_block(const float* x, float* y, size_t len, size_t inner) const {
    thread_local std::vector<float> acc;
    acc.assign(inner, 0.0f);
    for (size_t s = 0; s < len; ++s) {
      const size_t row = (reverse_ ? len - 1 - s : s) * inner;
      for (size_t j = 0; j < inner; ++j) {
        const float v = x[row + j];
        if (exclusive_) {
          y[row + j] = acc[j];
          acc[j] = acc[j] + v;
        } else {
          acc[j] = acc[j] + v;
          y[row + j] = acc[j];
        }
      }
    }
  }

  size_t axis_;
  bool exclusive_, reverse_;
};

// Calls fn(i, ia, ib) for each element i of `dims` in row-major order with the offsets of the
// operands broadcast to it (strides sa, sb), until fn returns false.
template <typename Fn>
void for_each_broadcast(const std::vector<int64_t>& dims, const std::vector<size_t>& sa, const std::vector<size_t>& sb, Fn fn) {
  std::vector<int64_t> idx(dims.size(), 0);
  size_t ia = 0, ib = 0, total = 1;
  for (int64_t d : dims) total *= size_t(d);
  for (size_t i = 0; i < total; ++i) {
    if (!fn(i, ia, ib)) return;
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
}

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
    const ElementType& e = result_type_.element;
    if (is_half_float(e)) {
      // bf16 / f16: fmod of the widened values is exact, so its one rounding changes nothing.
      thread_local std::vector<float> wa, wb, wy;
      const float* a = f32_elements(*operands[0], wa);
      const float* b = f32_elements(*operands[1], wb);
      float* y = f32_destination(out, wy);
      for_each_broadcast(dims, sa, sb, [&](size_t i, size_t ia, size_t ib) {
        y[i] = std::fmod(a[ia], b[ib]);
        return true;
      });
      store_f32_results(out, wy);
      for (std::vector<float>* w : {&wa, &wb, &wy}) release_large(*w);
      return status;
    }
    with_plain_element(result_type_.element, [&](auto* type_tag) {
      using T = std::remove_pointer_t<decltype(type_tag)>;
      const T* a = reinterpret_cast<const T*>(operands[0]->bytes());
      const T* b = reinterpret_cast<const T*>(operands[1]->bytes());
      T* y = reinterpret_cast<T*>(out.bytes());
      for_each_broadcast(dims, sa, sb, [&](size_t i, size_t ia, size_t ib) {
        if constexpr (std::is_floating_point_v<T>) {
          y[i] = std::fmod(a[ia], b[ib]);
        } else {
          // The reference's integers: 64-bit values, the result stored truncated.
          const int64_t x = int64_t(a[ia]), z = int64_t(b[ib]);
          if (z == 0) {
            status = Status::error_at(op_.loc, "'qrt.mod' op integer modulo by zero at element " + std::to_string(i));
            return false;
          }
          int64_t v = z == -1 ? 0 : x % z;
          if (!fmod_ && v != 0 && (v < 0) != (z < 0)) v += z;
          y[i] = T(v);
        }
        return true;
      });
    });
    return status;
  }

  std::string describe() const override {
    const FloatKind k = result_type_.element.float_kind;
    const bool half = is_half_float(result_type_.element);
    return std::string("mod (portable C++, ") + (half ? widening_note(k) : "") + (fmod_ ? "fmod)" : "floor)");
  }

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
  const bool ok = (e.is_float() && (is_f32_or_narrower(e.float_kind) || e.float_kind == FloatKind::kF64)) ||
                  (e.is_integer() && e.int_width >= 8);
  if (!ok || !y.has_static_shape()) return nullptr;
  if (op.kind == OpKind::kCumSum) return std::make_unique<CumSumKernel>(graph, op);
  return std::make_unique<ModKernel>(graph, op);
}

}  // namespace qrt::jit
