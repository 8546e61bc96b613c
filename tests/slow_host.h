// Tests: whether this run is on a slow host, where data-heavy tests use a slice of their data.
#pragma once

#include <cstdint>
#include <cstdlib>

namespace qrt_test {

/// True under qemu-user (QRT_TEST_EMULATED, set by scripts/test_arm64.sh) and in sanitizer
/// builds (ASan, TSan), where a run costs 10-20 times the native one. Data-heavy tests then run
/// every backend and ISA level on the first kSlowHostSamples samples of a data set only.
inline bool slow_host() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#else
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return true;
#endif
#endif
  return std::getenv("QRT_TEST_EMULATED") != nullptr;
#endif
}

/// Test-set samples a data-heavy test uses on a slow host.
constexpr int64_t kSlowHostSamples = 400;

}  // namespace qrt_test
