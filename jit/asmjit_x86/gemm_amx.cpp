// qrt — the AMX int8 GEMM micro-kernel generator: one mr x nr tile (mr <= 32 rows of packed
// u8 activations times one 32-column panel of packed s8 weights), accumulated by tdpbusd in
// the tile registers — 16 rows x 64 bytes of k per A tile, 16 k quads x 16 columns per B tile,
// four u8 x s8 products per int32 element added with no 16-bit intermediate, so exact for
// every input, as vpdpbusd — then the AVX-512 tile's per-row epilogue on the rows stored back.
//
// The B tiles read the dot4 weight layout as it is packed for AVX-512 VNNI: k quad q of
// column c at w + 128·q + 4·c, so rows 128 bytes apart hold 16 k quads, and the two 16-column
// halves of a panel are the 64-byte halves of each row.
//
// Tiles (a 2 x 2 block, the four accumulators that hide tdpbusd's latency):
//   tmm0/tmm1  A, rows 0-15 / 16-31        tmm2/tmm3  B, columns 0-15 / 16-31
//   tmm4/tmm5  C rows 0-15 x both halves   tmm6/tmm7  C rows 16-31 x both halves
// k advances 64 bytes per step. The last k_tail bytes (KernelDesc::k_tail) take one more whole
// step over the row's last 64 bytes, overlapping the step before, against the panel's window
// block (pack_gemm: the weights of that step with the overlapped k quads zero, right after the
// panel's k steps). So one tile configuration serves the whole call, and k_steps must be at
// least 16 (k >= 64) when k_tail is set.
//
// Window tiles (desc.taps > 0) read a convolution's input in place: per window tap, the
// tap's tap_steps / 16 whole steps from a + tap_offsets[t] on, rows a_stride apart (the
// output pixels' stride along the padded input row); the weights advance as for plain rows.
//
// The tile configuration stays loaded after a call: the next tile of the same shape skips
// ldtilecfg, and the driver releases the tiles after its last call (Backend::
// release_thread_state).
//
// Calling convention: void tile(const GemmTileArgs* args, const KernelDesc*) — see
// jit/core/microkernel.h. Registers: rdi args, rsi A rows 0-15, r9 A rows 16-31, rdx A row
// stride, r8 weights, r10 the B and scratch row stride (128), rcx steps left (window tiles:
// rbx, r12 and r13, emit_util.h); rbp saves rsp,
// rsp the 64-aligned 4 KiB scratch (row r at rsp + 128·r); the epilogue's registers are
// those of gemm_zmm_epilogue.h, zmm0/zmm1 the row (zmm2/zmm3 the second row of a pair, zmm23
// the pair order).
#include <asmjit/x86.h>

#include <cstddef>
#include <cstdint>

#include "jit/asmjit_x86/emit_util.h"
#include "jit/asmjit_x86/gemm_zmm_epilogue.h"
#include "jit/asmjit_x86/generators.h"

namespace qrt::jit::x86gen {

using namespace asmjit;

namespace {

constexpr unsigned kPanel = 32;
constexpr int32_t kRowBytes = kPanel * 4;     // a weight step and a scratch row: 128 bytes
constexpr int32_t kStepBytes = 64;             // k bytes per tile row
constexpr int32_t kWeightStep = 16 * kRowBytes;  // one B tile: 16 k quads of the panel

/// The 64-byte tile configuration (palette 1): per tile its bytes per row and its rows.
struct TileConfig {
  uint8_t bytes[64] = {};
  void set(unsigned tile, unsigned rows, unsigned colsb) {
    bytes[16 + 2 * tile] = uint8_t(colsb);
    bytes[17 + 2 * tile] = uint8_t(colsb >> 8);
    bytes[48 + tile] = uint8_t(rows);
  }
};

/// The configuration: A tiles of 64 bytes per row, B tiles of 16 k quads, C tiles of 16 int32
/// columns; rows as the tile's shape needs (unused tiles stay unconfigured).
TileConfig tile_config(const KernelDesc& d) {
  TileConfig c;
  c.bytes[0] = 1;  // palette 1
  const unsigned top = d.mr < 16 ? d.mr : 16, bottom = d.mr > 16 ? d.mr - 16u : 0u;
  const bool right = d.nr > 16;
  c.set(0, top, kStepBytes);
  if (bottom) c.set(1, bottom, kStepBytes);
  c.set(2, 16, 64);
  if (right) c.set(3, 16, 64);
  c.set(4, top, 64);
  if (right) c.set(5, top, 64);
  if (bottom) c.set(6, bottom, 64);
  if (bottom && right) c.set(7, bottom, 64);
  return c;
}

struct Shape {
  bool bottom, right;
  bool signed_rows = false;  // s8 activations (tdpbssd)
};

// The configured accumulators (tmm4-7) as they exist for the shape.
template <typename Fn>
void for_each_accumulator(const Shape& s, Fn fn) {
  fn(x86::tmm4, 0, 0);
  if (s.right) fn(x86::tmm5, 0, 1);
  if (s.bottom) fn(x86::tmm6, 1, 0);
  if (s.bottom && s.right) fn(x86::tmm7, 1, 1);
}

// Scratch address of accumulator (i, j): rows 16·i on, the 64-byte half j (stride r10 = 128).
x86::Mem scratch(unsigned i, unsigned j) { return x86::ptr(x86::rsp, x86::r10, 0, int32_t(i * 16 * kRowBytes + j * 64)); }

// One k step: A tiles from rsi / r9 (+ a_offset), B tiles from r8 (+ b_offset), the products
// (tdpbusd on u8 rows; tdpbssd on s8 rows, desc.path kSdot4).
void emit_step(x86::Assembler& a, const Shape& s, int32_t a_offset = 0, int32_t b_offset = 0) {
  auto tdp = [&](const x86::Tmm& c, const x86::Tmm& x, const x86::Tmm& w) {
    if (s.signed_rows) a.tdpbssd(c, x, w);
    else a.tdpbusd(c, x, w);
  };
  // Each load right before its first product: tiles are not renamed, so a load waits for the
  // products still reading the tile it replaces; spread out, the loads overlap the products.
  a.tileloadd(x86::tmm0, x86::ptr(x86::rsi, x86::rdx, 0, a_offset));
  a.tileloadd(x86::tmm2, x86::ptr(x86::r8, x86::r10, 0, b_offset));
  tdp(x86::tmm4, x86::tmm0, x86::tmm2);
  if (s.right) {
    a.tileloadd(x86::tmm3, x86::ptr(x86::r8, x86::r10, 0, b_offset + 64));
    tdp(x86::tmm5, x86::tmm0, x86::tmm3);
  }
  if (s.bottom) {
    a.tileloadd(x86::tmm1, x86::ptr(x86::r9, x86::rdx, 0, a_offset));
    tdp(x86::tmm6, x86::tmm1, x86::tmm2);
  }
  if (s.bottom && s.right) tdp(x86::tmm7, x86::tmm1, x86::tmm3);
}

void emit_store_accumulators(x86::Assembler& a, const Shape& s) {
  for_each_accumulator(s, [&](const x86::Tmm& t, unsigned i, unsigned j) { a.tilestored(scratch(i, j), t); });
}

}  // namespace

Result<std::shared_ptr<ExecutableCode>> generate_amx_gemm(const KernelDesc& d) {
  // The backend's why_not() has checked the tile against its traits (k_tail a multiple of 4
  // below 64).
  CodeHolder code;
  if (code.init(Environment::host()) != kErrorOk) return Status::error("asmjit: cannot initialize for the host");
  x86::Assembler a(&code);
  const Shape s{d.mr > 16, d.nr > 16, d.path == GemmPath::kSdot4};
  Label config = a.newLabel(), loop = a.newLabel(), after = a.newLabel();

  const bool windows = d.taps > 0;
  if (windows) emit_push_window_registers(a);
  a.push(x86::rbp);
  a.mov(x86::rbp, x86::rsp);
  a.sub(x86::rsp, 32 * kRowBytes);
  a.and_(x86::rsp, -64);
  a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, a)));
  a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, a_stride)));
  a.mov(x86::r8, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, w)));
  a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, k_steps)));
  a.mov(x86::r10d, kRowBytes);
  if (s.bottom) {
    a.mov(x86::r9, x86::rdx);
    a.shl(x86::r9, 4);
    a.add(x86::r9, x86::rsi);
  }
  // Load the configuration only where the thread's differs (sttilecfg ~5 ns, ldtilecfg ~46
  // ns on Intel Xeon model 167): the driver releases it after a task's last tile
  // (Backend::release_thread_state); a thread whose tiles are released stores zeros.
  Label configured = a.newLabel();
  a.sttilecfg(x86::ptr(x86::rsp));
  a.vmovdqa32(x86::zmm0, x86::zmmword_ptr(x86::rsp));
  a.vpcmpeqb(x86::k1, x86::zmm0, x86::zmmword_ptr(config));
  a.kortestq(x86::k1, x86::k1);
  a.jc(configured);  // all 64 bytes equal
  a.ldtilecfg(x86::ptr(config));
  a.bind(configured);
  // The accumulators start at the panel's bias: its 32 int32 read with a row stride of 0, so
  // every row of a tile loads the same 64 bytes (the epilogue then has no bias to add).
  a.mov(x86::rax, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, epilogue)));
  a.xor_(x86::r11d, x86::r11d);
  for_each_accumulator(s, [&](const x86::Tmm& t, unsigned, unsigned j) {
    a.tileloadd(t, x86::ptr(x86::rax, x86::r11, 0, int32_t(kEpBias * kPanel * 4 + j * 64)));
  });
  Label tap = a.newLabel();
  if (windows) {
    // Per tap: the rows' start moves to the tap's k bytes; its whole steps follow.
    emit_window_tap_head(a, d, tap);
    if (s.bottom) {
      a.mov(x86::r9, x86::rdx);
      a.shl(x86::r9, 4);
      a.add(x86::r9, x86::rsi);
    }
  }
  a.shr(x86::rcx, 4);  // whole 64-byte k steps (k_steps counts quads)
  a.jz(after);
  a.align(AlignMode::kCode, 16);
  a.bind(loop);
  emit_step(a, s);
  a.add(x86::rsi, kStepBytes);
  if (s.bottom) a.add(x86::r9, kStepBytes);
  a.add(x86::r8, kWeightStep);
  a.dec(x86::rcx);
  a.jnz(loop);
  a.bind(after);
  if (windows) emit_window_tap_tail(a, tap);
  // The tail: the row's last 64 bytes (k_tail - 64 from here) against the window block
  // (k_tail / 4 weight steps from here).
  if (d.k_tail) emit_step(a, s, int32_t(d.k_tail) - kStepBytes, int32_t(d.k_tail / 4) * kRowBytes);
  emit_store_accumulators(a, s);

  // The epilogue, row by row from the scratch (the bias is in): the AVX-512 tile's epilogue.
  a.mov(x86::r11, x86::qword_ptr(x86::rdi, offsetof(GemmTileArgs, epilogue)));
  const Label pair_order = a.newLabel();
  // The pair order in zmm23 (the AMX tile keeps no accumulator in zmm: it is free, also beside
  // the Q31 epilogue's zmm24-31).
  emit_zmm_epilogue_setup(a, d, pair_order, x86::zmm23);
  const bool pairs = zmm_stores_row_pairs(d, x86::zmm23);
  // Row r in zmm0/zmm1, and for a pair row r + 1 in zmm2/zmm3.
  auto load_row = [&](unsigned r, unsigned first) {
    for (unsigned j = 0; j < 2; ++j) {
      if (16 * j >= d.nr) break;
      a.vmovdqa32(x86::Zmm(first + j), x86::zmmword_ptr(x86::rsp, int32_t(r * kRowBytes + j * 64)));
    }
  };
  for (unsigned r = 0; r < d.mr;) {
    if (pairs && r + 1 < d.mr) {
      load_row(r, 0);
      load_row(r + 1, 2);
      emit_zmm_row_epilogue(a, d, r, x86::zmm0, x86::zmm1, true);
      emit_zmm_row_epilogue(a, d, r + 1, x86::zmm2, x86::zmm3, true);
      emit_zmm_row_pair_store(a, d, x86::zmm23, x86::zmm0, x86::zmm1, x86::zmm2, x86::zmm3);
      r += 2;
      if (r < d.mr) a.lea(x86::r9, x86::ptr(x86::r9, x86::r10, 1));
      continue;
    }
    load_row(r, 0);
    emit_zmm_row_epilogue(a, d, r, x86::zmm0, x86::zmm1);
    emit_zmm_row_store(a, d, x86::zmm0, x86::zmm1);
    if (++r < d.mr) a.add(x86::r9, x86::r10);
  }
  a.mov(x86::rsp, x86::rbp);
  a.pop(x86::rbp);
  if (windows) emit_pop_window_registers(a);
  a.vzeroupper();
  a.ret();

  const TileConfig tiles = tile_config(d);
  a.align(AlignMode::kData, 64);
  a.bind(config);
  a.embed(tiles.bytes, sizeof tiles.bytes);
  if (pairs) emit_zmm_pair_order_table(a, pair_order);
  return x86gen::finish(code, d.name());
}

}  // namespace qrt::jit::x86gen
