// qrt — the op table: names, arities, attributes and per-op verification.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace qrt {

/// Static facts about one op kind. One table drives the parser, printer, verifier and docs.
struct OpInfo {
  OpKind kind;                          ///< the kind
  const char* name;                     ///< full name, e.g. "quant.qcast"
  int min_operands;                     ///< fewest operands
  int max_operands;                     ///< most operands
  std::vector<const char*> attributes;  ///< allowed attribute names (others are errors)
  /// Op-specific checks beyond arity and attribute names. Types of operands and results are
  /// already verified on their own when this runs.
  Status (*verify)(const Graph& graph, const Op& op);
  const char* summary;                  ///< one line for --help and docs
  int num_results = 1;                  ///< results the op defines
};

/// The entry for `kind`.
const OpInfo& op_info(OpKind kind);
/// Whether `kind` is a float function of one operand, applied element by element: qrt.sqrt,
/// reciprocal, exp, tanh, erf, gelu, abs, sign, floor, ceil, both roundings, rsqrt, log,
/// log1p, expm1, sin, cos, cbrt, asin ... atanh (not neg, which has an integer form too, nor
/// relu/clamp).
bool is_float_unary_function(OpKind kind);
/// qrt.gather_nd's result dimensions: indices.dims[:-1] + data.dims[batch_dims + k:], k the
/// indices' last dimension (callers check 1 <= k <= rank(data) - batch_dims first).
std::vector<int64_t> gather_nd_result_dims(const std::vector<int64_t>& data, const std::vector<int64_t>& indices,
                                           size_t batch_dims);
/// The entry for the full op name (e.g. "qrt.matmul"), or nullptr.
const OpInfo* find_op(std::string_view name);
/// All entries, in OpKind order.
const std::vector<OpInfo>& all_ops();

/// Numpy-style broadcast of two shapes (-1 = dynamic), or an error naming both shapes.
Result<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b);
/// Row-major element strides of an operand shaped `in` walked over the broadcast shape `out`
/// (0 along the dimensions it broadcasts; `in` aligned to out's trailing dimensions).
std::vector<size_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

/// The result dimensions of a batched matmul of `lhs` [.., M, K] and `rhs` [.., K, N] (both
/// rank >= 2): the broadcast batch dimensions, M and N; an error when the batches do not
/// broadcast. K is not checked.
Result<std::vector<int64_t>> matmul_result_dims(const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs);

/// The dimensions a reduction over the dimensions marked in `reduced` leaves: reduced ones
/// dropped, or kept as 1 with `keepdims`.
std::vector<int64_t> reduction_dims(const std::vector<int64_t>& dims, const std::vector<bool>& reduced, bool keepdims);

/// The scale of the int32 accumulator of a quantized matmul for output channel `n`:
/// s_lhs · s_rhs[n] in double precision.
double accumulator_scale(const ElementType& lhs, const ElementType& rhs, size_t n);

/// The result dimensions of a qrt.reshape to `declared` of `elements` elements: one dynamic
/// dimension takes whatever the element count leaves for it; an error when the count differs.
Result<std::vector<int64_t>> reshape_dims(const Type& declared, int64_t elements);

/// The number of elements ONNX-style slicing [start, end) by `step` takes from a dimension of
/// size `dim` (negative start/end count from the end; out-of-range bounds are clamped).
int64_t slice_extent(int64_t dim, int64_t start, int64_t end, int64_t step);
/// The first index that slice takes (start resolved and clamped like slice_extent's).
int64_t slice_start(int64_t dim, int64_t start, int64_t step);

/// True when two scales agree to the relative tolerance the verifier accepts for bias and
/// accumulator scales (1e-6: float32 products of the same scales pass).
bool scales_match(double a, double b);

/// True when a quantized qrt.matmul / qrt.conv2d / qrt.conv_transpose2d of `lhs` by `rhs`
/// accumulates in int64 (docs/numerics.md, "Wide accumulation"): either operand stores more
/// than 8 bits (TFLite's 16x8 kernels, ONNX's 16-bit QDQ), so the int32 bound of 8-bit
/// operands would refuse every real layer. Its bias may then be a plain i64 tensor; 8-bit
/// products stay int32.
bool accumulates_in_i64(const ElementType& lhs, const ElementType& rhs);

/// A clamp fused into its producer: `clamp_min` / `clamp_max` on qrt.conv2d, qrt.matmul,
/// qrt.add or qrt.mul mean exactly a qrt.clamp {min, max} applied to the op's result.
struct FusedClamp {
  double min = 0.0;  ///< real (expressed) units, like qrt.clamp's
  double max = 0.0;
};

/// The clamp fused into a verified `op`, or nullopt when it has none.
std::optional<FusedClamp> fused_clamp(const Op& op);

}  // namespace qrt
