// qrt — the scalar twin of element-wise programs: an interpreter that evaluates each
// instruction with the reference's own formula (ir/numerics.h), element by element. It is the
// scalar level's program kernel and the yardstick the compiled programs are tested against.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ir/float_format.h"
#include "ir/numerics.h"
#include "jit/ref/twins.h"

namespace qrt::jit {

namespace {

// One register: f32, i64 or bool (as i != 0), by the instruction's type.
struct Reg {
  float f = 0.0f;
  int64_t i = 0;
};

int64_t load_int(const uint8_t* p, EwStorage s) {
  switch (s) {
    case EwStorage::kI8: return int8_t(*p);
    case EwStorage::kU8:
    case EwStorage::kBool: return *p;
    case EwStorage::kI16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case EwStorage::kU16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case EwStorage::kI32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case EwStorage::kU32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case EwStorage::kI64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    case EwStorage::kF32:
    case EwStorage::kBf16:
    case EwStorage::kF16: break;
  }
  return 0;
}

// A float storage's element at `p` as f32 (bf16 and f16 exactly, as the reference reads them).
float load_float(const uint8_t* p, EwStorage s) {
  if (s == EwStorage::kF32) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return float(float_kind_from_bits(bits, ew_storage_float_kind(s)));
}

void store(uint8_t* p, EwStorage s, const Reg& r) {
  if (s == EwStorage::kF32) {
    std::memcpy(p, &r.f, 4);
  } else if (s == EwStorage::kBf16 || s == EwStorage::kF16) {
    // The reference's store of an f32 result: one rounding to the element type.
    const uint16_t bits = uint16_t(float_kind_bits(double(r.f), ew_storage_float_kind(s)));
    std::memcpy(p, &bits, 2);
  } else if (s == EwStorage::kBool) {
    *p = r.i != 0 ? 1 : 0;
  } else {
    const uint64_t raw = uint64_t(r.i);  // little-endian: the low bytes wrap to the width
    std::memcpy(p, &raw, ew_storage_bytes(s));
  }
}

float max_f32(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : (a < b ? b : a);
}
float min_f32(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : (b < a ? b : a);
}

// Instruction `e` on registers `r` (earlier results) for one element whose inputs are `in`.
Reg eval(const EwInstr& e, const std::vector<Reg>& r, const EwProgram& p, const uint8_t* const* in) {
  Reg y;
  const Reg& a = r[e.a];
  const Reg& b = r[e.b];
  const bool f = e.type == EwType::kF32;
  switch (e.op) {
    case EwOp::kLoad: {
      const EwStorage s = p.inputs[e.input].storage;
      if (ew_storage_is_float(s)) {
        y.f = load_float(in[e.input], s);
      } else {
        y.i = load_int(in[e.input], s);
      }
      break;
    }
    case EwOp::kConst: y.f = e.f; y.i = e.i; break;
    case EwOp::kAdd: if (f) y.f = a.f + b.f; else y.i = int64_t(uint64_t(a.i) + uint64_t(b.i)); break;
    case EwOp::kSub: if (f) y.f = a.f - b.f; else y.i = int64_t(uint64_t(a.i) - uint64_t(b.i)); break;
    case EwOp::kMul: if (f) y.f = a.f * b.f; else y.i = int64_t(uint64_t(a.i) * uint64_t(b.i)); break;
    case EwOp::kDiv: y.f = a.f / b.f; break;
    case EwOp::kMax: if (f) y.f = max_f32(a.f, b.f); else y.i = a.i < b.i ? b.i : a.i; break;
    case EwOp::kMin: if (f) y.f = min_f32(a.f, b.f); else y.i = b.i < a.i ? b.i : a.i; break;
    case EwOp::kPow: y.f = numerics::pow_f32(a.f, b.f); break;
    case EwOp::kEqual:
    case EwOp::kLess:
    case EwOp::kGreater: {
      const bool fl = p.code[e.a].type == EwType::kF32;
      const bool lt = fl ? a.f < b.f : a.i < b.i, gt = fl ? a.f > b.f : a.i > b.i, eq = fl ? a.f == b.f : a.i == b.i;
      y.i = (e.op == EwOp::kEqual ? eq : e.op == EwOp::kLess ? lt : gt) ? 1 : 0;
      break;
    }
    case EwOp::kNot: y.i = a.i != 0 ? 0 : 1; break;
    case EwOp::kSelect: y = a.i != 0 ? b : r[e.c]; break;
    case EwOp::kNeg: if (f) y.f = -a.f; else y.i = int64_t(0 - uint64_t(a.i)); break;
    case EwOp::kSqrt: y.f = std::sqrt(a.f); break;
    case EwOp::kAbs: y.f = std::fabs(a.f); break;
    case EwOp::kSign: y.f = numerics::sign_f32(a.f); break;
    case EwOp::kFloor: y.f = std::floor(a.f); break;
    case EwOp::kCeil: y.f = std::ceil(a.f); break;
    case EwOp::kRoundEven: y.f = float(numerics::round_half_even(a.f)); break;
    case EwOp::kRoundAway: y.f = std::round(a.f); break;
    case EwOp::kRsqrt: y.f = numerics::rsqrt_f32(a.f); break;
    case EwOp::kLog: y.f = numerics::log_f32(a.f); break;
    case EwOp::kLog1p: y.f = numerics::log1p_f32(a.f); break;
    case EwOp::kExpm1: y.f = numerics::expm1_f32(a.f); break;
    case EwOp::kSin: y.f = numerics::sin_f32(a.f); break;
    case EwOp::kCos: y.f = numerics::cos_f32(a.f); break;
    case EwOp::kCbrt: y.f = numerics::cbrt_f32(a.f); break;
    case EwOp::kAsin: y.f = numerics::asin_f32(a.f); break;
    case EwOp::kAcos: y.f = numerics::acos_f32(a.f); break;
    case EwOp::kAtan: y.f = numerics::atan_f32(a.f); break;
    case EwOp::kAsinh: y.f = numerics::asinh_f32(a.f); break;
    case EwOp::kAcosh: y.f = numerics::acosh_f32(a.f); break;
    case EwOp::kAtanh: y.f = numerics::atanh_f32(a.f); break;
    case EwOp::kRoundHalf: y.f = float(round_to_float_kind(double(a.f), e.flag ? FloatKind::kF16 : FloatKind::kBF16)); break;
    case EwOp::kRecip: y.f = 1.0f / a.f; break;
    case EwOp::kExp: y.f = numerics::exp_f32(a.f); break;
    case EwOp::kTanh: y.f = numerics::tanh_f32(a.f); break;
    case EwOp::kErf: y.f = numerics::erf_f32(a.f); break;
    case EwOp::kGelu: y.f = numerics::gelu_f32(a.f, e.flag != 0); break;
    case EwOp::kLogistic: y.f = numerics::logistic_f32(a.f); break;
    case EwOp::kRelu: y.f = a.f < 0.0f ? 0.0f : a.f; break;
    case EwOp::kClamp: y.f = a.f < e.f ? e.f : a.f > e.g ? e.g : a.f; break;
    case EwOp::kToF32: y.f = float(double(a.i)); break;
    case EwOp::kToInt: {
      // The reference's cast: truncate toward zero, saturate to the target range, NaN -> 0.
      const double v = double(a.f);
      const double t = std::isnan(v) ? 0.0 : std::min(std::max(std::trunc(v), double(e.i)), double(e.j));
      y.i = int64_t(t);
      break;
    }
    case EwOp::kToBool: y.i = (p.code[e.a].type == EwType::kF32 ? a.f != 0.0f : a.i != 0) ? 1 : 0; break;
    case EwOp::kBoolTo: y.f = a.i != 0 ? 1.0f : 0.0f; y.i = a.i != 0 ? 1 : 0; break;
    case EwOp::kWrap: {
      const unsigned shift = unsigned(64 - e.i);
      const uint64_t u = uint64_t(a.i) << shift;
      y.i = e.flag ? int64_t(u >> shift) : (int64_t(u) >> shift);
      break;
    }
    case EwOp::kDequant: y.f = numerics::dequantize_f32(a.i, e.i, e.f); break;
    case EwOp::kQuant: y.i = numerics::quantize_f32(a.f, e.f, e.i, e.j, e.k); break;
    case EwOp::kQuantVar: y.i = numerics::quantize_f32(a.f, b.f, r[e.c].i, e.j, e.k); break;
  }
  return y;
}

}  // namespace

void twin_ew_program(const EwArgs* args, const EwProgram* program) {
  const EwProgram& p = *program;
  const size_t inputs = p.inputs.size();
  const unsigned out_bytes = ew_storage_bytes(p.out);
  std::vector<Reg> regs(p.code.size());
  const uint8_t* at[kEwMaxInputs] = {};
  for (int64_t row = 0; row < args->rows; ++row) {
    for (int64_t e = 0; e < args->n; ++e) {
      for (size_t k = 0; k < inputs; ++k) {
        const int64_t step = p.inputs[k].scalar ? 0 : e * ew_storage_bytes(p.inputs[k].storage);
        at[k] = static_cast<const uint8_t*>(args->in[k]) + row * args->in_step[k] + step;
      }
      for (size_t i = 0; i < p.code.size(); ++i) regs[i] = eval(p.code[i], regs, p, at);
      store(static_cast<uint8_t*>(args->out) + row * args->out_step + e * out_bytes, p.out, regs[p.result]);
    }
  }
}

}  // namespace qrt::jit
