// qrt — what the weight-only and dynamic-i8 matmul kernels share: a 2-D quantized weight's
// parameters per block of K and column in their f32 compute form, the f32 bias, the fused
// clamp's bounds.
#include <cmath>

#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/ops/float_widening.h"
#include "jit/ops/weight_blocks.h"

namespace qrt::jit {

bool weight_blocks(const ElementType& e, int64_t k, int64_t n, WeightBlocks& p, std::string* why) {
  int64_t block = k, col_block = n, param_cols = 1;
  switch (e.kind) {
    case ElementKind::kUniform: break;
    case ElementKind::kUniformPerAxis:
      if (e.axis != 1) {
        *why = "per-axis weights quantized along K (axis 0) have a scale per row";
        return false;
      }
      col_block = 1;
      param_cols = n;
      break;
    case ElementKind::kUniformSubChannel: {
      const int64_t bk = e.block_size_along(0), bn = e.block_size_along(1);
      block = bk > 0 ? bk : k;
      col_block = bn > 0 ? bn : n;
      param_cols = e.param_dims[1];
      break;
    }
    default: *why = "the weights are not !quant.uniform"; return false;
  }
  const int64_t blocks = (k + block - 1) / block;
  p.block = block;
  p.scales.assign(size_t(blocks * n), 0.0f);
  std::vector<int16_t> zps(size_t(blocks * n), 0);
  bool any_zp = false;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t j = 0; j < n; ++j) {
      const size_t src = size_t((e.kind == ElementKind::kUniformSubChannel ? b : 0) * param_cols + j / col_block);
      p.scales[size_t(b * n + j)] = numerics::compute_scale_f32(e.scales[src], e.float_kind);
      zps[size_t(b * n + j)] = int16_t(e.zero_points[src]);
      any_zp = any_zp || e.zero_points[src] != 0;
    }
  }
  if (any_zp) p.zps = std::move(zps);
  return true;
}

bool constant_f32_bias(const Graph& graph, const Op& op, int64_t n, std::vector<float>* bias, std::string* why) {
  bias->clear();
  if (op.operands.size() <= 2) return true;
  std::unique_ptr<Tensor> b = constant_operand(graph, op.operands[2]);
  // f16 and bf16 values widen to f32 exactly, as the reference reads them.
  if (!b || !b->type.element.is_float() || !is_f32_or_narrower(b->type.element.float_kind)) {
    *why = "the bias is not an f32, f16 or bf16 constant";
    return false;
  }
  bias->resize(size_t(n));
  for (int64_t j = 0; j < n; ++j) (*bias)[size_t(j)] = float(b->float_at(size_t(j)));
  return true;
}

HeldWeightsMatmulKernel::HeldWeightsMatmulKernel(const Graph& graph, const Op& op, int64_t k, int64_t n, std::vector<float> bias)
    : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), k_(k), n_(n), bias_(std::move(bias)), lo_(-INFINITY),
      hi_(INFINITY), x_kind_(graph.values[size_t(op.operands[0])].type.element.float_kind),
      y_kind_(result_type_.element.float_kind) {
  if (const std::optional<FusedClamp> c = fused_clamp(op)) {
    lo_ = rounded_to(c->min, y_kind_);
    hi_ = rounded_to(c->max, y_kind_);
  }
}

Result<std::vector<int64_t>> held_weights_result_dims(const Op& op, const Tensor& x, int64_t k, int64_t n) {
  if (x.type.dims.back() != k) {
    return Status::error_at(op.loc, "'qrt.matmul' op contracting dimensions differ at run time: " +
                                        std::to_string(x.type.dims.back()) + " vs " + std::to_string(k));
  }
  std::vector<int64_t> dims = x.type.dims;
  dims.back() = n;
  return dims;
}

Result<std::vector<int64_t>> HeldWeightsMatmulKernel::result_dims(const std::vector<const Tensor*>& operands) const {
  QRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, held_weights_result_dims(op_, *operands[0], k_, n_));
  return checked_result_dims(op_, std::move(dims));
}

}  // namespace qrt::jit
