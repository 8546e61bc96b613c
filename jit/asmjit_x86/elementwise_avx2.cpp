// qrt — the AVX2 quantized element-wise kernel generator (see jit/elementwise_kernels.h).
// Per block of 8 lanes, exactly the formulas of docs/numerics.md:
//   requantize: clamp(rne(f32(a - za) * M) + zo)
//   add:        clamp(rne(f32(a - za) * M_a + f32(b - zb) * M_b) + zo), each step one rounding
//   mul:        clamp(rne(f32((a - za) * (b - zb)) * M) + zo), the product exact in int32
// Clamping to [lo - zo, hi - zo] before rounding equals clamping after (the bounds are
// integers); the multipliers are finite and small enough that no lane becomes NaN.
//
// Registers: rdi args  rsi a  rdx b  r8 y  rcx blocks left
//            ymm0/1 operands  ymm2 M_a  ymm3 M_b  ymm4 za  ymm5 zb  ymm6 zo  ymm7 lo  ymm8 hi
#include <asmjit/x86.h>

#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

using namespace asmjit;

void load_widened(x86::Assembler& a, const x86::Ymm& dst, const x86::Gp& ptr, bool is_signed) {
  if (is_signed) a.vpmovsxbd(dst, x86::qword_ptr(ptr));
  else a.vpmovzxbd(dst, x86::qword_ptr(ptr));
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_avx2_elementwise(const KernelDesc& d) {
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  const bool binary = d.op != KernelOp::kRequantize;
  emit_elementwise_prologue<x86::Ymm>(a);
  Label loop = a.newLabel(), done = a.newLabel();
  a.test(x86::rcx, x86::rcx);
  a.jz(done);
  a.bind(loop);
  load_widened(a, x86::ymm0, x86::rsi, d.storage_signed);
  a.vpsubd(x86::ymm0, x86::ymm0, x86::ymm4);
  if (binary) {
    load_widened(a, x86::ymm1, x86::rdx, d.b_signed);
    a.vpsubd(x86::ymm1, x86::ymm1, x86::ymm5);
  }
  if (d.op == KernelOp::kQMul) {
    a.vpmulld(x86::ymm0, x86::ymm0, x86::ymm1);  // |product| <= 255^2: exact, and exact in f32
  }
  a.vcvtdq2ps(x86::ymm0, x86::ymm0);
  a.vmulps(x86::ymm0, x86::ymm0, x86::ymm2);
  if (d.op == KernelOp::kQAdd) {
    a.vcvtdq2ps(x86::ymm1, x86::ymm1);
    a.vmulps(x86::ymm1, x86::ymm1, x86::ymm3);
    a.vaddps(x86::ymm0, x86::ymm0, x86::ymm1);
  }
  a.vmaxps(x86::ymm0, x86::ymm0, x86::ymm7);
  a.vminps(x86::ymm0, x86::ymm0, x86::ymm8);
  a.vcvtps2dq(x86::ymm0, x86::ymm0);
  a.vpaddd(x86::ymm0, x86::ymm0, x86::ymm6);
  a.vpackssdw(x86::ymm0, x86::ymm0, x86::ymm0);
  a.vpermq(x86::ymm0, x86::ymm0, 0x08);
  if (d.out == OutKind::kS8) a.vpacksswb(x86::xmm0, x86::xmm0, x86::xmm0);
  else a.vpackuswb(x86::xmm0, x86::xmm0, x86::xmm0);
  a.vmovq(x86::qword_ptr(x86::r8), x86::xmm0);
  a.add(x86::rsi, 8);
  if (binary) a.add(x86::rdx, 8);
  a.add(x86::r8, 8);
  a.dec(x86::rcx);
  a.jnz(loop);
  a.bind(done);
  a.vzeroupper();
  a.ret();
  return x86gen::finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
