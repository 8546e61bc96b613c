// qrt — what the AArch64 generators share (see generators.h): code set-up, partial loads and
// stores, the 16-byte narrowing, the window kernels' pixel loop, and the requantization
// epilogue of the GEMM tiles and depthwise blocks: per output vector, + bias, - row sum x zw (mls), then s32 as is; f32:
// scvtf, fmul; 8-bit: fmaxnm/fminnm against lo - zo and hi - zo (a NaN becomes the bound, as
// vmaxps/vminps make it), fcvtns (nearest even), + zo, sqxtn then sqxtun/sqxtn — the twins'
// store_epilogue, bit for bit.
#include <asmjit/arm/a64assembler.h>

#include <string>

#include "jit/asmjit_a64/generators.h"

namespace qrt::jit::a64gen {

using namespace asmjit;

Status init_code(CodeHolder& code, const KernelDesc& d) {
  if (Error err = code.init(Environment(Arch::kAArch64)); err != kErrorOk) {
    return Status::error(std::string("asmjit: ") + DebugUtils::errorAsString(err) + " generating " + d.name());
  }
  return Status::ok();
}

void emit_narrow16(Assembler& a, OutKind out, const VecV (&v)[4], const VecV& dst, const VecV& hi) {
  a.sqxtn(dst.h4(), v[0].s4());
  a.sqxtn2(dst.h8(), v[1].s4());
  a.sqxtn(hi.h4(), v[2].s4());
  a.sqxtn2(hi.h8(), v[3].s4());
  if (out == OutKind::kU8) {
    a.sqxtun(dst.b8(), dst.h8());
    a.sqxtun2(dst.b16(), hi.h8());
  } else {
    a.sqxtn(dst.b8(), dst.h8());
    a.sqxtn2(dst.b16(), hi.h8());
  }
}

void emit_window_pixels(Assembler& a, const WindowRegs& r, const WindowArgOffsets& o, uint32_t channels,
                        const std::function<void()>& per_pixel, const std::function<void(unsigned)>& block,
                        const std::function<void()>& after_block) {
  a.ldr(r.taps, a64::ptr(r.args, int32_t(o.taps)));
  a.ldr(r.out_pixel, a64::ptr(r.args, int32_t(o.out)));
  a.ldr(r.out_stride, a64::ptr(r.args, int32_t(o.out_stride)));
  a.ldr(r.pixels, a64::ptr(r.args, int32_t(o.pixels)));
  a.ldr(r.taps_stride, a64::ptr(r.args, int32_t(o.taps_stride)));
  a.ldr(r.pixel_step, a64::ptr(r.args, int32_t(o.pixel_step)));
  a.mov(r.pixel_offset, 0);
  const uint32_t full_blocks = channels / 16, tail = channels % 16;
  Label pixel = a.newLabel(), done = a.newLabel();
  a.cbz(r.pixels, done);
  a.bind(pixel);
  a.mov(r.channel, 0);
  per_pixel();
  if (full_blocks > 0) {
    Label loop = a.newLabel();
    a.mov(r.block_count, full_blocks);
    a.bind(loop);
    block(16);
    after_block();
    a.add(r.channel, r.channel, 16);
    a.subs(r.block_count, r.block_count, 1);
    a.b_ne(loop);
  }
  if (tail > 0) block(tail);
  a.add(r.taps, r.taps, r.taps_stride);
  a.add(r.pixel_offset, r.pixel_offset, r.pixel_step);
  a.add(r.out_pixel, r.out_pixel, r.out_stride);
  a.subs(r.pixels, r.pixels, 1);
  a.b_ne(pixel);
  a.bind(done);
}

void save_d8_d15(Assembler& a) {
  a.sub(a64::sp, a64::sp, 64);
  for (unsigned i = 0; i < 4; ++i) a.stp(a64::VecD(8 + 2 * i), a64::VecD(9 + 2 * i), a64::ptr(a64::sp, int32_t(16 * i)));
}

void restore_d8_d15(Assembler& a) {
  for (unsigned i = 0; i < 4; ++i) a.ldp(a64::VecD(8 + 2 * i), a64::VecD(9 + 2 * i), a64::ptr(a64::sp, int32_t(16 * i)));
  a.add(a64::sp, a64::sp, 64);
}

void store_low_bytes(Assembler& a, const VecV& x, const GpX& base, unsigned offset, unsigned bytes, const GpX& tmp) {
  unsigned at = 0;
  for (unsigned w : {8u, 4u, 2u, 1u}) {
    if (bytes - at < w) continue;
    a.add(tmp, base, offset + at);
    if (w == 8) a.st1(x.d(at / 8), a64::ptr(tmp));
    if (w == 4) a.st1(x.s(at / 4), a64::ptr(tmp));
    if (w == 2) a.st1(x.h(at / 2), a64::ptr(tmp));
    if (w == 1) a.st1(x.b(at), a64::ptr(tmp));
    at += w;
  }
}

void load_low_bytes(Assembler& a, const VecV& x, const GpX& base, unsigned bytes, const GpX& tmp) {
  if (bytes == 16) {
    a.ldr(x, a64::ptr(base));
    return;
  }
  unsigned at = 0;
  for (unsigned w : {8u, 4u, 2u, 1u}) {
    if (bytes - at < w) continue;
    if (at == 0) {
      // The first piece is a scalar load, which zeroes the rest of the register.
      if (w == 8) a.ldr(a64::VecD(x.id()), a64::ptr(base));
      if (w == 4) a.ldr(a64::VecS(x.id()), a64::ptr(base));
      if (w == 2) a.ldr(a64::VecH(x.id()), a64::ptr(base));
      if (w == 1) a.ldr(a64::VecB(x.id()), a64::ptr(base));
    } else {
      a.add(tmp, base, at);
      if (w == 4) a.ld1(x.s(at / 4), a64::ptr(tmp));
      if (w == 2) a.ld1(x.h(at / 2), a64::ptr(tmp));
      if (w == 1) a.ld1(x.b(at), a64::ptr(tmp));
    }
    at += w;
  }
}

void emit_epilogue(Assembler& a, const EpilogueLayout& e, const EpilogueRegs& g) {
  const unsigned vecs = 4;  // epilogue math on every vector: lanes past `cols` are never stored
  auto acc = [&](unsigned r, unsigned j) { return e.acc(r, j).s4(); };
  auto tmp = [&](unsigned i) { return VecV(e.tmp_base + i); };
  auto field = [&](GemmEpilogueField f, unsigned j) { return a64::ptr(g.ep, int32_t(f * e.field_bytes + 16 * j)); };
  if (e.row_correction) {
    for (unsigned r = 0; r < e.rows; ++r) {
      a.ldr(a64::w14, a64::ptr(g.row_sums, int32_t(4 * r)));
      a.dup(tmp(8 + r).s4(), a64::w14);
    }
  }
  const bool byte_out = e.out == OutKind::kU8 || e.out == OutKind::kS8;
  for (unsigned j = 0; j < vecs; ++j) {
    a.ldr(tmp(0), field(kEpBias, j));
    for (unsigned r = 0; r < e.rows; ++r) a.add(acc(r, j), acc(r, j), tmp(0).s4());
    if (e.row_correction) {
      a.ldr(tmp(1), field(kEpWeightZeroPoint, j));
      for (unsigned r = 0; r < e.rows; ++r) a.mls(acc(r, j), tmp(1).s4(), tmp(8 + r).s4());
    }
    if (e.out == OutKind::kS32) continue;
    if (e.q31) {
      // TFLite's double rounding as its NEON kernels compute it (profile_requant_a64.cpp): sshl
      // by the left shift, sqrdmulh, then srshl by -right after adding -1 to negative values
      // where right > 0 (ties away from zero); clamp to lo - zo, hi - zo (int32), + zo.
      a.ldr(tmp(2), field(kEpMultiplier, j));
      a.ldr(tmp(6), field(kEpQ31LeftShift, j));
      a.ldr(tmp(7), field(kEpQ31RightShift, j));
      a.neg(tmp(7).s4(), tmp(7).s4());
      a.ldr(tmp(3), field(kEpLowerBound, j));
      a.ldr(tmp(4), field(kEpUpperBound, j));
      a.ldr(tmp(5), field(kEpOutputZeroPoint, j));
      for (unsigned r = 0; r < e.rows; ++r) {
        a.sshl(acc(r, j), acc(r, j), tmp(6).s4());
        a.sqrdmulh(acc(r, j), acc(r, j), tmp(2).s4());
        a.and_(tmp(0).b16(), e.acc(r, j).b16(), tmp(7).b16());
        a.sshr(tmp(0).s4(), tmp(0).s4(), 31);
        a.sqadd(acc(r, j), acc(r, j), tmp(0).s4());
        a.srshl(acc(r, j), acc(r, j), tmp(7).s4());
        a.smax(acc(r, j), acc(r, j), tmp(3).s4());
        a.smin(acc(r, j), acc(r, j), tmp(4).s4());
        a.add(acc(r, j), acc(r, j), tmp(5).s4());
      }
      continue;
    }
    a.ldr(tmp(2), field(kEpMultiplier, j));
    for (unsigned r = 0; r < e.rows; ++r) {
      a.scvtf(acc(r, j), acc(r, j));
      a.fmul(acc(r, j), acc(r, j), tmp(2).s4());
    }
    if (!byte_out) continue;
    a.ldr(tmp(3), field(kEpLowerBound, j));
    a.ldr(tmp(4), field(kEpUpperBound, j));
    a.ldr(tmp(5), field(kEpOutputZeroPoint, j));
    for (unsigned r = 0; r < e.rows; ++r) {
      a.fmaxnm(acc(r, j), acc(r, j), tmp(3).s4());
      a.fminnm(acc(r, j), acc(r, j), tmp(4).s4());
      a.fcvtns(acc(r, j), acc(r, j));
      a.add(acc(r, j), acc(r, j), tmp(5).s4());
    }
  }
  // Stores, row by row, the vectors in e.store_order (columns 4k..4k+3 are vector store_order[k]).
  auto stored = [&](unsigned r, unsigned k) { return e.acc(r, e.store_order[k]); };
  a.mov(g.out, g.out_base);
  for (unsigned r = 0; r < e.rows; ++r) {
    if (r > 0) a.add(g.out, g.out, g.out_stride);
    if (byte_out) {
      // s32 -> s16 -> 8 bit, saturating (vpackssdw then vpack{ss,us}wb).
      const VecV lo = tmp(6), hi = tmp(7);
      const VecV parts[4] = {stored(r, 0), stored(r, 1), stored(r, 2), stored(r, 3)};
      emit_narrow16(a, e.out, parts, lo, hi);
      if (e.cols == 16) a.str(lo, a64::ptr(g.out));
      else store_low_bytes(a, lo, g.out, 0, e.cols, g.tmp);
      continue;
    }
    for (unsigned k = 0; 4 * k < e.cols; ++k) {
      const unsigned cols = e.cols - 4 * k < 4 ? e.cols - 4 * k : 4;
      if (cols == 4) a.str(stored(r, k), a64::ptr(g.out, int32_t(16 * k)));
      else store_low_bytes(a, stored(r, k), g.out, 16 * k, 4 * cols, g.tmp);
    }
  }
}

}  // namespace qrt::jit::a64gen
