/* Tests: the C API, compiled as C99. Exercises every entry point and error path. */
#include <qrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_passed = 0;
static int g_failed = 0;

#define EXPECT(cond)                                                  \
  do {                                                                \
    if (cond) {                                                       \
      ++g_passed;                                                     \
    } else {                                                          \
      ++g_failed;                                                     \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                 \
  } while (0)

#define EXPECT_MSG_CONTAINS(text)                                      \
  EXPECT(strstr(qrt_last_error_message(), (text)) != NULL)

static const char* kGraph =
    "func.func @main(%x: tensor<?x2xf32>, %w: tensor<2x2x!quant.uniform<i8<-127:127>:f32:1, {0.5, 0.25}>>) -> tensor<?x2xf32> {\n"
    "  %q = \"quant.qcast\"(%x) : (tensor<?x2xf32>) -> tensor<?x2x!quant.uniform<u8:f32, 0.5:128>>\n"
    "  %d = \"quant.dcast\"(%q) : (tensor<?x2x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<?x2xf32>\n"
    "  %y = \"qrt.matmul\"(%d, %w) : (tensor<?x2xf32>, tensor<2x2x!quant.uniform<i8<-127:127>:f32:1, {0.5, 0.25}>>) -> tensor<?x2xf32>\n"
    "  return %y : tensor<?x2xf32>\n"
    "}\n";

static void test_version_and_strings(void) {
  EXPECT(strcmp(qrt_version(), QRT_VERSION_STRING) == 0);
  EXPECT(strstr(qrt_build_info(), "qrt ") != NULL);
  EXPECT(strcmp(qrt_status_string(QRT_OK), "QRT_OK") == 0);
  EXPECT(strcmp(qrt_status_string(QRT_VERIFY_ERROR), "QRT_VERIFY_ERROR") == 0);
  EXPECT(strcmp(qrt_status_string((qrt_status)99), "QRT_UNKNOWN_STATUS") == 0);
  EXPECT(qrt_dtype_size(QRT_DTYPE_F32) == 4);
  EXPECT(qrt_dtype_size(QRT_DTYPE_BF16) == 2);
  EXPECT(qrt_dtype_size(QRT_DTYPE_INVALID) == 0);
  EXPECT(strcmp(qrt_dtype_name(QRT_DTYPE_U8), "u8") == 0);
  EXPECT(strcmp(qrt_dtype_name((qrt_dtype)77), "invalid") == 0);
  qrt_free(NULL);
}

static void test_load_errors(void) {
  qrt_model_t* model = (qrt_model_t*)0x1;
  EXPECT(qrt_model_load_file(NULL, &model) == QRT_INVALID_ARGUMENT);
  EXPECT(model == (qrt_model_t*)0x1); /* outputs untouched on failure */
  EXPECT(qrt_model_load_file("/nonexistent/graph.mlir", &model) == QRT_IO_ERROR);
  EXPECT_MSG_CONTAINS("/nonexistent/graph.mlir: cannot open file");
  EXPECT(qrt_model_load_file("x.mlir", NULL) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_model_load_buffer("func.func @main(", 16, "bad.mlir", &model) == QRT_PARSE_ERROR);
  EXPECT_MSG_CONTAINS("bad.mlir:1:17: error:");
  {
    const char* bad = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                      "  %b = \"qrt.relu\"(%a) : (tensor<2xf32>) -> tensor<3xf32>\n"
                      "  return %a : tensor<2xf32>\n}\n";
    EXPECT(qrt_model_load_buffer(bad, strlen(bad), "v.mlir", &model) == QRT_VERIFY_ERROR);
    EXPECT_MSG_CONTAINS("v.mlir:2:8: error: 'qrt.relu' op result type");
  }
  {
    const char* any = "func.func @main(%a: tensor<2x!quant.any<i8:f32>>) -> tensor<2x!quant.any<i8:f32>> {\n"
                      "  return %a : tensor<2x!quant.any<i8:f32>>\n}\n";
    /* Valid MLIR: it loads and describes itself (no dtype); only a plan refuses it. */
    qrt_model_t* placeholder = NULL;
    qrt_plan_t* plan = NULL;
    qrt_tensor_info info;
    EXPECT(qrt_model_load_buffer(any, strlen(any), "a.mlir", &placeholder) == QRT_OK);
    EXPECT(qrt_model_input_info(placeholder, 0, &info) == QRT_OK);
    EXPECT(info.dtype == QRT_DTYPE_INVALID);
    EXPECT(qrt_plan_create(placeholder, NULL, &plan) == QRT_INVALID_ARGUMENT);
    EXPECT_MSG_CONTAINS("argument %a has the placeholder type tensor<2x!quant.any<i8:f32>>");
    qrt_model_destroy(placeholder);
  }
  {
    /* f8 expressed types are valid MLIR 19: they load, print and verify; plans refuse them. */
    const char* f8 = "func.func @main(%a: tensor<2x!quant.uniform<i8:f8E4M3FN, 0.5:3>>) -> tensor<2xf8E4M3FN> {\n"
                     "  %d = \"quant.dcast\"(%a) : (tensor<2x!quant.uniform<i8:f8E4M3FN, 0.5:3>>) -> tensor<2xf8E4M3FN>\n"
                     "  return %d : tensor<2xf8E4M3FN>\n}\n";
    qrt_model_t* m8 = NULL;
    qrt_plan_t* plan = NULL;
    char* text = NULL;
    EXPECT(qrt_model_load_buffer(f8, strlen(f8), "f8.mlir", &m8) == QRT_OK);
    EXPECT(qrt_model_print(m8, &text) == QRT_OK);
    EXPECT(text && strstr(text, "tensor<2x!quant.uniform<i8:f8E4M3FN, 5.000000e-01:3>>") != NULL);
    qrt_free(text);
    EXPECT(qrt_plan_create(m8, NULL, &plan) == QRT_UNSUPPORTED);
    EXPECT_MSG_CONTAINS("value %a has type tensor<2x!quant.uniform<i8:f8E4M3FN, 5.000000e-01:3>>: qrt parses, verifies and prints f8E4M3FN");
    qrt_model_destroy(m8);
  }
  EXPECT(qrt_model_load_buffer(NULL, 5, "n", &model) == QRT_INVALID_ARGUMENT);
  EXPECT(model == (qrt_model_t*)0x1);
  qrt_model_destroy(NULL);
}

static void test_model_queries(qrt_model_t* model) {
  size_t n = 0;
  qrt_tensor_info info;
  char* text = NULL;
  EXPECT(qrt_model_num_inputs(model, &n) == QRT_OK && n == 2);
  EXPECT(qrt_model_num_outputs(model, &n) == QRT_OK && n == 1);
  EXPECT(qrt_model_num_inputs(NULL, &n) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_model_num_outputs(model, NULL) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_model_input_info(model, 0, &info) == QRT_OK);
  EXPECT(strcmp(info.name, "x") == 0 && info.dtype == QRT_DTYPE_F32 && info.rank == 2);
  EXPECT(info.dims[0] == -1 && info.dims[1] == 2 && info.quant == QRT_QUANT_NONE);
  EXPECT(qrt_model_input_info(model, 1, &info) == QRT_OK);
  EXPECT(strcmp(info.name, "w") == 0 && info.dtype == QRT_DTYPE_I8);
  EXPECT(info.quant == QRT_QUANT_PER_AXIS && info.quant_axis == 1 && info.quant_count == 2);
  EXPECT(info.scales[1] == 0.25 && info.zero_points[0] == 0);
  EXPECT(info.storage_min == -127 && info.storage_max == 127);
  EXPECT(strcmp(info.type, "tensor<2x2x!quant.uniform<i8<-127:127>:f32:1, {5.000000e-01,2.500000e-01}>>") == 0);
  EXPECT(qrt_model_input_info(model, 2, &info) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("index 2 is out of range (the model has 2 inputs)");
  EXPECT(qrt_model_output_info(model, 0, &info) == QRT_OK && strcmp(info.name, "y") == 0);
  EXPECT(qrt_model_output_info(model, 0, NULL) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_model_print(model, &text) == QRT_OK);
  EXPECT(text != NULL && strstr(text, "\"qrt.matmul\"(%d, %w)") != NULL);
  qrt_free(text);
  EXPECT(qrt_model_print(NULL, &text) == QRT_INVALID_ARGUMENT);
}

static void test_run(qrt_model_t* model) {
  qrt_plan_t* plan = NULL;
  qrt_context_t* ctx = NULL;
  qrt_plan_options opts;
  qrt_tensor_view view;
  const float x[4] = {1.0f, -0.75f, 2.0f, 0.25f};
  const int8_t w[4] = {2, -4, 1, 8}; /* w real = [[1, -1], [0.5, 2]] */
  const int8_t w_bad[4] = {2, -128, 1, 8};
  const int64_t xdims[2] = {2, 2};
  const int64_t wdims[2] = {2, 2};
  const int64_t bad_dims[2] = {2, 3};

  qrt_plan_options_init(&opts);
  EXPECT(opts.struct_size == sizeof opts && opts.backend == QRT_BACKEND_DEFAULT);
  opts.backend = (qrt_backend)42;
  EXPECT(qrt_plan_create(model, &opts, &plan) == QRT_INVALID_ARGUMENT && plan == NULL);
  opts.backend = QRT_BACKEND_REF;
  opts.struct_size = 1;
  EXPECT(qrt_plan_create(model, &opts, &plan) == QRT_INVALID_ARGUMENT);
  opts.struct_size = sizeof opts;
  EXPECT(qrt_plan_create(NULL, &opts, &plan) == QRT_INVALID_ARGUMENT);
  opts.backend = QRT_BACKEND_JIT;
  {
    const qrt_status st = qrt_plan_create(model, &opts, &plan);
    EXPECT(st == QRT_OK || st == QRT_UNSUPPORTED); /* UNSUPPORTED only on CPUs without AVX2 */
    qrt_plan_destroy(plan);
    plan = NULL;
  }
  opts.backend = QRT_BACKEND_REF;
  EXPECT(qrt_plan_create(model, &opts, &plan) == QRT_OK && plan != NULL);
  EXPECT(qrt_context_create(NULL, &ctx) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_create(plan, &ctx) == QRT_OK && ctx != NULL);

  EXPECT(qrt_context_run(ctx) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("input 'x' (index 0) has not been set");
  EXPECT(qrt_context_output(ctx, 0, &view) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_set_input(ctx, 0, QRT_DTYPE_F64, 2, xdims, x, sizeof x) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("input 'x' expects dtype f32, got f64");
  EXPECT(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 2, bad_dims, x, sizeof x) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("expects shape tensor<?x2xf32>, got [2x3]");
  EXPECT(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 1, xdims, x, sizeof x) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 2, xdims, x, 12) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("needs 16 bytes, got 12");
  EXPECT(qrt_context_set_input(ctx, 5, QRT_DTYPE_F32, 2, xdims, x, sizeof x) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_set_input(ctx, 1, QRT_DTYPE_I8, 2, wdims, w_bad, sizeof w_bad) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("stored value -128 at element 1 is outside the storage bounds [-127, 127]");
  EXPECT(qrt_context_set_input(NULL, 0, QRT_DTYPE_F32, 2, xdims, x, sizeof x) == QRT_INVALID_ARGUMENT);

  EXPECT(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 2, xdims, x, sizeof x) == QRT_OK);
  EXPECT(qrt_context_set_input(ctx, 1, QRT_DTYPE_I8, 2, wdims, w, sizeof w) == QRT_OK);
  EXPECT(qrt_context_run(ctx) == QRT_OK);
  EXPECT(strcmp(qrt_last_error_message(), "") == 0);
  EXPECT(qrt_context_output(ctx, 1, &view) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_output(ctx, 0, NULL) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_output(ctx, 0, &view) == QRT_OK);
  EXPECT(view.dtype == QRT_DTYPE_F32 && view.rank == 2 && view.dims[0] == 2 && view.dims[1] == 2);
  EXPECT(view.bytes == 16);
  {
    /* x quantized with scale 0.5, zp 128 and back: [1, -1, 2, 0] (-0.75/0.5 = -1.5 -> -2,
       0.25/0.5 = 0.5 -> 0). y = x' @ [[1, -1], [0.5, 2]] = [[0.5, -3], [2, -2]]. */
    const float* y = (const float*)view.data;
    EXPECT(y[0] == 0.5f && y[1] == -3.0f && y[2] == 2.0f && y[3] == -2.0f);
  }
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_context_destroy(NULL);
  qrt_plan_destroy(NULL);
}

static const char* kStaticGraph =
    "func.func @main(%x: tensor<3x4xf32>) -> tensor<3x5xf32> {\n"
    "  %q = \"quant.qcast\"(%x) : (tensor<3x4xf32>) -> tensor<3x4x!quant.uniform<i8:f32, 0.05:-3>>\n"
    "  %w = \"qrt.constant\"() {value = dense<[[1, -2, 3, -4, 5], [6, -7, 8, -9, 10], [-11, 12, -13, 14, -15], "
    "[16, 17, 18, 19, 20]]> : tensor<4x5xi8>} : () -> tensor<4x5x!quant.uniform<i8:f32, 0.02>>\n"
    "  %m = \"qrt.matmul\"(%q, %w) : (tensor<3x4x!quant.uniform<i8:f32, 0.05:-3>>, "
    "tensor<4x5x!quant.uniform<i8:f32, 0.02>>) -> tensor<3x5x!quant.uniform<i8:f32, 0.01:2>>\n"
    "  %r = \"qrt.relu\"(%m) : (tensor<3x5x!quant.uniform<i8:f32, 0.01:2>>) -> tensor<3x5x!quant.uniform<i8:f32, 0.01:2>>\n"
    "  %y = \"quant.dcast\"(%r) : (tensor<3x5x!quant.uniform<i8:f32, 0.01:2>>) -> tensor<3x5xf32>\n"
    "  return %y : tensor<3x5xf32>\n"
    "}\n";

/* Runs kStaticGraph with `backend` and `threads` on x (bound, not copied) into out[15]. */
static int run_static(qrt_model_t* model, qrt_backend backend, size_t threads, const float* x, float* out) {
  qrt_plan_t* plan = NULL;
  qrt_context_t* ctx = NULL;
  qrt_plan_options opts;
  const int64_t dims[2] = {3, 4};
  int ok;
  qrt_plan_options_init(&opts);
  opts.backend = backend;
  opts.threads = threads;
  if (qrt_plan_create(model, &opts, &plan) != QRT_OK) return 0;
  ok = qrt_context_create(plan, &ctx) == QRT_OK &&
       qrt_context_bind_input(ctx, 0, QRT_DTYPE_F32, 2, dims, x, 12 * sizeof(float)) == QRT_OK &&
       qrt_context_bind_output(ctx, 0, out, 15 * sizeof(float)) == QRT_OK && qrt_context_run(ctx) == QRT_OK;
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  return ok;
}

static void test_static_plan(void) {
  qrt_model_t* model = NULL;
  qrt_plan_t* plan = NULL;
  qrt_context_t* ctx = NULL;
  qrt_plan_options opts;
  qrt_op_info info;
  qrt_memory_info mem;
  qrt_tensor_view view;
  size_t ops = 0, i;
  uint64_t ns = 0;
  const char* selection = NULL;
  float x[12], out[15], out_ref[15], out_threads[15], sentinel[15];
  const int64_t dims[2] = {3, 4};
  int matmul_seen = 0;
  for (i = 0; i < 12; ++i) x[i] = (float)i * 0.173f - 0.9f;
  EXPECT(qrt_model_load_buffer(kStaticGraph, strlen(kStaticGraph), "static.mlir", &model) == QRT_OK);
  if (!model) return;

  qrt_plan_options_init(&opts);
  EXPECT(opts.threads == 0);
  opts.threads = 100000;
  EXPECT(qrt_plan_create(model, &opts, &plan) == QRT_INVALID_ARGUMENT && plan == NULL); /* fails to compile */
  EXPECT_MSG_CONTAINS("threads");
  opts.threads = 2;
  EXPECT(qrt_plan_create(model, &opts, &plan) == QRT_OK);

  EXPECT(qrt_plan_num_ops(NULL, &ops) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_plan_num_ops(plan, NULL) == QRT_INVALID_ARGUMENT);
  /* qcast, constant, matmul (the relu fused into it by the default pipeline), dcast */
  EXPECT(qrt_plan_num_ops(plan, &ops) == QRT_OK && ops == 4);
  EXPECT(qrt_plan_op_info(plan, ops, &info) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("op index 4 is out of range");
  EXPECT(qrt_plan_op_info(plan, 0, NULL) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_plan_op_selection(plan, ops, &selection) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_plan_op_selection(plan, 0, NULL) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_plan_op_selection(NULL, 0, &selection) == QRT_INVALID_ARGUMENT);
  for (i = 0; i < ops; ++i) {
    EXPECT(qrt_plan_op_info(plan, i, &info) == QRT_OK);
    EXPECT(qrt_plan_op_selection(plan, i, &selection) == QRT_OK && selection != NULL);
    if (strcmp(info.op, "qrt.matmul") == 0) {
      matmul_seen = 1;
      EXPECT(info.ops == 2 * 3 * 5 * 4);
      /* A kernel of some level (the scalar twins run everywhere), chosen by the last level asked. */
      EXPECT(strstr(info.kernel, "gemm") != NULL && *info.reason == 0);
      EXPECT(strstr(selection, ": chosen") != NULL);
    }
  }
  EXPECT(matmul_seen);
  qrt_plan_destroy(plan);
  plan = NULL;
  /* The portable level runs on every host; an unknown level is refused by name. */
  opts.isa = "scalar";
  EXPECT(qrt_plan_create(model, &opts, &plan) == QRT_OK);
  for (i = 0; i < ops; ++i) {
    EXPECT(qrt_plan_op_info(plan, i, &info) == QRT_OK);
    if (strcmp(info.op, "qrt.matmul") == 0) EXPECT(strstr(info.kernel, "__scalar") != NULL);
  }
  qrt_plan_destroy(plan);
  plan = NULL;
  opts.isa = "sse9";
  EXPECT(qrt_plan_create(model, &opts, &plan) == QRT_INVALID_ARGUMENT && plan == NULL);
  EXPECT_MSG_CONTAINS("unknown ISA level 'sse9'");
  opts.isa = NULL;
  EXPECT(strstr(qrt_host_isas(), "scalar") != NULL);
  EXPECT(qrt_plan_create(model, &opts, &plan) == QRT_OK);
  EXPECT(qrt_plan_memory_info(plan, NULL) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_plan_memory_info(NULL, &mem) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_plan_memory_info(plan, &mem) == QRT_OK);
  EXPECT(mem.arena_bytes > 0 && mem.arena_bytes <= mem.naive_bytes + 64 * 4);
  {
    size_t shapes = 99;
    EXPECT(qrt_plan_num_specializations(plan, NULL) == QRT_INVALID_ARGUMENT);
    EXPECT(qrt_plan_num_specializations(NULL, &shapes) == QRT_INVALID_ARGUMENT);
    EXPECT(qrt_plan_num_specializations(plan, &shapes) == QRT_OK && shapes == 0); /* static shapes */
  }

  EXPECT(qrt_context_create(plan, &ctx) == QRT_OK);
  EXPECT(qrt_context_bind_output(ctx, 1, out, sizeof out) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_bind_output(ctx, 0, out, sizeof out - 4) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("needs 60 bytes, got 56");
  EXPECT(qrt_context_bind_output(NULL, 0, out, sizeof out) == QRT_INVALID_ARGUMENT);
  for (i = 0; i < 15; ++i) sentinel[i] = out[i] = -99.0f;
  EXPECT(qrt_context_bind_output(ctx, 0, out, sizeof out) == QRT_OK);
  EXPECT(qrt_context_run(ctx) == QRT_INVALID_ARGUMENT); /* no input yet: outputs untouched */
  EXPECT(memcmp(out, sentinel, sizeof out) == 0);
  EXPECT(qrt_context_bind_input(ctx, 0, QRT_DTYPE_F32, 2, dims, x, sizeof x - 1) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_bind_input(NULL, 0, QRT_DTYPE_F32, 2, dims, x, sizeof x) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_bind_input(ctx, 0, QRT_DTYPE_F32, 2, dims, x, sizeof x) == QRT_OK);
  EXPECT(qrt_context_op_time(ctx, 0, NULL) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_op_time(ctx, ops, &ns) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_context_run(ctx) == QRT_OK);
  EXPECT(memcmp(out, sentinel, sizeof out) != 0);
  EXPECT(qrt_context_output(ctx, 0, &view) == QRT_OK && memcmp(view.data, out, sizeof out) == 0);
  {
    uint64_t total = 0;
    for (i = 0; i < ops; ++i) {
      EXPECT(qrt_context_op_time(ctx, i, &ns) == QRT_OK);
      total += ns;
    }
    EXPECT(total > 0);
  }
  /* A bound input is read in place: changing it changes the next run. */
  memcpy(out_ref, out, sizeof out);
  x[0] = 5.0f;
  EXPECT(qrt_context_run(ctx) == QRT_OK);
  EXPECT(memcmp(out, out_ref, sizeof out) != 0);
  EXPECT(qrt_context_bind_output(ctx, 0, NULL, 0) == QRT_OK); /* unbinds */
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);

  /* Thread count and backend do not change a bit of the result. */
  EXPECT(run_static(model, QRT_BACKEND_REF, 1, x, out_ref));
  EXPECT(run_static(model, QRT_BACKEND_DEFAULT, 1, x, out));
  EXPECT(run_static(model, QRT_BACKEND_DEFAULT, 3, x, out_threads));
  EXPECT(memcmp(out, out_ref, sizeof out) == 0 && memcmp(out_threads, out_ref, sizeof out) == 0);
  /* The LLVM backend: the same bytes where this build has it, else QRT_UNSUPPORTED. */
  if (strstr(qrt_build_info(), "every kernel from LLVM: built")) {
    memset(out, 0, sizeof out);
    EXPECT(run_static(model, QRT_BACKEND_LLVM, 3, x, out));
    EXPECT(memcmp(out, out_ref, sizeof out) == 0);
  } else {
    qrt_plan_options opts;
    qrt_plan_options_init(&opts);
    opts.backend = QRT_BACKEND_LLVM;
    EXPECT(qrt_plan_create(model, &opts, &plan) == QRT_UNSUPPORTED);
    EXPECT_MSG_CONTAINS("LLVM backend is not in this build");
  }
  qrt_model_destroy(model);
}

static void test_dynamic_output_cannot_be_bound(qrt_model_t* model) {
  qrt_plan_t* plan = NULL;
  qrt_context_t* ctx = NULL;
  float out[4];
  EXPECT(qrt_plan_create(model, NULL, &plan) == QRT_OK);
  EXPECT(qrt_context_create(plan, &ctx) == QRT_OK);
  EXPECT(qrt_context_bind_output(ctx, 0, out, sizeof out) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("has a dynamic shape");
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
}

/* Post-training quantization through the C API: calibrate a float graph on two batches,
 * quantize it with the calibration pipeline, and run the result. */
static void test_calibration(void) {
  static const char* kFloat =
      "func.func @main(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {\n"
      "  %w = \"qrt.constant\"() {value = dense<[[1.0, -0.5], [0.25, 2.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>\n"
      "  %y = \"qrt.matmul\"(%x, %w) : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>\n"
      "  return %y : tensor<?x2xf32>\n"
      "}\n";
  qrt_model_t* model = NULL;
  qrt_plan_t* plan = NULL;
  qrt_context_t* ctx = NULL;
  const float batch1[4] = {0.0f, 1.0f, 0.5f, -1.0f};
  const float batch2[2] = {2.0f, 0.25f};
  const int64_t dims1[2] = {2, 2}, dims2[2] = {1, 2}, bad_dims[2] = {1, 3};
  qrt_tensor_view in;
  char* report = NULL;
  char* text = NULL;
  qrt_tensor_view out;
  EXPECT(qrt_model_load_buffer(kFloat, strlen(kFloat), "float.mlir", &model) == QRT_OK);
  if (!model) return;
  in.dtype = QRT_DTYPE_F32;
  in.rank = 2;
  in.dims = bad_dims;
  in.data = batch1;
  in.bytes = 12;
  EXPECT(qrt_model_calibrate(model, &in, 1) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("input 'x' expects shape tensor<?x2xf32>");
  EXPECT(qrt_model_calibrate(model, &in, 2) == QRT_INVALID_ARGUMENT);
  EXPECT(qrt_model_calibrate(NULL, &in, 1) == QRT_INVALID_ARGUMENT);
  in.dims = dims1;
  in.bytes = sizeof batch1;
  EXPECT(qrt_model_calibrate(model, &in, 1) == QRT_OK);
  in.dims = dims2;
  in.data = batch2;
  in.bytes = sizeof batch2;
  EXPECT(qrt_model_calibrate(model, &in, 1) == QRT_OK);
  EXPECT(qrt_model_print(model, &text) == QRT_OK);
  /* The input's statistics cover both batches: [-1, 2]. */
  EXPECT(text && strstr(text, "layerStats = dense<[-1.000000e+00, 2.000000e+00]>") != NULL);
  qrt_free(text);
  EXPECT(qrt_model_apply_passes_ex(model, "calibrate,propagate{activations=nope}", 0, NULL) == QRT_INVALID_ARGUMENT);
  EXPECT_MSG_CONTAINS("option activations=nope must be one of u8, i8");
  EXPECT(qrt_model_apply_passes_ex(model, qrt_calibration_pipeline(), QRT_PASSES_TIMING, &report) == QRT_OK);
  EXPECT(report && strstr(report, "propagate: %x_q : !quant.uniform<u8:f32") != NULL);
  EXPECT(report && strstr(report, "timing: propagate") != NULL);
  qrt_free(report);
  EXPECT(strstr(qrt_passes_help(), "propagate") != NULL);
  EXPECT(qrt_plan_create(model, NULL, &plan) == QRT_OK);
  EXPECT(qrt_context_create(plan, &ctx) == QRT_OK);
  EXPECT(qrt_context_set_input(ctx, 0, QRT_DTYPE_F32, 2, dims1, batch1, sizeof batch1) == QRT_OK);
  EXPECT(qrt_context_run(ctx) == QRT_OK);
  EXPECT(qrt_context_output(ctx, 0, &out) == QRT_OK && out.dims[0] == 2);
  if (out.data) {
    /* x = [0, 1] -> [0.25, 2]; quantized within one output step (range about [-2, 4.3]/255). */
    const float* y = (const float*)out.data;
    EXPECT(y[0] > 0.2f && y[0] < 0.3f && y[1] > 1.95f && y[1] < 2.05f);
  }
  qrt_context_destroy(ctx);
  qrt_plan_destroy(plan);
  qrt_model_destroy(model);
}

int main(void) {
  qrt_model_t* model = NULL;
  test_version_and_strings();
  test_load_errors();
  EXPECT(qrt_model_load_buffer(kGraph, strlen(kGraph), "c_api.mlir", &model) == QRT_OK);
  if (model) {
    test_model_queries(model);
    test_run(model);
    test_dynamic_output_cannot_be_bound(model);
    qrt_model_destroy(model);
  }
  test_static_plan();
  test_calibration();
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
