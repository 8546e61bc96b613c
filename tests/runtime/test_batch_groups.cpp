// Tests: a convolution with batch_groups on the JIT backend, through the C API. The default
// pipeline's expand-batch-groups pass gives one generated kernel per batch group; every ISA
// level the host has, at 1 and 3 threads, must give the reference's bytes for the whole op.
#include <doctest/doctest.h>
#include <qrt.h>

#include <cstring>
#include <string>
#include <vector>

#include "ir/text_format.h"
#include "jit/ref/reference.h"
#include "tests/host_levels.h"
#include "tests/passes/batch_group_graphs.h"

namespace {

qrt_dtype dtype_of(const qrt::ElementType& e) {
  if (e.is_float()) return QRT_DTYPE_F32;
  return e.storage.width == 32 ? QRT_DTYPE_I32 : QRT_DTYPE_I8;
}

struct JitRun {
  std::vector<uint8_t> bytes;
  int convolutions = 0;          ///< qrt.conv2d ops in the plan
  int convolutions_kernel = 0;   ///< of those, the ones a generated kernel runs
};

JitRun run_jit(const std::string& text, const std::vector<qrt::Tensor>& inputs, const std::string& isa, unsigned threads) {
  qrt_model_t* model = nullptr;
  REQUIRE_MESSAGE(qrt_model_load_buffer(text.data(), text.size(), "bg.mlir", &model) == QRT_OK, qrt_last_error_message());
  qrt_plan_options options;
  qrt_plan_options_init(&options);
  options.isa = isa.c_str();
  options.threads = threads;
  qrt_plan_t* plan = nullptr;
  REQUIRE_MESSAGE(qrt_plan_create(model, &options, &plan) == QRT_OK, qrt_last_error_message());
  JitRun r;
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  for (size_t i = 0; i < ops; ++i) {
    qrt_op_info info;
    REQUIRE(qrt_plan_op_info(plan, i, &info) == QRT_OK);
    if (std::string(info.op) != "qrt.conv2d") continue;
    ++r.convolutions;
    r.convolutions_kernel += std::string(info.reason).empty() ? 1 : 0;
  }
  qrt_context_t* ctx = nullptr;
  REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const qrt::Tensor& t = inputs[i];
    REQUIRE_MESSAGE(qrt_context_set_input(ctx, i, dtype_of(t.type.element), t.type.rank(), t.type.dims.data(), t.bytes(),
                                          t.byte_size()) == QRT_OK,
                    qrt_last_error_message());
  }
  REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
  qrt_tensor_view view;
  REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
  const auto* p = static_cast<const uint8_t*>(view.data);
  r.bytes.assign(p, p + view.bytes);
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(model);
  return r;
}

}  // namespace

TEST_CASE("batch_groups convolutions give the reference's bytes at every ISA level, split into generated kernels") {
  for (const batch_group_test::ConvCase& c : batch_group_test::conv_cases()) {
    CAPTURE(c.name);
    const std::string text = batch_group_test::conv_text(c);
    auto g = qrt::parse_graph(text);
    REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
    const std::vector<qrt::Tensor> inputs = batch_group_test::inputs_of(*g);
    // The reference computes the whole op, without the pass.
    auto want = qrt::run_reference(*g, inputs);
    REQUIRE_MESSAGE(want.is_ok(), want.status().to_string());
    const std::vector<uint8_t> expected((*want)[0].bytes(), (*want)[0].bytes() + (*want)[0].byte_size());
    for (const std::string& level : qrt_test::tested_levels()) {
      for (unsigned threads : {1u, 3u}) {
        CAPTURE(level);
        CAPTURE(threads);
        const JitRun r = run_jit(text, inputs, level, threads);
        CHECK(r.bytes == expected);
        CHECK(r.convolutions == int(c.groups));
        // Constant filters take the generated convolution kernels (argument filters may not).
        if (c.constant_filter) CHECK(r.convolutions_kernel == r.convolutions);
      }
    }
  }
}

TEST_CASE("a batch_groups convolution the pass keeps whole runs on the reference inside a JIT plan") {
  batch_group_test::ConvCase c;
  c.dynamic_batch = true;
  const std::string text = batch_group_test::conv_text(c);
  auto g = qrt::parse_graph(text);
  REQUIRE(g.is_ok());
  qrt::Type xt = g->values[size_t(g->inputs[0])].type;
  xt.dims[0] = 4;
  qrt::Tensor x = qrt::Tensor::zeros(xt);
  for (size_t i = 0; i < size_t(x.num_elements()); ++i) x.set_float(i, double(i % 7) - 3.0);
  auto want = qrt::run_reference(*g, {x});
  REQUIRE(want.is_ok());
  const JitRun r = run_jit(text, {x}, qrt_test::host_levels().front(), 1);
  CHECK(r.bytes == std::vector<uint8_t>((*want)[0].bytes(), (*want)[0].bytes() + (*want)[0].byte_size()));
  CHECK(r.convolutions == 1);
  CHECK(r.convolutions_kernel == 0);
}
