// Tests: runs an imported graph on the JIT backend through the C API (its text form loaded
// as a model), for the ONNX importer tests that compare the kernels with the reference.
#pragma once

#include <doctest/doctest.h>

#include <qrt.h>

#include <cstring>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/text_format.h"
#include "jit/core/tensor.h"

/// The C API's dtype of a plain element type (QRT_DTYPE_INVALID for others).
inline qrt_dtype dtype_of(const qrt::ElementType& e) {
  if (e.is_float()) {
    switch (e.float_kind) {
      case qrt::FloatKind::kF16: return QRT_DTYPE_F16;
      case qrt::FloatKind::kBF16: return QRT_DTYPE_BF16;
      case qrt::FloatKind::kF32: return QRT_DTYPE_F32;
      case qrt::FloatKind::kF64: return QRT_DTYPE_F64;
      default: return QRT_DTYPE_INVALID;
    }
  }
  if (!e.is_integer()) return QRT_DTYPE_INVALID;
  const bool u = e.int_sign == qrt::Signedness::kUnsigned;
  switch (e.int_width) {
    case 1: return QRT_DTYPE_BOOL;
    case 8: return u ? QRT_DTYPE_U8 : QRT_DTYPE_I8;
    case 16: return u ? QRT_DTYPE_U16 : QRT_DTYPE_I16;
    case 32: return u ? QRT_DTYPE_U32 : QRT_DTYPE_I32;
    case 64: return u ? QRT_DTYPE_U64 : QRT_DTYPE_I64;
    default: return QRT_DTYPE_INVALID;
  }
}

/// Runs `g` (its text form) on the JIT backend through the C API on plain `inputs`; `kernel` gets
/// the kernel of its op named `kernel_op`; `isa` caps the ISA level (null: the host's best).
inline qrt::Result<std::vector<qrt::Tensor>> run_jit(const qrt::Graph& g, const std::vector<qrt::Tensor>& inputs,
                                                     std::string& kernel, const std::string& kernel_op,
                                                     const char* isa = nullptr) {
  const std::string text = qrt::print_graph(g);
  qrt_model_t* m = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_buffer(text.data(), text.size(), "node.mlir", &m) == QRT_OK, qrt_last_error_message());
  qrt_plan_options options;
  qrt_plan_options_init(&options);
  options.isa = isa;
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(m, &options, &plan) == QRT_OK, qrt_last_error_message());
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  for (size_t i = 0; i < ops; ++i) {
    qrt_op_info info;
    REQUIRE(qrt_plan_op_info(plan, i, &info) == QRT_OK);
    if (info.op == kernel_op) kernel = info.kernel;
  }
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const qrt_dtype dtype = dtype_of(inputs[i].type.element);
    REQUIRE(dtype != QRT_DTYPE_INVALID);
    REQUIRE(qrt_context_set_input(ctx, i, dtype, inputs[i].type.rank(),
                                  inputs[i].type.dims.data(), inputs[i].bytes(), inputs[i].byte_size()) == QRT_OK);
  }
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  std::vector<qrt::Tensor> out;
  size_t outputs = 0;
  qrt_model_num_outputs(m, &outputs);
  for (size_t i = 0; i < outputs; ++i) {
    qrt_tensor_view v;
    REQUIRE(qrt_context_output(ctx, i, &v) == QRT_OK);
    qrt::Tensor t = qrt::Tensor::zeros(g.values[size_t(g.outputs[i])].type);
    REQUIRE(t.byte_size() == v.bytes);
    if (v.bytes > 0) std::memcpy(t.bytes(), v.data, v.bytes);  // (an empty output has no bytes to point at)
    out.push_back(std::move(t));
  }
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(m);
  return out;
}
