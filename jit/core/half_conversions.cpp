// qrt — the installed bf16/f16 array conversions (half_conversions.h).
#include "jit/core/half_conversions.h"

#include <atomic>

namespace qrt::jit {

namespace {

std::atomic<const HalfConversions*> g_installed{nullptr};

}  // namespace

void install_half_conversions(const HalfConversions* c) { g_installed.store(c, std::memory_order_release); }

const HalfConversions* installed_half_conversions() { return g_installed.load(std::memory_order_acquire); }

}  // namespace qrt::jit
