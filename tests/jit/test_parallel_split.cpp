// Tests: how operators split their work into tasks (jit/core/parallel.h). The splits decide
// the 2-thread speed of every GEMM and convolution: tasks must cover every item exactly once,
// in near-equal parts, as many for each thread, and no more than the work is worth.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "jit/core/parallel.h"
#include "jit/ops/gemm_kernels.h"

namespace {

using qrt::jit::balanced_tasks;
using qrt::jit::part_start;

// `threads` threads that run their tasks in order on the caller (split_small_work as asked).
class FakeThreads final : public qrt::jit::Parallel {
 public:
  FakeThreads(size_t threads, bool split_small) : threads_(threads), split_small_(split_small) {}
  size_t threads() const override { return threads_; }
  void for_each(size_t n, qrt::jit::TaskFn fn) override {
    for (size_t i = 0; i < n; ++i) fn(i);
  }
  bool split_small_work() const override { return split_small_; }

 private:
  size_t threads_;
  bool split_small_;
};

// The parts of `items` in `tasks` tasks at `quantum`: their sizes, checked to tile [0, items).
std::vector<int64_t> part_sizes(int64_t items, int64_t tasks, int64_t quantum) {
  std::vector<int64_t> sizes;
  int64_t at = 0;
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t begin = part_start(items, tasks, t, quantum), end = part_start(items, tasks, t + 1, quantum);
    REQUIRE(begin == at);
    REQUIRE(end >= begin);
    sizes.push_back(end - begin);
    at = end;
  }
  REQUIRE(at == items);
  return sizes;
}

}  // namespace

TEST_CASE("balanced_tasks: 2 threads get equal shares where fixed chunks left one short") {
  FakeThreads two(2, false);
  // 128 rows of a transformer GEMM (tiles of 12, tasks of at least 4 tiles, worth 8): two
  // tasks of 64. Chunks of 24 (the earlier split) gave 72 rows to one thread and 56 to the other.
  CHECK(balanced_tasks(128, 48, 1 << 20, 8, two) == 2);
  CHECK(part_sizes(128, 2, 4) == std::vector<int64_t>{64, 64});
  // 49 rows of a wide GEMM: each thread still gets a task.
  const int64_t wide = balanced_tasks(49, 48, 1 << 20, 8, two);
  CHECK(wide == 2);
  const auto halves = part_sizes(49, wide, 4);
  CHECK(std::max(halves[0], halves[1]) - std::min(halves[0], halves[1]) <= 4);
  // 28 output rows of a stride-2 convolution in bands (at least 1 row, worth 8): 8 bands of 3
  // or 4 rows, 4 for each thread. Bands of 4 (the earlier split) made 7: 16 rows and 12.
  const int64_t bands = balanced_tasks(28, 1, 28, 8, two);
  CHECK(bands == 8);
  const auto rows = part_sizes(28, bands, 1);
  CHECK(*std::min_element(rows.begin(), rows.end()) == 3);
  CHECK(*std::max_element(rows.begin(), rows.end()) == 4);
}

TEST_CASE("balanced_tasks: a multiple of the threads, each task within the block, at most the work's worth") {
  for (int64_t threads : {1, 2, 3, 4}) {
    FakeThreads pool(size_t(threads), false);
    for (int64_t items : {1, 7, 12, 48, 49, 96, 128, 255, 784, 3136, 12544}) {
      for (int64_t worth : {2, 5, 8, 16}) {
        for (int64_t most : {12, 96, 1 << 20}) {
          CAPTURE(threads);
          CAPTURE(items);
          CAPTURE(worth);
          CAPTURE(most);
          const int64_t n = balanced_tasks(items, 24, most, worth, pool);
          REQUIRE(n >= 1);
          CHECK(n <= items);
          const auto sizes = part_sizes(items, n, 1);
          // Within the block, or as near as near-equal parts of a multiple of the threads allow.
          CHECK(*std::max_element(sizes.begin(), sizes.end()) <= std::max<int64_t>(most, (items + n - 1) / n));
          if (n > threads) CHECK(n % threads == 0);
          // More tasks than worth only where the block asks for them (rounded up to a
          // multiple of the threads).
          const int64_t by_block = (items + most - 1) / most;
          CHECK(n <= std::max(worth, (by_block + threads - 1) / threads * threads));
          // Near-equal: parts differ by at most one item.
          CHECK(*std::max_element(sizes.begin(), sizes.end()) - *std::min_element(sizes.begin(), sizes.end()) <= 1);
        }
      }
    }
  }
}

TEST_CASE("balanced_tasks: tests split small work into many tasks") {
  FakeThreads small(3, true), large(3, false);
  CHECK(balanced_tasks(40, 48, 1 << 20, 12, small) == 12);  // under split_small_work
  CHECK(balanced_tasks(40, 48, 1 << 20, 12, large) == 3);   // one for each thread
  CHECK(balanced_tasks(0, 48, 96, 12, large) == 1);         // nothing to split: one empty task
}

TEST_CASE("window_split: a row's window tiles cover it exactly, evenly where the tiles are tall") {
  using qrt::jit::GemmKernel;
  // The sweeps of run_windows: `count` tiles of `big`, then tiles of `small` to the row's end.
  for (int64_t tile = 1; tile <= 32; ++tile) {
    for (int64_t cols = 1; cols <= 200; ++cols) {
      CAPTURE(tile);
      CAPTURE(cols);
      const GemmKernel::WindowSplit s = GemmKernel::window_split(cols, tile);
      REQUIRE(s.big >= 1);
      REQUIRE(s.big <= tile);
      const int64_t rest = cols - s.count * s.big;
      REQUIRE(rest >= 0);
      if (rest > 0) {
        REQUIRE(s.small >= 1);
        REQUIRE(rest % s.small == 0);
      }
      const int64_t tiles = s.count + (rest > 0 ? rest / s.small : 0);
      if (tile >= 8) {
        CHECK(tiles == (cols + tile - 1) / tile);  // as few tiles as whole ones need
        if (rest > 0) CHECK(s.small == s.big - 1);  // and no short remainder
      } else {
        CHECK(s.count == cols / tile);
        CHECK(rest == cols % tile);  // whole tiles and one remainder
      }
      // The heights to generate are exactly those the sweeps call.
      std::vector<unsigned> want;
      if (s.count > 0) want.push_back(unsigned(s.big));
      if (rest > 0) want.push_back(unsigned(s.small));
      CHECK(s.heights() == want);
    }
  }
  const GemmKernel::WindowSplit s28 = GemmKernel::window_split(28, 12);
  CHECK(s28.big == 10);
  CHECK(s28.count == 1);
  CHECK(s28.small == 9);  // 10, 9, 9 instead of 12, 12, 4
  const GemmKernel::WindowSplit s56 = GemmKernel::window_split(56, 6);
  CHECK(s56.count == 9);
  CHECK(s56.small == 2);  // 6-row tiles keep their one remainder
}
