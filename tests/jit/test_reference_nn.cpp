// Tests: reference kernels of conv2d, pooling, transpose, concat and pad on hand-computed
// cases, in both layouts where it applies.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/text_format.h"
#include "jit/ref/reference.h"
#include "tests/jit/tensor_util.h"

using qrt_test::run1;

TEST_CASE("float conv2d, NCHW and NHWC agree; padding and stride") {
  // x = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,0],[0,-1]]: valid 2x2 output
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  CHECK(run1("qrt.conv2d", "{layout = \"NCHW\"}", {{"tensor<1x1x3x3xf32>", x}, {"tensor<1x1x2x2xf32>", {1, 0, 0, -1}}},
             "tensor<1x1x2x2xf32>") == std::vector<double>{-4, -4, -4, -4});
  CHECK(run1("qrt.conv2d", "", {{"tensor<1x3x3x1xf32>", x}, {"tensor<1x2x2x1xf32>", {1, 0, 0, -1}}},
             "tensor<1x2x2x1xf32>") == std::vector<double>{-4, -4, -4, -4});
  // pad 1 all round, stride 2: outputs at (0,0), (0,2), (2,0), (2,2) of the padded grid
  CHECK(run1("qrt.conv2d", "{layout = \"NCHW\", pads = [1, 1, 1, 1], strides = [2, 2]}",
             {{"tensor<1x1x3x3xf32>", x}, {"tensor<1x1x2x2xf32>", {1, 0, 0, -1}}}, "tensor<1x1x2x2xf32>") ==
        std::vector<double>{-1, -3, -7, 5 - 9});
}

TEST_CASE("depthwise conv2d with channel multiplier 2 (groups = channels), bias") {
  // 2 channels, 1x1 spatial, 1x1 kernel: out channel o uses input channel o / 2.
  CHECK(run1("qrt.conv2d", "{groups = 2 : i64}",
             {{"tensor<1x1x1x2xf32>", {3, 5}}, {"tensor<4x1x1x1xf32>", {1, 2, 3, 4}}, {"tensor<4xf32>", {0.5, 0, 0, -1}}},
             "tensor<1x1x1x4xf32>") == std::vector<double>{3.5, 6, 15, 19});
}

TEST_CASE("conv2d: a bias left dynamic must hold one element per output channel at run time") {
  // Found reviewing the layer_norm finding of fuzz_c_api -seed=49: a bias declared [?] with
  // one element was read at three output channels, past its end.
  const std::string text =
      "func.func @main(%x: tensor<1x4x4x2xf32>, %w: tensor<3x1x1x2xf32>, %b: tensor<?xf32>) -> tensor<1x4x4x3xf32> {\n"
      "  %y = \"qrt.conv2d\"(%x, %w, %b) {strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], groups = 1 : i64} : "
      "(tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<?xf32>) -> tensor<1x4x4x3xf32>\n  return %y : tensor<1x4x4x3xf32>\n}\n";
  auto run = [&](size_t bias_size) {
    return qrt_test::reference_outcome(text, "cb.mlir",
                                       {{"tensor<1x4x4x2xf32>", std::vector<double>(32, 0.5)},
                                        {"tensor<3x1x1x2xf32>", {1, 2, 3, 4, 5, 6}},
                                        {"tensor<" + std::to_string(bias_size) + "xf32>", std::vector<double>(bias_size, 1.0)}});
  };
  CHECK(run(3) == "ok");
  CHECK(run(1) == "cb.mlir:2:8: error: 'qrt.conv2d' op bias has 1 elements at run time, the filter has 3 output channels");
}

TEST_CASE("quantized conv2d: zero-point padding contributes nothing, per-channel requantize") {
  // input zp 2: stored [[3, 4], [5, 6]] -> centred [[1, 2], [3, 4]]; pads 1 left/top only.
  // filter 2x2 per-channel (2 out channels): ch0 all ones (s 0.5), ch1 [[1,0],[0,1]] (s 0.25)
  const std::string xt = "tensor<1x2x2x1x!quant.uniform<i8:f32, 1.0:2>>";
  const std::string wt = "tensor<2x2x2x1x!quant.uniform<i8:f32:0, {0.5, 0.25}>>";
  const std::string yt = "tensor<1x2x2x2x!quant.uniform<i8:f32, 0.5:-1>>";
  const auto y = run1("qrt.conv2d", "{pads = [1, 1, 0, 0]}",
                      {{xt, {3, 4, 5, 6}}, {wt, {1, 1, 1, 1, 1, 0, 0, 1}}}, yt);
  // acc ch0 = sum of window; ch1 = top-left + bottom-right (padding = 0):
  // (0,0): window [[pad,pad],[pad,1]] -> ch0 1, ch1 1;  (0,1): [[pad,pad],[1,2]] -> 3, 2
  // (1,0): [[pad,1],[pad,3]] -> 4, 3;  (1,1): [[1,2],[3,4]] -> 10, 5
  // M0 = 0.5/0.5 = 1, M1 = 0.25/0.5 = 0.5 (ties to even), zp -1
  CHECK(y == std::vector<double>{0, -1, 2, 0, 3, 1, 9, 1});
}

TEST_CASE("max and average pooling, float and quantized") {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  CHECK(run1("qrt.max_pool2d", "{kernel = [2, 2], strides = [2, 2], layout = \"NCHW\"}", {{"tensor<1x1x4x4xf32>", x}},
             "tensor<1x1x2x2xf32>") == std::vector<double>{6, 8, 14, 16});
  CHECK(run1("qrt.avg_pool2d", "{kernel = [2, 2], strides = [2, 2], layout = \"NCHW\"}", {{"tensor<1x1x4x4xf32>", x}},
             "tensor<1x1x2x2xf32>") == std::vector<double>{3.5, 5.5, 11.5, 13.5});
  // Padding is excluded from the count unless count_include_pad.
  CHECK(run1("qrt.avg_pool2d", "{kernel = [2, 2], pads = [1, 1, 0, 0], layout = \"NCHW\"}",
             {{"tensor<1x1x2x2xf32>", {4, 8, 12, 16}}}, "tensor<1x1x2x2xf32>") ==
        std::vector<double>{4, 6, 8, 10});
  CHECK(run1("qrt.avg_pool2d", "{count_include_pad = 1 : i64, kernel = [2, 2], pads = [1, 1, 0, 0], layout = \"NCHW\"}",
             {{"tensor<1x1x2x2xf32>", {4, 8, 12, 16}}}, "tensor<1x1x2x2xf32>") ==
        std::vector<double>{1, 3, 4, 10});
  // Quantized average: int sum of (q - zp), one rescale by s_in / (s_out * count).
  // stored [1, 2, 4, 6] zp 1 -> [0, 1, 3, 5], sum 9, s_in 1, s_out 1, count 4 -> 2.25 -> 2 + zp_out 10
  CHECK(run1("qrt.avg_pool2d", "{kernel = [2, 2]}", {{"tensor<1x2x2x1x!quant.uniform<i8:f32, 1.0:1>>", {1, 2, 4, 6}}},
             "tensor<1x1x1x1x!quant.uniform<i8:f32, 1.0:10>>") == std::vector<double>{12});
  CHECK(run1("qrt.max_pool2d", "{kernel = [2, 2]}", {{"tensor<1x2x2x1x!quant.uniform<i8:f32, 1.0:1>>", {1, -2, 4, -6}}},
             "tensor<1x1x1x1x!quant.uniform<i8:f32, 1.0:1>>") == std::vector<double>{4});
}

TEST_CASE("transpose, concat with rescale, pad with the zero point") {
  CHECK(run1("qrt.transpose", "{perm = [1, 0]}", {{"tensor<2x3xf32>", {1, 2, 3, 4, 5, 6}}}, "tensor<3x2xf32>") ==
        std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(run1("qrt.transpose", "{perm = [1, 0]}", {{"tensor<2x3x!quant.uniform<i8:f32:0, {1.0, 2.0}>>", {1, 2, 3, 4, 5, 6}}},
             "tensor<3x2x!quant.uniform<i8:f32:1, {1.0, 2.0}>>") == std::vector<double>{1, 4, 2, 5, 3, 6});
  // The second operand is rescaled to scale 1: [2, 5] * 0.5 = [1, 2.5] -> [1, 2] (ties to even)
  CHECK(run1("qrt.concat", "{axis = 1 : i64}",
             {{"tensor<1x2x!quant.uniform<i8:f32, 1.0>>", {7, 8}}, {"tensor<1x2x!quant.uniform<i8:f32, 0.5>>", {2, 5}}},
             "tensor<1x4x!quant.uniform<i8:f32, 1.0>>") == std::vector<double>{7, 8, 1, 2});
  CHECK(run1("qrt.pad", "{pads = [0, 1, 0, 2]}", {{"tensor<1x2x!quant.uniform<u8:f32, 0.1:128>>", {1, 2}}},
             "tensor<1x5x!quant.uniform<u8:f32, 0.1:128>>") == std::vector<double>{128, 1, 2, 128, 128});
  CHECK(run1("qrt.pad", "{pads = [1, 0], value = -1.5}", {{"tensor<2xf32>", {1, 2}}}, "tensor<3xf32>") ==
        std::vector<double>{-1.5, 1, 2});
}

TEST_CASE("softmax, logistic and mean") {
  const auto s = run1("qrt.softmax", "", {{"tensor<2x2xf32>", {0, 0, 1, 3}}}, "tensor<2x2xf32>");
  CHECK(s[0] == 0.5);
  CHECK(s[1] == 0.5);
  CHECK(std::abs(s[2] - 1.0 / (1.0 + std::exp(2.0))) < 1e-7);
  CHECK(std::abs(s[2] + s[3] - 1.0) < 1e-7);
  // Along axis 0 instead: columns [0, 1] and [0, 3].
  const auto s0 = run1("qrt.softmax", "{axis = 0 : i64}", {{"tensor<2x2xf32>", {0, 0, 1, 3}}}, "tensor<2x2xf32>");
  CHECK(std::abs(s0[2] - 1.0 / (1.0 + std::exp(-1.0))) < 1e-7);
  // Quantized: TFLite-style output scale 1/256, zero point -128; equal inputs -> 0.5 each = 0.
  CHECK(run1("qrt.softmax", "", {{"tensor<1x2x!quant.uniform<i8:f32, 0.5>>", {7, 7}}},
             "tensor<1x2x!quant.uniform<i8:f32, 0.00390625:-128>>") == std::vector<double>{0, 0});
  CHECK(run1("qrt.logistic", "", {{"tensor<3xf32>", {0, 100, -100}}}, "tensor<3xf32>")[0] == 0.5);
  CHECK(run1("qrt.logistic", "", {{"tensor<1x!quant.uniform<i8:f32, 0.1>>", {0}}},
             "tensor<1x!quant.uniform<i8:f32, 0.00390625:-128>>") == std::vector<double>{0});
  // mean over H, W of NHWC [1, 2, 2, 2], keepdims: channel 0 [1, 2, 3, 4], channel 1 [10, 20, 30, 40]
  CHECK(run1("qrt.mean", "{axes = [1, 2], keepdims = 1 : i64}", {{"tensor<1x2x2x2xf32>", {1, 10, 2, 20, 3, 30, 4, 40}}},
             "tensor<1x1x1x2xf32>") == std::vector<double>{2.5, 25});
  CHECK(run1("qrt.mean", "{axes = [0]}", {{"tensor<2x3xf32>", {1, 2, 3, 5, 6, 7}}}, "tensor<3xf32>") ==
        std::vector<double>{3, 4, 5});
  // Quantized: sum of (q - zp) = [0, 1, 2, 5] = 8 over 4 -> 2 (s_out 1), + zp_out 3 = 5
  CHECK(run1("qrt.mean", "{axes = [1]}", {{"tensor<1x4x!quant.uniform<i8:f32, 1.0:-1>>", {-1, 0, 1, 4}}},
             "tensor<1x!quant.uniform<i8:f32, 1.0:3>>") == std::vector<double>{5});
}

TEST_CASE("grid_sample: linear, nearest and cubic; zeros, border and reflection padding; align_corners") {
  // x = [[1, 2], [3, 4]]; grid points (x, y) in [-1, 1] along the width, then the height.
  const std::pair<std::string, std::vector<double>> x{"tensor<1x1x2x2xf32>", {1, 2, 3, 4}};
  auto sample = [&](const std::string& attrs, const std::vector<double>& points) {
    const std::string k = std::to_string(points.size() / 2);
    return run1("qrt.grid_sample", attrs, {x, {"tensor<1x1x" + k + "x2xf32>", points}}, "tensor<1x1x1x" + k + "xf32>");
  };
  // Without align_corners the corners are pixel edges: (-1, -1) is (-0.5, -0.5), half outside.
  CHECK(sample("", {0, 0, -1, -1, 1, -1}) == std::vector<double>{2.5, 0.25, 0.5});
  // border: taps outside read the edge; (3, 0) is at x = 3.5, clamped to the last column.
  CHECK(sample("{padding_mode = \"border\"}", {0, 0, -1, -1, 1, -1, 3, 0}) == std::vector<double>{2.5, 1, 2, 3});
  // reflection: x = 3.5 reflects off 1.5 and -0.5 to -0.5, whose taps read column 0.
  CHECK(sample("{padding_mode = \"reflection\"}", {3, 0}) == std::vector<double>{2});
  // nearest rounds half to even: 0.5 -> 0.
  CHECK(sample("{mode = \"nearest\"}", {0, 0, 0.5, 0}) == std::vector<double>{1, 2});
  CHECK(sample("{align_corners = 1 : i64}", {0, 0, 1, 1, -1, 1}) == std::vector<double>{2.5, 4, 3});
  // cubic (a = -0.75) at the centre: weights [-0.09375, 0.59375, 0.59375, -0.09375].
  CHECK(sample("{align_corners = 1 : i64, mode = \"cubic\"}", {-1, -1, 0, 0}) == std::vector<double>{1, 3.525390625});
  CHECK(sample("{align_corners = 1 : i64, mode = \"cubic\", padding_mode = \"border\"}", {0, 0}) ==
        std::vector<double>{2.5});
  // A NaN position interpolates to NaN; an infinite one reads zeros.
  const auto odd = sample("", {std::nan(""), 0, 1e30, 0});
  CHECK(std::isnan(odd[0]));
  CHECK(odd[1] == 0);
  // Errors name the problem.
  auto err = [](const std::string& attrs, const std::string& xt, const std::string& gt, const std::string& rt) {
    auto zeros = [](const std::string& type) {
      auto t = qrt::parse_type(type);
      REQUIRE(t.is_ok());
      return std::vector<double>(size_t(t->num_elements()), 0.0);
    };
    auto y = qrt_test::run_one_op("qrt.grid_sample", attrs, {{xt, zeros(xt)}, {gt, zeros(gt)}}, rt);
    return y.is_ok() ? std::string("ok") : y.status().message();
  };
  CHECK(err("{mode = \"bilinear\"}", "tensor<1x1x2x2xf32>", "tensor<1x1x1x2xf32>", "tensor<1x1x1x1xf32>").find("'mode'") !=
        std::string::npos);
  CHECK(err("", "tensor<1x1x2x2xf32>", "tensor<1x1x1x3xf32>", "tensor<1x1x1x1xf32>").find("grid must be [N, out_1 .. out_2, 2]") !=
        std::string::npos);
  CHECK(err("", "tensor<1x1x2x2xi32>", "tensor<1x1x1x2xf32>", "tensor<1x1x1x1xi32>").find("dequantize around it") !=
        std::string::npos);
  CHECK(err("{padding_mode = \"border\"}", "tensor<1x1x0x2xf32>", "tensor<1x1x1x2xf32>", "tensor<1x1x1x1xf32>")
            .find("empty spatial dimension") != std::string::npos);
  CHECK(err("", "tensor<1x1x0x2xf32>", "tensor<1x1x1x2xf32>", "tensor<1x1x1x1xf32>") == "ok");  // zeros: reads 0
}
