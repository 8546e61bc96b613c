// qrt — the per-op kernel choice and the process-wide code cache (see op_kernels.h).
#include "jit/op_kernels.h"

#include <algorithm>

#include "ir/ops.h"
#include "jit/convert_kernels.h"
#include "jit/elementwise_kernels.h"
#include "jit/host_info.h"
#include "jit/pool_kernels.h"
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
      case KernelOp::kQAdd:
      case KernelOp::kQMul:
      case KernelOp::kRequantize:
        return generate_avx2_elementwise(d);
      case KernelOp::kMaxPool:
      case KernelOp::kAvgPool:
        return generate_avx2_pool(d);
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
      : OpKernel(graph.values[size_t(op.results[0])].type), kernel_(std::move(k)) {}
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const size_t n = size_t(out.num_elements());
    const size_t chunk = 64 * 1024, tasks = (n + chunk - 1) / chunk;
    parallel.for_each(tasks, [&](size_t t) { kernel_.run(*operands[0], out, t * chunk, std::min(n, (t + 1) * chunk)); });
    return Status::ok();
  }
  std::string describe() const override { return kernel_.desc().name(); }

 private:
  ConvertKernel kernel_;
};

}  // namespace

namespace {

// The value of `value` when it is computable at plan time: a constant, or an op whose operands
// all are (e.g. the reshape or transpose importers put between a filter and its conv).
std::unique_ptr<Tensor> fold_constant(const Graph& graph, int value, int depth) {
  const int producer = graph.values[size_t(value)].producer;
  if (producer < 0 || depth > 8) return nullptr;
  const Op& op = graph.ops[size_t(producer)];
  if (op.results.size() != 1) return nullptr;
  std::vector<std::unique_ptr<Tensor>> operands;
  std::vector<const Tensor*> ptrs;
  for (int v : op.operands) {
    operands.push_back(fold_constant(graph, v, depth + 1));
    if (!operands.back()) return nullptr;
    ptrs.push_back(operands.back().get());
  }
  auto t = evaluate_op_reference(graph, op, ptrs);
  if (!t.is_ok()) return nullptr;
  return std::make_unique<Tensor>(std::move(t).value());
}

}  // namespace

Result<std::vector<int64_t>> OpKernel::checked_result_dims(const Op& op, std::vector<int64_t> dims) const {
  bool ok = dims.size() == result_type_.dims.size();
  for (size_t d = 0; ok && d < dims.size(); ++d) ok = result_type_.dims[d] < 0 || result_type_.dims[d] == dims[d];
  if (!ok) {
    return Status::error_at(op.loc, std::string("'") + op_info(op.kind).name + "' op computed result shape [" +
                                        dims_to_string(dims) + "] contradicts its type " + result_type_.to_string());
  }
  return dims;
}

Result<Tensor> OpKernel::run(const std::vector<const Tensor*>& operands) const {
  QRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, result_dims(operands));
  Type t = result_type_;
  t.dims = std::move(dims);
  Tensor y = Tensor::zeros(t);
  QRT_RETURN_IF_ERROR(run_into(operands, y, serial()));
  return y;
}

std::unique_ptr<Tensor> constant_operand(const Graph& graph, int value) { return fold_constant(graph, value, 0); }

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
    case OpKind::kAdd:
    case OpKind::kMul:
    case OpKind::kRequantize:
      return select_elementwise_kernel(graph, op);
    case OpKind::kRelu:
    case OpKind::kClamp:
    case OpKind::kPad:
    case OpKind::kTranspose:
    case OpKind::kReshape:
      return select_layout_kernel(graph, op);
    case OpKind::kMaxPool2d:
    case OpKind::kAvgPool2d:
    case OpKind::kMean:
      return select_pool_kernel(graph, op);
    default:
      choice.why_not = "no generated kernel for this op";
      return choice;
  }
}

}  // namespace qrt::jit
