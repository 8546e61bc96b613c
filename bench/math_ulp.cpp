// qrt — measures the accuracy of the numerics module's f32 functions (docs/numerics.md) over
// every f32 bit pattern, or every k-th: the largest error in ulp of the correctly rounded
// result (the C library's double function, which is far more precise than f32, serves as the
// true value) and how many results are not correctly rounded. Prints a Markdown table.
//
//   build/bench/math_ulp [--stride K] [FUNCTION...]     (default: every f32, all functions)
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ir/numerics.h"

namespace {

struct Function {
  const char* name;
  float (*f)(float);
  double (*truth)(double);
};

const Function kFunctions[] = {
    {"exp", qrt::numerics::exp_f32, [](double x) { return std::exp(x); }},
    {"tanh", qrt::numerics::tanh_f32, [](double x) { return std::tanh(x); }},
    {"erf", qrt::numerics::erf_f32, [](double x) { return std::erf(x); }},
    {"log", qrt::numerics::log_f32, [](double x) { return std::log(x); }},
    {"log1p", qrt::numerics::log1p_f32, [](double x) { return std::log1p(x); }},
    {"expm1", qrt::numerics::expm1_f32, [](double x) { return std::expm1(x); }},
    {"sin", qrt::numerics::sin_f32, [](double x) { return std::sin(x); }},
    {"cos", qrt::numerics::cos_f32, [](double x) { return std::cos(x); }},
    {"cbrt", qrt::numerics::cbrt_f32, [](double x) { return std::cbrt(x); }},
    {"asin", qrt::numerics::asin_f32, [](double x) { return std::asin(x); }},
    {"acos", qrt::numerics::acos_f32, [](double x) { return std::acos(x); }},
    {"atan", qrt::numerics::atan_f32, [](double x) { return std::atan(x); }},
    {"asinh", qrt::numerics::asinh_f32, [](double x) { return std::asinh(x); }},
    {"acosh", qrt::numerics::acosh_f32, [](double x) { return std::acosh(x); }},
    {"atanh", qrt::numerics::atanh_f32, [](double x) { return std::atanh(x); }},
};

// |got - truth| in units of the last place of the f32 nearest `truth` (subnormal ulp below
// 2^-126); a wrong special value (NaN, infinity, sign of zero) counts as 1e30.
double ulp_error(float got, double truth) {
  if (std::isnan(truth)) return std::isnan(got) ? 0.0 : 1e30;
  const float nearest = float(truth);
  if (std::isinf(nearest)) return got == nearest ? 0.0 : std::isinf(got) ? 1e30 : 1.0;
  if (std::isnan(got)) return 1e30;
  if (truth == 0.0 && (got != 0.0f || std::signbit(got) != std::signbit(truth))) return 1e30;
  const int e = std::max(std::ilogb(nearest == 0.0f ? 0x1p-149f : nearest), -126);
  return std::fabs(double(got) - truth) / std::ldexp(1.0, e - 23);
}

void usage() {
  std::printf(
      "usage: math_ulp [--stride K] [FUNCTION...]\n"
      "Measures qrt's f32 functions over every K-th f32 bit pattern (default K = 1: all 2^32)\n"
      "against the C library's double functions. Functions:");
  for (const Function& f : kFunctions) std::printf(" %s", f.name);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t stride = 1;
  std::vector<const Function*> chosen;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    }
    if (a == "--stride" && i + 1 < argc) {
      char* end = nullptr;
      stride = std::strtoull(argv[++i], &end, 10);
      if (*end != '\0' || stride == 0) {
        std::fprintf(stderr, "math_ulp: --stride wants a positive integer, not '%s'\n", argv[i]);
        return 2;
      }
      continue;
    }
    const Function* found = nullptr;
    for (const Function& f : kFunctions) found = a == f.name ? &f : found;
    if (!found) {
      std::fprintf(stderr, "math_ulp: unknown function or option '%s' (try --help)\n", a.c_str());
      return 2;
    }
    chosen.push_back(found);
  }
  if (chosen.empty()) {
    for (const Function& f : kFunctions) chosen.push_back(&f);
  }
  std::printf("| function | inputs | max error (ulp) | at x | not correctly rounded |\n| --- | ---: | ---: | ---: | ---: |\n");
  for (const Function* fn : chosen) {
    double worst = 0;
    float at = 0;
    uint64_t count = 0, inexact = 0;
    for (uint64_t u = 0; u < (uint64_t(1) << 32); u += stride) {
      const float x = std::bit_cast<float>(uint32_t(u));
      if (std::isnan(x)) continue;
      const double e = ulp_error(fn->f(x), fn->truth(double(x)));
      ++count;
      if (e > 0.5 + 1e-9) ++inexact;
      if (e > worst) worst = e, at = x;
    }
    std::printf("| %s | %llu | %.3f | %a | %llu |\n", fn->name, static_cast<unsigned long long>(count), worst, double(at),
                static_cast<unsigned long long>(inexact));
    std::fflush(stdout);
  }
  return 0;
}
