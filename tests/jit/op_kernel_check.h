// Test helpers: random quantized operands and a differential check of one op's generated
// kernel against the reference interpreter.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ir/text_format.h"
#include "jit/op_kernels.h"
#include "jit/ref/reference.h"

namespace qrt_test {

/// Quantization of one side of a test op.
struct QuantSpec {
  bool is_signed = false;
  int lo = 0, hi = 255;             ///< storage bounds
  std::vector<double> scales{0.5};  ///< one (per tensor) or per channel
  std::vector<int> zps{0};
  int axis = -1;                    ///< channel axis when per channel

  /// The `!quant.uniform<...>` spelling.
  std::string type() const {
    const bool full = is_signed ? (lo == -128 && hi == 127) : (lo == 0 && hi == 255);
    std::string s = "!quant.uniform<" + std::string(is_signed ? "i8" : "u8");
    if (!full) s += "<" + std::to_string(lo) + ":" + std::to_string(hi) + ">";
    s += ":f32";
    auto param = [&](size_t i) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g:%d", scales[i], zps[i]);
      return std::string(buf);
    };
    if (axis < 0) return s + ", " + param(0) + ">";
    s += ":" + std::to_string(axis) + ", {";
    for (size_t i = 0; i < scales.size(); ++i) s += (i ? ", " : "") + param(i);
    return s + "}>";
  }
};

/// `dims` spelled as MLIR shape text: "2x3x".
inline std::string shape(const std::vector<int64_t>& dims) {
  std::string s;
  for (int64_t d : dims) s += std::to_string(d) + "x";
  return s;
}

/// A hex dense literal of raw little-endian bytes.
inline std::string hex_dense(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789ABCDEF";
  std::string s = "dense<\"0x";
  for (uint8_t b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s + "\">";
}

/// `count` random stored values in [lo, hi]; about one in eight at a bound.
inline std::vector<int> random_values(std::mt19937& rng, size_t count, int lo, int hi) {
  std::vector<int> v(count);
  std::uniform_int_distribution<int> any(lo, hi), pick(0, 15);
  for (int& x : v) {
    const int p = pick(rng);
    x = p == 0 ? lo : p == 1 ? hi : any(rng);
  }
  return v;
}

/// Bytes of 8-bit stored values.
inline std::vector<uint8_t> bytes_of(const std::vector<int>& values) {
  std::vector<uint8_t> b;
  for (int v : values) b.push_back(uint8_t(v));
  return b;
}

/// Parses `text` (a one-function graph whose last op is the op under test), runs that op with
/// its generated kernel and with the reference on `input` (the first argument), and checks
/// that both give the same bytes. Returns the kernel's description ("" if none was chosen).
inline std::string check_last_op(const std::string& text, const qrt::Tensor& input, bool expect_kernel = true) {
  auto g = qrt::parse_graph(text);
  REQUIRE_MESSAGE(g.is_ok(), std::string(g.status().to_string() + "\n" + text));
  const qrt::Op& op = g->ops.back();
  auto choice = qrt::jit::select_kernel(*g, op);
  REQUIRE_MESSAGE(choice.is_ok(), choice.status().to_string());
  if (!choice->kernel) {
    CHECK_MESSAGE(!expect_kernel, std::string("no kernel: " + choice->why_not));
    return "";
  }
  // Operands: the input, then the constants' values.
  std::vector<qrt::Tensor> operands;
  operands.reserve(op.operands.size());
  for (int v : op.operands) {
    if (v == g->inputs[0]) {
      operands.push_back(input);
      continue;
    }
    auto t = qrt::evaluate_op_reference(*g, g->ops[size_t(g->values[size_t(v)].producer)], {});
    REQUIRE(t.is_ok());
    operands.push_back(std::move(t).value());
  }
  std::vector<const qrt::Tensor*> ptrs;
  for (const auto& t : operands) ptrs.push_back(&t);
  auto want = qrt::evaluate_op_reference(*g, op, ptrs);
  REQUIRE_MESSAGE(want.is_ok(), want.status().to_string());
  auto got = choice->kernel->run(ptrs);
  REQUIRE_MESSAGE(got.is_ok(), got.status().to_string());
  REQUIRE(got->type.dims == want->type.dims);
  REQUIRE(got->data.size() == want->data.size());
  size_t first_diff = got->data.size();
  for (size_t i = 0; i < got->data.size() && first_diff == got->data.size(); ++i) {
    if (got->data[i] != want->data[i]) first_diff = i;
  }
  CHECK_MESSAGE(first_diff == got->data.size(),
                std::string("kernel " + choice->kernel->describe() + " differs from the reference at byte " +
                            std::to_string(first_diff) + " of " + std::to_string(got->data.size())));
  return choice->kernel->describe();
}

}  // namespace qrt_test
