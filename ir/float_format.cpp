// qrt — float conversions and MLIR float formatting (see float_format.h).
#include "ir/float_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace qrt {

const char* float_kind_name(FloatKind kind) {
  switch (kind) {
    case FloatKind::kF16: return "f16";
    case FloatKind::kBF16: return "bf16";
    case FloatKind::kF32: return "f32";
    case FloatKind::kF64: return "f64";
  }
  return "?";
}

unsigned float_kind_bytes(FloatKind kind) {
  switch (kind) {
    case FloatKind::kF16:
    case FloatKind::kBF16: return 2;
    case FloatKind::kF32: return 4;
    case FloatKind::kF64: return 8;
  }
  return 0;
}

unsigned float_kind_precision(FloatKind kind) {
  switch (kind) {
    case FloatKind::kF16: return 11;
    case FloatKind::kBF16: return 8;
    case FloatKind::kF32: return 24;
    case FloatKind::kF64: return 53;
  }
  return 0;
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
  }
  return 0;
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
  }
  return 0;
}

double round_to_float_kind(double v, FloatKind kind) {
  return float_kind_from_bits(float_kind_bits(v, kind), kind);
}

namespace {

// A positive decimal `digits × 10^exp`, most significant digit first, no trailing zeros.
struct Decimal {
  std::string digits;
  int exp = 0;
};

// The exact decimal expansion of |v| (v finite, non-zero). glibc prints exactly
// rounded digits, and 800 fractional digits cover every double exactly.
Decimal exact_decimal(double v) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%.800e", std::fabs(v));
  Decimal d;
  const char* p = buf;
  d.digits.push_back(*p++);
  if (*p == '.') ++p;
  while (*p >= '0' && *p <= '9') d.digits.push_back(*p++);
  const int e10 = (*p == 'e') ? std::atoi(p + 1) : 0;
  d.exp = e10 - int(d.digits.size() - 1);
  while (d.digits.size() > 1 && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exp;
  }
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
  Decimal d = exact_decimal(v);
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

std::string hex_bits(double v, FloatKind kind) {
  char buf[32];
  const int width = int(float_kind_bytes(kind) * 2);
  std::snprintf(buf, sizeof buf, "0x%0*llX", width,
                static_cast<unsigned long long>(float_kind_bits(v, kind)));
  return buf;
}

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

}  // namespace qrt
