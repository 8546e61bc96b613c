// qrt — the scalar twins (see twins.h). Each follows its kernel's arithmetic step by step:
// wrapping int32 sums (the operator layer proves the true sums fit), f32(acc) rounded to
// nearest even, one rounding per multiply and add, clamping before rounding (the bounds are
// integers, so it equals clamping after), round half to even, then the zero point, then a
// saturating narrowing to 8 bits (a no-op inside the bounds, as the vector packs are).
#include "jit/ref/twins.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ir/numerics.h"
#include "ir/numerics_dynamic.h"
#include "jit/ref/twin_arith.h"

namespace qrt::jit {

using namespace twin;

void twin_convert(const ConvertArgs* args, const KernelDesc* d) {
  const auto* in = static_cast<const uint8_t*>(args->in);
  auto* out = static_cast<uint8_t*>(args->out);
  for (size_t i = 0; i < args->n; ++i) {
    if (d->op == KernelOp::kQuantize) {
      float x;
      std::memcpy(&x, in + 4 * i, 4);
      // quantize_f32 clamps to [qmin, qmax]; narrowing then only matters for bounds outside
      // the storage type, where the kernel's packs saturate.
      const int64_t q = numerics::quantize_f32(x, d->scale, d->zero_point, d->qmin, d->qmax);
      out[i] = narrow(int32_t(std::clamp<int64_t>(q, INT32_MIN, INT32_MAX)), d->storage_signed);
    } else {
      const float x = numerics::dequantize_f32(stored(in + i, d->storage_signed), d->zero_point, d->scale);
      std::memcpy(out + 4 * i, &x, 4);
    }
  }
}

// (The shift is left - right.)
void store_q31_epilogue(int32_t acc, OutKind out, const void* ep, size_t width, size_t lane, uint8_t* dst) {
  auto field = [&](GemmEpilogueField f) { return load_i32(ep, size_t(f) * width + lane); };
  const numerics::QuantizedMultiplier m{field(kEpMultiplier), field(kEpQ31LeftShift) - field(kEpQ31RightShift)};
  const int32_t v = std::clamp(numerics::multiply_by_quantized_multiplier(acc, m, false), field(kEpLowerBound),
                               field(kEpUpperBound));
  *dst = narrow(v + field(kEpOutputZeroPoint), out == OutKind::kS8);
}

void twin_gemm(const GemmTileArgs* args, const KernelDesc* d) {
  // The packed layout (gemm_pack.cpp): per k step, per column of the panel, `group`
  // consecutive k values as s8 (gemm_path_k_group). The widened path has s16 pairs against
  // activations zero-extended to u16; sdot4 has s8 activations (a' - 128); the others u8.
  const bool u16 = d->path == GemmPath::kMaddwd, s8 = d->path == GemmPath::kSdot4;
  const int64_t group = gemm_path_k_group(d->path), panel = d->panel;
  const auto* a = static_cast<const uint8_t*>(args->a);
  const auto* w = static_cast<const int8_t*>(args->w);
  const void* ep = args->epilogue;
  // Window tiles: k value k of a row lies in tap k / tap_k, at tap_offsets[tap] + k % tap_k.
  const int64_t tap_k = d->taps ? args->tap_steps * group : 0;
  const int64_t a_bytes = u16 ? 2 : 1;
  auto at = [&](int64_t k) { return tap_k ? args->tap_offsets[k / tap_k] + (k % tap_k) * a_bytes : k * a_bytes; };
  for (unsigned r = 0; r < d->mr; ++r) {
    const uint8_t* row = a + int64_t(r) * args->a_stride;
    auto* c = static_cast<uint8_t*>(args->c) + int64_t(r) * args->c_stride;
    for (int64_t j = 0; j < d->nr; ++j) {
      int32_t acc = 0;
      for (int64_t s = 0; s < args->k_steps; ++s) {
        for (int64_t g = 0; g < group; ++g) {
          const int64_t k = s * group + g, byte = at(k);
          // u16 little-endian; the high byte is 0 from the packer, but read it as the kernel does.
          const int32_t av = u16  ? int32_t(row[byte]) | (int32_t(row[byte + 1]) << 8)
                             : s8 ? int32_t(int8_t(row[byte]))
                                  : int32_t(row[byte]);
          // Exact: maddubs is used only where its s16 pair sums are proven not to saturate.
          acc = wrap_add(acc, wrap_mul(av, w[(s * panel + j) * group + g]));
        }
      }
      const auto field = [&](GemmEpilogueField f) { return size_t(f) * size_t(panel) + size_t(j); };
      acc = wrap_add(acc, load_i32(ep, field(kEpBias)));
      if (d->row_correction) acc = wrap_sub(acc, wrap_mul(args->row_sums[r], load_i32(ep, field(kEpWeightZeroPoint))));
      if (d->q31) {
        store_q31_epilogue(acc, d->out, ep, size_t(panel), size_t(j), c + j);
        continue;
      }
      store_epilogue(acc, d->out, load_f32(ep, field(kEpMultiplier)), load_f32(ep, field(kEpLowerBound)),
                     load_f32(ep, field(kEpUpperBound)), load_i32(ep, field(kEpOutputZeroPoint)),
                     c + j * out_bytes(d->out));
    }
  }
}

void twin_pack_rows(const PackRowsArgs* args, const KernelDesc* d) {
  // s8 activations become u8 by flipping the sign bit (a' = a + 128), as PackedGemm expects.
  const uint8_t flip = d->storage_signed ? 0x80 : 0;
  const bool u16 = d->path == GemmPath::kMaddwd;
  // sdot4 stores a' - 128 as s8 (a' with the sign bit flipped back) and sums a'.
  const uint8_t store_flip = d->path == GemmPath::kSdot4 ? 0x80 : 0;
  for (int64_t r = 0; r < args->rows; ++r) {
    const uint8_t* src = args->src + r * args->src_stride;
    uint8_t* dst = args->dst + r * args->dst_stride;
    int32_t sum = 0;
    // Byte k is read before it is written: packing in place (src == dst) is the same.
    for (int64_t k = 0; k < args->k_padded; ++k) {
      const uint8_t v = k < args->k ? uint8_t(src[k] ^ flip) : 0;
      sum = wrap_add(sum, v);  // the kernel sums in int64 and keeps the low 32 bits: the same
      if (u16) {
        dst[2 * k] = v;  // u16 little-endian, zero-extended
        dst[2 * k + 1] = 0;
      } else {
        dst[k] = k < args->k ? uint8_t(v ^ store_flip) : 0;
      }
    }
    if (args->sums) args->sums[r] = sum;
  }
}

void twin_depthwise(const DepthwiseArgs* args, const KernelDesc* d) {
  const unsigned block = d->panel, pairs = d->taps / 2;
  const auto* w16 = static_cast<const uint8_t*>(args->weights);
  const auto* ep = static_cast<const uint8_t*>(args->epilogue);
  const unsigned ob = out_bytes(d->out);
  for (int64_t p = 0; p < args->pixels; ++p) {
    auto* out = static_cast<uint8_t*>(args->out) + p * args->out_stride;
    for (uint32_t b = 0; size_t(b) * block < d->channels; ++b) {
      const uint8_t* block_ep = ep + size_t(b) * kEpFields * block * 4;
      // Lanes in the kernel's order (depthwise_lane_channel); the partial last block skips
      // the lanes past the channels, as the kernel's masked loads and stores do.
      for (unsigned lane = 0; lane < block; ++lane) {
        const uint32_t ch = b * block + depthwise_lane_channel(block, lane);
        if (ch >= d->channels) continue;
        int32_t acc = load_i32(block_ep, kEpBias * block + lane);
        for (unsigned t = 0; t < d->taps; ++t) {
          int16_t wv;
          std::memcpy(&wv, w16 + 2 * depthwise_weight_index(block, pairs, b, lane, t), 2);
          const int32_t x = stored(tap(args->taps, args->taps_stride, args->pixel_step, p, t) + ch, d->storage_signed);
          acc = wrap_add(acc, x * int32_t(wv));  // |x·w| < 2^24: vpmaddwd's products are exact
        }
        store_epilogue(acc, d->out, load_f32(block_ep, kEpMultiplier * block + lane),
                       load_f32(block_ep, kEpLowerBound * block + lane), load_f32(block_ep, kEpUpperBound * block + lane),
                       load_i32(block_ep, kEpOutputZeroPoint * block + lane), out + size_t(ch) * ob);
      }
    }
  }
}

void twin_dw_interleave(const DwInterleaveArgs* args, const KernelDesc* d) {
  const unsigned panel = d->panel, groups = dw_rows_groups(d->taps);
  const int64_t position_bytes = dw_rows_position_bytes(panel, d->channels, d->taps);
  // u8 quads (x + 128 for s8 storage), or s8 ones for sdot (x - 128 for u8 storage).
  const uint8_t flip = d->storage_signed != (d->path == GemmPath::kSdot4) ? 0x80 : 0;
  for (int64_t x = 0; x < args->positions; ++x) {
    uint8_t* out = args->out + x * position_bytes;
    for (unsigned g = 0; g < groups; ++g) {
      for (size_t b = 0; b * panel < d->channels; ++b) {
        const unsigned width = dw_rows_block_width(panel, d->channels, b);
        for (unsigned lane = 0; lane < width; ++lane) {
          const int64_t c = int64_t(b * panel + dw_rows_lane_channel(width, lane));
          for (unsigned j = 0; j < 4; ++j) {
            out[dw_rows_quad_offset(panel, d->channels, g, b, lane, j)] =
                uint8_t(args->row[x * args->step + int64_t(4 * g + j) * args->dilation + c] ^ flip);
          }
        }
      }
    }
  }
}

void twin_dw_rows(const DwRowsArgs* args, const KernelDesc* d) {
  const unsigned panel = d->panel, groups = dw_rows_groups(d->taps);
  const int64_t position_bytes = dw_rows_position_bytes(panel, d->channels, d->taps);
  const auto* w = static_cast<const uint8_t*>(args->weights);
  const auto* ep = static_cast<const uint8_t*>(args->epilogue);
  const int64_t ob = out_bytes(d->out);
  const unsigned per_position = dw_rows_pixels_per_position(d->paired_pixels);
  const unsigned sets = dw_rows_weight_sets(d->taps, d->paired_pixels, d->pair_shift);
  // The groups of set 2 that some tap of an odd pixel falls in (sets 0 and 1 read them all).
  std::vector<bool> set2_read(groups);
  for (unsigned g = 0; g < groups; ++g) set2_read[g] = dw_rows_set_group_read(d->taps, d->pair_shift, 2, g);
  for (int64_t x = 0; x < args->pixels; ++x) {
    uint8_t* out = args->out + x * int64_t(d->channels) * ob;
    const unsigned set = unsigned(x % per_position);
    // (position offset, weight set): the pixel's own position, and for an odd pixel of three
    // sets the next position's quads by set 2.
    const unsigned reads = set == 1 && sets == 3 ? 2u : 1u;
    for (size_t b = 0; b * panel < d->channels; ++b) {
      const unsigned width = dw_rows_block_width(panel, d->channels, b);
      const uint8_t* block_ep = ep + b * kEpFields * panel * 4;
      for (unsigned lane = 0; lane < width; ++lane) {
        const uint32_t ch = uint32_t(b * panel + dw_rows_lane_channel(width, lane));
        if (ch >= d->channels) continue;  // the kernel's masked store skips them
        int32_t acc = load_i32(block_ep, kEpBias * panel + lane);
        for (unsigned dy = 0; dy < d->kh; ++dy) {
          for (unsigned r = 0; r < reads; ++r) {
            const unsigned ws = set + r;
            const uint8_t* q = args->rows[dy] + (x / per_position + r) * position_bytes;
            for (unsigned g = 0; g < groups; ++g) {
              if (ws == 2 && !set2_read[g]) continue;
              for (unsigned j = 0; j < 4; ++j) {
                const uint8_t byte = q[dw_rows_quad_offset(panel, d->channels, g, b, lane, j)];
                const int32_t u = d->path == GemmPath::kSdot4 ? int32_t(int8_t(byte)) : int32_t(byte);
                acc = wrap_add(acc, u * dw_rows_weight(w, *d, b, dy, g, lane, j, ws, sets));
              }
            }
          }
        }
        if (d->q31) {
          store_q31_epilogue(acc, d->out, block_ep, panel, lane, out + ch);
          continue;
        }
        store_epilogue(acc, d->out, load_f32(block_ep, kEpMultiplier * panel + lane),
                       load_f32(block_ep, kEpLowerBound * panel + lane), load_f32(block_ep, kEpUpperBound * panel + lane),
                       load_i32(block_ep, kEpOutputZeroPoint * panel + lane), out + ch * ob);
      }
    }
  }
}

void twin_pool(const PoolArgs* args, const KernelDesc* d) {
  const bool is_max = d->op == KernelOp::kMaxPool;
  for (int64_t p = 0; p < args->pixels; ++p) {
    auto* out = static_cast<uint8_t*>(args->out) + p * args->out_stride;
    for (uint32_t ch = 0; ch < d->channels; ++ch) {
      int32_t acc = is_max ? INT32_MIN : args->bias;
      for (unsigned t = 0; t < d->taps; ++t) {
        const int32_t x = stored(tap(args->taps, args->taps_stride, args->pixel_step, p, t) + ch, d->storage_signed);
        acc = is_max ? std::max(acc, x) : wrap_add(acc, x);
      }
      // Max stores the stored byte as it came; average requantizes into desc.out.
      out[ch] = is_max ? uint8_t(acc)
                       : requantize_tail(float(acc) * args->m, args->lo, args->hi, args->zo, d->out == OutKind::kS8);
    }
  }
}

void twin_elementwise(const ElementwiseArgs* args, const KernelDesc* d) {
  const auto* a = static_cast<const uint8_t*>(args->a);
  const auto* b = static_cast<const uint8_t*>(args->b);
  auto* y = static_cast<uint8_t*>(args->y);
  for (int64_t i = 0; i < args->blocks * 8 + args->tail; ++i) {
    const int32_t va = wrap_sub(stored(a + i, d->storage_signed), args->za);
    float t;
    if (d->op == KernelOp::kQAdd) {
      const int32_t vb = wrap_sub(stored(b + i, d->b_signed), args->zb);
      // Two products, each rounded, then one rounded sum (no FMA).
      const float ta = float(va) * args->m_a, tb = float(vb) * args->m_b;
      t = ta + tb;
    } else if (d->op == KernelOp::kQMul) {
      const int32_t vb = wrap_sub(stored(b + i, d->b_signed), args->zb);
      t = float(wrap_mul(va, vb)) * args->m_a;  // the product in int32 (vpmulld), then f32
    } else {
      t = float(va) * args->m_a;
    }
    y[i] = requantize_tail(t, args->lo, args->hi, args->zo, d->out == OutKind::kS8);
  }
}

void twin_clamp(const ClampArgs* args, const KernelDesc* d) {
  // clamp_bytes: bounds are stored values of the same type, so no narrowing is needed.
  for (size_t i = 0; i < args->n; ++i) {
    args->y[i] = uint8_t(std::min(std::max(stored(args->x + i, d->storage_signed), args->lo), args->hi));
  }
}

void twin_lut8(const LutArgs* args, const KernelDesc*) {
  for (size_t i = 0; i < args->n; ++i) args->y[i] = args->table[args->x[i]];
}

void twin_interleave_planes(const PlanesArgs* args, const KernelDesc* desc) {
  const unsigned c = desc->channels;
  const uint8_t* x = args->x;
  uint8_t* y = args->y;
  int64_t p = 0;
  if (c == 3) {
    // Four pixels per step in 32-bit words (little-endian byte order either way: the bytes
    // are assembled by shifts), one load per plane and three stores instead of twelve byte
    // stores; the LLVM template of this kernel is this loop.
    const uint8_t *r = x, *g = x + args->plane_stride, *b = x + 2 * args->plane_stride;
    auto word = [](const uint8_t* q) { return uint32_t(q[0]) | uint32_t(q[1]) << 8 | uint32_t(q[2]) << 16 | uint32_t(q[3]) << 24; };
    auto put = [](uint8_t* q, uint32_t v) {
      for (int i = 0; i < 4; ++i) q[i] = uint8_t(v >> (8 * i));
    };
    for (; p + 4 <= args->pixels; p += 4) {
      const uint32_t R = word(r + p), G = word(g + p), B = word(b + p);
      put(y + p * 3, (R & 0xFFu) | (G & 0xFFu) << 8 | (B & 0xFFu) << 16 | (R & 0xFF00u) << 16);
      put(y + p * 3 + 4, (G >> 8 & 0xFFu) | (B & 0xFF00u) | (R & 0xFF0000u) | (G & 0xFF0000u) << 8);
      put(y + p * 3 + 8, (B >> 16 & 0xFFu) | (R >> 16 & 0xFF00u) | (G >> 8 & 0xFF0000u) | (B & 0xFF000000u));
    }
  }
  for (; p < args->pixels; ++p) {
    for (unsigned i = 0; i < c; ++i) y[p * c + i] = x[int64_t(i) * args->plane_stride + p];
  }
}

void twin_f32_gemm(const F32GemmArgs* args, const KernelDesc*) {
  for (int64_t r = 0; r < args->rows; ++r) {
    for (int64_t j = 0; j < args->n; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < args->k; ++k) {
        // A separate statement and -ffp-contract=off: the product is rounded alone, no FMA.
        const float p = args->x[r * args->x_stride + k] * args->w[f32_panel_index(k, j, args->k)];
        acc = acc + p;
      }
      if (args->bias) acc = acc + args->bias[j];
      args->y[r * args->y_stride + j] = clamp_f32(acc, args->lo, args->hi);
    }
  }
}

void twin_f32_dwconv(const F32DwArgs* args, const KernelDesc*) {
  const int64_t c = args->c;
  for (int64_t p = 0; p < args->ow; ++p) {
    for (int64_t ch = 0; ch < c; ++ch) {
      float acc = 0.0f;
      for_each_f32_dw_tap(*args, p, [&](const float* x, const float* w) {
        const float prod = x[ch] * w[ch];
        acc = acc + prod;
      });
      if (args->bias) acc = acc + args->bias[ch];
      args->y[p * c + ch] = clamp_f32(acc, args->lo, args->hi);
    }
  }
}

void twin_wo_gemm(const WoGemmArgs* args, const KernelDesc* d) {
  const WoGemmArgs& a = *args;
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t j = 0; j < a.n; ++j) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < a.k; ++kk) {
        const int64_t p = kk / a.block * a.p_stride + j;
        const int32_t q = wo_weight_at(a, kk, j, d->weight_bits, d->storage_signed) - (d->weight_zp ? a.zps[p] : 0);
        const float w = round_weight(float(q) * a.scales[p], d->weight_round);
        const float prod = a.x[r * a.x_stride + kk] * w;
        acc = acc + prod;
      }
      if (a.bias) acc = acc + a.bias[j];
      a.y[r * a.y_stride + j] = clamp_f32(acc, a.lo, a.hi);
    }
  }
}

void twin_dyn_gemm(const DynGemmArgs* args, const KernelDesc* d) {
  const DynGemmArgs& a = *args;
  const int64_t group_bytes = d->weight_bits == 4 ? 256 : 512;
  const DynRecordLayout layout = dyn_record_layout(a.block_padded, *d);
  const int64_t record = layout.bytes;
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t j = 0; j < a.n; ++j) {
      const int64_t c = j % kDynStripCols;
      float acc = 0.0f;
      for (int64_t b = 0; b < a.blocks; ++b) {
        const uint8_t* rec = a.w + (j / kDynStripCols * a.blocks + b) * record;
        const int8_t* q = a.xq + r * a.x_stride + b * a.block_padded;
        int32_t t = 0;
        for (int64_t kk = 0; kk < a.block_padded; ++kk) {
          const uint8_t* g = rec + kk / 8 * group_bytes;
          const int64_t i = kk % 4, upper = kk % 8 / 4;
          const int32_t u = d->weight_bits == 4 ? (g[c * 4 + i] >> (upper * 4)) & 15 : g[upper * 256 + c * 4 + i];
          t += int32_t(q[kk]) * u;
        }
        const float scale = dyn_record_scale(rec + layout.scales, c, d->scale_f16);
        t -= dyn_record_zp(rec + layout.zps, c, *d) * a.xsum[r * a.blocks + b];
        acc = acc + numerics::dynamic_i8_block_term(t, a.xd[r * a.blocks + b], scale);
      }
      if (a.bias) acc = acc + a.bias[j];
      a.y[r * a.y_stride + j] = clamp_f32(acc, a.lo, a.hi);
    }
  }
}

void twin_requant_q31(const RequantQ31Args* a, const KernelDesc* d) {
  for (int64_t r = 0; r < a->rows; ++r) {
    const int32_t* acc = a->acc + r * a->acc_stride;
    uint8_t* y = static_cast<uint8_t*>(a->y) + r * a->y_stride;
    for (int64_t j = 0; j < a->channels; ++j) {
      const numerics::QuantizedMultiplier m{a->multiplier[j], a->shift[j]};
      const int64_t v = numerics::requantize_tflite(acc[j], m, a->zo[j], int64_t(a->lo_zo[j]) + a->zo[j],
                                                    int64_t(a->hi_zo[j]) + a->zo[j], d->single_rounding);
      y[j] = uint8_t(d->storage_signed ? uint8_t(int8_t(v)) : uint8_t(v));
    }
  }
}

void twin_requant_f64(const RequantF64Args* a, const KernelDesc* d) {
  for (int64_t r = 0; r < a->rows; ++r) {
    const int32_t* acc = a->acc + r * a->acc_stride;
    uint8_t* y = static_cast<uint8_t*>(a->y) + r * a->y_stride;
    for (int64_t j = 0; j < a->channels; ++j) {
      const int64_t v = numerics::requantize_onnx(acc[j], a->multiplier[j], a->zo[j], int64_t(a->lo_zo[j]) + a->zo[j],
                                                  int64_t(a->hi_zo[j]) + a->zo[j]);
      y[j] = uint8_t(d->storage_signed ? uint8_t(int8_t(v)) : uint8_t(v));
    }
  }
}

const void* twin_entry(KernelOp op) {
  switch (op) {
    case KernelOp::kQuantize:
    case KernelOp::kDequantize: return reinterpret_cast<const void*>(&twin_convert);
    case KernelOp::kGemm: return reinterpret_cast<const void*>(&twin_gemm);
    case KernelOp::kDepthwise: return reinterpret_cast<const void*>(&twin_depthwise);
    case KernelOp::kQAdd:
    case KernelOp::kQMul:
    case KernelOp::kRequantize: return reinterpret_cast<const void*>(&twin_elementwise);
    case KernelOp::kMaxPool:
    case KernelOp::kAvgPool: return reinterpret_cast<const void*>(&twin_pool);
    case KernelOp::kPackRows: return reinterpret_cast<const void*>(&twin_pack_rows);
    case KernelOp::kClamp: return reinterpret_cast<const void*>(&twin_clamp);
    case KernelOp::kF32Gemm: return reinterpret_cast<const void*>(&twin_f32_gemm);
    case KernelOp::kDwInterleave: return reinterpret_cast<const void*>(&twin_dw_interleave);
    case KernelOp::kDwRows: return reinterpret_cast<const void*>(&twin_dw_rows);
    case KernelOp::kEwProgram: return reinterpret_cast<const void*>(&twin_ew_program);
    case KernelOp::kLut8: return reinterpret_cast<const void*>(&twin_lut8);
    case KernelOp::kF32Dwconv: return reinterpret_cast<const void*>(&twin_f32_dwconv);
    case KernelOp::kWoGemm: return reinterpret_cast<const void*>(&twin_wo_gemm);
    case KernelOp::kDynGemm: return reinterpret_cast<const void*>(&twin_dyn_gemm);
    case KernelOp::kRequantQ31: return reinterpret_cast<const void*>(&twin_requant_q31);
    case KernelOp::kRequantF64: return reinterpret_cast<const void*>(&twin_requant_f64);
    case KernelOp::kInterleavePlanes: return reinterpret_cast<const void*>(&twin_interleave_planes);
    case KernelOp::kCount: break;
  }
  return nullptr;
}

}  // namespace qrt::jit
