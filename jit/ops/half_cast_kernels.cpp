// qrt — qrt.cast between f32, bf16 and f16 where either side is bf16 or f16: widen to f32
// (exact), round once to the result type (nearest even, NaN kept), in chunks across the
// threads. The element-wise programs cover f32/f64/integer casts but not 2-byte floats, which
// the float regions of bf16/f16 models open and close with.
#include <algorithm>

#include "ir/float_format.h"
#include "jit/ops/float_widening.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

namespace {

constexpr int64_t kChunk = 16384;  // elements per task

bool half(FloatKind k) { return k == FloatKind::kBF16 || k == FloatKind::kF16; }

class HalfCastOpKernel final : public OpKernel {
 public:
  HalfCastOpKernel(const Graph& graph, const Op& op)
      : OpKernel(graph.values[size_t(op.results[0])].type), from_(graph.values[size_t(op.operands[0])].type.element.float_kind),
        to_(result_type_.element.float_kind) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;  // element-wise: any shape
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const int64_t n = x.num_elements();
    const int64_t in_bytes = from_ == FloatKind::kF32 ? 4 : 2, out_bytes = to_ == FloatKind::kF32 ? 4 : 2;
    parallel.for_each(size_t((n + kChunk - 1) / kChunk), [&](size_t t) {
      const int64_t begin = int64_t(t) * kChunk, count = std::min(kChunk, n - begin);
      const uint8_t* src = x.bytes() + begin * in_bytes;
      uint8_t* dst = y.bytes() + begin * out_bytes;
      if (from_ == FloatKind::kF32) return narrow_from_f32(reinterpret_cast<const float*>(src), to_, count, dst);
      if (to_ == FloatKind::kF32) return widen_to_f32(src, from_, count, reinterpret_cast<float*>(dst));
      // bf16 <-> f16: through exact f32 values, so one rounding.
      thread_local std::vector<float> wide;
      wide.resize(size_t(count));
      widen_to_f32(src, from_, count, wide.data());
      narrow_from_f32(wide.data(), to_, count, dst);
    });
    return Status::ok();
  }

  std::string describe() const override {
    return std::string("cast_") + float_kind_name(from_) + "_" + float_kind_name(to_) +
           " (portable C++: widened exactly, rounded once to nearest even)";
  }

 private:
  FloatKind from_, to_;
};

struct PreparedHalfCast final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
};

class HalfCastFamily final : public OpFamily {
 public:
  const char* name() const override { return "half-cast"; }
  KernelOp kind() const override { return KernelOp::kCount; }  // plain C++ on every host

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    if (!half_float_cast_applies(graph, op)) return refuse(why_not, "not a cast between f32, bf16 and f16");
    auto p = std::make_unique<PreparedHalfCast>();
    p->graph = &graph;
    p->op = &op;
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp&, const Backend*) const override { return ""; }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend*) const override {
    const auto& p = static_cast<const PreparedHalfCast&>(prepared);
    return std::unique_ptr<OpKernel>(std::make_unique<HalfCastOpKernel>(*p.graph, *p.op));
  }
};

}  // namespace

bool half_float_cast_applies(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::kCast || op.operands.size() != 1 || op.results.size() != 1) return false;
  const ElementType &x = graph.values[size_t(op.operands[0])].type.element, &y = graph.values[size_t(op.results[0])].type.element;
  return x.is_float() && y.is_float() && is_f32_or_narrower(x.float_kind) && is_f32_or_narrower(y.float_kind) &&
         (half(x.float_kind) || half(y.float_kind));
}

const OpFamily& half_cast_family() {
  static const HalfCastFamily family;
  return family;
}

}  // namespace qrt::jit
