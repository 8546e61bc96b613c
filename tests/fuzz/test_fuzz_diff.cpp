// The differential graph fuzzer as a test: the saved regressions, a fixed seed range on every
// configuration the host offers, and the generator's own guarantees.
#include <doctest/doctest.h>

#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "diff_check.h"
#include "graph_gen.h"
#include "regression_file.h"

namespace {

std::vector<std::string> saved_regressions() {
  std::vector<std::string> files;
  if (DIR* dir = opendir(FUZZ_REGRESSIONS_DIR)) {
    while (const dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".mlir") == 0)
        files.push_back(std::string(FUZZ_REGRESSIONS_DIR) + "/" + name);
    }
    closedir(dir);
  }
  std::sort(files.begin(), files.end());
  return files;
}

qrt_fuzz::DiffOutcome check_seed(uint64_t seed, const std::vector<qrt_fuzz::RunConfig>& configs, int max_ops) {
  qrt_fuzz::SeededChooser chooser(seed);
  qrt_fuzz::GenLimits limits;
  limits.max_ops = max_ops;
  return qrt_fuzz::diff_graph(qrt_fuzz::generate_graph(chooser, limits).mlir, seed, configs);
}

// A plan of `model` on `backend` and a context of it, destroyed together.
struct Planned {
  qrt_plan_t* plan = nullptr;
  qrt_context_t* ctx = nullptr;
  Planned(const qrt_model_t* model, qrt_backend backend) {
    qrt_plan_options options;
    qrt_plan_options_init(&options);
    options.backend = backend;
    REQUIRE_MESSAGE(qrt_plan_create(model, &options, &plan) == QRT_OK, qrt_last_error_message());
    REQUIRE(qrt_context_create(plan, &ctx) == QRT_OK);
  }
  ~Planned() {
    qrt_context_destroy(ctx);
    qrt_plan_destroy(plan);
  }
  Planned(const Planned&) = delete;
  Planned& operator=(const Planned&) = delete;
};

// Loads the saved finding `file` (tests/data/fuzz_findings/) and checks that every host
// configuration gives the reference's outcome for input seeds [0, seeds); the caller destroys
// the model.
qrt_model_t* load_finding_checked(const std::string& file, uint64_t seeds) {
  qrt_model_t* model = nullptr;
  const std::string path = std::string(FUZZ_FINDINGS_DIR) + "/" + file;
  REQUIRE_MESSAGE(qrt_model_load_file(path.c_str(), &model) == QRT_OK, qrt_last_error_message());
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_model(model, seed, qrt_fuzz::host_configs({}));
    CHECK_MESSAGE(o.kind == qrt_fuzz::DiffOutcome::kSame, o.message);
  }
  return model;
}

// The saved finding `file` on three input seeds, then the MLIR graph `text` that reduces it,
// on every host configuration: both give the reference's outcome.
void check_finding_and_graph(const std::string& file, const std::string& text) {
  qrt_model_destroy(load_finding_checked(file, 3));
  const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_graph(text, 3, qrt_fuzz::host_configs({}));
  CHECK_MESSAGE(o.kind == qrt_fuzz::DiffOutcome::kSame, o.message);
}

}  // namespace

TEST_CASE("fuzz-diff: the configurations cover every ISA level of the host at 1 and 3 threads") {
  const auto configs = qrt_fuzz::host_configs({});
  const std::string levels = qrt_host_isas();
  size_t jit_single = 0;
  for (const auto& c : configs) {
    if (c.backend == QRT_BACKEND_JIT && c.threads == 1 && c.flags == 0 && !c.no_passes) {
      ++jit_single;
      CHECK(levels.find(c.isa) != std::string::npos);
    }
  }
  CHECK(jit_single == static_cast<size_t>(std::count(levels.begin(), levels.end(), ',') + 1));
  CHECK(std::any_of(configs.begin(), configs.end(), [](const auto& c) { return c.threads == 3; }));
  CHECK(std::any_of(configs.begin(), configs.end(), [](const auto& c) { return c.no_passes; }));
}

TEST_CASE("fuzz-diff: graphs that do not load or run are reported, not counted as matches") {
  const auto configs = qrt_fuzz::host_configs({});
  const qrt_fuzz::DiffOutcome bad = qrt_fuzz::diff_graph("func.func @main(", 1, configs);
  CHECK(bad.kind == qrt_fuzz::DiffOutcome::kInvalid);
  CHECK(bad.message.find("load") != std::string::npos);
  const std::string ok =
      "func.func @main(%x: tensor<3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<3xf32> {\n"
      "  %y = \"quant.dcast\"(%x) : (tensor<3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<3xf32>\n"
      "  return %y : tensor<3xf32>\n}\n";
  const qrt_fuzz::DiffOutcome same = qrt_fuzz::diff_graph(ok, 7, configs);
  CHECK_MESSAGE(same.kind == qrt_fuzz::DiffOutcome::kSame, same.message);
  CHECK(same.runs == static_cast<int>(configs.size()) + 2);  // + the references with and without passes
}

TEST_CASE("fuzz-diff: output views are checked against the model (empty outputs returned as they are)") {
  // fuzz_c_api -seed=48: these outputs came back from every backend as default views (rank 0,
  // 4 bytes at null), alike, so comparing the backends found nothing; each view is now checked
  // against the model's output (rank, static dimensions, dtype, byte count).
  const std::string empty_outputs =
      "func.func @main(%x: tensor<3x0x5xf32>) -> (tensor<3x0x5xf32>, tensor<3x0x5xi1>) {\n"
      "  %z = \"qrt.constant\"() {value = dense<> : tensor<3x0x5xi1>} : () -> tensor<3x0x5xi1>\n"
      "  return %x, %z : tensor<3x0x5xf32>, tensor<3x0x5xi1>\n}\n";
  const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_graph(empty_outputs, 3, qrt_fuzz::host_configs({}));
  CHECK_MESSAGE(o.kind == qrt_fuzz::DiffOutcome::kSame, o.message);
}

TEST_CASE("fuzz-diff: a result shape that contradicts its static type fails on every backend alike") {
  // fuzz_c_api -seed=51: a TFLite model reshapes [1, 4096] to [?, 16] and declares its
  // matmul's result [1, 1]. The reference refused the [256, 1] it computed; the JIT, which
  // runs dynamic graphs through its kernels' result_dims, returned it under the [1, 1] type.
  qrt_model_t* model = nullptr;
  const std::string path = std::string(FUZZ_FINDINGS_DIR) + "/capi-result-shape-contradicts-type.tflite";
  REQUIRE_MESSAGE(qrt_model_load_file(path.c_str(), &model) == QRT_OK, qrt_last_error_message());
  const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_model(model, 5, qrt_fuzz::host_configs({}));
  CHECK_MESSAGE(o.kind == qrt_fuzz::DiffOutcome::kSame, o.message);
  for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
    CAPTURE(int(backend));
    const Planned planned(model, backend);
    qrt_context_t* ctx = planned.ctx;
    const int64_t dims[2] = {1, 4096};
    const std::vector<int8_t> x(4096, 1);
    REQUIRE(qrt_context_set_input(ctx, 0, QRT_DTYPE_I8, 2, dims, x.data(), x.size()) == QRT_OK);
    CHECK(qrt_context_run(ctx) == QRT_RUNTIME_ERROR);
    CHECK(std::string(qrt_last_error_message()).find("'qrt.matmul' op computed result shape [256x1] contradicts its type "
                                                     "tensor<1x1x") != std::string::npos);
  }
  qrt_model_destroy(model);
}

TEST_CASE("fuzz-diff: an scast to a type with two dynamic dimensions keeps its operand's shape on the JIT") {
  // fuzz_c_api -seed=54: a 1-D MaxPool over uint8 imports as scast -> max_pool2d -> scast with
  // the result type ?x1x5x?. The JIT inferred the last scast's shape as a reshape does and
  // refused two unknown dimensions; the reference takes the operand's shape.
  qrt_model_t* model = load_finding_checked("capi-scast-two-dynamic-dims.onnx", 8);
  std::vector<std::vector<uint8_t>> outputs;
  for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
    CAPTURE(int(backend));
    const Planned planned(model, backend);
    qrt_context_t* ctx = planned.ctx;
    const int64_t dims[4] = {2, 1, 5, 3};  // the pool's window and pads make the width 4
    std::vector<uint8_t> x(30);
    for (size_t i = 0; i < x.size(); ++i) x[i] = uint8_t(i * 37 % 251);
    REQUIRE(qrt_context_set_input(ctx, 0, QRT_DTYPE_U8, 4, dims, x.data(), x.size()) == QRT_OK);
    REQUIRE_MESSAGE(qrt_context_run(ctx) == QRT_OK, qrt_last_error_message());
    qrt_tensor_view view;
    REQUIRE(qrt_context_output(ctx, 0, &view) == QRT_OK);
    REQUIRE(view.rank == 4);
    CHECK(view.dims[0] == 2);
    CHECK(view.dims[3] == 4);
    const auto* p = static_cast<const uint8_t*>(view.data);
    outputs.emplace_back(p, p + view.bytes);
  }
  CHECK(outputs[0] == outputs[1]);
  qrt_model_destroy(model);
}

TEST_CASE("fuzz-diff: windows with a stride or pads far beyond the input allocate no more than an input row") {
  // fuzz_c_api -seed=59: an average pool of one output pixel with a horizontal stride of
  // 268435458 sized the pooling kernels' padding row by the stride (64 GB; ASan: out of
  // memory). It is now at most an input row (window_pad_bytes).
  qrt_model_t* model = load_finding_checked("capi-avg-pool-huge-stride.qrt", 4);
  qrt_model_destroy(model);
  // A depthwise convolution of 3x3 pixels whose left pad and stride are 2^28 (two output
  // pixels per row): the dot4 rows path kept a padded copy of the row, 8 GB. Such windows now
  // take the pointer path, which pads one pixel at a time, and give the reference's bytes.
  const std::string x = "tensor<1x3x3x32x!quant.uniform<i8:f32, 0.02:-3>>", y = "tensor<1x1x2x32x!quant.uniform<i8:f32, 0.05:4>>";
  std::string scales, weights;
  for (int c = 0; c < 32; ++c) scales += std::string(c ? ", " : "") + "0.01";
  for (int i = 0; i < 32 * 9; ++i) weights += "0123456789ABCDEF"[(i * 7 + 1) % 16], weights += "0123456789ABCDEF"[(i * 3) % 16];
  const std::string f = "tensor<32x3x3x1x!quant.uniform<i8:f32:0, {" + scales + "}>>";
  const std::string text = "func.func @main(%x: " + x + ") -> " + y + " {\n  %f = \"qrt.constant\"() {value = dense<\"0x" + weights +
                           "\"> : tensor<32x3x3x1xi8>} : () -> " + f + "\n  %y = \"qrt.conv2d\"(%x, %f) {groups = 32 : i64, pads = [0, 268435456, 0, 0], " +
                           "strides = [2, 268435456]} : (" + x + ", " + f + ") -> " + y + "\n  return %y : " + y + "\n}\n";
  // The same with a dilation of 2^27 and a left pad of 2^28 (three output pixels): 12 GB.
  const std::string dilated = "tensor<1x3x3x32x!quant.uniform<i8:f32, 0.05:4>>";
  std::string text2 = text;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"pads = [0, 268435456, 0, 0], strides = [2, 268435456]", "dilations = [1, 134217728], pads = [1, 268435456, 1, 0], strides = [1, 1]"},
           {y, dilated}}) {
    for (size_t at = text2.find(from); at != std::string::npos; at = text2.find(from, at + to.size())) text2.replace(at, from.size(), to);
  }
  for (const std::string& t : {text, text2}) {
    CAPTURE(t);
    const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_graph(t, 3, qrt_fuzz::host_configs({}));
    CHECK_MESSAGE(o.kind == qrt_fuzz::DiffOutcome::kSame, o.message);
    REQUIRE(qrt_model_load_buffer(t.data(), t.size(), "dw.mlir", &model) == QRT_OK);
    {
      const Planned planned(model, QRT_BACKEND_JIT);
      qrt_op_info info;
      REQUIRE(qrt_plan_op_info(planned.plan, 1, &info) == QRT_OK);
      CAPTURE(info.kernel);
      CHECK(std::string(info.kernel).find("dwrows") == std::string::npos);
    }
    qrt_model_destroy(model);
  }
}

TEST_CASE("fuzz-diff: a convolution with an empty filter of no output channels plans and runs") {
  // fuzz_c_api -seed=62: the plan's operation count divided by the filter's O = 0 (UBSan;
  // SIGFPE in a release build) for an ONNX Conv on a 13x0x5x4 input with a 0x0x1x1 filter.
  qrt_model_t* model = load_finding_checked("capi-conv-empty-filter.onnx", 4);
  for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
    const Planned planned(model, backend);
    CHECK(planned.plan != nullptr);
  }
  qrt_model_destroy(model);
}

TEST_CASE("fuzz-diff: a chain of element-wise ops over constants alone runs op by op") {
  // fuzz_c_api -seed=65: ONNX MeanVarianceNormalization's expansion left exp(2) - 1 (times 1)
  // unfolded, a fusable region with no input; the fusion indexed its first input (UBSan;
  // SIGSEGV in a release build).
  const std::string text =
      "func.func @main(%x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {\n"
      "  %c = \"qrt.constant\"() {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>\n"
      "  %one = \"qrt.constant\"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>\n"
      "  %e = \"qrt.exp\"(%c) : (tensor<f32>) -> tensor<f32>\n"
      "  %s = \"qrt.sub\"(%e, %one) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "  %m = \"qrt.mul\"(%s, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "  %y = \"qrt.add\"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
      "  return %m, %y : tensor<f32>, tensor<3xf32>\n}\n";
  check_finding_and_graph("capi-ew-region-of-constants.onnx", text);
}

TEST_CASE("fuzz-diff: a transposed convolution of an empty input holds its bias") {
  // fuzz_c_api -seed=69: ONNX ConvTranspose 3-d over an input with a dimension of 0, which the
  // importer reshapes into a conv_transpose2d whose filter is computed at run time: the
  // reference offset the empty input's null data pointer (UBSan).
  // Width 0: the output is (0 - 1) + 2 + 1 = 2 columns wide, every element the bias.
  const std::string text =
      "func.func @main(%x: tensor<1x2x0x1xf32>) -> tensor<1x4x2x2xf32> {\n"
      "  %w = \"qrt.constant\"() {value = dense<1.500000e+00> : tensor<2x3x3x1xf32>} : () -> tensor<2x3x3x1xf32>\n"
      "  %b = \"qrt.constant\"() {value = dense<[2.500000e-01, -3.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>\n"
      "  %y = \"qrt.conv_transpose2d\"(%x, %w, %b) : (tensor<1x2x0x1xf32>, tensor<2x3x3x1xf32>, tensor<2xf32>) -> tensor<1x4x2x2xf32>\n"
      "  return %y : tensor<1x4x2x2xf32>\n}\n";
  check_finding_and_graph("capi-conv-transpose-empty-input.onnx", text);
  for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
    CAPTURE(int(backend));
    qrt_model_t* m = nullptr;
    REQUIRE_MESSAGE(qrt_model_load_buffer(text.data(), text.size(), "empty.mlir", &m) == QRT_OK, qrt_last_error_message());
    const Planned planned(m, backend);
    const int64_t dims[4] = {1, 2, 0, 1};
    REQUIRE(qrt_context_set_input(planned.ctx, 0, QRT_DTYPE_F32, 4, dims, nullptr, 0) == QRT_OK);
    REQUIRE_MESSAGE(qrt_context_run(planned.ctx) == QRT_OK, qrt_last_error_message());
    qrt_tensor_view view;
    REQUIRE(qrt_context_output(planned.ctx, 0, &view) == QRT_OK);
    REQUIRE(view.bytes == 16 * sizeof(float));
    const auto* y = static_cast<const float*>(view.data);
    for (size_t i = 0; i < 16; ++i) CHECK(y[i] == (i % 2 == 0 ? 0.25f : -3.0f));
    qrt_model_destroy(m);
  }
}

TEST_CASE("fuzz-diff: a cast of f32 to u64 saturates at the top of the range") {
  // fuzz_c_api -seed=74: an ONNX Cast to UINT64; the reference converted 2^64 (the largest u64
  // rounded to a double) to uint64_t, which is undefined (UBSan).
  qrt_model_destroy(load_finding_checked("capi-cast-f32-to-u64-top.onnx", 4));
  const std::string text =
      "func.func @main(%x: tensor<3xf32>) -> (tensor<3xui64>, tensor<3xsi64>) {\n"
      "  %u = \"qrt.cast\"(%x) : (tensor<3xf32>) -> tensor<3xui64>\n"
      "  %s = \"qrt.cast\"(%x) : (tensor<3xf32>) -> tensor<3xsi64>\n"
      "  return %u, %s : tensor<3xui64>, tensor<3xsi64>\n}\n";
  for (qrt_backend backend : {QRT_BACKEND_JIT, QRT_BACKEND_REF}) {
    CAPTURE(int(backend));
    qrt_model_t* m = nullptr;
    REQUIRE_MESSAGE(qrt_model_load_buffer(text.data(), text.size(), "cast.mlir", &m) == QRT_OK, qrt_last_error_message());
    const Planned planned(m, backend);
    const float x[3] = {18446744073709551616.0f, 9223372036854775808.0f, -1e30f};
    const int64_t dims[1] = {3};
    REQUIRE(qrt_context_set_input(planned.ctx, 0, QRT_DTYPE_F32, 1, dims, x, sizeof x) == QRT_OK);
    REQUIRE_MESSAGE(qrt_context_run(planned.ctx) == QRT_OK, qrt_last_error_message());
    qrt_tensor_view u, s;
    REQUIRE(qrt_context_output(planned.ctx, 0, &u) == QRT_OK);
    REQUIRE(qrt_context_output(planned.ctx, 1, &s) == QRT_OK);
    REQUIRE(u.bytes == 3 * sizeof(uint64_t));
    REQUIRE(s.bytes == 3 * sizeof(int64_t));
    const auto* uy = static_cast<const uint64_t*>(u.data);
    const auto* sy = static_cast<const int64_t*>(s.data);
    CHECK(uy[0] == UINT64_MAX);
    CHECK(uy[1] == uint64_t(1) << 63);
    CHECK(uy[2] == 0);
    CHECK(sy[0] == INT64_MAX);
    CHECK(sy[1] == INT64_MAX);
    CHECK(sy[2] == INT64_MIN);
    qrt_model_destroy(m);
  }
}

TEST_CASE("fuzz-diff: the generator gives valid graphs from any byte string and is deterministic") {
  const auto configs = qrt_fuzz::host_configs({false, 1});
  for (size_t size : {0, 1, 9, 64, 300}) {
    std::vector<uint8_t> bytes(size);
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 37 + size);
    qrt_fuzz::ByteChooser chooser(bytes.data(), bytes.size());
    const qrt_fuzz::GeneratedGraph g = qrt_fuzz::generate_graph(chooser, {});
    const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_graph(g.mlir, size, configs);
    CHECK_MESSAGE(o.kind == qrt_fuzz::DiffOutcome::kSame, "bytes " << size << ": " << o.message << "\n" << g.mlir);
  }
  qrt_fuzz::SeededChooser a(42), b(42);
  CHECK(qrt_fuzz::generate_graph(a, {}).mlir == qrt_fuzz::generate_graph(b, {}).mlir);
  // A smaller step limit keeps the earlier steps (the minimizer relies on it).
  qrt_fuzz::SeededChooser c(42), d(42);
  qrt_fuzz::GenLimits few;
  few.max_ops = 2;
  const std::string full = qrt_fuzz::generate_graph(c, {}).summary, prefix = qrt_fuzz::generate_graph(d, few).summary;
  CHECK(full.compare(0, prefix.size(), prefix) == 0);
}

TEST_CASE("fuzz-diff: saved regressions match the reference on every configuration") {
  const auto configs = qrt_fuzz::host_configs({});
  for (const std::string& path : saved_regressions()) {
    qrt_fuzz::RegressionCase rc;
    std::string error;
    REQUIRE_MESSAGE(qrt_fuzz::read_regression(path, &rc, &error), error);
    const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_graph(rc.mlir, rc.input_seed, configs);
    CHECK_MESSAGE(o.kind == qrt_fuzz::DiffOutcome::kSame, path << ": " << o.message);
  }
}

TEST_CASE("fuzz-diff: seeds 1..60 match the reference (JIT levels, threads, no fusion, no passes)") {
  const auto configs = qrt_fuzz::host_configs({false, 3});
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const qrt_fuzz::DiffOutcome o = check_seed(seed, configs, 6);
    CHECK_MESSAGE(o.kind == qrt_fuzz::DiffOutcome::kSame, "seed " << seed << ": " << o.message);
  }
}

TEST_CASE("fuzz-diff: seeds 1..8 match the reference on the LLVM backend too") {
  const auto configs = qrt_fuzz::host_configs({true, 3});
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const qrt_fuzz::DiffOutcome o = check_seed(seed, configs, 4);
    CHECK_MESSAGE(o.kind == qrt_fuzz::DiffOutcome::kSame, "seed " << seed << ": " << o.message);
  }
}
