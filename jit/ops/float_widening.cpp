// qrt — bf16 and f16 tensors on the f32 kernels (float_widening.h).
#include "jit/ops/float_widening.h"

#include <cstring>

#include "ir/float_format.h"
#include "jit/core/half_conversions.h"

namespace qrt::jit {

namespace {

// f32 elements of a widening buffer a thread keeps between calls (1 MiB).
constexpr size_t kKeptWideFloats = size_t(1) << 18;

// Four lanes in generic 16-byte vectors (SSE2 or NEON at the baseline, no F16C): the scalar
// formulas below, lane by lane, with selects for their branches, so the array conversions give
// the scalar functions' bits. (Wider generic vectors than the baseline's registers went
// through the stack.)
using u16x4 = uint16_t __attribute__((vector_size(8)));
using u32x4 = uint32_t __attribute__((vector_size(16)));
using i32x4 = int32_t __attribute__((vector_size(16)));
using f32x4 = float __attribute__((vector_size(16)));

template <typename To, typename From>
To bits_as(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  std::memcpy(&t, &v, sizeof t);
  return t;
}

u32x4 splat(uint32_t v) { return u32x4{} + v; }

// f16_to_f32 on four lanes.
u32x4 widen_f16x4(u16x4 h16) {
  const u32x4 h = __builtin_convertvector(h16, u32x4);
  const u32x4 sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, frac = h & 0x3FFu;
  const u32x4 special = splat(0x7F800000u) | (frac << 13), normal = ((exp + 112u) << 23) | (frac << 13);
  const u32x4 sub = bits_as<u32x4>(__builtin_convertvector(bits_as<i32x4>(frac), f32x4) * 5.9604644775390625e-08f);
  return (exp == 0x1Fu ? special : exp != 0u ? normal : sub) | sign;
}

// f32_to_f16 on four lanes.
u16x4 narrow_f16x4(u32x4 x) {
  const u32x4 sign = (x >> 16) & 0x8000u, mag = x & 0x7FFFFFFFu;
  const u32x4 small = bits_as<u32x4>(bits_as<f32x4>(mag) + 0.5f) - 0x3F000000u;
  const u32x4 normal = (mag + 0xFFFu + ((mag >> 13) & 1u) - (112u << 23)) >> 13;
  const u32x4 r = mag > 0x7F800000u    ? splat(0x7E00u)
                  : mag >= 0x477FF000u ? splat(0x7C00u)
                  : mag < 0x38800000u  ? small
                                       : normal;
  return __builtin_convertvector(r | sign, u16x4);
}

// The bf16 narrowing of narrow_from_f32 on four lanes.
u16x4 narrow_bf16x4(u32x4 u) {
  const u32x4 r = (u & 0x7FFFFFFFu) > 0x7F800000u ? (u >> 16) | 0x40u : (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  return __builtin_convertvector(r, u16x4);
}

}  // namespace

bool is_f32_or_narrower(FloatKind k) { return k == FloatKind::kF32 || k == FloatKind::kBF16 || k == FloatKind::kF16; }

float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, frac = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = 0x7F800000u | (frac << 13);  // infinity, or a NaN keeping its payload
  } else if (exp != 0) {
    bits = ((exp + 112u) << 23) | (frac << 13);  // rebias 15 -> 127
  } else {
    const float sub = float(frac) * 5.9604644775390625e-08f;  // frac · 2^-24, exact (0 for ±0)
    std::memcpy(&bits, &sub, 4);
  }
  bits |= sign;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_f16(float v) {
  uint32_t x;
  std::memcpy(&x, &v, 4);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t mag = x & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return uint16_t(sign | 0x7E00u);  // NaN: quiet
  if (mag >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // |v| >= 65520 (or inf): inf
  if (mag < 0x38800000u) {
    // Below 2^-14: units of 2^-24. Adding 0.5 (whose ulp is 2^-24) rounds |v| to a multiple of
    // it, ties to even, in the FPU; a carry to 1024 units is the smallest normal's pattern.
    float m;
    std::memcpy(&m, &mag, 4);
    const float t = m + 0.5f;
    uint32_t tb;
    std::memcpy(&tb, &t, 4);
    return uint16_t(sign | (tb - 0x3F000000u));
  }
  // Normal: drop 13 fraction bits, ties to even (a carry moves into the exponent), rebias.
  const uint32_t r = mag + 0xFFFu + ((mag >> 13) & 1u) - (112u << 23);
  return uint16_t(sign | (r >> 13));
}

void widen_to_f32_portable(const uint8_t* src, FloatKind kind, int64_t count, float* dst) {
  int64_t i = 0;
  if (kind == FloatKind::kBF16) {
    for (; i + 4 <= count; i += 4) {
      u16x4 h;
      std::memcpy(&h, src + 2 * i, sizeof h);
      const u32x4 w = __builtin_convertvector(h, u32x4) << 16;
      std::memcpy(dst + i, &w, sizeof w);
    }
    for (; i < count; ++i) {
      uint16_t b;
      std::memcpy(&b, src + 2 * i, 2);
      dst[i] = bits_as<float>(uint32_t(b) << 16);
    }
    return;
  }
  for (; i + 4 <= count; i += 4) {
    u16x4 h;
    std::memcpy(&h, src + 2 * i, sizeof h);
    const u32x4 w = widen_f16x4(h);
    std::memcpy(dst + i, &w, sizeof w);
  }
  for (; i < count; ++i) {
    uint16_t b;
    std::memcpy(&b, src + 2 * i, 2);
    dst[i] = f16_to_f32(b);
  }
}

void narrow_from_f32_portable(const float* src, FloatKind kind, int64_t count, uint8_t* dst) {
  int64_t i = 0;
  if (kind == FloatKind::kBF16) {
    for (; i + 4 <= count; i += 4) {
      u32x4 u;
      std::memcpy(&u, src + i, sizeof u);
      const u16x4 h = narrow_bf16x4(u);
      std::memcpy(dst + 2 * i, &h, sizeof h);
    }
    for (; i < count; ++i) {
      const uint32_t u = bits_as<uint32_t>(src[i]);
      // A NaN keeps its sign and top payload and turns quiet; else nearest even.
      const uint16_t b = (u & 0x7FFFFFFFu) > 0x7F800000u ? uint16_t((u >> 16) | 0x40u)
                                                          : uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
      std::memcpy(dst + 2 * i, &b, 2);
    }
    return;
  }
  for (; i + 4 <= count; i += 4) {
    u32x4 u;
    std::memcpy(&u, src + i, sizeof u);
    const u16x4 h = narrow_f16x4(u);
    std::memcpy(dst + 2 * i, &h, sizeof h);
  }
  for (; i < count; ++i) {
    const uint16_t b = f32_to_f16(src[i]);
    std::memcpy(dst + 2 * i, &b, 2);
  }
}

const char* host_half_conversions_name() {
  const HalfConversions* c = installed_half_conversions();
  return c ? c->name : "portable";
}

namespace {

// Elements [0, count): `fast(at)` converts whole blocks from `at` and returns how many it did,
// stopping at a block it leaves (inf or NaN); `portable(at, n)` converts those blocks and the
// tail. Without installed conversions (block 0) everything is portable.
template <typename Fast, typename Portable>
void convert_in_blocks(int64_t count, int64_t block, Fast fast, Portable portable) {
  int64_t done = 0;
  while (block > 0) {
    done += fast(done);
    if (count - done < block) break;
    portable(done, block);
    done += block;
  }
  portable(done, count - done);
}

}  // namespace

void widen_to_f32(const uint8_t* src, FloatKind kind, int64_t count, float* dst) {
  const HalfConversions* c = installed_half_conversions();
  auto* const fast = c ? (kind == FloatKind::kBF16 ? c->widen_bf16 : c->widen_f16) : nullptr;
  convert_in_blocks(
      count, c ? c->block : 0, [&](int64_t at) { return fast(src + 2 * at, count - at, dst + at); },
      [&](int64_t at, int64_t n) { widen_to_f32_portable(src + 2 * at, kind, n, dst + at); });
}

void narrow_from_f32(const float* src, FloatKind kind, int64_t count, uint8_t* dst) {
  const HalfConversions* c = installed_half_conversions();
  auto* const fast = c ? (kind == FloatKind::kBF16 ? c->narrow_bf16 : c->narrow_f16) : nullptr;
  convert_in_blocks(
      count, c ? c->block : 0, [&](int64_t at) { return fast(src + at, count - at, dst + 2 * at); },
      [&](int64_t at, int64_t n) { narrow_from_f32_portable(src + at, kind, n, dst + 2 * at); });
}

float rounded_to(double v, FloatKind kind) { return float(round_to_float_kind(v, kind)); }

std::string widening_note(FloatKind kind) {
  if (kind != FloatKind::kBF16 && kind != FloatKind::kF16) return "";
  const std::string name = float_kind_name(kind);
  return name + " operands widened to f32, results rounded once to " + name + "; ";
}

const float* f32_elements(const Tensor& t, std::vector<float>& wide) {
  const FloatKind kind = t.type.element.float_kind;
  if (kind == FloatKind::kF32) return reinterpret_cast<const float*>(t.bytes());
  wide.resize(size_t(t.num_elements()));
  widen_to_f32(t.bytes(), kind, t.num_elements(), wide.data());
  return wide.data();
}

float* f32_destination(Tensor& y, std::vector<float>& wide) {
  if (y.type.element.float_kind == FloatKind::kF32) return reinterpret_cast<float*>(y.bytes());
  wide.resize(size_t(y.num_elements()));
  return wide.data();
}

void store_f32_results(Tensor& y, const std::vector<float>& wide) {
  const FloatKind kind = y.type.element.float_kind;
  if (kind != FloatKind::kF32) narrow_from_f32(wide.data(), kind, y.num_elements(), y.bytes());
}

void release_large(std::vector<float>& wide) {
  if (wide.capacity() > kKeptWideFloats) std::vector<float>().swap(wide);
}

}  // namespace qrt::jit
