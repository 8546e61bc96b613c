// qrt — quantized qrt.matmul whose right-hand side is computed at run time (both operands
// activations: attention's Q·Kᵀ and P·V in QOperator models, StableHLO's dot_general of two
// quantized values), batched with broadcast batch dimensions, on the GEMM micro-kernels.
//
// Per run, every right-hand matrix is packed for the plan's backend like constant weights (its
// column sums folded into the bias) on the exact path the plan chose, with the plan's tiles
// (GemmKernel::with_weights); then the batch entries' GEMMs run, side by side where there are
// enough of them. Packing is O(K·N) per matrix against O(M·K·N) products. The verifier bounds
// K·max|a - za|·max|w - zw| by int32, so every sum is exact, as with constant weights: the
// bytes are the reference's.
#include "jit/ops/matmul_runtime_kernels.h"

#include <functional>
#include <numeric>

#include "ir/ops.h"
#include "jit/ops/batch_matrices.h"

namespace qrt::jit {

namespace {

class RuntimeWeightsMatmulKernel final : public OpKernel {
 public:
  RuntimeWeightsMatmulKernel(const Graph& graph, const Op& op, GemmSpec spec, GemmAnalysis analysis,
                             std::unique_ptr<GemmKernel> plan_gemm)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), spec_(std::move(spec)), analysis_(std::move(analysis)),
        plan_gemm_(std::move(plan_gemm)) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const auto &a = operands[0]->type.dims, &b = operands[1]->type.dims;
    if (a.back() != spec_.k || b[b.size() - 2] != spec_.k || b.back() != spec_.n) {
      return Status::error_at(op_.loc, "'qrt.matmul' op operands are [" + dims_to_string(a) + "] x [" + dims_to_string(b) +
                                           "] at run time; the plan's kernel multiplies K = " + std::to_string(spec_.k) +
                                           " by N = " + std::to_string(spec_.n));
    }
    auto dims = matmul_result_dims(a, b);
    if (!dims.is_ok()) return Status::error_at(op_.loc, "'qrt.matmul' op " + dims.status().message());
    return checked_result_dims(op_, std::move(dims).value());
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor &x = *operands[0], &w = *operands[1];
    const auto &ad = x.type.dims, &bd = w.type.dims;
    const int64_t m = ad[ad.size() - 2], k = spec_.k, n = spec_.n;
    const std::vector<int64_t> a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2);
    const std::vector<int64_t> batch(y.type.dims.begin(), y.type.dims.end() - 2);
    const int64_t entries = std::accumulate(batch.begin(), batch.end(), int64_t(1), std::multiplies<>());
    const int64_t b_mats = std::accumulate(b_batch.begin(), b_batch.end(), int64_t(1), std::multiplies<>());
    if (entries == 0 || m == 0) return Status::ok();
    const GemmSpec& spec = spec_;
    // Every right-hand matrix packed once, side by side.
    std::vector<std::unique_ptr<GemmKernel>> gemms(static_cast<size_t>(b_mats));
    std::vector<Status> failures(static_cast<size_t>(b_mats), Status::ok());
    const bool w_signed = w.type.element.storage.is_signed;
    parallel.for_each(size_t(b_mats), [&](size_t b) {
      GemmSpec mine = spec;
      const uint8_t* bytes = w.bytes() + b * size_t(k * n);
      mine.w.resize(size_t(k * n));
      for (size_t i = 0; i < mine.w.size(); ++i) mine.w[i] = w_signed ? int32_t(int8_t(bytes[i])) : int32_t(bytes[i]);
      // The plan's analysis holds for any values (the exact path; the int32 bound is the
      // verifier's), so the plan's tiles serve every run.
      auto made = plan_gemm_->with_weights(mine, analysis_);
      if (!made.is_ok()) {
        failures[b] = made.status();
        return;
      }
      gemms[b] = std::move(made).value();
    });
    for (const Status& s : failures) QRT_RETURN_IF_ERROR(s);
    const int64_t ob = plan_gemm_->out_bytes();
    if (b_mats == 1) {
      // One right-hand matrix: every left-hand row of every batch entry in one GEMM, in order
      // (a broadcast lhs batch is repeated per entry).
      if (batch_strides(a_batch, batch) == batch_strides(batch, batch)) {
        gemms[0]->run(x.bytes(), entries * m, k, y.bytes(), n * ob, parallel);
        return Status::ok();
      }
    }
    const BatchMatrices mats = batch_matrices(a_batch, b_batch, batch);
    auto entry = [&](int64_t e, Parallel& par) {
      gemms[size_t(mats.b[size_t(e)])]->run(x.bytes() + mats.a[size_t(e)] * m * k, m, k, y.bytes() + e * m * n * ob, n * ob,
                                           par);
    };
    // Entries side by side when there are enough to share out, else each over the threads.
    if (entries >= int64_t(parallel.threads())) {
      parallel.for_each(size_t(entries), [&](size_t e) { entry(int64_t(e), serial()); });
    } else {
      for (int64_t e = 0; e < entries; ++e) entry(e, parallel);
    }
    return Status::ok();
  }

  std::string describe() const override {
    return plan_gemm_->name() + " (right-hand side packed per run: both operands activations)";
  }

 private:
  Op op_;
  GemmSpec spec_;                          // quantization, clamp and profile; weights and bias per run
  GemmAnalysis analysis_;                  // the exact path, proven from the types
  std::unique_ptr<GemmKernel> plan_gemm_;  // the tiles, made at plan time for the exact path
};

}  // namespace

std::string prepare_runtime_weights_matmul(const Graph& graph, const Op& op, GemmSpec& spec, GemmAnalysis& analysis) {
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& w = graph.values[size_t(op.operands[1])].type;
  const Type& out = graph.values[size_t(op.results[0])].type;
  if (!x.has_static_shape() || !w.has_static_shape()) return "a matmul of two activations needs static shapes";
  if (w.element.kind == ElementKind::kUniformPerAxis && w.element.axis != int32_t(w.rank()) - 1) {
    return "per-axis right-hand values must be quantized along N";
  }
  if (out.element.kind == ElementKind::kUniformPerAxis && out.element.axis != int32_t(out.rank()) - 1) {
    return "a per-axis result must be quantized along N";
  }
  spec.k = w.dims[w.rank() - 2];
  spec.n = w.dims[w.rank() - 1];
  if (spec.k == 0 || spec.n == 0) return "empty right-hand side";
  if (std::string why = fill_channel_quant(x.element, w.element, out.element, size_t(spec.n), spec); !why.empty()) {
    return why;
  }
  if (std::string why = apply_fused_clamp(op, out.element, spec); !why.empty()) return why;
  if (std::string why = apply_numerics_profile(graph, x.element, w.element, out.element, spec); !why.empty()) return why;
  // The verifier bounds the sums by int32; a bias must not take them beyond it for any values
  // (the reference would refuse such a run, the kernels wrap).
  if (op.operands.size() > 2) {
    std::unique_ptr<Tensor> bias = constant_operand(graph, op.operands[2]);
    if (!bias) return "the bias is not a constant";
    const int64_t a_dev = activation_deviation(spec);
    for (int64_t j = 0; j < spec.n; ++j) {
      const int64_t zw = spec.w_zero_point[size_t(j)];
      const int64_t w_dev = std::max(std::llabs(w.element.storage.min - zw), std::llabs(w.element.storage.max - zw));
      spec.bias.push_back(bias->int_at(size_t(j)));
      const int64_t bound = std::llabs(spec.bias.back()) + spec.k * a_dev * w_dev;
      if (std::string why = int32_bound_why_not(j, bound); !why.empty()) return why;
    }
  }
  // The plan's tiles: weights at their zero points (nothing to sum), the exact path (the
  // pair-sum path needs the run's values; where they allow it, with_weights makes its tiles).
  spec.w.clear();
  for (int64_t kk = 0; kk < spec.k; ++kk) {
    for (int64_t j = 0; j < spec.n; ++j) spec.w.push_back(spec.w_zero_point[size_t(j)]);
  }
  analysis = analyze_gemm(spec);
  analysis.pair_sum_exact = false;
  analysis.path_reason = "exact for every input";
  return analysis.why_not;
}

Result<std::unique_ptr<OpKernel>> make_runtime_weights_matmul(const Graph& graph, const Op& op, const GemmSpec& spec,
                                                               const GemmAnalysis& analysis, const Backend& backend) {
  QRT_ASSIGN_OR_RETURN(std::unique_ptr<GemmKernel> gemm, GemmKernel::create(spec, analysis, backend));
  GemmSpec quant = spec;
  quant.w.clear();  // each run's values take their place
  return std::unique_ptr<OpKernel>(
      std::make_unique<RuntimeWeightsMatmulKernel>(graph, op, std::move(quant), analysis, std::move(gemm)));
}

}  // namespace qrt::jit
