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
//            r8 weights of the group  r9 epilogue of the group  rcx channel offset
//            r11 / rax the pair's two tap pointers  rbx the pixel's input offset (stepping
//            mode)  r12 bytes between the pixels' tap-pointer rows (0 in stepping mode)
//            ymm0-7 accumulators of up to 4 blocks  ymm8-11 inputs  ymm12-14 store temps
#include <asmjit/x86.h>

#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

using namespace asmjit;

x86::Mem ep(unsigned block, size_t field, unsigned half) {
  return x86::ymmword_ptr(x86::r9, int32_t(block * kEpFields * 64 + field * 64 + half * 32));
}

// A group of `blocks` (1..4) 16-channel blocks at channel offset rcx, all accumulated in
// registers so that each tap pointer is loaded once per group; the last block holds
// `last_lanes` (1..16) channels.
void emit_group(x86::Assembler& a, const KernelDesc& d, unsigned blocks, unsigned last_lanes, const Label& masks) {
  const unsigned pairs = d.taps / 2;
  const int32_t block_weights = int32_t(pairs * 64);
  const unsigned ob = d.out == OutKind::kS32 || d.out == OutKind::kF32 ? 4 : 1;
  auto acc = [](unsigned b, unsigned j) { return x86::Ymm(2 * b + j); };
  for (unsigned b = 0; b < blocks; ++b) {
    a.vmovdqa(acc(b, 0), ep(b, kEpBias, 0));
    a.vmovdqa(acc(b, 1), ep(b, kEpBias, 1));
  }
  for (unsigned p = 0; p < pairs; ++p) {
    a.mov(x86::r11, x86::qword_ptr(x86::rsi, int32_t(16 * p)));
    a.mov(x86::rax, x86::qword_ptr(x86::rsi, int32_t(16 * p + 8)));
    a.add(x86::r11, x86::rbx);  // the pixel's offset in stepping mode (0 otherwise)
    a.add(x86::rax, x86::rbx);
    const x86::Gp ptrs[2] = {x86::r11, x86::rax};
    for (unsigned b = 0; b < blocks; ++b) {
      const unsigned lanes = b + 1 == blocks ? last_lanes : 16;
      for (unsigned t = 0; t < 2; ++t) {
        const x86::Ymm v(8 + t);
        if (lanes == 16) {
          const x86::Mem src = x86::xmmword_ptr(ptrs[t], x86::rcx, 0, int32_t(16 * b));
          if (d.storage_signed) a.vpmovsxbw(v, src);
          else a.vpmovzxbw(v, src);
        } else {
          x86gen::load_low_bytes(a, v.xmm(), ptrs[t], x86::rcx, int32_t(16 * b), lanes);
          if (d.storage_signed) a.vpmovsxbw(v, v.xmm());
          else a.vpmovzxbw(v, v.xmm());
        }
      }
      a.vpunpcklwd(x86::ymm10, x86::ymm8, x86::ymm9);
      a.vpunpckhwd(x86::ymm11, x86::ymm8, x86::ymm9);
      a.vpmaddwd(x86::ymm10, x86::ymm10, x86::ymmword_ptr(x86::r8, int32_t(b) * block_weights + int32_t(64 * p)));
      a.vpmaddwd(x86::ymm11, x86::ymm11, x86::ymmword_ptr(x86::r8, int32_t(b) * block_weights + int32_t(64 * p + 32)));
      a.vpaddd(acc(b, 0), acc(b, 0), x86::ymm10);
      a.vpaddd(acc(b, 1), acc(b, 1), x86::ymm11);
    }
  }
  for (unsigned b = 0; b < blocks; ++b) {
    const unsigned lanes = b + 1 == blocks ? last_lanes : 16;
    for (unsigned j = 0; j < 2; ++j) {
      const x86::Ymm v = acc(b, j);
      if (d.out == OutKind::kS32) continue;
      a.vcvtdq2ps(v, v);
      a.vmulps(v, v, ep(b, kEpMultiplier, j));
      if (d.out == OutKind::kF32) continue;
      a.vmaxps(v, v, ep(b, kEpLowerBound, j));
      a.vminps(v, v, ep(b, kEpUpperBound, j));
      a.vcvtps2dq(v, v);
      a.vpaddd(v, v, ep(b, kEpOutputZeroPoint, j));
    }
    if (ob == 1) {
      a.vpackssdw(x86::ymm12, acc(b, 0), acc(b, 1));  // lane 0: channels 0-7, lane 1: 8-15
      a.vextracti128(x86::xmm13, x86::ymm12, 1);
      if (d.out == OutKind::kU8) a.vpackuswb(x86::xmm12, x86::xmm12, x86::xmm13);
      else a.vpacksswb(x86::xmm12, x86::xmm12, x86::xmm13);
      a.lea(x86::r11, x86::ptr(x86::rdx, x86::rcx, 0, int32_t(16 * b)));
      x86gen::store_low_bytes(a, x86::r11, 0, x86::xmm12, lanes);
      continue;
    }
    a.vperm2i128(x86::ymm12, acc(b, 0), acc(b, 1), 0x20);  // channels 0-7
    a.vperm2i128(x86::ymm13, acc(b, 0), acc(b, 1), 0x31);  // channels 8-15
    a.lea(x86::r11, x86::ptr(x86::rdx, x86::rcx, 2, int32_t(64 * b)));
    for (unsigned j = 0; j < 2; ++j) {
      const int n = int(lanes) - int(8 * j);
      if (n <= 0) break;
      const x86::Ymm v(12 + j);
      if (n >= 8) {
        a.vmovdqu(x86::ymmword_ptr(x86::r11, int32_t(32 * j)), v);
      } else {
        a.vmovdqu(x86::ymm14, x86::ymmword_ptr(masks, (8 - n) * 4));
        a.vpmaskmovd(x86::ymmword_ptr(x86::r11, int32_t(32 * j)), x86::ymm14, v);
      }
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
  // Up to 4 blocks accumulated together: 8 of the 16 ymm registers.
  emit_depthwise_loops(a, d, 16, 4, int32_t(d.taps / 2 * 64), int32_t(kEpFields * 64), pixel, done,
                       [&](unsigned blocks, unsigned last_lanes) { emit_group(a, d, blocks, last_lanes, masks); });
  x86gen::embed_lane_masks(a, masks);
  return x86gen::finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
