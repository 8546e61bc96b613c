// qrt — the scalar twins (see twins.h). Each follows its kernel's arithmetic step by step:
// wrapping int32 sums (the operator layer proves the true sums fit), f32(acc) rounded to
// nearest even, one rounding per multiply and add, clamping before rounding (the bounds are
// integers, so it equals clamping after), round half to even, then the zero point.
#include "jit/ref/twins.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/numerics.h"

namespace qrt::jit {

namespace {

// int32 arithmetic that wraps like the vector units (no signed overflow in C++).
int32_t wrap_add(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); }
int32_t wrap_mul(int32_t a, int32_t b) { return int32_t(uint32_t(a) * uint32_t(b)); }

int32_t load_i32(const void* p, size_t i) {
  int32_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(p) + 4 * i, 4);
  return v;
}
float load_f32(const void* p, size_t i) {
  float v;
  std::memcpy(&v, static_cast<const uint8_t*>(p) + 4 * i, 4);
  return v;
}
int32_t stored(const uint8_t* p, bool is_signed) { return is_signed ? int32_t(int8_t(*p)) : int32_t(*p); }

// vmaxps / vminps with finite operands, then vcvtps2dq in the default rounding mode.
int32_t clamp_round(float t, float lo, float hi) {
  t = std::max(t, lo);
  t = std::min(t, hi);
  return int32_t(std::nearbyint(t));
}

// The epilogue of one accumulator for output kind `out`, stored at `dst`: s32 as is; f32:
// f32(acc)·m; 8-bit: clamp(f32(acc)·m, lo, hi) rounded, + zo.
void store_epilogue(int32_t acc, OutKind out, float m, float lo, float hi, int32_t zo, uint8_t* dst) {
  switch (out) {
    case OutKind::kS32: std::memcpy(dst, &acc, 4); return;
    case OutKind::kF32: {
      const float y = float(acc) * m;
      std::memcpy(dst, &y, 4);
      return;
    }
    case OutKind::kU8:
    case OutKind::kS8: *dst = uint8_t(clamp_round(float(acc) * m, lo, hi) + zo); return;
  }
}

unsigned out_bytes(OutKind out) { return out == OutKind::kS32 || out == OutKind::kF32 ? 4 : 1; }

// The tap pointer of tap t for pixel p (see DepthwiseArgs).
const uint8_t* tap(const uint8_t* const* taps, int64_t taps_stride, int64_t pixel_step, int64_t p, unsigned t) {
  return taps[p * (taps_stride / 8) + t] + p * pixel_step;
}

}  // namespace

void twin_convert(const ConvertArgs* args, const KernelDesc* d) {
  const auto* in = static_cast<const uint8_t*>(args->in);
  auto* out = static_cast<uint8_t*>(args->out);
  for (size_t i = 0; i < args->n; ++i) {
    if (d->op == KernelOp::kQuantize) {
      float x;
      std::memcpy(&x, in + 4 * i, 4);
      out[i] = uint8_t(numerics::quantize_f32(x, d->scale, d->zero_point, d->qmin, d->qmax));
    } else {
      const float x = numerics::dequantize_f32(stored(in + i, d->storage_signed), d->zero_point, d->scale);
      std::memcpy(out + 4 * i, &x, 4);
    }
  }
}

void twin_gemm(const GemmTileArgs* args, const KernelDesc* d) {
  const bool u16 = d->path == GemmPath::kMaddwd;  // activations zero-extended to u16
  const unsigned group = u16 ? 2 : 4, panel = d->panel;
  const auto* a = static_cast<const uint8_t*>(args->a);
  const auto* w = static_cast<const int8_t*>(args->w);
  const void* ep = args->epilogue;
  for (unsigned r = 0; r < d->mr; ++r) {
    const uint8_t* row = a + r * args->a_stride;
    auto* c = static_cast<uint8_t*>(args->c) + r * args->c_stride;
    for (unsigned j = 0; j < d->nr; ++j) {
      int32_t acc = 0;
      for (int64_t s = 0; s < args->k_steps; ++s) {
        for (unsigned g = 0; g < group; ++g) {
          const int64_t k = s * group + g;
          const int32_t av = u16 ? int32_t(row[2 * k]) | (int32_t(row[2 * k + 1]) << 8) : int32_t(row[k]);
          acc = wrap_add(acc, wrap_mul(av, w[(s * panel + j) * group + g]));
        }
      }
      acc = wrap_add(acc, load_i32(ep, kEpBias * panel + j));
      if (d->row_correction) acc = wrap_add(acc, -wrap_mul(args->row_sums[r], load_i32(ep, kEpWeightZeroPoint * panel + j)));
      store_epilogue(acc, d->out, load_f32(ep, kEpMultiplier * panel + j), load_f32(ep, kEpLowerBound * panel + j),
                     load_f32(ep, kEpUpperBound * panel + j), load_i32(ep, kEpOutputZeroPoint * panel + j),
                     c + j * out_bytes(d->out));
    }
  }
}

void twin_pack_rows(const PackRowsArgs* args, const KernelDesc* d) {
  const uint8_t flip = d->storage_signed ? 0x80 : 0;
  const bool u16 = d->path == GemmPath::kMaddwd;
  int32_t sum = 0;
  for (int64_t k = 0; k < args->k_padded; ++k) {
    const uint8_t v = k < args->k ? uint8_t(args->src[k] ^ flip) : 0;
    sum += v;
    if (u16) {
      args->dst[2 * k] = v;
      args->dst[2 * k + 1] = 0;
    } else {
      args->dst[k] = v;
    }
  }
  *args->sum = sum;
}

void twin_depthwise(const DepthwiseArgs* args, const KernelDesc* d) {
  const unsigned block = d->panel, pairs = d->taps / 2;
  const auto* w16 = static_cast<const uint8_t*>(args->weights);
  const auto* ep = static_cast<const uint8_t*>(args->epilogue);
  const unsigned ob = out_bytes(d->out);
  for (int64_t p = 0; p < args->pixels; ++p) {
    auto* out = static_cast<uint8_t*>(args->out) + p * args->out_stride;
    for (uint32_t b = 0; b * block < d->channels; ++b) {
      const uint8_t* block_ep = ep + size_t(b) * kEpFields * block * 4;
      for (unsigned lane = 0; lane < block; ++lane) {
        const uint32_t ch = b * block + depthwise_lane_channel(block, lane);
        if (ch >= d->channels) continue;
        int32_t acc = load_i32(block_ep, kEpBias * block + lane);
        for (unsigned t = 0; t < d->taps; ++t) {
          int16_t wv;
          std::memcpy(&wv, w16 + 2 * depthwise_weight_index(block, pairs, b, lane, t), 2);
          const int32_t x = stored(tap(args->taps, args->taps_stride, args->pixel_step, p, t) + ch, d->storage_signed);
          acc = wrap_add(acc, x * int32_t(wv));
        }
        store_epilogue(acc, d->out, load_f32(block_ep, kEpMultiplier * block + lane),
                       load_f32(block_ep, kEpLowerBound * block + lane), load_f32(block_ep, kEpUpperBound * block + lane),
                       load_i32(block_ep, kEpOutputZeroPoint * block + lane), out + size_t(ch) * ob);
      }
    }
  }
}

void twin_pool(const PoolArgs* args, const KernelDesc* d) {
  const bool is_max = d->op == KernelOp::kMaxPool;
  for (int64_t p = 0; p < args->pixels; ++p) {
    auto* out = static_cast<uint8_t*>(args->out) + p * args->out_stride;
    for (uint32_t ch = 0; ch < d->channels; ++ch) {
      int32_t acc = is_max ? -1000 : args->bias;
      for (unsigned t = 0; t < d->taps; ++t) {
        const int32_t x = stored(tap(args->taps, args->taps_stride, args->pixel_step, p, t) + ch, d->storage_signed);
        acc = is_max ? std::max(acc, x) : acc + x;
      }
      out[ch] = is_max ? uint8_t(acc) : uint8_t(clamp_round(float(acc) * args->m, args->lo, args->hi) + args->zo);
    }
  }
}

void twin_elementwise(const ElementwiseArgs* args, const KernelDesc* d) {
  const auto* a = static_cast<const uint8_t*>(args->a);
  const auto* b = static_cast<const uint8_t*>(args->b);
  auto* y = static_cast<uint8_t*>(args->y);
  for (int64_t i = 0; i < args->blocks * 8; ++i) {
    const int32_t va = stored(a + i, d->storage_signed) - args->za;
    float t;
    if (d->op == KernelOp::kQAdd) {
      const int32_t vb = stored(b + i, d->b_signed) - args->zb;
      const float ta = float(va) * args->m_a, tb = float(vb) * args->m_b;
      t = ta + tb;
    } else if (d->op == KernelOp::kQMul) {
      const int32_t vb = stored(b + i, d->b_signed) - args->zb;
      t = float(va * vb) * args->m_a;  // |product| <= 255^2: exact in int32 and in f32
    } else {
      t = float(va) * args->m_a;
    }
    y[i] = uint8_t(clamp_round(t, args->lo, args->hi) + args->zo);
  }
}

void twin_clamp(const ClampArgs* args, const KernelDesc* d) {
  for (size_t i = 0; i < args->n; ++i) {
    args->y[i] = uint8_t(std::min(std::max(stored(args->x + i, d->storage_signed), args->lo), args->hi));
  }
}

void twin_f32_gemm(const F32GemmArgs* args, const KernelDesc*) {
  for (int64_t r = 0; r < args->rows; ++r) {
    for (int64_t j = 0; j < args->n; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < args->k; ++k) {
        const float p = args->x[r * args->k + k] * args->w[k * args->n_padded + j];  // rounded alone: no FMA
        acc = acc + p;
      }
      if (args->bias) acc = acc + args->bias[j];
      args->y[r * args->n + j] = acc;
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
    case KernelOp::kCount: break;
  }
  return nullptr;
}

}  // namespace qrt::jit
