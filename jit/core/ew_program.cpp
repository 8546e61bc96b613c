// qrt — element-wise programs (see ew_program.h): storage facts, the cache key, names and
// the well-formedness check every backend relies on.
#include "jit/core/ew_program.h"

#include <cstring>

namespace qrt::jit {

unsigned ew_storage_bytes(EwStorage s) {
  switch (s) {
    case EwStorage::kI8:
    case EwStorage::kU8:
    case EwStorage::kBool: return 1;
    case EwStorage::kI16:
    case EwStorage::kU16:
    case EwStorage::kBf16:
    case EwStorage::kF16: return 2;
    case EwStorage::kF32:
    case EwStorage::kI32:
    case EwStorage::kU32: return 4;
    case EwStorage::kI64: return 8;
  }
  return 0;
}

bool ew_storage_is_float(EwStorage s) { return s == EwStorage::kF32 || s == EwStorage::kBf16 || s == EwStorage::kF16; }

FloatKind ew_storage_float_kind(EwStorage s) {
  return s == EwStorage::kBf16 ? FloatKind::kBF16 : s == EwStorage::kF16 ? FloatKind::kF16 : FloatKind::kF32;
}

EwType ew_storage_type(EwStorage s) {
  if (ew_storage_is_float(s)) return EwType::kF32;
  return s == EwStorage::kBool ? EwType::kBool : EwType::kI64;
}

const char* ew_storage_name(EwStorage s) {
  switch (s) {
    case EwStorage::kF32: return "f32";
    case EwStorage::kI8: return "i8";
    case EwStorage::kU8: return "u8";
    case EwStorage::kI16: return "i16";
    case EwStorage::kU16: return "u16";
    case EwStorage::kI32: return "i32";
    case EwStorage::kU32: return "u32";
    case EwStorage::kI64: return "i64";
    case EwStorage::kBool: return "bool";
    case EwStorage::kBf16: return "bf16";
    case EwStorage::kF16: return "f16";
  }
  return "?";
}

namespace {

const char* op_name(EwOp op) {
  static const char* const names[] = {"load", "const", "add",     "sub",  "mul",    "div",  "max",     "min",
                                      "pow",  "equal", "less",    "greater", "not", "select", "neg",  "sqrt",
                                      "recip", "exp",  "tanh",    "erf",  "gelu",   "logistic", "relu", "clamp",
                                      "tof32", "toint", "tobool", "boolto", "wrap", "dequant", "quant", "quantvar",
                                      "abs", "sign", "floor", "ceil", "roundeven", "roundaway", "rsqrt",
                                      "log", "log1p", "expm1", "sin", "cos", "cbrt",
                                      "asin", "acos", "atan", "asinh", "acosh", "atanh", "roundhalf"};
  static_assert(sizeof(names) / sizeof(names[0]) == size_t(EwOp::kRoundHalf) + 1, "one name per op");
  return names[size_t(op)];
}

// Operand registers each op reads (0..3).
unsigned arity(EwOp op) {
  switch (op) {
    case EwOp::kLoad:
    case EwOp::kConst: return 0;
    case EwOp::kAdd:
    case EwOp::kSub:
    case EwOp::kMul:
    case EwOp::kDiv:
    case EwOp::kMax:
    case EwOp::kMin:
    case EwOp::kPow:
    case EwOp::kEqual:
    case EwOp::kLess:
    case EwOp::kGreater: return 2;
    case EwOp::kSelect:
    case EwOp::kQuantVar: return 3;
    default: return 1;
  }
}

std::string bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return std::to_string(u);
}

}  // namespace

std::string EwProgram::key() const {
  std::string k;
  for (const EwInput& in : inputs) k += std::string(ew_storage_name(in.storage)) + (in.scalar ? "s," : "v,");
  k += "->" + std::string(ew_storage_name(out)) + ":r" + std::to_string(result) + ";";
  for (const EwInstr& e : code) {
    k += std::string(op_name(e.op)) + "/" + std::to_string(int(e.type)) + "/" + std::to_string(e.a) + "," +
         std::to_string(e.b) + "," + std::to_string(e.c) + "/" + std::to_string(e.input) + "/" + std::to_string(e.flag) +
         "/" + bits_of(e.f) + "," + bits_of(e.g) + "/" + std::to_string(e.i) + "," + std::to_string(e.j) + "," +
         std::to_string(e.k) + ";";
  }
  return k;
}

std::string EwProgram::name() const {
  std::string n;
  for (const EwInput& in : inputs) n += std::string(ew_storage_name(in.storage)) + "_";
  n += ew_storage_name(out);
  std::string ops;
  size_t count = 0;
  for (const EwInstr& e : code) {
    if (e.op == EwOp::kLoad || e.op == EwOp::kConst) continue;
    ops += (count++ ? "," : "") + std::string(op_name(e.op));
  }
  if (count == 0) return n + "_copy";
  return count == 1 ? n + "_" + ops : n + "_ew" + std::to_string(count) + "(" + ops + ")";
}

std::string EwProgram::validate() const {
  if (inputs.size() > kEwMaxInputs) return "more than " + std::to_string(kEwMaxInputs) + " inputs";
  if (code.empty() || code.size() > 255) return "the program must have 1 to 255 instructions";
  auto type_name = [](EwType t) { return t == EwType::kF32 ? "f32" : t == EwType::kI64 ? "i64" : "bool"; };
  for (size_t r = 0; r < code.size(); ++r) {
    const EwInstr& e = code[r];
    const std::string at = "instruction " + std::to_string(r) + " (" + op_name(e.op) + ")";
    const uint8_t operands[3] = {e.a, e.b, e.c};
    for (unsigned o = 0; o < arity(e.op); ++o) {
      if (operands[o] >= r) return at + " reads register " + std::to_string(operands[o]) + " before it is defined";
    }
    auto type_of = [&](unsigned o) { return code[operands[o]].type; };
    auto want = [&](unsigned o, EwType t) -> std::string {
      if (type_of(o) == t) return "";
      return at + " operand " + std::to_string(o) + " is " + type_name(type_of(o)) + ", expected " + type_name(t);
    };
    std::string why;
    switch (e.op) {
      case EwOp::kLoad:
        if (e.input >= inputs.size()) return at + " reads input " + std::to_string(e.input) + " of " + std::to_string(inputs.size());
        if (ew_storage_type(inputs[e.input].storage) != e.type) return at + " has the wrong type for its input";
        break;
      case EwOp::kConst: break;
      case EwOp::kAdd:
      case EwOp::kSub:
      case EwOp::kMul:
      case EwOp::kMax:
      case EwOp::kMin:
        if (e.type == EwType::kBool) return at + " cannot compute on bool";
        if (!(why = want(0, e.type)).empty() || !(why = want(1, e.type)).empty()) return why;
        break;
      case EwOp::kDiv:
      case EwOp::kPow:
        if (e.type != EwType::kF32) return at + " is defined on f32 only";
        if (!(why = want(0, e.type)).empty() || !(why = want(1, e.type)).empty()) return why;
        break;
      case EwOp::kEqual:
      case EwOp::kLess:
      case EwOp::kGreater:
        if (e.type != EwType::kBool || type_of(0) == EwType::kBool) return at + " compares numbers into bool";
        if (!(why = want(1, type_of(0))).empty()) return why;
        break;
      case EwOp::kNot:
        if (e.type != EwType::kBool) return at + " yields bool";
        if (!(why = want(0, EwType::kBool)).empty()) return why;
        break;
      case EwOp::kSelect:
        if (!(why = want(0, EwType::kBool)).empty() || !(why = want(1, e.type)).empty() || !(why = want(2, e.type)).empty()) {
          return why;
        }
        break;
      case EwOp::kNeg:
        if (e.type == EwType::kBool) return at + " cannot negate bool";
        if (!(why = want(0, e.type)).empty()) return why;
        break;
      case EwOp::kToF32:
        if (e.type != EwType::kF32) return at + " yields f32";
        if (!(why = want(0, EwType::kI64)).empty()) return why;
        break;
      case EwOp::kToInt:
      case EwOp::kQuant:
        if (e.type != EwType::kI64) return at + " yields i64";
        if (!(why = want(0, EwType::kF32)).empty()) return why;
        if (e.op == EwOp::kToInt ? e.i > e.j : e.j > e.k) return at + " has empty bounds";
        if (e.op == EwOp::kQuant && !(e.f > 0.0f)) return at + " needs a positive scale";
        break;
      case EwOp::kQuantVar:
        if (e.type != EwType::kI64 || e.j > e.k) return at + " yields i64 within bounds j <= k";
        if (!(why = want(0, EwType::kF32)).empty() || !(why = want(1, EwType::kF32)).empty() ||
            !(why = want(2, EwType::kI64)).empty()) {
          return why;
        }
        break;
      case EwOp::kToBool:
        if (e.type != EwType::kBool || type_of(0) == EwType::kBool) return at + " turns a number into bool";
        break;
      case EwOp::kBoolTo:
        if (e.type == EwType::kBool) return at + " turns bool into a number";
        if (!(why = want(0, EwType::kBool)).empty()) return why;
        break;
      case EwOp::kWrap:
        if (e.type != EwType::kI64 || e.i < 1 || e.i > 64) return at + " wraps i64 to 1..64 bits";
        if (!(why = want(0, EwType::kI64)).empty()) return why;
        break;
      case EwOp::kDequant:
        if (e.type != EwType::kF32) return at + " yields f32";
        if (!(why = want(0, EwType::kI64)).empty()) return why;
        break;
      case EwOp::kRoundHalf:
        if (e.type != EwType::kF32 || e.flag > 1) return at + " rounds f32 to bf16 (flag 0) or f16 (flag 1)";
        if (!(why = want(0, EwType::kF32)).empty()) return why;
        break;
      default:  // the f32 unary functions
        if (e.type != EwType::kF32) return at + " is defined on f32 only";
        if (!(why = want(0, EwType::kF32)).empty()) return why;
        break;
    }
  }
  if (result >= code.size()) return "the result register " + std::to_string(result) + " does not exist";
  if (code[result].type != ew_storage_type(out)) {
    return std::string("the result is ") + type_name(code[result].type) + ", the output stores " + ew_storage_name(out);
  }
  return "";
}

}  // namespace qrt::jit
