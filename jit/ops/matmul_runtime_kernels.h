// qrt — quantized qrt.matmul of two activations (the right-hand side computed at run time),
// batched with broadcasting, on the GEMM micro-kernels (see matmul_runtime_kernels.cpp).
#pragma once

#include <memory>
#include <string>

#include "jit/ops/gemm_kernels.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// The plan-time part of a quantized matmul whose right-hand side is not a constant: fills
/// `spec` (k, n, the requantization, fused clamp and numerics profile; weights at their zero
/// points; a constant bias) and `analysis` (the exact path). "" or why no kernel can run it.
std::string prepare_runtime_weights_matmul(const Graph& graph, const Op& op, GemmSpec& spec, GemmAnalysis& analysis);

/// The kernel of such a matmul on `backend`: per run it packs every right-hand matrix and
/// runs the batch entries' GEMMs.
Result<std::unique_ptr<OpKernel>> make_runtime_weights_matmul(const Graph& graph, const Op& op, const GemmSpec& spec,
                                                               const GemmAnalysis& analysis, const Backend& backend);

}  // namespace qrt::jit
