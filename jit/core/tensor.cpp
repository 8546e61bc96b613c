// qrt — Tensor element access (see tensor.h).
#include "jit/core/tensor.h"

namespace qrt {

bool element_is_unsigned(const ElementType& element) {
  if (element.is_integer()) return element.int_sign == Signedness::kUnsigned;
  return !element.storage.is_signed;
}

Tensor Tensor::zeros(const Type& type) {
  QRT_ASSERT(type.has_static_shape());
  Tensor t;
  t.type = type;
  t.storage.assign(size_t(type.num_elements()) * element_byte_size(type.element), 0);
  return t;
}

Tensor Tensor::view_of(const Type& type, void* bytes) {
  QRT_ASSERT(type.has_static_shape());
  Tensor t;
  t.type = type;
  t.view = static_cast<uint8_t*>(bytes);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t;
  t.type = type;
  t.storage.assign(bytes(), bytes() + byte_size());
  return t;
}

int64_t Tensor::int_at(size_t i) const {
  // One fixed-size load per width: the reference reads every operand through here.
  const unsigned n = element_size();
  const uint8_t* p = bytes() + i * n;
  const bool is_unsigned = element_is_unsigned(type.element);
  switch (n) {
    case 1: return is_unsigned ? int64_t(p[0]) : int64_t(int8_t(p[0]));
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return is_unsigned ? int64_t(v) : int64_t(int16_t(v));
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return is_unsigned ? int64_t(v) : int64_t(int32_t(v));
    }
    case 8: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    default: return 0;  // no storage (calibrated, any)
  }
}

namespace {
template <typename T>
void widen_to_int32(const uint8_t* src, size_t n, int32_t* dst) {
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    dst[i] = int32_t(v);
  }
}
}  // namespace

std::vector<int32_t> Tensor::int32_values() const {
  const size_t n = size_t(num_elements());
  std::vector<int32_t> out(n);
  const bool is_unsigned = element_is_unsigned(type.element);
  switch (element_size()) {
    case 1:
      if (is_unsigned) widen_to_int32<uint8_t>(bytes(), n, out.data());
      else widen_to_int32<int8_t>(bytes(), n, out.data());
      break;
    case 2:
      if (is_unsigned) widen_to_int32<uint16_t>(bytes(), n, out.data());
      else widen_to_int32<int16_t>(bytes(), n, out.data());
      break;
    default:
      // Wider elements: their values are asserted to fit by the callers' types (int32 biases).
      for (size_t i = 0; i < n; ++i) out[i] = int32_t(int_at(i));
  }
  return out;
}

void Tensor::set_int(size_t i, int64_t v) {
  const unsigned n = element_size();
  uint8_t* p = bytes() + i * n;
  // The low n bytes (little-endian), one fixed-size store per width.
  switch (n) {
    case 1: *p = uint8_t(v); break;
    case 2: {
      const uint16_t w = uint16_t(v);
      std::memcpy(p, &w, 2);
      break;
    }
    case 4: {
      const uint32_t w = uint32_t(v);
      std::memcpy(p, &w, 4);
      break;
    }
    case 8: std::memcpy(p, &v, 8); break;
    default: break;
  }
}

double Tensor::float_at(size_t i) const {
  const unsigned n = element_size();
  uint64_t raw = 0;
  std::memcpy(&raw, bytes() + i * n, n);
  return float_kind_from_bits(raw, type.element.float_kind);
}

void Tensor::set_float(size_t i, double v) {
  const unsigned n = element_size();
  const uint64_t raw = float_kind_bits(v, type.element.float_kind);
  std::memcpy(bytes() + i * n, &raw, n);
}

}  // namespace qrt
