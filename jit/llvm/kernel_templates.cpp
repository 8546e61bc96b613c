// qrt — the LLVM backend's kernel templates. This file is never compiled into the library:
// clang++-19 turns it (with jit/ref/twins.cpp and ir/numerics.cpp) into LLVM bitcode at build
// time, embedded in the library. At run time the backend (llvm_kernels.cpp) links a kernel
// description into that bitcode as a constant, so inlining folds every desc-> field (tile
// shape, panel, taps, channels, signedness, output kind), and optimizes the result for the
// level's CPU: the loop vectorizer picks the vector width. One source serves every integer
// kernel kind on every architecture LLVM targets.
//
// Numerics: every template computes what its scalar twin computes, in the same order (int32
// sums wrap, f32 sums in increasing k, no contraction: clang++ runs with -ffp-contract=off).
// Kinds whose twin already has its loops in a vectorizable order call the twin itself; the
// GEMM tiles reorder the twins' loops (columns innermost) without changing any sum's order.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ir/numerics_dynamic.h"
#include "jit/llvm/kernel_template_abi.h"
#include "jit/ref/twin_arith.h"
#include "jit/ref/twins.h"

using namespace qrt::jit;
using namespace qrt::jit::twin;

namespace {

// The largest tile the LLVM backend's traits ask for (its why_not checks descriptions).
constexpr int kMaxRows = 8;

// Clang's generic vectors (LLVM legalizes them for every target: two ymm or four xmm stand in
// for a 64-byte vector where zmm is missing).
typedef int8_t s8x16 __attribute__((vector_size(16)));
typedef uint8_t u8x4 __attribute__((vector_size(4)));
typedef uint8_t u8x16 __attribute__((vector_size(16)));
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef uint8_t u8x64 __attribute__((vector_size(64)));
typedef int8_t s8x64 __attribute__((vector_size(64)));
typedef int16_t i16x32 __attribute__((vector_size(64)));
typedef int16_t i16x64 __attribute__((vector_size(128)));
typedef int32_t i32x16 __attribute__((vector_size(64)));
typedef uint32_t u32x16 __attribute__((vector_size(64)));
typedef int32_t i32x32 __attribute__((vector_size(128)));
typedef uint32_t u32x32 __attribute__((vector_size(128)));
typedef float f32x16 __attribute__((vector_size(64)));

template <typename V>
V load_vec(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Wrapping int32 lanes (vpaddd), whatever the compiler assumes of signed vector overflow.
i32x16 wrap_add16(i32x16 a, i32x16 b) { return i32x16(u32x16(a) + u32x16(b)); }

// The epilogue of 16 accumulators (store_epilogue lane by lane, vectorized): s32 as is; f32:
// f32(acc)·m; 8-bit: clamp(f32(acc)·m, lo, hi) (NaN becomes lo, as vmaxps does), rounded to
// nearest even, + zo, saturated to the output type. The first `count` lanes go to dst.
void store_epilogue16(i32x16 acc, OutKind out, f32x16 m, f32x16 lo, f32x16 hi, i32x16 zo, uint8_t* dst, unsigned count) {
  if (out == OutKind::kS32) {
    std::memcpy(dst, &acc, size_t(count) * 4);
    return;
  }
  f32x16 t = __builtin_convertvector(acc, f32x16) * m;
  if (out == OutKind::kF32) {
    std::memcpy(dst, &t, size_t(count) * 4);
    return;
  }
  t = t > lo ? t : lo;
  t = t < hi ? t : hi;
  // lo and hi are integers of the output range minus zo, so the rounded value converts exactly.
  i32x16 q = wrap_add16(__builtin_convertvector(__builtin_elementwise_roundeven(t), i32x16), zo);
  const i32x16 qmin = out == OutKind::kS8 ? i32x16{} - 128 : i32x16{};
  const i32x16 qmax = out == OutKind::kS8 ? i32x16{} + 127 : i32x16{} + 255;
  q = q > qmin ? q : qmin;
  q = q < qmax ? q : qmax;
  const u8x16 bytes = __builtin_convertvector(q, u8x16);  // two's complement bytes for s8
  std::memcpy(dst, &bytes, count);
}

// One kGemm tile in the quad layout (GemmPath::kDot4: per k step, 16 columns of four s8
// weights). Each row keeps 32 int32 pair sums (two per column, i16 x i16 products summed in
// pairs: the pmaddwd shape) and folds them into 16 column sums after the last k step; int32
// sums wrap, so the order is free and the result is the twin's.
template <int kRows>
void gemm_quads(const GemmTileArgs* args, const KernelDesc* d) {
  const auto* a = static_cast<const uint8_t*>(args->a);
  const auto* w = static_cast<const int8_t*>(args->w);
  i32x32 acc[kRows] = {};
  for (int64_t s = 0; s < args->k_steps; ++s) {
    const i16x64 wv = __builtin_convertvector(load_vec<s8x64>(w + s * 64), i16x64);
    const i16x32 w_even = __builtin_shufflevector(wv, wv, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32,
                                                  34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62);
    const i16x32 w_odd = __builtin_shufflevector(wv, wv, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33,
                                                 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63);
    const i32x32 we = __builtin_convertvector(w_even, i32x32), wo = __builtin_convertvector(w_odd, i32x32);
    for (int r = 0; r < kRows; ++r) {
      const uint8_t* q = a + r * args->a_stride + s * 4;
      // Pair sums: column j's even slot gets a0·w0 + a1·w1, its odd slot a2·w2 + a3·w3.
      const i32x4 quad = __builtin_convertvector(load_vec<u8x4>(q), i32x4);
      const i32x32 ae = __builtin_shufflevector(quad, quad, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2,
                                                0, 2, 0, 2, 0, 2, 0, 2, 0, 2);
      const i32x32 ao = __builtin_shufflevector(quad, quad, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3,
                                                1, 3, 1, 3, 1, 3, 1, 3, 1, 3);
      acc[r] = i32x32(u32x32(acc[r]) + u32x32(ae * we + ao * wo));
    }
  }
  const auto* ep = static_cast<const uint8_t*>(args->epilogue);
  const int64_t panel = d->panel;  // 16: one vector of each field
  const i32x16 bias = load_vec<i32x16>(ep + kEpBias * panel * 4), zw = load_vec<i32x16>(ep + kEpWeightZeroPoint * panel * 4);
  const f32x16 m = load_vec<f32x16>(ep + kEpMultiplier * panel * 4), lo = load_vec<f32x16>(ep + kEpLowerBound * panel * 4),
               hi = load_vec<f32x16>(ep + kEpUpperBound * panel * 4);
  const i32x16 zo = load_vec<i32x16>(ep + kEpOutputZeroPoint * panel * 4);
  for (int r = 0; r < kRows; ++r) {
    const i32x16 even = __builtin_shufflevector(acc[r], acc[r], 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const i32x16 odd = __builtin_shufflevector(acc[r], acc[r], 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    i32x16 v = wrap_add16(wrap_add16(even, odd), bias);
    if (d->row_correction) v = i32x16(u32x16(v) - u32x16(zw) * uint32_t(args->row_sums[r]));
    uint8_t* row = static_cast<uint8_t*>(args->c) + r * args->c_stride;
    if (d->q31) {
      // TFLite's requantization (KernelDesc::q31), lane by lane as the twin computes it.
      int32_t lanes[16];
      std::memcpy(lanes, &v, sizeof lanes);
      for (unsigned j = 0; j < d->nr; ++j) store_q31_epilogue(lanes[j], d->out, ep, size_t(panel), j, row + j);
      continue;
    }
    store_epilogue16(v, d->out, m, lo, hi, zo, row, d->nr);
  }
}

// kDepthwise, blocks of 16 channels: accumulators in lane order (the layout's: weights and
// epilogue fields are per lane; lane l reads channel depthwise_lane_channel(16, l), i.e. the
// channel groups 4..7 and 8..11 swapped, an involution). Taps in pairs as packed (tap 2p
// even, 2p + 1 odd); sums wrap in int32 in tap order, as twin_depthwise's. A partial last
// block runs the twin's lane loop.
void depthwise_block16(const DepthwiseArgs* args, const KernelDesc* d, int64_t p, uint32_t b, uint8_t* out) {
  const unsigned taps = d->taps, pairs = taps / 2;
  const auto* ep = static_cast<const uint8_t*>(args->epilogue) + size_t(b) * kEpFields * 16 * 4;
  i32x16 acc = load_vec<i32x16>(ep + kEpBias * 64);
  const auto* w16 = static_cast<const uint8_t*>(args->weights) + 2 * depthwise_weight_index(16, pairs, b, 0, 0);
  for (unsigned pr = 0; pr < pairs; ++pr) {
    const i16x32 wv = load_vec<i16x32>(w16 + size_t(pr) * 64);
    const i32x16 w0 = __builtin_convertvector(
        __builtin_shufflevector(wv, wv, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), i32x16);
    const i32x16 w1 = __builtin_convertvector(
        __builtin_shufflevector(wv, wv, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), i32x16);
    i32x16 x[2];
    for (unsigned h = 0; h < 2; ++h) {
      const uint8_t* src = tap(args->taps, args->taps_stride, args->pixel_step, p, 2 * pr + h) + size_t(b) * 16;
      const u8x16 raw = load_vec<u8x16>(src);
      const u8x16 lanes = __builtin_shufflevector(raw, raw, 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15);
      x[h] = d->storage_signed ? __builtin_convertvector(s8x16(lanes), i32x16) : __builtin_convertvector(lanes, i32x16);
    }
    acc = wrap_add16(wrap_add16(acc, x[0] * w0), x[1] * w1);
  }
  const unsigned ob = out_bytes(d->out);
  alignas(64) uint8_t lanes_out[64];
  store_epilogue16(acc, d->out, load_vec<f32x16>(ep + kEpMultiplier * 64), load_vec<f32x16>(ep + kEpLowerBound * 64),
                   load_vec<f32x16>(ep + kEpUpperBound * 64), load_vec<i32x16>(ep + kEpOutputZeroPoint * 64), lanes_out, 16);
  // Back to channel order: lane groups 1 and 2 (of four lanes) swap places.
  uint8_t* dst = out + size_t(b) * 16 * ob;
  const unsigned g = 4 * ob;
  std::memcpy(dst, lanes_out, g);
  std::memcpy(dst + g, lanes_out + 2 * g, g);
  std::memcpy(dst + 2 * g, lanes_out + g, g);
  std::memcpy(dst + 3 * g, lanes_out + 3 * g, g);
}

void depthwise16(const DepthwiseArgs* args, const KernelDesc* d) {
  const uint32_t full = d->channels / 16;
  for (int64_t p = 0; p < args->pixels; ++p) {
    auto* out = static_cast<uint8_t*>(args->out) + p * args->out_stride;
    for (uint32_t b = 0; b < full; ++b) depthwise_block16(args, d, p, b, out);
  }
  if (d->channels % 16 == 0) return;
  // The partial block: the twin on these channels only (a description of the last block).
  for (int64_t p = 0; p < args->pixels; ++p) {
    uint8_t* out = static_cast<uint8_t*>(args->out) + p * args->out_stride;
    const unsigned ob = out_bytes(d->out);
    const auto* ep = static_cast<const uint8_t*>(args->epilogue) + size_t(full) * kEpFields * 16 * 4;
    const auto* w16 = static_cast<const uint8_t*>(args->weights);
    const unsigned pairs = d->taps / 2;
    for (unsigned lane = 0; lane < 16; ++lane) {
      const uint32_t ch = full * 16 + depthwise_lane_channel(16, lane);
      if (ch >= d->channels) continue;
      int32_t acc = load_i32(ep, kEpBias * 16 + lane);
      for (unsigned t = 0; t < d->taps; ++t) {
        int16_t wv;
        std::memcpy(&wv, w16 + 2 * depthwise_weight_index(16, pairs, full, lane, t), 2);
        const int32_t x = stored(tap(args->taps, args->taps_stride, args->pixel_step, p, t) + ch, d->storage_signed);
        acc = wrap_add(acc, x * int32_t(wv));
      }
      store_epilogue(acc, d->out, load_f32(ep, kEpMultiplier * 16 + lane), load_f32(ep, kEpLowerBound * 16 + lane),
                     load_f32(ep, kEpUpperBound * 16 + lane), load_i32(ep, kEpOutputZeroPoint * 16 + lane), out + size_t(ch) * ob);
    }
  }
}

typedef float f32x16 __attribute__((vector_size(64)));

f32x16 load_f32x16(const float* p) {
  f32x16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Stores lane j of v at y[j] for j < width after bias (when given) and the clamp, each lane
// as twin_f32_gemm / twin_f32_dwconv finish an output.
void finish_f32x16(f32x16 v, const float* bias, float lo, float hi, float* y, int64_t width) {
  float lanes[16];
  std::memcpy(lanes, &v, sizeof v);
  for (int64_t j = 0; j < width; ++j) y[j] = clamp_f32(bias ? lanes[j] + bias[j] : lanes[j], lo, hi);
}

// kF32Gemm: kRows rows by one 16-column panel at a time, in generic 16-lane vectors (a zmm, two
// ymm or four xmm); each output still sums acc + f32(x·w) in increasing k from +0 (clang++
// splats the scalar x; no contraction), then + bias and the clamp, exactly as twin_f32_gemm.
template <int kRows>
void f32_gemm_rows(const F32GemmArgs* a, int64_t row0) {
  const int64_t k = a->k, n = a->n;
  for (int64_t j0 = 0; j0 < n; j0 += 16) {
    f32x16 acc[kRows];
    for (int r = 0; r < kRows; ++r) acc[r] = f32x16{};
    const float* panel = a->w + j0 * k;
    for (int64_t kk = 0; kk < k; ++kk) {
      const f32x16 wv = load_f32x16(panel + kk * 16);
      for (int r = 0; r < kRows; ++r) {
        const f32x16 p = a->x[(row0 + r) * a->x_stride + kk] * wv;
        acc[r] = acc[r] + p;
      }
    }
    const int64_t width = n - j0 < 16 ? n - j0 : 16;
    for (int r = 0; r < kRows; ++r) {
      finish_f32x16(acc[r], a->bias ? a->bias + j0 : nullptr, a->lo, a->hi, a->y + (row0 + r) * a->y_stride + j0, width);
    }
  }
}

// Rows of at most kRows at a time (a tile for the level's registers), the rest one by one.
template <int kRows>
void f32_gemm_blocks(const F32GemmArgs* a) {
  int64_t r = 0;
  for (; r + kRows <= a->rows; r += kRows) f32_gemm_rows<kRows>(a, r);
  for (; r < a->rows; ++r) f32_gemm_rows<1>(a, r);
}

// kWoGemm: kRows rows by 16 columns in generic vectors; the weights of a column block are
// dequantized once per k into a vector (the description's bits, signedness and zero points are
// constants here), then acc = acc + f32(x·w) in increasing k from +0, as twin_wo_gemm.
template <int kRows>
void wo_gemm_rows(const WoGemmArgs* a, const KernelDesc* d, int64_t row0) {
  for (int64_t j0 = 0; j0 < a->n; j0 += 16) {
    const int64_t cols = a->n - j0 < 16 ? a->n - j0 : 16;
    f32x16 acc[kRows];
    for (int r = 0; r < kRows; ++r) acc[r] = f32x16{};
    for (int64_t b0 = 0; b0 < a->k; b0 += a->block) {
      const int64_t p = b0 / a->block * a->p_stride + j0;
      float scale[16];
      int32_t zp[16];
      for (int c = 0; c < 16; ++c) {
        scale[c] = c < cols ? a->scales[p + c] : 0.0f;
        zp[c] = c < cols && d->weight_zp ? a->zps[p + c] : 0;
      }
      const int64_t end = b0 + a->block < a->k ? b0 + a->block : a->k;
      for (int64_t kk = b0; kk < end; ++kk) {
        float wl[16];
        for (int c = 0; c < 16; ++c) {
          const int32_t q = c < cols ? wo_weight_at(*a, kk, j0 + c, d->weight_bits, d->storage_signed) : 0;
          wl[c] = round_weight(float(q - zp[c]) * scale[c], d->weight_round);
        }
        f32x16 w;
        std::memcpy(&w, wl, sizeof w);
        for (int r = 0; r < kRows; ++r) {
          const f32x16 prod = a->x[(row0 + r) * a->x_stride + kk] * w;
          acc[r] = acc[r] + prod;
        }
      }
    }
    for (int r = 0; r < kRows; ++r) {
      finish_f32x16(acc[r], a->bias ? a->bias + j0 : nullptr, a->lo, a->hi, a->y + (row0 + r) * a->y_stride + j0, cols);
    }
  }
}

// kF32Dwconv: 16 channels per generic vector, taps in (ky, kx) order as twin_f32_dwconv; the
// channels past the last whole block run on the twin's loop.
void f32_dwconv_blocks(const F32DwArgs* a) {
  const int64_t c = a->c, blocks = c / 16 * 16;
  for (int64_t p = 0; p < a->ow; ++p) {
    for (int64_t ch0 = 0; ch0 < blocks; ch0 += 16) {
      f32x16 acc{};
      for_each_f32_dw_tap(*a, p, [&](const float* x, const float* w) {
        const f32x16 prod = load_f32x16(x + ch0) * load_f32x16(w + ch0);
        acc = acc + prod;
      });
      finish_f32x16(acc, a->bias ? a->bias + ch0 : nullptr, a->lo, a->hi, a->y + p * c + ch0, 16);
    }
    for (int64_t ch = blocks; ch < c; ++ch) {
      float acc = 0.0f;
      for_each_f32_dw_tap(*a, p, [&](const float* x, const float* w) {
        const float prod = x[ch] * w[ch];
        acc = acc + prod;
      });
      if (a->bias) acc = acc + a->bias[ch];
      a->y[p * c + ch] = clamp_f32(acc, a->lo, a->hi);
    }
  }
}

}  // namespace

extern "C" {

/// kKernelTemplateAbi as clang++ lays the structs out (llvm_kernels.cpp compares it).
extern const decltype(qrt::jit::llvm_ir::kKernelTemplateAbi) qrt_kernel_template_abi;
const decltype(qrt::jit::llvm_ir::kKernelTemplateAbi) qrt_kernel_template_abi = qrt::jit::llvm_ir::kKernelTemplateAbi;

void qrt_kt_convert(const ConvertArgs* args, const KernelDesc* d) { twin_convert(args, d); }

void qrt_kt_gemm(const GemmTileArgs* args, const KernelDesc* d) {
  switch (d->mr) {
    case 1: return gemm_quads<1>(args, d);
    case 2: return gemm_quads<2>(args, d);
    case 3: return gemm_quads<3>(args, d);
    case 4: return gemm_quads<4>(args, d);
    case 5: return gemm_quads<5>(args, d);
    case 6: return gemm_quads<6>(args, d);
    case 7: return gemm_quads<7>(args, d);
    case kMaxRows: return gemm_quads<kMaxRows>(args, d);
    default: return;  // refused by the backend's why_not
  }
}

void qrt_kt_pack_rows(const PackRowsArgs* args, const KernelDesc* d) { twin_pack_rows(args, d); }

void qrt_kt_depthwise(const DepthwiseArgs* args, const KernelDesc* d) {
  if (d->panel == 16) return depthwise16(args, d);
  twin_depthwise(args, d);  // other block widths (not asked for by the backend's traits)
}

void qrt_kt_pool(const PoolArgs* args, const KernelDesc* d) { twin_pool(args, d); }

void qrt_kt_elementwise(const ElementwiseArgs* args, const KernelDesc* d) { twin_elementwise(args, d); }

void qrt_kt_clamp(const ClampArgs* args, const KernelDesc* d) { twin_clamp(args, d); }

void qrt_kt_lut8(const LutArgs* args, const KernelDesc* d) { twin_lut8(args, d); }
void qrt_kt_interleave_planes(const PlanesArgs* args, const KernelDesc* d) { twin_interleave_planes(args, d); }

void qrt_kt_requant_q31(const RequantQ31Args* args, const KernelDesc* d) { twin_requant_q31(args, d); }

void qrt_kt_requant_f64(const RequantF64Args* args, const KernelDesc* d) { twin_requant_f64(args, d); }

void qrt_kt_f32_dwconv(const F32DwArgs* args, const KernelDesc*) { f32_dwconv_blocks(args); }

void qrt_kt_f32_gemm(const F32GemmArgs* args, const KernelDesc* d) {
  // d->isa is a constant here: one tile height per level (accumulators + a weight vector +
  // a broadcast within the level's registers: 12 zmm, 6 x 2 ymm, 2 x 4 xmm or q registers).
  switch (d->isa) {
    case Isa::kAvx512Vnni: return f32_gemm_blocks<12>(args);
    case Isa::kAvx2:
    case Isa::kAvx2Vnni: return f32_gemm_blocks<6>(args);
    default: return f32_gemm_blocks<2>(args);
  }
}

// kDynGemm: per strip, row and block the 64 columns' exact integer sums with the columns
// innermost (the loop the vectorizer widens), then twin_dyn_gemm's block terms in block order.
void qrt_kt_dyn_gemm(const DynGemmArgs* a, const KernelDesc* d) {
  const int64_t group_bytes = d->weight_bits == 4 ? 256 : 512;
  const DynRecordLayout layout = dyn_record_layout(a->block_padded, *d);
  const int64_t record = layout.bytes;
  for (int64_t j0 = 0; j0 < a->n; j0 += kDynStripCols) {
    const int64_t cols = a->n - j0 < kDynStripCols ? a->n - j0 : kDynStripCols;
    for (int64_t r = 0; r < a->rows; ++r) {
      float acc[kDynStripCols];
      for (int c = 0; c < kDynStripCols; ++c) acc[c] = 0.0f;
      for (int64_t b = 0; b < a->blocks; ++b) {
        const uint8_t* rec = a->w + (j0 / kDynStripCols * a->blocks + b) * record;
        const int8_t* q = a->xq + r * a->x_stride + b * a->block_padded;
        int32_t t[kDynStripCols];
        for (int c = 0; c < kDynStripCols; ++c) t[c] = 0;
        for (int64_t g = 0; g < a->block_padded / 8; ++g) {
          const uint8_t* gp = rec + g * group_bytes;
          for (int i = 0; i < 8; ++i) {
            const int32_t qv = q[g * 8 + i];
            for (int c = 0; c < kDynStripCols; ++c) {
              const int32_t u = d->weight_bits == 4 ? (gp[c * 4 + i % 4] >> (i / 4 * 4)) & 15 : gp[i / 4 * 256 + c * 4 + i % 4];
              t[c] += qv * u;
            }
          }
        }
        const int32_t xsum = a->xsum[r * a->blocks + b];
        const float xd = a->xd[r * a->blocks + b];
        for (int c = 0; c < kDynStripCols; ++c) {
          const float scale = dyn_record_scale(rec + layout.scales, c, d->scale_f16);
          const int32_t zp = dyn_record_zp(rec + layout.zps, c, *d);
          acc[c] = acc[c] + qrt::numerics::dynamic_i8_block_term(t[c] - zp * xsum, xd, scale);
        }
      }
      for (int64_t c = 0; c < cols; ++c) {
        float v = acc[c];
        if (a->bias) v = v + a->bias[j0 + c];
        a->y[r * a->y_stride + j0 + c] = clamp_f32(v, a->lo, a->hi);
      }
    }
  }
}

void qrt_kt_wo_gemm(const WoGemmArgs* args, const KernelDesc* d) {
  int64_t r = 0;
  for (; r + 4 <= args->rows; r += 4) wo_gemm_rows<4>(args, d, r);
  for (; r < args->rows; ++r) wo_gemm_rows<1>(args, d, r);
}

}  // extern "C"
