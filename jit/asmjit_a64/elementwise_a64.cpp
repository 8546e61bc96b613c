// qrt — AArch64 quantized add, multiply and requantize (ElementwiseArgs, jit/core/microkernel.h)
// generated with asmjit's a64 assembler, 8 elements per step:
//   requantize: clamp(rne(f32(a - za) · M) + zo)
//   add:        clamp(rne(f32(a - za) · M_a + f32(b - zb) · M_b) + zo)   (two products, one sum; no FMA)
//   mul:        clamp(rne(f32((a - za) · (b - zb)) · M) + zo)            (the product in int32)
// The clamp is fmaxnm/fminnm against the f32 bounds (lo - zo, hi - zo), the rounding fcvtns
// (nearest even), the narrowing sqxtn then sqxtun/sqxtn (saturating), as twin_elementwise.
#include <asmjit/arm/a64assembler.h>

#include <cstddef>
#include <string>

#include "jit/asmjit_a64/generators.h"

namespace qrt::jit::a64gen {

namespace {

using namespace asmjit;

const GpX kArgs = a64::x0, kA = a64::x1, kB = a64::x2, kY = a64::x3, kBlocks = a64::x4, kAddr = a64::x5;
// Parameters broadcast to every lane, in caller-saved registers.
const VecV kMa = VecV(16), kMb = VecV(17), kZa = VecV(18), kZb = VecV(19), kZo = VecV(20), kLo = VecV(21),
           kHi = VecV(22);

void broadcast(Assembler& a, const VecV& v, size_t offset) {
  a.add(kAddr, kArgs, uint32_t(offset));
  a.ld1r(v.s4(), a64::ptr(kAddr));
}

// Loads 8 stored values from `src` (post-incremented), widens them to two vectors of int32
// (`lo`: elements 0-3, `hi`: 4-7) and subtracts the zero point.
void load_centered(Assembler& a, const GpX& src, bool is_signed, const VecV& zero_point, const VecV& lo, const VecV& hi) {
  a.ldr(a64::VecD(lo.id()), a64::ptr_post(src, 8));
  if (is_signed) a.sxtl(lo.h8(), lo.b8());
  else a.uxtl(lo.h8(), lo.b8());
  // Values fit s16 either way, so the widening to s32 is signed.
  a.sxtl2(hi.s4(), lo.h8());
  a.sxtl(lo.s4(), lo.h4());
  a.sub(lo.s4(), lo.s4(), zero_point.s4());
  a.sub(hi.s4(), hi.s4(), zero_point.s4());
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_elementwise(const KernelDesc& d) {
  if (d.op != KernelOp::kQAdd && d.op != KernelOp::kQMul && d.op != KernelOp::kRequantize) {
    return Status::error(d.name() + ": not an element-wise kernel kind");
  }
  CodeHolder code;
  QRT_RETURN_IF_ERROR(init_code(code, d));
  Assembler a(&code);
  const bool binary = d.op != KernelOp::kRequantize;
  a.ldr(kA, a64::ptr(kArgs, offsetof(ElementwiseArgs, a)));
  a.ldr(kB, a64::ptr(kArgs, offsetof(ElementwiseArgs, b)));
  a.ldr(kY, a64::ptr(kArgs, offsetof(ElementwiseArgs, y)));
  a.ldr(kBlocks, a64::ptr(kArgs, offsetof(ElementwiseArgs, blocks)));
  broadcast(a, kMa, offsetof(ElementwiseArgs, m_a));
  broadcast(a, kMb, offsetof(ElementwiseArgs, m_b));
  broadcast(a, kZa, offsetof(ElementwiseArgs, za));
  broadcast(a, kZb, offsetof(ElementwiseArgs, zb));
  broadcast(a, kZo, offsetof(ElementwiseArgs, zo));
  broadcast(a, kLo, offsetof(ElementwiseArgs, lo));
  broadcast(a, kHi, offsetof(ElementwiseArgs, hi));

  Label loop = a.newLabel(), done = a.newLabel();
  a.cbz(kBlocks, done);
  a.bind(loop);
  const VecV a_lo = VecV(1), a_hi = VecV(2), b_lo = VecV(3), b_hi = VecV(4), out = VecV(0);
  load_centered(a, kA, d.storage_signed, kZa, a_lo, a_hi);
  if (binary) load_centered(a, kB, d.b_signed, kZb, b_lo, b_hi);
  if (d.op == KernelOp::kQMul) {
    a.mul(a_lo.s4(), a_lo.s4(), b_lo.s4());  // wrapping int32, as vpmulld
    a.mul(a_hi.s4(), a_hi.s4(), b_hi.s4());
  }
  for (const VecV& x : {a_lo, a_hi}) {
    a.scvtf(x.s4(), x.s4());
    a.fmul(x.s4(), x.s4(), kMa.s4());
  }
  if (d.op == KernelOp::kQAdd) {
    for (const VecV& x : {b_lo, b_hi}) {
      a.scvtf(x.s4(), x.s4());
      a.fmul(x.s4(), x.s4(), kMb.s4());
    }
    a.fadd(a_lo.s4(), a_lo.s4(), b_lo.s4());
    a.fadd(a_hi.s4(), a_hi.s4(), b_hi.s4());
  }
  for (const VecV& x : {a_lo, a_hi}) {
    a.fmaxnm(x.s4(), x.s4(), kLo.s4());
    a.fminnm(x.s4(), x.s4(), kHi.s4());
    a.fcvtns(x.s4(), x.s4());
    a.add(x.s4(), x.s4(), kZo.s4());
  }
  a.sqxtn(out.h4(), a_lo.s4());
  a.sqxtn2(out.h8(), a_hi.s4());
  if (d.out == OutKind::kS8) a.sqxtn(out.b8(), out.h8());
  else a.sqxtun(out.b8(), out.h8());
  a.str(a64::VecD(out.id()), a64::ptr_post(kY, 8));
  a.subs(kBlocks, kBlocks, 1);
  a.b_ne(loop);
  a.bind(done);
  a.ret(a64::x30);
  return finish(code, d.name());
}

}  // namespace qrt::jit::a64gen
