// qrt — AArch64 GEMM tiles (GemmTileArgs, jit/core/microkernel.h) generated with asmjit's
// a64 assembler: up to 4 rows x 16 columns, three multiply paths sharing one epilogue.
//   mlal    (neon):      per k, 16 s8 weights widened to s16; smlal/smlal2 by element of the
//                        row's u8 activations widened to u16. Exact: every product fits s32.
//   sdot4   (neon-dot):  per 4 k, four 16-byte weight registers (4 columns x 4 k each); sdot by
//                        element of the row's s8 quads (a' - 128; the bias holds 128 · Σ w).
//   usmmla8 (neon-i8mm): per 8 k, eight 16-byte weight registers (2 columns x 8 k each) and one
//                        register per row pair (2 rows x 8 k); usmmla gives 2 x 2 blocks that
//                        zip1/zip2 turn back into rows.
// The epilogue (shared_a64.cpp) adds the bias, subtracts row sums x weight zero points, and
// stores s32, f32 or clamped, rounded (fcvtns: nearest even) and saturated 8-bit values,
// exactly as the twins.
#include <asmjit/arm/a64assembler.h>

#include <cstddef>
#include <string>

#include "jit/asmjit_a64/generators.h"

namespace qrt::jit::a64gen {

namespace {

using namespace asmjit;

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

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_gemm(const KernelDesc& d) {
  CodeHolder code;
  QRT_RETURN_IF_ERROR(init_code(code, d));
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
  EpilogueLayout ep;
  ep.rows = d.mr, ep.cols = d.nr, ep.out = d.out, ep.row_correction = d.row_correction, ep.q31 = d.q31;
  ep.field_bytes = 4u * d.panel;
  ep.acc = [acc_base](unsigned r, unsigned j) { return VecV(acc_base + 4 * r + j); };
  ep.tmp_base = tmp_base;
  const EpilogueRegs regs{kEp, kRowSums, kC, kCStride, kOut, kTmp};
  emit_epilogue(a, ep, regs);
  restore_d8_d15(a);
  a.ret(a64::x30);
  return finish(code, d.name());
}

}  // namespace qrt::jit::a64gen
