// qrt — the byte-moving kernels shared by the layout family (layout_kernels.cpp) and the
// index-driven copies (copy_kernels.cpp: gather, slice, concat, resize). Internal to jit/ops.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ops.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// The common shape contract of the byte-moving kernels: the first operand has the shape the
/// plan was made for, and the result keeps its declared (static) shape.
class StaticShapeKernel : public OpKernel {
 public:
  StaticShapeKernel(const Graph& graph, const Op& op)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op),
        operand_dims_(graph.values[size_t(op.operands[0])].type.dims) {}
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    if (operands[0]->type.dims != operand_dims_) {
      return Status::error_at(op_.loc, std::string("'") + op_info(op_.kind).name + "' op operand has shape [" +
                                           dims_to_string(operands[0]->type.dims) + "], the plan was made for [" +
                                           dims_to_string(operand_dims_) + "]");
    }
    return result_type_.dims;
  }

 protected:
  Op op_;
  std::vector<int64_t> operand_dims_;
};

/// qrt.gather along `axis` (row copies by index; out-of-range indices are errors naming the op).
std::unique_ptr<OpKernel> make_gather_kernel(const Graph& graph, const Op& op, int64_t axis);
/// qrt.gather_elements along `axis`.
std::unique_ptr<OpKernel> make_gather_elements_kernel(const Graph& graph, const Op& op, int64_t axis);
/// qrt.slice from the first index and step of every dimension.
std::unique_ptr<OpKernel> make_slice_kernel(const Graph& graph, const Op& op, std::vector<int64_t> first,
                                            std::vector<int64_t> steps);
/// qrt.concat along `axis` (differently quantized operands requantized as the reference does).
std::unique_ptr<OpKernel> make_concat_kernel(const Graph& graph, const Op& op, int64_t axis);
/// qrt.resize (nearest) through per-axis source-index maps.
std::unique_ptr<OpKernel> make_resize_kernel(const Graph& graph, const Op& op, std::vector<std::vector<int64_t>> maps);
/// qrt.resize, mode linear or cubic, of static float shapes (resize_kernels.cpp); null with
/// `*why_not` otherwise.
std::unique_ptr<OpKernel> make_interpolating_resize_kernel(const Graph& graph, const Op& op, std::string* why_not);

}  // namespace qrt::jit
