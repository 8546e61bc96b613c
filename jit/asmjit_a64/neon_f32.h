// qrt — internal to the AArch64 backend: NEON helpers its intrinsics kernels share
// (weight_only_a64.cpp, dynamic_gemm_a64.cpp, f32_kernels_a64.cpp). AArch64 builds only.
#pragma once

#include <arm_neon.h>

namespace qrt::jit::a64gen {

/// qrt.clamp's formula on four lanes: v < lo ? lo : v > hi ? hi : v (NaN passes, -0 stays).
inline float32x4_t clamp4(float32x4_t v, float32x4_t lo, float32x4_t hi) {
  v = vbslq_f32(vcltq_f32(v, lo), lo, v);
  return vbslq_f32(vcgtq_f32(v, hi), hi, v);
}

}  // namespace qrt::jit::a64gen
