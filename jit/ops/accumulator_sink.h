// qrt — where a contraction kernel can hand its int32 accumulators, a block of output pixels
// at a time while they are still in cache, instead of storing the whole int32 result: the
// numerics profiles' requantization (profile_kernels.cpp) runs on each block as it is made.
#pragma once

#include <cstdint>

namespace qrt::jit {

/// Receives blocks of int32 accumulators of a result whose channels are innermost (NHWC
/// convolutions, matmul rows). Called from the workers of a run, concurrently for disjoint
/// blocks.
class AccumulatorSink {
 public:
  virtual ~AccumulatorSink() = default;
  /// Pixels (rows) [first, first + count) of the result: pixel first + i's accumulators are
  /// acc[i · acc_stride + c] for every channel c.
  virtual void take(const int32_t* acc, int64_t acc_stride, int64_t first, int64_t count) const = 0;
};

}  // namespace qrt::jit
