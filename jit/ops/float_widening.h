// qrt — bf16 and f16 tensors on the f32 kernels. The numerics contract computes float math on
// bf16 and f16 in f32 and rounds each result once to the element type when stored
// (docs/numerics.md, compute precision), so a kernel that widens its bf16/f16 operands to f32
// (exact), runs the f32 micro-kernel and rounds its results once gives the reference's bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/types.h"
#include "jit/core/tensor.h"

namespace qrt::jit {

/// Whether `k` is f32, bf16 or f16: the float types the f32 kernels read and write (bf16 and
/// f16 widened to f32 exactly, results rounded once).
bool is_f32_or_narrower(FloatKind k);

/// Whether `e` is a bf16 or f16 float type: the types these kernels widen to f32.
inline bool is_half_float(const ElementType& e) {
  return e.is_float() && (e.float_kind == FloatKind::kBF16 || e.float_kind == FloatKind::kF16);
}

/// The f16 `h` as an f32 (exact; a NaN keeps its payload). Equals f16_bits_to_float
/// (ir/float_format.h) without its double arithmetic.
float f16_to_f32(uint16_t h);

/// `v` rounded to f16 bits (nearest even; overflow to ±inf; subnormals kept; NaN quiet):
/// f16_bits_from_double(v) (ir/float_format.h) on the bits, for the kernels' results.
uint16_t f32_to_f16(float v);

/// `count` bf16 or f16 values (2 bytes each) widened to f32 (exact): f16_to_f32's bits, with
/// the host's conversions where the kernel list installed them (jit/core/half_conversions.h:
/// x86's AVX2 and F16C, eight lanes per step), else portable code.
void widen_to_f32(const uint8_t* src, FloatKind kind, int64_t count, float* dst);

/// `count` f32 values rounded once to bf16 or f16 (nearest even; NaN stays NaN): f32_to_f16's
/// (or the bf16 rounding's) bits, with the host's conversions where installed.
void narrow_from_f32(const float* src, FloatKind kind, int64_t count, uint8_t* dst);

/// The name of the conversions widen_to_f32 and narrow_from_f32 use: the installed ones' (e.g.
/// "avx2+f16c", whatever ISA level a plan is capped at: the bits are the same) or "portable".
const char* host_half_conversions_name();

/// The two conversions in portable code (four-lane generic vectors, SSE2 or NEON at the
/// baseline): what hosts without installed conversions run, and the fallback for the blocks
/// those leave (inf or NaN).
/// Tests check both paths against the scalar functions.
void widen_to_f32_portable(const uint8_t* src, FloatKind kind, int64_t count, float* dst);
void narrow_from_f32_portable(const float* src, FloatKind kind, int64_t count, uint8_t* dst);

/// `v` rounded to `kind` (f32, bf16 or f16), as an f32: a dequantized weight of that expressed
/// type, or a fused clamp's bound on a result of that type (clamping the f32 result with
/// bounds representable in the type before its one rounding gives what the reference's clamp
/// after the rounding gives: rounding is monotonic).
float rounded_to(double v, FloatKind kind);

/// What `describe()` says of a kernel whose operands and results are `kind`: "" for f32 and f64,
/// "bf16 operands widened to f32, results rounded once to bf16; ".
std::string widening_note(FloatKind kind);

/// The float elements of `t` as f32: its own bytes when f32, else widened into `wide`.
const float* f32_elements(const Tensor& t, std::vector<float>& wide);

/// Where a kernel writes `y`'s results as f32: y's bytes when f32, else `wide` (resized).
float* f32_destination(Tensor& y, std::vector<float>& wide);

/// After the kernel: a bf16/f16 `y` receives the f32 results in `wide` rounded once.
void store_f32_results(Tensor& y, const std::vector<float>& wide);

/// Gives back a thread's widening buffer that grew past 1 MiB (a prefill's or a large
/// convolution's), so a thread that once ran a big call does not hold it for its life.
void release_large(std::vector<float>& wide);

}  // namespace qrt::jit
