// qrt — the per-op kernel choice and the process-wide code cache (see op_kernels.h).
#include "jit/op_kernels.h"

#include "jit/convert_kernels.h"
#include "jit/host_info.h"
#include "jit/ref/reference.h"
#include "jit/x86_generators.h"

namespace qrt::jit {

CodeCache& code_cache() {
  static CodeCache cache([](const KernelDesc& d) -> Result<std::shared_ptr<ExecutableCode>> {
    switch (d.op) {
      case KernelOp::kQuantize:
      case KernelOp::kDequantize:
        return generate_avx2_convert(d);
      case KernelOp::kGemm:
        return generate_avx2_gemm(d);
      case KernelOp::kDepthwise:
        return generate_avx2_depthwise(d);
    }
    return Status::error("no generator for kernel " + d.name());
  });
  return cache;
}

namespace {

// quant.qcast / quant.dcast through ConvertKernel.
class ConvertOpKernel final : public OpKernel {
 public:
  ConvertOpKernel(const Graph& graph, const Op& op, ConvertKernel k)
      : result_type_(graph.values[size_t(op.results[0])].type), kernel_(std::move(k)) {}
  Result<Tensor> run(const std::vector<const Tensor*>& operands) const override {
    Type t = result_type_;
    t.dims = operands[0]->type.dims;
    Tensor out = Tensor::zeros(t);
    kernel_.run(*operands[0], out);
    return out;
  }
  std::string describe() const override { return kernel_.desc().name(); }

 private:
  Type result_type_;
  ConvertKernel kernel_;
};

}  // namespace

std::unique_ptr<Tensor> constant_operand(const Graph& graph, int value) {
  const int producer = graph.values[size_t(value)].producer;
  if (producer < 0 || graph.ops[size_t(producer)].kind != OpKind::kConstant) return nullptr;
  auto t = evaluate_op_reference(graph, graph.ops[size_t(producer)], {});
  if (!t.is_ok()) return nullptr;
  return std::make_unique<Tensor>(std::move(t).value());
}

Result<KernelChoice> select_kernel(const Graph& graph, const Op& op) {
  KernelChoice choice;
  if (!host_cpu_features().avx2) {
    choice.why_not = "the CPU has no AVX2";
    return choice;
  }
  switch (op.kind) {
    case OpKind::kQCast:
    case OpKind::kDCast: {
      choice.why_not = ConvertKernel::why_not(graph, op);
      if (!choice.why_not.empty()) return choice;
      QRT_ASSIGN_OR_RETURN(ConvertKernel k, ConvertKernel::create(graph, op));
      choice.kernel = std::make_unique<ConvertOpKernel>(graph, op, std::move(k));
      return choice;
    }
    case OpKind::kMatmul:
      return select_matmul_kernel(graph, op);
    case OpKind::kConv2d:
      return select_conv_kernel(graph, op);
    default:
      choice.why_not = "no generated kernel for this op";
      return choice;
  }
}

}  // namespace qrt::jit
