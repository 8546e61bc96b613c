// qrt — AVX2 quantize (f32 -> 8-bit) and dequantize (8-bit -> f32) kernels, generated with
// asmjit for one set of quantization parameters (baked in as broadcast immediates).
//
// Register budget (after loading ConvertArgs: rdi = in, rsi = out, rdx = blocks of 8):
//   ymm0  the 8 elements in flight        ymm1  scale (f32)
//   ymm2  qmin - zp (f32)                 ymm3  qmax - zp (f32)
//   ymm4  zero point (i32)                ymm5  NaN mask
#include <asmjit/x86.h>

#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

using namespace asmjit;
using x86gen::bits_of;
using x86gen::broadcast;

// Matches numerics::quantize_f32 lane by lane: clamp(rne(x / scale) + zp, qmin, qmax), NaN
// to the zero point, infinities saturating. Clamping the rounded value to
// [qmin - zp, qmax - zp] before adding zp is the same clamp, done where it is exact.
void emit_quantize(x86::Assembler& a, const KernelDesc& d) {
  broadcast(a, x86::ymm1, bits_of(d.scale));
  broadcast(a, x86::ymm2, bits_of(float(d.qmin - d.zero_point)));
  broadcast(a, x86::ymm3, bits_of(float(d.qmax - d.zero_point)));
  broadcast(a, x86::ymm4, uint32_t(d.zero_point));
  Label loop = a.newLabel(), done = a.newLabel();
  a.test(x86::rdx, x86::rdx);
  a.jz(done);
  a.bind(loop);
  a.vmovups(x86::ymm0, x86::ptr(x86::rdi));
  a.vdivps(x86::ymm0, x86::ymm0, x86::ymm1);
  a.vroundps(x86::ymm0, x86::ymm0, 0x08);           // nearest even, exceptions suppressed
  a.vcmpps(x86::ymm5, x86::ymm0, x86::ymm0, 3);     // unordered: NaN lanes
  a.vandnps(x86::ymm0, x86::ymm5, x86::ymm0);       // NaN -> 0 (then + zp)
  a.vmaxps(x86::ymm0, x86::ymm0, x86::ymm2);
  a.vminps(x86::ymm0, x86::ymm0, x86::ymm3);
  a.vcvtps2dq(x86::ymm0, x86::ymm0);                // exact: integral and small
  a.vpaddd(x86::ymm0, x86::ymm0, x86::ymm4);
  a.vpackssdw(x86::ymm0, x86::ymm0, x86::ymm0);     // per 128-bit lane: 4 x i16, twice
  a.vpermq(x86::ymm0, x86::ymm0, 0x08);             // lanes' low halves together: 8 x i16
  if (d.storage_signed) {
    a.vpacksswb(x86::xmm0, x86::xmm0, x86::xmm0);
  } else {
    a.vpackuswb(x86::xmm0, x86::xmm0, x86::xmm0);
  }
  a.vmovq(x86::ptr(x86::rsi), x86::xmm0);
  a.add(x86::rdi, 32);
  a.add(x86::rsi, 8);
  a.dec(x86::rdx);
  a.jnz(loop);
  a.bind(done);
  a.vzeroupper();
  a.ret();
}

// Matches numerics::dequantize_f32: f32(q - zp) * scale, exact conversion, one rounding.
void emit_dequantize(x86::Assembler& a, const KernelDesc& d) {
  broadcast(a, x86::ymm1, bits_of(d.scale));
  broadcast(a, x86::ymm4, uint32_t(d.zero_point));
  Label loop = a.newLabel(), done = a.newLabel();
  a.test(x86::rdx, x86::rdx);
  a.jz(done);
  a.bind(loop);
  if (d.storage_signed) {
    a.vpmovsxbd(x86::ymm0, x86::qword_ptr(x86::rdi));
  } else {
    a.vpmovzxbd(x86::ymm0, x86::qword_ptr(x86::rdi));
  }
  a.vpsubd(x86::ymm0, x86::ymm0, x86::ymm4);
  a.vcvtdq2ps(x86::ymm0, x86::ymm0);
  a.vmulps(x86::ymm0, x86::ymm0, x86::ymm1);
  a.vmovups(x86::ptr(x86::rsi), x86::ymm0);
  a.add(x86::rdi, 8);
  a.add(x86::rsi, 32);
  a.dec(x86::rdx);
  a.jnz(loop);
  a.bind(done);
  a.vzeroupper();
  a.ret();
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_avx2_convert(const KernelDesc& desc) {
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  // ConvertArgs: n is a multiple of 8 (the stream block).
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(ConvertArgs, n)));
  a.shr(x86::rdx, 3);
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(ConvertArgs, out)));
  a.mov(x86::rdi, x86::qword_ptr(x86::rdi, offsetof(ConvertArgs, in)));
  if (desc.op == KernelOp::kQuantize) {
    emit_quantize(a, desc);
  } else {
    emit_dequantize(a, desc);
  }
  return x86gen::finish(code, desc.name());
}

}  // namespace qrt::jit::x86gen
