// qrt — AArch64 depthwise convolution (DepthwiseArgs, jit/core/microkernel.h) generated with
// asmjit's a64 assembler: per output pixel, per block of 16 channels, per tap pair, two 16-byte
// input loads widened to s16 and 2 x 4 smlal/smlal2 against the block's s16 weights, then the
// shared requantization epilogue (shared_a64.cpp).
//
// The weights come in the layout of microkernel.h (depthwise_weight_index, panel 16): per
// tap pair, two registers of 8 lanes, each lane holding its two taps' weights side by side,
// so ld2 splits a register's pairs into one vector per tap. Lane order is the x86 one: lanes
// 0-7 are channels 0-3 and 8-11, lanes 8-15 channels 4-7 and 12-15; zip1/zip2 on 64-bit halves
// put the widened input in that order, and the store takes the lane vectors back in channel
// order. A last block of fewer than 16 channels loads and stores only its channels.
// Products are exact (|x · w| < 2^24) and the int32 sums wrap, as the twin's.
#include <asmjit/arm/a64assembler.h>

#include <cstddef>
#include <string>

#include "jit/asmjit_a64/generators.h"

namespace qrt::jit::a64gen {

namespace {

using namespace asmjit;

// x0: args. Row pointers and counters in caller-saved registers.
const GpX kArgs = a64::x0, kTaps = a64::x1, kOutPixel = a64::x2, kOutStride = a64::x3, kPixels = a64::x4,
          kWeights = a64::x5, kEpBase = a64::x6, kTapsStride = a64::x7, kPixelStep = a64::x8, kPixelOffset = a64::x9,
          kChannel = a64::x10, kBlockCount = a64::x11, kW = a64::x12, kEp = a64::x13, kPairCount = a64::x14,
          kTapList = a64::x15, kTap0 = a64::x16, kTap1 = a64::x17;
// The arguments' pointer is dead once they are loaded: it is the blocks' scratch.
const GpX kScratch = a64::x0;

constexpr unsigned kBlock = 16;
constexpr int32_t kBlockEpBytes = int32_t(kEpFields) * kBlock * 4;

VecV v(unsigned i) { return VecV(i); }

// Widens 16 stored bytes in `raw` to s16 in lane order: `first` = channels 0-3 and 8-11,
// `second` = 4-7 and 12-15 (scratch: lo, hi).
void widen_lane_order(Assembler& a, bool is_signed, const VecV& raw, const VecV& lo, const VecV& hi, const VecV& first,
                      const VecV& second) {
  if (is_signed) {
    a.sxtl(lo.h8(), raw.b8());
    a.sxtl2(hi.h8(), raw.b16());
  } else {
    a.uxtl(lo.h8(), raw.b8());
    a.uxtl2(hi.h8(), raw.b16());
  }
  a.zip1(first.d2(), lo.d2(), hi.d2());
  a.zip2(second.d2(), lo.d2(), hi.d2());
}

// One block of `width` channels (16, or the last block's channels) at channel offset kChannel:
// accumulators v16-v19, the tap pairs' loop, the epilogue, and the store at the pixel's output.
void emit_block(Assembler& a, const KernelDesc& d, unsigned width, const GpX& scratch) {
  const unsigned pairs = d.taps / 2;
  for (unsigned i = 16; i < 20; ++i) a.eor(v(i).b16(), v(i).b16(), v(i).b16());
  a.mov(kTapList, kTaps);
  a.mov(kPairCount, pairs);
  Label pair = a.newLabel();
  a.bind(pair);
  a.ldp(kTap0, kTap1, a64::ptr_post(kTapList, 16));
  for (const GpX& t : {kTap0, kTap1}) {
    a.add(t, t, kPixelOffset);
    a.add(t, t, kChannel);
  }
  load_low_bytes(a, v(0), kTap0, width, scratch);
  load_low_bytes(a, v(1), kTap1, width, scratch);
  // Lanes 0-7: (tap 0, tap 1) weights; lanes 8-15 likewise.
  a.ld2(v(22).h8(), v(23).h8(), a64::ptr_post(kW, 32));
  a.ld2(v(24).h8(), v(25).h8(), a64::ptr_post(kW, 32));
  widen_lane_order(a, d.storage_signed, v(0), v(2), v(3), v(6), v(7));
  widen_lane_order(a, d.storage_signed, v(1), v(4), v(5), v(20), v(21));
  // Tap 0 then tap 1 of the pair, in the twin's order (the sums are exact anyway).
  a.smlal(v(16).s4(), v(6).h4(), v(22).h4());
  a.smlal2(v(17).s4(), v(6).h8(), v(22).h8());
  a.smlal(v(18).s4(), v(7).h4(), v(24).h4());
  a.smlal2(v(19).s4(), v(7).h8(), v(24).h8());
  a.smlal(v(16).s4(), v(20).h4(), v(23).h4());
  a.smlal2(v(17).s4(), v(20).h8(), v(23).h8());
  a.smlal(v(18).s4(), v(21).h4(), v(25).h4());
  a.smlal2(v(19).s4(), v(21).h8(), v(25).h8());
  a.subs(kPairCount, kPairCount, 1);
  a.b_ne(pair);

  // The output of this block: the pixel's output + channel offset x bytes per value.
  const unsigned ob = d.out == OutKind::kS32 || d.out == OutKind::kF32 ? 4 : 1;
  if (ob == 4) {
    a.lsl(scratch, kChannel, 2);
    a.add(kTapList, kOutPixel, scratch);
  } else {
    a.add(kTapList, kOutPixel, kChannel);
  }
  EpilogueLayout ep;
  ep.rows = 1, ep.cols = width, ep.out = d.out, ep.row_correction = false;
  ep.field_bytes = 4 * kBlock;
  ep.acc = [](unsigned, unsigned j) { return VecV(16 + j); };
  // Lane vectors 0-3 hold channels 0-3, 8-11, 4-7, 12-15.
  ep.store_order[0] = 0, ep.store_order[1] = 2, ep.store_order[2] = 1, ep.store_order[3] = 3;
  ep.tmp_base = 24;
  const EpilogueRegs regs{kEp, kEp, kTapList, kTapList, kPairCount, scratch};
  emit_epilogue(a, ep, regs);
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_depthwise(const KernelDesc& d) {
  if (std::string why = depthwise_why_not(d); !why.empty()) return Status::error(d.name() + ": " + why);
  CodeHolder code;
  QRT_RETURN_IF_ERROR(init_code(code, d));
  Assembler a(&code);
  a.ldr(kWeights, a64::ptr(kArgs, offsetof(DepthwiseArgs, weights)));
  a.ldr(kEpBase, a64::ptr(kArgs, offsetof(DepthwiseArgs, epilogue)));
  const WindowRegs regs{kArgs,       kTaps,        kOutPixel,     kOutStride, kPixels,
                        kTapsStride, kPixelStep,   kPixelOffset,  kChannel,   kBlockCount};
  const WindowArgOffsets offsets{offsetof(DepthwiseArgs, taps),        offsetof(DepthwiseArgs, out),
                                 offsetof(DepthwiseArgs, out_stride),  offsetof(DepthwiseArgs, pixels),
                                 offsetof(DepthwiseArgs, taps_stride), offsetof(DepthwiseArgs, pixel_step)};
  // The weights and epilogue blocks follow the channel blocks; each pixel starts over.
  emit_window_pixels(
      a, regs, offsets, d.channels,
      [&] {
        a.mov(kW, kWeights);
        a.mov(kEp, kEpBase);
      },
      [&](unsigned width) { emit_block(a, d, width, kScratch); }, [&] { a.add(kEp, kEp, kBlockEpBytes); });
  a.ret(a64::x30);
  return finish(code, d.name());
}

}  // namespace qrt::jit::a64gen
