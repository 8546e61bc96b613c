// qrt — dynamic i8 activation quantization: the per-call half of a matmul marked
// `activations = "dynamic_i8"` (docs/numerics.md, "Dynamic i8 activations"). The reference and
// every kernel quantize with this one function, so they agree bit for bit.
#pragma once

#include <cstdint>

#include "ir/types.h"

namespace qrt::numerics {

/// The largest number of k values one dynamic-i8 block may hold: Σ_k q·(w − zp) with |q| ≤ 127
/// and |w − zp| ≤ 255 stays in int32.
constexpr int64_t kMaxDynamicBlock = 65536;

/// The activations' block along K for weights of element type `e` with `k` rows: the
/// weights' own block along K (sub-channel), else all of K.
inline int64_t dynamic_i8_block(const ElementType& e, int64_t k) {
  return e.is_sub_channel() && e.block_size_along(0) > 0 ? e.block_size_along(0) : k;
}

/// Quantizes one block of an activation row (`n` values of x) to i8, symmetric:
/// a = max |x|, d = f32(a / 127); q = clamp(rne(f32(x / d)), −127, 127) where d > 0 and q = 0
/// where d = 0 (an all-zero or subnormal block). A block holding a NaN or an infinity gets
/// q = 0 and d = NaN, so every output it reaches is NaN. Writes q[0..n), stores Σ q in
/// *sum and returns d.
float quantize_block_i8(const float* x, int64_t n, int8_t* q, int32_t* sum);

/// One output of a dynamic-i8 matmul: acc = +0, then for each block b in increasing order
/// acc = acc + f32(t[b]) · f32(d[b] · s[b]) (every operation rounded to f32, no FMA), where
/// t[b] = Σ_k q·(w − zp) is the block's exact integer sum, d[b] the activations' and s[b]
/// the weights' scale. Kernels inline the same steps.
inline float dynamic_i8_block_term(int32_t t, float d, float s) {
  const float scale = d * s;
  return float(t) * scale;
}

}  // namespace qrt::numerics
