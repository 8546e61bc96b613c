// qrt — the AVX-VNNI generators of the dot4 depthwise path (see jit/core/microkernel.h,
// DwInterleaveArgs and DwRowsArgs): the AVX-512 VNNI row path (dwrows_avx512.cpp) on ymm with
// VEX encodings only, for CPUs with AVX-VNNI and no AVX-512 (Alder Lake and later cores, Zen 5
// capped to avx2-vnni), and for plain AVX2 (desc.path = kMaddwd, DepthwiseTraits::rows_maddwd),
// which has no vpdpbusd: there each quad load is split into the u16 word pairs (u0, u2) (vpand
// with 0x00ff words, ymm12) and (u1, u3) (vpsrlw 8), and each product of a quad and a weight
// set is two vpmaddwd by the s16 weights (dw_rows_word_weight_offset, memory operands) and two
// vpaddd: the same int32 sums, exact. Blocks are 16 lanes, so a block's quads are in channel
// order (dw_rows_lane_channel(16, l) = l) and no permutation is needed for int32 results.
//
// Interleave: per output position, per tap group: two 16-lane blocks at a time on ymm (the low
// 128 bits of each result belong to the first block, the high ones to the second, 64 bytes
// on), a single one on xmm; four tap loads, two rounds of vpunpck{l,h}bw / vpunpck{l,h}wd.
//   rdi args  rsi the position's first tap  rdx its interleaved output  r10 positions left
//   r8 step  r9 dilation  rax 3 · dilation  r11 the group's first tap
//   v0-3 taps  v4-7 byte pairs  v8-11 quads  ymm15 0x80 bytes (s8 input)
//
// Rows: per 16-lane block, four output pixels at a time: accumulators start at the bias, each
// window row and tap group adds one {vex} vpdpbusd per 8 lanes (with desc.paired_pixels the
// four pixels are two positions: each quad load feeds two vpdpbusd, the second pixel's by the
// weight set pair_shift taps on, and at stride 2 the previous position's second pixel by set
// 2, as on AVX-512: dw_rows_position_uses), then the GEMM's epilogue (f32
// multiply, upper clamp, round, vpackssdw, + zero point with saturation, vpack{us,ss}wb,
// vpermd into channel order, the lower bound as a byte max). 16 registers: the block's
// epilogue constants stay in memory (operands of vmulps/vminps/vpaddsw/vpmax), the zero points
// as words and the lower bounds as bytes in 64 bytes of stack; up to six weight registers (the
// rest, e.g. a 3x3 window's second set, are memory operands of vpdpbusd).
// AVX2 has no byte-masked store: a partial block's bytes go out in 8/4/2/1-byte pieces
// (store_low_bytes), its int32 results by vpmaskmovd.
// desc.q31 (8-bit results): TFLite's requantization (emit_q31_requant_ymm: clamps and zero
// point included) replaces the f32 multiply, the clamp and the zero point's saturating add;
// its third temporary takes ymm15, so five weight registers stay instead of six.
//   rdi args  rsi the interleaved rows' pointers  rdx output pixel  r10 pixels left
//   r8 weights of the block  r9 epilogue of the block  rcx the block's first channel
//   rax the block's offset in the interleaved rows  r11 a row's pointer
//   ymm0-7 four pixels' accumulators  ymm8-9 quads and temporaries  ymm10-15 weights
//   [rsp] zero points as words  [rsp + 32] lower bounds as bytes
#include <asmjit/x86.h>

#include <algorithm>
#include <cstddef>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

namespace {

using namespace asmjit;

constexpr unsigned kPanel = 16;
constexpr unsigned kPixels = 4;
constexpr unsigned kFirstWeight = 10, kWeightRegisters = 6;

/// vpermd indices that put two pixels' bytes back in channel order. After vpackssdw of a
/// pixel's two registers (channels 0-7, 8-15) the 128-bit lanes hold channels 0-3, 8-11 and
/// 4-7, 12-15 as words; vpack{us,ss}wb of two pixels a, b then gives the dwords
/// a0-3 a8-11 b0-3 b8-11 | a4-7 a12-15 b4-7 b12-15.
constexpr uint32_t kPairOrder[8] = {0, 4, 1, 5, 2, 6, 3, 7};

// The quads of one 16-lane block (width 16, xmm) or two consecutive ones (width 32, ymm).
void emit_interleave_block(x86::Assembler& a, const KernelDesc& d, unsigned width, int32_t in_offset, int32_t out_offset) {
  const x86::Mem taps[4] = {x86::ptr(x86::r11, in_offset), x86::ptr(x86::r11, x86::r9, 0, in_offset),
                            x86::ptr(x86::r11, x86::r9, 1, in_offset), x86::ptr(x86::r11, x86::rax, 0, in_offset)};
  auto v = [&](unsigned id) { return width == 32 ? x86::Vec(x86::Ymm(id)) : x86::Vec(x86::Xmm(id)); };
  for (unsigned j = 0; j < 4; ++j) {
    a.vmovdqu(v(j), taps[j]);
    if (d.storage_signed) a.vpxor(v(j), v(j), v(15));
  }
  a.vpunpcklbw(v(4), v(0), v(1));
  a.vpunpckhbw(v(5), v(0), v(1));
  a.vpunpcklbw(v(6), v(2), v(3));
  a.vpunpckhbw(v(7), v(2), v(3));
  a.vpunpcklwd(v(8), v(4), v(6));   // lanes 0..3 (of each 128-bit half)
  a.vpunpckhwd(v(9), v(4), v(6));   // 4..7
  a.vpunpcklwd(v(10), v(5), v(7));  // 8..11
  a.vpunpckhwd(v(11), v(5), v(7));  // 12..15
  if (width == 32) {
    // The first block's 64 bytes are the low halves of the four results in turn, the
    // second's the high halves: vperm2i128 pairs them into four whole-ymm stores (as the
    // AVX-512 interleave does with vshufi64x2).
    for (unsigned half = 0; half < 2; ++half) {
      for (unsigned r = 0; r < 4; r += 2) {
        a.vperm2i128(x86::Ymm(4 + r / 2), x86::Ymm(8 + r), x86::Ymm(9 + r), half ? 0x31 : 0x20);
        a.vmovdqu(x86::ptr(x86::rdx, out_offset + int32_t(half * kPanel * 4 + r * 16)), x86::Ymm(4 + r / 2));
      }
    }
    return;
  }
  for (unsigned r = 0; r < 4; ++r) a.vmovdqu(x86::ptr(x86::rdx, out_offset + int32_t(r * 16)), x86::Xmm(8 + r));
}

// One 16-lane block of the rows kernel: every pixel of the row, kPixels at a time, then one at
// a time. `tail` is the block's channels when it is the partial last block, else 0.
void emit_rows_block(x86::Assembler& a, const KernelDesc& d, unsigned tail, const Label& order, const Label& masks,
                     const Label& nudge, const Label& low_bytes) {
  const unsigned groups = dw_rows_groups(d.taps);
  const int32_t padded4 = int32_t(dw_rows_padded_channels(kPanel, d.channels) * 4);
  const int32_t position_bytes = int32_t(dw_rows_position_bytes(kPanel, d.channels, d.taps));
  const unsigned per_position = dw_rows_pixels_per_position(d.paired_pixels);
  const unsigned sets = dw_rows_weight_sets(d.taps, d.paired_pixels, d.pair_shift);
  // AVX2 without VNNI (GemmPath::kMaddwd): s16 weights in memory, ymm12 the low-byte mask.
  const bool words = d.path == GemmPath::kMaddwd;
  const unsigned weights = sets * d.kh * groups * 2;
  const unsigned in_regs = words ? 0u : std::min(weights, kWeightRegisters - (d.q31 ? 1u : 0u));
  // i = ((set · kh + dy) · groups + g) · 2 + z (dw_rows_weight_offset: 32 bytes per 8 lanes;
  // dw_rows_word_weight_offset: 64, the even taps' words then the odd taps')
  auto weight_mem = [&](unsigned i, unsigned odd = 0) {
    return x86::ymmword_ptr(x86::r8, int32_t(words ? i * 64 + odd * 32 : i * 32));
  };
  auto ep_mem = [&](size_t field, unsigned z) { return x86::ymmword_ptr(x86::r9, int32_t(field * kPanel * 4 + z * 32)); };
  const x86::Mem zero_words = x86::ymmword_ptr(x86::rsp), lo_bytes = x86::ymmword_ptr(x86::rsp, 32);
  const bool s32 = d.out == OutKind::kS32;
  auto narrow = [&](const x86::Ymm& pa, const x86::Ymm& pa1, const x86::Ymm* pb, const x86::Ymm* pb1) {
    // Saturation in place of the float lower clamp is exact: a value below the bounds stays
    // below them at every step, and the byte max lifts it to the bound. (Q31 results are
    // clamped and carry the zero point already: the packs only narrow them.)
    a.vpackssdw(pa, pa, pa1);
    if (pb) a.vpackssdw(*pb, *pb, *pb1);
    if (!d.q31) {
      a.vpaddsw(pa, pa, zero_words);
      if (pb) a.vpaddsw(*pb, *pb, zero_words);
    }
    if (d.out == OutKind::kU8) a.vpackuswb(pa, pa, pb ? *pb : pa);
    else a.vpacksswb(pa, pa, pb ? *pb : pa);
    a.vmovdqu(x86::ymm9, x86::ymmword_ptr(order));
    a.vpermd(pa, x86::ymm9, pa);
  };
  if (!s32 && !d.q31) {
    // The zero points as words in the packed order, and the lower bounds (lo - zo, whole
    // numbers) through the same narrowing: the output bytes of lo, in channel order.
    a.vmovdqa(x86::ymm8, ep_mem(kEpOutputZeroPoint, 0));
    a.vpackssdw(x86::ymm8, x86::ymm8, ep_mem(kEpOutputZeroPoint, 1));
    a.vmovdqu(zero_words, x86::ymm8);
    a.vcvtps2dq(x86::ymm8, ep_mem(kEpLowerBound, 0));
    a.vcvtps2dq(x86::ymm9, ep_mem(kEpLowerBound, 1));
    narrow(x86::ymm8, x86::ymm9, nullptr, nullptr);
    a.vmovdqu(lo_bytes, x86::ymm8);
  }
  for (unsigned i = 0; i < in_regs; ++i) a.vmovdqa(x86::Ymm(kFirstWeight + i), weight_mem(i));
  if (words) a.vmovdqa(x86::ymm12, x86::ymmword_ptr(low_bytes));
  auto acc = [](unsigned p, unsigned z) { return x86::Ymm(2 * p + z); };
  emit_dw_rows_block_start(a, s32);
  // Pixel p reads position p / per_position with weight set p % per_position: one quad load
  // per position (dw_rows_position_uses; three sets: an odd pixel also reads the next one).
  auto emit_pixels = [&](unsigned count) {
    const unsigned positions = (count + per_position - 1) / per_position;
    for (unsigned p = 0; p < count; ++p) {
      for (unsigned z = 0; z < 2; ++z) a.vmovdqa(acc(p, z), ep_mem(kEpBias, z));
    }
    unsigned q = 0;
    for (unsigned dy = 0; dy < d.kh; ++dy) {
      a.mov(x86::r11, x86::qword_ptr(x86::rsi, int32_t(8 * dy)));
      for (unsigned g = 0; g < groups; ++g) {
        for (unsigned z = 0; z < 2; ++z) {
          for (unsigned pos = 0; pos <= positions; ++pos) {
            const auto uses = dw_rows_position_uses(d, count, pos, g);
            if (uses.empty()) continue;
            const x86::Mem quad_mem =
                x86::ymmword_ptr(x86::r11, x86::rax, 0, int32_t(pos) * position_bytes + int32_t(g) * padded4 + int32_t(z * 32));
            if (words) {
              // A dword's quad u0..u3 as the word pairs (u0, u2) and (u1, u3): two vpmaddwd of
              // u16 by s16 sum the four products exactly, as vpdpbusd does.
              a.vmovdqu(x86::ymm8, quad_mem);
              a.vpand(x86::ymm9, x86::ymm8, x86::ymm12);
              a.vpsrlw(x86::ymm8, x86::ymm8, 8);
              for (const auto [set, p] : uses) {
                const unsigned i = ((set * d.kh + dy) * groups + g) * 2 + z;
                a.vpmaddwd(x86::ymm10, x86::ymm9, weight_mem(i, 0));
                a.vpaddd(acc(p, z), acc(p, z), x86::ymm10);
                a.vpmaddwd(x86::ymm11, x86::ymm8, weight_mem(i, 1));
                a.vpaddd(acc(p, z), acc(p, z), x86::ymm11);
              }
              continue;
            }
            const x86::Ymm quad(8 + q++ % 2);
            a.vmovdqu(quad, quad_mem);
            for (const auto [set, p] : uses) {
              const unsigned i = ((set * d.kh + dy) * groups + g) * 2 + z;
              if (i < in_regs) a.vex().vpdpbusd(acc(p, z), quad, x86::Ymm(kFirstWeight + i));  // AVX-VNNI
              else a.vex().vpdpbusd(acc(p, z), quad, weight_mem(i));
            }
          }
        }
      }
    }
    if (s32) {
      const int32_t pixel_bytes = int32_t(d.channels * 4);
      for (unsigned p = 0; p < count; ++p) {
        for (unsigned z = 0; z < 2; ++z) {
          const x86::Mem dst = x86::ptr(x86::rdx, int32_t(p) * pixel_bytes + int32_t(z * 32));
          const unsigned lanes = tail ? std::min(8u, tail - std::min(tail, 8 * z)) : 8u;
          if (lanes == 0) continue;
          if (lanes < 8) {
            a.vmovdqu(x86::ymm8, x86::ymmword_ptr(masks, int32_t((8 - lanes) * 4)));
            a.vpmaskmovd(dst, x86::ymm8, acc(p, z));
          } else {
            a.vmovdqu(dst, acc(p, z));
          }
        }
      }
      a.add(x86::rax, int32_t(positions) * position_bytes);
      a.add(x86::rdx, int32_t(count) * pixel_bytes);
      return;
    }
    for (unsigned p = 0; p < count; ++p) {
      for (unsigned z = 0; z < 2; ++z) {
        const x86::Ymm v = acc(p, z);
        if (d.q31) {
          emit_q31_requant_ymm(a, v, {x86::ymm8, x86::ymm9, x86::ymm15}, [&](size_t field) { return ep_mem(field, z); }, nudge);
          continue;
        }
        a.vcvtdq2ps(v, v);
        a.vmulps(v, v, ep_mem(kEpMultiplier, z));
        a.vminps(v, v, ep_mem(kEpUpperBound, z));
        a.vcvtps2dq(v, v);  // below -2^31: INT_MIN, which saturates to the bottom like the value
      }
    }
    for (unsigned p = 0; p < count; p += 2) {
      const bool pair = p + 1 < count;
      const x86::Ymm pb = acc(p + 1, 0), pb1 = acc(p + 1, 1);
      narrow(acc(p, 0), acc(p, 1), pair ? &pb : nullptr, pair ? &pb1 : nullptr);
      const x86::Ymm v = acc(p, 0);
      if (d.q31) {
        // (clamped already)
      } else if (d.out == OutKind::kU8) {
        a.vpmaxub(v, v, lo_bytes);
      } else {
        a.vpmaxsb(v, v, lo_bytes);
      }
      // The second pixel's bytes first: a VEX xmm write clears the register's upper half.
      if (pair) a.vextracti128(x86::xmm8, v, 1);
      const unsigned bytes = tail ? tail : kPanel;
      store_low_bytes(a, x86::rdx, int32_t(p * d.channels), v.xmm(), bytes);
      if (pair) store_low_bytes(a, x86::rdx, int32_t((p + 1) * d.channels), x86::xmm8, bytes);
    }
    a.add(x86::rax, int32_t(positions) * position_bytes);
    a.add(x86::rdx, int32_t(count * d.channels));
  };
  emit_dw_pixel_loop(a, kPixels, emit_pixels, per_position == 2);
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_avx2vnni_dw_interleave(const KernelDesc& d) {
  return generate_dw_interleave(
      d, kPanel,
      [](x86::Assembler& a) {
        a.vmovd(x86::xmm15, x86::ecx);
        a.vpbroadcastd(x86::ymm15, x86::xmm15);
      },
      &emit_interleave_block);
}

Result<std::shared_ptr<ExecutableCode>> generate_avx2vnni_dw_rows(const KernelDesc& d) {
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  const unsigned groups = dw_rows_groups(d.taps);
  const unsigned full = d.channels / kPanel, tail = d.channels % kPanel;
  Label done = a.newLabel(), order = a.newLabel(), masks = a.newLabel(), nudge = a.newLabel(), low_bytes = a.newLabel();
  a.sub(x86::rsp, 64);
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(DwRowsArgs, rows)));
  a.mov(x86::r8, x86::qword_ptr(x86::rdi, offsetof(DwRowsArgs, weights)));
  a.mov(x86::r9, x86::qword_ptr(x86::rdi, offsetof(DwRowsArgs, epilogue)));
  a.xor_(x86::ecx, x86::ecx);
  a.cmp(x86::qword_ptr(x86::rdi, offsetof(DwRowsArgs, pixels)), 0);
  a.jle(done);
  if (full > 0) {
    Label block = a.newLabel();
    a.bind(block);
    emit_rows_block(a, d, 0, order, masks, nudge, low_bytes);
    a.add(x86::r8, int32_t(dw_rows_weight_sets(d.taps, d.paired_pixels, d.pair_shift) * d.kh * groups * kPanel *
                           (d.path == GemmPath::kMaddwd ? 8 : 4)));
    a.add(x86::r9, int32_t(kEpFields * kPanel * 4));
    a.add(x86::rcx, int32_t(kPanel));
    a.cmp(x86::rcx, int32_t(full * kPanel));
    a.jb(block);
  }
  if (tail) emit_rows_block(a, d, tail, order, masks, nudge, low_bytes);
  a.bind(done);
  a.add(x86::rsp, 64);
  a.vzeroupper();
  a.ret();
  a.align(AlignMode::kData, 32);
  a.bind(order);
  for (uint32_t v : kPairOrder) a.embedUInt32(v);
  if (d.path == GemmPath::kMaddwd) {
    a.bind(low_bytes);  // 0x00ff per word: a quad's even bytes as u16
    for (int i = 0; i < 16; ++i) a.embedUInt16(0x00ff);
  }
  if (d.q31) {
    a.bind(nudge);  // 2^30 per qword: the doubling high-mul's rounding
    for (int i = 0; i < 4; ++i) a.embedUInt64(uint64_t(1) << 30);
  }
  embed_lane_masks(a, masks);
  return finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
