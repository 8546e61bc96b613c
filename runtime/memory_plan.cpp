// qrt — greedy-by-size arena planning (see memory_plan.h).
#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace qrt::runtime {

namespace {

size_t align_up(size_t v) { return (v + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool lifetimes_meet(const PlannedValue& a, const PlannedValue& b) { return a.first <= b.last && b.first <= a.last; }

// Follows in-place links to the value that owns the slot.
size_t slot_owner(const std::vector<PlannedValue>& values, size_t v) {
  while (values[v].in_place_of >= 0) v = size_t(values[v].in_place_of);
  return v;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<PlannedValue>& values) {
  MemoryPlan plan;
  plan.offsets.assign(values.size(), -1);
  // A chain of in-place values shares one slot: its lifetime is the union, its size the max.
  std::vector<PlannedValue> slots(values.size());
  for (size_t v = 0; v < values.size(); ++v) {
    if (values[v].bytes == 0) continue;
    plan.naive_bytes += values[v].bytes;
    const size_t owner = slot_owner(values, v);
    PlannedValue& s = slots[owner];
    if (s.bytes == 0) {
      s = values[v];
      s.in_place_of = -1;
    } else {
      s.bytes = std::max(s.bytes, values[v].bytes);
      s.first = std::min(s.first, values[v].first);
      s.last = std::max(s.last, values[v].last);
    }
    if (owner != v) ++plan.in_place;
  }
  std::vector<size_t> order;
  for (size_t v = 0; v < slots.size(); ++v) {
    if (slots[v].bytes > 0) order.push_back(v);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return slots[a].bytes > slots[b].bytes; });
  std::vector<size_t> placed;
  for (size_t v : order) {
    // Intervals taken by live-at-the-same-time slots, by offset.
    std::vector<std::pair<size_t, size_t>> taken;
    for (size_t p : placed) {
      if (lifetimes_meet(slots[v], slots[p])) {
        taken.emplace_back(size_t(plan.offsets[p]), size_t(plan.offsets[p]) + slots[p].bytes);
      }
    }
    std::sort(taken.begin(), taken.end());
    size_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (offset + slots[v].bytes <= begin) break;
      offset = std::max(offset, align_up(end));
    }
    plan.offsets[v] = int64_t(offset);
    plan.arena_bytes = std::max(plan.arena_bytes, align_up(offset + slots[v].bytes));
    placed.push_back(v);
  }
  for (size_t v = 0; v < values.size(); ++v) {
    if (values[v].bytes > 0) plan.offsets[v] = plan.offsets[slot_owner(values, v)];
  }
  return plan;
}

bool memory_plan_is_valid(const std::vector<PlannedValue>& values, const MemoryPlan& plan) {
  for (size_t a = 0; a < values.size(); ++a) {
    if (values[a].bytes == 0) continue;
    if (plan.offsets[a] < 0 || size_t(plan.offsets[a]) % kArenaAlignment != 0 ||
        size_t(plan.offsets[a]) + values[a].bytes > plan.arena_bytes) {
      return false;
    }
    for (size_t b = a + 1; b < values.size(); ++b) {
      if (values[b].bytes == 0 || !lifetimes_meet(values[a], values[b])) continue;
      if (slot_owner(values, a) == slot_owner(values, b)) continue;  // planned in place
      const size_t a0 = size_t(plan.offsets[a]), b0 = size_t(plan.offsets[b]);
      if (a0 < b0 + values[b].bytes && b0 < a0 + values[a].bytes) return false;
    }
  }
  return true;
}

}  // namespace qrt::runtime
