// qrt — element-wise programs as LLVM IR: one function per program with the EwFn ABI, a row
// loop around an element loop that the loop vectorizer widens for the level's CPU. Every
// instruction is the reference's formula written out in IR — the same f32 operations in the
// same order, no fast-math flags, no FMA (LLVM contracts nothing without them), the
// polynomials of numerics::exp_f32/tanh_f32/erf_f32 with every branch computed and selected —
// so compiled programs return the twin's bytes.
#include "jit/llvm/llvm_codegen.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <cstddef>
#include <optional>
#include <utility>

namespace qrt::jit::llvm_ir {

namespace {

using llvm::IRBuilder;
using llvm::Value;

static_assert(offsetof(EwArgs, in) == 0 && offsetof(EwArgs, in_step) == 64 && offsetof(EwArgs, out) == 128 &&
                  offsetof(EwArgs, out_step) == 136 && offsetof(EwArgs, n) == 144 && offsetof(EwArgs, rows) == 152,
              "the generated code reads EwArgs at these offsets");

// Emits the f32 math of one program into a builder.
class Emitter {
 public:
  Emitter(IRBuilder<>& b, llvm::Module& m) : b_(b), m_(m), f32_(b.getFloatTy()), i32_(b.getInt32Ty()) {}

  Value* c(float v) { return llvm::ConstantFP::get(f32_, v); }
  Value* add(Value* x, Value* y) { return b_.CreateFAdd(x, y); }
  Value* sub(Value* x, Value* y) { return b_.CreateFSub(x, y); }
  Value* mul(Value* x, Value* y) { return b_.CreateFMul(x, y); }
  Value* div(Value* x, Value* y) { return b_.CreateFDiv(x, y); }
  Value* unary(llvm::Intrinsic::ID id, Value* x) { return b_.CreateUnaryIntrinsic(id, x); }
  Value* is_nan(Value* x) { return b_.CreateFCmpUNO(x, x); }
  Value* select(Value* c, Value* x, Value* y) { return b_.CreateSelect(c, x, y); }
  Value* copysign(Value* mag, Value* sign) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign); }

  // p·r + k for the Horner steps (a multiply, then an add: two roundings, as in C++).
  Value* horner(Value* p, Value* r, float k) { return add(mul(p, r), c(k)); }

  // 2^e as f32 for integer e in [-126, 127] (an i32 vector or scalar).
  Value* pow2(Value* e) {
    Value* bits = b_.CreateShl(b_.CreateAdd(e, llvm::ConstantInt::get(i32_, 127)), 23);
    return b_.CreateBitCast(bits, f32_);
  }

  // numerics::exp_f32.
  Value* exp(Value* x) {
    Value* nan = is_nan(x);
    Value* big = b_.CreateFCmpOGT(x, c(88.72283935546875f));
    Value* small = b_.CreateFCmpOLT(x, c(-103.972084045410156f));
    // The main path on a clamped copy, so the lanes the selects discard stay in range.
    Value* xc = select(b_.CreateOr(nan, b_.CreateOr(big, small)), c(0.0f), x);
    Value* n = unary(llvm::Intrinsic::roundeven, mul(xc, c(1.44269502162933349609375f)));
    Value* r = sub(sub(xc, mul(n, c(0.693145751953125f))), mul(n, c(1.428606765330187e-06f)));
    Value* p = c(1.98412698e-4f);
    p = horner(p, r, 1.38888889e-3f);
    p = horner(p, r, 8.33333377e-3f);
    p = horner(p, r, 4.16666679e-2f);
    p = horner(p, r, 1.66666672e-1f);
    p = horner(p, r, 0.5f);
    p = horner(p, r, 1.0f);
    p = horner(p, r, 1.0f);
    // ldexp(p, n) for n in [-150, 128]: p·2^(n-k) is exact (normal), ·2^k rounds once.
    Value* ni = b_.CreateFPToSI(n, i32_);
    auto i = [&](int v) { return llvm::ConstantInt::get(i32_, v, true); };
    Value* k = select(b_.CreateICmpSLT(ni, i(-63)), i(-64), select(b_.CreateICmpSGT(ni, i(63)), i(64), i(0)));
    Value* y = mul(mul(p, pow2(b_.CreateSub(ni, k))), pow2(k));
    Value* inf = llvm::ConstantFP::getInfinity(f32_);
    return select(nan, x, select(big, inf, select(small, c(0.0f), y)));
  }

  // numerics::tanh_f32.
  Value* tanh(Value* x) {
    Value* a = unary(llvm::Intrinsic::fabs, x);
    Value* mid = sub(c(1.0f), div(c(2.0f), add(exp(mul(c(2.0f), a)), c(1.0f))));
    Value* y = mul(c(2.0f), a);
    Value* p = c(1.0f);
    for (int k = 12; k >= 2; --k) p = add(c(1.0f), mul(p, div(y, c(float(k)))));
    Value* e = mul(y, p);
    Value* low = div(e, add(e, c(2.0f)));
    Value* t = select(b_.CreateFCmpOGE(a, c(9.0f)), c(1.0f), select(b_.CreateFCmpOGE(a, c(0.625f)), mid, low));
    return select(is_nan(x), x, copysign(t, x));
  }

  // numerics::erf_f32.
  Value* erf(Value* x) {
    Value* a = unary(llvm::Intrinsic::fabs, x);
    Value* t2 = mul(a, a);
    Value* nt = b_.CreateFNeg(t2);
    Value* p = c(1.0f / 9360.0f);
    for (float k : {1.0f / 1320.0f, 1.0f / 216.0f, 1.0f / 42.0f, 1.0f / 10.0f, 1.0f / 3.0f, 1.0f}) p = horner(p, nt, k);
    Value* low = mul(c(1.12837916709551257f), mul(a, p));
    Value* t = div(c(1.0f), add(c(1.0f), mul(c(0.5f), a)));
    Value* q = c(0.17087277f);
    for (float k : {-0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f, 0.09678418f, 0.37409196f,
                    1.00002368f, -1.26551223f}) {
      q = horner(q, t, k);
    }
    Value* mid = sub(c(1.0f), mul(t, exp(sub(q, mul(a, a)))));
    Value* r = select(b_.CreateFCmpOLT(a, c(0.5f)), low, select(b_.CreateFCmpOGE(a, c(4.0f)), c(1.0f), mid));
    return select(is_nan(x), x, copysign(r, x));
  }

  // numerics::gelu_f32.
  Value* gelu(Value* x, bool tanh_form) {
    if (tanh_form) {
      Value* inner = mul(c(0.797884560802865f), add(x, mul(c(0.044715f), mul(mul(x, x), x))));
      return mul(mul(c(0.5f), x), add(c(1.0f), tanh(inner)));
    }
    return mul(mul(c(0.5f), x), add(c(1.0f), erf(mul(x, c(0.707106781186548f)))));
  }

  // numerics::logistic_f32.
  Value* logistic(Value* x) { return div(c(1.0f), add(c(1.0f), exp(b_.CreateFNeg(x)))); }

  // numerics::pow_f32, through the process's own function (exact by construction; scalar).
  Value* pow(Value* x, Value* y) {
    llvm::FunctionCallee fn = m_.getOrInsertFunction(kPowSymbol, llvm::FunctionType::get(f32_, {f32_, f32_}, false));
    return b_.CreateCall(fn, {x, y});
  }

  // A numerics function of one f32 through the process's own function (scalar_call_symbol).
  Value* call_unary(const char* symbol, Value* x) {
    llvm::FunctionCallee fn = m_.getOrInsertFunction(symbol, llvm::FunctionType::get(f32_, {f32_}, false));
    return b_.CreateCall(fn, {x});
  }

  // NaN when either is NaN, else the C++ std::max / std::min pick.
  Value* max_min(Value* x, Value* y, bool is_max) {
    Value* nan = b_.CreateOr(is_nan(x), is_nan(y));
    Value* pick = is_max ? select(b_.CreateFCmpOLT(x, y), y, x) : select(b_.CreateFCmpOLT(y, x), y, x);
    return select(nan, llvm::ConstantFP::getQNaN(f32_), pick);
  }

 private:
  IRBuilder<>& b_;
  llvm::Module& m_;
  llvm::Type* f32_;
  llvm::IntegerType* i32_;
};

llvm::Type* memory_type(llvm::LLVMContext& ctx, EwStorage s) {
  if (s == EwStorage::kF32) return llvm::Type::getFloatTy(ctx);
  return llvm::Type::getIntNTy(ctx, 8 * ew_storage_bytes(s));
}

bool is_unsigned(EwStorage s) {
  return s == EwStorage::kU8 || s == EwStorage::kU16 || s == EwStorage::kU32 || s == EwStorage::kBool;
}

// bf16 and f16 in integer IR (no half types: without F16C LLVM would call a runtime library
// for them), the bit formulas of jit/ops/float_widening.cpp, vectorized with the loop.
Value* i32c(IRBuilder<>& b, uint32_t v) { return b.getInt32(v); }

// f16 bits (i16) as the exact f32.
Value* widen_f16(IRBuilder<>& b, Value* h16) {
  Value* h = b.CreateZExt(h16, b.getInt32Ty());
  Value* sign = b.CreateShl(b.CreateAnd(h, i32c(b, 0x8000)), 16);
  Value* exp = b.CreateAnd(b.CreateLShr(h, 10), i32c(b, 0x1F));
  Value* frac = b.CreateAnd(h, i32c(b, 0x3FF));
  Value* special = b.CreateOr(i32c(b, 0x7F800000), b.CreateShl(frac, 13));  // inf, NaN with its payload
  Value* normal = b.CreateOr(b.CreateShl(b.CreateAdd(exp, i32c(b, 112)), 23), b.CreateShl(frac, 13));
  // frac · 2^-24, exact (0 for ±0).
  Value* sub = b.CreateBitCast(b.CreateFMul(b.CreateUIToFP(frac, b.getFloatTy()),
                                            llvm::ConstantFP::get(b.getFloatTy(), 5.9604644775390625e-08)),
                               b.getInt32Ty());
  Value* bits = b.CreateSelect(b.CreateICmpEQ(exp, i32c(b, 0x1F)), special,
                               b.CreateSelect(b.CreateICmpEQ(exp, i32c(b, 0)), sub, normal));
  return b.CreateBitCast(b.CreateOr(bits, sign), b.getFloatTy());
}

// `x` rounded to bf16 (f16 when `f16`), nearest even, kept in f32: NaN becomes the quiet NaN of
// its sign, f16 overflows to ±inf and keeps subnormals (ir/float_format.cpp's rounding).
Value* round_half(IRBuilder<>& b, Value* x, bool f16) {
  llvm::Type* i32 = b.getInt32Ty();
  Value* u = b.CreateBitCast(x, i32);
  Value* sign = b.CreateAnd(u, i32c(b, 0x80000000u));
  Value* mag = b.CreateAnd(u, i32c(b, 0x7FFFFFFFu));
  Value* nan = b.CreateICmpUGT(mag, i32c(b, 0x7F800000u));
  Value* rounded;
  if (!f16) {
    // Drop 16 fraction bits, ties to even; a carry moves into the exponent (to inf at the top).
    Value* odd = b.CreateAnd(b.CreateLShr(mag, 16), i32c(b, 1));
    rounded = b.CreateAnd(b.CreateAdd(b.CreateAdd(mag, i32c(b, 0x7FFF)), odd), i32c(b, 0xFFFF0000u));
  } else {
    Value* odd = b.CreateAnd(b.CreateLShr(mag, 13), i32c(b, 1));
    Value* normal = b.CreateAnd(b.CreateAdd(b.CreateAdd(mag, i32c(b, 0xFFF)), odd), i32c(b, 0xFFFFE000u));
    // Below 2^-14: a multiple of 2^-24, the ulp of 0.5: (m + 0.5) - 0.5 rounds there, ties to
    // even, and the subtraction is exact.
    llvm::Type* f32 = b.getFloatTy();
    Value* half = llvm::ConstantFP::get(f32, 0.5);
    Value* sub = b.CreateBitCast(b.CreateFSub(b.CreateFAdd(b.CreateBitCast(mag, f32), half), half), i32);
    rounded = b.CreateSelect(b.CreateICmpUGE(mag, i32c(b, 0x477FF000u)), i32c(b, 0x7F800000u),
                             b.CreateSelect(b.CreateICmpULT(mag, i32c(b, 0x38800000u)), sub, normal));
  }
  rounded = b.CreateSelect(nan, i32c(b, 0x7FC00000u), rounded);
  return b.CreateBitCast(b.CreateOr(rounded, sign), b.getFloatTy());
}

// The bf16/f16 bits (i16) of `x`: one rounding, as the reference stores an f32 result.
Value* narrow_half(IRBuilder<>& b, Value* x, bool f16) {
  llvm::Type* i32 = b.getInt32Ty();
  Value* u = b.CreateBitCast(round_half(b, x, f16), i32);
  if (!f16) return b.CreateTrunc(b.CreateLShr(u, 16), b.getInt16Ty());
  // The rounded value is an f16 value: rebias a normal, count 2^-24 units of a subnormal.
  Value* sign = b.CreateLShr(b.CreateAnd(u, i32c(b, 0x80000000u)), 16);
  Value* mag = b.CreateAnd(u, i32c(b, 0x7FFFFFFFu));
  Value* normal = b.CreateSub(b.CreateLShr(mag, 13), i32c(b, 112u << 10));
  Value* units = b.CreateFPToUI(b.CreateFMul(b.CreateBitCast(mag, b.getFloatTy()),
                                             llvm::ConstantFP::get(b.getFloatTy(), 16777216.0)),
                                i32);
  Value* bits = b.CreateSelect(b.CreateICmpUGT(mag, i32c(b, 0x7F800000u)), i32c(b, 0x7E00),
                               b.CreateSelect(b.CreateICmpEQ(mag, i32c(b, 0x7F800000u)), i32c(b, 0x7C00),
                                              b.CreateSelect(b.CreateICmpULT(mag, i32c(b, 0x38800000u)), units, normal)));
  return b.CreateTrunc(b.CreateOr(bits, sign), b.getInt16Ty());
}

// The register value of storage `s` read at `ptr`.
Value* load(IRBuilder<>& b, Value* ptr, EwStorage s) {
  llvm::Type* t = memory_type(b.getContext(), s);
  Value* v = b.CreateAlignedLoad(t, ptr, llvm::MaybeAlign(1));
  if (s == EwStorage::kF32) return v;
  if (s == EwStorage::kBf16) return b.CreateBitCast(b.CreateShl(b.CreateZExt(v, b.getInt32Ty()), 16), b.getFloatTy());
  if (s == EwStorage::kF16) return widen_f16(b, v);
  if (s == EwStorage::kBool) return b.CreateICmpNE(v, llvm::ConstantInt::get(t, 0));
  if (s == EwStorage::kI64) return v;
  return is_unsigned(s) ? b.CreateZExt(v, b.getInt64Ty()) : b.CreateSExt(v, b.getInt64Ty());
}

void store(IRBuilder<>& b, Value* v, Value* ptr, EwStorage s) {
  llvm::Type* t = memory_type(b.getContext(), s);
  if (s == EwStorage::kBool) {
    v = b.CreateZExt(v, t);
  } else if (s == EwStorage::kBf16 || s == EwStorage::kF16) {
    v = narrow_half(b, v, s == EwStorage::kF16);
  } else if (s != EwStorage::kF32 && s != EwStorage::kI64) {
    v = b.CreateTrunc(v, t);
  }
  b.CreateAlignedStore(v, ptr, llvm::MaybeAlign(1));
}

// Bounds of an i64 register known from how it was made (a narrow load, a quantization), so
// that its arithmetic may run in i32 with the same results; nullopt when unknown.
std::optional<std::pair<int64_t, int64_t>> known_range(const EwProgram& p, uint8_t reg) {
  const EwInstr& e = p.code[reg];
  if (e.op == EwOp::kQuant) return std::make_pair(e.j, e.k);
  if (e.op != EwOp::kLoad) return std::nullopt;
  switch (p.inputs[e.input].storage) {
    case EwStorage::kI8: return std::make_pair(int64_t(-128), int64_t(127));
    case EwStorage::kU8: return std::make_pair(int64_t(0), int64_t(255));
    case EwStorage::kI16: return std::make_pair(int64_t(-32768), int64_t(32767));
    case EwStorage::kU16: return std::make_pair(int64_t(0), int64_t(65535));
    default: return std::nullopt;
  }
}

bool within(int64_t v, int64_t limit) { return v >= -limit && v <= limit; }

// The instruction `e` given the registers so far and the element's input values.
Value* emit(IRBuilder<>& b, Emitter& m, const EwProgram& p, const EwInstr& e, const std::vector<Value*>& r,
            const std::vector<Value*>& inputs) {
  llvm::Type* i64 = b.getInt64Ty();
  const bool f = e.type == EwType::kF32;
  Value* x = nullptr;
  Value* y = nullptr;
  if (e.op != EwOp::kLoad && e.op != EwOp::kConst) {
    x = r[e.a];
    y = r[e.b];
  }
  auto ci = [&](int64_t v) { return llvm::ConstantInt::get(i64, uint64_t(v), true); };
  switch (e.op) {
    case EwOp::kLoad: return inputs[e.input];
    case EwOp::kConst:
      if (f) return m.c(e.f);
      if (e.type == EwType::kBool) return b.getInt1(e.i != 0);
      return ci(e.i);
    case EwOp::kAdd: return f ? m.add(x, y) : b.CreateAdd(x, y);
    case EwOp::kSub: return f ? m.sub(x, y) : b.CreateSub(x, y);
    case EwOp::kMul: return f ? m.mul(x, y) : b.CreateMul(x, y);
    case EwOp::kDiv: return m.div(x, y);
    case EwOp::kMax: return f ? m.max_min(x, y, true) : m.select(b.CreateICmpSLT(x, y), y, x);
    case EwOp::kMin: return f ? m.max_min(x, y, false) : m.select(b.CreateICmpSLT(y, x), y, x);
    case EwOp::kPow: return m.pow(x, y);
    case EwOp::kEqual:
    case EwOp::kLess:
    case EwOp::kGreater: {
      const bool fl = p.code[e.a].type == EwType::kF32;
      if (e.op == EwOp::kEqual) return fl ? b.CreateFCmpOEQ(x, y) : b.CreateICmpEQ(x, y);
      if (e.op == EwOp::kLess) return fl ? b.CreateFCmpOLT(x, y) : b.CreateICmpSLT(x, y);
      return fl ? b.CreateFCmpOGT(x, y) : b.CreateICmpSGT(x, y);
    }
    case EwOp::kNot: return b.CreateNot(x);
    case EwOp::kSelect: return m.select(x, y, r[e.c]);
    case EwOp::kNeg: return f ? b.CreateFNeg(x) : b.CreateNeg(x);
    case EwOp::kSqrt: return m.unary(llvm::Intrinsic::sqrt, x);
    case EwOp::kAbs: return m.unary(llvm::Intrinsic::fabs, x);
    case EwOp::kSign:
      return m.select(b.CreateFCmpOGT(x, m.c(0.0f)), m.c(1.0f), m.select(b.CreateFCmpOLT(x, m.c(0.0f)), m.c(-1.0f), x));
    case EwOp::kFloor: return m.unary(llvm::Intrinsic::floor, x);
    case EwOp::kCeil: return m.unary(llvm::Intrinsic::ceil, x);
    case EwOp::kRoundEven: return m.unary(llvm::Intrinsic::roundeven, x);
    case EwOp::kRoundAway: return m.unary(llvm::Intrinsic::round, x);
    case EwOp::kRsqrt: {
      // In double, as the reference: one rounding to f32 at the end.
      llvm::Type* f64 = b.getDoubleTy();
      Value* s = b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, b.CreateFPExt(x, f64));
      return b.CreateFPTrunc(b.CreateFDiv(llvm::ConstantFP::get(f64, 1.0), s), b.getFloatTy());
    }
    case EwOp::kLog:
    case EwOp::kLog1p:
    case EwOp::kExpm1:
    case EwOp::kSin:
    case EwOp::kCos:
    case EwOp::kCbrt:
    case EwOp::kAsin:
    case EwOp::kAcos:
    case EwOp::kAtan:
    case EwOp::kAsinh:
    case EwOp::kAcosh:
    case EwOp::kAtanh: return m.call_unary(scalar_call_symbol(e.op), x);
    case EwOp::kRoundHalf: return round_half(b, x, e.flag != 0);
    case EwOp::kRecip: return m.div(m.c(1.0f), x);
    case EwOp::kExp: return m.exp(x);
    case EwOp::kTanh: return m.tanh(x);
    case EwOp::kErf: return m.erf(x);
    case EwOp::kGelu: return m.gelu(x, e.flag != 0);
    case EwOp::kLogistic: return m.logistic(x);
    case EwOp::kRelu: return m.select(b.CreateFCmpOLT(x, m.c(0.0f)), m.c(0.0f), x);
    case EwOp::kClamp:
      return m.select(b.CreateFCmpOLT(x, m.c(e.f)), m.c(e.f), m.select(b.CreateFCmpOGT(x, m.c(e.g)), m.c(e.g), x));
    case EwOp::kToF32: return b.CreateFPTrunc(b.CreateSIToFP(x, b.getDoubleTy()), b.getFloatTy());
    case EwOp::kToInt: {
      // In double, as the reference: trunc, clamp to [i, j], NaN -> 0.
      llvm::Type* f64 = b.getDoubleTy();
      Value* d = b.CreateFPExt(x, f64);
      Value* t = b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, d);
      Value* lo = llvm::ConstantFP::get(f64, double(e.i));
      Value* hi = llvm::ConstantFP::get(f64, double(e.j));
      t = m.select(b.CreateFCmpOLT(t, lo), lo, t);
      t = m.select(b.CreateFCmpOGT(t, hi), hi, t);
      t = m.select(b.CreateFCmpUNO(d, d), llvm::ConstantFP::get(f64, 0.0), t);
      return b.CreateFPToSI(t, i64);
    }
    case EwOp::kToBool:
      return p.code[e.a].type == EwType::kF32 ? b.CreateFCmpUNE(x, m.c(0.0f)) : b.CreateICmpNE(x, ci(0));
    case EwOp::kBoolTo: return f ? m.select(x, m.c(1.0f), m.c(0.0f)) : b.CreateZExt(x, i64);
    case EwOp::kWrap: {
      Value* shift = ci(64 - e.i);
      Value* up = b.CreateShl(x, shift);
      return e.flag ? b.CreateLShr(up, shift) : b.CreateAShr(up, shift);
    }
    case EwOp::kDequant: {
      // q - zp in i32 where it cannot overflow (narrow stored values): the same integer, so
      // the same rounding to f32, at twice the vector width.
      const auto range = known_range(p, e.a);
      if (range && within(range->first, 1 << 24) && within(range->second, 1 << 24) && within(e.i, 1 << 24)) {
        llvm::Type* i32 = b.getInt32Ty();
        Value* d = b.CreateSub(b.CreateTrunc(x, i32), llvm::ConstantInt::get(i32, uint64_t(e.i), true));
        return m.mul(b.CreateSIToFP(d, b.getFloatTy()), m.c(e.f));
      }
      return m.mul(b.CreateSIToFP(b.CreateSub(x, ci(e.i)), b.getFloatTy()), m.c(e.f));
    }
    case EwOp::kQuant:
      if (within(e.i, 1 << 24) && within(e.j, 1 << 24) && within(e.k, 1 << 24) && within(e.j - e.i, 1 << 24) &&
          within(e.k - e.i, 1 << 24)) {
        // The same result in f32 and i32 for bounds and zero points below 2^24 (exact in f32):
        // clamp(r + zp, lo, hi) = clamp(r, lo - zp, hi - zp) + zp, NaN -> clamp(zp, lo, hi).
        Value* t = m.unary(llvm::Intrinsic::roundeven, m.div(x, m.c(e.f)));
        t = m.select(m.is_nan(t), m.c(0.0f), t);
        t = m.select(b.CreateFCmpOLT(t, m.c(float(e.j - e.i))), m.c(float(e.j - e.i)), t);
        t = m.select(b.CreateFCmpOGT(t, m.c(float(e.k - e.i))), m.c(float(e.k - e.i)), t);
        llvm::Type* i32 = b.getInt32Ty();
        Value* q = b.CreateAdd(b.CreateFPToSI(t, i32), llvm::ConstantInt::get(i32, uint64_t(e.i), true));
        return b.CreateSExt(q, i64);
      }
      [[fallthrough]];
    case EwOp::kQuantVar: {
      // numerics::quantize_f32: rne(x / scale) (exact in f32), NaN -> zp, limited to ±2^40,
      // + zp, clamped.
      const bool var = e.op == EwOp::kQuantVar;
      Value* t = m.unary(llvm::Intrinsic::roundeven, m.div(x, var ? y : m.c(e.f)));
      t = m.select(b.CreateFCmpOLT(t, m.c(-0x1p40f)), m.c(-0x1p40f), t);
      t = m.select(b.CreateFCmpOGT(t, m.c(0x1p40f)), m.c(0x1p40f), t);
      Value* q = b.CreateAdd(b.CreateFPToSI(m.select(m.is_nan(t), m.c(0.0f), t), i64), var ? r[e.c] : ci(e.i));
      q = m.select(b.CreateICmpSLT(q, ci(e.j)), ci(e.j), q);
      return m.select(b.CreateICmpSGT(q, ci(e.k)), ci(e.k), q);
    }
  }
  return nullptr;
}

}  // namespace

const char* scalar_call_symbol(EwOp op) {
  switch (op) {
    case EwOp::kLog: return "qrt_numerics_log_f32";
    case EwOp::kLog1p: return "qrt_numerics_log1p_f32";
    case EwOp::kExpm1: return "qrt_numerics_expm1_f32";
    case EwOp::kSin: return "qrt_numerics_sin_f32";
    case EwOp::kCos: return "qrt_numerics_cos_f32";
    case EwOp::kCbrt: return "qrt_numerics_cbrt_f32";
    case EwOp::kAsin: return "qrt_numerics_asin_f32";
    case EwOp::kAcos: return "qrt_numerics_acos_f32";
    case EwOp::kAtan: return "qrt_numerics_atan_f32";
    case EwOp::kAsinh: return "qrt_numerics_asinh_f32";
    case EwOp::kAcosh: return "qrt_numerics_acosh_f32";
    case EwOp::kAtanh: return "qrt_numerics_atanh_f32";
    default: return nullptr;
  }
}

Status build_ew_function(llvm::Module& module, const std::string& name, const EwProgram& p) {
  if (std::string why = p.validate(); !why.empty()) return Status::error(p.name() + ": " + why);
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type* i8 = llvm::Type::getInt8Ty(ctx);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr}, false);
  llvm::Function* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addParamAttr(0, llvm::Attribute::NoAlias);
  fn->addParamAttr(0, llvm::Attribute::ReadOnly);

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* row_head = llvm::BasicBlock::Create(ctx, "row", fn);
  auto* body = llvm::BasicBlock::Create(ctx, "element", fn);
  auto* row_end = llvm::BasicBlock::Create(ctx, "row_end", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
  IRBuilder<> b(entry);
  Emitter m(b, module);
  Value* args = fn->getArg(0);
  auto field = [&](llvm::Type* t, int64_t offset) {
    return b.CreateLoad(t, b.CreateConstGEP1_64(i8, args, uint64_t(offset)));
  };
  const size_t inputs = p.inputs.size();
  std::vector<Value*> in_base(inputs), in_step(inputs);
  for (size_t k = 0; k < inputs; ++k) {
    in_base[k] = field(ptr, int64_t(8 * k));
    in_step[k] = field(i64, int64_t(64 + 8 * k));
  }
  Value* out_base = field(ptr, 128);
  Value* out_step = field(i64, 136);
  Value* n = field(i64, 144);
  Value* rows = field(i64, 152);
  Value* zero = b.getInt64(0);
  b.CreateCondBr(b.CreateAnd(b.CreateICmpSGT(n, zero), b.CreateICmpSGT(rows, zero)), row_head, done);

  // Per row: base pointers, and the values of scalar inputs (one per row).
  b.SetInsertPoint(row_head);
  llvm::PHINode* row = b.CreatePHI(i64, 2, "r");
  row->addIncoming(zero, entry);
  std::vector<Value*> in_row(inputs), scalar_value(inputs, nullptr);
  for (size_t k = 0; k < inputs; ++k) {
    in_row[k] = b.CreateGEP(i8, in_base[k], b.CreateMul(row, in_step[k]));
    if (p.inputs[k].scalar) scalar_value[k] = load(b, in_row[k], p.inputs[k].storage);
  }
  Value* out_row = b.CreateGEP(i8, out_base, b.CreateMul(row, out_step));
  b.CreateBr(body);

  b.SetInsertPoint(body);
  llvm::PHINode* e = b.CreatePHI(i64, 2, "e");
  e->addIncoming(zero, row_head);
  std::vector<Value*> element(inputs);
  for (size_t k = 0; k < inputs; ++k) {
    if (p.inputs[k].scalar) {
      element[k] = scalar_value[k];
    } else {
      llvm::Type* t = memory_type(ctx, p.inputs[k].storage);
      element[k] = load(b, b.CreateGEP(t, in_row[k], e), p.inputs[k].storage);
    }
  }
  std::vector<Value*> regs;
  for (const EwInstr& instr : p.code) regs.push_back(emit(b, m, p, instr, regs, element));
  store(b, regs[p.result], b.CreateGEP(memory_type(ctx, p.out), out_row, e), p.out);
  Value* next = b.CreateAdd(e, b.getInt64(1));
  e->addIncoming(next, body);
  b.CreateCondBr(b.CreateICmpSLT(next, n), body, row_end);

  b.SetInsertPoint(row_end);
  Value* next_row = b.CreateAdd(row, b.getInt64(1));
  row->addIncoming(next_row, row_end);
  b.CreateCondBr(b.CreateICmpSLT(next_row, rows), row_head, done);

  b.SetInsertPoint(done);
  b.CreateRetVoid();

  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyFunction(*fn, &os)) return Status::error("generated IR for " + p.name() + " is invalid: " + os.str());
  return Status::ok();
}

}  // namespace qrt::jit::llvm_ir
