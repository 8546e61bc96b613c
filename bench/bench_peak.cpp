// Google Benchmark: the ceilings qrt's kernels are measured against on this host.
//
// BM_peak_dot4/<level>/<path>/threads:<n>: the port-bound throughput of the multiply-add each
// x86 GEMM path is built on, many independent accumulator chains in one loop so that neither
// latency nor loads limit it. GOPS counts 2 ops per multiply-add (vpdpbusd zmm: 64 u8 x s8
// products summed into 16 lanes = 128 ops):
//   avx512-vnni/dot4    vpdpbusd zmm (EVEX), 24 accumulators
//   avx2-vnni/dot4      {vex} vpdpbusd ymm (AVX-VNNI), 12 accumulators
//   avx512-amx/tdpbusd  AMX tdpbusd, 4 accumulator tiles of 16 x 16 int32 (16 x 16 x 64 products
//                       each) from 2 A and 2 B tiles loaded once: the 2 x 2 block of qrt's tile
//   avx2/maddubs        vpmaddubsw ymm -> vpmaddwd(ones) -> vpaddd: 32 products per chain step
//   avx2/maddwd         vpmaddwd ymm -> vpaddd: 16 products per chain step (the exact s16 path)
//   avx2/maddwd_widen   vpmovsxbw ymm (16 s8 weights from L1) -> vpmaddwd -> vpaddd: the exact
//                       path where every weight is widened once per use (1-row tiles, GEMV)
// The avx2 chains end in vpaddd as qrt's tiles do: vpmaddubsw's s16 pair sums cannot be added
// with vpaddd directly, so its row widens them with vpmaddwd by ones first, like the kernels.
//
// BM_peak_exact_tile/avx512-vnni/k:<K>/threads:<n>: the vector-pipe bound of the exact u8 GEMM
// tile at depth K under docs/numerics.md: per 32 results of a row K/4 x 2 vpdpbusd, then the
// requantization the tiles run (vcvtdq2ps, vmulps, vcvtps2dq per 16 results) and, per row
// pair, the narrowing of gemm_zmm_epilogue.h (2 vpackssdw, 2 vpaddsw, vpackuswb, vpermd,
// vpmaxub). Registers only and no dependence from the epilogue back into the accumulators, so
// loads, stores and latency do not limit it: a ceiling for each K, which small-K 1x1
// convolutions are measured against (where vmulps shares vpdpbusd's pipes, as on AMD Zen 4, the
// epilogue takes about 2 vpdpbusd slots per 16 results: a 16-deep tile reaches about 4 / 6 of
// the vpdpbusd peak; performance.md, the ninth session). GOPS counts the GEMM's ops,
// 2 x K per result. Six rows (12 accumulators) keep every operand in registers.
//
// BM_peak_f32/<level>/mul_add/threads:<n>: the f32 kernels' separate vmulps + vaddps per
// product (qrt's f32 contract has no FMA), 24 accumulator chains; 2 ops per lane.
//
// BM_read_bandwidth/<bytes>/threads:<n>: streaming reads of a buffer of that size with 32-byte
// AVX2 loads summed into registers (no stores), bytes_per_second = the rate at which that
// level of the hierarchy (L2, L3, DRAM) delivers data; the GEMV rows of bench_gemm.cpp and
// bench_peers.cpp report their weights' stream rate on the same scale.
//
// Rows at threads:2 run one copy of the loop on each thread of qrt's pool (the bandwidth rows
// split the buffer in halves): on a host whose two CPUs are SMT siblings of one core the peak
// does not double.
//
// Levels the host lacks are not registered (qrt::jit::host_isas(), as bench_kernel_list.cpp
// does), so no row executes an instruction the CPU cannot run.
//
// Why asm statements and not <immintrin.h>: tests/layering.sh allows ISA headers only in jit
// backend folders. Each statement is one chain step (one instruction, or the avx2 chains'
// product + add) on GCC vector types in an __attribute__((target)) function: the compiler
// still allocates registers and lays out the loop as it would for intrinsics, but cannot fold
// the loop-invariant products out of the loop (one-instruction statements for the avx2
// products were hoisted and merged into one: every step reads its accumulator).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "jit/core/isa.h"
#include "runtime/thread_pool.h"

namespace {

using v16si = int32_t __attribute__((vector_size(64)));
using v8si = int32_t __attribute__((vector_size(32)));
using v4di = int64_t __attribute__((vector_size(32)));

// Lists of accumulator indices, expanded by the loops below.
#define QRT_PEAK_X8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define QRT_PEAK_X12(M) QRT_PEAK_X8(M) M(8) M(9) M(10) M(11)
#define QRT_PEAK_X24(M) QRT_PEAK_X12(M) M(12) M(13) M(14) M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23)

/// vpdpbusd zmm, 24 independent accumulators (latency 4-5 cycles x 2 ports needs >= 10): runs
/// `reps` loop trips of 24 instructions and returns a value depending on every one of them.
__attribute__((target("avx512f,avx512bw,avx512vnni"), noinline)) int64_t peak_dot4_zmm(int64_t reps, int32_t seed) {
  const v16si a = v16si{} + seed, b = v16si{} + (seed ^ 0x01010101);
#define DECL(i) v16si c##i = v16si{} + i;
  QRT_PEAK_X24(DECL)
#undef DECL
  for (int64_t r = 0; r < reps; ++r) {
#define STEP(i) asm("vpdpbusd %2, %1, %0" : "+v"(c##i) : "v"(a), "v"(b));
    QRT_PEAK_X24(STEP)
#undef STEP
  }
  v16si s{};
#define SUM(i) s += c##i;
  QRT_PEAK_X24(SUM)
#undef SUM
  return int64_t(s[0]) + s[15];
}

/// The exact tile's instruction mix at `Steps` k steps (K = 4 x Steps), 6 rows x 32 columns
/// (12 zmm accumulators, rows 2i and 2i + 1 a pair): per loop trip, Steps vpdpbusd per
/// accumulator, then the requantization and the row pairs' narrowing of copies of them.
template <int Steps>
__attribute__((target("avx512f,avx512bw,avx512vnni"), noinline)) int64_t peak_exact_tile_zmm(int64_t reps, int32_t seed) {
  using v16sf = float __attribute__((vector_size(64)));
  const v16si a = v16si{} + seed, b = v16si{} + (seed ^ 0x01010101);
  const v16sf m = v16sf{} + 0.001f;
  const v16si zero_words = v16si{} + 0x00030003, lower_bytes = v16si{} + 0x02020202;
  const v16si order = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};
#define DECL(i) v16si c##i = v16si{} + i;
  QRT_PEAK_X12(DECL)
#undef DECL
  for (int64_t r = 0; r < reps; ++r) {
    for (int k = 0; k < Steps; ++k) {
#define STEP(i) asm("vpdpbusd %2, %1, %0" : "+v"(c##i) : "v"(a), "v"(b));
      QRT_PEAK_X12(STEP)
#undef STEP
    }
    // Requantize: f32(acc) * M, rounded to nearest even (a copy: the chains go on).
#define REQUANT(i)                                                                                 \
  v16si q##i;                                                                                      \
  {                                                                                                \
    v16sf f;                                                                                       \
    asm("vcvtdq2ps %1, %0" : "=v"(f) : "v"(c##i));                                                 \
    asm("vmulps %2, %1, %0" : "=v"(f) : "v"(f), "v"(m));                                           \
    asm("vcvtps2dq %1, %0" : "=v"(q##i) : "v"(f));                                                 \
  }
    QRT_PEAK_X12(REQUANT)
#undef REQUANT
    // Each row pair (halves 4p..4p+3): two word packs, the zero points, the byte pack, the
    // column order and the lower bound.
#define NARROW(x0, x1, y0, y1)                                                                     \
  {                                                                                                \
    v16si u, w;                                                                                    \
    asm("vpackssdw %2, %1, %0" : "=v"(u) : "v"(q##x0), "v"(q##x1));                                \
    asm("vpackssdw %2, %1, %0" : "=v"(w) : "v"(q##y0), "v"(q##y1));                                \
    asm("vpaddsw %2, %1, %0" : "=v"(u) : "v"(u), "v"(zero_words));                                 \
    asm("vpaddsw %2, %1, %0" : "=v"(w) : "v"(w), "v"(zero_words));                                 \
    asm("vpackuswb %2, %1, %0" : "=v"(u) : "v"(u), "v"(w));                                        \
    asm("vpermd %2, %1, %0" : "=v"(u) : "v"(order), "v"(u));                                       \
    asm volatile("vpmaxub %2, %1, %0" : "=v"(u) : "v"(u), "v"(lower_bytes)); /* kept: no reader */ \
  }
    NARROW(0, 1, 2, 3)
    NARROW(4, 5, 6, 7)
    NARROW(8, 9, 10, 11)
#undef NARROW
  }
  v16si s{};
#define SUM(i) s += c##i;
  QRT_PEAK_X12(SUM)
#undef SUM
  return int64_t(s[0]) + s[15];
}

/// {vex} vpdpbusd ymm (AVX-VNNI; "%{" is a literal brace in GCC asm), 12 accumulators: VEX reaches only ymm0-15, so "x" operands
/// (12 accumulators + 2 sources fit).
__attribute__((target("avx2,avxvnni"), noinline)) int64_t peak_dot4_ymm(int64_t reps, int32_t seed) {
  const v8si a = v8si{} + seed, b = v8si{} + (seed ^ 0x01010101);
#define DECL(i) v8si c##i = v8si{} + i;
  QRT_PEAK_X12(DECL)
#undef DECL
  for (int64_t r = 0; r < reps; ++r) {
#define STEP(i) asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(c##i) : "x"(a), "x"(b));
    QRT_PEAK_X12(STEP)
    QRT_PEAK_X12(STEP)
#undef STEP
  }
  v8si s{};
#define SUM(i) s += c##i;
  QRT_PEAK_X12(SUM)
#undef SUM
  return int64_t(s[0]) + s[7];
}

// The avx2 rows' loop: 8 ymm accumulators c0..c7, `reps` trips of STEP(i) (one chain step of
// accumulator i), and a result that depends on every chain.
#define QRT_PEAK_V8_DECL(i) v8si c##i = v8si{} + i;
#define QRT_PEAK_V8_SUM(i) s += c##i;
#define QRT_PEAK_YMM8_CHAINS(STEP)     \
  QRT_PEAK_X8(QRT_PEAK_V8_DECL)        \
  for (int64_t r = 0; r < reps; ++r) { \
    QRT_PEAK_X8(STEP)                  \
  }                                    \
  v8si s{};                            \
  QRT_PEAK_X8(QRT_PEAK_V8_SUM)         \
  return int64_t(s[0]) + s[7];

/// vpmaddubsw -> vpmaddwd(ones) -> vpaddd on ymm, 8 accumulators (the products of one step
/// are independent of the chain, so out-of-order execution overlaps them; 8 + 3 sources + the
/// products' temporaries fit in 16 registers).
__attribute__((target("avx2"), noinline)) int64_t peak_maddubs_ymm(int64_t reps, int32_t seed) {
  const v8si a = v8si{} + seed, b = v8si{} + (seed ^ 0x01010101), ones = v8si{} + 0x00010001;
#define STEP(i)                                                                                  \
  {                                                                                              \
    v8si t;                                                                                      \
    asm("vpmaddubsw %3, %2, %1\n\tvpmaddwd %4, %1, %1\n\tvpaddd %1, %0, %0"                       \
        : "+x"(c##i), "=&x"(t)                                                                   \
        : "x"(a), "x"(b), "x"(ones));                                                            \
  }
  QRT_PEAK_YMM8_CHAINS(STEP)
#undef STEP
}

/// vpmaddwd -> vpaddd on ymm, 8 accumulators.
__attribute__((target("avx2"), noinline)) int64_t peak_maddwd_ymm(int64_t reps, int32_t seed) {
  const v8si a = v8si{} + seed, b = v8si{} + (seed ^ 0x01010101);
#define STEP(i)                                                                                  \
  {                                                                                              \
    v8si t;                                                                                      \
    asm("vpmaddwd %3, %2, %1\n\tvpaddd %1, %0, %0" : "+x"(c##i), "=&x"(t) : "x"(a), "x"(b));          \
  }
  QRT_PEAK_YMM8_CHAINS(STEP)
#undef STEP
}

/// The exact GEMV step of the avx2 tiles: vpmovsxbw of 16 s8 weights from memory (an L1-resident
/// 128-byte block, one load per step), vpmaddwd by the broadcast activations, vpaddd; 8
/// accumulators. Every weight is widened once per use, as in a 1-row tile.
__attribute__((target("avx2"), noinline)) int64_t peak_maddwd_widen_ymm(int64_t reps, int32_t seed) {
  alignas(64) int8_t w[8 * 16];
  for (int i = 0; i < 8 * 16; ++i) w[i] = int8_t(seed + i);
  const v8si a = v8si{} + seed;
#define STEP(i)                                                                                  \
  {                                                                                              \
    v8si t;                                                                                      \
    asm("vpmovsxbw %2, %1\n\tvpmaddwd %3, %1, %1\n\tvpaddd %1, %0, %0"                           \
        : "+x"(c##i), "=&x"(t)                                                                   \
        : "m"(*reinterpret_cast<const int8_t(*)[16]>(w + 16 * i)), "x"(a));                      \
  }
  QRT_PEAK_YMM8_CHAINS(STEP)
#undef STEP
}

/// The f32 kernels' step: vmulps then vaddps into an accumulator (no FMA: qrt's f32 contract),
/// 24 zmm accumulators; on cores with separate add pipes the pair issues like one FMA.
__attribute__((target("avx512f"), noinline)) int64_t peak_f32_zmm(int64_t reps, int32_t seed) {
  using v16sf = float __attribute__((vector_size(64)));
  const v16sf a = v16sf{} + float(seed), b = v16sf{} + 0.5f;
#define DECL(i) v16sf c##i = v16sf{} + float(i);
  QRT_PEAK_X24(DECL)
#undef DECL
  for (int64_t r = 0; r < reps; ++r) {
#define STEP(i)                                                                    \
  {                                                                                \
    v16sf t;                                                                       \
    asm("vmulps %3, %2, %1\n\tvaddps %1, %0, %0" : "+v"(c##i), "=&v"(t) : "v"(a), "v"(b)); \
  }
    QRT_PEAK_X24(STEP)
#undef STEP
  }
  v16sf s{};
#define SUM(i) s += c##i;
  QRT_PEAK_X24(SUM)
#undef SUM
  return int64_t(s[0]) + int64_t(s[15]);
}

/// The same on ymm with 12 accumulators (AVX2's 16 registers).
__attribute__((target("avx2"), noinline)) int64_t peak_f32_ymm(int64_t reps, int32_t seed) {
  using v8sf = float __attribute__((vector_size(32)));
  const v8sf a = v8sf{} + float(seed), b = v8sf{} + 0.5f;
#define DECL(i) v8sf c##i = v8sf{} + float(i);
  QRT_PEAK_X12(DECL)
#undef DECL
  for (int64_t r = 0; r < reps; ++r) {
#define STEP(i)                                                                    \
  {                                                                                \
    v8sf t;                                                                        \
    asm("vmulps %3, %2, %1\n\tvaddps %1, %0, %0" : "+x"(c##i), "=&x"(t) : "x"(a), "x"(b)); \
  }
    QRT_PEAK_X12(STEP)
    QRT_PEAK_X12(STEP)
#undef STEP
  }
  v8sf s{};
#define SUM(i) s += c##i;
  QRT_PEAK_X12(SUM)
#undef SUM
  return int64_t(s[0]) + int64_t(s[7]);
}

#undef QRT_PEAK_X8
#undef QRT_PEAK_X12
#undef QRT_PEAK_X24

/// AMX tdpbusd, the 2 x 2 block of qrt's AMX tile (gemm_amx.cpp) without its loads: 4
/// accumulators (tdpbusd's latency is several times its 16-cycle issue interval). Only
/// registered where host_isas() has avx512-amx, i.e. after Linux granted the tile state.
__attribute__((noinline)) int64_t peak_amx(int64_t reps, int32_t seed) {
  alignas(64) uint8_t config[64] = {};
  config[0] = 1;  // palette 1: eight tiles of 16 rows x 64 bytes
  for (int t = 0; t < 8; ++t) {
    config[16 + 2 * t] = 64;
    config[48 + t] = 16;
  }
  alignas(64) int8_t operands[16 * 64];
  std::memset(operands, seed & 0x3f, sizeof operands);
  alignas(64) int32_t out[16 * 16];
  const int64_t stride = 64;
  asm volatile("ldtilecfg %0" ::"m"(config));
  asm volatile(
      "tileloadd (%0,%1,1), %%tmm0\n\ttileloadd (%0,%1,1), %%tmm1\n\t"
      "tileloadd (%0,%1,1), %%tmm2\n\ttileloadd (%0,%1,1), %%tmm3\n\t"
      "tilezero %%tmm4\n\ttilezero %%tmm5\n\ttilezero %%tmm6\n\ttilezero %%tmm7" ::"r"(operands),
      "r"(stride)
      : "memory");
  for (int64_t r = 0; r < reps; ++r) {
    asm volatile(
        "tdpbusd %%tmm2, %%tmm0, %%tmm4\n\ttdpbusd %%tmm3, %%tmm0, %%tmm5\n\t"
        "tdpbusd %%tmm2, %%tmm1, %%tmm6\n\ttdpbusd %%tmm3, %%tmm1, %%tmm7" ::
            : "memory");
  }
  asm volatile("tilestored %%tmm7, (%0,%1,1)\n\ttilerelease" ::"r"(out), "r"(stride) : "memory");
  return out[0] + out[255];
}

/// One peak loop: the function, the level it needs, and the ops one loop trip performs.
struct PeakRow {
  const char* name;  ///< "<level>/<path>", the row's name after BM_peak_dot4/
  qrt::jit::Isa isa;  ///< the level the instructions need
  int64_t (*loop)(int64_t reps, int32_t seed);
  double ops_per_rep;  ///< 2 x multiply-adds per loop trip
};

// zmm vpdpbusd: 64 products per instruction; ymm: 32; a maddubs step: 32; a maddwd step: 16.
const PeakRow kPeakRows[] = {
    {"avx512-amx/tdpbusd", qrt::jit::Isa::kAvx512Amx, peak_amx, 2.0 * 4 * 16 * 16 * 64},
    {"avx512-vnni/dot4", qrt::jit::Isa::kAvx512Vnni, peak_dot4_zmm, 2.0 * 24 * 64},
    {"avx2-vnni/dot4", qrt::jit::Isa::kAvx2Vnni, peak_dot4_ymm, 2.0 * 24 * 32},
    {"avx2/maddubs", qrt::jit::Isa::kAvx2, peak_maddubs_ymm, 2.0 * 8 * 32},
    {"avx2/maddwd", qrt::jit::Isa::kAvx2, peak_maddwd_ymm, 2.0 * 8 * 16},
    {"avx2/maddwd_widen", qrt::jit::Isa::kAvx2, peak_maddwd_widen_ymm, 2.0 * 8 * 16},
};

// The exact tile at K = 16, 24, 32, 64, 128: 6 rows x 32 results x 2 x K ops per loop trip.
const PeakRow kPeakExactTileRows[] = {
    {"avx512-vnni/k:16", qrt::jit::Isa::kAvx512Vnni, peak_exact_tile_zmm<4>, 2.0 * 6 * 32 * 16},
    {"avx512-vnni/k:24", qrt::jit::Isa::kAvx512Vnni, peak_exact_tile_zmm<6>, 2.0 * 6 * 32 * 24},
    {"avx512-vnni/k:32", qrt::jit::Isa::kAvx512Vnni, peak_exact_tile_zmm<8>, 2.0 * 6 * 32 * 32},
    {"avx512-vnni/k:64", qrt::jit::Isa::kAvx512Vnni, peak_exact_tile_zmm<16>, 2.0 * 6 * 32 * 64},
    {"avx512-vnni/k:128", qrt::jit::Isa::kAvx512Vnni, peak_exact_tile_zmm<32>, 2.0 * 6 * 32 * 128},
};

// f32 multiply + add pairs (2 ops per lane): zmm 24 x 16 lanes, ymm 24 x 8.
const PeakRow kPeakF32Rows[] = {
    {"avx512-vnni/mul_add", qrt::jit::Isa::kAvx512Vnni, peak_f32_zmm, 2.0 * 24 * 16},
    {"avx2/mul_add", qrt::jit::Isa::kAvx2, peak_f32_ymm, 2.0 * 24 * 8},
};

void BM_peak_dot4(benchmark::State& state, const PeakRow* row) {
  const size_t threads = size_t(state.range(0));
  qrt::runtime::ThreadPool pool(threads);
  const int64_t reps = 4096;  // ~ 10-50 us per call: long enough to hide the pool's hand-off
  std::vector<int64_t> sink(threads);
  for (auto _ : state) {
    pool.for_each(threads, [&](size_t t) { sink[t] = row->loop(reps, int32_t(t) + 3); });
    benchmark::DoNotOptimize(sink.data());
  }
  state.counters["GOPS"] = benchmark::Counter(row->ops_per_rep * double(reps) * double(threads),
                                              benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

/// Sums `bytes` (a multiple of 256) at `p` (64-byte aligned) as int64 lanes: 8 independent ymm
/// accumulators, so two loads per cycle can issue and the adds never wait on each other.
__attribute__((target("avx2"), noinline)) int64_t read_sum_avx2(const uint8_t* p, size_t bytes) {
  const auto* v = static_cast<const v4di*>(__builtin_assume_aligned(p, 64));
  v4di s0{}, s1{}, s2{}, s3{}, s4{}, s5{}, s6{}, s7{};
  for (size_t i = 0, n = bytes / sizeof(v4di); i < n; i += 8) {
    s0 += v[i + 0];
    s1 += v[i + 1];
    s2 += v[i + 2];
    s3 += v[i + 3];
    s4 += v[i + 4];
    s5 += v[i + 5];
    s6 += v[i + 6];
    s7 += v[i + 7];
  }
  const v4di s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
  return s[0] + s[1] + s[2] + s[3];
}

/// A 64-byte-aligned buffer that frees itself.
struct Buffer {
  explicit Buffer(size_t bytes) : data(static_cast<uint8_t*>(std::aligned_alloc(64, bytes))) {}
  ~Buffer() { std::free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  uint8_t* data;
};

void BM_read_bandwidth(benchmark::State& state) {
  const size_t bytes = size_t(state.range(0)), threads = size_t(state.range(1));
  Buffer buf(bytes);
  if (!buf.data) return state.SkipWithError("out of memory");
  std::memset(buf.data, 1, bytes);  // touch every page before timing
  qrt::runtime::ThreadPool pool(threads);
  const size_t part = bytes / threads / 256 * 256;  // every thread reads its own slice
  // Small buffers are read several times per task, so that a call reads >= 8 MiB and the
  // pool's hand-off (a few microseconds) does not count against the cache's rate.
  const size_t passes = std::max<size_t>(1, (size_t(8) << 20) / bytes);
  std::vector<int64_t> sink(threads);
  for (auto _ : state) {
    pool.for_each(threads, [&](size_t t) {
      for (size_t p = 0; p < passes; ++p) sink[t] += read_sum_avx2(buf.data + t * part, part);
    });
    benchmark::DoNotOptimize(sink.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(passes * part * threads));
}

/// BM_pool_handoff/tasks:<n>/threads:<t>: one ThreadPool::for_each of `n` empty tasks, the
/// fixed cost every op split over the threads pays (publishing the job, the workers' claims,
/// the completion count crossing cores), to set beside the time of the small ops it splits.
void BM_pool_handoff(benchmark::State& state) {
  qrt::runtime::ThreadPool pool(size_t(state.range(1)));
  std::vector<int64_t> sink(64 * 8);
  for (auto _ : state) {
    pool.for_each(size_t(state.range(0)), [&](size_t t) { sink[(t % 8) * 64] += 1; });
    benchmark::DoNotOptimize(sink.data());
  }
}

/// Registers `prefix` + each row's name at 1 and 2 threads, for the rows whose level the host
/// has (the others would fault on their instructions).
template <size_t N>
void register_peak_rows(const char* prefix, const PeakRow (&rows)[N], const qrt::jit::IsaSet& host) {
  for (const PeakRow& row : rows) {
    if (!host.has(row.isa)) continue;
    benchmark::RegisterBenchmark((std::string(prefix) + row.name).c_str(), BM_peak_dot4, &row)
        ->ArgName("threads")
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime();
  }
}

const bool registered = [] {
  const qrt::jit::IsaSet& host = qrt::jit::host_isas();
  register_peak_rows("BM_peak_dot4/", kPeakRows, host);
  register_peak_rows("BM_peak_exact_tile/", kPeakExactTileRows, host);
  register_peak_rows("BM_peak_f32/", kPeakF32Rows, host);
  benchmark::RegisterBenchmark("BM_pool_handoff", BM_pool_handoff)
      ->ArgNames({"tasks", "threads"})
      ->ArgsProduct({{2, 8}, {1, 2}})
      ->UseRealTime();
  if (host.has(qrt::jit::Isa::kAvx2)) {
    // L2 (256 KiB), L2 or L3 by host (4 MiB), L3 (16 MiB: the 4096x4096 GEMV's weights),
    // then sizes beyond most L3s: 64 MiB, 256 MiB, 1 GiB.
    benchmark::RegisterBenchmark("BM_read_bandwidth", BM_read_bandwidth)
        ->ArgNames({"", "threads"})  // BM_read_bandwidth/<bytes>/threads:<n>
        ->ArgsProduct({{256 << 10, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30}, {1, 2}})
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
