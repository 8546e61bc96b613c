// Tests: ONNX's own backend node tests for the quantization ops (Debian's libonnx-testdata),
// imported and run on the reference backend; outputs must equal ONNX's expected outputs
// exactly. Inputs that carry scales and zero points are frozen into constants (qrt types hold
// quantization parameters statically). The ConvTranspose tests also run on the JIT backend
// through the C API, their weights frozen (kernels prepack constant filters). Skipped when
// libonnx-testdata is not installed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <qrt.h>

#include "importers/onnx_importer.h"
#include "tests/importers/onnx_jit_runner.h"
#include "tests/importers/onnx_node_tests.h"
#include "importers/onnx_tensors.h"
#include "ir/text_format.h"
#include "jit/ref/reference.h"

namespace fs = std::filesystem;

namespace {

using qrt_test::kNodeTests;
using qrt_test::slurp;

qrt::DenseElements read_tensor(const fs::path& p) {
  onnx::TensorProto t;
  const std::string bytes = slurp(p);
  REQUIRE(t.ParseFromString(bytes));
  auto d = qrt::importers::onnx_detail::dense_of(t, p.string());
  REQUIRE_MESSAGE(d.is_ok(), d.status().to_string());
  return *d;
}

bool is_quant_parameter(const std::string& name) {
  return name.find("scale") != std::string::npos || name.find("zero_point") != std::string::npos;
}

// Runs one node test under numerics profile `profile`; returns "" on success or why it failed.
// `max_ulp` > 0 accepts f32 outputs within that many ulp of the expected ones (numpy's f32
// transcendental functions are not correctly rounded, so their last bit is not a contract).
// `jit_kernel` non-null: every input after the first is frozen into a constant and the graph
// runs on the JIT backend; it gets the kernel of the graph's op named `kernel_op`.
// `abs_tol` > 0 accepts f32 outputs within that distance of the expected ones.
std::string run_case(const std::string& name, qrt::NumericsProfile profile = qrt::NumericsProfile::kDefault,
                     int max_ulp = 0, std::string* jit_kernel = nullptr,
                     const std::string& kernel_op = "qrt.conv_transpose2d", double abs_tol = 0) {
  const fs::path dir = kNodeTests / name;
  const std::string model_bytes = slurp(dir / "model.onnx");
  onnx::ModelProto model;
  REQUIRE(model.ParseFromString(model_bytes));
  std::map<std::string, qrt::DenseElements> frozen;
  std::vector<qrt::Tensor> inputs;
  const auto& graph_inputs = model.graph().input();
  for (int i = 0; i < graph_inputs.size(); ++i) {
    const qrt::DenseElements d = read_tensor(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"));
    if (is_quant_parameter(graph_inputs[i].name()) || (jit_kernel && i > 0)) {
      frozen[graph_inputs[i].name()] = d;
      continue;
    }
    qrt::Tensor t;
    t.type = d.type;
    t.storage.assign(d.data(), d.data() + d.size());
    inputs.push_back(t);
  }
  auto g = qrt::importers::import_onnx(model_bytes.data(), model_bytes.size(), name, frozen);
  if (!g.is_ok()) return g.status().to_string();
  g->numerics = profile;
  // Graph inputs carry the ONNX element types; the test tensors must match them.
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].type.element = g->values[size_t(g->inputs[i])].type.element;
  }
  auto out = jit_kernel ? run_jit(*g, inputs, *jit_kernel, kernel_op) : qrt::run_reference(*g, std::move(inputs));
  if (!out.is_ok()) return out.status().to_string();
  for (size_t i = 0; i < out->size(); ++i) {
    const qrt::DenseElements want = read_tensor(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
    const qrt::Tensor& got = out->at(i);
    if (got.type.dims != want.type.dims) {
      return "output " + std::to_string(i) + " has shape [" + qrt::dims_to_string(got.type.dims) + "], expected [" +
             qrt::dims_to_string(want.type.dims) + "]";
    }
    if (std::vector<uint8_t>(got.bytes(), got.bytes() + got.byte_size()) !=
        std::vector<uint8_t>(want.data(), want.data() + want.size())) {
      for (size_t k = 0; k < size_t(got.num_elements()); ++k) {
        const bool f = got.type.element.is_float();
        const double a = f ? got.float_at(k) : double(got.int_at(k));
        const double b = f ? want.float_at(k) : double(want.int_at(k));
        if (a != b && !(max_ulp > 0 && f && std::fabs(a - b) <= max_ulp * std::ldexp(1.0, std::ilogb(float(b)) - 23)) &&
            !(abs_tol > 0 && f && std::fabs(a - b) <= abs_tol)) {
          return "output " + std::to_string(i) + " element " + std::to_string(k) + " is " + std::to_string(a) +
                 ", expected " + std::to_string(b);
        }
      }
    }
  }
  return "";
}

// The node tests whose names start with one of `prefixes` (not the `_expanded` forms), sorted,
// each with the prefix it matched.
std::vector<std::pair<std::string, std::string>> node_tests(const std::vector<std::string>& prefixes) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& e : fs::directory_iterator(kNodeTests)) {
    const std::string c = e.path().filename().string();
    if (c.find("_expanded") != std::string::npos) continue;
    for (const std::string& p : prefixes) {
      if (c.rfind(p, 0) == 0) {
        found.emplace_back(c, p);
        break;
      }
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The element type of node test `name`'s first input.
qrt::ElementType first_input_element(const std::string& name) {
  return read_tensor(kNodeTests / name / "test_data_set_0" / "input_0.pb").type.element;
}

}  // namespace

TEST_CASE("ONNX backend node tests for quantization ops") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  const char* cases[] = {
      "test_quantizelinear",      "test_quantizelinear_axis",      "test_dequantizelinear",
      "test_dequantizelinear_axis", "test_qlinearmatmul_2D",        "test_qlinearmatmul_3D",
      "test_qlinearconv",         "test_matmulinteger",            "test_basic_convinteger",
      "test_convinteger_with_padding", "test_convinteger_without_padding", "test_dynamicquantizelinear",
      "test_dynamicquantizelinear_max_adjusted", "test_dynamicquantizelinear_min_adjusted",
  };
  for (const char* c : cases) {
    CAPTURE(c);
    const std::string why = run_case(c);
    CHECK_MESSAGE(why.empty(), why);
    // The onnx profile (QLinearMatMul / QLinearConv as ONNX's reference evaluator computes
    // them) reproduces ONNX's published outputs too.
    const std::string why_onnx = run_case(c, qrt::NumericsProfile::kOnnx);
    CHECK_MESSAGE(why_onnx.empty(), "onnx profile: " << why_onnx);
  }
}

TEST_CASE("ONNX backend node tests for the rounding, sign and root functions") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  for (const char* c : {"test_abs", "test_ceil", "test_ceil_example", "test_floor", "test_floor_example", "test_round",
                        "test_sign", "test_sqrt", "test_sqrt_example"}) {
    CAPTURE(c);
    const std::string why = run_case(c);
    CHECK_MESSAGE(why.empty(), why);
  }
}

TEST_CASE("ONNX backend node tests for Log, Sin and Cos (within 1 ulp of numpy's f32 results)") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  for (const char* c : {"test_log", "test_log_example", "test_sin", "test_sin_example", "test_cos", "test_cos_example"}) {
    CAPTURE(c);
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 1);
    CHECK_MESSAGE(why.empty(), why);
  }
}

TEST_CASE("ONNX backend node tests for ConvTranspose (strides, pads, output_padding, output_shape, auto_pad, dilations)") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  for (const char* c : {"test_convtranspose", "test_convtranspose_autopad_same", "test_convtranspose_dilations",
                        "test_convtranspose_kernel_shape", "test_convtranspose_output_shape", "test_convtranspose_pad",
                        "test_convtranspose_pads", "test_convtranspose_with_kernel", "test_convtranspose_1d",
                        "test_convtranspose_3d"}) {
    CAPTURE(c);
    const std::string why = run_case(c);
    CHECK_MESSAGE(why.empty(), why);
    // The same bytes from the kernels (sub-pixel phases in the reference's order).
    std::string kernel;
    const std::string jit_why = run_case(c, qrt::NumericsProfile::kDefault, 0, &kernel);
    CHECK_MESSAGE(jit_why.empty(), jit_why);
    CHECK_MESSAGE(kernel.find("over the input reversed") != std::string::npos, kernel);
  }
  // (1-D runs as 2-D on [N, C, 1, L]; 3-D as a 2-D one over gathered depth taps.)
}

TEST_CASE("ONNX backend node tests for pooling (1-D, 2-D and 3-D; pads, strides, auto_pad, ceil_mode, global)") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  // The reference and the kernels (the to-nhwc pass and f32 pooling) give ONNX's results:
  // max pooling bit for bit, average pooling within the order of its f32 sum.
  const std::pair<const char*, const char*> cases[] = {
      {"test_maxpool_2d_default", "qrt.max_pool2d"},
      {"test_maxpool_2d_pads", "qrt.max_pool2d"},
      {"test_maxpool_2d_strides", "qrt.max_pool2d"},
      {"test_maxpool_2d_same_upper", "qrt.max_pool2d"},
      {"test_maxpool_2d_same_lower", "qrt.max_pool2d"},
      {"test_maxpool_2d_precomputed_pads", "qrt.max_pool2d"},
      {"test_maxpool_2d_precomputed_same_upper", "qrt.max_pool2d"},
      {"test_maxpool_2d_precomputed_strides", "qrt.max_pool2d"},
      {"test_maxpool_2d_ceil", "qrt.max_pool2d"},
      {"test_maxpool_2d_uint8", "qrt.max_pool2d"},
      {"test_globalmaxpool", "qrt.max_pool2d"},
      {"test_globalmaxpool_precomputed", "qrt.max_pool2d"},
      {"test_averagepool_2d_default", "qrt.avg_pool2d"},
      {"test_averagepool_2d_pads", "qrt.avg_pool2d"},
      {"test_averagepool_2d_pads_count_include_pad", "qrt.avg_pool2d"},
      {"test_averagepool_2d_precomputed_pads", "qrt.avg_pool2d"},
      {"test_averagepool_2d_precomputed_pads_count_include_pad", "qrt.avg_pool2d"},
      {"test_averagepool_2d_precomputed_same_upper", "qrt.avg_pool2d"},
      {"test_averagepool_2d_precomputed_strides", "qrt.avg_pool2d"},
      {"test_averagepool_2d_same_upper", "qrt.avg_pool2d"},
      {"test_averagepool_2d_same_lower", "qrt.avg_pool2d"},
      {"test_averagepool_2d_strides", "qrt.avg_pool2d"},
      {"test_averagepool_2d_ceil", "qrt.avg_pool2d"},
      {"test_globalaveragepool", "qrt.avg_pool2d"},
      {"test_globalaveragepool_precomputed", "qrt.avg_pool2d"},
      // 1-D as 2-D on [N, C, 1, L]; 3-D as the 2-D pool then a reduction over depth windows.
      {"test_maxpool_1d_default", "qrt.max_pool2d"},
      {"test_averagepool_1d_default", "qrt.avg_pool2d"},
      {"test_maxpool_3d_default", "qrt.max_pool2d"},
      {"test_averagepool_3d_default", "qrt.avg_pool2d"}};
  for (const auto& [name, op] : cases) {
    CAPTURE(std::string(name));
    // ONNX's average pools come from numpy, which sums in another order: qrt's f32 sums in
    // window order (numerics.md) agree within 2^-23 on these inputs (normal samples), which is
    // more than an ulp of the results where the window's values cancel.
    // The 3-D average rounds twice (the 2-D mean, then the depth mean): within 2^-21.
    const bool avg_3d = std::string(name) == "test_averagepool_3d_default";
    const double tol = std::string(op) == "qrt.avg_pool2d" ? std::ldexp(1.0, avg_3d ? -21 : -23) : 0.0;
    const std::string why = run_case(name, qrt::NumericsProfile::kDefault, 0, nullptr, "", tol);
    CHECK_MESSAGE(why.empty(), why);
    std::string kernel;
    const std::string jit_why = run_case(name, qrt::NumericsProfile::kDefault, 0, &kernel, op, tol);
    CHECK_MESSAGE(jit_why.empty(), jit_why);
    CHECK_MESSAGE(kernel.find("pool") != std::string::npos, kernel);
  }
  // Dilated pooling is refused by name.
  CHECK(run_case("test_maxpool_2d_dilations").find("dilated pooling is not supported") != std::string::npos);
}

TEST_CASE("ONNX backend node tests for Clip (integer, run-time bounds), Gemm (alpha, beta, C of any shape) and Pow") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  // Clip of integers or with bounds computed at run time is max then min; Pow's integer
  // exponent is cast to the float base's type: the same bytes.
  for (const char* c : {"test_clip", "test_clip_default_inbounds", "test_clip_default_int8_inbounds",
                        "test_clip_default_int8_max", "test_clip_default_int8_min", "test_clip_default_max",
                        "test_clip_default_min", "test_clip_example", "test_clip_inbounds", "test_clip_outbounds",
                        "test_clip_splitbounds", "test_pow", "test_pow_types_int", "test_pow_types_float32_int32",
                        "test_pow_types_float32_int64", "test_pow_types_float32_uint32", "test_pow_types_float32_uint64"}) {
    CAPTURE(std::string(c));
    const std::string why = run_case(c);
    CHECK_MESSAGE(why.empty(), why);
  }
  // Gemm: numpy's f32 products sum in another order (and ONNX's expected values may come from
  // a fused multiply-add), so the last bits may differ: within 4 ulp.
  for (const char* c : {"test_gemm_all_attributes", "test_gemm_alpha", "test_gemm_beta", "test_gemm_default_matrix_bias",
                        "test_gemm_default_no_bias", "test_gemm_default_scalar_bias",
                        "test_gemm_default_single_elem_vector_bias", "test_gemm_default_vector_bias",
                        "test_gemm_default_zero_bias", "test_gemm_transposeA", "test_gemm_transposeB"}) {
    CAPTURE(std::string(c));
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 4);
    CHECK_MESSAGE(why.empty(), why);
  }
  // Integer bases are refused by name (qrt.pow is float).
  CHECK(run_case("test_pow_types_int32_int32").find("Pow of a i32 base is not supported") != std::string::npos);
}

TEST_CASE("ONNX backend node tests for the composed activations (LeakyRelu, Elu, Selu, HardSigmoid, HardSwish, ...)") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  // Compositions of element-wise ops in ONNX's order: the reference and the JIT's fused
  // programs give ONNX's values, those through exp within 2^-20 (numpy's exp is not correctly
  // rounded, and exp(x) - 1 cancels), the others bit for bit.
  for (const char* c : {"test_leakyrelu", "test_leakyrelu_default", "test_leakyrelu_example", "test_hardsigmoid",
                        "test_hardsigmoid_default", "test_hardsigmoid_example", "test_hardswish", "test_thresholdedrelu",
                        "test_thresholdedrelu_default", "test_thresholdedrelu_example", "test_sum_example",
                        "test_sum_one_input", "test_sum_two_inputs", "test_mean_example", "test_mean_one_input",
                        "test_mean_two_inputs", "test_batchnorm_epsilon", "test_batchnorm_example", "test_elu",
                        "test_elu_default", "test_elu_example", "test_selu", "test_selu_default", "test_selu_example"}) {
    const std::string name = c;
    CAPTURE(name);
    // exp(x) - 1 cancels near 0: a 1-ulp difference of exp(x) (about 2^-24) stays absolute.
    const bool through_exp = name.find("elu") != std::string::npos && name.find("leaky") == std::string::npos;
    const double tol = through_exp ? std::ldexp(1.0, -20) : 0.0;  // Selu scales it by up to 6
    const std::string why = run_case(name, qrt::NumericsProfile::kDefault, 0, nullptr, "", tol);
    CHECK_MESSAGE(why.empty(), why);
    if (name.find("_one_input") != std::string::npos) continue;  // nothing to compute
    std::string kernel;
    const std::string jit_why = run_case(name, qrt::NumericsProfile::kDefault, 0, &kernel, "qrt.add", tol);
    CHECK_MESSAGE(jit_why.empty(), jit_why);
  }
  CHECK(run_case("test_batchnorm_example_training_mode").find("training_mode = 1 is not supported") != std::string::npos);
}

TEST_CASE("ONNX backend node tests for Resize: linear and cubic interpolation on the JIT backend, exactly") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  // Scales and sizes are graph inputs there: frozen into constants (qrt needs them static).
  int cases = 0;
  for (const char* c : {"test_resize_upsample_scales_linear", "test_resize_upsample_scales_linear_align_corners",
                        "test_resize_downsample_scales_linear", "test_resize_downsample_scales_linear_align_corners",
                        "test_resize_downsample_sizes_linear_pytorch_half_pixel", "test_resize_upsample_scales_cubic",
                        "test_resize_upsample_scales_cubic_align_corners", "test_resize_upsample_scales_cubic_asymmetric",
                        "test_resize_upsample_scales_cubic_A_n0p5_exclude_outside", "test_resize_upsample_sizes_cubic",
                        "test_resize_downsample_scales_cubic", "test_resize_downsample_scales_cubic_align_corners",
                        "test_resize_downsample_scales_cubic_A_n0p5_exclude_outside", "test_resize_downsample_sizes_cubic",
                        "test_resize_upsample_scales_nearest", "test_resize_downsample_sizes_nearest"}) {
    CAPTURE(c);
    if (!fs::exists(kNodeTests / c)) continue;
    std::string kernel;
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 0, &kernel, "qrt.resize");
    CHECK_MESSAGE(why.empty(), why);
    CHECK_MESSAGE(kernel != "reference", kernel);
    ++cases;
  }
  MESSAGE(cases << " Resize node tests");
  CHECK(cases >= 14);
}

TEST_CASE("ONNX backend node tests for Pad (constant, edge, reflect) on the JIT backend, exactly") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  // pads and constant_value are graph inputs there: frozen into constants. Edge and reflect
  // pads are slices, broadcasts and concatenations.
  int cases = 0;
  for (const auto& [c, op] : std::vector<std::pair<std::string, std::string>>{
           {"test_constant_pad", "qrt.pad"}, {"test_edge_pad", "qrt.concat"}, {"test_reflect_pad", "qrt.concat"}}) {
    CAPTURE(c);
    if (!fs::exists(kNodeTests / c)) continue;
    std::string kernel;
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 0, &kernel, op);
    CHECK_MESSAGE(why.empty(), why);
    CHECK_MESSAGE(kernel != "reference", kernel);
    ++cases;
  }
  CHECK(cases == 3);
}

TEST_CASE("ONNX backend node tests for Trilu (k frozen into a constant) on the JIT backend, exactly") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  int cases = 0;
  for (const auto& [c, prefix] : node_tests({"test_tril", "test_triu"})) {
    CAPTURE(c);
    std::string kernel;
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 0, &kernel, "qrt.where");
    CHECK_MESSAGE(why.empty(), why);
    ++cases;
  }
  MESSAGE(cases << " Trilu node tests");
  CHECK(cases >= 18);
}

TEST_CASE("ONNX backend node tests for ReduceMin/Prod/L1/L2/SumSquare/LogSum/LogSumExp on the JIT backend") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  // The f32 cases (the f64 ones run on the reference, in the node sweep). numpy sums and
  // multiplies in f32 (pairwise), qrt in double rounded once: the last bits may differ.
  int cases = 0;
  for (const auto& [c, prefix] : node_tests({"test_reduce_min", "test_reduce_prod", "test_reduce_l1", "test_reduce_l2",
                                             "test_reduce_sum_square", "test_reduce_log_sum"})) {
    const qrt::ElementType el = first_input_element(c);
    if (c.find("empty") != std::string::npos || !el.is_float() || el.float_kind != qrt::FloatKind::kF32) continue;
    CAPTURE(c);
    std::string kernel;
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 4, &kernel, "qrt.reduce_sum");
    CHECK_MESSAGE(why.empty(), why);
    ++cases;
  }
  MESSAGE(cases << " f32 reduction node tests on the JIT");
  CHECK(cases >= 10);
}

TEST_CASE("ONNX backend node tests for the composed ops (PRelu, Softplus, Hardmax, OneHot, Tile, LRN, ...) on the JIT backend") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  // Inputs after the first (slopes, depth and values, repeats, scale and B) frozen into
  // constants. Sinh, Cosh, Tan and Softplus compose correctly rounded steps, numpy rounds
  // once: up to 4 ulp apart. InstanceNormalization's outputs near 0 differ from numpy's f32
  // arithmetic by under 1e-6 (qrt's mean and variance are double sums).
  std::map<std::string, int> per_op;
  for (const auto& [c, listed] : node_tests({"test_prelu", "test_softplus", "test_softsign", "test_shrink", "test_sinh",
                                             "test_cosh", "test_tan", "test_isnan", "test_isinf", "test_hardmax", "test_onehot",
                                             "test_tile", "test_instancenorm", "test_lrn", "test_eyelike"})) {
    if (c.rfind("test_tanh", 0) == 0) continue;
    CAPTURE(c);
    std::string kernel;
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 4, &kernel, "qrt.where", 1e-6);
    CHECK_MESSAGE(why.empty(), why);
    per_op[listed] += 1;
  }
  CHECK(per_op.size() == 15);
  int cases = 0;
  for (const auto& [op, n] : per_op) cases += n;
  MESSAGE(cases << " node tests of composed ops on the JIT");
}

TEST_CASE("ONNX backend node tests for LayerNormalization's Mean and InvStdDev, and Max/Min of 1 or 3 inputs, on the JIT") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  // Scale, bias and the later Max/Min operands frozen into constants. The normalized output
  // and the statistics are f32 sums in another order than numpy's: within 4 ulp or 1e-6.
  std::map<std::string, int> per_op;
  for (const auto& [c, listed] : node_tests({"test_layer_normalization", "test_max_example", "test_max_one_input",
                                             "test_min_example", "test_min_one_input"})) {
    CAPTURE(c);
    std::string kernel;
    const bool layer_norm = listed == "test_layer_normalization";
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 4, &kernel,
                                     layer_norm ? "qrt.layer_norm" : listed.find("max") != std::string::npos ? "qrt.max" : "qrt.min",
                                     1e-6);
    CHECK_MESSAGE(why.empty(), why);
    // Every case runs a kernel for its op (Max/Min of one input is the input itself).
    if (listed.find("one_input") == std::string::npos) CHECK_MESSAGE(!kernel.empty(), "no kernel ran " << c);
    per_op[listed] += 1;
  }
  CHECK(per_op["test_layer_normalization"] >= 19);
  CHECK(per_op.size() == 5);
}

TEST_CASE("ONNX backend node tests for GridSample (every mode and padding) through the JIT plan") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  // The grid frozen into a constant. qrt interpolates in f64, ONNX's reference in f32; the
  // bicubic test's expected values are PyTorch's, written to 4 decimals (-0.1406 for -0.140625).
  int cases = 0;
  for (const auto& [c, listed] : node_tests({"test_gridsample"})) {
    CAPTURE(c);
    std::string kernel;
    const double tolerance = c == "test_gridsample_bicubic" ? 6e-5 : 1e-6;  // half the last digit, and f32
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 4, &kernel, "qrt.grid_sample", tolerance);
    CHECK_MESSAGE(why.empty(), why);
    ++cases;
  }
  CHECK(cases == 8);
}

TEST_CASE("ONNX backend node tests for CumSum and Mod on the JIT backend, exactly") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  // CumSum's axis and Mod's divisor frozen into constants; every element type ONNX tests.
  int cumsum = 0, mod = 0;
  for (const auto& [c, prefix] : node_tests({"test_cumsum", "test_mod"})) {
    const bool is_cumsum = prefix == "test_cumsum";
    const qrt::ElementType el = first_input_element(c);
    CAPTURE(c);
    std::string kernel;
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 0, &kernel, is_cumsum ? "qrt.cumsum" : "qrt.mod");
    CHECK_MESSAGE(why.empty(), why);
    // Every type on the portable kernels (f16 widened to f32, exactly).
    CHECK_MESSAGE(kernel.find("portable C++") != std::string::npos, kernel);
    if (el.is_float() && el.float_kind == qrt::FloatKind::kF16) CHECK_MESSAGE(kernel.find("f16") != std::string::npos, kernel);
    (is_cumsum ? cumsum : mod) += 1;
  }
  MESSAGE(cumsum << " CumSum and " << mod << " Mod node tests on the JIT");
  CHECK(cumsum == 7);
  CHECK(mod == 13);
}

namespace {

// Runs each of `cases` that is installed on the JIT backend (ONNX's expected bytes exactly)
// and checks that `op` ran on a kernel whose description starts with `kernel_prefix`; the
// number of cases run.
int check_jit_cases(std::initializer_list<const char*> cases, const char* op, const std::string& kernel_prefix) {
  int n = 0;
  for (const char* c : cases) {
    if (!fs::exists(kNodeTests / c)) continue;
    CAPTURE(c);
    std::string kernel;
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 0, &kernel, op);
    CHECK_MESSAGE(why.empty(), why);
    CHECK_MESSAGE(kernel.find(kernel_prefix) == 0, kernel);
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("ONNX backend node tests for TopK (K frozen into a constant) on the JIT backend, exactly") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  CHECK(check_jit_cases({"test_top_k", "test_top_k_negative_axis", "test_top_k_smallest"}, "qrt.topk", "topk (portable C++") == 3);
}

TEST_CASE("ONNX backend node tests for GatherND (batch_dims 0 and 1) on the JIT backend, exactly") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  CHECK(check_jit_cases({"test_gathernd_example_float32", "test_gathernd_example_int32", "test_gathernd_example_int32_batch_dim1"},
                        "qrt.gather_nd", "gather_nd (portable C++") == 3);
}

TEST_CASE("ONNX backend node tests for ScatterND and ScatterElements (scatter_nd of full tuples) on the JIT backend, exactly") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  CHECK(check_jit_cases({"test_scatternd", "test_scatternd_add", "test_scatternd_multiply", "test_scatter_elements_with_axis",
                         "test_scatter_elements_with_duplicate_indices", "test_scatter_elements_with_negative_indices",
                         "test_scatter_elements_without_axis", "test_scatter_with_axis", "test_scatter_without_axis"},
                        "qrt.scatter_nd", "scatter_nd (portable C++") == 9);
}

TEST_CASE("ONNX backend node tests for NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (reference and JIT)") {
  if (!fs::exists(kNodeTests)) {
    MESSAGE("libonnx-testdata is not installed: skipping");
    return;
  }
  int exact = 0, cases = 0;
  for (const auto& [c, prefix] : node_tests({"test_nllloss", "test_sce"})) {
    CAPTURE(c);
    const std::string bitwise = run_case(c);
    exact += bitwise.empty();
    // numpy sums float32 pairwise and its exp/log are not correctly rounded: within 4 ulp (9
    // of the 52 differ by more than 1 ulp, none by more than 4).
    const std::string why = run_case(c, qrt::NumericsProfile::kDefault, 4);
    CHECK_MESSAGE(why.empty(), why);
    // The same on the JIT (targets and weights frozen into constants), the gather on a kernel.
    std::string kernel;
    const std::string jit = run_case(c, qrt::NumericsProfile::kDefault, 4, &kernel, "qrt.gather_elements");
    CHECK_MESSAGE(jit.empty(), jit);
    CHECK_MESSAGE(kernel.find("gather_elements") != std::string::npos, kernel);
    ++cases;
  }
  MESSAGE(cases << " loss node tests, " << exact << " bit for bit");
  CHECK(cases == 52);
}
