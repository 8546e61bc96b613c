// qrt — internal to the x86 backend: the per-row epilogue of the zmm GEMM tiles (32-column
// panels), shared by the AVX-512 VNNI tile (gemm_avx512.cpp), whose accumulators live in
// registers, and the AMX tile (gemm_amx.cpp), which reloads each row from its tile store.
//
// Registers: rdi the GemmTileArgs, r11 the panel's epilogue block (kEpFields x 32 lanes);
// emit_zmm_epilogue_setup loads r9 (C row), r10 (C stride), rax (row sums), k1/k2 (store masks
// of the two 16-column halves), the constants in zmm24-26/29 and k3, and for row pairs the
// pair order in the register the tile names (the AVX-512 tile zmm28, the AMX tile zmm23) and
// kPairZeroWords / kPairLowerBytes (zmm25/26); the row epilogue uses zmm27-31 and k4 as
// temporaries (r8 is clobbered by the setup).
//
// Row pairs (zmm_stores_row_pairs): 8-bit results of 17-32 columns leave two rows at a time,
// narrowed by saturating packs — vpackssdw per row, then vpacksswb / vpackuswb of the two
// rows, 4 shuffles per 64 results instead of vpmovsdb's / vpmovusdb's 8 — and one vpermd
// that undoes the packs' 128-bit lane interleave; a panel narrower than 32 stores each row
// under the byte mask in k5. Saturating int32 -> int16 -> 8 bits equals
// saturating int32 -> 8 bits, so the results are those of the single-row narrowing (which
// needs a max with 0 first for u8; the packs do not).
//
// Paired rows outside the Q31 epilogue (zmm_pair_bytes_epilogue) also take the output zero
// point and the lower bound in the narrow domains, per 32 and per 64 results instead of per
// 16: the zero points are added to the packed words with vpaddsw, and the lower bounds
// (whole numbers) are a vpmax{s,u}b on the bytes instead of a vmaxps before rounding. Both
// are exact: rne is monotone, so max(rne(t), lo - zo) = rne(max(t, lo - zo)); every later
// step (+ zo, the saturating packs) is monotone and leaves a bound inside the storage range
// in place, so the max commutes with them; and a word that vpackssdw saturated stays beyond
// the byte range after adding any zero point of 8-bit storage (|zo| <= 255 < 32767 - 255).
#pragma once

#include <asmjit/x86.h>

#include "jit/core/microkernel.h"

namespace qrt::jit::x86gen {

/// The pair epilogue's constants (zmm_pair_bytes_epilogue): the output zero points as
/// packed words, and the lower bounds as output bytes of a row pair.
inline const asmjit::x86::Zmm kPairZeroWords = asmjit::x86::zmm25, kPairLowerBytes = asmjit::x86::zmm26;

/// Whether the tile's rows leave in pairs (emit_zmm_row_pair_store) with the pair order in
/// `order`: 8-bit results, a panel of 17-32 columns, and `order` outside zmm24-31 where the Q31
/// epilogue's constants take them.
bool zmm_stores_row_pairs(const KernelDesc& d, const asmjit::x86::Zmm& order);
/// Whether paired rows take the zero point and the lower bound in the pair store (from
/// kPairZeroWords and kPairLowerBytes, which the setup loads): every epilogue but the Q31
/// one, whose constants use those registers.
bool zmm_pair_bytes_epilogue(const KernelDesc& d);
/// Loads the epilogue's pointers, store masks and constants (after the k loop: r8, r9, r10,
/// rax, zmm24-31 and k1-k4 are free). `pair_order` labels the table that
/// emit_zmm_pair_order_table embeds; it is loaded into `order` only where
/// zmm_stores_row_pairs(d, order).
void emit_zmm_epilogue_setup(asmjit::x86::Assembler& a, const KernelDesc& d, const asmjit::Label& pair_order,
                             const asmjit::x86::Zmm& order);
/// Row r's corrections and conversion: `acc0`/`acc1` (columns 0-15 / 16-31, the bias added)
/// become the int32, f32 or clamped 8-bit-range results. `paired`: the row leaves through
/// emit_zmm_row_pair_store, whose packs saturate u8 at 0 themselves.
void emit_zmm_row_epilogue(asmjit::x86::Assembler& a, const KernelDesc& d, unsigned r, const asmjit::x86::Zmm& acc0,
                           const asmjit::x86::Zmm& acc1, bool paired = false);
/// Stores the row's d.nr results at [r9] (narrowed to 8 bits where d.out says so).
void emit_zmm_row_store(asmjit::x86::Assembler& a, const KernelDesc& d, const asmjit::x86::Zmm& acc0,
                        const asmjit::x86::Zmm& acc1);
/// Stores two rows' 8-bit results (their emit_zmm_row_epilogue run with `paired`) at [r9]
/// (`first0`/`first1`) and [r9 + r10] (`second0`/`second1`), `order` holding the pair order;
/// clobbers all four registers and zmm30.
void emit_zmm_row_pair_store(asmjit::x86::Assembler& a, const KernelDesc& d, const asmjit::x86::Zmm& order,
                             const asmjit::x86::Zmm& first0,
                             const asmjit::x86::Zmm& first1, const asmjit::x86::Zmm& second0,
                             const asmjit::x86::Zmm& second1);
/// Embeds the pair order (vpermd's 16 indices, 64-byte aligned) at `pair_order`, after the
/// code's last instruction.
void emit_zmm_pair_order_table(asmjit::x86::Assembler& a, const asmjit::Label& pair_order);

}  // namespace qrt::jit::x86gen
