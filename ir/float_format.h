// qrt — floating-point kinds, conversions and MLIR-compatible float formatting.
#pragma once

#include <cstdint>
#include <string>

namespace qrt {

/// The floating-point element types qrt understands. The 8-bit kinds and tf32 (MLIR 19's
/// names) are parsed, printed, verified and stored, and their values convert exactly, but no
/// plan runs them (runtime/session.cpp refuses them, naming the value). New kinds go at the
/// end: .qrt files store the enumerator.
enum class FloatKind : uint8_t {
  kF16, kBF16, kF32, kF64,
  kF8E5M2,         ///< IEEE-style: 5 exponent bits (bias 15), 2 mantissa bits, inf and NaN
  kF8E4M3FN,       ///< 4 exponent bits (bias 7), 3 mantissa bits, no inf, NaN = S.1111.111
  kF8E5M2FNUZ,     ///< bias 16, no inf, no -0: NaN = 0x80
  kF8E4M3FNUZ,     ///< bias 8, no inf, no -0: NaN = 0x80
  kF8E4M3B11FNUZ,  ///< bias 11, no inf, no -0: NaN = 0x80
  kF8E4M3,         ///< IEEE-style: 4 exponent bits (bias 7), 3 mantissa bits, inf and NaN
  kTF32,           ///< 8 exponent bits (bias 127), 10 mantissa bits; stored in 4 bytes
};

/// The last FloatKind (for range checks of stored enumerators).
inline constexpr FloatKind kLastFloatKind = FloatKind::kTF32;

/// MLIR spelling of a float kind: "f16", "bf16", "f32", "f64", "f8E4M3FN", "tf32", ...
const char* float_kind_name(FloatKind kind);
/// The kind MLIR spells `name`, if any.
bool float_kind_from_name(const std::string& name, FloatKind* kind);
/// Whether plans compute with `kind` (f16, bf16, f32, f64); the others are IR-only.
bool float_kind_runs(FloatKind kind);
/// Storage size in bytes of one element of `kind`.
unsigned float_kind_bytes(FloatKind kind);
/// Number of significand bits (including the implicit bit): 11, 8, 24, 53.
unsigned float_kind_precision(FloatKind kind);
/// Number of meaningful low bits in an element's storage: 8 × float_kind_bytes(), except
/// tf32's 19 of 32. The stored bits above them are zero in a well-formed constant.
unsigned float_kind_width(FloatKind kind);

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
/// format_mlir_float of the `kind` float with raw bit pattern `bits`, except that a NaN prints
/// as those bits (sign and payload included), which the parser keeps as written.
std::string format_mlir_float_bits(uint64_t bits, FloatKind kind);

}  // namespace qrt
