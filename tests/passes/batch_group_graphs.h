// Test graphs and inputs shared by the batch-group tests (tests/passes/test_expand_batch_groups.cpp
// and tests/runtime/test_batch_groups.cpp): one qrt.conv2d with batch_groups, its weights either
// constants (hex dense literals) or function arguments.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "jit/core/tensor.h"
#include "tests/jit/op_kernel_check.h"

namespace batch_group_test {

/// One convolution's shape and types.
struct ConvCase {
  std::string name;
  bool nchw = false;
  bool quantized = false;       ///< i8 input and result, per-axis i8 filter (constant) or per-tensor (argument)
  bool constant_filter = true;  ///< a constant filter (and bias), or function arguments
  bool bias = false;
  int64_t groups = 2, n = 4, h = 5, w = 6, c = 3, o = 4, k = 3, stride = 1, pad = 0;
  bool dynamic_batch = false;   ///< x's batch dimension `?` (the pass keeps the op whole)
};

inline std::string dims_text(const std::vector<int64_t>& d) {
  std::string s;
  for (int64_t v : d) s += (v < 0 ? std::string("?") : std::to_string(v)) + "x";
  return s;
}

/// The graph's text: `%y = qrt.conv2d(%x, %f[, %b]) {batch_groups = groups}`.
inline std::string conv_text(const ConvCase& c) {
  const int64_t ho = (c.h + 2 * c.pad - c.k) / c.stride + 1, wo = (c.w + 2 * c.pad - c.k) / c.stride + 1;
  const std::vector<int64_t> xd = c.nchw ? std::vector<int64_t>{c.dynamic_batch ? -1 : c.n, c.c, c.h, c.w}
                                         : std::vector<int64_t>{c.dynamic_batch ? -1 : c.n, c.h, c.w, c.c};
  const std::vector<int64_t> fd = c.nchw ? std::vector<int64_t>{c.o, c.c, c.k, c.k} : std::vector<int64_t>{c.o, c.k, c.k, c.c};
  const int64_t yn = c.dynamic_batch ? -1 : c.n / c.groups;
  const std::vector<int64_t> yd = c.nchw ? std::vector<int64_t>{yn, c.o, ho, wo} : std::vector<int64_t>{yn, ho, wo, c.o};
  std::string filter_scales, bias_scales;
  for (int64_t i = 0; i < c.o; ++i) {
    const double s = 0.125 * double(1 << (i % 3));  // 0.125, 0.25, 0.5
    filter_scales += (i ? ", " : "") + std::to_string(s);
    bias_scales += (i ? ", " : "") + std::to_string(0.5 * s);
  }
  const std::string xe = c.quantized ? "!quant.uniform<i8:f32, 0.5:-3>" : "f32";
  const std::string fe = !c.quantized ? "f32"
                         : c.constant_filter ? "!quant.uniform<i8:f32:0, {" + filter_scales + "}>"
                                             : "!quant.uniform<i8:f32, 0.25>";
  const std::string be = !c.quantized ? "f32"
                         : c.constant_filter ? "!quant.uniform<i32:f32:0, {" + bias_scales + "}>"
                                             : "!quant.uniform<i32:f32, 0.125>";
  const std::string ye = c.quantized ? "!quant.uniform<i8:f32, 2.0:1>" : "f32";
  const std::string xt = "tensor<" + dims_text(xd) + xe + ">", ft = "tensor<" + dims_text(fd) + fe + ">",
                    bt = "tensor<" + std::to_string(c.o) + "x" + be + ">", yt = "tensor<" + dims_text(yd) + ye + ">";
  std::string args = "%x: " + xt, body;
  if (c.constant_filter) {
    std::vector<uint8_t> fbytes, bbytes;
    int64_t count = c.o * c.c * c.k * c.k;
    for (int64_t i = 0; i < count; ++i) {
      if (c.quantized) {
        fbytes.push_back(uint8_t(int8_t((i * 37 + 5) % 31 - 15)));
      } else {
        const float v = float((i * 37 + 5) % 19) / 8.0f - 1.0f;
        uint8_t b[4];
        std::memcpy(b, &v, 4);
        fbytes.insert(fbytes.end(), b, b + 4);
      }
    }
    for (int64_t i = 0; i < c.o; ++i) {
      const int32_t q = int32_t(i * 91 - 150);
      const float v = float(q) / 64.0f;
      uint8_t b[4];
      c.quantized ? std::memcpy(b, &q, 4) : std::memcpy(b, &v, 4);
      bbytes.insert(bbytes.end(), b, b + 4);
    }
    const std::string fs = c.quantized ? "i8" : "f32", bs = c.quantized ? "i32" : "f32";
    body += "  %f = \"qrt.constant\"() {value = " + qrt_test::hex_dense(fbytes) + " : tensor<" + dims_text(fd) + fs +
            ">} : () -> " + ft + "\n";
    if (c.bias) {
      body += "  %b = \"qrt.constant\"() {value = " + qrt_test::hex_dense(bbytes) + " : tensor<" + std::to_string(c.o) + "x" +
              bs + ">} : () -> " + bt + "\n";
    }
  } else {
    args += ", %f: " + ft;
    if (c.bias) args += ", %b: " + bt;
  }
  const std::string attrs = "{batch_groups = " + std::to_string(c.groups) + " : i64" +
                            (c.nchw ? std::string(", layout = \"NCHW\"") : std::string()) + ", pads = [" +
                            std::to_string(c.pad) + ", " + std::to_string(c.pad) + ", " + std::to_string(c.pad) + ", " +
                            std::to_string(c.pad) + "], strides = [" + std::to_string(c.stride) + ", " +
                            std::to_string(c.stride) + "]}";
  body += "  %y = \"qrt.conv2d\"(%x, %f" + std::string(c.bias ? ", %b" : "") + ") " + attrs + " : (" + xt + ", " + ft +
          (c.bias ? ", " + bt : std::string()) + ") -> " + yt + "\n";
  return "func.func @main(" + args + ") -> " + yt + " {\n" + body + "  return %y : " + yt + "\n}\n";
}

/// Inputs of `g` with deterministic values: small integers (stored values of quantized
/// inputs), and the same values / 8 for floats.
inline std::vector<qrt::Tensor> inputs_of(const qrt::Graph& g) {
  std::vector<qrt::Tensor> inputs;
  for (int v : g.inputs) {
    qrt::Tensor t = qrt::Tensor::zeros(g.values[size_t(v)].type);
    for (size_t i = 0; i < size_t(t.num_elements()); ++i) {
      const int64_t k = int64_t((i * 53 + 7) % 41) - 20;
      if (t.type.element.is_float()) {
        t.set_float(i, double(k) / 8.0);
      } else {
        t.set_int(i, k);
      }
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

/// The cases both tests run: float and quantized, both layouts, constant and argument
/// weights, strides, pads and a bias.
inline std::vector<ConvCase> conv_cases() {
  return {
      {.name = "float NHWC, constant filter and bias", .bias = true},
      {.name = "float NCHW, filter and bias arguments, 4 groups, stride 2, pad 1", .nchw = true, .constant_filter = false,
       .bias = true, .groups = 4, .n = 8, .o = 8, .stride = 2, .pad = 1},
      {.name = "i8 NHWC, per-axis constant filter and bias, 3 groups, pad 1", .quantized = true, .bias = true, .groups = 3,
       .n = 6, .c = 5, .o = 6, .pad = 1},
      {.name = "i8 NCHW, per-tensor filter argument, 1x1, stride 2", .nchw = true, .quantized = true,
       .constant_filter = false, .c = 17, .k = 1, .stride = 2},
  };
}

}  // namespace batch_group_test
