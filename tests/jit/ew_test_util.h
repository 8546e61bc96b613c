// Test helpers for element-wise programs and the kernels built on them: the program backends
// at the level under test, special f32 and integer values, random tensors, and a check of one
// op (all arguments random) against the reference.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "jit/kernel_list.h"
#include "op_kernel_check.h"

namespace qrt_test {

using namespace qrt::jit;

// The backends that compile programs at the level under test, other than the twin (the
// scalar level's LLVM baseline included when the test runs at scalar).
inline std::vector<const Backend*> program_backends() {
  std::vector<const Backend*> out;
  for (const KernelListRow& row : kernel_list()) {
    if (row.op != KernelOp::kEwProgram || row.isa != qrt_test::test_isa()) continue;
    if (std::string(row.backend->name()) == "ref" || !row.backend->available()) continue;
    out.push_back(row.backend);
  }
  return out;
}

// f32 values that stress the formulas: signed zeros, NaN, infinities, the edges of the exp
// and tanh/erf branches, subnormals, huge values, and random values over many decades.
inline float special_f32(std::mt19937& rng) {
  static const float specials[] = {0.0f, -0.0f, NAN, -NAN, INFINITY, -INFINITY, 1.0f, -1.0f, 0.5f, -0.5f,
                                   0.625f, -0.625f, 4.0f, -4.0f, 9.0f, -9.0f, 88.72283935546875f, 88.7228394f,
                                   -103.972084045410156f, -103.97209f, -87.5f, 1e-40f, -1e-40f, 3.4e38f, -3.4e38f,
                                   2147483647.0f, -2147483648.0f, 128.5f, -128.5f, 255.5f, 2.5f, -2.5f};
  std::uniform_int_distribution<int> pick(0, 3);
  if (pick(rng) == 0) return specials[rng() % (sizeof(specials) / sizeof(specials[0]))];
  const float mag = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  return mag * std::pow(10.0f, float(int(rng() % 9) - 4));
}

inline int64_t special_int(std::mt19937& rng) {
  static const int64_t specials[] = {0, 1, -1, 127, -128, 255, 32767, -32768, 2147483647, -2147483647 - 1, 4294967295};
  if (rng() % 3 == 0) return specials[rng() % (sizeof(specials) / sizeof(specials[0]))];
  return int64_t(rng() % 2001) - 1000;
}

// A random valid program over `inputs` random inputs: loads, then up to `length` random
// instructions on earlier registers of fitting types; the result is the last register of
// the output's type.

// A random tensor of `type` text with special values (f32) or small and extreme integers.
inline qrt::Tensor random_tensor(std::mt19937& rng, const std::string& type) {
  auto t = qrt::parse_type(type);
  REQUIRE_MESSAGE(t.is_ok(), type);
  qrt::Tensor x = qrt::Tensor::zeros(*t);
  const qrt::ElementType& e = x.type.element;
  for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
    if (e.is_float()) {
      x.set_float(i, double(special_f32(rng)));
    } else if (e.is_integer() && e.int_width == 1) {
      x.set_int(i, int64_t(rng() % 2));
    } else if (e.is_integer()) {
      x.set_int(i, special_int(rng));  // wraps to the width
    } else {
      x.set_int(i, e.storage.min + int64_t(rng() % uint64_t(e.storage.max - e.storage.min + 1)));
    }
  }
  return x;
}

// Checks the last op of a graph whose arguments have types `args` (all random inputs) against
// the reference; returns the kernel's description.
inline std::string check_op(std::mt19937& rng, const std::vector<std::string>& args, const std::string& op_text,
                     const std::string& result, const std::string& attrs = "", bool expect_kernel = true) {
  std::string sig, operands, types;
  std::vector<qrt::Tensor> inputs;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string name = "%a" + std::to_string(i);
    sig += (i ? ", " : "") + name + ": " + args[i];
    operands += (i ? ", " : "") + name;
    types += (i ? ", " : "") + args[i];
    inputs.push_back(random_tensor(rng, args[i]));
  }
  const std::string text = "func.func @main(" + sig + ") -> " + result + " {\n  %y = " + op_text + "(" + operands + ")" + attrs + " : (" +
                           types + ") -> " + result + "\n  return %y : " + result + "\n}\n";
  CAPTURE(text);
  return check_last_op(text, inputs, expect_kernel);
}

}  // namespace qrt_test
