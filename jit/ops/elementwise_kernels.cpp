// qrt — quantized element-wise ops (qrt.add, qrt.mul, qrt.requantize on 8-bit per-tensor
// operands of one shape) on the element-wise micro-kernel for blocks of 8, with the scalar
// formulas of the reference for the last n % 8 elements where the kernel does not finish
// them in a masked step (StreamTraits::masked_tail).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "ir/numerics.h"
#include "ir/ops.h"
#include "ir/quant_params.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/ops/op_kernel.h"
#include "jit/ref/reference.h"

namespace qrt::jit {

namespace {


class ElementwiseOpKernel final : public OpKernel {
 public:
  ElementwiseOpKernel(const Graph& graph, const Op& op, KernelDesc desc, std::shared_ptr<const CompiledKernel> code,
                      ElementwiseArgs params, int32_t out_min, int32_t out_max, bool masked_tail)
      : OpKernel(graph.values[size_t(op.results[0])].type), graph_(&graph), op_(op), desc_(desc),
        code_(std::move(code)), params_(params), out_min_(out_min), out_max_(out_max), masked_tail_(masked_tail) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const bool binary = desc_.op != KernelOp::kRequantize;
    if (binary && operands[1]->type.dims != operands[0]->type.dims) {
      // Broadcasting (possible only with dynamic dimensions): run_into leaves it to the reference.
      auto dims = broadcast_shapes(operands[0]->type.dims, operands[1]->type.dims);
      if (!dims.is_ok()) return Status::error_at(op_.loc, "'" + std::string(op_info(op_.kind).name) + "' op " + dims.status().message());
      return dims;
    }
    return operands[0]->type.dims;
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& a = *operands[0];
    const bool binary = desc_.op != KernelOp::kRequantize;
    if (binary && operands[1]->type.dims != a.type.dims) {
      QRT_ASSIGN_OR_RETURN(Tensor r, evaluate_op_reference(*graph_, op_, operands));
      std::memcpy(y.bytes(), r.bytes(), r.byte_size());
      return Status::ok();
    }
    // One part per thread (at least kMinStreamTaskElements each), cut at 64-element bounds.
    const int64_t n = a.num_elements(), tasks = even_tasks(n, kMinStreamTaskElements, parallel);
    parallel.for_each(size_t(tasks), [&](size_t t) {
      run_range(operands, y, size_t(part_start(n, tasks, int64_t(t), 64)), size_t(part_start(n, tasks, int64_t(t) + 1, 64)));
    });
    return Status::ok();
  }

  bool can_overwrite_operand(size_t) const override { return true; }  // lane i read before lane i written

  std::string describe() const override { return desc_.name(); }

 private:
  // Elements [begin, end): the generated body for whole blocks of 8, then the last n % 8 in the
  // kernel's masked step (StreamTraits::masked_tail) or by the scalar formulas.
  void run_range(const std::vector<const Tensor*>& operands, Tensor& y, size_t begin, size_t end) const {
    const Tensor& a = *operands[0];
    const bool binary = desc_.op != KernelOp::kRequantize;
    const size_t blocks_end = begin + (end - begin) / 8 * 8, main = masked_tail_ ? end : blocks_end;
    ElementwiseArgs args = params_;
    args.a = a.bytes() + begin;
    args.b = binary ? operands[1]->bytes() + begin : nullptr;
    args.y = y.bytes() + begin;
    args.blocks = int64_t((blocks_end - begin) / 8);
    args.tail = int64_t(main - blocks_end);
    call_microkernel(code_->entry(), args, desc_);
    for (size_t i = main; i < end; ++i) {
      const int64_t va = a.int_at(i) - params_.za;
      int64_t q;
      if (desc_.op == KernelOp::kQAdd) {
        const float ta = float(va) * params_.m_a;
        const float tb = float(operands[1]->int_at(i) - params_.zb) * params_.m_b;
        const float sum = ta + tb;
        q = numerics::add_zero_point_and_clamp(numerics::round_half_even(sum), params_.zo, out_min_, out_max_);
      } else if (desc_.op == KernelOp::kQMul) {
        q = numerics::requantize(va * (operands[1]->int_at(i) - params_.zb), params_.m_a, params_.zo, out_min_, out_max_);
      } else {
        q = numerics::requantize(va, params_.m_a, params_.zo, out_min_, out_max_);
      }
      y.set_int(i, q);
    }
  }

  const Graph* graph_;  // owned by the plan that owns this kernel
  Op op_;
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
  ElementwiseArgs params_;
  int32_t out_min_, out_max_;
  bool masked_tail_;  // the kernel finishes the tail itself
};

struct PreparedElementwise final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  KernelDesc desc;  // all but the ISA
  ElementwiseArgs params{};
  int32_t out_min = 0, out_max = 0;
};

class ElementwiseFamily final : public OpFamily {
 public:
  const char* name() const override { return "elementwise"; }
  KernelOp kind() const override { return KernelOp::kQAdd; }
  KernelOp kind_of(const Op& op) const override {
    return op.kind == OpKind::kRequantize ? KernelOp::kRequantize : op.kind == OpKind::kMul ? KernelOp::kQMul : KernelOp::kQAdd;
  }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const bool binary = op.kind != OpKind::kRequantize;
    const ElementType& ea = graph.values[size_t(op.operands[0])].type.element;
    const ElementType& eo = graph.values[size_t(op.results[0])].type.element;
    const ElementType* eb = binary ? &graph.values[size_t(op.operands[1])].type.element : nullptr;
    if (!ea.is_quant() || (eb && !eb->is_quant())) return refuse(why_not, "float element-wise ops run on the reference");
    if (!is_8bit_per_tensor(ea) || (eb && !is_8bit_per_tensor(*eb)) || !is_8bit_per_tensor(eo)) {
      return refuse(why_not, "only 8-bit per-tensor operands and results have a kernel");
    }
    auto prepared = std::make_unique<PreparedElementwise>();
    ElementwiseArgs& p = prepared->params;
    p.za = int32_t(ea.zero_points[0]);
    p.zb = eb ? int32_t(eb->zero_points[0]) : 0;
    p.zo = int32_t(eo.zero_points[0]);
    int32_t out_min = int32_t(eo.storage.min), out_max = int32_t(eo.storage.max);
    if (const std::optional<FusedClamp> c = fused_clamp(op)) {
      // Inside the storage bounds, lo <= hi (quantization is monotonic and clamps).
      const auto [lo, hi] = clamp_stored_bounds(eo, 0, c->min, c->max);
      out_min = int32_t(lo);
      out_max = int32_t(hi);
    }
    p.lo = float(out_min - p.zo);
    p.hi = float(out_max - p.zo);
    const double so = eo.scales[0];
    if (op.kind == OpKind::kAdd) {
      p.m_a = numerics::multiplier(ea.scales[0], so);
      p.m_b = numerics::multiplier(eb->scales[0], so);
    } else if (op.kind == OpKind::kMul) {
      p.m_a = numerics::multiplier(ea.scales[0] * eb->scales[0], so);
    } else {
      p.m_a = numerics::multiplier(ea.scales[0], so);
    }
    // Keeps every lane finite (no inf - inf): then the vector clamp matches the scalar one.
    if (!(std::fabs(p.m_a) < 1e30f) || !(std::fabs(p.m_b) < 1e30f)) {
      return refuse(why_not, "a rescale multiplier is too large for the kernel");
    }
    KernelDesc& d = prepared->desc;
    d.op = op.kind == OpKind::kAdd ? KernelOp::kQAdd : op.kind == OpKind::kMul ? KernelOp::kQMul : KernelOp::kRequantize;
    d.storage_signed = ea.storage.is_signed;
    d.b_signed = eb && eb->storage.is_signed;
    d.out = eo.storage.is_signed ? OutKind::kS8 : OutKind::kU8;
    prepared->graph = &graph;
    prepared->op = &op;
    prepared->out_min = out_min;
    prepared->out_max = out_max;
    return std::unique_ptr<PreparedOp>(std::move(prepared));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    KernelDesc d = static_cast<const PreparedElementwise&>(prepared).desc;
    d.isa = backend->isa();
    d.generator = backend->generator();
    if (backend->stream_traits().block != 8) return "the element-wise ABI works in blocks of 8";
    return backend->why_not(d);
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedElementwise&>(prepared);
    KernelDesc d = p.desc;
    d.isa = backend->isa();
    d.generator = backend->generator();
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
    return std::unique_ptr<OpKernel>(
        std::make_unique<ElementwiseOpKernel>(*p.graph, *p.op, d, std::move(code), p.params, p.out_min, p.out_max,
                                                                     backend->stream_traits().masked_tail));
  }
};

}  // namespace

const OpFamily& elementwise_family() {
  static const ElementwiseFamily family;
  return family;
}

}  // namespace qrt::jit
