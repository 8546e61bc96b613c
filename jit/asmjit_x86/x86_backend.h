// qrt — the x86-64 backend (asmjit generators and AVX2 intrinsics kernels), one Backend per
// ISA level it serves. This header includes no asmjit: the kernel list names the backends.
#pragma once

#include "jit/core/backend.h"
#include "jit/core/half_conversions.h"

namespace qrt::jit {

/// The AVX2 level: every kernel kind, generated with asmjit (packing, clamp and the f32 GEMM
/// are C++ with AVX2 intrinsics).
const Backend& x86_avx2_backend();
/// The AVX-VNNI level: GEMM tiles on VEX vpdpbusd (ymm) and their activation packing.
const Backend& x86_avx2_vnni_backend();
/// The AVX-512 VNNI level: GEMM tiles on EVEX vpdpbusd (zmm), their activation packing, and
/// depthwise convolution on zmm.
const Backend& x86_avx512_vnni_backend();
/// The AMX level: GEMM tiles on AMX-INT8 tdpbusd and their activation packing; every other
/// kind comes from the AVX-512 VNNI level.
const Backend& x86_avx512_amx_backend();

/// The bf16/f16 array conversions on AVX2 and F16C (half_convert_x86.cpp), or nullptr where the
/// host lacks either.
const HalfConversions* x86_half_conversions();

}  // namespace qrt::jit
