// qrt — the AVX-512 VNNI int8 GEMM micro-kernel generator: one mr x nr tile (mr <= 12 rows of
// packed u8 activations times one 32-column panel of packed s8 weights), accumulated by EVEX
// vpdpbusd — four u8 x s8 products per int32 lane added straight to the accumulator, with no
// 16-bit intermediate, so exact for every input — then the per-column epilogue of the AVX2
// kernel on zmm, and masked stores of exactly nr columns.
//
// Calling convention: void tile(const GemmTileArgs* args, const KernelDesc*) — see
// jit/core/microkernel.h; the packed layout is the dot4 traits of x86_backend.cpp (per k quad,
// per column, 4 bytes).
//
// Registers:  rdi args   rsi rows 0-2 of A   rax rows 3-5   r9 rows 6-8   r10 rows 9-11
//             rdx A row stride   r8 weights   rcx k steps left   r11 epilogue block
//             zmm0-23 accumulators (row r, half j in zmm(2r + j)), zmm28-29 the two 16-column
//             halves of the weight step, zmm30-31 broadcast activations (alternating); tiles
//             of one or two rows run 4 or 2 accumulator sets (set s in zmm(2·mr·s + 2r + j))
//             over interleaved k steps, added into set 0 after the loop
//   epilogue constants of row pairs: zmm25 the zero points as words, zmm26 the lower bounds
//             as bytes
//   epilogue: r11 epilogue block  rax row sums  r9 C row  r10 C stride  k1/k2 the store masks
//             of the two halves, zmm30-31 temps, zmm24 zero (saturating u8 results), zmm28
//             the pair order (8-bit rows stored two at a time: gemm_zmm_epilogue.h);
//             with desc.q31 (TFLite's requantization) zmm24-26/29 and k3 its constants,
//             zmm27/28/30/31 temps, k4 the rounding lanes
#include <asmjit/x86.h>

#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"
#include "jit/asmjit_x86/gemm_zmm_epilogue.h"

namespace qrt::jit::x86gen {

using namespace asmjit;

namespace {

constexpr unsigned kPanel = 32;
// How far ahead of the k loop tiles with KernelDesc::prefetch_weights prefetch their weights.
constexpr int32_t kGemvPrefetchBytes = 2048;

x86::Zmm acc(unsigned row, unsigned half) { return x86::Zmm(2 * row + half); }

// Accumulator sets of the k loop: 4 for one-row tiles, 2 for two rows (8 vpdpbusd chains),
// 1 otherwise (a tile of 3 rows or more has 6 chains or more already). Window tiles keep one:
// their tap loop restarts the k loop per tap.
unsigned accumulator_sets(const KernelDesc& d) {
  if (d.taps > 0) return 1;
  return d.mr == 1 ? 4 : d.mr == 2 ? 2 : 1;
}

// Row r's accumulator for columns 16·half.. in accumulator set `set` (set 0 is acc(r, half)).
x86::Zmm chain_acc(const KernelDesc& d, unsigned set, unsigned row, unsigned half) {
  return x86::Zmm(2 * d.mr * set + 2 * row + half);
}

// The activation dword of row `r` at the current k step: three rows per base register.
x86::Mem a_row(unsigned r) {
  static const x86::Gp bases[] = {x86::rsi, x86::rax, x86::r9, x86::r10};
  const x86::Gp& base = bases[r / 3];
  switch (r % 3) {
    case 0: return x86::dword_ptr(base);
    case 1: return x86::dword_ptr(base, x86::rdx, 0);
    default: return x86::dword_ptr(base, x86::rdx, 1);
  }
}

// Row bases 3 strides apart from rsi.
void emit_row_bases(x86::Assembler& a) {
  a.lea(x86::rax, x86::ptr(x86::rsi, x86::rdx, 1));
  a.add(x86::rax, x86::rdx);
  a.lea(x86::r9, x86::ptr(x86::rax, x86::rdx, 1));
  a.add(x86::r9, x86::rdx);
  a.lea(x86::r10, x86::ptr(x86::r9, x86::rdx, 1));
  a.add(x86::r10, x86::rdx);
}

// Window tiles (desc.taps > 0) run a tap loop around the k loop (emit_util.h).
void emit_main_loop(x86::Assembler& a, const KernelDesc& d) {
  const bool windows = d.taps > 0;
  if (windows) emit_push_window_registers(a);
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, a)));
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, a_stride)));
  a.mov(x86::r8, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, w)));
  a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, k_steps)));
  emit_row_bases(a);
  // The accumulators start at the column's bias (and folded zero-point terms): one load
  // each instead of a zeroing here and an add in the epilogue.
  a.mov(x86::r11, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, epilogue)));
  // A tile of at most 16 columns (a 16-channel layer, the last panel of 144) leaves the
  // second half out: its vpdpbusd would be half of the k loop, for no stored column. One of
  // 17-24 columns (a 24-channel layer) multiplies the second half's first 8 columns on ymm,
  // which Zen 4 runs as one 256-bit operation instead of a zmm's two; the EVEX ymm form zeroes
  // the accumulator's lanes for columns 24-31, which are not stored.
  const unsigned halves = d.nr > 16 ? 2 : 1;
  const bool ymm_second = d.nr > 16 && d.nr <= 24;
  for (unsigned r = 0; r < d.mr; ++r) {
    for (unsigned j = 0; j < halves; ++j) {
      a.vmovdqa32(acc(r, j), x86::zmmword_ptr(x86::r11, int32_t(kEpBias * kPanel * 4 + j * 64)));
    }
  }
  Label loop = a.newLabel(), done = a.newLabel(), tap = a.newLabel();
  if (windows) {
    emit_window_tap_head(a, d, tap);
    emit_row_bases(a);
  }
  const unsigned bases = (d.mr + 2) / 3;
  const x86::Gp base_regs[] = {x86::rsi, x86::rax, x86::r9, x86::r10};
  // One k step of every row into accumulator set `set` (k steps `step` ahead of the bases).
  auto emit_step = [&](unsigned set, unsigned step) {
    a.vmovdqa32(x86::zmm28, x86::zmmword_ptr(x86::r8, int32_t(step * kPanel * 4)));
    if (ymm_second) a.vmovdqa32(x86::ymm29, x86::ymmword_ptr(x86::r8, int32_t(step * kPanel * 4 + 64)));
    else if (halves == 2) a.vmovdqa32(x86::zmm29, x86::zmmword_ptr(x86::r8, int32_t(step * kPanel * 4 + 64)));
    for (unsigned r = 0; r < d.mr; ++r) {
      const x86::Zmm bcast = r % 2 == 0 ? x86::zmm30 : x86::zmm31;
      x86::Mem row = a_row(r);
      row.addOffset(int64_t(4 * step));
      a.vpbroadcastd(bcast, row);
      a.vpdpbusd(chain_acc(d, set, r, 0), bcast, x86::zmm28);
      if (ymm_second) a.vpdpbusd(chain_acc(d, set, r, 1).ymm(), bcast.ymm(), x86::ymm29);
      else if (halves == 2) a.vpdpbusd(chain_acc(d, set, r, 1), bcast, x86::zmm29);
    }
  };
  auto emit_advance = [&](unsigned steps) {
    for (unsigned b = 0; b < bases; ++b) a.add(base_regs[b], int32_t(4 * steps));
    a.add(x86::r8, int32_t(steps * kPanel * 4));
  };
  const unsigned sets = accumulator_sets(d);
  if (sets > 1) {
    // Few rows (GEMV tiles): each row has only two vpdpbusd chains, which vpdpbusd's latency
    // would bound; `sets` interleaved k steps run into their own accumulators, added at the
    // end (int32 sums wrap, so their order does not change the result), then the k steps left.
    for (unsigned set = 1; set < sets; ++set) {
      for (unsigned r = 0; r < d.mr; ++r) {
        for (unsigned j = 0; j < halves; ++j) {
          a.vpxord(chain_acc(d, set, r, j), chain_acc(d, set, r, j), chain_acc(d, set, r, j));
        }
      }
    }
    Label unrolled = a.newLabel(), rest = a.newLabel(), sum = a.newLabel();
    a.cmp(x86::rcx, int32_t(sets));
    a.jb(rest);
    a.align(AlignMode::kCode, 16);
    a.bind(unrolled);
    for (unsigned set = 0; set < sets; ++set) emit_step(set, set);
    // desc.prefetch_weights: one prefetch per 128 bytes of weights, 2 KiB ahead (the
    // adjacent-line prefetcher brings the other half). 1x4096x4096 at 2 threads ran 323-372
    // GOPS without, 395-435 with; at 1 thread it ran 10% slower with (AMD Zen 5), so the
    // driver asks for these tiles only where threads share the weight panels.
    for (unsigned l = 0; d.prefetch_weights && l < sets * kPanel * 4; l += 128) {
      a.prefetcht0(x86::ptr(x86::r8, int32_t(kGemvPrefetchBytes + l)));
    }
    emit_advance(sets);
    a.sub(x86::rcx, int32_t(sets));
    a.cmp(x86::rcx, int32_t(sets));
    a.jae(unrolled);
    a.bind(rest);
    a.test(x86::rcx, x86::rcx);
    a.jz(sum);
    a.bind(loop);
    emit_step(0, 0);
    emit_advance(1);
    a.dec(x86::rcx);
    a.jnz(loop);
    a.bind(sum);
    for (unsigned set = 1; set < sets; ++set) {
      for (unsigned r = 0; r < d.mr; ++r) {
        for (unsigned j = 0; j < halves; ++j) a.vpaddd(acc(r, j), acc(r, j), chain_acc(d, set, r, j));
      }
    }
    a.bind(done);
    if (windows) emit_window_tap_tail(a, tap);
    return;
  }
  a.test(x86::rcx, x86::rcx);
  a.jz(done);
  a.align(AlignMode::kCode, 16);
  a.bind(loop);
  emit_step(0, 0);
  emit_advance(1);
  a.dec(x86::rcx);
  a.jnz(loop);
  a.bind(done);
  if (windows) emit_window_tap_tail(a, tap);
}

x86::Mem ep_field(size_t field, unsigned half) { return x86::zmmword_ptr(x86::r11, int32_t(field * kPanel * 4 + half * 64)); }

// desc.q31: TFLite's requantization (emit_q31_round) with constants zmm25 (nudge), zmm26
// (ones), k3 (odd lanes) and the two halves' odd multipliers in zmm24 / zmm29, loaded once
// per tile; temps zmm27/28/30/31 and k4.
Q31Registers q31_registers(unsigned half) {
  return {x86::zmm25, x86::zmm26, half == 0 ? x86::zmm24 : x86::zmm29, x86::zmm27, x86::zmm28, x86::zmm30, x86::zmm31,
          x86::k3, x86::k4};
}

void emit_q31_setup(x86::Assembler& a, const KernelDesc& d) {
  emit_q31_constants(a, q31_registers(0), x86::r8);
  a.vpsrlq(x86::zmm24, ep_field(kEpMultiplier, 0), 32);
  if (d.nr > 16) a.vpsrlq(x86::zmm29, ep_field(kEpMultiplier, 1), 32);
}

// v = clamp(MultiplyByQuantizedMultiplier(v), lo - zo, hi - zo) + zo per lane.
void emit_q31_requant(x86::Assembler& a, const x86::Zmm& v, unsigned j) {
  emit_q31_round(a, v, q31_registers(j), [j](size_t field) { return ep_field(field, j); });
  a.vpmaxsd(v, v, ep_field(kEpLowerBound, j));
  a.vpaddd(v, v, ep_field(kEpOutputZeroPoint, j));
}

}  // namespace

bool zmm_stores_row_pairs(const KernelDesc& d, const x86::Zmm& order) {
  return d.nr > 16 && d.nr <= kPanel && !(d.q31 && order.id() >= 24) &&
         (d.out == OutKind::kU8 || d.out == OutKind::kS8);
}

bool zmm_pair_bytes_epilogue(const KernelDesc& d) { return !d.q31; }

namespace {

// kPairZeroWords and kPairLowerBytes (zmm_pair_bytes_epilogue); zmm27 and zmm31 are free here.
void emit_zmm_pair_constants(x86::Assembler& a, const KernelDesc& d, const x86::Zmm& order) {
  // The zero points as words in vpackssdw's order of a row's two halves.
  a.vmovdqa32(kPairZeroWords, ep_field(kEpOutputZeroPoint, 0));
  a.vmovdqa32(x86::zmm27, ep_field(kEpOutputZeroPoint, 1));
  if (!(d.saturate & kSatLower)) {
    // The lower bounds as output bytes, lo = (lo - zo) + zo (whole numbers inside the storage
    // range), through the narrowing the rows take: both rows of the pair hold them.
    a.vcvtps2dq(kPairLowerBytes, ep_field(kEpLowerBound, 0));
    a.vpaddd(kPairLowerBytes, kPairLowerBytes, kPairZeroWords);
    a.vcvtps2dq(x86::zmm31, ep_field(kEpLowerBound, 1));
    a.vpaddd(x86::zmm31, x86::zmm31, x86::zmm27);
    a.vpackssdw(kPairLowerBytes, kPairLowerBytes, x86::zmm31);
    if (d.out == OutKind::kU8) a.vpackuswb(kPairLowerBytes, kPairLowerBytes, kPairLowerBytes);
    else a.vpacksswb(kPairLowerBytes, kPairLowerBytes, kPairLowerBytes);
    a.vpermd(kPairLowerBytes, order, kPairLowerBytes);
  }
  a.vpackssdw(kPairZeroWords, kPairZeroWords, x86::zmm27);
}

}  // namespace

void emit_zmm_row_epilogue(x86::Assembler& a, const KernelDesc& d, unsigned r, const x86::Zmm& acc0, const x86::Zmm& acc1,
                           bool paired) {
  auto ep = [](size_t field, unsigned half) {
    return x86::zmmword_ptr(x86::r11, int32_t(field * kPanel * 4 + half * 64));
  };
  for (unsigned j = 0; j < 2; ++j) {
    if (16 * j >= d.nr) break;  // the half holds no stored column
    const x86::Zmm v = j == 0 ? acc0 : acc1;  // the bias is in already
    if (d.row_correction) {
      a.vpbroadcastd(x86::zmm30, x86::dword_ptr(x86::rax, int32_t(4 * r)));
      a.vpmulld(x86::zmm30, x86::zmm30, ep(kEpWeightZeroPoint, j));
      a.vpsubd(v, v, x86::zmm30);
    }
    if (d.out == OutKind::kS32) continue;
    if (d.q31) {
      emit_q31_requant(a, v, j);
      continue;
    }
    a.vcvtdq2ps(v, v);  // exact below 2^24, else one rounding to nearest even: f32(acc)
    a.vmulps(v, v, ep(kEpMultiplier, j));
    if (d.out == OutKind::kF32) continue;
    // Clamping to the integer bounds before rounding equals clamping after. With
    // desc.saturate a side's bounds are the storage's and rne(t) + zo fits int32: the narrowing
    // saturates to them (u8 after a max with 0, vpmovusdb reading its input unsigned). Paired
    // rows take the lower bound and the zero point in the pair store (zmm_pair_bytes_epilogue).
    const bool in_pair_store = paired && zmm_pair_bytes_epilogue(d);
    if (!(d.saturate & kSatLower) && !in_pair_store) a.vmaxps(v, v, ep(kEpLowerBound, j));
    if (!(d.saturate & kSatUpper)) a.vminps(v, v, ep(kEpUpperBound, j));
    a.vcvtps2dq(v, v);  // MXCSR default: round to nearest even
    if (in_pair_store) continue;
    a.vpaddd(v, v, ep(kEpOutputZeroPoint, j));
    if ((d.saturate & kSatLower) && d.out == OutKind::kU8 && !paired) a.vpmaxsd(v, v, x86::zmm24);
  }
}

void emit_zmm_row_pair_store(x86::Assembler& a, const KernelDesc& d, const x86::Zmm& order, const x86::Zmm& first0,
                             const x86::Zmm& first1, const x86::Zmm& second0, const x86::Zmm& second1) {
  // Per 128-bit lane i, dword j of the packed bytes holds columns 4i..4i+3 of half j % 2 of
  // row j / 2; `order` (the pair order) gathers each row's 8 dwords in column order.
  a.vpackssdw(first0, first0, first1);
  a.vpackssdw(second0, second0, second1);
  const bool bytes_epilogue = zmm_pair_bytes_epilogue(d);
  if (bytes_epilogue) {
    a.vpaddsw(first0, first0, kPairZeroWords);
    a.vpaddsw(second0, second0, kPairZeroWords);
  }
  if (d.out == OutKind::kU8) a.vpackuswb(first0, first0, second0);
  else a.vpacksswb(first0, first0, second0);
  a.vpermd(first0, order, first0);
  if (bytes_epilogue && !(d.saturate & kSatLower)) {
    if (d.out == OutKind::kU8) a.vpmaxub(first0, first0, kPairLowerBytes);
    else a.vpmaxsb(first0, first0, kPairLowerBytes);
  }
  if (d.nr == kPanel) {
    a.vmovdqu8(x86::ymmword_ptr(x86::r9), first0.ymm());
    a.vextracti32x8(x86::ymmword_ptr(x86::r9, x86::r10), first0, 1);
    return;
  }
  // A narrower panel (17-31 columns): both rows under the byte mask in k5.
  a.k(x86::k5).vmovdqu8(x86::ymmword_ptr(x86::r9), first0.ymm());
  a.vextracti32x8(x86::ymm30, first0, 1);
  a.k(x86::k5).vmovdqu8(x86::ymmword_ptr(x86::r9, x86::r10), x86::ymm30);
}

void emit_zmm_pair_order_table(x86::Assembler& a, const Label& pair_order) {
  // Result dword p (row p / 8, half p % 8 / 4, lane p % 4) comes from dword 4·lane + 2·row + half.
  uint32_t order[16];
  for (unsigned p = 0; p < 16; ++p) order[p] = 4 * (p % 4) + 2 * (p / 8) + (p % 8) / 4;
  a.align(AlignMode::kData, 64);
  a.bind(pair_order);
  a.embed(order, sizeof order);
}

void emit_zmm_row_store(x86::Assembler& a, const KernelDesc& d, const x86::Zmm& acc0, const x86::Zmm& acc1) {
  const bool wide = d.out == OutKind::kS32 || d.out == OutKind::kF32;
  for (unsigned j = 0; j < 2; ++j) {
    const int lanes = int(d.nr) - int(16 * j);
    if (lanes <= 0) break;
    const x86::KReg mask = j == 0 ? x86::k1 : x86::k2;
    if (wide) {
      const x86::Mem dst = x86::zmmword_ptr(x86::r9, int32_t(64 * j));
      if (lanes >= 16) a.vmovdqu32(dst, (j == 0 ? acc0 : acc1));
      else a.k(mask).vmovdqu32(dst, (j == 0 ? acc0 : acc1));
      continue;
    }
    // The values lie inside the output bounds already (or, with desc.saturate, the
    // narrowing's saturation puts them there).
    if (d.out == OutKind::kU8) a.vpmovusdb(x86::xmm30, (j == 0 ? acc0 : acc1));
    else a.vpmovsdb(x86::xmm30, (j == 0 ? acc0 : acc1));
    const x86::Mem dst = x86::xmmword_ptr(x86::r9, int32_t(16 * j));
    if (lanes >= 16) a.vmovdqu8(dst, x86::xmm30);
    else a.k(mask).vmovdqu8(dst, x86::xmm30);
  }
}

void emit_zmm_epilogue_setup(x86::Assembler& a, const KernelDesc& d, const Label& pair_order, const x86::Zmm& order) {
  // Store masks of the two 16-column halves (only the narrow ones are used).
  for (unsigned j = 0; j < 2; ++j) {
    const int lanes = int(d.nr) - int(16 * j);
    if (lanes <= 0 || lanes >= 16) continue;
    a.mov(x86::r10d, (1u << lanes) - 1);
    a.kmovw(j == 0 ? x86::k1 : x86::k2, x86::r10d);
  }
  a.mov(x86::r9, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, c)));
  a.mov(x86::r10, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, c_stride)));
  a.mov(x86::rax, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, row_sums)));
  if ((d.saturate & kSatLower) && d.out == OutKind::kU8) a.vpxord(x86::zmm24, x86::zmm24, x86::zmm24);
  if (d.q31) emit_q31_setup(a, d);  // the backend refuses q31 with desc.saturate set
  if (zmm_stores_row_pairs(d, order)) {
    if (d.nr < kPanel) {
      a.mov(x86::r8d, uint32_t((uint64_t(1) << d.nr) - 1));  // r10 holds the C stride by now
      a.kmovd(x86::k5, x86::r8d);
    }
    a.vmovdqa32(order, x86::zmmword_ptr(pair_order));
    if (zmm_pair_bytes_epilogue(d)) emit_zmm_pair_constants(a, d, order);
  }
}


Result<std::shared_ptr<ExecutableCode>> generate_avx512_gemm(const KernelDesc& d) {
  // The backend's why_not() has checked the tile against its traits.
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  emit_main_loop(a, d);
  const Label pair_order = a.newLabel();
  emit_zmm_epilogue_setup(a, d, pair_order, x86::zmm28);
  const bool pairs = zmm_stores_row_pairs(d, x86::zmm28);
  for (unsigned r = 0; r < d.mr;) {
    if (pairs && r + 1 < d.mr) {
      emit_zmm_row_epilogue(a, d, r, acc(r, 0), acc(r, 1), true);
      emit_zmm_row_epilogue(a, d, r + 1, acc(r + 1, 0), acc(r + 1, 1), true);
      emit_zmm_row_pair_store(a, d, x86::zmm28, acc(r, 0), acc(r, 1), acc(r + 1, 0), acc(r + 1, 1));
      r += 2;
      if (r < d.mr) a.lea(x86::r9, x86::ptr(x86::r9, x86::r10, 1));
      continue;
    }
    emit_zmm_row_epilogue(a, d, r, acc(r, 0), acc(r, 1));
    emit_zmm_row_store(a, d, acc(r, 0), acc(r, 1));
    if (++r < d.mr) a.add(x86::r9, x86::r10);
  }
  if (d.taps) emit_pop_window_registers(a);
  a.vzeroupper();
  a.ret();
  if (pairs) emit_zmm_pair_order_table(a, pair_order);
  return x86gen::finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
