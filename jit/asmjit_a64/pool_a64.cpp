// qrt — AArch64 max and average pooling (PoolArgs, jit/core/microkernel.h) generated with
// asmjit's a64 assembler: per output pixel, per block of 16 channels (the last block loads and
// stores only its own bytes), a loop over the window's taps.
//   max:     smax/umax of the stored bytes, from the storage type's least value.
//   average: bias + Σ x in int32 (saddw/uaddw), then f32(acc) · m, fmaxnm/fminnm against
//            lo/hi, fcvtns (nearest even), + zo, saturating narrowing — as twin_pool.
#include <asmjit/arm/a64assembler.h>

#include <cstddef>
#include <string>

#include "jit/asmjit_a64/generators.h"

namespace qrt::jit::a64gen {

namespace {

using namespace asmjit;

const GpX kArgs = a64::x0, kTaps = a64::x1, kOutPixel = a64::x2, kOutStride = a64::x3, kPixels = a64::x4,
          kTapsStride = a64::x5, kPixelStep = a64::x6, kPixelOffset = a64::x7, kChannel = a64::x8,
          kBlockCount = a64::x9, kTapCount = a64::x10, kTapList = a64::x11, kTap = a64::x12, kOut = a64::x13,
          kScratch = a64::x14;
// Average parameters, broadcast: m, bias, zo, lo, hi.
const VecV kM = VecV(24), kBias = VecV(25), kZo = VecV(26), kLo = VecV(27), kHi = VecV(28);

void broadcast(Assembler& a, const VecV& v, size_t offset) {
  a.add(kScratch, kArgs, uint32_t(offset));
  a.ld1r(v.s4(), a64::ptr(kScratch));
}

void emit_block(Assembler& a, const KernelDesc& d, unsigned width) {
  const bool is_max = d.op == KernelOp::kMaxPool;
  const VecV acc = VecV(0), x = VecV(1), lo = VecV(2), hi = VecV(3);
  if (is_max) {
    a.movi(acc.b16(), d.storage_signed ? 0x80 : 0);
  } else {
    for (unsigned i = 16; i < 20; ++i) a.mov(VecV(i).b16(), kBias.b16());
  }
  a.mov(kTapList, kTaps);
  a.mov(kTapCount, d.taps);
  Label tap = a.newLabel();
  a.bind(tap);
  a.ldr(kTap, a64::ptr_post(kTapList, 8));
  a.add(kTap, kTap, kPixelOffset);
  a.add(kTap, kTap, kChannel);
  load_low_bytes(a, x, kTap, width, kScratch);
  if (is_max) {
    if (d.storage_signed) a.smax(acc.b16(), acc.b16(), x.b16());
    else a.umax(acc.b16(), acc.b16(), x.b16());
  } else if (d.storage_signed) {
    a.sxtl(lo.h8(), x.b8());
    a.sxtl2(hi.h8(), x.b16());
    a.saddw(VecV(16).s4(), VecV(16).s4(), lo.h4());
    a.saddw2(VecV(17).s4(), VecV(17).s4(), lo.h8());
    a.saddw(VecV(18).s4(), VecV(18).s4(), hi.h4());
    a.saddw2(VecV(19).s4(), VecV(19).s4(), hi.h8());
  } else {
    a.uxtl(lo.h8(), x.b8());
    a.uxtl2(hi.h8(), x.b16());
    a.uaddw(VecV(16).s4(), VecV(16).s4(), lo.h4());
    a.uaddw2(VecV(17).s4(), VecV(17).s4(), lo.h8());
    a.uaddw(VecV(18).s4(), VecV(18).s4(), hi.h4());
    a.uaddw2(VecV(19).s4(), VecV(19).s4(), hi.h8());
  }
  a.subs(kTapCount, kTapCount, 1);
  a.b_ne(tap);

  if (!is_max) {
    for (unsigned i = 16; i < 20; ++i) {
      const VecV s = VecV(i);
      a.scvtf(s.s4(), s.s4());
      a.fmul(s.s4(), s.s4(), kM.s4());
      a.fmaxnm(s.s4(), s.s4(), kLo.s4());
      a.fminnm(s.s4(), s.s4(), kHi.s4());
      a.fcvtns(s.s4(), s.s4());
      a.add(s.s4(), s.s4(), kZo.s4());
    }
    const VecV sums[4] = {VecV(16), VecV(17), VecV(18), VecV(19)};
    emit_narrow16(a, d.out, sums, acc, hi);
  }
  a.add(kOut, kOutPixel, kChannel);
  if (width == 16) a.str(acc, a64::ptr(kOut));
  else store_low_bytes(a, acc, kOut, 0, width, kScratch);
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_pool(const KernelDesc& d) {
  if (std::string why = pool_why_not(d); !why.empty()) return Status::error(d.name() + ": " + why);
  CodeHolder code;
  QRT_RETURN_IF_ERROR(init_code(code, d));
  Assembler a(&code);
  if (d.op == KernelOp::kAvgPool) {
    broadcast(a, kM, offsetof(PoolArgs, m));
    broadcast(a, kBias, offsetof(PoolArgs, bias));
    broadcast(a, kZo, offsetof(PoolArgs, zo));
    broadcast(a, kLo, offsetof(PoolArgs, lo));
    broadcast(a, kHi, offsetof(PoolArgs, hi));
  }
  const WindowRegs regs{kArgs, kTaps, kOutPixel, kOutStride, kPixels, kTapsStride, kPixelStep, kPixelOffset, kChannel,
                        kBlockCount};
  const WindowArgOffsets offsets{offsetof(PoolArgs, taps),   offsetof(PoolArgs, out),         offsetof(PoolArgs, out_stride),
                                 offsetof(PoolArgs, pixels), offsetof(PoolArgs, taps_stride), offsetof(PoolArgs, pixel_step)};
  emit_window_pixels(
      a, regs, offsets, d.channels, [] {}, [&](unsigned width) { emit_block(a, d, width); }, [] {});
  a.ret(a64::x30);
  return finish(code, d.name());
}

}  // namespace qrt::jit::a64gen
