// qrt — the micro-kernel ABIs: one argument block per kernel kind, the same for every
// backend. A micro-kernel is called as fn(&args, &desc): generated code reads only `args`
// (the description is baked into it), the portable scalar twins (jit/ref/twins.h) read the
// description too. So a backend's kernel and its twin are interchangeable, kernel by kernel.
//
// The layouts of packed operands (GEMM weight panels, depthwise weights) are the backend's
// tile traits (jit/core/backend.h); the operator layer packs with them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "jit/core/kernel.h"

namespace qrt::jit {

/// A micro-kernel entry: fn(args, desc).
template <typename Args>
using MicrokernelFn = void (*)(const Args* args, const KernelDesc* desc);

/// Calls the micro-kernel at `entry` (a CompiledKernel's entry point).
template <typename Args>
inline void call_microkernel(const void* entry, const Args& args, const KernelDesc& desc) {
  reinterpret_cast<MicrokernelFn<Args>>(const_cast<void*>(entry))(&args, &desc);
}

/// kQuantize / kDequantize: converts `n` elements (a multiple of the backend's block; the
/// operator layer converts the rest with the twin). Quantize: q = clamp(rne(x / scale) + zp,
/// qmin, qmax), NaN -> zp; dequantize: x = f32(q - zp) * scale (desc.scale, zero_point,
/// qmin, qmax).
struct ConvertArgs {
  const void* in;
  void* out;
  size_t n;  ///< elements: a multiple of StreamTraits::block unless StreamTraits::masked_tail
};

/// Per-channel epilogue fields of GEMM panels and depthwise blocks, each one vector of
/// `width` 32-bit values, in this order (width: the panel or block width).
enum GemmEpilogueField : size_t {
  kEpBias = 0,            ///< int32: bias and folded zero-point terms
  kEpWeightZeroPoint,     ///< int32: zw' (used with row sums)
  kEpMultiplier,          ///< f32: requantization multiplier M[n], or the dcast scale (f32 output);
                          ///< int32 Q31 multiplier with desc.q31
  kEpLowerBound,          ///< f32: lo - zo[n] (int32 with desc.q31)
  kEpUpperBound,          ///< f32: hi - zo[n] (int32 with desc.q31)
  kEpOutputZeroPoint,     ///< int32: zo[n]
  // desc.q31 only (TFLite's double rounding, shift = the Q31 multiplier's exponent):
  kEpQ31LeftShift,        ///< int32: max(shift, 0)
  kEpQ31RightShift,       ///< int32: max(-shift, 0)
  kEpQ31RemainderMask,    ///< int32: 2^right - 1
  kEpQ31Threshold,        ///< int32: mask >> 1 (RoundingDivideByPOT adds 1 for negative values)
  kEpFields
};

/// kGemm: one desc.mr x desc.nr tile. acc[r][j] = Σ_k a[r][k]·w[k][j] over the packed panel,
/// + bias[j] (- row_sums[r]·zw[j] with desc.row_correction), then the epilogue of desc.out:
/// s32 as is; f32: f32(acc)·M[j]; u8/s8: clamp(f32(acc)·M[j], lo, hi) rounded to nearest
/// even, + zo[j]; with desc.q31 (u8/s8): clamp(MultiplyByQuantizedMultiplier(acc, M[j],
/// shift[j]), lo - zo, hi - zo) + zo[j] (numerics::requantize_tflite, double rounding).
/// Stores exactly desc.nr columns per row.
///
/// Window tiles (desc.taps > 0, GemmTraits::window_taps) compute a convolution from a padded
/// input in place (implicit GEMM): k runs over desc.taps window taps of tap_steps k groups
/// each, and row r's k bytes of tap t are at a + r · a_stride + tap_offsets[t], one after
/// another. The weights are the same packed [taps · tap_steps · k_group, n] panel.
struct GemmTileArgs {
  const void* a;            ///< packed activations of the tile's first row
  int64_t a_stride;         ///< bytes between packed activation rows
  const void* w;            ///< the weight panel (64-byte aligned); with desc.k_tail, the
                            ///< window block follows its k steps (PackedGemm::window_steps)
  int64_t k_steps;          ///< padded K / k_group (with desc.k_tail: at least one whole k step)
  void* c;                  ///< output of the tile's first row
  int64_t c_stride;         ///< bytes between output rows
  const void* epilogue;     ///< the panel's epilogue block (kEpFields x panel values, 64-byte aligned)
  const int32_t* row_sums;  ///< Σ_k a' of the tile's rows (row_correction kernels only)
  const int64_t* tap_offsets = nullptr;  ///< window tiles: per tap, bytes from a row's start to its k bytes
  int64_t tap_steps = 0;                 ///< window tiles: k groups per tap (k_steps = taps · tap_steps)
};

/// kPackRows: `rows` activation rows of `k` stored 8-bit values (row r at src + r ·
/// src_stride) into the packed layout of desc.path (u8 bytes, or u16 for the widened path) at
/// dst + r · dst_stride, flipping the sign bit when desc.storage_signed (s8 -> u8) and
/// zero-padding to `k_padded`; sums[r] = Σ of row r's packed values (int32, wrapping) unless
/// `sums` is null (no row correction needs them). Rows may be packed in place (src == dst,
/// equal strides) on the byte paths, not on the widened one.
struct PackRowsArgs {
  const uint8_t* src;
  uint8_t* dst;
  int64_t k;
  int64_t k_padded;
  int32_t* sums;
  int64_t rows;
  int64_t src_stride;
  int64_t dst_stride;
};

/// kDepthwise: pixel p reads tap t at taps[p * taps_stride / 8 + t] + p * pixel_step: a row
/// of pointers per pixel (taps_stride = 8 * taps, pixel_step = 0) where windows touch the
/// padding, or one row stepped along the input (taps_stride = 0) for runs of interior
/// pixels. desc.channels channels, desc.taps taps (even), desc.storage_signed input, desc.out.
struct DepthwiseArgs {
  const uint8_t* const* taps;  ///< padded-taps pointers to input channel vectors
  void* out;                   ///< the first output pixel
  int64_t out_stride;          ///< bytes between output pixels
  int64_t pixels;              ///< output pixels to compute
  const void* weights;         ///< packed s16 weights (the depthwise layout below; 64-byte aligned)
  const void* epilogue;        ///< per channel block, kEpFields x block values (lane order; 64-byte aligned)
  int64_t taps_stride;         ///< bytes between the pixels' pointer rows
  int64_t pixel_step;          ///< bytes added to every tap pointer per pixel
};

/// The depthwise weight layout: per block of desc.panel channels (16 on ymm, 32 on zmm), per
/// tap pair, the block's lanes as two registers of panel / 2 lanes, each lane holding the
/// pair's two s16 weights (tap 2p first): the s16 weight of tap t for lane `lane` of block b
/// is element depthwise_weight_index(panel, pairs, b, lane, t). Lane `lane` holds the channel
/// depthwise_lane_channel(panel, lane) of its block — the order that vpunpck{l,h}wd (which
/// works within 128-bit lanes) followed by vpmaddwd produces: per 128-bit lane L, the first
/// register holds channels 8L..8L+3, the second 8L+4..8L+7. The epilogue lanes use the same
/// order.
inline unsigned depthwise_lane_channel(unsigned panel, unsigned lane) {
  const unsigned width = panel / 2, reg = lane / width, i = lane % width;
  return (i / 4) * 8 + reg * 4 + i % 4;
}

/// The index (in s16 elements) of tap t's weight for lane `lane` of block b (see above).
inline size_t depthwise_weight_index(unsigned panel, unsigned pairs, size_t b, unsigned lane, unsigned t) {
  const unsigned width = panel / 2;
  return ((b * pairs + t / 2) * 2 + lane / width) * (2 * width) + (lane % width) * 2 + t % 2;
}

/// The dot4 depthwise path (kDwInterleave + kDwRows) works on interleaved input rows: for
/// output position x and tap group g, one u8 quad per channel holding the window's taps
/// 4g..4g+3 along the row (taps past the window width meet zero weights). An output row is
/// then kh · groups vpdpbusd per register, with no shuffle in the pixel loop.
///
/// Channels go in blocks of desc.panel (32 on AVX-512) lanes; the last block is narrowed to
/// 16 lanes when its channels fit (dw_rows_block_width). Within a
/// block of width W the quads are W/16 vectors of 16-byte chunks: chunk m holds lanes
/// 4m..4m+3, which are the channels 16·L + 4·r + (lane % 4) with r = m / (W / 16) and
/// L = m % (W / 16) (dw_rows_lane_channel) — the order two rounds of vpunpck{l,h} within
/// 128-bit lanes produce.

/// Groups of four taps along a window row of width `kw`.
inline unsigned dw_rows_groups(unsigned kw) { return (kw + 3) / 4; }

/// Lanes of block b (the last one may be narrower; see above).
inline unsigned dw_rows_block_width(unsigned panel, uint32_t channels, size_t b) {
  const uint32_t left = channels - uint32_t(b) * panel;
  if (left >= panel) return panel;
  return left <= 16 ? 16u : left <= 32 ? std::min(32u, panel) : panel;
}

/// Channels rounded up to the blocks' widths: the lanes of one tap group of a position.
inline uint32_t dw_rows_padded_channels(unsigned panel, uint32_t channels) {
  const uint32_t full = channels / panel * panel;
  return full + (channels % panel == 0 ? 0 : dw_rows_block_width(panel, channels, channels / panel));
}

/// The channel (within its block) of lane `lane` of a block `width` lanes wide.
inline unsigned dw_rows_lane_channel(unsigned width, unsigned lane) {
  const unsigned m = lane / 4, chunks = width / 16;
  return 16 * (m % chunks) + 4 * (m / chunks) + lane % 4;
}

/// Bytes of one interleaved position: groups x padded channels x 4 taps.
inline int64_t dw_rows_position_bytes(unsigned panel, uint32_t channels, unsigned kw) {
  return int64_t(dw_rows_groups(kw)) * dw_rows_padded_channels(panel, channels) * 4;
}

/// The byte offset of tap j (0..3) of group g, lane `lane` of block b, in a position.
inline int64_t dw_rows_quad_offset(unsigned panel, uint32_t channels, unsigned g, size_t b, unsigned lane, unsigned j) {
  return (int64_t(g) * dw_rows_padded_channels(panel, channels) + int64_t(b) * panel + lane) * 4 + j;
}

/// The byte offset of the s8 weight of tap j (0..3) of group g of window row dy, lane `lane`
/// of block b, in weight set `set` of `sets` (2 with KernelDesc::paired_pixels, else 1): per
/// block, per set, per row, per group, `panel` lanes of quads (narrow blocks use the first
/// lanes).
inline int64_t dw_rows_weight_offset(unsigned panel, unsigned kh, unsigned groups, size_t b, unsigned dy, unsigned g,
                                     unsigned lane, unsigned j, unsigned set = 0, unsigned sets = 1) {
  return ((((int64_t(b) * sets + set) * kh + dy) * groups + g) * panel + lane) * 4 + j;
}

/// With desc.path = kMaddwd (DepthwiseTraits::rows_maddwd: AVX2 without VNNI, which splits
/// each u8 quad into two u16 word pairs for vpmaddwd) the weights are s16 instead: per block,
/// set, row and group, per 8 lanes, 32 bytes of the even taps' pairs (j = 0, 2) and then 32 of
/// the odd taps' (j = 1, 3), lane l's pair at 4 · (l % 8). The byte offset of tap j's weight.
inline int64_t dw_rows_word_weight_offset(unsigned panel, unsigned kh, unsigned groups, size_t b, unsigned dy, unsigned g,
                                          unsigned lane, unsigned j, unsigned set = 0, unsigned sets = 1) {
  const int64_t chunk = (((int64_t(b) * sets + set) * kh + dy) * groups + g) * panel + lane / 8 * 8;
  return chunk * 8 + (j % 2) * 32 + (lane % 8) * 4 + (j / 2) * 2;
}

/// Bytes of a kDwRows description's weights (every block, set, row and group): 4 per lane
/// (s8 quads), 8 with kMaddwd (s16).
inline int64_t dw_rows_weight_bytes(const KernelDesc& d, unsigned sets) {
  const int64_t blocks = (int64_t(d.channels) + d.panel - 1) / d.panel;
  return blocks * sets * d.kh * dw_rows_groups(d.taps) * d.panel * (d.path == GemmPath::kMaddwd ? 8 : 4);
}

/// Writes weight `w` of tap j of group g, row dy, lane `lane` of block b, set `set` in the
/// layout of d.path (dw_rows_weight_offset, or dw_rows_word_weight_offset for kMaddwd).
inline void dw_rows_put_weight(uint8_t* weights, const KernelDesc& d, size_t b, unsigned dy, unsigned g, unsigned lane,
                               unsigned j, unsigned set, unsigned sets, int8_t w) {
  const unsigned groups = dw_rows_groups(d.taps);
  if (d.path != GemmPath::kMaddwd) {
    weights[dw_rows_weight_offset(d.panel, d.kh, groups, b, dy, g, lane, j, set, sets)] = uint8_t(w);
    return;
  }
  const int16_t word = w;
  std::memcpy(weights + dw_rows_word_weight_offset(d.panel, d.kh, groups, b, dy, g, lane, j, set, sets), &word, 2);
}

/// The weight dw_rows_put_weight wrote (s8 quads, or kMaddwd's s16).
inline int32_t dw_rows_weight(const uint8_t* weights, const KernelDesc& d, size_t b, unsigned dy, unsigned g, unsigned lane,
                              unsigned j, unsigned set, unsigned sets) {
  const unsigned groups = dw_rows_groups(d.taps);
  if (d.path != GemmPath::kMaddwd) return int8_t(weights[dw_rows_weight_offset(d.panel, d.kh, groups, b, dy, g, lane, j, set, sets)]);
  int16_t word;
  std::memcpy(&word, weights + dw_rows_word_weight_offset(d.panel, d.kh, groups, b, dy, g, lane, j, set, sets), 2);
  return word;
}

/// Output pixels per interleaved position of a kDwRows description: 2 with paired_pixels.
inline unsigned dw_rows_pixels_per_position(bool paired_pixels) { return paired_pixels ? 2u : 1u; }

/// Weight sets of a kDwRows description (dw_rows_weight_offset): 1; with paired pixels 2 (set
/// 1: the odd pixel's taps in its position's quads), or 3 where the odd pixel's window runs
/// past them (set 2: its last taps in the next position's quads; stride 2 with 3, 4, 7, 8, ...
/// taps).
inline unsigned dw_rows_weight_sets(unsigned kw, bool paired_pixels, unsigned pair_shift) {
  if (!paired_pixels) return 1;
  return kw + pair_shift <= 4 * dw_rows_groups(kw) ? 2u : 3u;
}

/// Where tap kx (0 <= kx < kw) of a paired position's odd pixel is multiplied: weight set 1 at
/// quad byte kx + shift of the position, else set 2 at byte kx - shift of the next position
/// (positions are 2 · shift columns apart). Returns (set, byte), byte = 4 · group + j.
inline std::pair<unsigned, unsigned> dw_rows_odd_tap(unsigned kw, unsigned pair_shift, unsigned kx) {
  const unsigned at = kx + pair_shift;
  if (at < 4 * dw_rows_groups(kw)) return {1u, at};
  return {2u, kx - pair_shift};
}

/// Whether a kDwRows kernel reads weight set `set`, group g (the twins and the generators
/// skip the products of the others): every group of sets 0 and 1, and the groups of set 2
/// that some tap of the odd pixel falls in.
inline bool dw_rows_set_group_read(unsigned kw, unsigned pair_shift, unsigned set, unsigned g) {
  if (set < 2) return true;
  for (unsigned kx = 0; kx < kw; ++kx) {
    const auto [s, byte] = dw_rows_odd_tap(kw, pair_shift, kx);
    if (s == 2 && byte / 4 == g) return true;
  }
  return false;
}

/// The products a kDwRows kernel takes from the quads of group g of position `pos`, counted
/// from the first of `count` pixels in flight: (weight set, pixel) pairs. Set 0 for the
/// position's own first pixel; with paired pixels set 1 for its second; with three sets set 2
/// for the second pixel of the position before, where dw_rows_set_group_read allows. Empty
/// where no pixel in flight reads the position (the one past the last, mostly).
inline std::vector<std::pair<unsigned, unsigned>> dw_rows_position_uses(const KernelDesc& d, unsigned count, unsigned pos,
                                                                       unsigned g) {
  const unsigned per = dw_rows_pixels_per_position(d.paired_pixels), sets = dw_rows_weight_sets(d.taps, d.paired_pixels, d.pair_shift);
  std::vector<std::pair<unsigned, unsigned>> uses;
  for (unsigned set = 0; set < per; ++set) {
    if (pos * per + set < count) uses.emplace_back(set, pos * per + set);
  }
  if (sets == 3 && pos > 0 && 2 * pos - 1 < count && dw_rows_set_group_read(d.taps, d.pair_shift, 2, g)) uses.emplace_back(2u, 2 * pos - 1);
  return uses;
}

/// kDwInterleave: position x (0 <= x < positions) of the interleaved row `out` (stride
/// dw_rows_position_bytes) gets, for tap group g and channel lane l of block b, the bytes
/// row[x·step + (4g + j)·dilation + c] for j = 0..3, where c is the lane's channel (b·panel
/// + dw_rows_lane_channel), sign bit flipped for s8 storage (u8 = s8 + 128); with
/// desc.path = kSdot4 (DepthwiseTraits::rows_signed_quads) the quads are s8 instead, the sign
/// bit flipped for u8 storage (s8 = u8 - 128). Lanes past
/// desc.channels read the bytes past the channels: the row needs
/// dw_rows_padded_channels - channels readable bytes of slack after its last tap.
/// desc.taps = window width, desc.channels, desc.panel, desc.storage_signed.
struct DwInterleaveArgs {
  const uint8_t* row;  ///< the padded input row: position p's channels at row + p · C
  uint8_t* out;        ///< the interleaved row
  int64_t positions;   ///< output positions
  int64_t step;        ///< bytes between consecutive positions' first taps (stride · C)
  int64_t dilation;    ///< bytes between a window's consecutive taps (dilation · C)
};

/// kDwRows: output pixel x of one row: per channel, acc = bias + Σ over window rows dy,
/// tap groups g and j = 0..3 of rows[dy][x][g][lane][j] · w[dy][g][lane][j] (u8 x s8, or s8
/// x s8 with desc.path = kSdot4; int32, wrapping), then the u8/s8 epilogue of GemmTileArgs.
/// With desc.paired_pixels the rows hold ceil(pixels / 2) positions (one more with three
/// weight sets) and pixel x reads rows[dy][x / 2] with weight set x % 2 (dw_rows_weight_offset):
/// position x / 2's quads hold the input columns 2·s·(x / 2) + 4g + j (s = desc.pair_shift,
/// the stride), so set 1 is the window s taps on (tap kx at quad byte kx + s); where that runs
/// past the quads (dw_rows_weight_sets 3) an odd pixel also reads rows[dy][x / 2 + 1] with set
/// 2 (dw_rows_odd_tap), over the groups dw_rows_set_group_read names. Stores desc.channels
/// bytes per pixel, pixels contiguous. Epilogue per block b: kEpFields x panel values in lane order at
/// b · kEpFields · panel · 4. desc.kh, desc.taps = window width, desc.channels, desc.panel,
/// desc.out (kU8 or kS8).
struct DwRowsArgs {
  const uint8_t* const* rows;  ///< desc.kh interleaved rows (kDwInterleave layout)
  uint8_t* out;                ///< the row's first output pixel
  int64_t pixels;              ///< output pixels
  const void* weights;         ///< dw_rows_put_weight's layout, 64-byte aligned
  const void* epilogue;        ///< per block, 64-byte aligned
};

/// kMaxPool / kAvgPool: tap pointers as DepthwiseArgs. Max: the largest stored value of the
/// taps; average: clamp(f32(bias + Σ x)·m, lo, hi) rounded to nearest even, + zo.
struct PoolArgs {
  const uint8_t* const* taps;  ///< tap pointers, as DepthwiseArgs
  void* out;                   ///< the first output pixel
  int64_t out_stride;          ///< bytes between output pixels
  int64_t pixels;              ///< output pixels to compute
  int64_t taps_stride;         ///< bytes between the pixels' pointer rows (0: stepping mode)
  int64_t pixel_step;          ///< bytes added to every tap pointer per pixel
  float m;                     ///< average: the multiplier of these pixels
  int32_t bias;                ///< average: -zx · taps
  int32_t zo;                  ///< average: output zero point
  float lo, hi;                ///< average: output bounds minus zo
};

/// kQAdd / kQMul / kRequantize over `blocks` groups of 8 elements. Parameters travel here,
/// not in the code, so one kernel serves every op of a kind and signedness.
///   requantize: clamp(rne(f32(a - za) * M) + zo)
///   add:        clamp(rne(f32(a - za) * M_a + f32(b - zb) * M_b) + zo)
///   mul:        clamp(rne(f32((a - za) * (b - zb)) * M) + zo)
struct ElementwiseArgs {
  const void* a;           ///< first operand's stored values
  const void* b;           ///< second operand's (add, mul)
  void* y;                 ///< result's stored values
  int64_t blocks;          ///< groups of 8 elements
  float m_a;               ///< add: M_a; mul, requantize: M
  float m_b;               ///< add: M_b
  int32_t za, zb, zo;      ///< zero points
  float lo, hi;            ///< output bounds minus zo
  int64_t tail;            ///< elements after the blocks (0-7), for backends with
                           ///< StreamTraits::masked_tail; 0 for the others (the caller
                           ///< finishes the tail with the scalar formulas)
};

/// kClamp: y[i] = min(max(x[i], lo), hi) over `n` stored 8-bit values (desc.storage_signed).
struct ClampArgs {
  const uint8_t* x;
  uint8_t* y;
  size_t n;
  int32_t lo, hi;
};

/// kLut8: y[i] = table[x[i]] for `n` bytes; the table has 256 entries (x and y may be the
/// same buffer).
struct LutArgs {
  const uint8_t* x;
  uint8_t* y;
  size_t n;
  const uint8_t* table;
};

/// kInterleavePlanes: y[p · C + c] = x[c · plane_stride + p] for pixels p < `pixels` and planes
/// c < C = desc.channels (1..4): C planes of bytes (NCHW) into pixels of C bytes (NHWC). x and
/// y do not overlap.
struct PlanesArgs {
  const uint8_t* x;      ///< plane 0's first pixel
  uint8_t* y;            ///< the first pixel's C bytes
  int64_t pixels;        ///< pixels to interleave
  int64_t plane_stride;  ///< bytes from one plane to the next
};

/// kF32Gemm: y = clamp(x · w + bias) for `rows` rows (any number; the kernel blocks them):
/// every output accumulates acc = acc + f32(x·w) in increasing k from +0 (one rounding each,
/// no FMA), then acc + bias[j] (when bias is not null), then qrt.clamp's formula
/// (v < lo ? lo : v > hi ? hi : v; NaN passes; lo = -inf and hi = +inf clamp nothing).
/// x rows are x_stride floats apart, y rows y_stride; w holds k x n_padded values (n_padded a
/// multiple of 16, padding 0) in panels of 16 columns, each panel k rows of 16 contiguous
/// floats (f32_panel_index), so a tile's weights stream sequentially; bias has n_padded values.
/// Only columns [0, n) are stored.
struct F32GemmArgs {
  const float* x;
  const float* w;
  const float* bias;
  float* y;
  int64_t rows, k, n, n_padded;
  int64_t x_stride, y_stride;
  float lo, hi;
};

/// The index of weight (kk, j) in kF32Gemm's panel layout of a k-row matrix.
inline size_t f32_panel_index(int64_t kk, int64_t j, int64_t k) { return size_t((j / 16 * k + kk) * 16 + j % 16); }

/// kWoGemm: y[r][j] for rows r < rows and columns j < n of a weight-only matmul whose
/// weights stay packed. Weight (kk, j) is stored value q = byte kk·w_stride + j of w (8-bit)
/// or nibble j of row kk (4-bit: byte j/2, the low nibble for even j), sign- or zero-extended
/// by desc.storage_signed. Block b = kk / block has compute scale scales[b·p_stride + j] and
/// zero point zps[b·p_stride + j] (int16; zps is read only when desc.weight_zp). The kernel
/// computes exactly the reference's hybrid matmul: w = f32(q − zp) · scale, acc = +0, then
/// acc = acc + f32(x[r][kk]·w) in increasing kk (one rounding each, no FMA), then + bias[j]
/// (bias not null) and the clamp to [lo, hi]. Columns may be split between calls at any
/// multiple of 16 (w, scales, zps, bias and y then point at the call's first column).
struct WoGemmArgs {
  const float* x;
  const uint8_t* w;
  const float* scales;
  const int16_t* zps;
  const float* bias;
  float* y;
  int64_t rows, k, n;
  int64_t x_stride, w_stride, p_stride, y_stride;  ///< floats, bytes, parameters, floats
  int64_t block;                                   ///< k values per block (k: per channel)
  float lo, hi;
};

/// kDynGemm's weight layout: strips of kDynStripCols columns; each strip holds one record per
/// block of k (the weights' blocks along K, each padded with zero weights to block_padded, a
/// multiple of 8), records in block order, strips one after another. A record is
/// block_padded / 8 groups of 8 k values, then the block's 64 compute scales, then (with
/// desc.weight_zp) 64 u8 zero points z' = zp + offset (DynRecordLayout). The scales are f32, or
/// with desc.scale_f16 f16: positive normal f16 values, each exactly its f32 compute scale
/// (dyn_record_scale). The stored weight q enters as u = q + offset, offset being 2^(bits−1)
/// for signed storage and 0 for unsigned, so u ∈ [0, 2^bits) and u − z' = q − zp; without
/// desc.weight_zp every column's z' is desc.zero_point (one zero point for the whole weight:
/// 0, or u4's 8 as ONNX's MatMulNBits defaults it). A verified type's zero points lie in its
/// storage range, so z' ∈ [0, 2^bits) fits a byte.
/// A group is 256 bytes (4-bit) or 512 (8-bit); byte c·4 + i (c < 64, i < 4) holds, for
/// column c: 4-bit: u(8g + i) in the low nibble and u(8g + 4 + i) in the high one; 8-bit: byte
/// c·4 + i is u(8g + i) and byte 256 + c·4 + i is u(8g + 4 + i). Pad columns are zero.
constexpr int64_t kDynStripCols = 64;

/// Where a kDynGemm record keeps its parameters (see kDynStripCols), in bytes from its start.
struct DynRecordLayout {
  int64_t scales = 0;  ///< the 64 scales (after the groups)
  int64_t zps = 0;     ///< the 64 z' bytes (after the scales; meaningful with desc.weight_zp)
  int64_t bytes = 0;   ///< the whole record
};

/// The layout of a kDynGemm record of `block_padded` k values of `bits`-bit weights, with f16
/// or f32 scales and with or without zero points.
inline DynRecordLayout dyn_record_layout(int64_t block_padded, unsigned bits, bool scale_f16, bool zps) {
  DynRecordLayout l;
  l.scales = block_padded / 8 * (bits == 4 ? 256 : 512);
  l.zps = l.scales + kDynStripCols * (scale_f16 ? 2 : 4);
  l.bytes = l.zps + (zps ? kDynStripCols : 0);
  return l;
}

/// The layout of the records kernel `d` reads.
inline DynRecordLayout dyn_record_layout(int64_t block_padded, const KernelDesc& d) {
  return dyn_record_layout(block_padded, d.weight_bits, d.scale_f16, d.weight_zp);
}

/// The f32 value of a positive normal f16 `h`: the exponent rebiased (15 → 127) and the
/// mantissa widened, which is exact — the only f16 values a record holds (kDynStripCols).
inline float f32_of_normal_f16(uint16_t h) {
  const uint32_t bits = (uint32_t(h) << 13) + 0x38000000u;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Column c's scale in the parameters of a record (at its DynRecordLayout::scales).
inline float dyn_record_scale(const uint8_t* scales, int64_t c, bool scale_f16) {
  if (scale_f16) {
    uint16_t h;
    std::memcpy(&h, scales + c * 2, 2);
    return f32_of_normal_f16(h);
  }
  float s;
  std::memcpy(&s, scales + c * 4, 4);
  return s;
}

/// Column c's z' in a record of kernel `d` (zps: the record's DynRecordLayout::zps).
inline int32_t dyn_record_zp(const uint8_t* zps, int64_t c, const KernelDesc& d) {
  return d.weight_zp ? int32_t(zps[c]) : d.zero_point;
}

/// kDynGemm: y[r][j] for rows r < rows and columns j < n of a matmul with activations =
/// "dynamic_i8". Row r's activations come quantized (numerics::quantize_block_i8): block b's i8
/// values at xq[r·x_stride + b·block_padded] (zero past the block's end), its scale
/// xd[r·blocks + b] and Σ q xsum[r·blocks + b]. w points at the first strip's records. Per row
/// and column: acc = +0; per block in order t = Σ_k q·u − z'·Σ q (exact int32) and
/// acc = acc + f32(t) · f32(xd · scale) (numerics::dynamic_i8_block_term); then + bias[j]
/// (bias not null) and the clamp to [lo, hi]. Columns may be split between calls at strips.
struct DynGemmArgs {
  const int8_t* xq;
  const float* xd;
  const int32_t* xsum;
  const uint8_t* w;
  const float* bias;
  float* y;
  int64_t rows, n, blocks, block_padded;
  int64_t x_stride, y_stride;  ///< bytes of xq per row, floats of y per row
  float lo, hi;
};

/// kRequantQ31: TFLite's requantization (numerics::requantize_tflite) of `rows` rows of
/// `channels` int32 accumulators, rows acc_stride values apart, to 8-bit stored values
/// (desc.storage_signed), rows y_stride bytes apart. Channel j of every row uses entry j of
/// the per-channel arrays: the Q31 multiplier (in [0, 2^31)) and TFLite's shift (> 0: left;
/// in [-31, 30] with desc.single_rounding), then clamp(v, lo - zo, hi - zo) + zo with
/// lo_zo[j] = lo - zo, hi_zo[j] = hi - zo. Double rounding: x·2^left wraps in 32 bits, then
/// gemmlowp's SaturatingRoundingDoublingHighMul and RoundingDivideByPOT; single rounding:
/// (x·M + 2^(30 - shift)) >> (31 - shift) in 64 bits, saturated to int32.
struct RequantQ31Args {
  const int32_t* acc;
  void* y;
  int64_t rows, channels;
  int64_t acc_stride, y_stride;  ///< int32 values of acc per row, bytes of y per row
  const int32_t* multiplier;
  const int32_t* shift;
  const int32_t* lo_zo;
  const int32_t* hi_zo;
  const int32_t* zo;
};

/// kRequantF64: ONNX's requantization (numerics::requantize_onnx) of the accumulators laid out
/// as in RequantQ31Args: v = round_half_even(f64(acc) · f64(multiplier[j])) (one f64 rounding
/// of the product), then clamp(v, lo - zo, hi - zo) + zo. Multipliers must be finite.
struct RequantF64Args {
  const int32_t* acc;
  void* y;
  int64_t rows, channels;
  int64_t acc_stride, y_stride;  ///< int32 values of acc per row, bytes of y per row
  const float* multiplier;
  const int32_t* lo_zo;
  const int32_t* hi_zo;
  const int32_t* zo;
};

/// Stored weight (kk, j) of kWoGemm's layout (see WoGemmArgs).
inline int32_t wo_weight_at(const WoGemmArgs& a, int64_t kk, int64_t j, unsigned bits, bool is_signed) {
  const uint8_t* row = a.w + kk * a.w_stride;
  if (bits == 8) return is_signed ? int32_t(int8_t(row[j])) : int32_t(row[j]);
  const int32_t nib = (row[j / 2] >> ((j & 1) * 4)) & 15;
  return is_signed && nib >= 8 ? nib - 16 : nib;
}

/// qrt.clamp's formula on an f32 (bounds already f32): NaN passes, -0 stays -0.
inline float clamp_f32(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/// kF32Dwconv: one output row of an NHWC f32 depthwise convolution, `c` channels per pixel
/// (pixels contiguous, c floats apart, in the input rows and in y): per output pixel p and
/// channel ch, acc = +0, then acc = acc + f32(x·w) over the window's taps in (ky, kx) order,
/// skipping taps outside the input (padding: a null row, or a column outside [0, iw)), then
/// + bias[ch] (bias not null) and the clamp of F32GemmArgs. Skipping is exact: a padding tap
/// would add 0·w = ±0 to a sum that is never -0 (filters are finite). Tap (ky, kx) of pixel p
/// reads input column p·stride - pad_left + kx·dilation of rows[ky]; w is kh x kw x c.
struct F32DwArgs {
  const float* const* rows;  ///< kh input rows (iw pixels each), null for padding rows
  const float* w;            ///< taps x c, tap-major
  const float* bias;         ///< c values or null
  float* y;                  ///< ow output pixels
  int64_t c, ow, iw, kh, kw, stride, dilation, pad_left;
  float lo, hi;
};

/// Calls f(x, w) for the taps of kF32Dwconv output pixel p that lie inside the input, in
/// (ky, kx) order: x points at the tap's first channel in its input row, w at its weights.
template <typename F>
inline void for_each_f32_dw_tap(const F32DwArgs& a, int64_t p, F&& f) {
  for (int64_t ky = 0; ky < a.kh; ++ky) {
    const float* row = a.rows[ky];
    if (!row) continue;
    for (int64_t kx = 0; kx < a.kw; ++kx) {
      const int64_t col = p * a.stride - a.pad_left + kx * a.dilation;
      if (col >= 0 && col < a.iw) f(row + col * a.c, a.w + (ky * a.kw + kx) * a.c);
    }
  }
}

/// The interior output pixels [*first, *last) of a kF32Dwconv row: those whose window columns
/// all lie inside the input (kernels run them without column checks).
inline void f32_dw_interior(const F32DwArgs& a, int64_t* first, int64_t* last) {
  const int64_t span = (a.kw - 1) * a.dilation, end = a.iw - 1 - span + a.pad_left;
  *first = std::min(a.ow, (a.pad_left + a.stride - 1) / a.stride);
  *last = std::max(*first, end < 0 ? *first : std::min(a.ow, end / a.stride + 1));
}

/// The description of the kF32Gemm micro-kernel of `generator` at `isa` (no other parameters).
inline KernelDesc f32_gemm_desc(Isa isa, Generator generator) {
  KernelDesc d;
  d.op = KernelOp::kF32Gemm;
  d.isa = isa;
  d.generator = generator;
  return d;
}

/// The description of the kF32Dwconv micro-kernel of `generator` at `isa`.
inline KernelDesc f32_dwconv_desc(Isa isa, Generator generator) {
  KernelDesc d = f32_gemm_desc(isa, generator);
  d.op = KernelOp::kF32Dwconv;
  return d;
}

}  // namespace qrt::jit
