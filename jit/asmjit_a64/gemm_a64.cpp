// qrt — AArch64 GEMM tiles (GemmTileArgs, jit/core/microkernel.h) generated with asmjit's
// a64 assembler: up to 4 rows x 16 columns, three multiply paths sharing one epilogue.
//   mlal    (neon):      per k, 16 s8 weights widened to s16; smlal/smlal2 by element of the
//                        row's u8 activations widened to u16. Exact: every product fits s32.
//   sdot4   (neon-dot):  per 4 k, four 16-byte weight registers (4 columns x 4 k each); sdot by
//                        element of the row's s8 quads (a' - 128; the bias holds 128 · Σ w).
//   usmmla8 (neon-i8mm): per 8 k, eight 16-byte weight registers (2 columns x 8 k each) and one
//                        register per row pair (2 rows x 8 k); usmmla gives 2 x 2 blocks that
//                        zip1/zip2 turn back into rows.
// The epilogue adds the bias, subtracts row sums x weight zero points, and stores s32, f32 or
// clamped, rounded (fcvtns: nearest even) and saturated 8-bit values, exactly as the twins.
#include <asmjit/arm/a64assembler.h>

#include <cstddef>
#include <string>

#include "jit/asmjit_a64/generators.h"

namespace qrt::jit::a64gen {

namespace {

using namespace asmjit;
using a64::Assembler;
using a64::GpX;
using a64::VecV;

// The arguments and the tile's row pointers (caller-saved registers only).
const GpX kArgs = a64::x0, kA = a64::x1, kAStride = a64::x2, kW = a64::x3, kKSteps = a64::x4, kC = a64::x5,
          kCStride = a64::x6, kEp = a64::x7, kRowSums = a64::x8, kCount = a64::x13, kTmp = a64::x14, kOut = a64::x15;
GpX row_ptr(unsigned r) { return GpX(9 + r); }  // x9..x12

VecV v(unsigned i) { return VecV(i); }

// Loads the arguments and the row pointers; rows past the tile's reuse its last row.
void load_args(Assembler& a, unsigned mr) {
  a.ldr(kA, a64::ptr(kArgs, offsetof(GemmTileArgs, a)));
  a.ldr(kAStride, a64::ptr(kArgs, offsetof(GemmTileArgs, a_stride)));
  a.ldr(kW, a64::ptr(kArgs, offsetof(GemmTileArgs, w)));
  a.ldr(kKSteps, a64::ptr(kArgs, offsetof(GemmTileArgs, k_steps)));
  a.ldr(kC, a64::ptr(kArgs, offsetof(GemmTileArgs, c)));
  a.ldr(kCStride, a64::ptr(kArgs, offsetof(GemmTileArgs, c_stride)));
  a.ldr(kEp, a64::ptr(kArgs, offsetof(GemmTileArgs, epilogue)));
  a.ldr(kRowSums, a64::ptr(kArgs, offsetof(GemmTileArgs, row_sums)));
  a.mov(row_ptr(0), kA);
  for (unsigned r = 1; r < mr; ++r) a.add(row_ptr(r), row_ptr(r - 1), kAStride);
}

// AAPCS64: the low halves of v8..v15 are callee-saved.
void save_d8_d15(Assembler& a) {
  a.sub(a64::sp, a64::sp, 64);
  for (unsigned i = 0; i < 4; ++i) a.stp(a64::VecD(8 + 2 * i), a64::VecD(9 + 2 * i), a64::ptr(a64::sp, int32_t(16 * i)));
}
void restore_d8_d15(Assembler& a) {
  for (unsigned i = 0; i < 4; ++i) a.ldp(a64::VecD(8 + 2 * i), a64::VecD(9 + 2 * i), a64::ptr(a64::sp, int32_t(16 * i)));
  a.add(a64::sp, a64::sp, 64);
}

void zero(Assembler& a, unsigned first, unsigned count) {
  for (unsigned i = first; i < first + count; ++i) a.eor(v(i).b16(), v(i).b16(), v(i).b16());
}

// Counted loop over `count` (a register already holding the trip count): body, then
// decrement and branch back; skipped when the count is zero.
template <typename Body>
void counted_loop(Assembler& a, Body body) {
  Label loop = a.newLabel(), done = a.newLabel();
  a.cbz(kCount, done);
  a.bind(loop);
  body();
  a.subs(kCount, kCount, 1);
  a.b_ne(loop);
  a.bind(done);
}

// ---- the three multiply paths; each leaves row r's columns 4j..4j+3 in register acc(r, j) ----

// mlal: accumulators v16 + 4r + j; activations v0..v3 (by-element operands must be v0..v15);
// weights v4 (raw), v5/v6 (widened), alternating with v7 / v8/v9.
void emit_mlal(Assembler& a, unsigned mr) {
  zero(a, 16, 4 * mr);
  auto step = [&](unsigned lane, unsigned set) {
    const VecV raw = v(set ? 7 : 4), lo = v(set ? 8 : 5), hi = v(set ? 9 : 6);
    a.ldr(raw, a64::ptr_post(kW, 16));
    a.sxtl(lo.h8(), raw.b8());
    a.sxtl2(hi.h8(), raw.b16());
    for (unsigned r = 0; r < mr; ++r) {
      const unsigned acc = 16 + 4 * r;
      a.smlal(v(acc).s4(), lo.h4(), v(r).h(lane));
      a.smlal2(v(acc + 1).s4(), lo.h8(), v(r).h(lane));
      a.smlal(v(acc + 2).s4(), hi.h4(), v(r).h(lane));
      a.smlal2(v(acc + 3).s4(), hi.h8(), v(r).h(lane));
    }
  };
  // Eight k per iteration: 8 activation bytes per row, widened once.
  a.lsr(kCount, kKSteps, 3);
  counted_loop(a, [&] {
    for (unsigned r = 0; r < mr; ++r) {
      a.ldr(a64::VecD(r), a64::ptr_post(row_ptr(r), 8));
      a.uxtl(v(r).h8(), v(r).b8());
    }
    for (unsigned lane = 0; lane < 8; ++lane) step(lane, lane % 2);
  });
  a.and_(kCount, kKSteps, 7);
  counted_loop(a, [&] {
    for (unsigned r = 0; r < mr; ++r) {
      a.ldr(a64::VecB(r), a64::ptr_post(row_ptr(r), 1));
      a.uxtl(v(r).h8(), v(r).b8());
    }
    step(0, 0);
  });
}

// sdot4: accumulators v16 + 4r + j; activations v0..v3 (16 bytes: four k steps); weights
// v4..v7 and v8..v11 in turn.
void emit_sdot4(Assembler& a, unsigned mr) {
  zero(a, 16, 4 * mr);
  auto step = [&](unsigned lane, unsigned set) {
    const unsigned w = set ? 8 : 4;
    a.ld1(v(w).b16(), v(w + 1).b16(), v(w + 2).b16(), v(w + 3).b16(), a64::ptr_post(kW, 64));
    for (unsigned r = 0; r < mr; ++r) {
      for (unsigned j = 0; j < 4; ++j) a.sdot(v(16 + 4 * r + j).s4(), v(w + j).b16(), v(r).b4(lane));
    }
  };
  a.lsr(kCount, kKSteps, 2);
  counted_loop(a, [&] {
    for (unsigned r = 0; r < mr; ++r) a.ldr(v(r), a64::ptr_post(row_ptr(r), 16));
    for (unsigned lane = 0; lane < 4; ++lane) step(lane, lane % 2);
  });
  a.and_(kCount, kKSteps, 3);
  counted_loop(a, [&] {
    for (unsigned r = 0; r < mr; ++r) a.ldr(a64::VecS(r), a64::ptr_post(row_ptr(r), 4));
    step(0, 0);
  });
}

// usmmla8: block accumulators v16 + 8p + q (row pair p, column pair q); row pairs in v0, v1;
// weights v4..v11. Afterwards the rows go to v(4r + j).
void emit_usmmla8(Assembler& a, unsigned mr) {
  const unsigned pairs = (mr + 1) / 2;
  zero(a, 16, 8 * pairs);
  a.mov(kCount, kKSteps);
  counted_loop(a, [&] {
    for (unsigned p = 0; p < pairs; ++p) {
      if (2 * p + 1 < mr) {
        a.ldr(a64::VecD(p), a64::ptr_post(row_ptr(2 * p), 8));
        a.ld1(v(p).d(1), a64::ptr_post(row_ptr(2 * p + 1), 8));
      } else {
        // An odd last row multiplies twice; its second copy is never stored.
        a.ld1r(v(p).d2(), a64::ptr_post(row_ptr(2 * p), 8));
      }
    }
    a.ld1(v(4).b16(), v(5).b16(), v(6).b16(), v(7).b16(), a64::ptr_post(kW, 64));
    a.ld1(v(8).b16(), v(9).b16(), v(10).b16(), v(11).b16(), a64::ptr_post(kW, 64));
    for (unsigned p = 0; p < pairs; ++p) {
      for (unsigned q = 0; q < 8; ++q) a.usmmla(v(16 + 8 * p + q).s4(), v(p).b16(), v(4 + q).b16());
    }
  });
  // Block (p, q) = [r0 c0, r0 c1, r1 c0, r1 c1] of rows 2p, 2p+1 and columns 2q, 2q+1.
  for (unsigned p = 0; p < pairs; ++p) {
    for (unsigned m = 0; m < 4; ++m) {
      const VecV b0 = v(16 + 8 * p + 2 * m), b1 = v(16 + 8 * p + 2 * m + 1);
      a.zip1(v(4 * (2 * p) + m).d2(), b0.d2(), b1.d2());
      if (2 * p + 1 < mr) a.zip2(v(4 * (2 * p + 1) + m).d2(), b0.d2(), b1.d2());
    }
  }
}

// ---- the shared epilogue ----

// Stores `bytes` (< 16) low bytes of `x` at [base + offset] lane by lane.
void store_low_bytes(Assembler& a, const VecV& x, const GpX& base, unsigned offset, unsigned bytes) {
  unsigned at = 0;
  for (unsigned w : {8u, 4u, 2u, 1u}) {
    if (bytes - at < w) continue;
    a.add(kTmp, base, offset + at);
    if (w == 8) a.st1(x.d(at / 8), a64::ptr(kTmp));
    if (w == 4) a.st1(x.s(at / 4), a64::ptr(kTmp));
    if (w == 2) a.st1(x.h(at / 2), a64::ptr(kTmp));
    if (w == 1) a.st1(x.b(at), a64::ptr(kTmp));
    at += w;
  }
}

void emit_epilogue(Assembler& a, const KernelDesc& d, unsigned acc_base, unsigned tmp_base) {
  const unsigned mr = d.mr, nr = d.nr, vecs = (nr + 3) / 4, panel_bytes = 4u * d.panel;
  auto acc = [&](unsigned r, unsigned j) { return v(acc_base + 4 * r + j).s4(); };
  auto tmp = [&](unsigned i) { return v(tmp_base + i); };
  auto field = [&](GemmEpilogueField f, unsigned j) { return a64::ptr(kEp, int32_t(f * panel_bytes + 16 * j)); };
  if (d.row_correction) {
    for (unsigned r = 0; r < mr; ++r) {
      a.ldr(a64::w14, a64::ptr(kRowSums, int32_t(4 * r)));
      a.dup(tmp(8 + r).s4(), a64::w14);
    }
  }
  const bool byte_out = d.out == OutKind::kU8 || d.out == OutKind::kS8;
  for (unsigned j = 0; j < vecs; ++j) {
    a.ldr(tmp(0), field(kEpBias, j));
    for (unsigned r = 0; r < mr; ++r) a.add(acc(r, j), acc(r, j), tmp(0).s4());
    if (d.row_correction) {
      a.ldr(tmp(1), field(kEpWeightZeroPoint, j));
      for (unsigned r = 0; r < mr; ++r) a.mls(acc(r, j), tmp(1).s4(), tmp(8 + r).s4());
    }
    if (d.out == OutKind::kS32) continue;
    a.ldr(tmp(2), field(kEpMultiplier, j));
    for (unsigned r = 0; r < mr; ++r) {
      a.scvtf(acc(r, j), acc(r, j));
      a.fmul(acc(r, j), acc(r, j), tmp(2).s4());
    }
    if (!byte_out) continue;
    a.ldr(tmp(3), field(kEpLowerBound, j));
    a.ldr(tmp(4), field(kEpUpperBound, j));
    a.ldr(tmp(5), field(kEpOutputZeroPoint, j));
    for (unsigned r = 0; r < mr; ++r) {
      // fmaxnm/fminnm: a NaN would become the bound, as vmaxps/vminps make it (none reaches here).
      a.fmaxnm(acc(r, j), acc(r, j), tmp(3).s4());
      a.fminnm(acc(r, j), acc(r, j), tmp(4).s4());
      a.fcvtns(acc(r, j), acc(r, j));
      a.add(acc(r, j), acc(r, j), tmp(5).s4());
    }
  }
  // Stores, row by row.
  a.mov(kOut, kC);
  for (unsigned r = 0; r < mr; ++r) {
    if (r > 0) a.add(kOut, kOut, kCStride);
    if (byte_out) {
      // s32 -> s16 -> 8 bit, saturating (vpackssdw then vpack{ss,us}wb); columns past nr are
      // narrowed too but never stored.
      const VecV lo = tmp(6), hi = tmp(7);
      a.sqxtn(lo.h4(), acc(r, 0));
      a.sqxtn2(lo.h8(), acc(r, 1));
      a.sqxtn(hi.h4(), acc(r, 2));
      a.sqxtn2(hi.h8(), acc(r, 3));
      if (d.out == OutKind::kU8) {
        a.sqxtun(lo.b8(), lo.h8());
        a.sqxtun2(lo.b16(), hi.h8());
      } else {
        a.sqxtn(lo.b8(), lo.h8());
        a.sqxtn2(lo.b16(), hi.h8());
      }
      if (nr == 16) a.str(lo, a64::ptr(kOut));
      else store_low_bytes(a, lo, kOut, 0, nr);
      continue;
    }
    for (unsigned j = 0; j < vecs; ++j) {
      const VecV x = v(acc_base + 4 * r + j);
      const unsigned cols = nr - 4 * j < 4 ? nr - 4 * j : 4;
      if (cols == 4) a.str(x, a64::ptr(kOut, int32_t(16 * j)));
      else store_low_bytes(a, x, kOut, 16 * j, 4 * cols);
    }
  }
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_gemm(const KernelDesc& d) {
  CodeHolder code;
  Environment env(Arch::kAArch64);
  if (Error err = code.init(env); err != kErrorOk) {
    return Status::error(std::string("asmjit: ") + DebugUtils::errorAsString(err) + " generating " + d.name());
  }
  Assembler a(&code);
  save_d8_d15(a);
  load_args(a, d.mr);
  unsigned acc_base = 16, tmp_base = 0;
  switch (d.path) {
    case GemmPath::kMlal: emit_mlal(a, d.mr); break;
    case GemmPath::kSdot4: emit_sdot4(a, d.mr); break;
    case GemmPath::kUsmmla8:
      emit_usmmla8(a, d.mr);
      acc_base = 0, tmp_base = 16;
      break;
    default: return Status::error(d.name() + ": no AArch64 GEMM tile for the " + gemm_path_name(d.path) + " path");
  }
  emit_epilogue(a, d, acc_base, tmp_base);
  restore_d8_d15(a);
  a.ret(a64::x30);
  return finish(code, d.name());
}

}  // namespace qrt::jit::a64gen
