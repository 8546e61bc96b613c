// qrt — the memory planner: every intermediate value of a static-shape plan gets an offset in
// one arena, by liveness. Values live from the op that produces them to the last op that
// reads them (graph outputs to the end of the run); values whose lifetimes overlap never
// share bytes; an element-wise result may take over the slot of an operand that dies at that
// op (in place).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qrt::runtime {

/// What the planner needs to know of one value.
struct PlannedValue {
  size_t bytes = 0;        ///< 0: not in the arena (an input, a constant, a skipped op's result)
  int first = -1;          ///< op index that produces it
  int last = -1;           ///< last op index that reads it (the op count for graph outputs)
  int in_place_of = -1;    ///< a value whose slot this one may take over (it dies at `first`)
};

/// The arena layout.
struct MemoryPlan {
  std::vector<int64_t> offsets;  ///< per value: byte offset in the arena, or -1
  size_t arena_bytes = 0;        ///< the arena's size
  size_t naive_bytes = 0;        ///< the sum of every planned value's size (no reuse)
  size_t in_place = 0;           ///< values that took over an operand's slot
};

/// Alignment of every offset (a cache line).
constexpr size_t kArenaAlignment = 64;

/// Plans offsets: values in decreasing size, each at the lowest aligned offset that overlaps
/// no already placed value whose lifetime intersects its own (greedy by size, first fit).
/// Deterministic for a given input.
MemoryPlan plan_memory(const std::vector<PlannedValue>& values);

/// True when no two values with intersecting lifetimes overlap in the arena (except a value
/// and the operand it was planned in place of); the test of the planner's invariant.
bool memory_plan_is_valid(const std::vector<PlannedValue>& values, const MemoryPlan& plan);

}  // namespace qrt::runtime
