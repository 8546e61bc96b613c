// qrt — AArch64 byte kernels generated with asmjit's a64 assembler, 16 bytes per step and a
// byte at a time for the last n % 16:
//   kClamp (ClampArgs): y = min(max(x, lo), hi) on stored 8-bit values (smax/smin or umax/umin).
//   kLut8  (LutArgs):   y = table[x]. The 256-byte table sits in v16-v31; tbl looks up the first
//                       64 entries and three tbx the next ones, on x - 64, x - 128, x - 192
//                       (an index of 64 or more, wrapped ones included, leaves the byte as is).
#include <asmjit/arm/a64assembler.h>

#include <cstddef>
#include <string>

#include "jit/asmjit_a64/generators.h"

namespace qrt::jit::a64gen {

namespace {

using namespace asmjit;

const GpX kArgs = a64::x0, kX = a64::x1, kY = a64::x2, kN = a64::x3, kCount = a64::x4, kTmp = a64::x5;

// y = f(x) over n bytes: `step(x_reg)` turns the bytes of v0 into the results in v0.
template <typename Step>
void emit_byte_loops(Assembler& a, Step step) {
  Label vectors = a.newLabel(), bytes = a.newLabel(), byte_loop = a.newLabel(), done = a.newLabel();
  a.lsr(kCount, kN, 4);
  a.cbz(kCount, bytes);
  a.bind(vectors);
  a.ldr(VecV(0), a64::ptr_post(kX, 16));
  step();
  a.str(VecV(0), a64::ptr_post(kY, 16));
  a.subs(kCount, kCount, 1);
  a.b_ne(vectors);
  a.bind(bytes);
  a.and_(kCount, kN, 15);
  a.cbz(kCount, done);
  a.bind(byte_loop);
  a.ldr(a64::VecB(0), a64::ptr_post(kX, 1));
  step();
  a.str(a64::VecB(0), a64::ptr_post(kY, 1));
  a.subs(kCount, kCount, 1);
  a.b_ne(byte_loop);
  a.bind(done);
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_bytes(const KernelDesc& d) {
  if (d.op != KernelOp::kClamp && d.op != KernelOp::kLut8) return Status::error(d.name() + ": not a byte kernel");
  CodeHolder code;
  QRT_RETURN_IF_ERROR(init_code(code, d));
  Assembler a(&code);
  const VecV x = VecV(0);
  if (d.op == KernelOp::kClamp) {
    a.ldr(kX, a64::ptr(kArgs, offsetof(ClampArgs, x)));
    a.ldr(kY, a64::ptr(kArgs, offsetof(ClampArgs, y)));
    a.ldr(kN, a64::ptr(kArgs, offsetof(ClampArgs, n)));
    // The bounds are stored values of the same type: their low bytes, broadcast.
    const VecV lo = VecV(16), hi = VecV(17);
    a.ldr(a64::w5, a64::ptr(kArgs, offsetof(ClampArgs, lo)));
    a.dup(lo.b16(), a64::w5);
    a.ldr(a64::w5, a64::ptr(kArgs, offsetof(ClampArgs, hi)));
    a.dup(hi.b16(), a64::w5);
    emit_byte_loops(a, [&] {
      if (d.storage_signed) {
        a.smax(x.b16(), x.b16(), lo.b16());
        a.smin(x.b16(), x.b16(), hi.b16());
      } else {
        a.umax(x.b16(), x.b16(), lo.b16());
        a.umin(x.b16(), x.b16(), hi.b16());
      }
    });
  } else {
    a.ldr(kX, a64::ptr(kArgs, offsetof(LutArgs, x)));
    a.ldr(kY, a64::ptr(kArgs, offsetof(LutArgs, y)));
    a.ldr(kN, a64::ptr(kArgs, offsetof(LutArgs, n)));
    a.ldr(kTmp, a64::ptr(kArgs, offsetof(LutArgs, table)));
    for (unsigned q = 0; q < 4; ++q) {
      const unsigned t = 16 + 4 * q;
      a.ld1(VecV(t).b16(), VecV(t + 1).b16(), VecV(t + 2).b16(), VecV(t + 3).b16(), a64::ptr_post(kTmp, 64));
    }
    const VecV sixty_four = VecV(4), index = VecV(1), y = VecV(2);
    a.movi(sixty_four.b16(), 64);
    emit_byte_loops(a, [&] {
      a.tbl(y.b16(), VecV(16).b16(), VecV(17).b16(), VecV(18).b16(), VecV(19).b16(), x.b16());
      a.mov(index.b16(), x.b16());
      for (unsigned q = 1; q < 4; ++q) {
        const unsigned t = 16 + 4 * q;
        a.sub(index.b16(), index.b16(), sixty_four.b16());
        a.tbx(y.b16(), VecV(t).b16(), VecV(t + 1).b16(), VecV(t + 2).b16(), VecV(t + 3).b16(), index.b16());
      }
      a.mov(x.b16(), y.b16());
    });
  }
  a.ret(a64::x30);
  return finish(code, d.name());
}

}  // namespace qrt::jit::a64gen
