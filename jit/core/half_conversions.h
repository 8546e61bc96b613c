// qrt — array conversions between bf16/f16 and f32 that a backend offers for the host (x86's
// AVX2 and F16C, for instance). The operator layer's widen_to_f32/narrow_from_f32
// (jit/ops/float_widening.h) use them where installed and portable code elsewhere; the bits
// are the same either way. The kernel list installs the host's when it is built.
#pragma once

#include <cstdint>

namespace qrt::jit {

/// Each function converts whole blocks of `block` elements from the start of its arrays and
/// returns how many elements it converted (a multiple of `block`, at most `count`). It stops
/// early at a block it cannot convert with the portable code's bits (an f16 inf/NaN or an f32
/// NaN, whose payload handling differs in hardware); the caller converts that block itself and
/// calls again past it.
struct HalfConversions {
  const char* name;  ///< e.g. "avx2+f16c"
  int64_t block;     ///< elements per block
  int64_t (*widen_bf16)(const uint8_t* src, int64_t count, float* dst);
  int64_t (*widen_f16)(const uint8_t* src, int64_t count, float* dst);
  int64_t (*narrow_bf16)(const float* src, int64_t count, uint8_t* dst);
  int64_t (*narrow_f16)(const float* src, int64_t count, uint8_t* dst);
};

/// Makes `c` (static storage; nullptr: none) the host's conversions. Thread-safe.
void install_half_conversions(const HalfConversions* c);

/// The installed conversions, or nullptr (portable code only).
const HalfConversions* installed_half_conversions();

}  // namespace qrt::jit
