// qrt — measures whether AVX512-BF16's instructions could serve qrt's bf16 kernels under the
// numerics contract (docs/numerics.md: bf16 math in f32, products added one at a time in
// increasing k with one rounding each, every result rounded once to nearest even, subnormals
// kept). It compares on this CPU:
//   - vcvtneps2bf16 with the bit-exact nearest-even narrowing qrt uses, on random f32 values
//     (a tenth of them subnormal);
//   - vdpbf16ps dot products with the contract's sum (f32 mul, then add, k = 0, 1, 2, ...),
//     on random bf16 vectors of several lengths, and on products below f32's normal range.
// Prints a Markdown table; exits 0 (a host without AVX512-BF16 says so).
//
//   build/bench/bf16_contract [--trials N]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ir/float_format.h"
#if defined(__x86_64__)
#include "jit/asmjit_x86/bf16_hardware.h"
#include "jit/core/isa.h"
#endif

namespace {

// The contract's conversions (ir/float_format.h): exact widening, nearest-even narrowing.
float from_bf16(uint16_t b) { return qrt::bf16_bits_to_float(b); }
uint16_t to_bf16(float f) { return qrt::bf16_bits_from_double(double(f)); }

// The contract's bf16 dot product: each product is exact in f32, sums rounded one at a time.
float contract_dot(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  float acc = 0.0f;
  for (size_t k = 0; k < a.size(); ++k) {
    const volatile float p = from_bf16(a[k]) * from_bf16(b[k]);  // no contraction into an fma
    acc = acc + p;
  }
  return acc;
}


}  // namespace

int main(int argc, char** argv) {
  int trials = 20000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--trials" && i + 1 < argc) {
      trials = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--trials N]\n(unknown argument '%s')\n", argv[0], arg.c_str());
      return 2;
    }
  }
  if (trials <= 0) {
    std::fprintf(stderr, "--trials must be positive\n");
    return 2;
  }
#if defined(__x86_64__)
  using qrt::jit::avx512_bf16_dot;
  using qrt::jit::avx512_bf16_narrow;
  if (!qrt::jit::host_cpu_features().avx512_bf16) {
    std::printf("this CPU lacks AVX512-BF16: nothing to compare\n");
    return 0;
  }
  std::mt19937 rng(2026);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::printf("| instruction | case | differs from the contract |\n| --- | --- | ---: |\n");
  // Narrowing: every tenth value an f32 subnormal.
  int narrow_diff = 0, subnormal_diff = 0, subnormals = 0;
  for (int t = 0; t < trials * 10; ++t) {
    uint32_t bits = uint32_t(rng());
    if (t % 10 == 0) {
      bits &= 0x807FFFFFu;  // exponent 0: a subnormal (or zero)
      ++subnormals;
    } else {
      bits = (bits & 0x807FFFFFu) | (uint32_t(1 + rng() % 253) << 23);  // finite, normal
    }
    float f;
    std::memcpy(&f, &bits, 4);
    const bool differs = avx512_bf16_narrow(f) != to_bf16(f);
    narrow_diff += differs;
    subnormal_diff += differs && t % 10 == 0;
  }
  std::printf("| vcvtneps2bf16 | %d random f32 (%d subnormal) | %d (%d of them subnormal) |\n", trials * 10, subnormals,
              narrow_diff, subnormal_diff);
  for (int k : {16, 64, 256, 4096}) {
    int differ = 0;
    const int n = k >= 4096 ? trials / 20 : trials;
    for (int t = 0; t < n; ++t) {
      std::vector<uint16_t> a(static_cast<size_t>(k)), b(static_cast<size_t>(k));
      for (int i = 0; i < k; ++i) {
        a[size_t(i)] = to_bf16(normal(rng));
        b[size_t(i)] = to_bf16(normal(rng));
      }
      differ += avx512_bf16_dot(a.data(), b.data(), int64_t(a.size())) != contract_dot(a, b);
    }
    std::printf("| vdpbf16ps | %d dot products of %d terms (N(0,1) bf16) | %d (%.1f%%) |\n", n, k, differ, 100.0 * differ / n);
  }
  // Products below f32's normal range (|a·b| < 2^-126): the contract keeps them.
  int tiny_diff = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<uint16_t> a = {to_bf16(std::ldexp(1.0f + float(t % 97) / 97.0f, -60 - t % 20)), 0};
    std::vector<uint16_t> b = {to_bf16(std::ldexp(1.0f + float(t % 89) / 89.0f, -70 - t % 9)), 0};
    tiny_diff += avx512_bf16_dot(a.data(), b.data(), int64_t(a.size())) != contract_dot(a, b);
  }
  std::printf("| vdpbf16ps | %d products below 2^-126 | %d |\n", trials, tiny_diff);
#else
  (void)trials;
  std::printf("not an x86-64 build: nothing to compare\n");
#endif
  return 0;
}
