// qrt — the AVX-512 stream kernels: quantized add / mul / requantize (ElementwiseArgs) and
// quantize / dequantize (ConvertArgs), 16 lanes per step on zmm, the last n % 16 elements in
// one masked step (StreamTraits::masked_tail): the caller runs no scalar tail.
//
// The formulas and their order are the AVX2 kernels' (elementwise_avx2.cpp, convert_avx2.cpp),
// lane for lane: widen, subtract the zero point, (multiply in int32), convert, multiply by the
// f32 multiplier (add: two products, one rounded sum, no FMA), clamp to the bounds minus the
// output zero point, round half to even (vcvtps2dq under the default MXCSR), add the zero
// point, narrow with saturation (vpmovsdb; u8: vpmaxsd 0, then vpmovusdb).
//
// Registers (element-wise): rdi args  rsi a  rdx b  r8 y  rcx elements left
//   zmm0/1 operands  zmm2 M_a  zmm3 M_b  zmm4 za  zmm5 zb  zmm6 zo  zmm7 lo  zmm8 hi  zmm9 0
//   k1 the tail's lanes
// Registers (convert): rdi in  rsi out  rdx elements left
//   zmm0 lanes  zmm1 scale  zmm2 qmin - zp  zmm3 qmax - zp  zmm4 zp  zmm9 0  k1 tail  k2 not NaN
#include <asmjit/x86.h>

#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

using namespace asmjit;

/// Broadcasts a 32-bit immediate into every lane of a zmm register (clobbers eax).
void broadcast_zmm(x86::Assembler& a, const x86::Zmm& dst, uint32_t value) {
  a.mov(x86::eax, value);
  a.vpbroadcastd(dst, x86::eax);
}

/// k1 = the low `count` lanes (count 1..15); clobbers eax and ecx. (A shift, not BMI2's
/// bzhi: the level's detection does not require BMI2.)
void tail_mask(x86::Assembler& a, const x86::Gp& count) {
  if (count.id() != x86::Gp::kIdCx) a.mov(x86::ecx, count.r32());
  a.mov(x86::eax, 1);
  a.shl(x86::eax, x86::cl);
  a.sub(x86::eax, 1);
  a.kmovw(x86::k1, x86::eax);
}

/// 16 stored bytes at [ptr] widened to int32 lanes; masked: only k1's bytes are read.
void load_bytes(x86::Assembler& a, const x86::Zmm& dst, const x86::Gp& ptr, bool is_signed, bool masked) {
  if (masked) {
    a.k(x86::k1).z().vmovdqu8(dst.xmm(), x86::xmmword_ptr(ptr));
    if (is_signed) a.vpmovsxbd(dst, dst.xmm());
    else a.vpmovzxbd(dst, dst.xmm());
    return;
  }
  if (is_signed) a.vpmovsxbd(dst, x86::xmmword_ptr(ptr));
  else a.vpmovzxbd(dst, x86::xmmword_ptr(ptr));
}

/// Stores int32 lanes as saturated bytes at [ptr] (masked: k1's lanes only).
void store_bytes(x86::Assembler& a, const x86::Zmm& src, const x86::Gp& ptr, bool is_signed, bool masked) {
  const x86::Mem dst = x86::xmmword_ptr(ptr);
  if (is_signed) {
    if (masked) a.k(x86::k1).vpmovsdb(dst, src);
    else a.vpmovsdb(dst, src);
    return;
  }
  a.vpmaxsd(src, src, x86::zmm9);
  if (masked) a.k(x86::k1).vpmovusdb(dst, src);
  else a.vpmovusdb(dst, src);
}

void emit_elementwise_step(x86::Assembler& a, const KernelDesc& d, bool masked) {
  const bool binary = d.op != KernelOp::kRequantize;
  load_bytes(a, x86::zmm0, x86::rsi, d.storage_signed, masked);
  a.vpsubd(x86::zmm0, x86::zmm0, x86::zmm4);
  if (binary) {
    load_bytes(a, x86::zmm1, x86::rdx, d.b_signed, masked);
    a.vpsubd(x86::zmm1, x86::zmm1, x86::zmm5);
  }
  if (d.op == KernelOp::kQMul) a.vpmulld(x86::zmm0, x86::zmm0, x86::zmm1);  // |product| <= 255^2: exact
  a.vcvtdq2ps(x86::zmm0, x86::zmm0);
  a.vmulps(x86::zmm0, x86::zmm0, x86::zmm2);
  if (d.op == KernelOp::kQAdd) {
    a.vcvtdq2ps(x86::zmm1, x86::zmm1);
    a.vmulps(x86::zmm1, x86::zmm1, x86::zmm3);
    a.vaddps(x86::zmm0, x86::zmm0, x86::zmm1);
  }
  a.vmaxps(x86::zmm0, x86::zmm0, x86::zmm7);
  a.vminps(x86::zmm0, x86::zmm0, x86::zmm8);
  a.vcvtps2dq(x86::zmm0, x86::zmm0);
  a.vpaddd(x86::zmm0, x86::zmm0, x86::zmm6);
  store_bytes(a, x86::zmm0, x86::r8, d.out == OutKind::kS8, masked);
}

// Matches numerics::quantize_f32 lane by lane, as emit_quantize of convert_avx2.cpp.
void emit_quantize_step(x86::Assembler& a, const KernelDesc& d, bool masked) {
  if (masked) a.k(x86::k1).z().vmovups(x86::zmm0, x86::zmmword_ptr(x86::rdi));
  else a.vmovups(x86::zmm0, x86::zmmword_ptr(x86::rdi));
  a.vdivps(x86::zmm0, x86::zmm0, x86::zmm1);
  a.vrndscaleps(x86::zmm0, x86::zmm0, 0x08);              // nearest even, exceptions suppressed
  a.vcmpps(x86::k2, x86::zmm0, x86::zmm0, 0);             // ordered and equal: not NaN
  a.k(x86::k2).z().vmovaps(x86::zmm0, x86::zmm0);         // NaN -> 0 (then + zp)
  a.vmaxps(x86::zmm0, x86::zmm0, x86::zmm2);
  a.vminps(x86::zmm0, x86::zmm0, x86::zmm3);
  a.vcvtps2dq(x86::zmm0, x86::zmm0);                      // exact: integral and small
  a.vpaddd(x86::zmm0, x86::zmm0, x86::zmm4);
  store_bytes(a, x86::zmm0, x86::rsi, d.storage_signed, masked);
}

// Matches numerics::dequantize_f32: f32(q - zp) * scale, exact conversion, one rounding.
void emit_dequantize_step(x86::Assembler& a, const KernelDesc& d, bool masked) {
  load_bytes(a, x86::zmm0, x86::rdi, d.storage_signed, masked);
  a.vpsubd(x86::zmm0, x86::zmm0, x86::zmm4);
  a.vcvtdq2ps(x86::zmm0, x86::zmm0);
  a.vmulps(x86::zmm0, x86::zmm0, x86::zmm1);
  if (masked) a.k(x86::k1).vmovups(x86::zmmword_ptr(x86::rsi), x86::zmm0);
  else a.vmovups(x86::zmmword_ptr(x86::rsi), x86::zmm0);
}

/// The loop over `count` elements: whole steps of 16 by `step(false)` with `advance` after
/// each, then one masked step for the rest.
template <typename Step, typename Advance>
void emit_stream_loop(x86::Assembler& a, const x86::Gp& count, Step step, Advance advance) {
  Label loop = a.newLabel(), tail = a.newLabel(), done = a.newLabel();
  a.cmp(count, 16);
  a.jb(tail);
  a.bind(loop);
  step(false);
  advance();
  a.sub(count, 16);
  a.cmp(count, 16);
  a.jae(loop);
  a.bind(tail);
  a.test(count, count);
  a.jz(done);
  tail_mask(a, count);
  step(true);
  a.bind(done);
  a.vzeroupper();
  a.ret();
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_avx512_elementwise(const KernelDesc& d) {
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  const bool binary = d.op != KernelOp::kRequantize;
  emit_elementwise_prologue<x86::Zmm>(a);
  a.shl(x86::rcx, 3);  // elements: the blocks' and the tail's
  a.add(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(ElementwiseArgs, tail)));
  a.vpxord(x86::zmm9, x86::zmm9, x86::zmm9);
  emit_stream_loop(
      a, x86::rcx, [&](bool masked) { emit_elementwise_step(a, d, masked); },
      [&] {
        a.add(x86::rsi, 16);
        if (binary) a.add(x86::rdx, 16);
        a.add(x86::r8, 16);
      });
  return x86gen::finish(code, d.name());
}

Result<std::shared_ptr<ExecutableCode>> generate_avx512_convert(const KernelDesc& d) {
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(ConvertArgs, n)));
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(ConvertArgs, out)));
  a.mov(x86::rdi, x86::qword_ptr(x86::rdi, offsetof(ConvertArgs, in)));
  broadcast_zmm(a, x86::zmm1, bits_of(d.scale));
  broadcast_zmm(a, x86::zmm4, uint32_t(d.zero_point));
  a.vpxord(x86::zmm9, x86::zmm9, x86::zmm9);
  if (d.op == KernelOp::kQuantize) {
    broadcast_zmm(a, x86::zmm2, bits_of(float(d.qmin - d.zero_point)));
    broadcast_zmm(a, x86::zmm3, bits_of(float(d.qmax - d.zero_point)));
    emit_stream_loop(
        a, x86::rdx, [&](bool masked) { emit_quantize_step(a, d, masked); },
        [&] {
          a.add(x86::rdi, 64);
          a.add(x86::rsi, 16);
        });
  } else {
    emit_stream_loop(
        a, x86::rdx, [&](bool masked) { emit_dequantize_step(a, d, masked); },
        [&] {
          a.add(x86::rdi, 16);
          a.add(x86::rsi, 64);
        });
  }
  return x86gen::finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
