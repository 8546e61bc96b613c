// Test helpers: tensors from a type string and a list of values, and back.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ir/types.h"
#include "ir/text_format.h"
#include "jit/core/tensor.h"
#include "jit/ref/reference.h"

namespace qrt_test {

/// A tensor of `type` (e.g. "tensor<2x!quant.uniform<i8:f32, 0.5>>") holding `values`:
/// floats for float types, stored integers otherwise.
inline qrt::Tensor make_tensor(const std::string& type, const std::vector<double>& values) {
  auto t = qrt::parse_type(type);
  REQUIRE_MESSAGE(t.is_ok(), t.status().to_string());
  qrt::Tensor x = qrt::Tensor::zeros(*t);
  REQUIRE(size_t(x.num_elements()) == values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (t->element.is_float()) {
      x.set_float(i, values[i]);
    } else {
      x.set_int(i, int64_t(values[i]));
    }
  }
  return x;
}

/// The elements of `t` as doubles (floats, or stored integers).
inline std::vector<double> values_of(const qrt::Tensor& t) {
  std::vector<double> v;
  for (size_t i = 0; i < size_t(t.num_elements()); ++i) {
    v.push_back(t.type.element.is_float() ? t.float_at(i) : double(t.int_at(i)));
  }
  return v;
}

/// Runs the one-op graph `%y = OP(%a0, %a1...) ATTRS` on the reference with `inputs`
/// (type text, values) under numerics profile `profile`; the result, or the parse/run error.
inline qrt::Result<qrt::Tensor> run_one_op(const std::string& op, const std::string& attrs,
                                           const std::vector<std::pair<std::string, std::vector<double>>>& inputs,
                                           const std::string& result_type,
                                           qrt::NumericsProfile profile = qrt::NumericsProfile::kDefault) {
  std::string args, names, types;
  std::vector<qrt::Tensor> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string n = "%a" + std::to_string(i);
    args += (i ? ", " : "") + n + ": " + inputs[i].first;
    names += (i ? ", " : "") + n;
    types += (i ? ", " : "") + inputs[i].first;
    tensors.push_back(make_tensor(inputs[i].first, inputs[i].second));
  }
  const std::string text = "func.func @main(" + args + ") -> " + result_type + " {\n  %y = \"" + op + "\"(" + names +
                           ") " + attrs + " : (" + types + ") -> " + result_type + "\n  return %y : " + result_type +
                           "\n}\n";
  QRT_ASSIGN_OR_RETURN(qrt::Graph g, qrt::parse_graph(text, "op.mlir"));
  g.numerics = profile;
  QRT_ASSIGN_OR_RETURN(auto out, qrt::run_reference(g, std::move(tensors)));
  return std::move(out.at(0));
}

/// Runs the graph `text` (`file` in messages) on the reference with `inputs` (a type and the
/// values each, so arguments left dynamic take the sizes given): "ok", or the error as qrt
/// prints it.
inline std::string reference_outcome(const std::string& text, const std::string& file,
                                     const std::vector<std::pair<std::string, std::vector<double>>>& inputs) {
  auto g = qrt::parse_graph(text, file);
  if (!g.is_ok()) return "parse: " + g.status().to_string();
  std::vector<qrt::Tensor> tensors;
  for (const auto& [type, values] : inputs) tensors.push_back(make_tensor(type, values));
  auto out = qrt::run_reference(*g, std::move(tensors));
  return out.is_ok() ? std::string("ok") : out.status().to_string();
}

/// run_one_op's result values; the test fails on an error.
inline std::vector<double> run1(const std::string& op, const std::string& attrs,
                                const std::vector<std::pair<std::string, std::vector<double>>>& inputs,
                                const std::string& result_type,
                                qrt::NumericsProfile profile = qrt::NumericsProfile::kDefault) {
  auto y = run_one_op(op, attrs, inputs, result_type, profile);
  REQUIRE_MESSAGE(y.is_ok(), y.status().to_string());
  return values_of(*y);
}

}  // namespace qrt_test
