// qrt — a dense tensor buffer with a concrete shape, used by every backend.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/graph.h"
#include "ir/types.h"

namespace qrt {

/// A row-major tensor: a fully static Type and its bytes (element_byte_size() each), owned
/// or a view of memory owned elsewhere (a plan's arena, a caller's buffer, a constant).
/// Integers and quantized stored values are little-endian and sign- or zero-extended to
/// their container by the type's signedness; floats use their IEEE layout.
struct Tensor {
  Type type;                     ///< static shape; the element type says how to read the bytes
  std::vector<uint8_t> storage;  ///< owned bytes (empty for a view)
  uint8_t* view = nullptr;       ///< the bytes of a view (null: owned)

  /// A zero-filled tensor of `type` (which must have a static shape).
  static Tensor zeros(const Type& type);
  /// A view of `bytes` (byte_size() of them, owned by the caller) as `type`.
  static Tensor view_of(const Type& type, void* bytes);
  /// The first byte.
  uint8_t* bytes() { return view ? view : storage.data(); }
  const uint8_t* bytes() const { return view ? view : storage.data(); }
  /// num_elements() × element_size().
  size_t byte_size() const { return size_t(num_elements()) * element_size(); }
  /// An owned copy (of a view or of an owned tensor).
  Tensor clone() const;
  /// Number of elements.
  int64_t num_elements() const { return type.num_elements(); }
  /// Bytes per element.
  unsigned element_size() const { return element_byte_size(type.element); }

  /// Element `i` as an integer (integer or quantized element types).
  int64_t int_at(size_t i) const;
  /// Every element as int32 (integer elements of at most 32 bits, e.g. weights and biases):
  /// one pass with the element type resolved once, where int_at() resolves it per element.
  std::vector<int32_t> int32_values() const;
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
