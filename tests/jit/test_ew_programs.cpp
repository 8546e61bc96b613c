// Tests: element-wise programs. Every program backend at the level under test (LLVM) returns
// the scalar twin's bytes on random programs and special values; the compiled f32 functions
// equal qrt's numerics functions on a sweep of the whole f32 line; every op the program family
// covers matches the reference interpreter through kernel selection, with broadcasting.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "ir/float_format.h"
#include "ir/numerics.h"
#include "jit/core/code_cache.h"
#include "jit/kernel_list.h"
#include "jit/llvm/llvm_backend.h"
#include "jit/ref/twins.h"
#include "ew_test_util.h"

using namespace qrt::jit;
using namespace qrt_test;

namespace {

EwProgram random_program(std::mt19937& rng, size_t length) {
  EwProgram p;
  static const EwStorage storages[] = {EwStorage::kF32, EwStorage::kF32, EwStorage::kI8,  EwStorage::kU8, EwStorage::kI16,
                                       EwStorage::kU16, EwStorage::kI32, EwStorage::kU32, EwStorage::kI64, EwStorage::kBool,
                                       EwStorage::kBf16, EwStorage::kF16};
  const size_t inputs = 1 + rng() % 4;
  for (size_t k = 0; k < inputs; ++k) {
    p.inputs.push_back({storages[rng() % 12], rng() % 4 == 0});
    EwInstr e;
    e.op = EwOp::kLoad;
    e.input = uint8_t(k);
    e.type = ew_storage_type(p.inputs[k].storage);
    p.code.push_back(e);
  }
  auto regs_of = [&](EwType t) {
    std::vector<uint8_t> r;
    for (size_t i = 0; i < p.code.size(); ++i) {
      if (p.code[i].type == t) r.push_back(uint8_t(i));
    }
    return r;
  };
  auto any = [&](EwType t) -> int {
    auto r = regs_of(t);
    return r.empty() ? -1 : r[rng() % r.size()];
  };
  for (size_t step = 0; step < length; ++step) {
    EwInstr e;
    const int f = any(EwType::kF32), i = any(EwType::kI64), b = any(EwType::kBool);
    const int f2 = any(EwType::kF32), i2 = any(EwType::kI64);
    switch (rng() % 16) {
      case 0:
      case 1: {  // f32 arithmetic
        if (f < 0) continue;
        static const EwOp ops[] = {EwOp::kAdd, EwOp::kSub, EwOp::kMul, EwOp::kDiv, EwOp::kMax, EwOp::kMin, EwOp::kPow};
        e = {ops[rng() % 7], EwType::kF32, uint8_t(f), uint8_t(f2)};
        break;
      }
      case 2: {  // i64 arithmetic
        if (i < 0) continue;
        static const EwOp ops[] = {EwOp::kAdd, EwOp::kSub, EwOp::kMul, EwOp::kMax, EwOp::kMin, EwOp::kNeg};
        e = {ops[rng() % 6], EwType::kI64, uint8_t(i), uint8_t(i2)};
        break;
      }
      case 3:
      case 4: {  // f32 functions
        if (f < 0) continue;
        static const EwOp ops[] = {EwOp::kExp,  EwOp::kTanh,  EwOp::kErf,  EwOp::kGelu,  EwOp::kLogistic,   EwOp::kSqrt,
                                   EwOp::kRecip, EwOp::kNeg, EwOp::kRelu, EwOp::kClamp, EwOp::kRoundHalf, EwOp::kRoundHalf};
        e = {ops[rng() % 12], EwType::kF32, uint8_t(f)};
        e.flag = uint8_t(rng() % 2);
        e.f = special_f32(rng);
        e.g = e.f + std::abs(special_f32(rng));
        break;
      }
      case 5: {  // comparisons
        const bool on_f = rng() % 2 && f >= 0;
        if (!on_f && i < 0) continue;
        static const EwOp ops[] = {EwOp::kEqual, EwOp::kLess, EwOp::kGreater};
        e = {ops[rng() % 3], EwType::kBool, uint8_t(on_f ? f : i), uint8_t(on_f ? f2 : i2)};
        break;
      }
      case 6: {  // select
        const EwType t = rng() % 2 ? EwType::kF32 : EwType::kI64;
        const int x = any(t), y = any(t);
        if (b < 0 || x < 0) continue;
        e = {EwOp::kSelect, t, uint8_t(b), uint8_t(x), uint8_t(y)};
        break;
      }
      case 7:
        if (b < 0) continue;
        e = {rng() % 2 ? EwOp::kNot : EwOp::kBoolTo, rng() % 2 ? EwType::kBool : EwType::kF32, uint8_t(b)};
        if (e.op == EwOp::kBoolTo && e.type == EwType::kBool) e.type = EwType::kI64;
        if (e.op == EwOp::kNot) e.type = EwType::kBool;
        break;
      case 8:  // conversions
        if (f >= 0 && rng() % 2) {
          e = {EwOp::kToInt, EwType::kI64, uint8_t(f)};
          const int bits = 8 << (rng() % 3);
          e.i = rng() % 2 ? 0 : -(int64_t(1) << (bits - 1));
          e.j = e.i == 0 ? (int64_t(1) << bits) - 1 : (int64_t(1) << (bits - 1)) - 1;
        } else if (i >= 0) {
          e = {rng() % 2 ? EwOp::kToF32 : EwOp::kToBool, EwType::kF32, uint8_t(i)};
          if (e.op == EwOp::kToBool) e.type = EwType::kBool;
        } else {
          continue;
        }
        break;
      case 9:
        if (i < 0) continue;
        e = {EwOp::kWrap, EwType::kI64, uint8_t(i)};
        e.i = 1 + int64_t(rng() % 40);
        e.flag = uint8_t(rng() % 2);
        break;
      case 10:  // quantization
        if (f >= 0 && i >= 0 && rng() % 3 == 0) {  // scale and zero point in registers
          e = {EwOp::kQuantVar, EwType::kI64, uint8_t(f), uint8_t(f2), uint8_t(i)};
          e.j = rng() % 2 ? -128 : 0;
          e.k = e.j + 255;
        } else if (f >= 0 && rng() % 2) {
          e = {EwOp::kQuant, EwType::kI64, uint8_t(f)};
          e.f = std::pow(10.0f, float(int(rng() % 7) - 4));
          e.i = int64_t(rng() % 256) - 128;
          e.j = rng() % 2 ? -128 : 0;
          e.k = e.j + 255;
          if (rng() % 4 == 0) {  // 32-bit storage and a far zero point (the i64 path)
            e.i = int64_t(1) << 30;
            e.j = -(int64_t(1) << 31);
            e.k = (int64_t(1) << 31) - 1;
          }
        } else if (i >= 0) {
          e = {EwOp::kDequant, EwType::kF32, uint8_t(i)};
          e.f = std::pow(10.0f, float(int(rng() % 7) - 4));
          e.i = int64_t(rng() % 256) - 128;
        } else {
          continue;
        }
        break;
      case 11:
        e = {EwOp::kConst, rng() % 2 ? EwType::kF32 : EwType::kI64};
        e.f = special_f32(rng);
        e.i = special_int(rng);
        break;
      default: {  // the functions most models use, more often
        if (f < 0) continue;
        static const EwOp ops[] = {EwOp::kErf, EwOp::kGelu, EwOp::kExp, EwOp::kTanh};
        e = {ops[rng() % 4], EwType::kF32, uint8_t(f)};
        e.flag = uint8_t(rng() % 2);
        break;
      }
    }
    p.code.push_back(e);
  }
  p.result = uint8_t(p.code.size() - 1);
  const EwType t = p.code[p.result].type;
  static const EwStorage floats[] = {EwStorage::kF32, EwStorage::kF32, EwStorage::kBf16, EwStorage::kF16};
  p.out = t == EwType::kF32 ? floats[rng() % 4] : t == EwType::kBool ? EwStorage::kBool : storages[2 + rng() % 7];
  return p;
}

// Random bytes for `count` elements of storage `s`, special values included.
std::vector<uint8_t> random_elements(std::mt19937& rng, EwStorage s, size_t count) {
  const unsigned bytes = ew_storage_bytes(s);
  std::vector<uint8_t> v(count * bytes);
  for (size_t i = 0; i < count; ++i) {
    if (s == EwStorage::kF32) {
      const float f = special_f32(rng);
      std::memcpy(&v[i * 4], &f, 4);
    } else if (s == EwStorage::kBool) {
      v[i] = rng() % 2;
    } else if (s == EwStorage::kBf16 || s == EwStorage::kF16) {
      // Any pattern (NaNs, infinities, subnormals), or a special f32 value rounded to the type.
      const uint16_t h = rng() % 2 ? uint16_t(rng())
                                   : uint16_t(qrt::float_kind_bits(double(special_f32(rng)),
                                                                   ew_storage_float_kind(s)));
      std::memcpy(&v[i * 2], &h, 2);
    } else {
      const int64_t x = special_int(rng);
      std::memcpy(&v[i * bytes], &x, bytes);
    }
  }
  return v;
}

// Runs `program` on `code` and on the twin over `rows` rows of `n` (rows stepped with a gap)
// and checks the bytes agree.
void check_against_twin(std::mt19937& rng, const EwProgram& p, const CompiledKernel& code, int64_t n, int64_t rows) {
  std::vector<std::vector<uint8_t>> inputs;
  EwArgs args{};
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    const unsigned bytes = ew_storage_bytes(p.inputs[k].storage);
    const int64_t row_elems = p.inputs[k].scalar ? 1 : n + 3;  // a gap between rows
    inputs.push_back(random_elements(rng, p.inputs[k].storage, size_t(row_elems * rows)));
    args.in[k] = inputs.back().data();
    args.in_step[k] = row_elems * bytes;
  }
  const unsigned out_bytes = ew_storage_bytes(p.out);
  std::vector<uint8_t> got(size_t((n + 1) * rows) * out_bytes, 0xA5), want = got;
  args.out = got.data();
  args.out_step = (n + 1) * out_bytes;
  args.n = n;
  args.rows = rows;
  reinterpret_cast<EwFn>(const_cast<void*>(code.entry()))(&args, &p);
  args.out = want.data();
  twin_ew_program(&args, &p);
  size_t diff = got.size();
  for (size_t i = 0; i < got.size() && diff == got.size(); ++i) {
    if (got[i] == want[i]) continue;
    if (p.out == EwStorage::kF32) {  // any NaN equals any NaN (docs/numerics.md)
      float a, b;
      std::memcpy(&a, &got[i / 4 * 4], 4);
      std::memcpy(&b, &want[i / 4 * 4], 4);
      if (std::isnan(a) && std::isnan(b)) {
        i = i / 4 * 4 + 3;
        continue;
      }
    }
    if (p.out == EwStorage::kBf16 || p.out == EwStorage::kF16) {
      uint16_t a, b;
      std::memcpy(&a, &got[i / 2 * 2], 2);
      std::memcpy(&b, &want[i / 2 * 2], 2);
      const qrt::FloatKind kind = ew_storage_float_kind(p.out);
      if (std::isnan(qrt::float_kind_from_bits(a, kind)) && std::isnan(qrt::float_kind_from_bits(b, kind))) {
        i = i / 2 * 2 + 1;
        continue;
      }
    }
    diff = i;
  }
  CHECK_MESSAGE(diff == got.size(), "program " << p.name() << " differs from its twin at byte " << diff << " (n " << n
                                               << ", rows " << rows << ")\n" << p.key());
}

}  // namespace

TEST_CASE("compiled element-wise programs return the scalar twin's bytes") {
  const auto backends = program_backends();
  if (backends.empty()) {
    MESSAGE("no program compiler at " << qrt_test::test_isa_name() << " (LLVM not built or not available)");
    return;
  }
  std::mt19937 rng(91);
  int programs = 0;
  for (const Backend* b : backends) {
    for (int round = 0; round < 60; ++round) {
      const EwProgram p = random_program(rng, 1 + rng() % 12);
      REQUIRE_MESSAGE(p.validate() == "", p.validate() << "\n" << p.key());
      REQUIRE(b->program_why_not(p) == "");
      auto code = b->compile_program(p);
      REQUIRE_MESSAGE(code.is_ok(), code.status().to_string());
      for (int64_t n : {1, 7, 16, 67}) check_against_twin(rng, p, **code, n, 1 + int64_t(rng() % 3));
      ++programs;
    }
  }
  MESSAGE(programs << " random programs compiled at " << qrt_test::test_isa_name());
}

TEST_CASE("compiled f32 functions equal qrt's numerics functions over the f32 line") {
  const auto backends = program_backends();
  if (backends.empty()) return;
  // Every 1021st bit pattern (4.2 million values of both signs, NaNs and infinities included;
  // each level of each CI tree runs this, 10 s at every 509th) plus the exact branch edges.
  std::vector<float> xs;
  for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 1021) {
    float f;
    const uint32_t bits = uint32_t(u);
    std::memcpy(&f, &bits, 4);
    xs.push_back(f);
  }
  for (float edge : {0.5f, 0.625f, 4.0f, 9.0f, 88.72283935546875f, -103.972084045410156f, -87.33654f, 0.0f, -0.0f}) {
    for (float x = edge, k = 0; k < 64; ++k, x = std::nextafter(x, INFINITY)) xs.push_back(x), xs.push_back(-x);
  }
  struct Fn {
    EwOp op;
    uint8_t flag;
    float (*ref)(float);
  };
  const Fn fns[] = {{EwOp::kExp, 0, qrt::numerics::exp_f32},
                    {EwOp::kTanh, 0, qrt::numerics::tanh_f32},
                    {EwOp::kErf, 0, qrt::numerics::erf_f32},
                    {EwOp::kLogistic, 0, qrt::numerics::logistic_f32},
                    {EwOp::kGelu, 0, [](float x) { return qrt::numerics::gelu_f32(x, false); }},
                    {EwOp::kGelu, 1, [](float x) { return qrt::numerics::gelu_f32(x, true); }},
                    {EwOp::kLog, 0, qrt::numerics::log_f32},
                    {EwOp::kLog1p, 0, qrt::numerics::log1p_f32},
                    {EwOp::kExpm1, 0, qrt::numerics::expm1_f32},
                    {EwOp::kSin, 0, qrt::numerics::sin_f32},
                    {EwOp::kCos, 0, qrt::numerics::cos_f32},
                    {EwOp::kCbrt, 0, qrt::numerics::cbrt_f32},
                    {EwOp::kAsin, 0, qrt::numerics::asin_f32},
                    {EwOp::kAcos, 0, qrt::numerics::acos_f32},
                    {EwOp::kAtan, 0, qrt::numerics::atan_f32},
                    {EwOp::kAsinh, 0, qrt::numerics::asinh_f32},
                    {EwOp::kAcosh, 0, qrt::numerics::acosh_f32},
                    {EwOp::kAtanh, 0, qrt::numerics::atanh_f32}};
  for (const Backend* b : backends) {
    for (const Fn& fn : fns) {
      EwProgram p;
      p.inputs = {{EwStorage::kF32, false}};
      EwInstr load;
      load.op = EwOp::kLoad;
      EwInstr f;
      f.op = fn.op;
      f.flag = fn.flag;
      p.code = {load, f};
      p.result = 1;
      auto code = b->compile_program(p);
      REQUIRE_MESSAGE(code.is_ok(), code.status().to_string());
      std::vector<float> y(xs.size());
      EwArgs args{};
      args.in[0] = xs.data();
      args.out = y.data();
      args.n = int64_t(xs.size());
      args.rows = 1;
      reinterpret_cast<EwFn>(const_cast<void*>((*code)->entry()))(&args, &p);
      size_t bad = 0;
      float first = 0.0f;
      for (size_t i = 0; i < xs.size(); ++i) {
        const float want = fn.ref(xs[i]);
        const bool same = std::memcmp(&want, &y[i], 4) == 0 || (std::isnan(want) && std::isnan(y[i]));
        if (!same && bad++ == 0) first = xs[i];
      }
      CHECK_MESSAGE(bad == 0, p.name() << " (flag " << int(fn.flag) << ") differs on " << bad << " of " << xs.size()
                                       << " inputs, first at " << first);
    }
  }
}

TEST_CASE("rounding to bf16 and f16 in programs equals the IR's conversions on every pattern") {
  const auto backends = program_backends();
  if (backends.empty()) return;
  // Every bf16 and f16 bit pattern loaded, widened, rounded to the other type and stored; and
  // f32 values around every f16 and bf16 rounding edge (ties, overflow, subnormals) rounded.
  std::vector<uint16_t> patterns(65536);
  for (uint32_t h = 0; h < 65536; ++h) patterns[h] = uint16_t(h);
  std::vector<float> edges;
  for (uint32_t h = 0; h < 65536; h += 7) {
    for (qrt::FloatKind kind : {qrt::FloatKind::kBF16, qrt::FloatKind::kF16}) {
      const float v = float(qrt::float_kind_from_bits(h, kind));
      const float up = float(qrt::float_kind_from_bits(h + 1, kind));
      if (!std::isfinite(v) || !std::isfinite(up)) continue;
      const float mid = float((double(v) + double(up)) / 2);  // a tie where f32 holds it
      for (float x : {mid, std::nextafter(mid, INFINITY), std::nextafter(mid, -INFINITY)}) edges.push_back(x);
    }
  }
  for (float x : {65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.98e-8f, 2.9802322e-8f, 6.1035156e-05f, 6.097555e-05f, 3.4028235e38f}) {
    edges.push_back(x), edges.push_back(-x);
  }
  for (const Backend* b : backends) {
    for (EwStorage from : {EwStorage::kBf16, EwStorage::kF16, EwStorage::kF32}) {
      for (EwStorage to : {EwStorage::kBf16, EwStorage::kF16, EwStorage::kF32}) {
        if (from == to) continue;
        EwProgram p;
        p.inputs = {{from, false}};
        EwInstr load;
        load.op = EwOp::kLoad;
        p.code = {load};
        if (to != EwStorage::kF32) {
          EwInstr round;
          round.op = EwOp::kRoundHalf;
          round.flag = to == EwStorage::kF16;
          p.code.push_back(round);
        }
        p.out = to;
        p.result = uint8_t(p.code.size() - 1);
        auto code = b->compile_program(p);
        REQUIRE_MESSAGE(code.is_ok(), code.status().to_string());
        const void* in = from == EwStorage::kF32 ? static_cast<const void*>(edges.data()) : patterns.data();
        const int64_t n = from == EwStorage::kF32 ? int64_t(edges.size()) : 65536;
        std::vector<uint8_t> got(size_t(n) * ew_storage_bytes(to)), want = got;
        EwArgs args{};
        args.in[0] = in;
        args.n = n;
        args.rows = 1;
        args.out = got.data();
        reinterpret_cast<EwFn>(const_cast<void*>((*code)->entry()))(&args, &p);
        // The IR's conversions, element by element.
        size_t bad = 0;
        int64_t first = -1;
        for (int64_t i = 0; i < n; ++i) {
          const double v = from == EwStorage::kF32 ? double(edges[size_t(i)])
                                                   : qrt::float_kind_from_bits(patterns[size_t(i)], ew_storage_float_kind(from));
          const qrt::FloatKind kt = ew_storage_float_kind(to);
          const uint64_t bits = qrt::float_kind_bits(v, kt);
          uint64_t have = 0;
          std::memcpy(&have, &got[size_t(i) * ew_storage_bytes(to)], ew_storage_bytes(to));
          const bool both_nan = std::isnan(v) && std::isnan(qrt::float_kind_from_bits(have, kt));
          if (have != bits && !both_nan && bad++ == 0) first = i;
        }
        CHECK_MESSAGE(bad == 0, p.name() << " differs from the IR's conversion on " << bad << " of " << n << " values, first at "
                                         << first);
        // And the twin gives the same values (which NaN is not part of the contract).
        args.out = want.data();
        twin_ew_program(&args, &p);
        const qrt::FloatKind kt = ew_storage_float_kind(to);
        size_t twin_bad = 0;
        for (int64_t i = 0; i < n; ++i) {
          uint64_t x = 0, y = 0;
          std::memcpy(&x, &got[size_t(i) * ew_storage_bytes(to)], ew_storage_bytes(to));
          std::memcpy(&y, &want[size_t(i) * ew_storage_bytes(to)], ew_storage_bytes(to));
          twin_bad += x != y && !(std::isnan(qrt::float_kind_from_bits(x, kt)) && std::isnan(qrt::float_kind_from_bits(y, kt)));
        }
        CHECK_MESSAGE(twin_bad == 0, p.name() << " differs from the twin on " << twin_bad << " values");
      }
    }
  }
}

TEST_CASE("malformed programs are refused with the instruction at fault") {
  EwProgram p;
  p.inputs = {{EwStorage::kF32, false}};
  EwInstr load;
  load.op = EwOp::kLoad;
  EwInstr add;
  add.op = EwOp::kAdd;
  add.a = 0;
  add.b = 2;  // not yet defined
  p.code = {load, add};
  p.result = 1;
  CHECK(p.validate() == "instruction 1 (add) reads register 2 before it is defined");
  p.code[1].b = 0;
  p.code[1].type = EwType::kBool;
  CHECK(p.validate() == "instruction 1 (add) cannot compute on bool");
  p.code[1].type = EwType::kF32;
  p.out = EwStorage::kI32;
  CHECK(p.validate() == "the result is f32, the output stores i32");
  p.out = EwStorage::kF32;
  p.code[0].input = 3;
  CHECK(p.validate() == "instruction 0 (load) reads input 3 of 1");
  p.code[0].input = 0;
  CHECK(p.validate() == "");
  // The twin's backend and every compiler refuse what does not validate, naming it.
  p.result = 9;
  for (const KernelListRow& row : kernel_list()) {
    if (row.op != KernelOp::kEwProgram || !row.backend->available()) continue;
    auto code = row.backend->compile_program(p);
    REQUIRE_FALSE(code.is_ok());
    CHECK(code.status().message().find("the result register 9 does not exist") != std::string::npos);
  }
}

TEST_CASE("float and integer element-wise ops run as programs, bit-exact with the reference") {
  std::mt19937 rng(7);
  const std::string f = "f32";
  // Shapes: same, a trailing vector (bias), a column (per-row scalar), scalars, both sides
  // broadcast, the attention-mask pattern, tails.
  const std::vector<std::vector<std::string>> shapes = {
      {"2x3x37", "2x3x37", "2x3x37"}, {"4x19", "19", "4x19"},          {"5x7x1", "5x7x13", "5x7x13"},
      {"", "3x5", "3x5"},             {"6x1", "1x9", "6x9"},            {"2x4x8x8", "2x1x1x8", "2x4x8x8"},
      {"1x1", "1", "1x1"},            {"3x1x5", "4x1", "3x4x5"},
      // Empty tensors (an empty row once divided by zero sizing the tasks).
      {"3x0x5", "3x0x5", "3x0x5"},    {"0x4", "4", "0x4"},            {"3x5x0", "3x5x0", "3x5x0"}, {"4x0", "0", "4x0"}};
  auto t = [](const std::string& dims, const std::string& e) {
    return "tensor<" + (dims.empty() ? "" : dims + "x") + e + ">";
  };
  int cases = 0;
  auto expect_program = [&](const std::string& how) {
    CHECK_MESSAGE(how.find("__") != std::string::npos, how);
    ++cases;
  };
  for (const auto& s : shapes) {
    for (const char* op : {"qrt.add", "qrt.sub", "qrt.mul", "qrt.div", "qrt.max", "qrt.min", "qrt.pow"}) {
      expect_program(check_op(rng, {t(s[0], f), t(s[1], f)}, std::string("\"") + op + "\"", t(s[2], f)));
    }
    for (const char* e : {"i32", "i64", "i8", "ui8"}) {
      for (const char* op : {"qrt.add", "qrt.sub", "qrt.mul", "qrt.max", "qrt.min"}) {
        expect_program(check_op(rng, {t(s[0], e), t(s[1], e)}, std::string("\"") + op + "\"", t(s[2], e)));
      }
    }
    for (const char* e : {"f32", "i32", "i64"}) {
      for (const char* op : {"qrt.equal", "qrt.less", "qrt.greater"}) {
        expect_program(check_op(rng, {t(s[0], e), t(s[1], e)}, std::string("\"") + op + "\"", t(s[2], "i1")));
      }
    }
    expect_program(check_op(rng, {t(s[0], "i1"), t(s[1], f), t(s[2], f)}, "\"qrt.where\"", t(s[2], f)));
    expect_program(check_op(rng, {t(s[2], "i1"), t(s[0], "i64"), t(s[1], "i64")}, "\"qrt.where\"", t(s[2], "i64")));
  }
  // A dynamic batch dimension running through (float models exported with a free batch).
  {
    const std::string text =
        "func.func @main(%a: tensor<?x19xf32>, %b: tensor<19xf32>) -> tensor<?x19xf32> {\n"
        "  %y = \"qrt.add\"(%a, %b) : (tensor<?x19xf32>, tensor<19xf32>) -> tensor<?x19xf32>\n"
        "  %z = \"qrt.relu\"(%y) : (tensor<?x19xf32>) -> tensor<?x19xf32>\n  return %z : tensor<?x19xf32>\n}\n";
    for (const char* batch : {"3", "1"}) {
      const std::string add = "func.func @main(%a: tensor<?x19xf32>, %b: tensor<19xf32>) -> tensor<?x19xf32> {\n"
                              "  %y = \"qrt.add\"(%a, %b) : (tensor<?x19xf32>, tensor<19xf32>) -> tensor<?x19xf32>\n"
                              "  return %y : tensor<?x19xf32>\n}\n";
      expect_program(qrt_test::check_last_op(add, {random_tensor(rng, std::string("tensor<") + batch + "x19xf32>"),
                                                   random_tensor(rng, "tensor<19xf32>")}));
    }
    auto g = qrt::parse_graph(text);
    REQUIRE(g.is_ok());
    auto choice = select_kernel(*g, g->ops.back(), qrt_test::test_isas());
    REQUIRE(choice.is_ok());
    CHECK_MESSAGE(choice->kernel != nullptr, choice->why_not);
  }
  // Unary functions, casts, relu/clamp, a fused clamp on a float add, quantized logistic.
  expect_program(check_op(rng, {t("3x41", f)}, "\"qrt.gelu\"", t("3x41", f), " {approximate = \"tanh\"}"));
  expect_program(check_op(rng, {t("3x41", f)}, "\"qrt.clamp\"", t("3x41", f), " {max = 6.0 : f64, min = -0.5 : f64}"));
  expect_program(check_op(rng, {t("4x19", f), t("19", f)}, "\"qrt.add\"", t("4x19", f),
                          " {clamp_max = 1.0e+300 : f64, clamp_min = 0.0 : f64}"));
  for (const char* q : {"!quant.uniform<u8:f32, 0.0625:128>", "!quant.uniform<i8:f32, 0.03125:-3>"}) {
    expect_program(check_op(rng, {t("7x33", q)}, "\"qrt.logistic\"", t("7x33", "!quant.uniform<u8:f32, 0.00390625:0>")));
  }
  for (const char* op : {"\"qrt.sqrt\"", "\"qrt.reciprocal\"", "\"qrt.exp\"", "\"qrt.tanh\"", "\"qrt.erf\"", "\"qrt.neg\"",
                         "\"qrt.gelu\"", "\"qrt.logistic\"", "\"qrt.relu\"", "\"qrt.abs\"", "\"qrt.sign\"",
                         "\"qrt.floor\"", "\"qrt.ceil\"", "\"qrt.round_nearest_even\"", "\"qrt.round_nearest_afz\"",
                         "\"qrt.rsqrt\"", "\"qrt.log\"", "\"qrt.log1p\"", "\"qrt.expm1\"", "\"qrt.sin\"",
                         "\"qrt.cos\"", "\"qrt.cbrt\"", "\"qrt.asin\"", "\"qrt.acos\"", "\"qrt.atan\"",
                         "\"qrt.asinh\"", "\"qrt.acosh\"", "\"qrt.atanh\""}) {
    expect_program(check_op(rng, {t("3x41", f)}, op, t("3x41", f)));
  }
  expect_program(check_op(rng, {t("3x41", "i32")}, "\"qrt.neg\"", t("3x41", "i32")));
  expect_program(check_op(rng, {t("2x9", "i1")}, "\"qrt.not\"", t("2x9", "i1")));
  const char* types[] = {"f32", "i1", "i8", "ui8", "i16", "i32", "ui32", "i64"};
  for (const char* from : types) {
    for (const char* to : types) {
      const bool to_i64 = std::string(from) == "f32" && std::string(to) == "i64";
      const std::string how = check_op(rng, {t("5x13", from)}, "\"qrt.cast\"", t("5x13", to), "", !to_i64);
      if (to_i64) {
        CHECK(how.empty());  // saturation at 2^63 is the reference's alone
      } else {
        expect_program(how);
      }
    }
  }
  MESSAGE(cases << " element-wise ops checked as programs");
}

TEST_CASE("bf16 and f16 element-wise ops run as programs that round each result once, bit-exact with the reference") {
  std::mt19937 rng(11);
  auto t = [](const std::string& dims, const std::string& e) {
    return "tensor<" + (dims.empty() ? "" : dims + "x") + e + ">";
  };
  int cases = 0;
  for (const std::string h : {"bf16", "f16"}) {
    CAPTURE(h);
    auto expect_program = [&](const std::string& how) {
      CHECK_MESSAGE(how.find("__") != std::string::npos, how);
      ++cases;
    };
    const std::vector<std::vector<std::string>> shapes = {
        {"2x3x37", "2x3x37", "2x3x37"}, {"4x19", "19", "4x19"}, {"6x1", "1x9", "6x9"}, {"", "3x5", "3x5"}};
    for (const auto& s : shapes) {
      for (const char* op : {"qrt.add", "qrt.sub", "qrt.mul", "qrt.div", "qrt.max", "qrt.min", "qrt.pow"}) {
        expect_program(check_op(rng, {t(s[0], h), t(s[1], h)}, std::string("\"") + op + "\"", t(s[2], h)));
      }
      for (const char* op : {"qrt.equal", "qrt.less", "qrt.greater"}) {
        expect_program(check_op(rng, {t(s[0], h), t(s[1], h)}, std::string("\"") + op + "\"", t(s[2], "i1")));
      }
      expect_program(check_op(rng, {t(s[2], "i1"), t(s[0], h), t(s[1], h)}, "\"qrt.where\"", t(s[2], h)));
    }
    for (const char* op : {"\"qrt.sqrt\"", "\"qrt.reciprocal\"", "\"qrt.exp\"", "\"qrt.tanh\"", "\"qrt.erf\"", "\"qrt.neg\"",
                           "\"qrt.gelu\"", "\"qrt.logistic\"", "\"qrt.relu\"", "\"qrt.abs\"", "\"qrt.floor\"",
                           "\"qrt.rsqrt\"", "\"qrt.log\"", "\"qrt.sin\"", "\"qrt.atan\""}) {
      expect_program(check_op(rng, {t("3x41", h)}, op, t("3x41", h)));
    }
    expect_program(check_op(rng, {t("3x41", h)}, "\"qrt.clamp\"", t("3x41", h), " {max = 6.1 : f64, min = -0.3 : f64}"));
    expect_program(check_op(rng, {t("4x19", h), t("19", h)}, "\"qrt.add\"", t("4x19", h),
                            " {clamp_max = 0.7 : f64, clamp_min = 0.0 : f64}"));
    // Casts to and from every float type and the integers up to 16 bits; wider integers round
    // once from the integer on the reference (through f32 would round twice).
    for (const char* other : {"f32", "bf16", "f16", "i1", "i8", "ui8", "i16", "ui16", "i32"}) {
      if (h == other) continue;
      // Between float types the portable cast kernel (cast_f32_bf16 ...) may serve instead.
      const bool floats = std::string(other) == "f32" || std::string(other).find("f16") != std::string::npos;
      auto expect_kernel = [&](const std::string& how) {
        if (floats && how.rfind("cast_", 0) == 0) {
          ++cases;
        } else {
          expect_program(how);
        }
      };
      expect_kernel(check_op(rng, {t("5x13", h)}, "\"qrt.cast\"", t("5x13", other)));
      const std::string how = check_op(rng, {t("5x13", other)}, "\"qrt.cast\"", t("5x13", h), "", false);
      if (std::string(other) == "i32") {
        CHECK(how.find("__") == std::string::npos);  // no program: the reference
      } else {
        expect_kernel(how);
      }
    }
  }
  MESSAGE(cases << " bf16 and f16 element-wise ops checked as programs");
}
