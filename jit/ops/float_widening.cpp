// qrt — bf16 and f16 tensors on the f32 kernels (float_widening.h).
#include "jit/ops/float_widening.h"

#include <cstring>

#include "ir/float_format.h"

namespace qrt::jit {

namespace {

// f32 elements of a widening buffer a thread keeps between calls (1 MiB).
constexpr size_t kKeptWideFloats = size_t(1) << 18;

}  // namespace

bool is_f32_or_narrower(FloatKind k) { return k == FloatKind::kF32 || k == FloatKind::kBF16 || k == FloatKind::kF16; }

// `count` bf16 or f16 values widened to f32 (exact).
void widen_to_f32(const uint8_t* src, FloatKind kind, int64_t count, float* dst) {
  for (int64_t i = 0; i < count; ++i) {
    uint16_t b;
    std::memcpy(&b, src + 2 * i, 2);
    if (kind == FloatKind::kBF16) {
      const uint32_t u = uint32_t(b) << 16;
      std::memcpy(dst + i, &u, 4);
    } else {
      dst[i] = f16_bits_to_float(b);
    }
  }
}

// `count` f32 values rounded once to bf16 or f16 (nearest even; NaN stays NaN).
void narrow_from_f32(const float* src, FloatKind kind, int64_t count, uint8_t* dst) {
  for (int64_t i = 0; i < count; ++i) {
    uint16_t b;
    if (kind == FloatKind::kBF16) {
      uint32_t u;
      std::memcpy(&u, src + i, 4);
      b = (u & 0x7FFFFFFFu) > 0x7F800000u ? uint16_t((u >> 16) | 0x40u) : uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    } else {
      b = f16_bits_from_double(double(src[i]));
    }
    std::memcpy(dst + 2 * i, &b, 2);
  }
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
