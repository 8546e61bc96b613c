// qrt — element-wise programs: the ISA-free description of a loop that reads up to
// kEwMaxInputs tensors element by element, computes a short chain of operations in registers
// and writes one tensor. A single float op (add, erf, cast, where ...) is a program of two or
// three instructions; a fused region is a longer one. Backends compile programs (the LLVM ORC
// backend vectorizes them for the level's CPU); the scalar twin (jit/ref/ew_twin.cpp)
// interprets them. Every instruction is defined by the reference formula it reproduces bit
// for bit (docs/numerics.md), so every backend returns the reference's bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/float_format.h"

namespace qrt::jit {

/// Inputs a program can read.
constexpr size_t kEwMaxInputs = 8;

/// The value type of a register. Integers of every width compute in i64 (the reference's
/// int64 arithmetic, wrapped to the stored width on store); booleans are i1.
enum class EwType : uint8_t { kF32, kI64, kBool };

/// How an input or the output is laid out in memory, one element per index.
/// bf16 and f16 load into f32 registers exactly and store rounded to nearest even (f16
/// overflowing to ±inf, subnormals kept), as the reference stores an f32 result.
enum class EwStorage : uint8_t { kF32, kI8, kU8, kI16, kU16, kI32, kU32, kI64, kBool, kBf16, kF16 };

/// Bytes per element of a storage.
unsigned ew_storage_bytes(EwStorage s);
/// Whether a storage holds floats (f32, bf16, f16: all load into f32 registers).
bool ew_storage_is_float(EwStorage s);
/// The register type a storage loads into (and stores from).
EwType ew_storage_type(EwStorage s);
/// The float kind a float storage holds: f32, bf16 or f16 (ew_storage_is_float(s) holds).
FloatKind ew_storage_float_kind(EwStorage s);
/// The storage's name in program names, e.g. "f32", "u8", "bool".
const char* ew_storage_name(EwStorage s);

/// What one instruction computes. Each defines its result from its operand registers a, b, c
/// exactly as the reference does (names of the reference formulas in brackets).
enum class EwOp : uint8_t {
  kLoad,      ///< input `input`'s element (integers sign- or zero-extended to i64)
  kConst,     ///< `f` (f32) or `i` (i64) or `i != 0` (bool)
  kAdd,       ///< a + b (f32; i64 wrapping)
  kSub,       ///< a - b
  kMul,       ///< a * b
  kDiv,       ///< a / b (f32 only)
  kMax,       ///< NaN if either is NaN, else (a < b ? b : a)
  kMin,       ///< NaN if either is NaN, else (b < a ? b : a)
  kPow,       ///< numerics::pow_f32(a, b)
  kEqual,     ///< a == b -> bool (ordered for f32)
  kLess,      ///< a < b -> bool (signed i64)
  kGreater,   ///< a > b -> bool
  kNot,       ///< !a (bool)
  kSelect,    ///< a ? b : c (a bool)
  kNeg,       ///< -a (f32 sign flip; i64 wrapping)
  kSqrt,      ///< sqrt(a), correctly rounded
  kRecip,     ///< 1.0f / a
  kExp,       ///< numerics::exp_f32
  kTanh,      ///< numerics::tanh_f32
  kErf,       ///< numerics::erf_f32
  kGelu,      ///< numerics::gelu_f32(a, flag != 0 (tanh form))
  kLogistic,  ///< numerics::logistic_f32
  kRelu,      ///< a < 0 ? +0 : a (-0 and NaN pass)
  kClamp,     ///< a < f ? f : a > g ? g : a (f32; NaN passes)
  kToF32,     ///< f32(double(a)) from i64 (one rounding to double, one to f32, as the reference)
  kToInt,     ///< f32 -> i64: trunc toward zero, clamped to [i, j], NaN -> 0
  kToBool,    ///< a != 0 (f32: NaN is true; i64)
  kBoolTo,    ///< bool -> the result type (1 / 0, or 1.0f / 0.0f)
  kWrap,      ///< i64 -> i64 wrapped to `i` bits, sign-extended (flag: zero-extended)
  kDequant,   ///< f32(a - i) * f (numerics::dequantize_f32: zero point i, scale f)
  kQuant,     ///< clamp(rne(a / f) + i, j, k) (numerics::quantize_f32; NaN -> clamp(i))
  kQuantVar,  ///< kQuant with the scale in register b (f32) and the zero point in c (i64)
  kAbs,       ///< |a| (f32: the sign bit cleared)
  kSign,      ///< numerics::sign_f32
  kFloor,     ///< floor(a)
  kCeil,      ///< ceil(a)
  kRoundEven, ///< numerics::round_half_even
  kRoundAway, ///< the nearest integer, ties away from zero
  kRsqrt,     ///< numerics::rsqrt_f32
  kLog,       ///< numerics::log_f32
  kLog1p,     ///< numerics::log1p_f32
  kExpm1,     ///< numerics::expm1_f32
  kSin,       ///< numerics::sin_f32
  kCos,       ///< numerics::cos_f32
  kCbrt,      ///< numerics::cbrt_f32
  kAsin,      ///< numerics::asin_f32
  kAcos,      ///< numerics::acos_f32
  kAtan,      ///< numerics::atan_f32
  kAsinh,     ///< numerics::asinh_f32
  kAcosh,     ///< numerics::acosh_f32
  kAtanh,     ///< numerics::atanh_f32
  kRoundHalf, ///< a rounded to bf16 (flag 0) or f16 (flag 1), kept in f32: what the reference
              ///< stores for a bf16/f16 result that a fused region's next op reads
};

/// One instruction: its result is the register with the instruction's index.
struct EwInstr {
  EwOp op = EwOp::kConst;
  EwType type = EwType::kF32;  ///< the result's type
  uint8_t a = 0, b = 0, c = 0; ///< operand registers (earlier instructions)
  uint8_t input = 0;           ///< kLoad: the input
  uint8_t flag = 0;            ///< kGelu: tanh form; kWrap: zero-extend; kRoundHalf: f16
  float f = 0.0f, g = 0.0f;    ///< kConst, kClamp, kDequant, kQuant parameters
  int64_t i = 0, j = 0, k = 0; ///< kConst, kToInt, kWrap, kDequant, kQuant parameters
};

/// One input: its storage and whether it is a single value repeated along the rows (stride
/// 0 within a row; EwArgs steps it per row).
struct EwInput {
  EwStorage storage = EwStorage::kF32;
  bool scalar = false;
};

/// A whole program: inputs, straight-line code, and the register stored to the output.
struct EwProgram {
  std::vector<EwInput> inputs;
  std::vector<EwInstr> code;
  EwStorage out = EwStorage::kF32;
  uint8_t result = 0;  ///< the register the output stores

  /// A canonical text of every field: equal keys mean identical code (the program cache key).
  std::string key() const;
  /// A short readable name, e.g. "f32_f32_f32_add" or "f32_f32_ew3(sub,mul,erf)".
  std::string name() const;
  /// "" when the program is well formed (operands defined before use, types agree, inputs in
  /// range, at most kEwMaxInputs inputs), else what is wrong.
  std::string validate() const;
};

/// The ABI of a compiled program: `rows` rows of `n` elements. Input k's element e of row r
/// is at in[k] + r·in_step[k] + (scalar ? 0 : e·bytes); the output's at out + r·out_step +
/// e·bytes (steps in bytes). Called as fn(&args, &program) like every micro-kernel; generated
/// code ignores the program, the twin interprets it.
struct EwArgs {
  const void* in[kEwMaxInputs];
  int64_t in_step[kEwMaxInputs];
  void* out;
  int64_t out_step;
  int64_t n;
  int64_t rows;
};

/// A compiled program's entry: fn(args, program).
using EwFn = void (*)(const EwArgs* args, const EwProgram* program);

}  // namespace qrt::jit
