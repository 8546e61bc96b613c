// qrt — the AVX-512 VNNI generators of the dot4 depthwise path (see jit/core/microkernel.h,
// DwInterleaveArgs and DwRowsArgs).
//
// Interleave: per output position, per tap group, per channel block: the group's four taps
// (four loads from the padded input row, sign bit flipped for s8), two rounds of
// vpunpck{l,h}bw / vpunpck{l,h}wd (within 128-bit lanes), four stores. Blocks are 32 lanes:
// two at a time on zmm (each result's halves go to the two blocks), a single one on ymm, a
// narrowed last block of 16 on xmm.
//   rdi args  rsi the position's first tap  rdx its interleaved output  r10 positions left
//   r8 step  r9 dilation  rax 3 · dilation  r11 the group's first tap
//   v0-3 taps  v4-7 byte pairs  v8-11 quads  zmm31 0x80 bytes (s8 input)
//
// Rows: per channel block, with the block's epilogue constants and as many weights as fit
// in registers, four output pixels at a time: the accumulators start at the bias, every
// window row and tap group adds one vpdpbusd per 16 lanes (the quads of a block's 32 lanes
// are one zmm pair), then the epilogue of the GEMM (f32 multiply, clamp, round, + zero point)
// and vpmov{s,us}db narrowings that vpermd puts back in channel order. A partial block's
// store is masked to its channels. Zen 5 measured: loads, not vpdpbusd, bounded the first
// version (epilogue constants read per pixel); they now stay in registers. With
// desc.paired_pixels the four pixels are two positions: each quad load feeds two vpdpbusd,
// the second pixel's by the weight set pair_shift taps on (the weights that do not fit in
// registers are memory operands), and the tail runs a pair before the last single pixel; with
// three weight sets (stride 2, 3 taps) a position's quads also feed the previous position's
// second pixel by set 2, one more load past the last position (dw_rows_position_uses).
//   rdi args  rsi the interleaved rows' pointers  rdx output pixel  r10 pixels left
//   r8 weights of the block  r9 epilogue of the block  rcx the block's first channel
//   rax the pixel's offset in the interleaved rows  r11 a row's pointer
//   zmm0-7 four pixels' accumulators  zmm8-11 quads  zmm12-13 narrowing  zmm14 the order
//   zmm15-31 epilogue constants, then weights  k1 the partial block's byte mask
// desc.q31 (8-bit results): TFLite's requantization (emit_q31_round) replaces the f32 multiply
// and upper clamp; the narrowing and the lower bound are the same.
// int32 results (OutKind::kS32: accumulators for a profile's requantization) skip the
// epilogue: vpermi2d puts each pixel's lanes back in channel order (zmm14 and zmm17 the
// indices, zmm12-13 the results) and they are stored whole, the partial block under k2/k3 (its
// first and second 16 channels).
#include <asmjit/x86.h>

#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

using namespace asmjit;

/// Register `id` as wide as a block of `width` lanes of bytes (16, 32 or 64).
x86::Vec vreg(unsigned width, unsigned id) {
  if (width == 64) return x86::Zmm(id);
  if (width == 32) return x86::Ymm(id);
  return x86::Xmm(id);
}

// The quads of one 16- or 32-lane block (width), or of two consecutive 32-lane blocks at once
// (width 64, on zmm: the low 256 bits of each result belong to the first block, the high
// ones to the second, 128 bytes on).
void emit_interleave_block(x86::Assembler& a, const KernelDesc& d, unsigned width, int32_t in_offset, int32_t out_offset) {
  const x86::Mem taps[4] = {x86::ptr(x86::r11, in_offset), x86::ptr(x86::r11, x86::r9, 0, in_offset),
                            x86::ptr(x86::r11, x86::r9, 1, in_offset), x86::ptr(x86::r11, x86::rax, 0, in_offset)};
  auto v = [&](unsigned id) { return vreg(width, id); };
  for (unsigned j = 0; j < 4; ++j) {
    a.vmovdqu8(v(j), taps[j]);
    if (d.storage_signed) a.vpxord(v(j), v(j), vreg(width, 31));
  }
  a.vpunpcklbw(v(4), v(0), v(1));
  a.vpunpckhbw(v(5), v(0), v(1));
  a.vpunpcklbw(v(6), v(2), v(3));
  a.vpunpckhbw(v(7), v(2), v(3));
  a.vpunpcklwd(v(8), v(4), v(6));   // lanes 16L + 0..3
  a.vpunpckhwd(v(9), v(4), v(6));   // 16L + 4..7
  a.vpunpcklwd(v(10), v(5), v(7));  // 16L + 8..11
  a.vpunpckhwd(v(11), v(5), v(7));  // 16L + 12..15
  if (width == 64) {
    // The first block's 128 bytes are the low halves of the four results in turn, the
    // second's the high halves: vshufi64x2 pairs them into four whole-zmm stores (stores,
    // not shuffles, bounded this loop: four more a position cost 8% of a 56²·144 layer).
    for (unsigned half = 0; half < 2; ++half) {
      for (unsigned r = 0; r < 4; r += 2) {
        a.vshufi64x2(x86::Zmm(4 + r / 2), x86::Zmm(8 + r), x86::Zmm(9 + r), half ? 0xEE : 0x44);
        a.vmovdqu8(x86::ptr(x86::rdx, out_offset + int32_t(half * 128 + r * 32)), x86::Zmm(4 + r / 2));
      }
    }
    return;
  }
  for (unsigned r = 0; r < 4; ++r) a.vmovdqu8(x86::ptr(x86::rdx, out_offset + int32_t(r * width)), vreg(width, 8 + r));
}

// Pixels per iteration of the rows kernel: four independent chains of vpdpbusd and epilogue.
constexpr unsigned kPixels = 4;
// zmm0-7 accumulators (2 per pixel), zmm8-11 quads, zmm12-13 narrowing, zmm14 the vpermd
// order; zmm15-31 hold the block's constants: bias, multiplier and upper bound per 16 lanes,
// the zero points as packed words and the lower bounds as output bytes, then weights.
constexpr unsigned kFirstConstant = 15, kConstants = 17;

/// vpermd indices that put the bytes of two pixels (vpackssdw of each pixel's registers,
/// then one vpack{us,ss}wb of both) back in channel order: the first pixel's block at byte 0,
/// the second's at byte 32. Per block width: 32 lanes, then 16.
constexpr uint32_t kPairOrder[2][16] = {{0, 8, 1, 9, 4, 12, 5, 13, 2, 10, 3, 11, 6, 14, 7, 15},
                                        {0, 4, 8, 12, 0, 0, 0, 0, 1, 5, 9, 13, 0, 0, 0, 0}};

/// vpermi2d indices (over a 32-lane block's two accumulators, 0-15 the first, 16-31 the second)
/// that give its channels 0-15 and 16-31 in order: lane l holds channel
/// dw_rows_lane_channel(32, l) = 16·(m % 2) + 4·(m / 2) + l % 4 with m = l / 4.
constexpr uint32_t kChannelOrder[2][16] = {{0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27},
                                           {4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31}};

// The epilogue's narrowing of two pixels' rounded values (registers a0/a1 and b0/b1; one of
// each for 16 lanes) into zmm12: packs with signed saturation to words, the zero points added
// with saturation, packs to bytes, vpermd into channel order. Saturation in place of the
// float lower clamp is exact: a value below the bounds stays below them at every step.
void emit_narrow_pair(x86::Assembler& a, const KernelDesc& d, unsigned nz, const x86::Zmm* pa, const x86::Zmm* pb,
                      const x86::Zmm& zero_words) {
  a.vpackssdw(x86::zmm12, pa[0], nz == 2 ? pa[1] : pb[0]);
  if (nz == 2) a.vpackssdw(x86::zmm13, pb[0], pb[1]);
  a.vpaddsw(x86::zmm12, x86::zmm12, zero_words);
  if (nz == 2) a.vpaddsw(x86::zmm13, x86::zmm13, zero_words);
  const x86::Zmm second = nz == 2 ? x86::zmm13 : x86::zmm12;
  if (d.out == OutKind::kU8) a.vpackuswb(x86::zmm12, x86::zmm12, second);
  else a.vpacksswb(x86::zmm12, x86::zmm12, second);
  a.vpermd(x86::zmm12, x86::zmm14, x86::zmm12);
}

// One channel block of the rows kernel (16 or 32 lanes): every pixel of the row, kPixels at
// a time, then one at a time. The block's epilogue constants and as many of its weights as
// fit stay in registers; the rest are read from memory.
void emit_rows_block(x86::Assembler& a, const KernelDesc& d, unsigned width, bool partial, const Label& orders) {
  const unsigned panel = d.panel, groups = dw_rows_groups(d.taps), nz = width / 16;
  const int32_t padded4 = int32_t(dw_rows_padded_channels(panel, d.channels) * 4);
  const int32_t position_bytes = int32_t(dw_rows_position_bytes(panel, d.channels, d.taps));
  const unsigned per_position = dw_rows_pixels_per_position(d.paired_pixels);
  const unsigned sets = dw_rows_weight_sets(d.taps, d.paired_pixels, d.pair_shift), weights = sets * d.kh * groups * nz;
  auto weight_mem = [&](unsigned i) {  // i = ((set · kh + dy) · groups + g) · nz + z
    return x86::zmmword_ptr(x86::r8, int32_t((i / nz) * panel * 4 + (i % nz) * 64));
  };
  auto ep_mem = [&](size_t field, unsigned z) { return x86::zmmword_ptr(x86::r9, int32_t(field * panel * 4 + z * 64)); };
  const x86::Zmm bias[2] = {x86::zmm15, x86::zmm16}, mult[2] = {x86::zmm17, x86::zmm18}, hi[2] = {x86::zmm19, x86::zmm20};
  const x86::Zmm zero_words = x86::zmm21, lo_bytes = x86::zmm22;
  const unsigned first_weight = 23, in_regs = std::min(weights, kFirstConstant + kConstants - first_weight);
  const bool s32 = d.out == OutKind::kS32;
  if (s32) {
    // The channel-order indices of a 32-lane block's two halves (a 16-lane block is in order).
    a.vmovdqu32(x86::zmm14, x86::zmmword_ptr(orders, 128));
    a.vmovdqu32(x86::zmm17, x86::zmmword_ptr(orders, 192));
  } else {
    a.vmovdqu32(x86::zmm14, x86::zmmword_ptr(orders, int32_t(nz == 2 ? 0 : 64)));
  }
  for (unsigned z = 0; z < nz && s32; ++z) a.vmovdqa32(bias[z], ep_mem(kEpBias, z));
  // desc.q31 (TFLite's requantization, emit_q31_round): zmm17/18 its nudge and ones, zmm19/20
  // the odd lanes' multipliers, k4/k5 its masks, the quads' zmm8-11 its temps; the upper bound
  // is a memory operand.
  const auto q31_regs = [](unsigned z) {
    return Q31Registers{x86::zmm17, x86::zmm18, z == 0 ? x86::zmm19 : x86::zmm20, x86::zmm8, x86::zmm9, x86::zmm10,
                        x86::zmm11, x86::k4, x86::k5};
  };
  if (d.q31) emit_q31_constants(a, q31_regs(0), x86::r11);
  for (unsigned z = 0; z < nz && !s32; ++z) {
    a.vmovdqa32(bias[z], ep_mem(kEpBias, z));
    if (d.q31) {
      a.vpsrlq(q31_regs(z).m_odd, ep_mem(kEpMultiplier, z), 32);
      continue;
    }
    a.vmovdqa32(mult[z], ep_mem(kEpMultiplier, z));
    a.vmovdqa32(hi[z], ep_mem(kEpUpperBound, z));
  }
  // The zero points as words in the packed order, and the lower bounds (lo - zo, whole
  // numbers) through the same narrowing: the output bytes of lo, in channel order.
  const x86::Zmm zo[2] = {x86::zmm8, x86::zmm9}, lo[2] = {x86::zmm10, x86::zmm11};
  if (!s32) {
    for (unsigned z = 0; z < nz; ++z) {
      a.vmovdqa32(zo[z], ep_mem(kEpOutputZeroPoint, z));
      if (d.q31) a.vmovdqa32(lo[z], ep_mem(kEpLowerBound, z));  // int32 already
      else a.vcvtps2dq(lo[z], ep_mem(kEpLowerBound, z));
    }
    a.vpackssdw(zero_words, zo[0], nz == 2 ? zo[1] : zo[0]);
    emit_narrow_pair(a, d, nz, lo, lo, zero_words);
    a.vmovdqa32(lo_bytes, x86::zmm12);
  }
  for (unsigned i = 0; i < in_regs; ++i) a.vmovdqa32(x86::Zmm(first_weight + i), weight_mem(i));
  auto acc = [](unsigned p, unsigned z) { return x86::Zmm(2 * p + z); };
  emit_dw_rows_block_start(a, s32);
  // Pixel p reads position p / per_position with weight set p % per_position: one quad load
  // per position (dw_rows_position_uses; three sets: an odd pixel also reads the next one).
  auto emit_pixels = [&](unsigned count) {
    const unsigned positions = (count + per_position - 1) / per_position;
    for (unsigned p = 0; p < count; ++p) {
      for (unsigned z = 0; z < nz; ++z) a.vmovdqa32(acc(p, z), bias[z]);
    }
    unsigned q = 0;
    for (unsigned dy = 0; dy < d.kh; ++dy) {
      a.mov(x86::r11, x86::qword_ptr(x86::rsi, int32_t(8 * dy)));
      for (unsigned g = 0; g < groups; ++g) {
        for (unsigned z = 0; z < nz; ++z) {
          for (unsigned pos = 0; pos <= positions; ++pos) {
            const auto uses = dw_rows_position_uses(d, count, pos, g);
            if (uses.empty()) continue;
            const x86::Zmm quad(8 + q++ % 4);
            a.vmovdqu8(quad, x86::zmmword_ptr(x86::r11, x86::rax, 0,
                                              int32_t(pos) * position_bytes + int32_t(g) * padded4 + int32_t(z * 64)));
            for (const auto [set, p] : uses) {
              const unsigned i = ((set * d.kh + dy) * groups + g) * nz + z;
              if (i < in_regs) a.vpdpbusd(acc(p, z), quad, x86::Zmm(first_weight + i));
              else a.vpdpbusd(acc(p, z), quad, weight_mem(i));
            }
          }
        }
      }
    }
    if (s32) {
      const int32_t pixel_bytes = int32_t(d.channels * 4);
      for (unsigned p = 0; p < count; ++p) {
        const x86::Zmm out[2] = {nz == 2 ? x86::zmm12 : acc(p, 0), x86::zmm13};
        if (nz == 2) {
          a.vmovdqa32(x86::zmm12, x86::zmm14);
          a.vpermi2d(x86::zmm12, acc(p, 0), acc(p, 1));
          a.vmovdqa32(x86::zmm13, x86::zmm17);
          a.vpermi2d(x86::zmm13, acc(p, 0), acc(p, 1));
        }
        for (unsigned z = 0; z < nz; ++z) {
          const x86::Mem dst = x86::ptr(x86::rdx, int32_t(p) * pixel_bytes + int32_t(z * 64));
          const unsigned lanes = partial ? std::min(16u, d.channels % d.panel - std::min(d.channels % d.panel, 16u * z)) : 16u;
          if (lanes == 0) continue;
          if (lanes < 16) a.k(z == 0 ? x86::k2 : x86::k3).vmovdqu32(dst, out[z]);
          else a.vmovdqu32(dst, out[z]);
        }
      }
      a.add(x86::rax, int32_t(positions) * position_bytes);
      a.add(x86::rdx, int32_t(count) * pixel_bytes);
      return;
    }
    for (unsigned p = 0; p < count; ++p) {
      for (unsigned z = 0; z < nz; ++z) {
        const x86::Zmm v = acc(p, z);
        if (d.q31) {
          // min(the requantized value, hi - zo); the narrowing adds zo and the byte max applies lo.
          emit_q31_round(a, v, q31_regs(z), [&](size_t field) { return ep_mem(field, z); });
          continue;
        }
        a.vcvtdq2ps(v, v);
        a.vmulps(v, v, mult[z]);
        // desc.saturate: the packs enforce the upper bound (the storage's) by themselves.
        if (!(d.saturate & kSatUpper)) a.vminps(v, v, hi[z]);
        a.vcvtps2dq(v, v);  // below -2^31: INT_MIN, which saturates to the bottom like the value
      }
    }
    for (unsigned p = 0; p < count; p += 2) {
      const x86::Zmm pa[2] = {acc(p, 0), acc(p, 1)};
      const unsigned pb_index = p + 1 < count ? p + 1 : p;
      const x86::Zmm pb[2] = {acc(pb_index, 0), acc(pb_index, 1)};
      emit_narrow_pair(a, d, nz, pa, pb, zero_words);
      if (d.out == OutKind::kU8) a.vpmaxub(x86::zmm12, x86::zmm12, lo_bytes);
      else a.vpmaxsb(x86::zmm12, x86::zmm12, lo_bytes);
      const x86::Vec first = nz == 2 ? x86::Vec(x86::ymm12) : x86::Vec(x86::xmm12);
      const x86::Mem dst = x86::ptr(x86::rdx, int32_t(p * d.channels));
      if (partial) a.k(x86::k1).vmovdqu8(dst, first);
      else a.vmovdqu8(dst, first);
      if (pb_index == p) continue;
      const x86::Vec second = nz == 2 ? x86::Vec(x86::ymm13) : x86::Vec(x86::xmm13);
      if (nz == 2) a.vextracti64x4(x86::ymm13, x86::zmm12, 1);
      else a.vextracti32x4(x86::xmm13, x86::zmm12, 2);
      const x86::Mem dst2 = x86::ptr(x86::rdx, int32_t((p + 1) * d.channels));
      if (partial) a.k(x86::k1).vmovdqu8(dst2, second);
      else a.vmovdqu8(dst2, second);
    }
    a.add(x86::rax, int32_t(positions) * position_bytes);
    a.add(x86::rdx, int32_t(count * d.channels));
  };
  emit_dw_pixel_loop(a, kPixels, emit_pixels, per_position == 2);
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_avx512_dw_interleave(const KernelDesc& d) {
  return generate_dw_interleave(
      d, d.panel, [](x86::Assembler& a) { a.vpbroadcastd(x86::zmm31, x86::ecx); }, &emit_interleave_block);
}

Result<std::shared_ptr<ExecutableCode>> generate_avx512_dw_rows(const KernelDesc& d) {
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  const unsigned panel = d.panel, groups = dw_rows_groups(d.taps);
  const unsigned full = d.channels / panel, tail = d.channels % panel;
  const unsigned tail_width = tail ? dw_rows_block_width(panel, d.channels, full) : 0;
  Label done = a.newLabel(), orders = a.newLabel();
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(DwRowsArgs, rows)));
  a.mov(x86::r8, x86::qword_ptr(x86::rdi, offsetof(DwRowsArgs, weights)));
  a.mov(x86::r9, x86::qword_ptr(x86::rdi, offsetof(DwRowsArgs, epilogue)));
  a.xor_(x86::ecx, x86::ecx);
  if (tail) {
    a.mov(x86::r11, tail == 64 ? ~uint64_t(0) : (uint64_t(1) << tail) - 1);
    a.kmovq(x86::k1, x86::r11);
    // int32 results: the dword masks of the partial block's first and second 16 channels.
    a.mov(x86::r11, (uint64_t(1) << std::min(tail, 16u)) - 1);
    a.kmovq(x86::k2, x86::r11);
    a.mov(x86::r11, (uint64_t(1) << (tail > 16 ? std::min(tail - 16, 16u) : 0u)) - 1);
    a.kmovq(x86::k3, x86::r11);
  }
  a.cmp(x86::qword_ptr(x86::rdi, offsetof(DwRowsArgs, pixels)), 0);
  a.jle(done);
  if (full > 0) {
    Label block = a.newLabel();
    a.bind(block);
    emit_rows_block(a, d, panel, false, orders);
    a.add(x86::r8, int32_t(dw_rows_weight_sets(d.taps, d.paired_pixels, d.pair_shift) * d.kh * groups * panel * 4));
    a.add(x86::r9, int32_t(kEpFields * panel * 4));
    a.add(x86::rcx, int32_t(panel));
    a.cmp(x86::rcx, int32_t(full * panel));
    a.jb(block);
  }
  if (tail) emit_rows_block(a, d, tail_width, tail < tail_width, orders);  // masked only when narrower
  a.bind(done);
  a.vzeroupper();
  a.ret();
  a.align(AlignMode::kData, 64);
  a.bind(orders);
  for (const auto& order : kPairOrder) {
    for (uint32_t v : order) a.embedUInt32(v);
  }
  for (const auto& order : kChannelOrder) {
    for (uint32_t v : order) a.embedUInt32(v);
  }
  return finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
