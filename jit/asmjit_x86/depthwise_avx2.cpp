// qrt — the AVX2 depthwise-convolution kernel generator (see jit/depthwise_kernels.h).
//
// For each output pixel, for each block of 16 channels: the accumulators start at the folded
// bias; each pair of taps is widened to s16, interleaved tap by tap (vpunpck{l,h}wd) and
// multiplied with the interleaved s16 weights by vpmaddwd — lanes then hold channels
// {0-3, 8-11} and {4-7, 12-15}, the order the packed epilogue constants use and the one
// vpackssdw undoes. The last block may be partial: loads and stores then touch exactly the
// channels that exist.
//
// Registers: rdi args  rsi tap pointers of the pixel  rdx output pixel  r10 pixels left
//            r8 weights of the block  r9 epilogue of the block  rcx channel offset
//            r11 / rax the pair's two tap pointers   ymm0/1 accumulators  ymm2-7 temps
#include <asmjit/x86.h>

#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/depthwise_kernels.h"
#include "jit/gemm_pack.h"
#include "jit/x86_generators.h"

namespace qrt::jit {

namespace {

using namespace asmjit;

x86::Mem ep(size_t field, unsigned half) { return x86::ymmword_ptr(x86::r9, int32_t(field * 64 + half * 32)); }

// One block of `lanes` (1..16) channels at channel offset rcx.
void emit_block(x86::Assembler& a, const KernelDesc& d, unsigned lanes, const Label& masks) {
  const unsigned pairs = d.taps / 2;
  const unsigned ob = d.out == OutKind::kS32 || d.out == OutKind::kF32 ? 4 : 1;
  a.vmovdqa(x86::ymm0, ep(kEpBias, 0));
  a.vmovdqa(x86::ymm1, ep(kEpBias, 1));
  for (unsigned p = 0; p < pairs; ++p) {
    a.mov(x86::r11, x86::qword_ptr(x86::rsi, int32_t(16 * p)));
    a.mov(x86::rax, x86::qword_ptr(x86::rsi, int32_t(16 * p + 8)));
    const x86::Gp ptrs[2] = {x86::r11, x86::rax};
    for (unsigned t = 0; t < 2; ++t) {
      const x86::Ymm v(2 + t);
      if (lanes == 16) {
        if (d.storage_signed) a.vpmovsxbw(v, x86::xmmword_ptr(ptrs[t], x86::rcx));
        else a.vpmovzxbw(v, x86::xmmword_ptr(ptrs[t], x86::rcx));
      } else {
        x86gen::load_low_bytes(a, v.xmm(), ptrs[t], x86::rcx, 0, lanes);
        if (d.storage_signed) a.vpmovsxbw(v, v.xmm());
        else a.vpmovzxbw(v, v.xmm());
      }
    }
    a.vpunpcklwd(x86::ymm4, x86::ymm2, x86::ymm3);
    a.vpunpckhwd(x86::ymm5, x86::ymm2, x86::ymm3);
    a.vpmaddwd(x86::ymm4, x86::ymm4, x86::ymmword_ptr(x86::r8, int32_t(64 * p)));
    a.vpmaddwd(x86::ymm5, x86::ymm5, x86::ymmword_ptr(x86::r8, int32_t(64 * p + 32)));
    a.vpaddd(x86::ymm0, x86::ymm0, x86::ymm4);
    a.vpaddd(x86::ymm1, x86::ymm1, x86::ymm5);
  }
  for (unsigned j = 0; j < 2; ++j) {
    const x86::Ymm v(j);
    if (d.out == OutKind::kS32) continue;
    a.vcvtdq2ps(v, v);
    a.vmulps(v, v, ep(kEpMultiplier, j));
    if (d.out == OutKind::kF32) continue;
    a.vmaxps(v, v, ep(kEpLowerBound, j));
    a.vminps(v, v, ep(kEpUpperBound, j));
    a.vcvtps2dq(v, v);
    a.vpaddd(v, v, ep(kEpOutputZeroPoint, j));
  }
  if (ob == 1) {
    a.vpackssdw(x86::ymm6, x86::ymm0, x86::ymm1);  // lane 0: channels 0-7, lane 1: 8-15
    a.vextracti128(x86::xmm7, x86::ymm6, 1);
    if (d.out == OutKind::kU8) a.vpackuswb(x86::xmm6, x86::xmm6, x86::xmm7);
    else a.vpacksswb(x86::xmm6, x86::xmm6, x86::xmm7);
    a.lea(x86::r11, x86::ptr(x86::rdx, x86::rcx));
    x86gen::store_low_bytes(a, x86::r11, 0, x86::xmm6, lanes);
    return;
  }
  a.vperm2i128(x86::ymm6, x86::ymm0, x86::ymm1, 0x20);  // channels 0-7
  a.vperm2i128(x86::ymm7, x86::ymm0, x86::ymm1, 0x31);  // channels 8-15
  a.lea(x86::r11, x86::ptr(x86::rdx, x86::rcx, 2));
  for (unsigned j = 0; j < 2; ++j) {
    const int n = int(lanes) - int(8 * j);
    if (n <= 0) break;
    const x86::Ymm v(6 + j);
    if (n >= 8) {
      a.vmovdqu(x86::ymmword_ptr(x86::r11, int32_t(32 * j)), v);
    } else {
      a.vmovdqu(x86::ymm2, x86::ymmword_ptr(masks, (8 - n) * 4));
      a.vpmaskmovd(x86::ymmword_ptr(x86::r11, int32_t(32 * j)), x86::ymm2, v);
    }
  }
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_avx2_depthwise(const KernelDesc& d) {
  if (d.taps == 0 || d.taps % 2 != 0 || d.channels == 0) {
    return Status::error("depthwise kernel needs an even, non-zero tap count and channels");
  }
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  Label masks = a.newLabel(), pixel = a.newLabel(), done = a.newLabel();
  const unsigned full = d.channels / 16, tail = d.channels % 16;
  const int32_t block_weights = int32_t(d.taps / 2 * 64), block_ep = int32_t(kEpFields * 64);
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, taps)));
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, out)));
  a.mov(x86::r10, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, pixels)));
  a.test(x86::r10, x86::r10);
  a.jz(done);
  a.bind(pixel);
  a.mov(x86::r8, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, weights)));
  a.mov(x86::r9, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, epilogue)));
  a.xor_(x86::ecx, x86::ecx);
  if (full > 0) {
    Label block = a.newLabel();
    a.bind(block);
    emit_block(a, d, 16, masks);
    a.add(x86::r8, block_weights);
    a.add(x86::r9, block_ep);
    a.add(x86::rcx, 16);
    a.cmp(x86::rcx, int32_t(full * 16));
    a.jb(block);
  }
  if (tail > 0) emit_block(a, d, tail, masks);
  a.add(x86::rsi, int32_t(8 * d.taps));
  a.add(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, out_stride)));
  a.dec(x86::r10);
  a.jnz(pixel);
  a.bind(done);
  a.vzeroupper();
  a.ret();
  a.align(AlignMode::kData, 32);
  a.bind(masks);
  a.embedUInt32(0xFFFFFFFFu, 8);
  a.embedUInt32(0u, 8);
  return x86gen::finish(code, d.name());
}

}  // namespace qrt::jit
