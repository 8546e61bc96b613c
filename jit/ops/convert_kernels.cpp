// qrt — quant.qcast / quant.dcast (8-bit storage, per tensor, f32 expressed) on the convert
// micro-kernel for whole blocks, the scalar formulas (ir/numerics.h) for the tail unless the
// kernel finishes it in a masked step (StreamTraits::masked_tail).
#include <algorithm>

#include "ir/numerics.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

namespace {

class ConvertOpKernel final : public OpKernel {
 public:
  ConvertOpKernel(const Graph& graph, const Op& op, KernelDesc desc, std::shared_ptr<const CompiledKernel> code,
                  StreamTraits traits)
      : OpKernel(graph.values[size_t(op.results[0])].type), desc_(desc), code_(std::move(code)),
        block_(traits.masked_tail ? 1 : traits.block) {}
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    // One part per thread (at least kMinStreamTaskElements each), cut at 64-element bounds (a
    // multiple of every block).
    const int64_t n = out.num_elements(), tasks = even_tasks(n, kMinStreamTaskElements, parallel);
    parallel.for_each(size_t(tasks), [&](size_t t) {
      run_range(*operands[0], out, size_t(part_start(n, tasks, int64_t(t), 64)), size_t(part_start(n, tasks, int64_t(t) + 1, 64)));
    });
    return Status::ok();
  }
  std::string describe() const override { return desc_.name(); }

 private:
  // Elements [begin, end): whole blocks on the kernel, the rest through the scalar formulas
  // the kernel implements lane by lane.
  void run_range(const Tensor& in, Tensor& out, size_t begin, size_t end) const {
    const size_t in_size = in.element_size(), out_size = out.element_size();
    const size_t main = begin + (end - begin) / block_ * block_;
    ConvertArgs args{in.bytes() + begin * in_size, out.bytes() + begin * out_size, main - begin};
    if (main > begin) call_microkernel(code_->entry(), args, desc_);
    for (size_t i = main; i < end; ++i) {
      if (desc_.op == KernelOp::kQuantize) {
        out.set_int(i, numerics::quantize_f32(float(in.float_at(i)), desc_.scale, desc_.zero_point, desc_.qmin, desc_.qmax));
      } else {
        out.set_float(i, numerics::dequantize_f32(in.int_at(i), desc_.zero_point, desc_.scale));
      }
    }
  }

  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
  unsigned block_;  // 1 where the kernel finishes any tail itself
};

struct PreparedConvert final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  KernelDesc desc;  // all but the ISA
};

class ConvertFamily final : public OpFamily {
 public:
  const char* name() const override { return "convert"; }
  KernelOp kind() const override { return KernelOp::kQuantize; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const Type& in = graph.values[size_t(op.operands[0])].type;
    const Type& out = graph.values[size_t(op.results[0])].type;
    const ElementType& q = op.kind == OpKind::kQCast ? out.element : in.element;
    if (q.kind != ElementKind::kUniform) *why_not = "per-axis types are not supported by this kernel";
    else if (q.float_kind != FloatKind::kF32) *why_not = "only f32 expressed types are supported by this kernel";
    else if (q.storage.width != 8) *why_not = "only 8-bit storage is supported by this kernel";
    if (!why_not->empty()) return std::unique_ptr<PreparedOp>();
    auto p = std::make_unique<PreparedConvert>();
    p->graph = &graph;
    p->op = &op;
    p->desc.op = op.kind == OpKind::kQCast ? KernelOp::kQuantize : KernelOp::kDequantize;
    p->desc.storage_signed = q.storage.is_signed;
    p->desc.scale = numerics::compute_scale_f32(q.scales[0], q.float_kind);
    p->desc.zero_point = int32_t(q.zero_points[0]);
    p->desc.qmin = int32_t(q.storage.min);
    p->desc.qmax = int32_t(q.storage.max);
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    KernelDesc d = static_cast<const PreparedConvert&>(prepared).desc;
    d.isa = backend->isa();
    d.generator = backend->generator();
    const unsigned block = backend->stream_traits().block;
    if (block == 0 || 64 * 1024 % block != 0) return "the convert block must divide 65536";
    return backend->why_not(d);
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedConvert&>(prepared);
    KernelDesc d = p.desc;
    d.isa = backend->isa();
    d.generator = backend->generator();
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
    return std::unique_ptr<OpKernel>(
        std::make_unique<ConvertOpKernel>(*p.graph, *p.op, d, std::move(code), backend->stream_traits()));
  }
};

}  // namespace

const OpFamily& convert_family() {
  static const ConvertFamily family;
  return family;
}

}  // namespace qrt::jit
