// qrt — AArch64 quantize and dequantize (ConvertArgs, jit/core/microkernel.h) generated with
// asmjit's a64 assembler, 8 elements per step, the description's parameters in a constant
// pool after the code:
//   quantize:   q = clamp(rne(x / scale) + zp, qmin, qmax), NaN -> zp. One fdiv, frintn (nearest
//               even, exact in f32), the clamp to [qmin - zp, qmax - zp] in f32 (exact: small
//               integers; infinities saturate; NaN passes through), fcvtzs (exact; NaN gives
//               0), + zp, saturating narrowing to the storage type.
//   dequantize: x = f32(q - zp) · scale (scvtf is exact for 8-bit differences; one fmul).
// As numerics::quantize_f32 / dequantize_f32 and the twins, bit for bit.
#include <asmjit/arm/a64assembler.h>

#include <cstddef>
#include <string>

#include "jit/asmjit_a64/generators.h"

namespace qrt::jit::a64gen {

namespace {

using namespace asmjit;

const GpX kArgs = a64::x0, kIn = a64::x1, kOut = a64::x2, kBlocks = a64::x3;

void emit_quantize(Assembler& a, const KernelDesc& d, const Label& pool) {
  // Pool: scale, lo = qmin - zp, hi = qmax - zp (f32), zp (int32); four lanes each.
  const VecV scale = VecV(16), lo = VecV(17), hi = VecV(18), zp = VecV(19);
  a.ldr(scale, a64::ptr(pool, 0));
  a.ldr(lo, a64::ptr(pool, 16));
  a.ldr(hi, a64::ptr(pool, 32));
  a.ldr(zp, a64::ptr(pool, 48));
  Label loop = a.newLabel(), done = a.newLabel();
  a.cbz(kBlocks, done);
  a.bind(loop);
  a.ld1(VecV(0).s4(), VecV(1).s4(), a64::ptr_post(kIn, 32));
  for (unsigned i = 0; i < 2; ++i) {
    const VecV x = VecV(i);
    a.fdiv(x.s4(), x.s4(), scale.s4());
    a.frintn(x.s4(), x.s4());
    // A NaN lane stays NaN through fmax/fmin, and fcvtzs turns NaN into 0: the zero point.
    a.fmax(x.s4(), x.s4(), lo.s4());
    a.fmin(x.s4(), x.s4(), hi.s4());
    a.fcvtzs(x.s4(), x.s4());
    a.add(x.s4(), x.s4(), zp.s4());
  }
  a.sqxtn(VecV(0).h4(), VecV(0).s4());
  a.sqxtn2(VecV(0).h8(), VecV(1).s4());
  if (d.storage_signed) a.sqxtn(VecV(0).b8(), VecV(0).h8());
  else a.sqxtun(VecV(0).b8(), VecV(0).h8());
  a.str(a64::VecD(0), a64::ptr_post(kOut, 8));
  a.subs(kBlocks, kBlocks, 1);
  a.b_ne(loop);
  a.bind(done);
}

void emit_dequantize(Assembler& a, const KernelDesc& d, const Label& pool) {
  // Pool: scale (f32), zp (int32); four lanes each.
  const VecV scale = VecV(16), zp = VecV(17);
  a.ldr(scale, a64::ptr(pool, 0));
  a.ldr(zp, a64::ptr(pool, 16));
  Label loop = a.newLabel(), done = a.newLabel();
  a.cbz(kBlocks, done);
  a.bind(loop);
  a.ldr(a64::VecD(0), a64::ptr_post(kIn, 8));
  if (d.storage_signed) a.sxtl(VecV(0).h8(), VecV(0).b8());
  else a.uxtl(VecV(0).h8(), VecV(0).b8());
  a.sxtl2(VecV(1).s4(), VecV(0).h8());
  a.sxtl(VecV(0).s4(), VecV(0).h4());
  for (unsigned i = 0; i < 2; ++i) {
    a.sub(VecV(i).s4(), VecV(i).s4(), zp.s4());
    a.scvtf(VecV(i).s4(), VecV(i).s4());
    a.fmul(VecV(i).s4(), VecV(i).s4(), scale.s4());
  }
  a.st1(VecV(0).s4(), VecV(1).s4(), a64::ptr_post(kOut, 32));
  a.subs(kBlocks, kBlocks, 1);
  a.b_ne(loop);
  a.bind(done);
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_convert(const KernelDesc& d) {
  if (d.op != KernelOp::kQuantize && d.op != KernelOp::kDequantize) {
    return Status::error(d.name() + ": not a quantize or dequantize kernel");
  }
  // The clamp bounds and the zero point must be exact in f32 and fit int32 after the sum.
  if (std::string why = convert_why_not(d); !why.empty()) return Status::error(d.name() + ": " + why);
  CodeHolder code;
  QRT_RETURN_IF_ERROR(init_code(code, d));
  Assembler a(&code);
  Label pool = a.newLabel();
  a.ldr(kIn, a64::ptr(kArgs, offsetof(ConvertArgs, in)));
  a.ldr(kOut, a64::ptr(kArgs, offsetof(ConvertArgs, out)));
  a.ldr(kBlocks, a64::ptr(kArgs, offsetof(ConvertArgs, n)));
  a.lsr(kBlocks, kBlocks, 3);  // n is a whole number of 8-element blocks
  if (d.op == KernelOp::kQuantize) emit_quantize(a, d, pool);
  else emit_dequantize(a, d, pool);
  a.ret(a64::x30);
  a.align(AlignMode::kData, 16);
  a.bind(pool);
  a.embedFloat(d.scale, 4);
  if (d.op == KernelOp::kQuantize) {
    a.embedFloat(float(d.qmin - d.zero_point), 4);
    a.embedFloat(float(d.qmax - d.zero_point), 4);
  }
  a.embedInt32(d.zero_point, 4);
  return finish(code, d.name());
}

}  // namespace qrt::jit::a64gen
