// qrt — per op of a static plan on several threads: the thread pool or the calling thread
// alone, chosen by measurement (see SplitChoice).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qrt::runtime {

/// Which ops of a static plan run on the context's thread pool and which on the calling
/// thread alone. A split pays only where the op's work outweighs what the other threads pay
/// to join it: a wake-up, and the op's input fetched from the cache of the core that wrote
/// it. The kernels' task thresholds (jit/core/parallel.h) are fixed; what a hand-off costs is
/// not. On a 2-vCPU virtual machine (AMD Zen 5), person_detect's 48²·8 depthwise op took
/// 2.8 µs on two threads in some minutes and 8.5 µs in others, against 4.3 µs on one, and the
/// whole model ran 0.034 or 0.043 ms at 2 threads against 0.036 at 1 (docs/performance.md).
///
/// So the context measures. A probe of kProbeRuns runs alternates each op between the pool
/// and the caller (op o on the pool in probe run r where r + o is even) and keeps each mode's
/// fastest time; at its end every op takes the faster mode (the pool on a tie). Probes run
/// from the first run and again every kReprobeRuns runs, as the host may place the threads
/// elsewhere over time. Results are the same either way: every kernel's bytes are
/// independent of its task split.
class SplitChoice {
 public:
  /// Runs per probe (half of them per mode for each op).
  static constexpr uint32_t kProbeRuns = 8;
  /// Runs from the start of one probe to the start of the next.
  static constexpr uint32_t kReprobeRuns = 4096;

  /// Starts over for `ops` ops: a probe begins with the next run.
  void reset(size_t ops);
  /// Whether op `o` runs on the pool in the current run. (Inline: it is asked once per op and
  /// run, and a digits_cnn run is 2 µs of about 10 ops.)
  bool on_pool(size_t o) const {
    if (o >= serial_.size()) return true;
    if (probing()) return (run_ + o) % 2 == 0;
    return serial_[o] == 0;
  }
  /// Records op `o`'s time in the current run (nanoseconds).
  void record(size_t o, uint64_t ns) {
    if (probing() && o < serial_.size()) record_probe(o, ns);
  }
  /// Ends the current run; the run that ends a probe fixes every op's mode.
  void end_run();
  /// Whether the current run is part of a probe.
  bool probing() const { return run_ < kProbeRuns; }
  /// Ops the last finished probe put on the calling thread.
  size_t serial_ops() const;

 private:
  void record_probe(size_t o, uint64_t ns);

  std::vector<uint64_t> best_pool_, best_serial_;  // this probe's fastest time per mode
  std::vector<uint8_t> serial_;                    // per op: the calling thread alone
  uint32_t run_ = 0;                               // runs since the current probe began
};

}  // namespace qrt::runtime
