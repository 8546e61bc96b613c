// qrt — qrt.matmul with f32 activations and constant f32 or quantized (hybrid, weight-only)
// weights (bf16 and f16 operands widened to f32 exactly, results rounded once: float_widening.h): the weights are dequantized once, at plan time, with the dcast formula (the
// StableHLO hybrid semantics of docs/numerics.md), then the f32 GEMM micro-kernel of the
// chosen level, which keeps the reference's order exactly — every output accumulates
// acc = acc + f32(x·w) in increasing k from +0, separate multiply and add (no FMA), then
// + bias, then a fused clamp — in row blocks (float_gemm_tasks.h). Batched f32 matmuls of two activations (attention's Q·Kᵀ and
// P·V) pack each right-hand matrix at run time and run the same micro-kernel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/ops/batch_matrices.h"
#include "jit/ops/float_gemm_tasks.h"
#include "jit/ops/float_widening.h"
#include "jit/ops/op_kernel.h"
#include "jit/ops/weight_blocks.h"

namespace qrt::jit {

namespace {

constexpr int64_t kRows = 48;  // batched: rows per task, a multiple of every native tile's rows

class FloatMatmulOpKernel final : public OpKernel {
 public:
  FloatMatmulOpKernel(const Graph& graph, const Op& op, int64_t k, int64_t n, std::vector<float> w,
                      std::vector<float> bias, unsigned hybrid, KernelDesc desc, std::shared_ptr<const CompiledKernel> code)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), k_(k), n_(n),
        n_padded_(f32_padded_cols(n)), w_(std::move(w)), bias_(std::move(bias)), hybrid_(hybrid),
        desc_(desc), code_(std::move(code)) {
    if (const std::optional<FusedClamp> c = fused_clamp(op)) {  // qrt.clamp's bounds, rounded to the result type
      lo_ = rounded_to(c->min, result_type_.element.float_kind);
      hi_ = rounded_to(c->max, result_type_.element.float_kind);
    }
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    QRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, held_weights_result_dims(op_, *operands[0], k_, n_));
    return checked_result_dims(op_, std::move(dims));
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    thread_local std::vector<float> wide_x, wide_y;
    const float* x = f32_elements(*operands[0], wide_x);
    float* out = f32_destination(y, wide_y);
    const int64_t rows = operands[0]->num_elements() / k_;
    for_each_f32_row_block(parallel, rows, k_, n_, [&](int64_t m0, int64_t count) {
      const F32GemmArgs args{x + m0 * k_, w_.data(), bias_.empty() ? nullptr : bias_.data(), out + m0 * n_, count, k_, n_,
                             n_padded_, k_, n_, lo_, hi_};
      call_microkernel(code_->entry(), args, desc_);
    });
    store_f32_results(y, wide_y);
    release_large(wide_x);
    release_large(wide_y);
    return Status::ok();
  }

  bool reads_operand(size_t index) const override { return index == 0; }  // weights prepared once
  bool holds_operand_copy(size_t index) const override { return index != 0; }
  std::string describe() const override {
    // The contract name says what the weights are: qc8w (quantized, dequantized once) or f32.
    std::string name = desc_.name();
    if (hybrid_) name.replace(0, std::string("f32_f32_f32").size(), "f32_qc" + std::to_string(hybrid_) + "w_f32");
    return name + " (" + widening_note(result_type_.element.float_kind) + "k-ordered f32 sums, no FMA" +
           (hybrid_ ? "; weights dequantized once" : "") + ")";
  }
  size_t owned_bytes() const override { return (w_.size() + bias_.size()) * sizeof(float); }

 private:
  Op op_;
  int64_t k_, n_, n_padded_;
  std::vector<float> w_, bias_;  // w_: k × n_padded in 16-column panels (f32_panel_index), padding 0
  float lo_ = -INFINITY, hi_ = INFINITY;  // a fused clamp's bounds
  unsigned hybrid_;  // the weights' storage bits; 0: f32 weights
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
};

// lhs [.., M, K] x rhs [.., K, N] with broadcast batch dimensions, both f32 activations: every
// right-hand matrix is packed into the micro-kernel's 16-column panels per run (an
// O(K·N) copy against O(M·K·N) work), then row tiles of every batch entry run in parallel.
class BatchedFloatMatmulOpKernel final : public OpKernel {
 public:
  BatchedFloatMatmulOpKernel(const Graph& graph, const Op& op, std::vector<float> bias, KernelDesc desc,
                             std::shared_ptr<const CompiledKernel> code)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), bias_(std::move(bias)), desc_(desc),
        code_(std::move(code)) {
    if (const std::optional<FusedClamp> c = fused_clamp(op)) {  // qrt.clamp's bounds, rounded to the result type
      lo_ = rounded_to(c->min, result_type_.element.float_kind);
      hi_ = rounded_to(c->max, result_type_.element.float_kind);
    }
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const auto &a = operands[0]->type.dims, &b = operands[1]->type.dims;
    if (a.back() != b[b.size() - 2]) {
      return Status::error_at(op_.loc, "'qrt.matmul' op contracting dimensions differ at run time: " +
                                           std::to_string(a.back()) + " vs " + std::to_string(b[b.size() - 2]));
    }
    auto dims = matmul_result_dims(a, b);
    if (!dims.is_ok()) return Status::error_at(op_.loc, "'qrt.matmul' op " + dims.status().message());
    return checked_result_dims(op_, std::move(dims).value());
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const auto &ad = operands[0]->type.dims, &bd = operands[1]->type.dims;
    const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back(), n_padded = f32_padded_cols(n);
    const std::vector<int64_t> a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2);
    const std::vector<int64_t> out_dims = y.type.dims, batch(out_dims.begin(), out_dims.end() - 2);
    const int64_t entries = std::accumulate(batch.begin(), batch.end(), int64_t(1), std::multiplies<>());
    const int64_t b_mats = std::accumulate(b_batch.begin(), b_batch.end(), int64_t(1), std::multiplies<>());
    if (entries == 0 || m == 0 || n == 0) return Status::ok();
    if (!bias_.empty() && int64_t(bias_.size()) != n) {
      return Status::error_at(op_.loc, "'qrt.matmul' op has " + std::to_string(n) + " columns at run time for a bias of " +
                                           std::to_string(bias_.size()));
    }
    thread_local std::vector<float> wide_x, wide_w, wide_y;
    const float* x = f32_elements(*operands[0], wide_x);
    const float* w = f32_elements(*operands[1], wide_w);
    float* out = f32_destination(y, wide_y);
    // Each right-hand matrix once, in 16-column panels padded with zeros.
    std::vector<float> packed(size_t(b_mats * k * n_padded), 0.0f);
    parallel.for_each(size_t(b_mats), [&](size_t b) {
      float* dst = packed.data() + b * size_t(k * n_padded);  // (no element to name when k = 0)
      for (int64_t kk = 0; kk < k; ++kk) {
        const float* src = w + (int64_t(b) * k + kk) * n;
        for (int64_t j0 = 0; j0 < n; j0 += kF32PanelCols) {
          std::memcpy(dst + f32_panel_index(kk, j0, k), src + j0, size_t(std::min(kF32PanelCols, n - j0)) * sizeof(float));
        }
      }
    });
    // The bias padded to the panels' width, as the micro-kernel reads it.
    std::vector<float> bias;
    if (!bias_.empty()) {
      bias.assign(size_t(n_padded), 0.0f);
      std::copy(bias_.begin(), bias_.begin() + n, bias.begin());
    }
    // Matrix offsets of every batch entry.
    const BatchMatrices mats = batch_matrices(a_batch, b_batch, batch);
    const std::vector<int64_t>&a_mat = mats.a, &b_mat = mats.b;
    const int64_t tiles = (m + kRows - 1) / kRows;
    parallel.for_each(size_t(entries * tiles), [&](size_t t) {
      const int64_t e = int64_t(t) / tiles, m0 = int64_t(t) % tiles * kRows;
      const F32GemmArgs args{x + (a_mat[size_t(e)] * m + m0) * k, packed.data() + size_t(b_mat[size_t(e)] * k * n_padded),
                             bias.empty() ? nullptr : bias.data(), out + (e * m + m0) * n, std::min(kRows, m - m0), k, n,
                             n_padded, k, n, lo_, hi_};
      call_microkernel(code_->entry(), args, desc_);
    });
    store_f32_results(y, wide_y);
    for (std::vector<float>* wide : {&wide_x, &wide_w, &wide_y}) release_large(*wide);
    return Status::ok();
  }

  std::string describe() const override {
    return desc_.name() + " (batched, both operands activations; " + widening_note(result_type_.element.float_kind) +
           "k-ordered f32 sums, no FMA" +
           (bias_.empty() ? "" : "; bias added after the sum") + ")";
  }
  bool reads_operand(size_t index) const override { return index < 2; }  // the bias prepared once
  bool holds_operand_copy(size_t index) const override { return index == 2; }
  size_t owned_bytes() const override { return bias_.size() * sizeof(float); }

 private:
  Op op_;
  std::vector<float> bias_;  // a constant bias (empty: none)
  float lo_ = -INFINITY, hi_ = INFINITY;  // a fused clamp's bounds
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
};

struct PreparedF32Matmul final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  int64_t k = 0, n = 0;
  std::vector<float> w, bias;
  unsigned hybrid = 0;  // the weights' storage bits; 0: f32 weights
  bool batched = false;  // two f32 activations (no constant weights to prepare)
};

class F32MatmulFamily final : public OpFamily {
 public:
  const char* name() const override { return "f32gemm"; }
  KernelOp kind() const override { return KernelOp::kF32Gemm; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const Type& x = graph.values[size_t(op.operands[0])].type;
    const Type& wt = graph.values[size_t(op.operands[1])].type;
    const Type& out = graph.values[size_t(op.results[0])].type;
    const FloatKind kind = x.element.float_kind;  // the verifier ties weights, bias and result to it
    if (!x.element.is_float() || !is_f32_or_narrower(kind) || !out.element.is_float() || out.element.float_kind != kind) {
      return refuse(why_not, "only f32, bf16 and f16 activations and results have a float GEMM kernel");
    }
    const bool hybrid = wt.element.is_uniform();
    if (!(wt.element.is_float() || hybrid) || wt.element.float_kind != kind) {
      return refuse(why_not, "weights must be floats of the activations' type or quantized with it as expressed type");
    }
    std::unique_ptr<Tensor> w = constant_operand(graph, op.operands[1]);
    if (!w || wt.rank() != 2 || wt.dims[0] <= 0 || wt.dims[1] <= 0) {
      if (hybrid) return refuse(why_not, "hybrid weights must be a non-empty 2-D constant");
      if (x.rank() < 2 || wt.rank() < 2) return refuse(why_not, "a batched f32 matmul needs operands of rank >= 2");
      auto p = std::make_unique<PreparedF32Matmul>();
      if (op.operands.size() > 2) {
        // A bias along the last result axis, added after each sum (the reference's order).
        std::unique_ptr<Tensor> b = constant_operand(graph, op.operands[2]);
        if (!b || !b->type.element.is_float() || b->type.element.float_kind != kind || b->type.rank() != 1) {
          return refuse(why_not, "the bias of a batched float matmul is not a 1-D constant of the activations' type");
        }
        for (int64_t j = 0; j < b->num_elements(); ++j) p->bias.push_back(float(b->float_at(size_t(j))));
      }
      p->graph = &graph;
      p->op = &op;
      p->batched = true;
      return std::unique_ptr<PreparedOp>(std::move(p));
    }
    auto p = std::make_unique<PreparedF32Matmul>();
    const int64_t k = wt.dims[0], n = wt.dims[1], n_padded = f32_padded_cols(n);
    std::vector<float>& wf = p->w;
    wf.assign(size_t(k * n_padded), 0.0f);
    const ElementType& e = wt.element;
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t j = 0; j < n; ++j) {
        const size_t i = size_t(kk * n + j);
        float v;
        if (hybrid) {  // the dcast formula, as the reference's hybrid matmul applies it (rounded to bf16/f16)
          const size_t c = e.kind == ElementKind::kUniformPerAxis ? size_t(e.axis == 0 ? kk : j) : 0;
          v = numerics::dequantize_f32(w->int_at(i), e.zero_points[c], numerics::compute_scale_f32(e.scales[c], e.float_kind));
          v = rounded_to(double(v), kind);
        } else {
          v = float(w->float_at(i));
        }
        wf[f32_panel_index(kk, j, k)] = v;
      }
    }
    std::vector<float>& bias = p->bias;
    if (op.operands.size() > 2) {
      std::unique_ptr<Tensor> b = constant_operand(graph, op.operands[2]);
      if (!b || !b->type.element.is_float() || b->type.element.float_kind != kind) {
        return refuse(why_not, "the bias is not a constant of the activations' type");
      }
      bias.assign(size_t(n_padded), 0.0f);
      for (int64_t j = 0; j < n; ++j) bias[size_t(j)] = float(b->float_at(size_t(j)));
    }
    p->graph = &graph;
    p->op = &op;
    p->k = k;
    p->n = n;
    p->hybrid = hybrid ? wt.element.storage.width : 0;
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp&, const Backend* backend) const override {
    return backend->why_not(f32_gemm_desc(backend->isa(), backend->generator()));
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedF32Matmul&>(prepared);
    const KernelDesc d = f32_gemm_desc(backend->isa(), backend->generator());
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
    if (p.batched) return std::unique_ptr<OpKernel>(std::make_unique<BatchedFloatMatmulOpKernel>(*p.graph, *p.op, p.bias, d, std::move(code)));
    return std::unique_ptr<OpKernel>(
        std::make_unique<FloatMatmulOpKernel>(*p.graph, *p.op, p.k, p.n, p.w, p.bias, p.hybrid, d, std::move(code)));
  }
};

}  // namespace

const OpFamily& f32_matmul_family() {
  static const F32MatmulFamily family;
  return family;
}

}  // namespace qrt::jit
