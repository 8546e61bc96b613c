// qrt — float conversions and MLIR float formatting (see float_format.h).
#include "ir/float_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace qrt {

namespace {

// The layout of the formats narrower than f32 that are not f16/bf16 (APFloat's semantics).
struct SmallFormat {
  int exp_bits;
  int mant_bits;
  int bias;
  enum Special { kIeee, kNanOnlyAllOnes, kNanIsNegativeZero } special;
};

const SmallFormat* small_format(FloatKind kind) {
  static const SmallFormat e5m2{5, 2, 15, SmallFormat::kIeee}, e4m3fn{4, 3, 7, SmallFormat::kNanOnlyAllOnes},
      e5m2fnuz{5, 2, 16, SmallFormat::kNanIsNegativeZero}, e4m3fnuz{4, 3, 8, SmallFormat::kNanIsNegativeZero},
      e4m3b11{4, 3, 11, SmallFormat::kNanIsNegativeZero}, e4m3{4, 3, 7, SmallFormat::kIeee},
      tf32{8, 10, 127, SmallFormat::kIeee};
  switch (kind) {
    case FloatKind::kF8E5M2: return &e5m2;
    case FloatKind::kF8E4M3FN: return &e4m3fn;
    case FloatKind::kF8E5M2FNUZ: return &e5m2fnuz;
    case FloatKind::kF8E4M3FNUZ: return &e4m3fnuz;
    case FloatKind::kF8E4M3B11FNUZ: return &e4m3b11;
    case FloatKind::kF8E4M3: return &e4m3;
    case FloatKind::kTF32: return &tf32;
    default: return nullptr;
  }
}

// The largest finite value of `f`: the top exponent field is a normal binade except in IEEE
// formats, and in the FN formats its all-ones mantissa is NaN.
double small_max_finite(const SmallFormat& f) {
  const int top_field = (1 << f.exp_bits) - (f.special == SmallFormat::kIeee ? 2 : 1);
  const int mant_max = (1 << f.mant_bits) - (f.special == SmallFormat::kNanOnlyAllOnes ? 2 : 1);
  return std::ldexp(double((1 << f.mant_bits) + mant_max), top_field - f.bias - f.mant_bits);
}

uint32_t small_nan(const SmallFormat& f, bool negative) {
  const int width = 1 + f.exp_bits + f.mant_bits;
  if (f.special == SmallFormat::kNanIsNegativeZero) return 1u << (width - 1);
  const uint32_t sign = negative ? 1u << (width - 1) : 0u;
  if (f.special == SmallFormat::kNanOnlyAllOnes) return sign | ((1u << (width - 1)) - 1u);
  return sign | (((1u << f.exp_bits) - 1u) << f.mant_bits) | (1u << (f.mant_bits - 1));  // quiet NaN
}

// Round half to even to `f`; overflow gives inf (IEEE formats) or NaN (formats without inf),
// as APFloat's conversion does. The formats without -0 turn -0 into +0.
uint32_t small_encode(double v, const SmallFormat& f) {
  const int width = 1 + f.exp_bits + f.mant_bits;
  const bool negative = std::signbit(v);
  if (std::isnan(v)) return small_nan(f, negative);
  const uint32_t sign = negative ? 1u << (width - 1) : 0u;
  const double a = std::fabs(v);
  const int emin = 1 - f.bias;  // exponent of the smallest normal
  const double max_finite = small_max_finite(f);
  const uint32_t inf = sign | (((1u << f.exp_bits) - 1u) << f.mant_bits);
  if (std::isinf(a)) return f.special == SmallFormat::kIeee ? inf : small_nan(f, negative);
  // Scaling by a power of two is exact, so nearbyint() is the one rounding step.
  const int e = a == 0.0 ? emin : std::max(std::ilogb(a), emin);
  const double r = std::ldexp(std::nearbyint(std::ldexp(a, f.mant_bits - e)), e - f.mant_bits);
  if (r > max_finite) return f.special == SmallFormat::kIeee ? inf : small_nan(f, negative);
  if (r == 0.0) return f.special == SmallFormat::kNanIsNegativeZero ? 0u : sign;  // no -0 there
  const int re = std::ilogb(r);
  if (re < emin) return sign | uint32_t(std::ldexp(r, f.mant_bits - emin));  // subnormal
  const uint32_t mant = uint32_t(std::ldexp(r, f.mant_bits - re)) - (1u << f.mant_bits);
  return sign | (uint32_t(re + f.bias) << f.mant_bits) | mant;
}

double small_decode(uint32_t bits, const SmallFormat& f) {
  const int width = 1 + f.exp_bits + f.mant_bits;
  bits &= (width == 32 ? ~0u : (1u << width) - 1u);
  if (bits == small_nan(f, false) || bits == small_nan(f, true)) return std::nan("");
  const bool negative = (bits >> (width - 1)) & 1u;
  const uint32_t field = (bits >> f.mant_bits) & ((1u << f.exp_bits) - 1u);
  const uint32_t mant = bits & ((1u << f.mant_bits) - 1u);
  double v;
  if (f.special == SmallFormat::kIeee && field == (1u << f.exp_bits) - 1u) {
    v = mant ? std::nan("") : INFINITY;
  } else if (field == 0) {
    v = std::ldexp(double(mant), 1 - f.bias - f.mant_bits);
  } else {
    v = std::ldexp(double(mant | (1u << f.mant_bits)), int(field) - f.bias - f.mant_bits);
  }
  return negative ? -v : v;
}

}  // namespace

const char* float_kind_name(FloatKind kind) {
  switch (kind) {
    case FloatKind::kF16: return "f16";
    case FloatKind::kBF16: return "bf16";
    case FloatKind::kF32: return "f32";
    case FloatKind::kF64: return "f64";
    case FloatKind::kF8E5M2: return "f8E5M2";
    case FloatKind::kF8E4M3FN: return "f8E4M3FN";
    case FloatKind::kF8E5M2FNUZ: return "f8E5M2FNUZ";
    case FloatKind::kF8E4M3FNUZ: return "f8E4M3FNUZ";
    case FloatKind::kF8E4M3B11FNUZ: return "f8E4M3B11FNUZ";
    case FloatKind::kF8E4M3: return "f8E4M3";
    case FloatKind::kTF32: return "tf32";
  }
  return "?";
}

bool float_kind_from_name(const std::string& name, FloatKind* kind) {
  for (int k = 0; k <= int(kLastFloatKind); ++k) {
    if (name == float_kind_name(FloatKind(k))) {
      *kind = FloatKind(k);
      return true;
    }
  }
  return false;
}

bool float_kind_runs(FloatKind kind) { return small_format(kind) == nullptr; }

unsigned float_kind_bytes(FloatKind kind) {
  switch (kind) {
    case FloatKind::kF16:
    case FloatKind::kBF16: return 2;
    case FloatKind::kF32:
    case FloatKind::kTF32: return 4;
    case FloatKind::kF64: return 8;
    default: return 1;  // the f8 kinds
  }
}

unsigned float_kind_width(FloatKind kind) {
  const SmallFormat* f = small_format(kind);
  return f ? unsigned(1 + f->exp_bits + f->mant_bits) : 8 * float_kind_bytes(kind);
}

unsigned float_kind_precision(FloatKind kind) {
  switch (kind) {
    case FloatKind::kF16: return 11;
    case FloatKind::kBF16: return 8;
    case FloatKind::kF32: return 24;
    case FloatKind::kF64: return 53;
    default: return unsigned(small_format(kind)->mant_bits + 1);
  }
}

namespace {

// Encodes `v` into a small binary format with `mant_bits` stored fraction bits and
// exponent bias `bias` (exponent field width follows from the total of 16 bits).
// Scaling a double by a power of two is exact, so nearbyint() under the default
// rounding mode performs the single round-half-to-even step.
uint16_t encode_small_float(double v, int mant_bits, int bias) {
  const int exp_bits = 15 - mant_bits;
  const uint16_t sign = std::signbit(v) ? uint16_t(0x8000) : uint16_t(0);
  const uint16_t exp_all_ones = uint16_t(((1u << exp_bits) - 1u) << mant_bits);
  if (std::isnan(v)) return uint16_t(sign | exp_all_ones | (1u << (mant_bits - 1)));
  const double a = std::fabs(v);
  if (std::isinf(a)) return uint16_t(sign | exp_all_ones);
  const int emin = 1 - bias;  // exponent of the smallest normal
  if (a < std::ldexp(1.0, emin)) {
    // Subnormal range: units of 2^(emin - mant_bits); a carry into the smallest normal
    // yields the right bit pattern by construction.
    const double units = std::nearbyint(std::ldexp(a, mant_bits - emin));
    return uint16_t(sign | uint16_t(units));
  }
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exponent = e - 1;
  double sig = std::nearbyint(std::ldexp(a, mant_bits - exponent));  // in [2^m, 2^(m+1)]
  if (sig >= std::ldexp(1.0, mant_bits + 1)) {
    sig = std::ldexp(1.0, mant_bits);
    ++exponent;
  }
  if (exponent + bias >= (1 << exp_bits) - 1) return uint16_t(sign | exp_all_ones);
  const uint32_t frac = uint32_t(sig) - (1u << mant_bits);
  return uint16_t(sign | uint16_t(uint32_t(exponent + bias) << mant_bits) | frac);
}

float decode_small_float(uint16_t bits, int mant_bits, int bias) {
  const int exp_bits = 15 - mant_bits;
  const bool neg = (bits & 0x8000) != 0;
  const int exp_field = (bits >> mant_bits) & ((1 << exp_bits) - 1);
  const uint32_t frac = bits & ((1u << mant_bits) - 1u);
  double v;
  if (exp_field == (1 << exp_bits) - 1) {
    v = frac ? std::nan("") : INFINITY;
  } else if (exp_field == 0) {
    v = std::ldexp(double(frac), 1 - bias - mant_bits);
  } else {
    v = std::ldexp(double(frac | (1u << mant_bits)), exp_field - bias - mant_bits);
  }
  return float(neg ? -v : v);
}

}  // namespace

uint16_t f16_bits_from_double(double v) { return encode_small_float(v, 10, 15); }
uint16_t bf16_bits_from_double(double v) { return encode_small_float(v, 7, 127); }
float f16_bits_to_float(uint16_t bits) { return decode_small_float(bits, 10, 15); }
float bf16_bits_to_float(uint16_t bits) { return decode_small_float(bits, 7, 127); }

uint64_t float_kind_bits(double v, FloatKind kind) {
  switch (kind) {
    case FloatKind::kF16: return f16_bits_from_double(v);
    case FloatKind::kBF16: return bf16_bits_from_double(v);
    case FloatKind::kF32: {
      const float f = float(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case FloatKind::kF64: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    default: return small_encode(v, *small_format(kind));
  }
}

double float_kind_from_bits(uint64_t bits, FloatKind kind) {
  switch (kind) {
    case FloatKind::kF16: return f16_bits_to_float(uint16_t(bits));
    case FloatKind::kBF16: return bf16_bits_to_float(uint16_t(bits));
    case FloatKind::kF32: {
      const uint32_t b = uint32_t(bits);
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    case FloatKind::kF64: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    default: return small_decode(uint32_t(bits), *small_format(kind));
  }
}

double round_to_float_kind(double v, FloatKind kind) {
  return float_kind_from_bits(float_kind_bits(v, kind), kind);
}

namespace {

// A positive decimal `digits × 10^exp`, most significant digit first.
struct Decimal {
  std::string digits;
  int exp = 0;
};

// An unsigned big integer in base 2^32, least significant limb first.
using BigUint = std::vector<uint32_t>;

void big_mul_small(BigUint& a, uint32_t m) {
  uint64_t carry = 0;
  for (uint32_t& limb : a) {
    const uint64_t t = uint64_t(limb) * m + carry;
    limb = uint32_t(t);
    carry = t >> 32;
  }
  if (carry) a.push_back(uint32_t(carry));
}

unsigned big_bit_length(const BigUint& a) {
  for (size_t i = a.size(); i-- > 0;) {
    if (a[i]) return unsigned(i * 32) + unsigned(32 - __builtin_clz(a[i]));
  }
  return 0;
}

std::string big_to_decimal(BigUint a) {
  std::string out;
  while (!(a.empty() || (a.size() == 1 && a[0] == 0))) {
    uint64_t rem = 0;
    for (size_t i = a.size(); i-- > 0;) {
      const uint64_t cur = (rem << 32) | a[i];
      a[i] = uint32_t(cur / 1000000000u);
      rem = cur % 1000000000u;
    }
    while (!a.empty() && a.back() == 0) a.pop_back();
    for (int k = 0; k < 9; ++k) {
      out.push_back(char('0' + rem % 10));
      rem /= 10;
    }
  }
  while (out.size() > 1 && out.back() == '0') out.pop_back();  // leading zeros
  return std::string(out.rbegin(), out.rend());
}

// The decimal digits of |v| (finite, non-zero) for a float of `precision` significand bits,
// as LLVM's APFloat::toString produces them before rounding: the exact integer significand
// I (value = I × 10^exp, after stripping trailing binary zeros and turning 2^-e into 5^e),
// truncated by the whole powers of ten that its bit length exceeds what `format_precision`
// digits need (APFloat's AdjustToPrecision on the APInt), trailing zeros dropped.
Decimal apfloat_digits(double v, unsigned format_precision) {
  int e2 = 0;
  const double m = std::frexp(std::fabs(v), &e2);    // |v| = m × 2^e2, m in [0.5, 1)
  uint64_t n = uint64_t(std::ldexp(m, 64 - 11));     // 53-bit integer significand
  int exp = e2 - (64 - 11);
  const int tz = __builtin_ctzll(n);
  n >>= tz;
  exp += tz;
  BigUint big = {uint32_t(n), uint32_t(n >> 32)};
  while (!big.empty() && big.back() == 0) big.pop_back();
  Decimal d;
  if (exp > 0) {
    for (int i = 0; i < exp; ++i) big_mul_small(big, 2);
    exp = 0;
  } else {
    for (int i = 0; i < -exp; ++i) big_mul_small(big, 5);
  }
  d.exp = exp;  // value = I × 10^exp
  const unsigned bits = big_bit_length(big);
  d.digits = big_to_decimal(big);
  const unsigned bits_required = (format_precision * 196 + 58) / 59;
  if (bits > bits_required) {
    const unsigned removable = (bits - bits_required) * 59 / 196;
    if (removable > 0) d.exp += int(removable);
    // Truncation drops the `removable` least significant digits of I.
    d.digits = d.digits.substr(0, d.digits.size() > removable ? d.digits.size() - removable : 0);
  }
  while (d.digits.size() > 1 && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exp;
  }
  if (d.digits.empty()) d.digits = "0";
  return d;
}

// Keeps `precision` significant digits, rounding half up on the next digit, as LLVM's
// APFloat::toString does.
void adjust_to_precision(Decimal& d, unsigned precision) {
  const unsigned n = unsigned(d.digits.size());
  if (n <= precision) return;
  const char next = d.digits[precision];
  std::string kept = d.digits.substr(0, precision);
  d.exp += int(n - precision);
  if (next >= '5') {
    int i = int(kept.size()) - 1;
    while (i >= 0 && kept[size_t(i)] == '9') {
      kept.pop_back();
      ++d.exp;
      --i;
    }
    if (i < 0) {
      kept = "1";
    } else {
      kept[size_t(i)]++;
    }
  }
  while (kept.size() > 1 && kept.back() == '0') {
    kept.pop_back();
    ++d.exp;
  }
  d.digits = kept;
}

// APFloat::toString(str, precision, max_padding, truncate_zero) for a finite non-zero value.
std::string apfloat_to_string(double v, unsigned precision, unsigned max_padding,
                              bool truncate_zero) {
  Decimal d = apfloat_digits(v, precision);
  adjust_to_precision(d, precision);
  std::string s = std::signbit(v) ? "-" : "";
  const unsigned nd = unsigned(d.digits.size());
  bool scientific;
  if (max_padding == 0) {
    scientific = true;
  } else if (d.exp >= 0) {
    scientific = unsigned(d.exp) > max_padding || nd + unsigned(d.exp) > precision;
  } else {
    const int msd = d.exp + int(nd) - 1;
    scientific = msd < 0 && unsigned(-msd) > max_padding;
  }
  if (scientific) {
    int e10 = d.exp + int(nd) - 1;
    s.push_back(d.digits[0]);
    s.push_back('.');
    if (nd == 1 && truncate_zero) {
      s.push_back('0');
    } else {
      s.append(d.digits, 1, std::string::npos);
    }
    if (!truncate_zero && precision > nd - 1) s.append(precision - nd + 1, '0');
    s.push_back(truncate_zero ? 'E' : 'e');
    s.push_back(e10 >= 0 ? '+' : '-');
    std::string ed = std::to_string(e10 < 0 ? -e10 : e10);
    if (!truncate_zero && ed.size() < 2) ed = "0" + ed;
    return s + ed;
  }
  if (d.exp >= 0) return s + d.digits + std::string(size_t(d.exp), '0');
  const int whole = d.exp + int(nd);
  if (whole > 0) {
    s.append(d.digits, 0, size_t(whole));
    s.push_back('.');
    s.append(d.digits, size_t(whole), std::string::npos);
  } else {
    s += "0.";
    s.append(size_t(-whole), '0');
    s += d.digits;
  }
  return s;
}

bool parses_back_exactly(const std::string& text, double v, FloatKind kind) {
  const double parsed = (kind == FloatKind::kF32) ? double(std::strtof(text.c_str(), nullptr))
                                                  : std::strtod(text.c_str(), nullptr);
  return float_kind_bits(parsed, kind) == float_kind_bits(v, kind);
}

std::string hex_of_bits(uint64_t bits, FloatKind kind) {
  char buf[32];
  const int width = int(float_kind_bytes(kind) * 2);
  std::snprintf(buf, sizeof buf, "0x%0*llX", width, static_cast<unsigned long long>(bits));
  return buf;
}

std::string hex_bits(double v, FloatKind kind) { return hex_of_bits(float_kind_bits(v, kind), kind); }

}  // namespace

std::string format_mlir_float(double v, FloatKind kind) {
  if (std::isnan(v) || std::isinf(v)) return hex_bits(v, kind);
  if (v == 0.0) return std::signbit(v) ? "-0.000000e+00" : "0.000000e+00";
  std::string s = apfloat_to_string(v, 6, 0, false);
  if (parses_back_exactly(s, v, kind)) return s;
  const unsigned natural = 2 + float_kind_precision(kind) * 59 / 196;
  s = apfloat_to_string(v, natural, 3, true);
  if (s.find('.') != std::string::npos) return s;
  return hex_bits(v, kind);
}

std::string format_mlir_float_bits(uint64_t bits, FloatKind kind) {
  const double v = float_kind_from_bits(bits, kind);
  // A NaN's sign and payload do not survive a double (small formats decode every NaN to one).
  return std::isnan(v) ? hex_of_bits(bits, kind) : format_mlir_float(v, kind);
}

}  // namespace qrt
