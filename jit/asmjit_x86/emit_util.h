// qrt — internal helpers shared by the asmjit x86 generators (jit/asmjit_x86/ only).
#pragma once

#include <asmjit/x86.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

#include "jit/asmjit_common/asmjit_finish.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"

namespace qrt::jit::x86gen {

/// The bit pattern of a float, for immediates.
inline uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// Broadcasts a 32-bit immediate into every lane of `dst` (clobbers eax).
inline void broadcast(asmjit::x86::Assembler& a, const asmjit::x86::Ymm& dst, uint32_t value) {
  a.mov(asmjit::x86::eax, value);
  a.vmovd(dst.xmm(), asmjit::x86::eax);
  a.vpbroadcastd(dst, dst.xmm());
}

/// Stores the low `n` (0..16) bytes of `x` at [base + offset]; `x` is clobbered.
inline void store_low_bytes(asmjit::x86::Assembler& a, const asmjit::x86::Gp& base, int32_t offset,
                            const asmjit::x86::Xmm& x, unsigned n) {
  using namespace asmjit;
  if (n == 16) {
    a.vmovdqu(x86::xmmword_ptr(base, offset), x);
    return;
  }
  const unsigned widths[] = {8, 4, 2, 1};
  for (unsigned w : widths) {
    if (n < w) continue;
    if (w == 8) a.vmovq(x86::qword_ptr(base, offset), x);
    if (w == 4) a.vmovd(x86::dword_ptr(base, offset), x);
    if (w == 2) a.vpextrw(x86::word_ptr(base, offset), x, 0);
    if (w == 1) a.vpextrb(x86::byte_ptr(base, offset), x, 0);
    n -= w;
    offset += int32_t(w);
    if (n > 0) a.vpsrldq(x, x, w);
  }
}

/// Binds `masks` to 16 dwords, eight -1 then eight 0: loading 8 dwords at masks + 4·(8 - n)
/// gives a vpmaskmovd mask enabling the first n lanes. Emit after the code.
inline void embed_lane_masks(asmjit::x86::Assembler& a, const asmjit::Label& masks) {
  a.align(asmjit::AlignMode::kData, 32);
  a.bind(masks);
  a.embedUInt32(0xFFFFFFFFu, 8);
  a.embedUInt32(0u, 8);
}

/// The end of a per-pixel loop of the windowed kernels (depthwise, pooling), whose argument
/// blocks hold the pixel step and output stride at the given offsets: advance the tap
/// pointers (rsi += r12), the pixel offset (rbx) and the output (rdx), loop while pixels (r10)
/// remain, then restore rbx/r12 and return.
inline void emit_pixel_loop_end(asmjit::x86::Assembler& a, size_t pixel_step_offset, size_t out_stride_offset,
                                const asmjit::Label& pixel, const asmjit::Label& done) {
  using namespace asmjit;
  a.add(x86::rsi, x86::r12);
  a.add(x86::rbx, x86::qword_ptr(x86::rdi, int32_t(pixel_step_offset)));
  a.add(x86::rdx, x86::qword_ptr(x86::rdi, int32_t(out_stride_offset)));
  a.dec(x86::r10);
  a.jnz(pixel);
  a.bind(done);
  a.pop(x86::r12);
  a.pop(x86::rbx);
  a.vzeroupper();
  a.ret();
}

/// The start of an element-wise kernel (ElementwiseArgs): rsi a, rdx b, r8 y, rcx blocks,
/// and in registers 2-8 of type `Vec` (Ymm or Zmm) M_a, M_b, za, zb, zo, lo, hi.
template <typename Vec>
void emit_elementwise_prologue(asmjit::x86::Assembler& a) {
  using namespace asmjit;
  auto field = [](size_t offset) { return x86::dword_ptr(x86::rdi, int32_t(offset)); };
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(ElementwiseArgs, a)));
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(ElementwiseArgs, b)));
  a.mov(x86::r8, x86::qword_ptr(x86::rdi, offsetof(ElementwiseArgs, y)));
  a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(ElementwiseArgs, blocks)));
  a.vbroadcastss(Vec(2), field(offsetof(ElementwiseArgs, m_a)));
  a.vbroadcastss(Vec(3), field(offsetof(ElementwiseArgs, m_b)));
  a.vpbroadcastd(Vec(4), field(offsetof(ElementwiseArgs, za)));
  a.vpbroadcastd(Vec(5), field(offsetof(ElementwiseArgs, zb)));
  a.vpbroadcastd(Vec(6), field(offsetof(ElementwiseArgs, zo)));
  a.vbroadcastss(Vec(7), field(offsetof(ElementwiseArgs, lo)));
  a.vbroadcastss(Vec(8), field(offsetof(ElementwiseArgs, hi)));
}

/// A whole pooling kernel (PoolArgs; registers as in pool_avx2.cpp, the average's constants
/// bias, M, lo, hi and zo in registers 4-8 of type `Vec`, Ymm or Zmm) around
/// `block(lanes)`, which emits one block of `lanes` channels at channel offset rcx: the
/// prologue, then per pixel the whole blocks of `block_lanes` and the last partial one.
template <typename Vec, typename Block>
void emit_pool_kernel(asmjit::x86::Assembler& a, const KernelDesc& d, unsigned block_lanes, Block block) {
  using namespace asmjit;
  Label pixel = a.newLabel(), done = a.newLabel();
  const unsigned full = d.channels / block_lanes, tail = d.channels % block_lanes;
  a.push(x86::rbx);
  a.push(x86::r12);
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(PoolArgs, taps)));
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(PoolArgs, out)));
  a.mov(x86::r10, x86::qword_ptr(x86::rdi, offsetof(PoolArgs, pixels)));
  a.mov(x86::r12, x86::qword_ptr(x86::rdi, offsetof(PoolArgs, taps_stride)));
  a.vpbroadcastd(Vec(4), x86::dword_ptr(x86::rdi, offsetof(PoolArgs, bias)));
  a.vbroadcastss(Vec(5), x86::dword_ptr(x86::rdi, offsetof(PoolArgs, m)));
  a.vbroadcastss(Vec(6), x86::dword_ptr(x86::rdi, offsetof(PoolArgs, lo)));
  a.vbroadcastss(Vec(7), x86::dword_ptr(x86::rdi, offsetof(PoolArgs, hi)));
  a.vpbroadcastd(Vec(8), x86::dword_ptr(x86::rdi, offsetof(PoolArgs, zo)));
  a.xor_(x86::ebx, x86::ebx);
  a.test(x86::r10, x86::r10);
  a.jz(done);
  a.bind(pixel);
  a.xor_(x86::ecx, x86::ecx);
  if (full > 0) {
    Label next = a.newLabel();
    a.bind(next);
    block(block_lanes);
    a.add(x86::rcx, int32_t(block_lanes));
    a.cmp(x86::rcx, int32_t(full * block_lanes));
    a.jb(next);
  }
  if (tail > 0) block(tail);
  emit_pixel_loop_end(a, offsetof(PoolArgs, pixel_step), offsetof(PoolArgs, out_stride), pixel, done);
}

/// The loops of a depthwise kernel (DepthwiseArgs; registers as in depthwise_avx2.cpp): per
/// output pixel, channel groups of `group` blocks of `block` channels — a loop over the full
/// groups, then one group of the remaining full blocks and the partial one.
/// `emit_group(blocks, last_lanes)` emits one group at channel offset rcx, weights r8 and
/// epilogue r9; `block_weights` / `block_ep` are one block's bytes of each. Pushes rbx/r12;
/// emit_pixel_loop_end restores them.
template <typename EmitGroup>
void emit_depthwise_loops(asmjit::x86::Assembler& a, const KernelDesc& d, unsigned block, unsigned group,
                          int32_t block_weights, int32_t block_ep, const asmjit::Label& pixel,
                          const asmjit::Label& done, EmitGroup emit_group) {
  using namespace asmjit;
  const unsigned full = d.channels / block, tail = d.channels % block;
  const unsigned full_groups = full / group, rest = full % group;
  a.push(x86::rbx);
  a.push(x86::r12);
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, taps)));
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, out)));
  a.mov(x86::r10, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, pixels)));
  a.mov(x86::r12, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, taps_stride)));
  a.xor_(x86::ebx, x86::ebx);
  a.test(x86::r10, x86::r10);
  a.jz(done);
  a.bind(pixel);
  a.mov(x86::r8, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, weights)));
  a.mov(x86::r9, x86::qword_ptr(x86::rdi, offsetof(DepthwiseArgs, epilogue)));
  a.xor_(x86::ecx, x86::ecx);
  if (full_groups > 0) {
    Label loop = a.newLabel();
    a.bind(loop);
    emit_group(group, block);
    a.add(x86::r8, int32_t(group) * block_weights);
    a.add(x86::r9, int32_t(group) * block_ep);
    a.add(x86::rcx, int32_t(block * group));
    a.cmp(x86::rcx, int32_t(full_groups * group * block));
    a.jb(loop);
  }
  if (rest + (tail ? 1 : 0) > 0) emit_group(rest + (tail ? 1 : 0), tail ? tail : block);
  emit_pixel_loop_end(a, offsetof(DepthwiseArgs, pixel_step), offsetof(DepthwiseArgs, out_stride), pixel, done);
}

using asmjit_common::finish;

}  // namespace qrt::jit::x86gen

namespace qrt::jit::x86gen {

/// Loads `n` (1..16) bytes from [base + index + offset] into the low bytes of `x`, zeroing
/// the rest, without reading past the n-th byte.
inline void load_low_bytes(asmjit::x86::Assembler& a, const asmjit::x86::Xmm& x, const asmjit::x86::Gp& base,
                           const asmjit::x86::Gp& index, int32_t offset, unsigned n) {
  using namespace asmjit;
  if (n == 16) {
    a.vmovdqu(x, x86::xmmword_ptr(base, index, 0, offset));
    return;
  }
  a.vpxor(x, x, x);
  unsigned at = 0;
  const unsigned widths[] = {8, 4, 2, 1};
  for (unsigned w : widths) {
    if (n - at < w) continue;
    const int32_t off = offset + int32_t(at);
    if (w == 8) a.vmovq(x, x86::qword_ptr(base, index, 0, off));
    if (w == 4) a.vpinsrd(x, x, x86::dword_ptr(base, index, 0, off), at / 4);
    if (w == 2) a.vpinsrw(x, x, x86::word_ptr(base, index, 0, off), at / 2);
    if (w == 1) a.vpinsrb(x, x, x86::byte_ptr(base, index, 0, off), at);
    at += w;
  }
}

/// The start of a dot4 depthwise rows block whose first channel is rcx (DwRowsArgs in rdi): rdx
/// its first output (bytes, or int32 where `s32`), rax its offset in an interleaved position
/// (4 bytes per lane), r10 the row's pixels.
inline void emit_dw_rows_block_start(asmjit::x86::Assembler& a, bool s32) {
  using namespace asmjit;
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(DwRowsArgs, out)));
  if (s32) a.lea(x86::rdx, x86::ptr(x86::rdx, x86::rcx, 2));  // 4 bytes per channel
  else a.add(x86::rdx, x86::rcx);
  a.mov(x86::rax, x86::rcx);
  a.shl(x86::rax, 2);
  a.mov(x86::r10, x86::qword_ptr(x86::rdi, offsetof(DwRowsArgs, pixels)));
}

/// The dot4 depthwise rows' loop over the r10 pixels of a block: emit(group) while at least
/// `group` pixels remain, then emit(1) per pixel left; r10 counts down. `pairs` (paired
/// pixels, an even group): emit(2) before the single pixel, which is then the last one, so
/// every emit but the last starts at an even pixel.
template <typename Emit>
void emit_dw_pixel_loop(asmjit::x86::Assembler& a, unsigned group, const Emit& emit, bool pairs = false) {
  using namespace asmjit;
  Label many = a.newLabel(), tail = a.newLabel(), single = a.newLabel(), one = a.newLabel(), end = a.newLabel();
  a.cmp(x86::r10, group);
  a.jl(tail);
  a.bind(many);
  emit(group);
  a.sub(x86::r10, group);
  a.cmp(x86::r10, group);
  a.jge(many);
  a.bind(tail);
  if (pairs) {
    a.cmp(x86::r10, 2);
    a.jl(single);
    emit(2u);
    a.sub(x86::r10, 2);
  }
  a.bind(single);
  a.test(x86::r10, x86::r10);
  a.jz(end);
  a.bind(one);
  emit(1u);
  a.dec(x86::r10);
  a.jnz(one);
  a.bind(end);
}

/// A dot4 depthwise interleave kernel (DwInterleaveArgs) of `panel`-lane blocks: per position,
/// per tap group (r11 its first tap), emit_block(a, d, width, in_offset, out_offset) for two full
/// blocks at a time (width 2·panel) or one (dw_rows_block_width). Registers as the generators
/// document: rsi the position's first tap, rdx its output, r10 positions left, r8 step, r9
/// dilation, rax 3·dilation; set_flip(a) loads the 0x80 bytes (ecx holds them) for s8 input.
inline Result<std::shared_ptr<ExecutableCode>> generate_dw_interleave(
    const KernelDesc& d, unsigned panel, void (*set_flip)(asmjit::x86::Assembler&),
    void (*emit_block)(asmjit::x86::Assembler&, const KernelDesc&, unsigned, int32_t, int32_t)) {
  using namespace asmjit;
  // The backend's why_not() has checked the window, channels and panel.
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  const unsigned groups = dw_rows_groups(d.taps);
  const int32_t padded4 = int32_t(dw_rows_padded_channels(panel, d.channels) * 4);
  Label position = a.newLabel(), done = a.newLabel();
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(DwInterleaveArgs, row)));
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(DwInterleaveArgs, out)));
  a.mov(x86::r10, x86::qword_ptr(x86::rdi, offsetof(DwInterleaveArgs, positions)));
  a.mov(x86::r8, x86::qword_ptr(x86::rdi, offsetof(DwInterleaveArgs, step)));
  a.mov(x86::r9, x86::qword_ptr(x86::rdi, offsetof(DwInterleaveArgs, dilation)));
  a.lea(x86::rax, x86::ptr(x86::r9, x86::r9, 1));
  if (d.storage_signed) {
    a.mov(x86::ecx, 0x80808080u);
    set_flip(a);
  }
  a.test(x86::r10, x86::r10);
  a.jle(done);
  a.bind(position);
  a.mov(x86::r11, x86::rsi);
  for (unsigned g = 0; g < groups; ++g) {
    if (g > 0) a.lea(x86::r11, x86::ptr(x86::r11, x86::r9, 2));  // four taps on
    for (size_t b = 0; b * panel < d.channels;) {
      const bool pair = (b + 2) * panel <= d.channels;
      emit_block(a, d, pair ? 2 * panel : dw_rows_block_width(panel, d.channels, b), int32_t(b * panel),
                 int32_t(g) * padded4 + int32_t(b * panel * 4));
      b += pair ? 2 : 1;
    }
  }
  a.add(x86::rsi, x86::r8);
  a.add(x86::rdx, int32_t(dw_rows_position_bytes(panel, d.channels, d.taps)));
  a.dec(x86::r10);
  a.jnz(position);
  a.bind(done);
  a.vzeroupper();
  a.ret();
  return asmjit_common::finish(code, d.name());
}

/// The registers of TFLite's double-rounding requantization (KernelDesc::q31) on zmm:
/// constants `nudge` (2^30 per qword), `ones` (1 per dword), `m_odd` (the odd lanes'
/// multipliers in the low dword of each qword), mask `odd` (0xAAAA); temps t0-t3, mask `up`.
struct Q31Registers {
  asmjit::x86::Zmm nudge, ones, m_odd, t0, t1, t2, t3;
  asmjit::x86::KReg odd, up;
};

/// Loads the constants of `r` except m_odd (through `gp`, clobbered).
inline void emit_q31_constants(asmjit::x86::Assembler& a, const Q31Registers& r, const asmjit::x86::Gp& gp) {
  a.mov(gp.r32(), 1 << 30);
  a.vpbroadcastq(r.nudge, gp.r64());
  a.mov(gp.r32(), 1);
  a.vpbroadcastd(r.ones, gp.r32());
  a.mov(gp.r32(), 0xAAAA);
  a.kmovw(r.odd, gp.r32());
}

/// v = min(MultiplyByQuantizedMultiplier(v), hi - zo) per lane, double rounding, exactly as
/// profile_requant_x86.cpp computes it with intrinsics (the derivation in its header): the left
/// shift; the doubling high-mul as floor((x·M + 2^30) / 2^31) on the even and the odd lanes'
/// 64-bit products (vpmuldq), the odd quotient's low 32 bits moved to the high dword; then
/// RoundingDivideByPOT: (h >> right) + ((h & mask) > threshold + (h < 0)). `field(f)` is the
/// epilogue operand of Q31 field f (kEpMultiplier, kEpQ31*, kEpUpperBound) for v's lanes.
template <typename Field>
void emit_q31_round(asmjit::x86::Assembler& a, const asmjit::x86::Zmm& v, const Q31Registers& r, const Field& field) {
  a.vpsllvd(r.t0, v, field(kEpQ31LeftShift));
  a.vpmuldq(r.t1, r.t0, field(kEpMultiplier));
  a.vpaddq(r.t1, r.t1, r.nudge);
  a.vpsrlq(r.t1, r.t1, 31);
  a.vpsrlq(r.t2, r.t0, 32);
  a.vpmuldq(r.t2, r.t2, r.m_odd);
  a.vpaddq(r.t2, r.t2, r.nudge);
  a.vpsllq(r.t2, r.t2, 1);
  a.k(r.odd).vpblendmd(v, r.t1, r.t2);  // the odd lanes from t2
  a.vpsrld(r.t3, v, 31);
  a.vpaddd(r.t3, r.t3, field(kEpQ31Threshold));
  a.vpandd(r.t0, v, field(kEpQ31RemainderMask));
  a.vpcmpgtd(r.up, r.t0, r.t3);
  a.vpsravd(v, v, field(kEpQ31RightShift));
  a.k(r.up).vpaddd(v, v, r.ones);
  a.vpminsd(v, v, field(kEpUpperBound));
}

/// desc.q31 on ymm: v = clamp(MultiplyByQuantizedMultiplier(v), lo - zo, hi - zo) + zo per
/// lane, TFLite's double rounding as emit_q31_round computes it, in AVX2's forms: an immediate
/// blend for the odd lanes, and the rounding increment as the subtraction of the compare's
/// all-ones lanes. `t` are three temporaries; `nudge` labels 2^30 per qword (32 bytes);
/// `field(f)` is the epilogue operand of Q31 field f for v's lanes (kEpLowerBound,
/// kEpUpperBound and kEpOutputZeroPoint included).
template <typename Field>
void emit_q31_requant_ymm(asmjit::x86::Assembler& a, const asmjit::x86::Ymm& v, const std::array<asmjit::x86::Ymm, 3>& t,
                          const Field& field, const asmjit::Label& nudge) {
  using namespace asmjit;
  const x86::Ymm t0 = t[0], t1 = t[1], t2 = t[2];
  a.vpsllvd(t0, v, field(kEpQ31LeftShift));
  a.vpmuldq(t1, t0, field(kEpMultiplier));
  a.vpaddq(t1, t1, x86::ymmword_ptr(nudge));
  a.vpsrlq(t1, t1, 31);
  a.vpsrlq(t0, t0, 32);
  a.vmovdqu(t2, field(kEpMultiplier));
  a.vpsrlq(t2, t2, 32);
  a.vpmuldq(t0, t0, t2);
  a.vpaddq(t0, t0, x86::ymmword_ptr(nudge));
  a.vpsllq(t0, t0, 1);
  a.vpblendd(v, t1, t0, 0xAA);  // the odd lanes from t0
  a.vpsrld(t0, v, 31);
  a.vpaddd(t0, t0, field(kEpQ31Threshold));
  a.vpand(t1, v, field(kEpQ31RemainderMask));
  a.vpcmpgtd(t1, t1, t0);  // -1 where the remainder rounds up
  a.vpsravd(v, v, field(kEpQ31RightShift));
  a.vpsubd(v, v, t1);
  a.vpmaxsd(v, v, field(kEpLowerBound));
  a.vpminsd(v, v, field(kEpUpperBound));
  a.vpaddd(v, v, field(kEpOutputZeroPoint));
}

// GEMM window tiles (KernelDesc::taps > 0, GemmTileArgs::tap_offsets): a tap loop around a
// tile's k loop. rbx keeps the first row's start, r12 the next tap offset's address, r13 the
// taps left; they are callee-saved, so the tile pushes them first and pops them last.
inline void emit_push_window_registers(asmjit::x86::Assembler& a) {
  a.push(asmjit::x86::rbx);
  a.push(asmjit::x86::r12);
  a.push(asmjit::x86::r13);
}

inline void emit_pop_window_registers(asmjit::x86::Assembler& a) {
  a.pop(asmjit::x86::r13);
  a.pop(asmjit::x86::r12);
  a.pop(asmjit::x86::rbx);
}

/// Binds `tap` at the head of the tap loop: rsi (the first row's start on entry) moves to the
/// tap's k bytes and rcx gets the tap's k groups; the caller then sets its other row bases.
inline void emit_window_tap_head(asmjit::x86::Assembler& a, const KernelDesc& d, const asmjit::Label& tap) {
  using namespace asmjit;
  a.mov(x86::rbx, x86::rsi);
  a.mov(x86::r12, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, tap_offsets)));
  a.mov(x86::r13d, uint32_t(d.taps));
  a.bind(tap);
  a.mov(x86::rsi, x86::rbx);
  a.add(x86::rsi, x86::qword_ptr(x86::r12));
  a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, tap_steps)));
}

/// The tap loop's end: the next tap, while any is left.
inline void emit_window_tap_tail(asmjit::x86::Assembler& a, const asmjit::Label& tap) {
  using namespace asmjit;
  a.add(x86::r12, 8);
  a.dec(x86::r13d);
  a.jnz(tap);
}

}  // namespace qrt::jit::x86gen
