// qrt — a dense tensor buffer with a concrete shape, used by every backend.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/graph.h"
#include "ir/types.h"

namespace qrt {

/// A row-major tensor: a fully static Type and its bytes (element_byte_size() each).
/// Integers and quantized stored values are little-endian and sign- or zero-extended to
/// their container by the type's signedness; floats use their IEEE layout.
struct Tensor {
  Type type;                  ///< static shape; the element type says how to read `data`
  std::vector<uint8_t> data;  ///< num_elements() × element_byte_size(type.element) bytes

  /// A zero-filled tensor of `type` (which must have a static shape).
  static Tensor zeros(const Type& type);
  /// Number of elements.
  int64_t num_elements() const { return type.num_elements(); }
  /// Bytes per element.
  unsigned element_size() const { return element_byte_size(type.element); }

  /// Element `i` as an integer (integer or quantized element types).
  int64_t int_at(size_t i) const;
  /// Stores `v` (which must fit the element type) at `i`.
  void set_int(size_t i, int64_t v);
  /// Element `i` as a double (float element types; exact).
  double float_at(size_t i) const;
  /// Stores `v` rounded to the element's float kind at `i`.
  void set_float(size_t i, double v);
};

/// Whether an integer element type reads as unsigned: quantized `u` storage or `ui` integers.
bool element_is_unsigned(const ElementType& element);

}  // namespace qrt
