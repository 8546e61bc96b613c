// qrt — internal to the x86 backend: the per-row epilogue of the zmm GEMM tiles (32-column
// panels), shared by the AVX-512 VNNI tile (gemm_avx512.cpp), whose accumulators live in
// registers, and the AMX tile (gemm_amx.cpp), which reloads each row from its tile store.
//
// Registers: rdi the GemmTileArgs, r11 the panel's epilogue block (kEpFields x 32 lanes);
// emit_zmm_epilogue_setup loads r9 (C row), r10 (C stride), rax (row sums), k1/k2 (store masks
// of the two 16-column halves) and the constants in zmm24-26/29 and k3; the row epilogue
// uses zmm27-31 and k4 as temporaries (r8 is clobbered by the setup).
#pragma once

#include <asmjit/x86.h>

#include "jit/core/microkernel.h"

namespace qrt::jit::x86gen {

/// Loads the epilogue's pointers, store masks and constants (after the k loop: r8, r9, r10,
/// rax, zmm24-31 and k1-k4 are free).
void emit_zmm_epilogue_setup(asmjit::x86::Assembler& a, const KernelDesc& d);
/// Row r's corrections and conversion: `acc0`/`acc1` (columns 0-15 / 16-31, the bias added)
/// become the int32, f32 or clamped 8-bit-range results.
void emit_zmm_row_epilogue(asmjit::x86::Assembler& a, const KernelDesc& d, unsigned r, const asmjit::x86::Zmm& acc0,
                           const asmjit::x86::Zmm& acc1);
/// Stores the row's d.nr results at [r9] (narrowed to 8 bits where d.out says so).
void emit_zmm_row_store(asmjit::x86::Assembler& a, const KernelDesc& d, const asmjit::x86::Zmm& acc0,
                        const asmjit::x86::Zmm& acc1);

}  // namespace qrt::jit::x86gen
