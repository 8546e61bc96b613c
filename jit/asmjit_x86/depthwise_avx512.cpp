// qrt — the AVX-512 depthwise-convolution kernel generator (see jit/core/microkernel.h,
// DepthwiseArgs): the AVX2 kernel's method on zmm, 32 channels per block.
//
// For each output pixel, for each group of up to 4 blocks: the accumulators start at the
// folded bias; each pair of taps is widened to s16 (32 channels per zmm), interleaved tap by
// tap (vpunpck{l,h}wd, within 128-bit lanes) and multiplied with the interleaved s16 weights
// by vpmaddwd — per 128-bit lane L the first register then holds channels 8L..8L+3, the
// second 8L+4..8L+7 (depthwise_lane_channel), the order of the packed epilogue constants.
// vpackssdw of the two puts the channels back in order for 8-bit outputs; 32-bit outputs are
// reordered by two vshufi64x2. The last block may be partial: its loads and stores are masked
// to the channels that exist.
//
// Registers: rdi args  rsi tap pointers of the pixel  rdx output pixel  r10 pixels left
//            r8 weights of the group  r9 epilogue of the group  rcx channel offset
//            r11 / rax the pair's two tap pointers  rbx the pixel's input offset (stepping
//            mode)  r12 bytes between the pixels' tap-pointer rows (0 in stepping mode)
//            zmm0-7 accumulators of up to 4 blocks  zmm8-11 inputs  zmm12-13 store temps
//            k1 the partial block's byte mask, k2/k3 its two dword halves
#include <asmjit/x86.h>

#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

using namespace asmjit;

constexpr unsigned kBlock = 32;

x86::Mem ep(unsigned block, size_t field, unsigned half) {
  return x86::zmmword_ptr(x86::r9, int32_t(block * kEpFields * kBlock * 4 + field * kBlock * 4 + half * 64));
}

// A group of `blocks` (1..4) 32-channel blocks at channel offset rcx; the last block holds
// `last_lanes` (1..32) channels.
void emit_group(x86::Assembler& a, const KernelDesc& d, unsigned blocks, unsigned last_lanes) {
  const unsigned pairs = d.taps / 2;
  const int32_t block_weights = int32_t(pairs * kBlock * 4);
  const unsigned ob = d.out == OutKind::kS32 || d.out == OutKind::kF32 ? 4 : 1;
  auto acc = [](unsigned b, unsigned j) { return x86::Zmm(2 * b + j); };
  for (unsigned b = 0; b < blocks; ++b) {
    a.vmovdqa32(acc(b, 0), ep(b, kEpBias, 0));
    a.vmovdqa32(acc(b, 1), ep(b, kEpBias, 1));
  }
  for (unsigned p = 0; p < pairs; ++p) {
    a.mov(x86::r11, x86::qword_ptr(x86::rsi, int32_t(16 * p)));
    a.mov(x86::rax, x86::qword_ptr(x86::rsi, int32_t(16 * p + 8)));
    a.add(x86::r11, x86::rbx);  // the pixel's offset in stepping mode (0 otherwise)
    a.add(x86::rax, x86::rbx);
    const x86::Gp ptrs[2] = {x86::r11, x86::rax};
    for (unsigned b = 0; b < blocks; ++b) {
      const bool partial = b + 1 == blocks && last_lanes < kBlock;
      for (unsigned t = 0; t < 2; ++t) {
        const x86::Zmm v(8 + t);
        const x86::Mem src = x86::ymmword_ptr(ptrs[t], x86::rcx, 0, int32_t(kBlock * b));
        if (partial) {
          a.k(x86::k1).z().vmovdqu8(v.ymm(), src);  // never reads past the last channel
          if (d.storage_signed) a.vpmovsxbw(v, v.ymm());
          else a.vpmovzxbw(v, v.ymm());
        } else if (d.storage_signed) {
          a.vpmovsxbw(v, src);
        } else {
          a.vpmovzxbw(v, src);
        }
      }
      a.vpunpcklwd(x86::zmm10, x86::zmm8, x86::zmm9);
      a.vpunpckhwd(x86::zmm11, x86::zmm8, x86::zmm9);
      const int32_t w = int32_t(b) * block_weights + int32_t(p * kBlock * 4);
      a.vpmaddwd(x86::zmm10, x86::zmm10, x86::zmmword_ptr(x86::r8, w));
      a.vpmaddwd(x86::zmm11, x86::zmm11, x86::zmmword_ptr(x86::r8, w + 64));
      a.vpaddd(acc(b, 0), acc(b, 0), x86::zmm10);
      a.vpaddd(acc(b, 1), acc(b, 1), x86::zmm11);
    }
  }
  for (unsigned b = 0; b < blocks; ++b) {
    const bool partial = b + 1 == blocks && last_lanes < kBlock;
    const unsigned lanes = partial ? last_lanes : kBlock;
    for (unsigned j = 0; j < 2; ++j) {
      const x86::Zmm v = acc(b, j);
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
      // The values lie inside the output bounds: the narrowing never saturates.
      a.vpackssdw(x86::zmm12, acc(b, 0), acc(b, 1));  // s16 channels 0..31 in order
      if (d.out == OutKind::kU8) a.vpmovuswb(x86::ymm12, x86::zmm12);
      else a.vpmovswb(x86::ymm12, x86::zmm12);
      const x86::Mem dst = x86::ymmword_ptr(x86::rdx, x86::rcx, 0, int32_t(kBlock * b));
      if (partial) a.k(x86::k1).vmovdqu8(dst, x86::ymm12);
      else a.vmovdqu8(dst, x86::ymm12);
      continue;
    }
    // 128-bit lanes (A0, A1, B0, B1) then (A0, B0, A1, B1): channels 0-15; likewise 16-31.
    a.vshufi64x2(x86::zmm12, acc(b, 0), acc(b, 1), 0x44);
    a.vshufi64x2(x86::zmm12, x86::zmm12, x86::zmm12, 0xD8);
    a.vshufi64x2(x86::zmm13, acc(b, 0), acc(b, 1), 0xEE);
    a.vshufi64x2(x86::zmm13, x86::zmm13, x86::zmm13, 0xD8);
    for (unsigned j = 0; j < 2; ++j) {
      const int n = int(lanes) - int(16 * j);
      if (n <= 0) break;
      const x86::Mem dst = x86::zmmword_ptr(x86::rdx, x86::rcx, 2, int32_t(kBlock * 4 * b + 64 * j));
      const x86::Zmm v(12 + j);
      if (n >= 16) a.vmovdqu32(dst, v);
      else a.k(j == 0 ? x86::k2 : x86::k3).vmovdqu32(dst, v);
    }
  }
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_avx512_depthwise(const KernelDesc& d) {
  // The backend's why_not() has checked taps, channels and the 32-channel blocks.
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  Label pixel = a.newLabel(), done = a.newLabel();
  const unsigned tail = d.channels % kBlock;
  if (tail != 0) {
    // The partial block's masks: its bytes, and its two 16-lane dword halves.
    a.mov(x86::eax, uint32_t((uint64_t(1) << tail) - 1));
    a.kmovd(x86::k1, x86::eax);
    a.mov(x86::eax, tail >= 16 ? 0xFFFFu : (1u << tail) - 1);
    a.kmovw(x86::k2, x86::eax);
    a.mov(x86::eax, tail > 16 ? (1u << (tail - 16)) - 1 : 0u);
    a.kmovw(x86::k3, x86::eax);
  }
  // Up to 4 blocks accumulated together: 8 accumulators.
  emit_depthwise_loops(a, d, kBlock, 4, int32_t(d.taps / 2 * kBlock * 4), int32_t(kEpFields * kBlock * 4), pixel, done,
                       [&](unsigned blocks, unsigned last_lanes) { emit_group(a, d, blocks, last_lanes); });
  return finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
