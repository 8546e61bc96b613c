// qrt — the AArch64 generators of the dot4 depthwise path (DwInterleaveArgs and DwRowsArgs,
// jit/core/microkernel.h) on sdot (neon-dot and neon-i8mm): 16-lane blocks, whose quads are in
// channel order (dw_rows_lane_channel(16, l) = l), and s8 quads (desc.path = kSdot4: x - 128
// for u8 storage, x for s8; the caller folds the shift into the bias).
//
// Interleave: per output position, per tap group, per 16-channel block: the four taps' 16
// bytes (sign bits flipped for u8 storage), then one st4, which stores them interleaved byte
// by byte: 16 quads, tap j of lane l at 4·l + j.
//   x1 the position's row  x2 interleaved output  x3 positions left  x4 step  x5 dilation
//   x8-x11 the group's four taps  x12 blocks left  x13 4 · dilation  x14 the group's first tap
//   v0-v3 taps  v31 0x80 bytes (u8 storage)
//
// Rows: per 16-lane block, two output pixels at a time (then one): every window row and tap
// group adds one sdot per 4 lanes into accumulators that start at zero, then the GEMM tiles'
// epilogue (shared_a64.cpp: + bias, the f32 or Q31 requantization, the narrowing and a
// partial store for the last block). Weights of up to 3 (row, group) pairs stay in registers
// for the block (a 3x3 window); wider windows load each pair's 64 bytes with one ld1.
//   x1 row pointers  x2 output  x3 pixels  x4 weights of the block  x5 its epilogue
//   x6 the block's bytes in a position  x7 the block's next output pixel  x8 pixels left
//   x9 a row's quads  x10 the next pixel's offset in the rows  x12 bytes per output pixel
//   x13, x14 epilogue scratch  x15 the block's first output pixel
//   v0-v7 two pixels' accumulators  v8-v9 quads  v10-v17 epilogue  v18-v29 weights
// Products of s8 quads and s8 weights are exact; the int32 sums wrap, as the twin's.
#include <asmjit/arm/a64assembler.h>

#include <cstddef>
#include <string>

#include "jit/asmjit_a64/generators.h"

namespace qrt::jit::a64gen {

namespace {

using namespace asmjit;

constexpr unsigned kPanel = 16;
constexpr unsigned kPixels = 2;
constexpr unsigned kFirstWeight = 18, kResidentPairs = 3;

VecV v(unsigned i) { return VecV(i); }

// Adds a byte offset that may not fit an immediate.
void add_offset(Assembler& a, const GpX& dst, const GpX& src, int64_t offset, const GpX& tmp) {
  if (offset >= 0 && offset < 4096) {
    a.add(dst, src, uint32_t(offset));
  } else {
    a.mov(tmp, uint64_t(offset));
    a.add(dst, src, tmp);
  }
}

// One block of the rows kernel: every pixel, kPixels at a time, then one. `width` is the
// block's channels (16, or the last block's).
void emit_rows_block(Assembler& a, const KernelDesc& d, unsigned width) {
  const unsigned groups = dw_rows_groups(d.taps), pairs = d.kh * groups;
  const int64_t padded4 = int64_t(dw_rows_padded_channels(kPanel, d.channels)) * 4;
  const int64_t position_bytes = dw_rows_position_bytes(kPanel, d.channels, d.taps);
  const bool resident = pairs <= kResidentPairs;
  const GpX rows = a64::x1, weights = a64::x4, ep = a64::x5, block_bytes = a64::x6, out = a64::x7, left = a64::x8,
            quads = a64::x9, offset = a64::x10, pixel_bytes = a64::x12, out_tmp = a64::x13, scratch = a64::x14;
  if (resident) {
    // (ld1 of several registers takes no immediate offset.)
    a.mov(scratch, weights);
    for (unsigned i = 0; i < pairs; ++i) {
      a.ld1(v(kFirstWeight + 4 * i).b16(), v(kFirstWeight + 4 * i + 1).b16(), v(kFirstWeight + 4 * i + 2).b16(),
            v(kFirstWeight + 4 * i + 3).b16(), a64::ptr_post(scratch, 64));
    }
  }
  auto acc = [](unsigned p, unsigned z) { return v(4 * p + z); };
  auto emit_pixels = [&](unsigned count) {
    for (unsigned p = 0; p < count; ++p) {
      for (unsigned z = 0; z < 4; ++z) a.movi(acc(p, z).b16(), 0);
    }
    unsigned q = 0;
    for (unsigned dy = 0; dy < d.kh; ++dy) {
      a.ldr(quads, a64::ptr(rows, int32_t(8 * dy)));
      a.add(quads, quads, offset);
      a.add(quads, quads, block_bytes);
      for (unsigned g = 0; g < groups; ++g) {
        const unsigned pair = dy * groups + g;
        unsigned w0 = kFirstWeight + 4 * pair;
        if (!resident) {
          // Two sets of four registers in turn, so a pair's load need not wait for the last.
          w0 = kFirstWeight + 4 * (pair % 2);
          add_offset(a, scratch, weights, int64_t(64) * pair, scratch);
          a.ld1(v(w0).b16(), v(w0 + 1).b16(), v(w0 + 2).b16(), v(w0 + 3).b16(), a64::ptr(scratch));
        }
        for (unsigned z = 0; z < 4; ++z) {
          for (unsigned p = 0; p < count; ++p) {
            const VecV quad = v(8 + q++ % 2);
            a.ldr(quad, a64::ptr(quads, int32_t(int64_t(p) * position_bytes + int64_t(g) * padded4 + 16 * z)));
            a.sdot(acc(p, z).s4(), quad.b16(), v(w0 + z).b16());
          }
        }
      }
    }
    EpilogueLayout layout;
    layout.rows = count, layout.cols = width, layout.out = d.out, layout.q31 = d.q31;
    layout.field_bytes = 4 * kPanel;
    layout.acc = [&](unsigned r, unsigned j) { return acc(r, j); };
    layout.tmp_base = 10;
    emit_epilogue(a, layout, EpilogueRegs{ep, ep, out, pixel_bytes, out_tmp, scratch});
    add_offset(a, offset, offset, int64_t(count) * position_bytes, scratch);
    if (count == 1) {
      a.add(out, out, pixel_bytes);
    } else {
      a.add(out, out, pixel_bytes, a64::lsl(1));
    }
  };
  Label pairs_loop = a.newLabel(), single = a.newLabel(), done = a.newLabel();
  a.mov(left, a64::x3);
  a.mov(offset, 0);
  a.mov(out, a64::x15);
  a.bind(pairs_loop);
  a.cmp(left, kPixels);
  a.b_lt(single);
  emit_pixels(kPixels);
  a.sub(left, left, kPixels);
  a.b(pairs_loop);
  a.bind(single);
  a.cbz(left, done);
  emit_pixels(1);
  a.bind(done);
}

}  // namespace

std::string dw_rows_a64_why_not(const KernelDesc& d) {
  if (d.panel != kPanel) return "the AArch64 depthwise rows work in 16-lane blocks";
  // A pixel pair's quads at immediate offsets of one row pointer (ldr q: up to 65520).
  if (int64_t(kPixels) * dw_rows_position_bytes(kPanel, d.channels, d.taps) > 65520 - 64) {
    return "the interleaved positions are too wide for the AArch64 depthwise rows";
  }
  return "";
}

Result<std::shared_ptr<ExecutableCode>> generate_dw_interleave_a64(const KernelDesc& d) {
  CodeHolder code;
  QRT_RETURN_IF_ERROR(init_code(code, d));
  Assembler a(&code);
  const unsigned groups = dw_rows_groups(d.taps);
  const uint32_t blocks = dw_rows_padded_channels(kPanel, d.channels) / kPanel;
  const bool flip = !d.storage_signed;  // s8 quads: u8 - 128
  a.ldr(a64::x1, a64::ptr(a64::x0, offsetof(DwInterleaveArgs, row)));
  a.ldr(a64::x2, a64::ptr(a64::x0, offsetof(DwInterleaveArgs, out)));
  a.ldr(a64::x3, a64::ptr(a64::x0, offsetof(DwInterleaveArgs, positions)));
  a.ldr(a64::x4, a64::ptr(a64::x0, offsetof(DwInterleaveArgs, step)));
  a.ldr(a64::x5, a64::ptr(a64::x0, offsetof(DwInterleaveArgs, dilation)));
  if (flip) a.movi(v(31).b16(), 0x80);
  Label position = a.newLabel(), done = a.newLabel();
  a.cmp(a64::x3, 0);
  a.b_le(done);
  a.lsl(a64::x13, a64::x5, 2);
  a.bind(position);
  a.mov(a64::x14, a64::x1);
  for (unsigned g = 0; g < groups; ++g) {
    a.mov(a64::x8, a64::x14);
    a.add(a64::x9, a64::x8, a64::x5);
    a.add(a64::x10, a64::x9, a64::x5);
    a.add(a64::x11, a64::x10, a64::x5);
    a.mov(a64::x12, blocks);
    Label block = a.newLabel();
    a.bind(block);
    for (unsigned j = 0; j < 4; ++j) {
      a.ld1(v(j).b16(), a64::ptr_post(GpX(8 + j), 16));
      if (flip) a.eor(v(j).b16(), v(j).b16(), v(31).b16());
    }
    a.st4(v(0).b16(), v(1).b16(), v(2).b16(), v(3).b16(), a64::ptr_post(a64::x2, 64));
    a.subs(a64::x12, a64::x12, 1);
    a.b_ne(block);
    if (g + 1 < groups) a.add(a64::x14, a64::x14, a64::x13);
  }
  a.add(a64::x1, a64::x1, a64::x4);
  a.subs(a64::x3, a64::x3, 1);
  a.b_ne(position);
  a.bind(done);
  a.ret(a64::x30);
  return finish(code, d.name());
}

Result<std::shared_ptr<ExecutableCode>> generate_dw_rows_a64(const KernelDesc& d) {
  CodeHolder code;
  QRT_RETURN_IF_ERROR(init_code(code, d));
  Assembler a(&code);
  const unsigned groups = dw_rows_groups(d.taps);
  const uint32_t full = d.channels / kPanel, tail = d.channels % kPanel;
  const unsigned ob = d.out == OutKind::kS32 ? 4 : 1;
  Label done = a.newLabel();
  save_d8_d15(a);
  a.ldr(a64::x1, a64::ptr(a64::x0, offsetof(DwRowsArgs, rows)));
  a.ldr(a64::x2, a64::ptr(a64::x0, offsetof(DwRowsArgs, out)));
  a.ldr(a64::x3, a64::ptr(a64::x0, offsetof(DwRowsArgs, pixels)));
  a.ldr(a64::x4, a64::ptr(a64::x0, offsetof(DwRowsArgs, weights)));
  a.ldr(a64::x5, a64::ptr(a64::x0, offsetof(DwRowsArgs, epilogue)));
  a.cmp(a64::x3, 0);
  a.b_le(done);
  a.mov(a64::x12, uint64_t(d.channels) * ob);
  a.mov(a64::x6, 0);
  a.mov(a64::x15, a64::x2);
  const int64_t weight_block = int64_t(d.kh) * groups * kPanel * 4, ep_block = int64_t(kEpFields) * kPanel * 4;
  auto next_block = [&] {
    add_offset(a, a64::x4, a64::x4, weight_block, a64::x14);
    add_offset(a, a64::x5, a64::x5, ep_block, a64::x14);
    a.add(a64::x6, a64::x6, kPanel * 4);
    a.add(a64::x15, a64::x15, kPanel * ob);
  };
  if (full > 0) {
    Label block = a.newLabel();
    a.mov(a64::x11, full);
    a.bind(block);
    emit_rows_block(a, d, kPanel);
    next_block();
    a.subs(a64::x11, a64::x11, 1);
    a.b_ne(block);
  }
  if (tail) emit_rows_block(a, d, tail);
  a.bind(done);
  restore_d8_d15(a);
  a.ret(a64::x30);
  return finish(code, d.name());
}

}  // namespace qrt::jit::a64gen
