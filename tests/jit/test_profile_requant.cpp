// Tests: the requantization micro-kernels of the numerics profiles at the level under test
// (QRT_TEST_ISA) against their scalar twins, byte for byte: kRequantQ31 (TFLite's fixed-point
// requantization: both signednesses and both roundings, multipliers across decades and raw Q31
// values, every shift, left shifts of 32 and more included) and kRequantF64 (ONNX's f32
// multiplier applied in f64: ties, huge and tiny multipliers, 0); channel tails of every
// width, rows with gaps, the int32 extremes, zero points at the storage bounds and narrow
// clamps. The twins are numerics::requantize_tflite and requantize_onnx element by element
// (test_numerics_profiles.cpp checks those against independent implementations).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ir/numerics.h"
#include "isa_levels.h"
#include "jit/core/microkernel.h"
#include "jit/kernel_list.h"
#include "jit/ref/scalar_backend.h"
#include "jit/ref/twins.h"

namespace {

using namespace qrt::jit;

// A random accumulator: small, large, or an int32 extreme.
int32_t random_acc(std::mt19937& rng) {
  switch (rng() % 8) {
    case 0: return std::numeric_limits<int32_t>::min() + int32_t(rng() % 3);
    case 1: return std::numeric_limits<int32_t>::max() - int32_t(rng() % 3);
    case 2:
    case 3: return int32_t(rng());
    case 4: return int32_t(rng() % 41) - 20;  // ties of the rounding shifts
    default: return int32_t(rng() % 20001) - 10000;
  }
}

// Runs the kernel of `b` and the twin on the same random block; returns the cases checked.
int check_block(const KernelDesc& d, std::mt19937& rng) {
  auto code = code_cache().get(d);
  REQUIRE_MESSAGE(code.is_ok(), code.status().to_string());
  const int32_t smin = d.storage_signed ? -128 : 0, smax = d.storage_signed ? 127 : 255;
  int cases = 0;
  for (int64_t channels : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 47, 64, 70, 129}) {
    const int64_t rows = 1 + int64_t(rng() % 4), acc_stride = channels + int64_t(rng() % 3);
    const int64_t y_stride = channels + int64_t(rng() % 5);
    std::vector<int32_t> acc(size_t(rows * acc_stride)), mult, shift, lo_zo, hi_zo, zo;
    std::vector<float> f32_mult;
    for (auto& a : acc) a = random_acc(rng);
    for (int64_t j = 0; j < channels; ++j) {
      // kRequantF64: 2^-k makes ties of odd accumulators; the rest span decades, 0 and huge.
      const uint32_t pick = rng() % 8;
      f32_mult.push_back(pick == 0   ? 0.0f
                         : pick == 1 ? std::ldexp(1.0f, -int(rng() % 4) - 1)
                         : pick == 2 ? std::ldexp(1.0f + float(rng() % 1000) / 1000.0f, 40 + int(rng() % 80))
                                     : std::ldexp(1.0f + float(rng() % 100000) / 100000.0f, int(rng() % 40) - 30));
      qrt::numerics::QuantizedMultiplier m;
      if (rng() % 3 == 0) {
        // A raw Q31 multiplier (or 0) and any shift the rounding allows (double rounding: left
        // shifts of 32 and more give 0, as the twin's wrapping shift does).
        // 2^30 makes every odd accumulator a tie of the high-mul.
        m.multiplier = rng() % 16 == 0  ? 0
                       : rng() % 3 == 0 ? int32_t(1) << 30
                                        : int32_t((uint32_t(1) << 30) + rng() % (uint32_t(1) << 30));
        m.shift = d.single_rounding ? int(rng() % 62) - 31 : int(rng() % 75) - 31;
      } else {
        // A real multiplier across decades, as the plans form them.
        const double real = std::ldexp(1.0 + double(rng() % 1000) / 1000.0, int(rng() % 40) - 30);
        m = qrt::numerics::quantize_multiplier(real, d.single_rounding);
      }
      // Zero points at the bounds or anywhere; the clamp the storage's or narrower.
      const int32_t z = rng() % 4 == 0 ? smin : rng() % 4 == 0 ? smax : smin + int32_t(rng() % 256);
      int32_t lo = smin, hi = smax;
      if (rng() % 3 == 0) {
        lo = smin + int32_t(rng() % 128);
        hi = lo + int32_t(rng() % uint32_t(smax - lo + 1));
      }
      mult.push_back(m.multiplier);
      shift.push_back(m.shift);
      lo_zo.push_back(lo - z);
      hi_zo.push_back(hi - z);
      zo.push_back(z);
    }
    std::vector<uint8_t> y1(size_t(rows * y_stride), 0xA5), y2 = y1;
    if (d.op == KernelOp::kRequantF64) {
      RequantF64Args args{acc.data(), y1.data(), rows, channels, acc_stride, y_stride,
                          f32_mult.data(), lo_zo.data(), hi_zo.data(), zo.data()};
      call_microkernel((*code)->entry(), args, d);
      args.y = y2.data();
      twin_requant_f64(&args, &d);
    } else {
      RequantQ31Args args{acc.data(), y1.data(), rows, channels, acc_stride, y_stride,
                          mult.data(), shift.data(), lo_zo.data(), hi_zo.data(), zo.data()};
      call_microkernel((*code)->entry(), args, d);
      args.y = y2.data();
      twin_requant_q31(&args, &d);
    }
    for (size_t i = 0; i < y1.size(); ++i) {
      if (y1[i] != y2[i]) {
        const size_t r = i / size_t(y_stride), j = i % size_t(y_stride);
        FAIL_CHECK(d.name() << " channels " << channels << " row " << r << " channel " << j << ": "
                            << int(y1[i]) << " vs the twin's " << int(y2[i]) << " (acc "
                            << (int64_t(j) < channels ? acc[r * size_t(acc_stride) + j] : 0) << ")");
        break;
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = channels; j < y_stride; ++j) CHECK(y1[size_t(r * y_stride + j)] == 0xA5);  // gaps untouched
    }
    ++cases;
  }
  return cases;
}

}  // namespace

TEST_CASE("kRequantQ31 and kRequantF64 kernels at the level under test equal the scalar twins byte for byte") {
  std::mt19937 rng(31);
  int rows = 0, cases = 0;
  for (const KernelListRow& row : kernel_list()) {
    const bool requant = row.op == KernelOp::kRequantQ31 || row.op == KernelOp::kRequantF64;
    if (!requant || row.isa != qrt_test::test_isa() || row.backend == &scalar_backend()) continue;
    ++rows;
    for (bool is_signed : {true, false}) {
      for (bool single : {false, true}) {
        if (single && row.op == KernelOp::kRequantF64) continue;
        KernelDesc d;
        d.op = row.op;
        d.isa = row.isa;
        d.generator = row.backend->generator();
        d.storage_signed = is_signed;
        d.single_rounding = single;
        REQUIRE_MESSAGE(row.backend->why_not(d).empty(), d.name() << ": " << row.backend->why_not(d));
        for (int rep = 0; rep < 40; ++rep) cases += check_block(d, rng);
      }
    }
  }
  MESSAGE(rows << " requantization kernel rows, " << cases << " blocks at " << std::string(qrt_test::test_isa_name()));
  // Every SIMD level has its own kernels (x86: AVX2's serve AVX2-VNNI).
  if (qrt_test::test_isa() == Isa::kAvx2 || qrt_test::test_isa() == Isa::kAvx512Vnni || qrt_test::test_isa() == Isa::kNeon ||
      qrt_test::test_isa() == Isa::kNeonDot || qrt_test::test_isa() == Isa::kNeonI8mm) {
    CHECK(rows >= 2);
  }
}

TEST_CASE("the twin of kRequantQ31 is TFLite's double- and single-rounding requantization") {
  // Hand-worked values: M = 2^30 (one half), shift 0; ties of the high-mul round up, then the
  // rounding shift rounds ties away from zero.
  KernelDesc d;
  d.op = KernelOp::kRequantQ31;
  d.storage_signed = true;
  const int32_t acc[6] = {3, -3, 5, -5, 1000, -1000};
  const int32_t mult[6] = {1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30};
  const int32_t shift[6] = {0, 0, -1, -1, -2, 40};
  const int32_t lo[6] = {-128, -128, -128, -128, -128, -128}, hi[6] = {127, 127, 127, 127, 127, 127}, zo[6] = {};
  int8_t y[6];
  RequantQ31Args args{acc, y, 1, 6, 6, 6, mult, shift, lo, hi, zo};
  twin_requant_q31(&args, &d);
  // 3/2 = 1.5 -> 2; -3/2 -> -1 (the high-mul's tie toward +inf); 5/4: the high-mul's 2.5
  // -> 3, then 3/2 -> 2 (the double rounding); -5/4: -2.5 -> -2, -2/2 = -1; 1000/8 = 125;
  // -1000 << 40 wraps to 0.
  CHECK(y[0] == 2);
  CHECK(y[1] == -1);
  CHECK(y[2] == 2);
  CHECK(y[3] == -1);
  CHECK(y[4] == 125);
  CHECK(y[5] == 0);
  d.single_rounding = true;
  const int32_t shift1[6] = {0, 0, -1, -1, -2, 0};
  args.shift = shift1;
  twin_requant_q31(&args, &d);
  // One rounding, ties toward +inf: 1.5 -> 2, -1.5 -> -1, 1.25 -> 1, -1.25 -> -1, 125, -500 -> -128.
  CHECK(y[0] == 2);
  CHECK(y[1] == -1);
  CHECK(y[2] == 1);
  CHECK(y[3] == -1);
  CHECK(y[4] == 125);
  CHECK(y[5] == -128);
}
