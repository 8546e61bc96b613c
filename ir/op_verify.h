// qrt — internal: helpers shared by the op verifiers (ops.cpp, ops_nn.cpp).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/ops.h"

namespace qrt::op_verify {

/// `'<op name>' op <message>`, located at the op.
Status op_error(const Op& op, const std::string& message);
/// Type of operand `i`.
const Type& operand_type(const Graph& g, const Op& op, size_t i);
/// Type of result `i`.
const Type& result_type(const Graph& g, const Op& op, size_t i = 0);
/// Dimensions agree when equal or either is dynamic (-1).
bool dims_compatible(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
/// The seed's SameScalarOrTensorShape trait.
Status check_same_shape(const Op& op, const Type& in, const Type& out);
/// The result's dimensions must be compatible with `expected`.
Status check_shape_equals(const Op& op, const std::vector<int64_t>& expected, const Type& out);

/// Checks operand 2 of a matmul/conv as the bias for `n_dim` output channels: float of the
/// lhs type for float/hybrid ops; for quantized ops i32 !quant.uniform, zero point 0, scale
/// s_lhs · s_rhs[c] per channel, or (operands that accumulate in int64: accumulates_in_i64)
/// a plain i64 tensor of accumulator units.
Status verify_bias(const Graph& g, const Op& op, const Type& lhs, const Type& rhs, int64_t n_dim);

/// Refuses quantized products whose accumulator (int32; int64 for operands wider than 8 bits)
/// could overflow for K terms
/// (K < 0: unknown, checked at run time).
Status check_accumulator_bound(const Op& op, const ElementType& lhs, const ElementType& rhs,
                               int64_t k);

/// Integer-array attribute `name` of exactly `size` entries (any size when size < 0), or
/// `fallback` when absent. Errors name the attribute and what was found.
Result<std::vector<int64_t>> int_array_attr(const Op& op, const char* name, int size,
                                            std::vector<int64_t> fallback);
/// Integer attribute `name`, or `fallback` when absent.
Result<int64_t> int_attr(const Op& op, const char* name, int64_t fallback);
/// String attribute `name` that must be one of `allowed`, or `fallback` when absent.
Result<std::string> string_attr(const Op& op, const char* name, std::vector<std::string> allowed,
                                std::string fallback);

/// Verifiers of the neural-network ops (ops_nn.cpp).
Status verify_conv2d(const Graph& g, const Op& op);
Status verify_conv_transpose2d(const Graph& g, const Op& op);
Status verify_pool2d(const Graph& g, const Op& op);
Status verify_transpose(const Graph& g, const Op& op);
Status verify_concat(const Graph& g, const Op& op);
Status verify_pad(const Graph& g, const Op& op);
Status verify_softmax_logistic(const Graph& g, const Op& op);
Status verify_mean(const Graph& g, const Op& op);
Status verify_dynamic_quantize(const Graph& g, const Op& op);

/// Verifiers of the quantization instrumentation ops (ops_quant.cpp).
Status verify_stats(const Graph& g, const Op& op);
Status verify_fake_quant(const Graph& g, const Op& op);

/// The op-table entries of the math ops (ops_math.cpp), in OpKind order from kSub.
std::vector<OpInfo> math_op_entries();
/// The argmax / argmin entries (ops_math.cpp), after qrt.conv_transpose2d.
std::vector<OpInfo> arg_reduce_op_entries();
/// The gather_elements entry (ops_math.cpp), after qrt.argmin.
std::vector<OpInfo> gather_elements_op_entries();
/// The reduce_min / reduce_prod entries (ops_math.cpp), after qrt.gather_elements.
std::vector<OpInfo> reduce_min_prod_op_entries();
/// The cumsum / mod entries (ops_math.cpp), after qrt.reduce_prod.
std::vector<OpInfo> cumsum_mod_op_entries();
/// The topk, scatter_nd and gather_nd entries (ops_math.cpp), after qrt.mod.
std::vector<OpInfo> topk_op_entries();
/// The asin ... atanh entries (ops_math.cpp), after qrt.gather_nd.
std::vector<OpInfo> inverse_trig_op_entries();
/// The grid_sample entry (ops_nn.cpp), after qrt.atanh.
std::vector<OpInfo> grid_sample_op_entries();

}  // namespace qrt::op_verify
