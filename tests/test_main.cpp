// doctest's main for every test executable. QRT_TEST_ISA=LEVEL runs the suite with the JIT
// capped at that ISA level (meson registers one test per level); a level the host lacks makes
// the whole executable exit 77, which meson reports as SKIP with the reason on stdout — never
// as a pass.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "isa_levels.h"

namespace qrt_test {

namespace {
qrt::jit::IsaSet g_isas;
qrt::jit::Isa g_isa = qrt::jit::Isa::kScalar;
}  // namespace

const qrt::jit::IsaSet& test_isas() { return g_isas; }
qrt::jit::Isa test_isa() { return g_isa; }
const char* test_isa_name() { return qrt::jit::isa_name(g_isa); }

}  // namespace qrt_test

int main(int argc, char** argv) {
  using namespace qrt::jit;
  qrt_test::g_isas = host_isas();
  qrt_test::g_isa = host_best_isa();
  if (const char* level = std::getenv("QRT_TEST_ISA"); level && *level) {
    const auto isa = parse_isa(level);
    if (!isa) {
      std::fprintf(stderr, "QRT_TEST_ISA=%s is not a level (%s)\n", level, isa_names().c_str());
      return 2;
    }
    std::string why;
    const auto capped = capped_isas(*isa, &why);
    if (!capped) {
      std::printf("SKIP: %s\n", why.c_str());
      return 77;  // meson: skipped
    }
    qrt_test::g_isas = *capped;
    qrt_test::g_isa = *isa;
  }
  std::printf("ISA levels under test: %s\n", qrt_test::g_isas.to_string().c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
