// qrt — dispatch on a plain (float or integer) element type for the portable kernels that
// template their loops on the C++ element type (cumsum, mod, scatter_nd).
#pragma once

#include <cstdint>

#include "ir/types.h"

namespace qrt::jit {

/// Calls fn with a null pointer of the C++ type of `e`: double for f64, float for other float
/// kinds (callers admit only f32 there), else the integer of e's width and signedness.
template <typename Fn>
void with_plain_element(const ElementType& e, Fn&& fn) {
  if (e.is_float()) return e.float_kind == FloatKind::kF64 ? fn(static_cast<double*>(nullptr)) : fn(static_cast<float*>(nullptr));
  const bool is_signed = e.int_sign != Signedness::kUnsigned;
  switch (e.int_width) {
    case 8: return is_signed ? fn(static_cast<int8_t*>(nullptr)) : fn(static_cast<uint8_t*>(nullptr));
    case 16: return is_signed ? fn(static_cast<int16_t*>(nullptr)) : fn(static_cast<uint16_t*>(nullptr));
    case 32: return is_signed ? fn(static_cast<int32_t*>(nullptr)) : fn(static_cast<uint32_t*>(nullptr));
    default: return is_signed ? fn(static_cast<int64_t*>(nullptr)) : fn(static_cast<uint64_t*>(nullptr));
  }
}

}  // namespace qrt::jit
