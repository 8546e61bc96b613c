// qrt — qrt.matmul with f32 activations and constant f32 or quantized (hybrid, weight-only)
// weights: the weights are dequantized once, at plan time, with the dcast formula (the
// StableHLO hybrid semantics of docs/numerics.md), then an AVX2 f32 GEMM that keeps the
// reference's order exactly — every output accumulates acc = acc + f32(x·w) in increasing k
// from +0, separate multiply and add (no FMA), then + bias — eight outputs per register and
// eight independent chains per tile.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "jit/op_kernels.h"
#include "ir/numerics.h"

namespace qrt::jit {

namespace {

constexpr int64_t kRows = 4, kCols = 16;

// Rows [m0, m0 + mr) of y = x · w (+ bias), w padded to a multiple of 16 columns.
__attribute__((target("avx2"))) void gemm_rows(const float* x, const float* w, const float* bias, float* y, int64_t mr,
                                                int64_t k, int64_t n, int64_t n_padded) {
  for (int64_t n0 = 0; n0 < n_padded; n0 += kCols) {
    __m256 acc[kRows][2];
    for (int64_t r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t kk = 0; kk < k; ++kk) {
      const __m256 b0 = _mm256_loadu_ps(w + kk * n_padded + n0), b1 = _mm256_loadu_ps(w + kk * n_padded + n0 + 8);
      for (int64_t r = 0; r < mr; ++r) {
        const __m256 a = _mm256_set1_ps(x[r * k + kk]);
        acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_mul_ps(a, b0));  // one rounding each, k in order
        acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_mul_ps(a, b1));
      }
    }
    for (int64_t r = 0; r < mr; ++r) {
      alignas(32) float out[kCols];
      _mm256_store_ps(out, bias ? _mm256_add_ps(acc[r][0], _mm256_loadu_ps(bias + n0)) : acc[r][0]);
      _mm256_store_ps(out + 8, bias ? _mm256_add_ps(acc[r][1], _mm256_loadu_ps(bias + n0 + 8)) : acc[r][1]);
      std::memcpy(y + r * n + n0, out, size_t(std::min(kCols, n - n0)) * 4);
    }
  }
}

class FloatMatmulOpKernel final : public OpKernel {
 public:
  FloatMatmulOpKernel(const Graph& graph, const Op& op, int64_t k, int64_t n, std::vector<float> w,
                      std::vector<float> bias, bool hybrid)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), k_(k), n_(n),
        n_padded_((n + kCols - 1) / kCols * kCols), w_(std::move(w)), bias_(std::move(bias)), hybrid_(hybrid) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const Tensor& x = *operands[0];
    if (x.type.dims.back() != k_) {
      return Status::error_at(op_.loc, "'qrt.matmul' op contracting dimensions differ at run time: " +
                                           std::to_string(x.type.dims.back()) + " vs " + std::to_string(k_));
    }
    std::vector<int64_t> dims = x.type.dims;
    dims.back() = n_;
    return checked_result_dims(op_, std::move(dims));
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const float* x = reinterpret_cast<const float*>(operands[0]->bytes());
    float* out = reinterpret_cast<float*>(y.bytes());
    const int64_t rows = operands[0]->num_elements() / k_;
    const int64_t tasks = (rows + kRows - 1) / kRows;
    parallel.for_each(size_t(tasks), [&](size_t t) {
      const int64_t m0 = int64_t(t) * kRows;
      gemm_rows(x + m0 * k_, w_.data(), bias_.empty() ? nullptr : bias_.data(), out + m0 * n_,
                std::min(kRows, rows - m0), k_, n_, n_padded_);
    });
    return Status::ok();
  }

  bool reads_operand(size_t index) const override { return index == 0; }  // weights prepared once
  std::string describe() const override {
    return std::string(hybrid_ ? "f32_qc8w_f32_gemm" : "f32_f32_f32_gemm") + "_4x16__avx2 (k-ordered f32 sums, no FMA" +
           (hybrid_ ? "; weights dequantized once" : "") + ")";
  }

 private:
  Op op_;
  int64_t k_, n_, n_padded_;
  std::vector<float> w_, bias_;  // w_: k × n_padded, padding 0
  bool hybrid_;
};

}  // namespace

Result<KernelChoice> select_float_matmul_kernel(const Graph& graph, const Op& op) {
  KernelChoice choice;
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& wt = graph.values[size_t(op.operands[1])].type;
  const Type& out = graph.values[size_t(op.results[0])].type;
  if (x.element.float_kind != FloatKind::kF32 || !x.element.is_float() || !out.element.is_float() ||
      out.element.float_kind != FloatKind::kF32) {
    choice.why_not = "only f32 activations and results have a float GEMM kernel";
    return choice;
  }
  const bool hybrid = wt.element.is_uniform();
  if (!(wt.element.is_float() && wt.element.float_kind == FloatKind::kF32) &&
      !(hybrid && wt.element.float_kind == FloatKind::kF32)) {
    choice.why_not = "weights must be f32 or quantized with f32 expressed type";
    return choice;
  }
  std::unique_ptr<Tensor> w = constant_operand(graph, op.operands[1]);
  if (!w || wt.rank() != 2 || wt.dims[0] <= 0 || wt.dims[1] <= 0) {
    choice.why_not = "the weights are not a non-empty 2-D constant";
    return choice;
  }
  const int64_t k = wt.dims[0], n = wt.dims[1], n_padded = (n + kCols - 1) / kCols * kCols;
  std::vector<float> wf(size_t(k * n_padded), 0.0f);
  const ElementType& e = wt.element;
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t j = 0; j < n; ++j) {
      const size_t i = size_t(kk * n + j);
      float v;
      if (hybrid) {  // the dcast formula, as the reference's hybrid matmul applies it
        const size_t c = e.kind == ElementKind::kUniformPerAxis ? size_t(e.axis == 0 ? kk : j) : 0;
        v = numerics::dequantize_f32(w->int_at(i), e.zero_points[c], numerics::compute_scale_f32(e.scales[c], e.float_kind));
      } else {
        v = float(w->float_at(i));
      }
      wf[size_t(kk * n_padded + j)] = v;
    }
  }
  std::vector<float> bias;
  if (op.operands.size() > 2) {
    std::unique_ptr<Tensor> b = constant_operand(graph, op.operands[2]);
    if (!b || !b->type.element.is_float() || b->type.element.float_kind != FloatKind::kF32) {
      choice.why_not = "the bias is not an f32 constant";
      return choice;
    }
    bias.assign(size_t(n_padded), 0.0f);
    for (int64_t j = 0; j < n; ++j) bias[size_t(j)] = float(b->float_at(size_t(j)));
  }
  choice.kernel = std::make_unique<FloatMatmulOpKernel>(graph, op, k, n, std::move(wf), std::move(bias), hybrid);
  return choice;
}

}  // namespace qrt::jit
