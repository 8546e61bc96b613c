// Tests: the ISA level a test executable runs at (QRT_TEST_ISA, see test_main.cpp).
#pragma once

#include "jit/core/isa.h"

namespace qrt_test {

/// The levels the JIT may use in this run: the host's, capped by QRT_TEST_ISA.
const qrt::jit::IsaSet& test_isas();
/// The cap itself (the host's best when QRT_TEST_ISA is unset).
qrt::jit::Isa test_isa();
/// Its name, e.g. "avx2".
const char* test_isa_name();

}  // namespace qrt_test
