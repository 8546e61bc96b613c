// qrt — quantized qrt.matmul on the GEMM micro-kernels: constant 2-D weights packed once, or a
// right-hand side computed at run time packed per run (matmul_runtime_kernels.cpp).
#include "ir/ops.h"
#include "jit/ops/gemm_kernels.h"
#include "jit/ops/matmul_runtime_kernels.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

namespace {

class MatmulOpKernel final : public SinkableKernel {
 public:
  MatmulOpKernel(const Graph& graph, const Op& op, std::unique_ptr<GemmKernel> gemm)
      : SinkableKernel(graph.values[size_t(op.results[0])].type), op_(op), gemm_(std::move(gemm)) {}

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

  bool takes_sink() const override { return gemm_->packed().out == OutKind::kS32; }

  bool reads_operand(size_t index) const override { return index == 0; }  // weights are prepacked
  bool holds_operand_copy(size_t index) const override { return index != 0; }
  std::string describe() const override { return gemm_->name() + " (" + gemm_->packed().path_reason + ")"; }
  size_t owned_bytes() const override { return gemm_->owned_bytes(); }

 protected:
  Status run_with_sink(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel,
                       const AccumulatorSink* sink) const override {
    const Tensor& x = *operands[0];
    const PackedGemm& p = gemm_->packed();
    const int64_t rows = x.num_elements() / p.k;  // k > 0: empty weights never get a kernel
    gemm_->run(x.bytes(), rows, p.k, out.bytes(), p.n * gemm_->out_bytes(), parallel, sink);
    return Status::ok();
  }

 private:
  Op op_;
  std::unique_ptr<GemmKernel> gemm_;
};

struct PreparedMatmul final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  GemmSpec spec;
  GemmAnalysis analysis;
  bool runtime_weights = false;  // the right-hand side is computed at run time
};

class QGemmMatmulFamily final : public OpFamily {
 public:
  const char* name() const override { return "qgemm"; }
  KernelOp kind() const override { return KernelOp::kGemm; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const Type& x = graph.values[size_t(op.operands[0])].type;
    const Type& w = graph.values[size_t(op.operands[1])].type;
    const Type& out = graph.values[size_t(op.results[0])].type;
    if (!x.element.is_quant()) return refuse(why_not, "float activations take the f32 GEMM");
    if (!w.element.is_quant()) return refuse(why_not, "quantized activations with float weights run on the reference");
    std::unique_ptr<Tensor> weights = constant_operand(graph, op.operands[1]);
    if (!weights || w.rank() != 2) {
      auto p = std::make_unique<PreparedMatmul>();
      p->graph = &graph;
      p->op = &op;
      p->runtime_weights = true;
      if (std::string why = prepare_runtime_weights_matmul(graph, op, p->spec, p->analysis); !why.empty()) {
        return refuse(why_not, why);
      }
      return std::unique_ptr<PreparedOp>(std::move(p));
    }
    if (w.element.kind == ElementKind::kUniformPerAxis && w.element.axis != 1) {
      return refuse(why_not, "per-axis weights must be quantized along N");
    }
    if (out.element.kind == ElementKind::kUniformPerAxis && out.element.axis != int32_t(out.rank()) - 1) {
      return refuse(why_not, "a per-axis result must be quantized along N");
    }
    auto p = std::make_unique<PreparedMatmul>();
    p->graph = &graph;
    p->op = &op;
    GemmSpec& spec = p->spec;
    spec.k = w.dims[0];
    spec.n = w.dims[1];
    if (spec.k == 0 || spec.n == 0) return refuse(why_not, "empty weights");
    if (std::string why = fill_channel_quant(x.element, w.element, out.element, size_t(spec.n), spec); !why.empty()) {
      return refuse(why_not, why);
    }
    if (std::string why = apply_fused_clamp(op, out.element, spec); !why.empty()) return refuse(why_not, why);
    if (std::string why = apply_numerics_profile(graph, x.element, w.element, out.element, spec); !why.empty()) {
      return refuse(why_not, why);
    }
    if (op.operands.size() > 2) {
      std::unique_ptr<Tensor> bias = constant_operand(graph, op.operands[2]);
      if (!bias) return refuse(why_not, "the bias is not a constant");
      spec.bias.resize(size_t(spec.n));
      for (size_t j = 0; j < spec.bias.size(); ++j) spec.bias[j] = bias->int_at(j);
    }
    spec.w = weights->int32_values();
    p->analysis = analyze_gemm(spec);
    if (!p->analysis.why_not.empty()) return refuse(why_not, p->analysis.why_not);
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    std::string why;
    choose_gemm_path(static_cast<const PreparedMatmul&>(prepared).analysis, *backend, &why);
    return why;
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedMatmul&>(prepared);
    if (p.runtime_weights) return make_runtime_weights_matmul(*p.graph, *p.op, p.spec, p.analysis, *backend);
    QRT_ASSIGN_OR_RETURN(std::unique_ptr<GemmKernel> gemm, GemmKernel::create(p.spec, p.analysis, *backend));
    return std::unique_ptr<OpKernel>(std::make_unique<MatmulOpKernel>(*p.graph, *p.op, std::move(gemm)));
  }
};

}  // namespace

const OpFamily& qgemm_matmul_family() {
  static const QGemmMatmulFamily family;
  return family;
}

}  // namespace qrt::jit
