// qrt — the loop order of every kWoGemm kernel (jit/core/microkernel.h), ISA-free: K in
// chunks of rows that never cross a block of scales, and per chunk every tile of rows × columns.
// The x86 and AArch64 weight-only kernels differ only in their tiles.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "jit/core/microkernel.h"

namespace qrt::jit {

/// K rows per chunk (never across a block). The tiles of a chunk read this many weight rows ×
/// the call's columns (a few hundred KiB at most, so the two halves of a cache line and every
/// row group of the chunk hit in cache) and move along the rows, which the prefetchers follow;
/// a column strip down all of K would touch a new page per row. 32 rows keep a strip's pages
/// within the first-level DTLB (64 rows of 11008 bytes ran at a third of the speed on x86).
constexpr int64_t kWoChunkRows = 32;

/// Rows [k0, k1) of K, inside one block of scales; the first and last chunks of K (the first
/// starts the sums at +0, the others continue from y; the last adds the bias and clamps).
struct WoChunk {
  int64_t k0, k1;
  bool first, last;
};

/// Calls f(chunk) over K in order.
template <typename F>
inline void for_each_wo_chunk(const WoGemmArgs& a, F&& f) {
  for (int64_t k0 = 0; k0 < a.k;) {
    const int64_t block_end = std::min(a.k, (k0 / a.block + 1) * a.block);
    const int64_t k1 = std::min(block_end, k0 + kWoChunkRows);
    f(WoChunk{k0, k1, k0 == 0, k1 == a.k});
    k0 = k1;
  }
}

/// Every tile of `a`, chunk by chunk: groups of 4 rows, then the 1-3 rows left, each over the
/// column strips of kStep; tile(std::integral_constant<int, rows>, r0, j0, chunk).
template <int kStep, typename Tile>
void run_wo_tiles(const WoGemmArgs& a, Tile tile) {
  for_each_wo_chunk(a, [&](const WoChunk& kc) {
    int64_t r0 = 0;
    for (; r0 + 4 <= a.rows; r0 += 4) {
      for (int64_t j0 = 0; j0 < a.n; j0 += kStep) tile(std::integral_constant<int, 4>{}, r0, j0, kc);
    }
    for (int64_t j0 = 0; j0 < a.n; j0 += kStep) {
      switch (a.rows - r0) {
        case 3: tile(std::integral_constant<int, 3>{}, r0, j0, kc); break;
        case 2: tile(std::integral_constant<int, 2>{}, r0, j0, kc); break;
        case 1: tile(std::integral_constant<int, 1>{}, r0, j0, kc); break;
        default: break;
      }
    }
  });
}

}  // namespace qrt::jit
