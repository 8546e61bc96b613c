// qrt — the AVX-512 pooling kernel generator (PoolArgs), the zmm twin of pool_avx2.cpp. Per
// output pixel, per block of 64 channels (the last block masked to the channels left): max
// folds vpmaxub/vpmaxsb over the taps; average widens each 16 channels to int32, sums the
// taps onto the folded -zx·taps, and requantizes as the AVX2 kernel does (f32 multiply, clamp
// to the bounds minus zo, round half to even, + zo, saturating narrowing).
//
// Registers: rdi args  rsi tap pointers  rdx output pixel  r10 pixels left  rcx channel
//            offset  r11 tap pointer  rbx pixel offset (stepping)  r12 pointer-row stride
//            zmm10-13 accumulators (max: zmm10)  zmm2/3 loads  zmm4 bias  zmm5 M  zmm6 lo
//            zmm7 hi  zmm8 zo  zmm9 0  k1 the block's bytes  k2 a partial group's lanes
#include <asmjit/x86.h>

#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

using namespace asmjit;

constexpr unsigned kBlock = 64;

/// k = the low `lanes` bits (lanes < 64: partial blocks and groups only); clobbers rax.
void set_mask(x86::Assembler& a, const x86::KReg& k, unsigned lanes) {
  a.mov(x86::rax, (uint64_t(1) << lanes) - 1);
  a.kmovq(k, x86::rax);
}

void emit_pool_block(x86::Assembler& a, const KernelDesc& d, unsigned lanes) {
  const bool is_max = d.op == KernelOp::kMaxPool, partial = lanes < kBlock;
  const unsigned groups = (lanes + 15) / 16;
  if (partial) set_mask(a, x86::k1, lanes);
  for (unsigned t = 0; t < d.taps; ++t) {
    a.mov(x86::r11, x86::qword_ptr(x86::rsi, int32_t(8 * t)));
    a.add(x86::r11, x86::rbx);
    const x86::Mem in = x86::zmmword_ptr(x86::r11, x86::rcx);
    if (partial) a.k(x86::k1).z().vmovdqu8(x86::zmm2, in);  // faults suppressed past the channels
    else a.vmovdqu8(x86::zmm2, in);
    if (is_max) {
      if (t == 0) a.vmovdqa64(x86::zmm10, x86::zmm2);
      else if (d.storage_signed) a.vpmaxsb(x86::zmm10, x86::zmm10, x86::zmm2);
      else a.vpmaxub(x86::zmm10, x86::zmm10, x86::zmm2);
      continue;
    }
    for (unsigned g = 0; g < groups; ++g) {
      const x86::Zmm acc(10 + g);
      if (g > 0) a.vextracti32x4(x86::xmm3, x86::zmm2, g);
      const x86::Xmm bytes = g > 0 ? x86::xmm3 : x86::xmm2;
      if (d.storage_signed) a.vpmovsxbd(x86::zmm3, bytes);
      else a.vpmovzxbd(x86::zmm3, bytes);
      a.vpaddd(acc, x86::zmm3, t == 0 ? x86::zmm4 : acc);
    }
  }
  if (is_max) {
    const x86::Mem out = x86::zmmword_ptr(x86::rdx, x86::rcx);
    if (partial) a.k(x86::k1).vmovdqu8(out, x86::zmm10);
    else a.vmovdqu8(out, x86::zmm10);
    return;
  }
  for (unsigned g = 0; g < groups; ++g) {
    const x86::Zmm v(10 + g);
    a.vcvtdq2ps(v, v);
    a.vmulps(v, v, x86::zmm5);
    a.vmaxps(v, v, x86::zmm6);
    a.vminps(v, v, x86::zmm7);
    a.vcvtps2dq(v, v);
    a.vpaddd(v, v, x86::zmm8);
    const unsigned group_lanes = std::min(16u, lanes - 16 * g);
    const x86::Mem out = x86::xmmword_ptr(x86::rdx, x86::rcx, 0, int32_t(16 * g));
    if (group_lanes < 16) set_mask(a, x86::k2, group_lanes);
    if (d.out != OutKind::kS8) a.vpmaxsd(v, v, x86::zmm9);
    if (group_lanes < 16) {
      if (d.out == OutKind::kS8) a.k(x86::k2).vpmovsdb(out, v);
      else a.k(x86::k2).vpmovusdb(out, v);
    } else if (d.out == OutKind::kS8) {
      a.vpmovsdb(out, v);
    } else {
      a.vpmovusdb(out, v);
    }
  }
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_avx512_pool(const KernelDesc& d) {
  if (d.taps == 0 || d.channels == 0) return Status::error("pooling kernel needs taps and channels");
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  a.vpxord(x86::zmm9, x86::zmm9, x86::zmm9);  // for the u8 narrowing
  emit_pool_kernel<x86::Zmm>(a, d, kBlock, [&](unsigned lanes) { emit_pool_block(a, d, lanes); });
  return x86gen::finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
