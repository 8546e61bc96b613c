// qrt — the ymm int8 GEMM micro-kernel generator: one mr x nr tile (mr <= 4 or 6 rows of
// packed u8 activations times one 16-column panel of packed s8 weights), s32 accumulation on
// one of three paths (AVX2 vpmaddubsw or vpmaddwd, AVX-VNNI vpdpbusd), then a
// per-column epilogue (bias and zero-point corrections, requantization or dequantization,
// clamping, narrowing) and a store of exactly nr columns.
//
// Calling convention: void tile(const GemmTileArgs* args, const KernelDesc*) — see
// jit/core/microkernel.h for the argument block; the packed layouts are the traits of
// x86_backend.cpp.
//
// Registers:  rdi args   rsi rows 0/1 of A   rax rows 2/3   r11 rows 4/5   rdx A row stride
//             r8 weights rcx k steps left   r9 C row   r10 C stride   r11 epilogue block
//   vpmaddubsw (4 rows):  ymm0-7 accumulators (row r, half j in ymm(2r + j)), ymm8-9 the
//     two 8-column halves of the weight step, ymm10 s16 ones, ymm11 broadcast activations,
//     ymm12-13 products and epilogue temps
//   vpmaddwd (6 rows):    ymm0-11 accumulators, ymm12-13 weights, ymm14 broadcast
//     activations, ymm15 products; the epilogue reuses ymm12-13; few-row tiles run
//     accumulator sets as vpdpbusd's do
//   vpdpbusd (6 rows, VEX): ymm0-11 accumulators, ymm12-13 weights, ymm14-15 broadcast
//     activations: each instruction adds four u8 x s8 products per lane straight to int32;
//     tiles of 1-3 rows run up to 6 accumulator sets (set s in the rows mr·s + r) over
//     interleaved k steps, added into set 0 after the loop
//   desc.q31 (TFLite's requantization): ymm12-14 epilogue temps, its nudge a constant after
//     the code
//   8-bit results of whole panels leave two rows at a time (emit_row_pair_store): the pair
//     order in ymm15, the zero points as words in ymm13, the lower bounds as bytes in ymm14
#include <asmjit/x86.h>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

using namespace asmjit;

x86::Ymm acc(unsigned row, unsigned half) { return x86::Ymm(2 * row + half); }

// The 8-column halves of the panel the tile computes: a tile of at most 8 columns leaves the
// second out (its multiplies would be half of the k loop, for no stored column).
unsigned halves(const KernelDesc& d) { return d.nr > 8 ? 2 : 1; }

// Accumulator sets of few-row tiles. Each vpdpbusd waits for the previous one into its
// accumulator, so a 1-row tile (two chains) ran at a chain's latency per k step: the GEMV
// 1x4096x4096 streamed its weights at 61 GB/s (AMD Zen 5). Consecutive k steps go to
// separate sets, up to 8 chains in the 12 accumulator registers; the sets are summed after
// the k loop. The 1-row vpmaddwd tile gains too (GEMV 104-112 -> 128-139 GOPS on the same
// host; its ceiling is the widening of every weight, BM_peak_dot4/avx2/maddwd_widen). The
// proven vpmaddubsw path streams at the L3's rate already: one set.
unsigned accumulator_sets(const KernelDesc& d) {
  if (d.path != GemmPath::kDot4 && d.path != GemmPath::kMaddwd) return 1;
  const unsigned chains = d.mr * halves(d);
  unsigned sets = 1;
  while (sets * chains < 8 && (sets + 1) * d.mr <= 6) ++sets;
  return sets;
}

// The activation dword of row `r` at the current k step.
x86::Mem a_row(unsigned r) {
  switch (r) {
    case 0: return x86::dword_ptr(x86::rsi);
    case 1: return x86::dword_ptr(x86::rsi, x86::rdx);
    case 2: return x86::dword_ptr(x86::rax);
    case 3: return x86::dword_ptr(x86::rax, x86::rdx);
    case 4: return x86::dword_ptr(x86::r11);
    default: return x86::dword_ptr(x86::r11, x86::rdx);
  }
}

// Window tiles (desc.taps > 0) run a tap loop around the k loop (emit_util.h).
void emit_main_loop(x86::Assembler& a, const KernelDesc& d) {
  const bool maddubs = d.path == GemmPath::kMaddubs, dot4 = d.path == GemmPath::kDot4, windows = d.taps > 0;
  if (windows) emit_push_window_registers(a);
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, a)));
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, a_stride)));
  a.mov(x86::r8, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, w)));
  a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, k_steps)));
  auto row_bases = [&] {
    a.lea(x86::rax, x86::ptr(x86::rsi, x86::rdx, 1));  // rax = A + 2 * stride (shift 1)
    a.lea(x86::r11, x86::ptr(x86::rax, x86::rdx, 1));  // r11 = A + 4 * stride
  };
  row_bases();
  const unsigned nh = halves(d), sets = accumulator_sets(d);
  // The accumulators start at the column's bias (and folded zero-point terms): one load each
  // instead of a zeroing here and an add in the epilogue. r9 holds the C row only later.
  // The other sets' accumulators (rows mr·t + r) start at zero.
  a.mov(x86::r9, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, epilogue)));
  for (unsigned r = 0; r < d.mr; ++r) {
    for (unsigned j = 0; j < nh; ++j) a.vmovdqa(acc(r, j), x86::ymmword_ptr(x86::r9, int32_t(kEpBias * d.panel * 4 + j * 32)));
  }
  for (unsigned r = d.mr; r < sets * d.mr; ++r) {
    for (unsigned j = 0; j < nh; ++j) a.vpxor(acc(r, j), acc(r, j), acc(r, j));
  }
  if (maddubs) {
    a.mov(x86::r9d, 0x00010001u);
    a.vmovd(x86::xmm10, x86::r9d);
    a.vpbroadcastd(x86::ymm10, x86::xmm10);
  }
  Label loop = a.newLabel(), done = a.newLabel(), tap = a.newLabel();
  if (windows) {
    emit_window_tap_head(a, d, tap);
    row_bases();
  }
  // One k step `s` steps past the row and weight pointers.
  const int32_t w_step = maddubs || dot4 ? 64 : 32;
  // Step s adds into accumulator set s % sets (rows mr·set + r).
  auto emit_step = [&](unsigned s) {
    const unsigned base = (s % sets) * d.mr;
    auto row = [&](unsigned r) {
      x86::Mem m = a_row(r);
      m.addOffset(int64_t(4 * s));
      return m;
    };
    const int32_t w = int32_t(s) * w_step;
    if (dot4) {
      a.vmovdqa(x86::ymm12, x86::ymmword_ptr(x86::r8, w));
      if (nh == 2) a.vmovdqa(x86::ymm13, x86::ymmword_ptr(x86::r8, w + 32));
      for (unsigned r = 0; r < d.mr; ++r) {
        const x86::Ymm bcast = (s * d.mr + r) % 2 == 0 ? x86::ymm14 : x86::ymm15;
        a.vpbroadcastd(bcast, row(r));
        for (unsigned j = 0; j < nh; ++j) a.vex().vpdpbusd(acc(base + r, j), bcast, x86::Ymm(12 + j));  // AVX-VNNI
      }
    } else if (maddubs) {
      a.vmovdqa(x86::ymm8, x86::ymmword_ptr(x86::r8, w));
      if (nh == 2) a.vmovdqa(x86::ymm9, x86::ymmword_ptr(x86::r8, w + 32));
      for (unsigned r = 0; r < d.mr; ++r) {
        a.vpbroadcastd(x86::ymm11, row(r));
        for (unsigned j = 0; j < nh; ++j) {
          const x86::Ymm t = j == 0 ? x86::ymm12 : x86::ymm13;
          a.vpmaddubsw(t, x86::ymm11, x86::Ymm(8 + j));  // u8 x s8 pairs -> s16 (proven not to saturate)
          a.vpmaddwd(t, t, x86::ymm10);                  // pairs of s16 -> s32
          a.vpaddd(acc(r, j), acc(r, j), t);
        }
      }
    } else {
      a.vpmovsxbw(x86::ymm12, x86::xmmword_ptr(x86::r8, w));
      if (nh == 2) a.vpmovsxbw(x86::ymm13, x86::xmmword_ptr(x86::r8, w + 16));
      for (unsigned r = 0; r < d.mr; ++r) {
        a.vpbroadcastd(x86::ymm14, row(r));
        for (unsigned j = 0; j < nh; ++j) {
          a.vpmaddwd(x86::ymm15, x86::ymm14, x86::Ymm(12 + j));  // s16 x s16 pairs -> s32, exact
          a.vpaddd(acc(base + r, j), acc(base + r, j), x86::ymm15);
        }
      }
    }
  };
  // `unroll` k steps per iteration (two, or one per accumulator set): the pointer updates and
  // the branch are a quarter of a step's instructions on 16-register tiles. The steps left
  // after the last whole iteration run one at a time into set 0.
  const unsigned unroll = std::max(2u, sets);
  auto advance = [&](unsigned steps) {
    a.add(x86::rsi, int32_t(4 * steps));
    a.add(x86::rax, int32_t(4 * steps));
    if (d.mr > 4) a.add(x86::r11, int32_t(4 * steps));
    a.add(x86::r8, int32_t(steps) * w_step);
  };
  Label whole = a.newLabel(), single = a.newLabel();
  a.sub(x86::rcx, int32_t(unroll));
  a.jb(loop);
  a.align(AlignMode::kCode, 16);
  a.bind(whole);
  for (unsigned s = 0; s < unroll; ++s) emit_step(s);
  advance(unroll);
  a.sub(x86::rcx, int32_t(unroll));
  a.jae(whole);
  a.bind(loop);  // rcx = steps left - unroll
  a.add(x86::rcx, int32_t(unroll));
  a.jz(done);
  a.bind(single);
  emit_step(0);
  // Window tiles read the next tap's weights from r8 on (their rows restart from the tap's offset).
  advance(1);
  a.dec(x86::rcx);
  a.jnz(single);
  a.bind(done);
  if (windows) emit_window_tap_tail(a, tap);
  // The sets' sums into set 0 (integer adds: the order does not change the result).
  for (unsigned r = d.mr; r < sets * d.mr; ++r) {
    for (unsigned j = 0; j < nh; ++j) a.vpaddd(acc(r % d.mr, j), acc(r % d.mr, j), acc(r, j));
  }
}

// The epilogue of row r: corrections, then conversion; leaves the result in acc(r, *).
// `paired`: the row leaves through emit_row_pair_store, which takes the lower bound and the
// zero point in the narrow domains.
void emit_row_epilogue(x86::Assembler& a, const KernelDesc& d, unsigned r, const Label& nudge, bool paired = false) {
  auto ep = [&d](size_t field, unsigned half) {
    return x86::ymmword_ptr(x86::r11, int32_t(field * d.panel * 4 + half * 32));
  };
  for (unsigned j = 0; j < halves(d); ++j) {
    const x86::Ymm v = acc(r, j);  // the bias is in already
    if (d.row_correction) {
      a.vpbroadcastd(x86::ymm12, x86::dword_ptr(x86::rax, int32_t(4 * r)));
      a.vpmulld(x86::ymm12, x86::ymm12, ep(kEpWeightZeroPoint, j));
      a.vpsubd(v, v, x86::ymm12);
    }
    if (d.out == OutKind::kS32) continue;
    if (d.q31) {
      // Temps ymm12-14: free after the main loop on every path.
      emit_q31_requant_ymm(a, v, {x86::ymm12, x86::ymm13, x86::ymm14}, [&](size_t field) { return ep(field, j); }, nudge);
      continue;
    }
    a.vcvtdq2ps(v, v);  // exact below 2^24, else one rounding to nearest even: f32(acc)
    a.vmulps(v, v, ep(kEpMultiplier, j));
    if (d.out == OutKind::kF32) continue;
    // clamp(rne(t) + zo, lo, hi) == clamp(t, lo - zo, hi - zo) rounded, then + zo: the bounds
    // are integers, so clamping before or after rounding agrees. With desc.saturate the
    // bounds on a side are the storage's and rne(t) + zo fits int32: the saturating packs clamp.
    if (!(d.saturate & kSatLower) && !paired) a.vmaxps(v, v, ep(kEpLowerBound, j));
    if (!(d.saturate & kSatUpper)) a.vminps(v, v, ep(kEpUpperBound, j));
    a.vcvtps2dq(v, v);  // MXCSR default: round to nearest even
    if (!paired) a.vpaddd(v, v, ep(kEpOutputZeroPoint, j));
  }
}

void emit_row_store(x86::Assembler& a, const KernelDesc& d, unsigned r, const Label& masks) {
  if (d.out == OutKind::kS32 || d.out == OutKind::kF32) {
    for (unsigned j = 0; j < 2; ++j) {
      const int lanes = int(d.nr) - int(8 * j);
      if (lanes <= 0) break;
      if (lanes >= 8) {
        a.vmovdqu(x86::ymmword_ptr(x86::r9, int32_t(32 * j)), acc(r, j));
      } else {
        a.vmovdqu(x86::ymm13, x86::ymmword_ptr(masks, (8 - lanes) * 4));
        a.vpmaskmovd(x86::ymmword_ptr(x86::r9, int32_t(32 * j)), x86::ymm13, acc(r, j));
      }
    }
    return;
  }
  // Values are inside the output bounds already, or (desc.saturate) inside int32 with the
  // storage bounds as the output bounds: the saturating packs give the clamped bytes.
  a.vpackssdw(x86::ymm12, acc(r, 0), acc(r, halves(d) - 1));  // one half: bytes 8-15 are not stored
  a.vpermq(x86::ymm12, x86::ymm12, 0xD8);
  a.vextracti128(x86::xmm13, x86::ymm12, 1);
  if (d.out == OutKind::kU8) {
    a.vpackuswb(x86::xmm12, x86::xmm12, x86::xmm13);
  } else {
    a.vpacksswb(x86::xmm12, x86::xmm12, x86::xmm13);
  }
  x86gen::store_low_bytes(a, x86::r9, 0, x86::xmm12, d.nr);
}

// Whether 8-bit results of whole 16-column panels leave two rows at a time
// (emit_row_pair_store).
bool stores_row_pairs(const KernelDesc& d) {
  return d.nr == 16 && (d.out == OutKind::kU8 || d.out == OutKind::kS8);
}

// Rows r and r + 1 (their epilogues run with `paired`) at [r9] and [r9 + r10], with the pair
// order in ymm15: vpackssdw per row, one vpack{u,s}swb of both and one vpermd, 4 shuffles per
// 32 results where a row on its own takes 4 per 16. The zero points are added to the packed
// words (vpaddsw, ymm13) and the lower bounds are a vpmax{u,s}b on the bytes (ymm14), per 16
// and 32 results instead of per 8: exact as on zmm (gemm_zmm_epilogue.h gives the argument).
// With desc.q31 the epilogue has done both, and the packs alone narrow.
void emit_row_pair_store(x86::Assembler& a, const KernelDesc& d, unsigned r) {
  const x86::Ymm first = acc(r, 0), second = acc(r + 1, 0);
  a.vpackssdw(first, first, acc(r, 1));
  a.vpackssdw(second, second, acc(r + 1, 1));
  if (!d.q31) {
    a.vpaddsw(first, first, x86::ymm13);
    a.vpaddsw(second, second, x86::ymm13);
  }
  if (d.out == OutKind::kU8) a.vpackuswb(first, first, second);
  else a.vpacksswb(first, first, second);
  a.vpermd(first, x86::ymm15, first);
  if (!d.q31 && !(d.saturate & kSatLower)) {
    if (d.out == OutKind::kU8) a.vpmaxub(first, first, x86::ymm14);
    else a.vpmaxsb(first, first, x86::ymm14);
  }
  a.vmovdqu(x86::xmmword_ptr(x86::r9), first.xmm());
  a.vextracti128(x86::xmmword_ptr(x86::r9, x86::r10), first, 1);
}

// The pair store's constants, after the k loop (ymm12-15 free): the pair order in ymm15 and,
// outside desc.q31, the zero points as words in ymm13 and the lower bounds as output bytes in
// the pair order in ymm14 (lo = (lo - zo) + zo, whole numbers inside the storage range,
// through the packs the rows take).
void emit_pair_constants(x86::Assembler& a, const KernelDesc& d, const Label& order) {
  auto ep = [&d](size_t field, unsigned half) {
    return x86::ymmword_ptr(x86::r11, int32_t(field * d.panel * 4 + half * 32));
  };
  if (!d.q31) {
    a.vmovdqa(x86::ymm13, ep(kEpOutputZeroPoint, 0));
    a.vmovdqa(x86::ymm12, ep(kEpOutputZeroPoint, 1));
    if (!(d.saturate & kSatLower)) {
      a.vcvtps2dq(x86::ymm14, ep(kEpLowerBound, 0));
      a.vpaddd(x86::ymm14, x86::ymm14, x86::ymm13);
      a.vcvtps2dq(x86::ymm15, ep(kEpLowerBound, 1));
      a.vpaddd(x86::ymm15, x86::ymm15, x86::ymm12);
      a.vpackssdw(x86::ymm14, x86::ymm14, x86::ymm15);
      if (d.out == OutKind::kU8) a.vpackuswb(x86::ymm14, x86::ymm14, x86::ymm14);
      else a.vpacksswb(x86::ymm14, x86::ymm14, x86::ymm14);
    }
    a.vpackssdw(x86::ymm13, x86::ymm13, x86::ymm12);
  }
  a.vmovdqa(x86::ymm15, x86::ymmword_ptr(order));
  if (!d.q31 && !(d.saturate & kSatLower)) a.vpermd(x86::ymm14, x86::ymm15, x86::ymm14);
}

// The pair order: per 128-bit lane the packed bytes hold, as dwords, columns 0-3 and 8-11 of
// the first row, then of the second (low lane), and columns 4-7 and 12-15 likewise (high lane).
void emit_pair_order_table(x86::Assembler& a, const Label& order) {
  static const uint32_t indices[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  a.align(AlignMode::kData, 32);
  a.bind(order);
  a.embed(indices, sizeof indices);
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_avx2_gemm(const KernelDesc& d) {
  // The backend's why_not() has checked the tile against its traits.
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  Label masks = a.newLabel(), nudge = a.newLabel(), pair_order = a.newLabel();
  emit_main_loop(a, d);
  a.mov(x86::r9, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, c)));
  a.mov(x86::r10, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, c_stride)));
  a.mov(x86::r11, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, epilogue)));
  a.mov(x86::rax, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, row_sums)));
  const bool pairs = stores_row_pairs(d) && d.mr > 1;
  if (pairs) emit_pair_constants(a, d, pair_order);
  for (unsigned r = 0; r < d.mr;) {
    if (pairs && r + 1 < d.mr) {
      emit_row_epilogue(a, d, r, nudge, !d.q31);
      emit_row_epilogue(a, d, r + 1, nudge, !d.q31);
      emit_row_pair_store(a, d, r);
      r += 2;
      if (r < d.mr) a.lea(x86::r9, x86::ptr(x86::r9, x86::r10, 1));
      continue;
    }
    emit_row_epilogue(a, d, r, nudge);
    emit_row_store(a, d, r, masks);
    if (++r < d.mr) a.add(x86::r9, x86::r10);
  }
  if (d.taps) emit_pop_window_registers(a);
  a.vzeroupper();
  a.ret();
  x86gen::embed_lane_masks(a, masks);
  if (pairs) emit_pair_order_table(a, pair_order);
  if (d.q31) {
    a.align(AlignMode::kData, 32);
    a.bind(nudge);
    for (int i = 0; i < 4; ++i) a.embedUInt64(uint64_t(1) << 30);
  }
  return x86gen::finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
