// Test helpers: tensors from a type string and a list of values, and back.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ir/types.h"
#include "jit/core/tensor.h"

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

}  // namespace qrt_test
