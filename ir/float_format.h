// qrt — floating-point kinds, conversions and MLIR-compatible float formatting.
#pragma once

#include <cstdint>
#include <string>

namespace qrt {

/// The floating-point element types qrt understands.
enum class FloatKind : uint8_t { kF16, kBF16, kF32, kF64 };

/// MLIR spelling of a float kind: "f16", "bf16", "f32", "f64".
const char* float_kind_name(FloatKind kind);
/// Storage size in bytes of one element of `kind`.
unsigned float_kind_bytes(FloatKind kind);
/// Number of significand bits (including the implicit bit): 11, 8, 24, 53.
unsigned float_kind_precision(FloatKind kind);

/// IEEE binary16 bits of `v`, rounded to nearest even (overflow → ±inf, NaN → quiet NaN).
uint16_t f16_bits_from_double(double v);
/// bfloat16 bits of `v`, rounded to nearest even (overflow → ±inf, NaN → quiet NaN).
uint16_t bf16_bits_from_double(double v);
/// The exact value of binary16 `bits`.
float f16_bits_to_float(uint16_t bits);
/// The exact value of bfloat16 `bits`.
float bf16_bits_to_float(uint16_t bits);

/// Rounds `v` to the nearest value representable in `kind` (round half to even).
double round_to_float_kind(double v, FloatKind kind);
/// The raw bit pattern of `v` rounded to `kind`, zero-extended to 64 bits.
uint64_t float_kind_bits(double v, FloatKind kind);
/// The value of the raw bit pattern `bits` of a `kind` float.
double float_kind_from_bits(uint64_t bits, FloatKind kind);

/// Formats `v` (already representable in `kind`) exactly as MLIR's AsmPrinter prints a
/// float of that semantics: `%e`-style with 6 significant digits ("5.000000e-01") when that
/// parses back to the same value, else the shortest natural-precision form
/// ("0.0039215689000000001", "9.765625E-4"), else the hexadecimal bit pattern
/// ("0x4132D68700000000"), which is also used for infinities and NaN.
std::string format_mlir_float(double v, FloatKind kind);

}  // namespace qrt
