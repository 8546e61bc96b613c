// qrt — the measured choice between the thread pool and the calling thread (split_choice.h).
#include "runtime/split_choice.h"

#include <algorithm>
#include <limits>

namespace qrt::runtime {

namespace {

constexpr uint64_t kUnseen = std::numeric_limits<uint64_t>::max();

}  // namespace

void SplitChoice::reset(size_t ops) {
  best_pool_.assign(ops, kUnseen);
  best_serial_.assign(ops, kUnseen);
  serial_.assign(ops, 0);
  run_ = 0;
}

void SplitChoice::record_probe(size_t o, uint64_t ns) {
  uint64_t& best = on_pool(o) ? best_pool_[o] : best_serial_[o];
  best = std::min(best, ns);
}

void SplitChoice::end_run() {
  if (serial_.empty()) return;
  ++run_;
  if (run_ == kProbeRuns) {
    // An op seen in one mode only (skipped in the other's runs) keeps the pool.
    for (size_t o = 0; o < serial_.size(); ++o) {
      serial_[o] = best_serial_[o] != kUnseen && best_pool_[o] != kUnseen && best_serial_[o] < best_pool_[o];
    }
  } else if (run_ >= kReprobeRuns) {
    std::fill(best_pool_.begin(), best_pool_.end(), kUnseen);
    std::fill(best_serial_.begin(), best_serial_.end(), kUnseen);
    run_ = 0;
  }
}

size_t SplitChoice::serial_ops() const { return size_t(std::count(serial_.begin(), serial_.end(), uint8_t(1))); }

}  // namespace qrt::runtime
