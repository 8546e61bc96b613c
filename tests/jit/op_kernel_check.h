// Test helpers: random quantized operands and a differential check of one op's generated
// kernel against the reference interpreter.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ir/text_format.h"
#include "isa_levels.h"
#include "jit/kernel_list.h"
#include "jit/ops/select.h"
#include "jit/ref/reference.h"

namespace qrt_test {

/// Quantization of one side of a test op.
struct QuantSpec {
  bool is_signed = false;
  int lo = 0, hi = 255;             ///< storage bounds
  std::vector<double> scales{0.5};  ///< one (per tensor) or per channel
  std::vector<int> zps{0};
  int axis = -1;                    ///< channel axis when per channel
  int bits = 8;                     ///< storage width
  std::string expressed = "f32";    ///< the expressed type

  /// The `!quant.uniform<...>` spelling.
  std::string type() const {
    // In 64 bits: 32-bit storage's 2^31 does not fit an int.
    const int64_t top = (int64_t(1) << (is_signed ? bits - 1 : bits)) - 1, bottom = is_signed ? -top - 1 : 0;
    const bool full = lo == bottom && hi == top;
    std::string s = "!quant.uniform<" + std::string(is_signed ? "i" : "u") + std::to_string(bits);
    if (!full) s += "<" + std::to_string(lo) + ":" + std::to_string(hi) + ">";
    s += ":" + expressed;
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

/// The quantization of an integer matmul or conv under test.
struct QuantCase {
  QuantSpec x, w, out;
  bool bias = false;
  bool accumulator_out = false;
  std::string clamp_attrs;  ///< "" or ", clamp_max = .., clamp_min = .." (a fused clamp)
};

/// Attributes of a random clamp fused into an op whose result is quantized by `out`: "" two
/// times in three, else ", clamp_max = hi : f64, clamp_min = lo : f64" with bounds between
/// stored values near or beyond the storage bounds of channel 0 (other channels get other
/// stored bounds), sometimes on a stored value exactly, sometimes an unbounded max (relu).
inline std::string random_clamp_attrs(std::mt19937& rng, const QuantSpec& out) {
  std::uniform_int_distribution<int> pick(0, 5), stored(out.lo - 4, out.hi + 4);
  if (pick(rng) > 1) return "";
  int a = stored(rng), b = stored(rng);
  if (a > b) std::swap(a, b);
  const double s = out.scales[0], zp = out.zps[0];
  const double offset = pick(rng) < 2 ? 0.0 : 0.37;  // on a stored value, or between two
  const double lo = (a - zp + offset) * s, hi = (b - zp + offset) * s;
  char buf[128];
  if (pick(rng) == 0) {
    std::snprintf(buf, sizeof buf, ", clamp_max = 1.0e+300 : f64, clamp_min = %.17g : f64", lo);
  } else {
    std::snprintf(buf, sizeof buf, ", clamp_max = %.17g : f64, clamp_min = %.17g : f64", hi, lo);
  }
  return buf;
}
/// Random quantization for a contraction of length `k` into `n` channels: u8/s8 activations
/// (sometimes narrow bounds), u8/s8 weights per tensor or per channel along `w_axis`, extreme
/// zero points, scales over five decades, outputs per tensor or per channel along `out_axis`
/// whose scales make some results saturate.
inline QuantCase random_quant_case(std::mt19937& rng, int64_t k, int64_t n, int w_axis, int out_axis) {
  QuantCase c;
  std::uniform_int_distribution<int> coin(0, 1), pick(0, 5);
  std::uniform_real_distribution<double> log_scale(-4.0, 1.0);
  auto zero_point = [&](const QuantSpec& q) {
    switch (pick(rng)) {
      case 0: return q.lo;
      case 1: return q.hi;
      case 2: return std::clamp(0, q.lo, q.hi);
      default: return std::uniform_int_distribution<int>(q.lo, q.hi)(rng);
    }
  };
  c.x.is_signed = coin(rng);
  c.x.lo = c.x.is_signed ? -128 : 0;
  c.x.hi = c.x.is_signed ? 127 : 255;
  if (pick(rng) == 0) c.x.lo += 20, c.x.hi -= 7;  // narrow bounds
  c.x.scales = {std::pow(10.0, log_scale(rng))};
  c.x.zps = {zero_point(c.x)};
  c.w.is_signed = pick(rng) != 0;
  c.w.lo = c.w.is_signed ? -128 : 0;
  c.w.hi = c.w.is_signed ? 127 : 255;
  if (c.w.is_signed && coin(rng)) c.w.lo = -127;
  const bool per_channel = coin(rng);
  c.w.axis = per_channel ? w_axis : -1;
  c.w.scales.clear();
  c.w.zps.clear();
  for (int64_t j = 0; j < (per_channel ? n : 1); ++j) {
    c.w.scales.push_back(std::pow(10.0, log_scale(rng)));
    c.w.zps.push_back(c.w.is_signed ? (coin(rng) ? 0 : zero_point(c.w)) : zero_point(c.w));
  }
  c.bias = coin(rng);
  c.accumulator_out = pick(rng) == 0;
  c.out.is_signed = coin(rng);
  c.out.lo = c.out.is_signed ? -128 : 0;
  c.out.hi = c.out.is_signed ? 127 : 255;
  if (pick(rng) == 0) c.out.lo += 10, c.out.hi -= 10;  // a fused clamp
  // Output scales near the typical accumulator magnitude, some far below (saturation), and
  // in one case of six so far below that acc · multiplier leaves int32 (the kernels' float
  // clamp, not their narrowing, must bound those).
  const double typical = c.x.scales[0] * c.w.scales[0] * std::sqrt(double(k)) * 64.0;
  const bool beyond_int32 = pick(rng) == 0;
  const bool out_per_channel = pick(rng) == 0;
  c.out.axis = out_per_channel ? out_axis : -1;
  c.out.scales.clear();
  c.out.zps.clear();
  for (int64_t j = 0; j < (out_per_channel ? n : 1); ++j) {
    const double decades = beyond_int32 ? std::uniform_real_distribution<double>(-11.0, -8.0)(rng)
                                        : std::uniform_real_distribution<double>(-2.0, 1.0)(rng);
    c.out.scales.push_back(typical * std::pow(10.0, decades));
    c.out.zps.push_back(zero_point(c.out));
  }
  if (!c.accumulator_out) c.clamp_attrs = random_clamp_attrs(rng, c.out);
  return c;
}

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

/// A tensor of type text `type` filled with random_values(rng, n, lo, hi) (stored integers).
inline qrt::Tensor random_stored_tensor(std::mt19937& rng, const std::string& type, int lo, int hi) {
  auto t = qrt::parse_type(type);
  REQUIRE_MESSAGE(t.is_ok(), type);
  qrt::Tensor x = qrt::Tensor::zeros(*t);
  const auto v = random_values(rng, size_t(x.num_elements()), lo, hi);
  for (size_t i = 0; i < v.size(); ++i) x.set_int(i, v[i]);
  return x;
}

/// Bytes of 8-bit stored values.
inline std::vector<uint8_t> bytes_of(const std::vector<int>& values) {
  std::vector<uint8_t> b;
  for (int v : values) b.push_back(uint8_t(v));
  return b;
}

/// Runs each op's tasks on 3 threads started per call, claiming tasks from the end first, so
/// kernels are tested for results that do not depend on the split or the thread count.
class ThreeThreads final : public qrt::jit::Parallel {
 public:
  size_t threads() const override { return 3; }
  bool split_small_work() const override { return true; }
  void for_each(size_t n, qrt::jit::TaskFn fn) override {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < n;) fn(n - 1 - i);
    };
    std::thread a(work), b(work);
    work();
    a.join();
    b.join();
  }
};

/// The backend selection would use for kernels of `op` at the test's level: the most capable
/// allowed level with a kernel-list row for it.
inline const qrt::jit::Backend& test_backend(qrt::jit::KernelOp op) {
  for (qrt::jit::Isa isa : test_isas().by_preference()) {
    if (const qrt::jit::Backend* b = qrt::jit::kernel_list_backend(op, isa)) return *b;
  }
  FAIL("no backend for kernel kind " << qrt::jit::kernel_op_name(op));
  throw 0;  // not reached
}

/// Parses `text` (a one-function graph whose last op is the op under test), runs that op with
/// the kernel chosen at the test's ISA level (QRT_TEST_ISA) and with the reference on `inputs`
/// (the graph's arguments, in order), and checks that both give the same bytes. Where the
/// level's backend has the op's kernel kind, the kernel must come from that level (not a lower
/// one), unless the level declined the shape as one the level below runs faster (AMX's GEMM
/// below k 64). Returns the kernel's description ("" if none was chosen).
inline std::string check_last_op(const std::string& text, const std::vector<qrt::Tensor>& inputs,
                                 bool expect_kernel = true) {
  auto g = qrt::parse_graph(text);
  REQUIRE_MESSAGE(g.is_ok(), std::string(g.status().to_string() + "\n" + text));
  const qrt::Op& op = g->ops.back();
  auto choice = qrt::jit::select_kernel(*g, op, test_isas());
  REQUIRE_MESSAGE(choice.is_ok(), choice.status().to_string());
  if (!choice->kernel) {
    CHECK_MESSAGE(!expect_kernel, std::string("no kernel: " + choice->why_not));
    return "";
  }
  CAPTURE(choice->chain);
  if (const qrt::jit::OpFamily* family = qrt::jit::family_for(*g, op);
      family && family->kind() != qrt::jit::KernelOp::kCount &&
      qrt::jit::kernel_list_backend(family->kind(), test_isa()) && choice->isa != test_isa() &&
      choice->chain.find("the level below is faster there") == std::string::npos &&
      // A quantized op that fell back to an element-wise program: that family's levels count
      // (builds without LLVM interpret programs at the scalar level only).
      !(choice->chain.find("as an element-wise program") != std::string::npos &&
        !qrt::jit::kernel_list_backend(qrt::jit::KernelOp::kEwProgram, test_isa())) &&
      // StableHLO's dequantize-op-quantize: the float op's kernel sets the level (an f32 GEMM
      // where the op's own family has AMX tiles).
      choice->chain.find("numerics profile stablehlo: ") != 0) {
    // The level has this kind of kernel, so the level under test must be the one that ran.
    CHECK_MESSAGE(false, "kernel from " << qrt::jit::isa_name(choice->isa) << " at test level " << test_isa_name()
                                        << ": " << choice->chain);
  }
  // Operands: the input, then the constants' values.
  std::vector<qrt::Tensor> operands;
  operands.reserve(op.operands.size());
  REQUIRE(inputs.size() == g->inputs.size());
  for (int v : op.operands) {
    const auto arg = std::find(g->inputs.begin(), g->inputs.end(), v);
    if (arg != g->inputs.end()) {
      operands.push_back(inputs[size_t(arg - g->inputs.begin())]);
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
  // The same on three threads, into a preallocated result.
  qrt::Tensor threaded = qrt::Tensor::zeros(got->type);
  ThreeThreads three;
  REQUIRE(choice->kernel->run_into(ptrs, threaded, three).is_ok());
  CHECK_MESSAGE(std::equal(threaded.bytes(), threaded.bytes() + threaded.byte_size(), got->bytes()),
                std::string("kernel " + choice->kernel->describe() + " differs on three threads"));
  // In place, where the kernel allows it: the result written over the first operand's bytes.
  if (choice->kernel->can_overwrite_operand(0) && operands[0].byte_size() == got->byte_size()) {
    qrt::Tensor shared = operands[0].clone();
    std::vector<const qrt::Tensor*> in_place = ptrs;
    in_place[0] = &shared;
    qrt::Tensor out = qrt::Tensor::view_of(got->type, shared.bytes());
    REQUIRE(choice->kernel->run_into(in_place, out, three).is_ok());
    CHECK_MESSAGE(std::equal(out.bytes(), out.bytes() + out.byte_size(), got->bytes()),
                  std::string("kernel " + choice->kernel->describe() + " differs in place"));
  }
  REQUIRE(got->type.dims == want->type.dims);
  REQUIRE(got->byte_size() == want->byte_size());
  // Bytes must agree, except that any NaN equals any NaN (docs/numerics.md: which NaN an
  // operation returns is not part of the contract).
  size_t first_diff = got->byte_size();
  const size_t width = got->element_size();
  const bool is_float = got->type.element.is_float();
  for (size_t i = 0; i < got->byte_size() && first_diff == got->byte_size(); ++i) {
    if (got->bytes()[i] == want->bytes()[i]) continue;
    const size_t e = i / width;
    if (is_float && std::isnan(got->float_at(e)) && std::isnan(want->float_at(e))) {
      i = (e + 1) * width - 1;
      continue;
    }
    first_diff = i;
  }
  std::string detail;
  if (first_diff < got->byte_size()) {
    // The element at fault, as both sides hold it.
    const size_t i = first_diff / got->element_size();
    const bool fl = got->type.element.is_float();
    detail = " (element " + std::to_string(i) + ": got " +
             (fl ? std::to_string(got->float_at(i)) : std::to_string(got->int_at(i))) + ", reference " +
             (fl ? std::to_string(want->float_at(i)) : std::to_string(want->int_at(i))) + ")";
  }
  CHECK_MESSAGE(first_diff == got->byte_size(),
                std::string("kernel " + choice->kernel->describe() + " differs from the reference at byte " +
                            std::to_string(first_diff) + " of " + std::to_string(got->byte_size()) + detail));
  return choice->kernel->describe();
}

/// `text` (one function) inside a module that records numerics profile `profile` ("" or
/// "default": `text` unchanged).
inline std::string with_profile(const std::string& text, const std::string& profile) {
  if (profile.empty() || profile == "default") return text;
  return "module attributes {qrt.numerics = \"" + profile + "\"} {\n" + text + "}\n";
}

/// check_last_op for a graph with one argument, `input`.
inline std::string check_last_op(const std::string& text, const qrt::Tensor& input, bool expect_kernel = true) {
  return check_last_op(text, std::vector<qrt::Tensor>{input}, expect_kernel);
}

}  // namespace qrt_test
