// qrt — bf16 and f16 tensors on the f32 kernels (float_widening.h).
#include "jit/ops/float_widening.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ir/float_format.h"
#include "jit/core/isa.h"

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

#if defined(__x86_64__)
namespace {

// Eight lanes with AVX2 and F16C (every AVX2 CPU but a few early VIA parts has F16C). The
// blocks give the portable conversions' bits: vcvtph2ps and vcvtps2ph round to nearest even
// whatever MXCSR says (the immediate picks the mode; DAZ only matters for f32 subnormals,
// which narrow to ±0 either way), but vcvtph2ps quiets a signalling NaN and vcvtps2ph keeps
// a NaN's payload where f32_to_f16 makes it canonical, so a block holding an f16 inf/NaN or
// an f32 NaN goes through the portable code. Both return how many elements they converted
// (a multiple of 8); the caller converts the tail.

__attribute__((target("avx2,f16c"))) int64_t widen_f16_x8(const uint8_t* src, int64_t count, float* dst) {
  const __m128i exp_mask = _mm_set1_epi16(0x7C00);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    const __m128i all_ones_exp = _mm_cmpeq_epi16(_mm_and_si128(h, exp_mask), exp_mask);
    if (!_mm_testz_si128(all_ones_exp, all_ones_exp)) {
      widen_to_f32_portable(src + 2 * i, FloatKind::kF16, 8, dst + i);
      continue;
    }
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  return i;
}

__attribute__((target("avx2,f16c"))) int64_t narrow_f16_x8(const float* src, int64_t count, uint8_t* dst) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      narrow_from_f32_portable(src + i, FloatKind::kF16, 8, dst + 2 * i);
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  return i;
}

__attribute__((target("avx2"))) int64_t widen_bf16_x8(const uint8_t* src, int64_t count, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  return i;
}

// narrow_bf16x4's formula on eight lanes: nearest even on the bits (a carry moves into the
// exponent; the sum cannot wrap, as only NaNs lie that high), a NaN made quiet.
__attribute__((target("avx2"))) int64_t narrow_bf16_x8(const float* src, int64_t count, uint8_t* dst) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
  const __m256i half = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(half, odd)), 16);
    const __m256i r = _mm256_blendv_epi8(rounded, _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet), nan);
    // Pack the two 128-bit halves' 16-bit results (vpackusdw works per half) into one.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm256_castsi256_si128(packed));
  }
  return i;
}

}  // namespace
#endif

bool conversions_use_avx2_f16c() {
#if defined(__x86_64__)
  static const bool use = host_cpu_features().avx2 && host_cpu_features().f16c;
  return use;
#else
  return false;
#endif
}

void widen_to_f32(const uint8_t* src, FloatKind kind, int64_t count, float* dst) {
  int64_t done = 0;
#if defined(__x86_64__)
  if (conversions_use_avx2_f16c()) done = kind == FloatKind::kBF16 ? widen_bf16_x8(src, count, dst) : widen_f16_x8(src, count, dst);
#endif
  widen_to_f32_portable(src + 2 * done, kind, count - done, dst + done);
}

void narrow_from_f32(const float* src, FloatKind kind, int64_t count, uint8_t* dst) {
  int64_t done = 0;
#if defined(__x86_64__)
  if (conversions_use_avx2_f16c()) done = kind == FloatKind::kBF16 ? narrow_bf16_x8(src, count, dst) : narrow_f16_x8(src, count, dst);
#endif
  narrow_from_f32_portable(src + done, kind, count - done, dst + 2 * done);
}

float rounded_to(double v, FloatKind kind) { return float(round_to_float_kind(v, kind)); }

std::string widening_note(FloatKind kind) {
  if (kind == FloatKind::kF32) return "";
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
