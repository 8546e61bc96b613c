// qrt — the AVX2 pooling kernel generator (see jit/pool_kernels.h). Per output pixel, per
// block of 16 channels: max folds vpmaxub/vpmaxsb over the taps; average widens to int32
// (two registers of 8), sums the taps, adds the folded -zx·taps and requantizes.
//
// Registers: rdi args  rsi tap pointers  rdx output pixel  r10 pixels left  rcx channel
//            offset  r11 tap pointer  rbx pixel offset (stepping)  r12 pointer-row stride
//            ymm0/1 accumulators  ymm2/3 loads  ymm4 bias  ymm5 M  ymm6 lo  ymm7 hi  ymm8 zo
#include <asmjit/x86.h>

#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

using namespace asmjit;

void emit_pool_block(x86::Assembler& a, const KernelDesc& d, unsigned lanes) {
  const bool is_max = d.op == KernelOp::kMaxPool;
  for (unsigned t = 0; t < d.taps; ++t) {
    a.mov(x86::r11, x86::qword_ptr(x86::rsi, int32_t(8 * t)));
    a.add(x86::r11, x86::rbx);
    if (lanes == 16) {
      a.vmovdqu(x86::xmm2, x86::xmmword_ptr(x86::r11, x86::rcx));
    } else {
      x86gen::load_low_bytes(a, x86::xmm2, x86::r11, x86::rcx, 0, lanes);
    }
    if (is_max) {
      if (t == 0) a.vmovdqa(x86::xmm0, x86::xmm2);
      else if (d.storage_signed) a.vpmaxsb(x86::xmm0, x86::xmm0, x86::xmm2);
      else a.vpmaxub(x86::xmm0, x86::xmm0, x86::xmm2);
      continue;
    }
    a.vpsrldq(x86::xmm3, x86::xmm2, 8);
    if (d.storage_signed) {
      a.vpmovsxbd(x86::ymm2, x86::xmm2);
      a.vpmovsxbd(x86::ymm3, x86::xmm3);
    } else {
      a.vpmovzxbd(x86::ymm2, x86::xmm2);
      a.vpmovzxbd(x86::ymm3, x86::xmm3);
    }
    if (t == 0) {
      a.vpaddd(x86::ymm0, x86::ymm2, x86::ymm4);
      a.vpaddd(x86::ymm1, x86::ymm3, x86::ymm4);
    } else {
      a.vpaddd(x86::ymm0, x86::ymm0, x86::ymm2);
      a.vpaddd(x86::ymm1, x86::ymm1, x86::ymm3);
    }
  }
  if (!is_max) {
    for (unsigned j = 0; j < 2; ++j) {
      const x86::Ymm v(j);
      a.vcvtdq2ps(v, v);
      a.vmulps(v, v, x86::ymm5);
      a.vmaxps(v, v, x86::ymm6);
      a.vminps(v, v, x86::ymm7);
      a.vcvtps2dq(v, v);
      a.vpaddd(v, v, x86::ymm8);
    }
    a.vpackssdw(x86::ymm0, x86::ymm0, x86::ymm1);  // qwords: channels 0-3, 8-11, 4-7, 12-15
    a.vpermq(x86::ymm0, x86::ymm0, 0xD8);
    a.vextracti128(x86::xmm1, x86::ymm0, 1);
    if (d.out == OutKind::kS8) a.vpacksswb(x86::xmm0, x86::xmm0, x86::xmm1);
    else a.vpackuswb(x86::xmm0, x86::xmm0, x86::xmm1);
  }
  a.lea(x86::r11, x86::ptr(x86::rdx, x86::rcx));
  x86gen::store_low_bytes(a, x86::r11, 0, x86::xmm0, lanes);
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_avx2_pool(const KernelDesc& d) {
  if (d.taps == 0 || d.channels == 0) return Status::error("pooling kernel needs taps and channels");
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  emit_pool_kernel<x86::Ymm>(a, d, 16, [&](unsigned lanes) { emit_pool_block(a, d, lanes); });
  return x86gen::finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
