// qrt — how the f32 kernels (matmul with constant weights, the convolution forms) split their
// work into tasks and kernel calls.
#pragma once

#include <algorithm>
#include <cstdint>

#include "jit/core/parallel.h"

namespace qrt::jit {

/// The column padding of the f32 kernels' packed filter and weight matrices
/// (F32GemmArgs::n_padded is a multiple of it).
inline constexpr int64_t kF32PanelCols = 16;

/// `n` columns rounded up to a multiple of kF32PanelCols.
inline int64_t f32_padded_cols(int64_t n) { return (n + kF32PanelCols - 1) / kF32PanelCols * kF32PanelCols; }

/// The least work in multiply-adds worth a task of its own in the f32 kernels (~1 µs at their
/// rates: about what handing a task to another thread costs).
inline constexpr int64_t kMinF32TaskMacs = 256 * 1024;

/// Calls fn(i) for items [0, items) of `work` multiply-adds in all, in as many tasks as that
/// work is worth (worthwhile_tasks), each a contiguous run of items.
template <typename F>
void for_each_in_worthwhile_tasks(Parallel& parallel, int64_t items, int64_t work, F&& fn) {
  if (items <= 0) return;
  const int64_t tasks = std::min(items, worthwhile_tasks(work, kMinF32TaskMacs, parallel));
  const int64_t per_task = (items + tasks - 1) / tasks;
  parallel.for_each(size_t((items + per_task - 1) / per_task), [&](size_t t) {
    for (int64_t i = int64_t(t) * per_task; i < std::min(items, int64_t(t + 1) * per_task); ++i) fn(i);
  });
}

/// Calls fn(first_row, count) for blocks of an f32 GEMM of `rows` rows by `k` by `n`: tasks as
/// the work is worth (worthwhile_tasks), each of whole 12-row tiles (every native tile height
/// divides 12), and blocks of at most 256 KiB of activations, so that a kF32Gemm call, which
/// walks its weights panel by panel and its rows inside each panel, rereads the rows from L2
/// and streams each weight panel once per block. One thread: one task, the fewest blocks.
template <typename F>
void for_each_f32_row_block(Parallel& parallel, int64_t rows, int64_t k, int64_t n, F&& fn) {
  constexpr int64_t kTile = 12, kBlockBytes = 256 * 1024;
  const int64_t block = std::max(kTile, kBlockBytes / (4 * std::max<int64_t>(k, 1)) / kTile * kTile);
  const int64_t worth = worthwhile_tasks(rows * k * n, kMinF32TaskMacs, parallel);
  if (worth <= 1) {  // one thread: L2 blocks in order
    for (int64_t r = 0; r < rows; r += block) fn(r, std::min(block, rows - r));
    return;
  }
  // Near-equal row tasks, as many for each thread (balanced_tasks).
  const int64_t tasks = balanced_tasks(rows, 2 * kTile, block, worth, parallel);
  parallel.for_each(size_t(tasks), [&](size_t t) {
    const int64_t first = part_start(rows, tasks, int64_t(t), 4), last = part_start(rows, tasks, int64_t(t) + 1, 4);
    for (int64_t r = first; r < last; r += block) fn(r, std::min(block, last - r));
  });
}

}  // namespace qrt::jit
