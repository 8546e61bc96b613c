// qrt — qrt.matmul (quantized, constant 2-D weights) on the AVX2 GEMM kernels.
#include "ir/ops.h"
#include "jit/gemm_kernels.h"
#include "jit/op_kernels.h"
#include "ir/numerics.h"

namespace qrt::jit {

std::string fill_gemm_quantization(const ElementType& x, const ElementType& w, const ElementType& out,
                                   GemmSpec& spec) {
  if (x.kind != ElementKind::kUniform) return "activations are not per-tensor quantized";
  if (!w.is_uniform()) return "weights are not uniformly quantized";
  if (!out.is_uniform()) return "the result is not uniformly quantized";
  if (x.storage.width != 8 || w.storage.width != 8) return "activations and weights must have 8-bit storage";
  const size_t n = size_t(spec.n);
  if (w.num_channels() != 1 && w.num_channels() != n) return "weight channels do not match the output columns";
  if (out.num_channels() != 1 && out.num_channels() != n) return "result channels do not match the output columns";
  spec.a_signed = x.storage.is_signed;
  spec.a_zero_point = int32_t(x.zero_points[0]);
  spec.a_min = int32_t(x.storage.min);
  spec.a_max = int32_t(x.storage.max);
  spec.w_signed = w.storage.is_signed;
  spec.w_zero_point.resize(n);
  auto ch = [](const ElementType& e, size_t j) { return e.num_channels() == 1 ? 0 : j; };
  for (size_t j = 0; j < n; ++j) spec.w_zero_point[j] = int32_t(w.zero_points[ch(w, j)]);
  // The accumulator type stores acc unchanged (docs/numerics.md, qrt.matmul).
  bool accumulator_out = out.storage.width == 32 && out.storage.is_signed;
  for (size_t j = 0; j < n && accumulator_out; ++j) {
    accumulator_out = out.zero_points[ch(out, j)] == 0 &&
                      scales_match(accumulator_scale(x, w, j), out.scales[ch(out, j)]);
  }
  if (accumulator_out) {
    spec.out = OutKind::kS32;
    return "";
  }
  if (out.storage.width != 8) return "requantization to " + std::to_string(out.storage.width) + "-bit storage";
  spec.out = out.storage.is_signed ? OutKind::kS8 : OutKind::kU8;
  spec.out_min = int32_t(out.storage.min);
  spec.out_max = int32_t(out.storage.max);
  spec.multiplier.resize(n);
  spec.out_zero_point.resize(n);
  for (size_t j = 0; j < n; ++j) {
    spec.multiplier[j] = numerics::multiplier(accumulator_scale(x, w, j), out.scales[ch(out, j)]);
    spec.out_zero_point[j] = int32_t(out.zero_points[ch(out, j)]);
  }
  return "";
}

namespace {

class MatmulOpKernel final : public OpKernel {
 public:
  MatmulOpKernel(const Graph& graph, const Op& op, std::unique_ptr<GemmKernel> gemm)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), gemm_(std::move(gemm)) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const Tensor& x = *operands[0];
    const int64_t k = x.type.dims.back();
    if (k != gemm_->packed().k) {
      return Status::error_at(op_.loc, "'qrt.matmul' op contracting dimensions differ at run time: " +
                                           std::to_string(k) + " vs " + std::to_string(gemm_->packed().k));
    }
    std::vector<int64_t> dims = x.type.dims;
    dims.back() = gemm_->packed().n;
    return dims;
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const PackedGemm& p = gemm_->packed();
    const int64_t rows = x.num_elements() / p.k;  // k > 0: empty weights never get a kernel
    gemm_->run(x.bytes(), rows, p.k, out.bytes(), p.n * gemm_->out_bytes(), parallel);
    return Status::ok();
  }

  bool reads_operand(size_t index) const override { return index == 0; }  // weights are prepacked
  std::string describe() const override { return gemm_->name() + " (" + gemm_->packed().path_reason + ")"; }

 private:
  Op op_;
  std::unique_ptr<GemmKernel> gemm_;
};

}  // namespace

Result<KernelChoice> select_matmul_kernel(const Graph& graph, const Op& op) {
  KernelChoice choice;
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& w = graph.values[size_t(op.operands[1])].type;
  const Type& out = graph.values[size_t(op.results[0])].type;
  if (!x.element.is_quant()) return select_float_matmul_kernel(graph, op);  // float and hybrid
  if (!w.element.is_quant()) {
    choice.why_not = "quantized activations with float weights run on the reference";
    return choice;
  }
  std::unique_ptr<Tensor> weights = constant_operand(graph, op.operands[1]);
  if (!weights || w.rank() != 2) {
    choice.why_not = "the weights are not a 2-D constant";
    return choice;
  }
  if (w.element.kind == ElementKind::kUniformPerAxis && w.element.axis != 1) {
    choice.why_not = "per-axis weights must be quantized along N";
    return choice;
  }
  if (out.element.kind == ElementKind::kUniformPerAxis && out.element.axis != int32_t(out.rank()) - 1) {
    choice.why_not = "a per-axis result must be quantized along N";
    return choice;
  }
  GemmSpec spec;
  spec.k = w.dims[0];
  spec.n = w.dims[1];
  if (spec.k == 0 || spec.n == 0) {
    choice.why_not = "empty weights";
    return choice;
  }
  choice.why_not = fill_gemm_quantization(x.element, w.element, out.element, spec);
  if (!choice.why_not.empty()) return choice;
  if (op.operands.size() > 2) {
    std::unique_ptr<Tensor> bias = constant_operand(graph, op.operands[2]);
    if (!bias) {
      choice.why_not = "the bias is not a constant";
      return choice;
    }
    spec.bias.resize(size_t(spec.n));
    for (size_t j = 0; j < spec.bias.size(); ++j) spec.bias[j] = bias->int_at(j);
  }
  spec.w.resize(size_t(spec.k * spec.n));
  for (size_t i = 0; i < spec.w.size(); ++i) spec.w[i] = int32_t(weights->int_at(i));
  auto gemm = GemmKernel::create(spec);
  if (!gemm.is_ok()) {
    if (gemm.status().code() != ErrorCode::kUnsupported) return gemm.status();
    choice.why_not = gemm.status().message();
    return choice;
  }
  choice.kernel = std::make_unique<MatmulOpKernel>(graph, op, std::move(gemm).value());
  return choice;
}

}  // namespace qrt::jit
