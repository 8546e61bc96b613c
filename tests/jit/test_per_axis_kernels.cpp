// Tests: per-axis quant.qcast, quant.dcast and qrt.requantize in portable C++
// (jit/ops/per_axis_kernels.cpp) are bit-exact with the reference: per-axis to per-tensor, per
// tensor to per-axis and per-axis to per-axis along the axis, the first, a middle and the last
// axis, 8-, 16- and 32-bit storage, extreme zero points, under the default and tflite profiles;
// with bf16, f16 and f64 expressed types too.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "op_kernel_check.h"

namespace {

using qrt_test::QuantSpec;

// A spec of `bits` storage, per axis along `axis` with `channels` channels (axis < 0: per tensor).
QuantSpec random_spec(std::mt19937& rng, int bits, int axis, int64_t channels) {
  QuantSpec q;
  std::uniform_int_distribution<int> coin(0, 1), pick(0, 4);
  q.bits = bits;
  q.is_signed = bits == 32 || coin(rng);
  const int64_t lo = q.is_signed ? -(int64_t(1) << (bits - 1)) : 0;
  const int64_t hi = q.is_signed ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
  q.lo = int(lo), q.hi = int(hi);
  q.axis = axis;
  q.scales.clear(), q.zps.clear();
  for (int64_t c = 0; c < (axis < 0 ? 1 : channels); ++c) {
    q.scales.push_back(std::pow(10.0, std::uniform_real_distribution<double>(bits == 32 ? -7.0 : -4.0, 0.0)(rng)));
    const int p = pick(rng);
    // 32-bit zero points stay near 0 (the random values below span ±2^20 there).
    q.zps.push_back(bits == 32 ? int(rng() % 201) - 100 : p == 0 ? q.lo : p == 1 ? q.hi : std::uniform_int_distribution<int>(q.lo, q.hi)(rng));
  }
  return q;
}

// A one-op graph of conversion `kind` (0 dcast, 1 qcast, 2 requantize) from `in_type` to
// `out_type`.
std::string conversion_text(int kind, const std::string& in_type, const std::string& out_type) {
  const char* name = kind == 0 ? "quant.dcast" : kind == 1 ? "quant.qcast" : "qrt.requantize";
  return "func.func @main(%x: " + in_type + ") -> " + out_type + " {\n  %y = \"" + name + "\"(%x) : (" + in_type +
         ") -> " + out_type + "\n  return %y : " + out_type + "\n}\n";
}

}  // namespace

TEST_CASE("per-axis qcast, dcast and requantize are bit-exact with the reference") {
  std::mt19937 rng(1620);
  int cases = 0;
  const std::vector<int64_t> dims = {2, 5, 3, 7};
  for (const char* profile : {"default", "tflite"}) {
    for (int round = 0; round < 24; ++round) {
      CAPTURE(std::string(profile));
      CAPTURE(round);
      const int axis = round % 3 == 0 ? 0 : round % 3 == 1 ? 1 : 3;
      const int64_t channels = dims[size_t(axis)];
      const int kind = round % 4;  // 0 dcast, 1 qcast, 2 requantize per-axis -> per-tensor, 3 per tensor -> per-axis
      const int bits = round % 5 == 4 ? 32 : round % 2 ? 16 : 8;
      const std::string shape = qrt_test::shape(dims);
      const std::string f32 = "tensor<" + shape + "f32>";
      QuantSpec a = random_spec(rng, bits, kind == 3 ? -1 : axis, channels);
      QuantSpec b = random_spec(rng, kind >= 2 && round % 3 == 2 ? 8 : 16, kind == 3 || round % 6 == 2 ? axis : -1, channels);
      const std::string at = "tensor<" + shape + a.type() + ">", bt = "tensor<" + shape + b.type() + ">";
      std::string in_type = kind == 1 ? f32 : at, out_type = kind == 0 ? f32 : kind == 1 ? at : bt;
      if (kind == 1) a = random_spec(rng, bits == 32 ? 16 : bits, axis, channels), out_type = "tensor<" + shape + a.type() + ">";
      const std::string text = conversion_text(kind == 3 ? 2 : kind, in_type, out_type);
      CAPTURE(text);
      auto t = qrt::parse_type(in_type);
      REQUIRE(t.is_ok());
      qrt::Tensor x = qrt::Tensor::zeros(*t);
      for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
        if (kind == 1) {
          // Around the stored range, with ties and specials.
          const double s = a.scales[0];
          const int p = int(rng() % 8);
          x.set_float(i, p == 0 ? NAN : p == 1 ? INFINITY : (int(rng() % 4001) - 2000 + (p == 2 ? 0.5 : 0.37)) * s * 17);
        } else {
          const int64_t lo = bits == 32 ? -(1 << 20) : a.lo, hi = bits == 32 ? (1 << 20) : a.hi;
          x.set_int(i, std::uniform_int_distribution<int64_t>(lo, hi)(rng));
        }
      }
      const std::string how = qrt_test::check_last_op(qrt_test::with_profile(text, profile), x);
      CHECK_MESSAGE(how.find("per-axis") != std::string::npos, how);
      ++cases;
    }
  }
  MESSAGE(cases << " per-axis conversions");
}

TEST_CASE("per-axis qcast, dcast and requantize with bf16, f16 and f64 expressed types run on kernels, bit-exact") {
  std::mt19937 rng(1621);
  int cases = 0;
  const std::vector<int64_t> dims = {2, 3, 1030};  // runs of 1030 elements: a 1024-value block and a tail
  for (const char* profile : {"default", "tflite", "stablehlo"}) {
    for (const char* expressed : {"bf16", "f16", "f64"}) {
      for (int kind = 0; kind < 3; ++kind) {  // dcast, qcast, requantize
        for (int axis : {0, 1}) {
          CAPTURE(std::string(profile));
          CAPTURE(std::string(expressed));
          CAPTURE(kind);
          CAPTURE(axis);
          const int bits = kind == 2 ? 16 : axis ? 8 : 16;
          QuantSpec a = random_spec(rng, bits, axis, dims[size_t(axis)]);
          QuantSpec b = random_spec(rng, 8, -1, 1);
          a.expressed = b.expressed = expressed;
          const std::string shape = qrt_test::shape(dims);
          const std::string ft = "tensor<" + shape + expressed + ">", at = "tensor<" + shape + a.type() + ">",
                            bt = "tensor<" + shape + b.type() + ">";
          const std::string in_type = kind == 1 ? ft : at, out_type = kind == 0 ? ft : kind == 1 ? at : bt;
          const std::string text = conversion_text(kind, in_type, out_type);
          auto t = qrt::parse_type(in_type);
          REQUIRE(t.is_ok());
          qrt::Tensor x = qrt::Tensor::zeros(*t);
          for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
            if (kind == 1) {
              // Around the stored range, with ties, specials and values past f16's range.
              const double s = a.scales[0];
              const int p = int(rng() % 10);
              x.set_float(i, p == 0 ? NAN : p == 1 ? -INFINITY : p == 2 ? 1e6 : (int(rng() % 4001) - 2000 + (p == 3 ? 0.5 : 0.37)) * s * 17);
            } else {
              x.set_int(i, std::uniform_int_distribution<int64_t>(a.lo, a.hi)(rng));
            }
          }
          const std::string how = qrt_test::check_last_op(qrt_test::with_profile(text, profile), x);
          // StableHLO redefines qcast and requantize (its own kernels) and the bf16/f16 dcast.
          const bool stablehlo_own = std::string(profile) == "stablehlo" && (kind != 0 || std::string(expressed) != "f64");
          if (!stablehlo_own) CHECK_MESSAGE(how.find("per-axis") != std::string::npos, how);
          ++cases;
        }
      }
    }
  }
  MESSAGE(cases << " per-axis conversions with bf16, f16 and f64 expressed types");
}
