// Tests: every kernel-list row at the level under test (QRT_TEST_ISA) against its scalar twin,
// micro-kernel by micro-kernel, on randomized argument blocks: tails of every width, every
// output kind, extreme zero points and bounds, saturating multipliers. The rows of levels the
// host lacks run in their own (skipped) test executables; scalar rows are the twins themselves
// and are covered op by op against the reference.
#include <doctest/doctest.h>

#include <array>

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "ir/float_format.h"
#include "isa_levels.h"
#include "jit/core/aligned_bytes.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/kernel_list.h"
#include "jit/llvm/llvm_backend.h"
#include "jit/ops/float_widening.h"
#include "jit/ref/scalar_backend.h"
#include "jit/ref/twin_arith.h"
#include "jit/ref/twins.h"

namespace {

using namespace qrt::jit;

// Runs the row's kernel and the twin on the same arguments; `make` fills args and the output
// buffers (two copies, one per side) and returns the output's byte count.
struct Side {
  std::vector<uint8_t> out;
};

std::shared_ptr<const CompiledKernel> kernel_of(const Backend& b, const KernelDesc& d) {
  REQUIRE_MESSAGE(b.why_not(d) == "", d.name() << ": " << b.why_not(d));
  auto k = code_cache().get(d);
  REQUIRE_MESSAGE(k.is_ok(), k.status().to_string());
  return *k;
}

template <typename Args>
void run_both(const Backend& b, const KernelDesc& d, Args kernel_args, Args twin_args) {
  auto k = kernel_of(b, d);
  call_microkernel(k->entry(), kernel_args, d);
  call_microkernel(twin_entry(d.op), twin_args, d);
}

// The first differing byte, or -1.
long first_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i]) return long(i);
  }
  return a.size() == b.size() ? -1 : long(std::min(a.size(), b.size()));
}

// LLVM compiles a kernel in tens to hundreds of milliseconds, asmjit in microseconds: the grids
// of kernel shapes below run whole on native rows and a rotating part (`keep` of every `of`
// points, each value of each axis still met) on the others, which took 40 of this
// executable's 84 s at a level whole.
bool in_part(const Backend& b, unsigned point, unsigned keep, unsigned of) {
  return b.generator() == Generator::kNative || point % of < keep;
}

std::vector<uint8_t> random_bytes(std::mt19937& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = uint8_t(rng());
  return v;
}

void put_f(std::vector<uint8_t>& block, size_t at, float v) { std::memcpy(block.data() + at * 4, &v, 4); }
void put_i(std::vector<uint8_t>& block, size_t at, int32_t v) { std::memcpy(block.data() + at * 4, &v, 4); }

// An epilogue block of `width` lanes for output kind `out`: random biases and zero points,
// multipliers over several decades (some saturate), bounds inside the output's storage.
std::vector<uint8_t> random_epilogue(std::mt19937& rng, unsigned width, OutKind out) {
  std::vector<uint8_t> block(size_t(kEpFields) * width * 4 + 64, 0);
  std::uniform_int_distribution<int> bias(-200000, 200000), zw(-3, 3);
  std::uniform_real_distribution<double> decade(-6.0, 0.0);
  for (unsigned l = 0; l < width; ++l) {
    put_i(block, kEpBias * width + l, bias(rng));
    put_i(block, kEpWeightZeroPoint * width + l, zw(rng));
    put_f(block, kEpMultiplier * width + l, float(std::pow(10.0, decade(rng))) * (rng() % 5 == 0 ? -1.0f : 1.0f));
    const int smin = out == OutKind::kS8 ? -128 : 0, smax = out == OutKind::kS8 ? 127 : 255;
    const int zo = std::uniform_int_distribution<int>(smin, smax)(rng);
    const int lo = rng() % 4 == 0 ? smin + 10 : smin, hi = rng() % 4 == 0 ? smax - 10 : smax;
    put_f(block, kEpLowerBound * width + l, float(lo - zo));
    put_f(block, kEpUpperBound * width + l, float(hi - zo));
    put_i(block, kEpOutputZeroPoint * width + l, zo);
  }
  return block;
}

// An epilogue block of `width` lanes with TFLite's Q31 fields (KernelDesc::q31): multipliers
// in [2^30, 2^31) and a few 0 or small; shifts from -31 (all rounding) to 12 (left shifts that
// wrap the accumulator); zero points and bounds as random_epilogue's.
std::vector<uint8_t> random_q31_epilogue(std::mt19937& rng, unsigned width, OutKind out) {
  std::vector<uint8_t> block = random_epilogue(rng, width, out);
  for (unsigned l = 0; l < width; ++l) {
    const uint32_t pick = rng() % 10;
    const int32_t m = pick == 0 ? 0 : pick == 1 ? int32_t(rng() % 1000) : int32_t((1u << 30) | (rng() & ((1u << 30) - 1)));
    const int32_t shift = int32_t(rng() % 44) - 31;
    const int32_t right = std::max(-shift, 0), mask = int32_t((int64_t(1) << right) - 1);
    float lo, hi;
    std::memcpy(&lo, block.data() + (kEpLowerBound * width + l) * 4, 4);
    std::memcpy(&hi, block.data() + (kEpUpperBound * width + l) * 4, 4);
    put_i(block, kEpMultiplier * width + l, m);
    put_i(block, kEpLowerBound * width + l, int32_t(lo));
    put_i(block, kEpUpperBound * width + l, int32_t(hi));
    put_i(block, kEpQ31LeftShift * width + l, std::max(shift, 0));
    put_i(block, kEpQ31RightShift * width + l, right);
    put_i(block, kEpQ31RemainderMask * width + l, mask);
    put_i(block, kEpQ31Threshold * width + l, mask >> 1);
  }
  return block;
}

// The epilogues of `blocks` consecutive blocks of `width` lanes (depthwise layouts).
std::vector<uint8_t> random_block_epilogues(std::mt19937& rng, int64_t blocks, unsigned width, OutKind out,
                                           bool q31 = false) {
  std::vector<uint8_t> ep;
  for (int64_t i = 0; i < blocks; ++i) {
    const auto e = q31 ? random_q31_epilogue(rng, width, out) : random_epilogue(rng, width, out);
    ep.insert(ep.end(), e.begin(), e.begin() + int64_t(kEpFields) * width * 4);
  }
  return ep;
}

// A 64-byte aligned copy of `bytes`, as packed operands are (the ABI requires it).
AlignedBytes aligned(const std::vector<uint8_t>& bytes) {
  AlignedBytes a(bytes.size());
  std::memcpy(a.data(), bytes.data(), bytes.size());
  return a;
}

unsigned out_bytes(OutKind k) { return k == OutKind::kS32 || k == OutKind::kF32 ? 4 : 1; }

// The packed weights of a tile whose k step spans `wide` group steps, as pack_gemm lays them
// out when k leaves `tail` group steps beyond whole k steps: the `steps` group steps (each
// `step_bytes`), then the window block — the last `wide` steps again, the ones before the
// tail zero.
std::vector<uint8_t> with_window_block(const std::vector<uint8_t>& w, int64_t steps, int64_t wide, int64_t tail,
                                       int64_t step_bytes) {
  std::vector<uint8_t> out(w.begin(), w.begin() + steps * step_bytes);
  for (int64_t i = 0; i < wide; ++i) {
    const int64_t source = steps - wide + i;
    for (int64_t b = 0; b < step_bytes; ++b) out.push_back(i < wide - tail ? 0 : w[size_t(source * step_bytes + b)]);
  }
  out.resize(out.size() + 64);
  return out;
}

void check_gemm(const Backend& b, std::mt19937& rng) {
  int cases = 0, q31_cases = 0;
  for (GemmPath path : {GemmPath::kMaddubs, GemmPath::kMaddwd, GemmPath::kDot4, GemmPath::kMlal, GemmPath::kSdot4,
                        GemmPath::kUsmmla8}) {
    const auto traits = b.gemm_traits(path);
    if (!traits) continue;
    // 8-bit results twice: the f32 requantization, then TFLite's Q31 (where the tiles have it).
    for (int variant = 0; variant < 6; ++variant) {
      const OutKind out = std::array{OutKind::kS32, OutKind::kF32, OutKind::kU8, OutKind::kS8, OutKind::kU8, OutKind::kS8}[size_t(variant)];
      const bool q31 = variant >= 4;
      if (q31 && !traits->q31_epilogue) continue;
      for (unsigned mr = 1; mr <= traits->mr; ++mr) {
        unsigned nr_index = 0;
        for (unsigned nr : {1u, 3u, 8u, 9u, traits->panel - 1, traits->panel}) {
          if (!in_part(b, unsigned(variant) + mr + nr_index++, 1, 3)) continue;
          KernelDesc d;
          d.q31 = q31;
          d.op = KernelOp::kGemm;
          d.isa = b.isa();
          d.generator = b.generator();
          d.path = path;
          d.out = out;
          d.mr = uint8_t(mr);
          d.nr = uint8_t(nr);
          d.panel = uint8_t(traits->panel);
          d.row_correction = rng() % 2;
          int64_t k_steps = int64_t(rng() % 24);
          // Tiles with a wide k step (AMX: 64 bytes) are generated for the bytes beyond it, and
          // take at least one whole step (pack_gemm's minimum k): 1-2 steps and any tail here.
          const int64_t wide = traits->k_step ? int64_t(traits->k_step / traits->k_group) : 0;
          if (wide) k_steps = wide + int64_t(rng() % uint64_t(2 * wide));
          if (wide) d.k_tail = uint8_t(k_steps * traits->k_group % traits->k_step);
          const int64_t a_stride = k_steps * traits->k_group * traits->a_bytes + 8 * (rng() % 3);
          std::vector<uint8_t> a(size_t(a_stride * mr + 64), 0);
          for (unsigned r = 0; r < mr; ++r) {
            for (int64_t i = 0; i < k_steps * traits->k_group; ++i) {
              const uint8_t v = uint8_t(rng());
              if (traits->a_bytes == 1) a[size_t(r * a_stride + i)] = v;
              else a[size_t(r * a_stride + 2 * i)] = v;  // zero-extended u16
            }
          }
          // Pair-sum path: weights small enough that no s16 pair sum saturates (its proof);
          // the exact paths take the full s8 range.
          std::vector<uint8_t> w(size_t(k_steps * traits->k_group * traits->panel + 64));
          for (auto& x : w) x = path == GemmPath::kMaddubs ? uint8_t(int8_t(int(rng() % 129) - 64)) : uint8_t(rng());
          if (d.k_tail) w = with_window_block(w, k_steps, wide, d.k_tail / traits->k_group, traits->panel * traits->k_group);
          const AlignedBytes ep = aligned(q31 ? random_q31_epilogue(rng, traits->panel, out) : random_epilogue(rng, traits->panel, out));
          const AlignedBytes wa = aligned(w);
          std::vector<int32_t> sums(mr);
          for (auto& s : sums) s = int32_t(rng() % 60000);
          const int64_t c_stride = int64_t(traits->panel * out_bytes(out)) + 4 * (rng() % 3);
          std::vector<uint8_t> c1(size_t(c_stride * mr), 0xA5), c2 = c1;
          GemmTileArgs args{a.data(), a_stride, wa.data(), k_steps, c1.data(), c_stride, ep.data(), sums.data()};
          GemmTileArgs twin = args;
          twin.c = c2.data();
          run_both(b, d, args, twin);
          CHECK_MESSAGE(first_diff(c1, c2) == -1, d.name() << " differs from its twin at byte " << first_diff(c1, c2)
                                                          << " (k_steps " << k_steps << ")");
          ++cases;
          q31_cases += q31;
        }
      }
    }
  }
  MESSAGE(cases << " GEMM tiles (" << q31_cases << " with the Q31 epilogue) of " << std::string(b.name()) << "@"
                << std::string(isa_name(b.isa())));
}

void check_pack_rows(const Backend& b, std::mt19937& rng) {
  for (GemmPath path : {GemmPath::kMaddubs, GemmPath::kMaddwd, GemmPath::kDot4, GemmPath::kMlal, GemmPath::kSdot4,
                        GemmPath::kUsmmla8}) {
    const auto traits = b.gemm_traits(path);
    if (!traits) continue;
    for (int64_t k : {1, 2, 3, 8, 9, 15, 16, 17, 24, 27, 31, 32, 33, 40, 48, 56, 63, 64, 65, 100, 127, 128, 257}) {
      for (bool flip : {false, true}) {
        KernelDesc d;
        d.op = KernelOp::kPackRows;
        d.isa = b.isa();
        d.generator = b.generator();
        d.path = path;
        d.storage_signed = flip;
        const int64_t k_padded = (k + traits->k_group - 1) / traits->k_group * traits->k_group;
        const int64_t rows = 3, src_stride = k + 5, dst_stride = k_padded * traits->a_bytes + 7;
        const std::vector<uint8_t> src = random_bytes(rng, size_t(rows * src_stride));
        // Separate rows with sums; then without sums (nothing written there).
        for (bool with_sums : {true, false}) {
          std::vector<uint8_t> d1(size_t(rows * dst_stride), 0xCC), d2 = d1;
          int32_t s1[rows] = {-1, -1, -1}, s2[rows] = {-2, -2, -2};
          run_both(b, d, PackRowsArgs{src.data(), d1.data(), k, k_padded, with_sums ? s1 : nullptr, rows, src_stride, dst_stride},
                   PackRowsArgs{src.data(), d2.data(), k, k_padded, with_sums ? s2 : nullptr, rows, src_stride, dst_stride});
          CHECK_MESSAGE(first_diff(d1, d2) == -1, d.name() << " k = " << k);
          for (int64_t r = 0; r < rows && with_sums; ++r) CHECK_MESSAGE(s1[r] == s2[r], d.name() << " row sum, k = " << k);
          if (!with_sums) CHECK(s1[0] == -1);
        }
        if (traits->a_bytes != 1) continue;
        // In place: rows k_padded + 3 bytes apart, packed where they lie.
        const int64_t stride = k_padded + 3;
        std::vector<uint8_t> p1(size_t(rows * stride));
        for (int64_t r = 0; r < rows; ++r) std::copy_n(src.begin() + r * src_stride, k, p1.begin() + r * stride);
        std::vector<uint8_t> p2 = p1;
        int32_t s1[rows], s2[rows];
        run_both(b, d, PackRowsArgs{p1.data(), p1.data(), k, k_padded, s1, rows, stride, stride},
                 PackRowsArgs{p2.data(), p2.data(), k, k_padded, s2, rows, stride, stride});
        CHECK_MESSAGE(first_diff(p1, p2) == -1, d.name() << " in place, k = " << k);
        for (int64_t r = 0; r < rows; ++r) CHECK(s1[r] == s2[r]);
      }
    }
  }
}

// Tap pointers for `pixels` pixels of `taps` taps over `input` (channel vectors `c` bytes
// apart), pointer rows per pixel or one stepping row.
struct Taps {
  std::vector<const uint8_t*> ptrs;
  int64_t taps_stride = 0, pixel_step = 0;
};

Taps random_taps(std::mt19937& rng, const std::vector<uint8_t>& input, unsigned taps, int64_t pixels, int64_t c,
                 int64_t positions) {
  Taps t;
  const bool stepping = rng() % 2;
  const int64_t rows = stepping ? 1 : pixels;
  for (int64_t p = 0; p < rows; ++p) {
    for (unsigned i = 0; i < taps; ++i) {
      // Stepping rows leave room for `pixels` steps of `c` bytes.
      const int64_t limit = stepping ? positions - pixels : positions;
      t.ptrs.push_back(input.data() + int64_t(rng() % uint64_t(std::max<int64_t>(limit, 1))) * c);
    }
  }
  t.taps_stride = stepping ? 0 : int64_t(8 * taps);
  t.pixel_step = stepping ? c : 0;
  return t;
}

void check_depthwise(const Backend& b, std::mt19937& rng) {
  const unsigned block = b.depthwise_traits().block;
  unsigned point = 0;
  for (unsigned channels : {1u, 5u, 16u, 17u, 40u, 64u, 70u, 130u, 280u}) {
    for (unsigned taps : {2u, 4u, 10u, 26u}) {
      ++point;  // each (channels, taps) pair meets two of the four kinds on LLVM rows
      for (OutKind out : {OutKind::kS32, OutKind::kF32, OutKind::kU8, OutKind::kS8}) {
        if (!in_part(b, point++, 2, 4)) continue;
        KernelDesc d;
        d.op = KernelOp::kDepthwise;
        d.isa = b.isa();
        d.generator = b.generator();
        d.storage_signed = rng() % 2;
        d.out = out;
        d.taps = uint16_t(taps);
        d.channels = channels;
        d.panel = uint8_t(block);
        const int64_t blocks = (channels + block - 1) / block, pixels = 1 + int64_t(rng() % 9), positions = 24;
        std::vector<uint8_t> weights(size_t(blocks * (taps / 2) * block * 4));
        for (size_t i = 0; i + 1 < weights.size(); i += 2) {
          const int16_t v = int16_t(int(rng() % 511) - 255);  // w - zw of 8-bit storage
          std::memcpy(weights.data() + i, &v, 2);
        }
        const std::vector<uint8_t> ep = random_block_epilogues(rng, blocks, block, out);
        const std::vector<uint8_t> input = random_bytes(rng, size_t(positions * channels + 64));
        const Taps t = random_taps(rng, input, taps, pixels, channels, positions);
        const int64_t stride = int64_t(channels * out_bytes(out));
        std::vector<uint8_t> o1(size_t(stride * pixels), 0x5A), o2 = o1;
        const AlignedBytes wa = aligned(weights), epa = aligned(ep);
        DepthwiseArgs args{t.ptrs.data(), o1.data(), stride, pixels, wa.data(), epa.data(), t.taps_stride,
                           t.pixel_step};
        DepthwiseArgs twin = args;
        twin.out = o2.data();
        run_both(b, d, args, twin);
        CHECK_MESSAGE(first_diff(o1, o2) == -1, d.name() << " differs at byte " << first_diff(o1, o2));
      }
    }
  }
}

void check_dw_interleave(const Backend& b, std::mt19937& rng) {
  const unsigned panel = b.depthwise_traits().rows_panel;
  REQUIRE(panel != 0);
  int cases = 0;
  for (unsigned channels : {1u, 16u, 17u, 32u, 33u, 64u, 80u, 96u, 136u, 200u}) {
    for (unsigned kw : {1u, 3u, 5u, 9u}) {
      KernelDesc d;
      d.op = KernelOp::kDwInterleave;
      d.isa = b.isa();
      d.generator = b.generator();
      d.storage_signed = rng() % 2;
      d.taps = uint16_t(kw);
      d.channels = channels;
      d.panel = uint8_t(panel);
      if (b.depthwise_traits().rows_signed_quads) d.path = GemmPath::kSdot4;
      const int64_t positions = 1 + int64_t(rng() % 7), stride = 1 + int64_t(rng() % 2), dilation = 1 + int64_t(rng() % 2);
      const int64_t groups = dw_rows_groups(kw);
      // Every position's taps up to its group's fourth, then the lanes' slack.
      const int64_t row_positions = (positions - 1) * stride + (4 * groups - 1) * dilation + 1;
      const std::vector<uint8_t> row = random_bytes(rng, size_t(row_positions * channels + dw_rows_padded_channels(panel, channels)));
      const size_t out_bytes = size_t(positions * dw_rows_position_bytes(panel, channels, kw));
      std::vector<uint8_t> o1(out_bytes, 0x3C), o2 = o1;
      const int64_t step = stride * channels, dil = dilation * channels;
      run_both(b, d, DwInterleaveArgs{row.data(), o1.data(), positions, step, dil},
               DwInterleaveArgs{row.data(), o2.data(), positions, step, dil});
      CHECK_MESSAGE(first_diff(o1, o2) == -1, d.name() << " differs at byte " << first_diff(o1, o2));
      ++cases;
    }
  }
  MESSAGE(cases << " interleave cases");
}

void check_dw_rows(const Backend& b, std::mt19937& rng) {
  const unsigned panel = b.depthwise_traits().rows_panel;
  REQUIRE(panel != 0);
  int cases = 0, q31_cases = 0, paired_cases = 0, three_set_cases = 0, saturating_cases = 0;
  for (unsigned channels : {1u, 15u, 16u, 24u, 32u, 40u, 64u, 96u, 130u, 144u}) {
    for (auto [kh, kw] : {std::pair{1u, 1u}, {3u, 3u}, {5u, 5u}, {3u, 9u}, {7u, 7u}, {2u, 4u}}) {
      // 8-bit results twice: the f32 requantization, then TFLite's Q31 (where the rows have it);
      // each once more with two pixels per interleaved position (where the rows have that), at
      // stride 1 and at stride 2 (whose 3-, 4-, 7- and 9-wide windows take a third weight set).
      for (int variant = 0; variant < 15; ++variant) {
        const OutKind out = std::array{OutKind::kU8, OutKind::kS8, OutKind::kS32, OutKind::kU8, OutKind::kS8}[size_t(variant % 5)];
        KernelDesc d;
        d.q31 = variant % 5 >= 3;
        d.paired_pixels = variant >= 5;
        d.pair_shift = uint8_t(variant >= 10 ? 2 : 1);
        d.op = KernelOp::kDwRows;
        d.isa = b.isa();
        d.generator = b.generator();
        d.storage_signed = rng() % 2;
        d.out = out;
        d.taps = uint16_t(kw);
        d.kh = uint8_t(kh);
        d.channels = channels;
        d.panel = uint8_t(panel);
        if (b.depthwise_traits().rows_signed_quads) d.path = GemmPath::kSdot4;
        if (b.depthwise_traits().rows_maddwd) d.path = GemmPath::kMaddwd;
        if ((d.q31 || d.paired_pixels) && !b.why_not(d).empty()) {
          // Every level that pairs pixels pairs them for every width but multiples of 4.
          if (d.paired_pixels && !d.q31 && kw % 4 != 0) CHECK(b.why_not(d).find("one pixel per") != std::string::npos);
          if (d.paired_pixels && d.pair_shift == 1 && kw % 4 == 0) CHECK(b.why_not(d).find("multiple of 4") != std::string::npos);
          continue;
        }
        const unsigned per_position = dw_rows_pixels_per_position(d.paired_pixels);
        const unsigned sets = dw_rows_weight_sets(kw, d.paired_pixels, d.pair_shift);
        const int64_t blocks = (channels + panel - 1) / panel, pixels = 1 + int64_t(rng() % 9);
        // Three sets: the last odd pixel reads one position more.
        const int64_t position_bytes = dw_rows_position_bytes(panel, channels, kw);
        const int64_t positions = (pixels + per_position - 1) / per_position + (sets == 3 ? 1 : 0);
        std::vector<std::vector<uint8_t>> rows;
        std::vector<const uint8_t*> ptrs;
        for (unsigned dy = 0; dy < kh; ++dy) rows.push_back(random_bytes(rng, size_t(positions * position_bytes)));
        for (auto& r : rows) ptrs.push_back(r.data());
        // Full-range s8 weights (-128 included), any bytes in the lanes past the channels; as
        // s16 words where the rows take them (kMaddwd).
        std::vector<uint8_t> weights = random_bytes(rng, size_t(dw_rows_weight_bytes(d, sets)));
        if (d.path == GemmPath::kMaddwd) {
          for (size_t i = 0; i + 1 < weights.size(); i += 2) weights[i + 1] = weights[i] & 0x80 ? 0xff : 0;
        }
        std::vector<uint8_t> ep = random_block_epilogues(rng, blocks, panel, out, d.q31);
        if (!d.q31 && out != OutKind::kS32 && rng() % 2 == 0) {
          // The saturation proof's case (depthwise_kernels.cpp, rows_saturate): every upper
          // bound the storage's; |f32(acc)·M| stays below 2^30 with these biases and multipliers.
          d.saturate = kSatUpper;
          const int smax = out == OutKind::kS8 ? 127 : 255;
          for (int64_t blk = 0; blk < blocks; ++blk) {
            for (unsigned l = 0; l < panel; ++l) {
              const size_t at = size_t(blk) * kEpFields * panel;
              int32_t zo;
              std::memcpy(&zo, ep.data() + (at + kEpOutputZeroPoint * panel + l) * 4, 4);
              put_f(ep, at + kEpUpperBound * panel + l, float(smax - zo));
            }
          }
          ++saturating_cases;
        }
        const AlignedBytes wa = aligned(weights), epa = aligned(ep);
        // The output row exactly as long as its pixels: masked stores must not spill.
        std::vector<uint8_t> o1(size_t(pixels * channels) * (out == OutKind::kS32 ? 4 : 1), 0x5A), o2 = o1;
        run_both(b, d, DwRowsArgs{ptrs.data(), o1.data(), pixels, wa.data(), epa.data()},
                 DwRowsArgs{ptrs.data(), o2.data(), pixels, wa.data(), epa.data()});
        CHECK_MESSAGE(first_diff(o1, o2) == -1, d.name() << " differs at byte " << first_diff(o1, o2));
        ++cases;
        q31_cases += d.q31;
        paired_cases += d.paired_pixels;
        three_set_cases += sets == 3;
      }
    }
  }
  MESSAGE(cases << " dot4 depthwise row cases (" << q31_cases << " with the Q31 epilogue, " << paired_cases
                << " with paired pixels, " << three_set_cases << " of them reading the next position, " << saturating_cases
                << " with the upper bound left to the narrowing)");
  CHECK(saturating_cases > 0);
  // The x86 rows pair pixels (the scalar twins too, which are the reference here).
  if (b.isa() == Isa::kAvx512Vnni || b.isa() == Isa::kAvx2Vnni) {
    CHECK(paired_cases > 0);
    CHECK(three_set_cases > 0);
  }
}

void check_pool(const Backend& b, std::mt19937& rng) {
  for (KernelOp op : {KernelOp::kMaxPool, KernelOp::kAvgPool}) {
    for (unsigned channels : {1u, 7u, 16u, 33u, 64u, 100u, 130u}) {
      for (unsigned taps : {1u, 4u, 9u}) {
        KernelDesc d;
        d.op = op;
        d.isa = b.isa();
        d.generator = b.generator();
        d.storage_signed = rng() % 2;
        d.out = rng() % 2 ? OutKind::kS8 : OutKind::kU8;
        d.taps = uint16_t(taps);
        d.channels = channels;
        const int64_t pixels = 1 + int64_t(rng() % 6), positions = 20;
        const std::vector<uint8_t> input = random_bytes(rng, size_t(positions * channels + 64));
        const Taps t = random_taps(rng, input, taps, pixels, channels, positions);
        std::vector<uint8_t> o1(size_t(channels * pixels), 0x11), o2 = o1;
        PoolArgs args{};
        args.taps = t.ptrs.data();
        args.out = o1.data();
        args.out_stride = channels;
        args.pixels = pixels;
        args.taps_stride = t.taps_stride;
        args.pixel_step = t.pixel_step;
        args.m = float(std::pow(10.0, -double(rng() % 4))) / float(taps);
        args.bias = -int32_t(rng() % 256) * int32_t(taps);
        args.zo = d.out == OutKind::kS8 ? int32_t(rng() % 256) - 128 : int32_t(rng() % 256);
        const int smin = d.out == OutKind::kS8 ? -128 : 0;
        args.lo = float(smin - args.zo);
        args.hi = float(smin + 255 - args.zo);
        PoolArgs twin = args;
        twin.out = o2.data();
        run_both(b, d, args, twin);
        CHECK_MESSAGE(first_diff(o1, o2) == -1, d.name() << " differs at byte " << first_diff(o1, o2));
      }
    }
  }
}

void check_streams(const Backend& b, std::mt19937& rng) {
  const unsigned block = b.stream_traits().block;
  // Kinds the backend does not generate (AArch64: quantize, dequantize, clamp) are the twins
  // themselves there; the element-wise kinds every backend with stream rows has.
  auto serves = [&b](KernelOp op) {
    KernelDesc d;
    d.op = op, d.isa = b.isa(), d.generator = b.generator();
    return b.why_not(d).empty();
  };
  for (KernelOp op : {KernelOp::kQAdd, KernelOp::kQMul, KernelOp::kRequantize}) {
    REQUIRE_MESSAGE(serves(op), b.name() << " has stream rows but no " << kernel_op_name(op) << " kernel");
    for (int rep = 0; rep < 12; ++rep) {
      KernelDesc d;
      d.op = op;
      d.isa = b.isa();
      d.generator = b.generator();
      d.storage_signed = rng() % 2;
      d.b_signed = rng() % 2;
      d.out = rng() % 2 ? OutKind::kS8 : OutKind::kU8;
      const int64_t blocks = int64_t(rng() % 40);
      // Backends with masked tails also finish up to 7 elements after the blocks.
      const int64_t tail = b.stream_traits().masked_tail ? int64_t(rng() % 8) : 0, n = blocks * 8 + tail;
      const std::vector<uint8_t> a = random_bytes(rng, size_t(n)), bb = random_bytes(rng, size_t(n));
      // One guard byte past the end: a masked step must not write beyond the tail.
      std::vector<uint8_t> y1(size_t(n) + 1, 0x77), y2 = y1;
      ElementwiseArgs args{};
      args.a = a.data();
      args.b = bb.data();
      args.y = y1.data();
      args.blocks = blocks;
      args.tail = tail;
      args.m_a = float(std::pow(10.0, -double(rng() % 6)) * 3.7);
      args.m_b = float(std::pow(10.0, -double(rng() % 6)) * 1.3);
      args.za = int32_t(rng() % 256) - (d.storage_signed ? 128 : 0);
      args.zb = int32_t(rng() % 256) - (d.b_signed ? 128 : 0);
      args.zo = int32_t(rng() % 256) - (d.out == OutKind::kS8 ? 128 : 0);
      const int smin = d.out == OutKind::kS8 ? -128 : 0;
      args.lo = float(smin - args.zo);
      args.hi = float(smin + 255 - args.zo);
      ElementwiseArgs twin = args;
      twin.y = y2.data();
      run_both(b, d, args, twin);
      CHECK_MESSAGE(first_diff(y1, y2) == -1, d.name() << " differs at byte " << first_diff(y1, y2));
    }
  }
  for (KernelOp op : {KernelOp::kQuantize, KernelOp::kDequantize}) {
    if (!serves(op)) continue;
    for (int rep = 0; rep < 12; ++rep) {
      KernelDesc d;
      d.op = op;
      d.isa = b.isa();
      d.generator = b.generator();
      d.storage_signed = rng() % 2;
      d.scale = float(std::pow(10.0, std::uniform_real_distribution<double>(-8.0, 3.0)(rng)));
      d.qmin = d.storage_signed ? -128 : 0;
      d.qmax = d.qmin + 255;
      if (rng() % 3 == 0) d.qmin += 9, d.qmax -= 13;
      d.zero_point = std::uniform_int_distribution<int>(d.qmin, d.qmax)(rng);
      // Any n on backends with masked tails, whole blocks on the others.
      const size_t n = b.stream_traits().masked_tail ? size_t(rng() % 240) : block * size_t(rng() % 30);
      std::vector<uint8_t> in, o1, o2;
      if (op == KernelOp::kQuantize) {
        std::vector<float> x(n);
        const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 3.0e38f, 1.0e-45f};
        for (size_t i = 0; i < n; ++i) {
          x[i] = rng() % 7 == 0 ? specials[rng() % 6]
                                : (float(int(rng() % 600) - 300) + (rng() % 2 ? 0.5f : 0.37f)) * d.scale;
        }
        in.resize(n * 4);
        if (n > 0) std::memcpy(in.data(), x.data(), n * 4);  // n may be 0: no null pointer to memcpy
        o1.assign(n + 1, 0x33);  // + a guard byte
      } else {
        in = random_bytes(rng, n);
        o1.assign(n * 4 + 4, 0x33);  // + a guard element
      }
      o2 = o1;
      run_both(b, d, ConvertArgs{in.data(), o1.data(), n}, ConvertArgs{in.data(), o2.data(), n});
      CHECK_MESSAGE(first_diff(o1, o2) == -1, d.name() << " differs at byte " << first_diff(o1, o2));
    }
  }
  for (int rep = 0; rep < 8 && serves(KernelOp::kClamp); ++rep) {
    KernelDesc d;
    d.op = KernelOp::kClamp;
    d.isa = b.isa();
    d.generator = b.generator();
    d.storage_signed = rng() % 2;
    const int smin = d.storage_signed ? -128 : 0;
    const int lo = smin + int(rng() % 100), hi = lo + int(rng() % 150);
    const size_t n = rng() % 300;
    const std::vector<uint8_t> x = random_bytes(rng, n);
    std::vector<uint8_t> y1(n, 1), y2(n, 2);
    run_both(b, d, ClampArgs{x.data(), y1.data(), n, lo, hi}, ClampArgs{x.data(), y2.data(), n, lo, hi});
    CHECK_MESSAGE(first_diff(y1, y2) == -1, d.name());
  }
}

// kLut8: random tables, lengths around every vector width and tail, in place and not.
void check_lut8(const Backend& b, std::mt19937& rng) {
  KernelDesc d;
  d.op = KernelOp::kLut8;
  d.isa = b.isa();
  d.generator = b.generator();
  if (std::string why = b.why_not(d); !why.empty()) {
    // Only the AVX-512 level may refuse, on a CPU without VBMI (the AVX2 kernel serves there).
    REQUIRE_MESSAGE((b.isa() == Isa::kAvx512Vnni && !host_cpu_features().avx512_vbmi), why);
    MESSAGE("skipped " << d.name() << ": " << why);
    return;
  }
  int cases = 0;
  for (size_t n : {size_t(0), size_t(1), size_t(15), size_t(31), size_t(32), size_t(33), size_t(63), size_t(64), size_t(65),
                   size_t(127), size_t(128), size_t(129), size_t(255), size_t(256), size_t(1000), size_t(4099)}) {
    const std::vector<uint8_t> table = random_bytes(rng, 256);
    std::vector<uint8_t> x = random_bytes(rng, n + 1);
    // Every byte value appears in the longer inputs (167 is odd: i * 167 runs through all 256
    // residues), the extremes in all of them.
    if (n >= 256) {
      for (size_t i = 0; i < n; ++i) x[i] = uint8_t(i * 167);
    }
    if (n >= 2) {
      x[0] = 0x00;
      x[n - 1] = 0xFF;
    }
    std::vector<uint8_t> y1(n + 1, 0x5A), y2(n + 1, 0x5A);
    run_both(b, d, LutArgs{x.data(), y1.data(), n, table.data()}, LutArgs{x.data(), y2.data(), n, table.data()});
    CHECK_MESSAGE(first_diff(y1, y2) == -1, d.name() << " n " << n << " differs at byte " << first_diff(y1, y2));
    for (size_t i = 0; i < n; ++i) {
      if (y2[i] != table[x[i]]) {
        FAIL_CHECK("the twin is not a table lookup at " << i);
        break;
      }
    }
    CHECK(y1[n] == 0x5A);  // nothing written past n
    // In place: the result replaces the input.
    std::vector<uint8_t> in_place = x;
    call_microkernel(kernel_of(b, d)->entry(), LutArgs{in_place.data(), in_place.data(), n, table.data()}, d);
    CHECK(std::equal(in_place.begin(), in_place.begin() + std::ptrdiff_t(n), y1.begin()));
    ++cases;
  }
  MESSAGE(cases << " table cases");
}

// kInterleavePlanes: 1 to 4 planes, pixel counts around every vector step and tail, planes
// with gaps between them; nothing is written past the last pixel.
void check_interleave_planes(const Backend& b, std::mt19937& rng) {
  int cases = 0;
  for (unsigned planes = 1; planes <= 4; ++planes) {
    KernelDesc d;
    d.op = KernelOp::kInterleavePlanes;
    d.isa = b.isa();
    d.generator = b.generator();
    d.channels = uint16_t(planes);
    REQUIRE_MESSAGE(b.why_not(d).empty(), b.why_not(d));
    for (int64_t n : {0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 95, 96, 97, 128, 1000, 50176}) {
      const int64_t stride = n + int64_t(rng() % 3) * 7;
      const std::vector<uint8_t> x = random_bytes(rng, size_t(stride * planes + 1));
      const size_t out = size_t(n * planes);
      std::vector<uint8_t> y1(out + 64, 0xA5), y2(out + 64, 0xA5);
      run_both(b, d, PlanesArgs{x.data(), y1.data(), n, stride}, PlanesArgs{x.data(), y2.data(), n, stride});
      CHECK_MESSAGE(first_diff(y1, y2) == -1, d.name() << " pixels " << n << " differs at byte " << first_diff(y1, y2));
      bool definition = true;
      for (int64_t p = 0; p < n && definition; ++p) {
        for (unsigned c = 0; c < planes; ++c) definition = definition && y2[size_t(p * planes + c)] == x[size_t(c * stride + p)];
      }
      CHECK_MESSAGE(definition, "the twin does not interleave the planes (" << planes << " planes, " << n << " pixels)");
      CHECK(std::all_of(y1.begin() + std::ptrdiff_t(out), y1.end(), [](uint8_t v) { return v == 0xA5; }));
      ++cases;
    }
  }
  MESSAGE(cases << " plane interleaving cases");
}

// A random f32 of magnitude 1e-3..1e3, now and then a special value (NaN, ±inf, ±0).
float random_f32(std::mt19937& rng, bool specials) {
  std::uniform_real_distribution<float> v(-2.0f, 2.0f);
  if (specials && rng() % 50 == 0) {
    const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f};
    return special[rng() % 5];
  }
  return v(rng) * std::pow(10.0f, float(int(rng() % 7) - 3));
}

// The index of the first f32 that differs, any NaN equal to any NaN (docs/numerics.md: which
// NaN is not part of the contract; every other bit is), or -1.
long first_f32_diff(const std::vector<float>& a, const std::vector<float>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::memcmp(&a[i], &b[i], 4) != 0) return long(i);
  }
  return -1;
}

// One of: no clamp, relu6, a narrow clamp around 0 with -0 as the lower bound.
std::pair<float, float> random_clamp(std::mt19937& rng) {
  switch (rng() % 3) {
    case 0: return {-INFINITY, INFINITY};
    case 1: return {0.0f, 6.0f};
    default: return {-0.0f, 0.25f};
  }
}

// kF32Gemm: row counts around every tile height, columns around every vector width, strided
// rows (the gaps must stay untouched), NaN/inf/±0 inputs, bias or none, fused clamps.
void check_f32_gemm(const Backend& b, std::mt19937& rng) {
  const KernelDesc d = f32_gemm_desc(b.isa(), b.generator());
  int cases = 0;
  for (int64_t rows : {1, 2, 5, 6, 7, 12, 13, 25, 48}) {
    for (int64_t n : {1, 8, 15, 16, 17, 31, 32, 33, 70}) {
      const int64_t k = 1 + int64_t(rng() % 40), n_padded = (n + 15) / 16 * 16;
      const int64_t xs = k + int64_t(rng() % 3), ys = n + int64_t(rng() % 3);
      std::vector<float> x(size_t(rows * xs)), w(size_t(k * n_padded), 0.0f), bias(size_t(n_padded), 0.0f);
      for (auto& e : x) e = random_f32(rng, true);
      for (int64_t kk = 0; kk < k; ++kk) {
        for (int64_t j = 0; j < n; ++j) w[f32_panel_index(kk, j, k)] = random_f32(rng, false);
      }
      for (int64_t j = 0; j < n; ++j) bias[size_t(j)] = random_f32(rng, false);
      std::vector<float> y1(size_t(rows * ys), 9.0f), y2 = y1;
      const float* bp = rng() % 2 ? bias.data() : nullptr;
      const auto [lo, hi] = random_clamp(rng);
      run_both(b, d, F32GemmArgs{x.data(), w.data(), bp, y1.data(), rows, k, n, n_padded, xs, ys, lo, hi},
               F32GemmArgs{x.data(), w.data(), bp, y2.data(), rows, k, n, n_padded, xs, ys, lo, hi});
      CHECK_MESSAGE(first_f32_diff(y1, y2) == -1, d.name() << " rows " << rows << " n " << n);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = n; j < ys; ++j) CHECK(y1[size_t(r * ys + j)] == 9.0f);  // the gaps between rows
      }
      ++cases;
    }
  }
  MESSAGE(cases << " f32 GEMM cases");
}

// kF32Dwconv: windows 1x1 to 5x5 (the 3-wide fast path and the checked one), strides,
// dilations, left padding, null (padding) rows, channel counts around the vector widths.
void check_f32_dwconv(const Backend& b, std::mt19937& rng) {
  const KernelDesc d = f32_dwconv_desc(b.isa(), b.generator());
  int cases = 0;
  const std::pair<int64_t, int64_t> windows[] = {{3, 3}, {1, 1}, {5, 5}, {3, 1}, {2, 3}, {1, 3}};
  for (int64_t c : {1, 7, 8, 16, 17, 32, 40}) {
    for (auto [kh, kw] : windows) {
      const int64_t stride = 1 + int64_t(rng() % 2), dilation = 1 + int64_t(rng() % 2), pad = int64_t(rng() % 3);
      // Output columns up to the right padding (a pixel may have no tap inside: bias alone).
      const int64_t iw = 1 + int64_t(rng() % 12);
      const int64_t ow = std::max<int64_t>(1, (iw + 2 * pad - dilation * (kw - 1) - 1) / stride + 1);
      std::vector<std::vector<float>> in(static_cast<size_t>(kh));
      std::vector<const float*> rows(static_cast<size_t>(kh));
      for (int64_t ky = 0; ky < kh; ++ky) {
        in[size_t(ky)].resize(size_t(iw * c));
        for (auto& e : in[size_t(ky)]) e = random_f32(rng, true);
        rows[size_t(ky)] = rng() % 4 == 0 ? nullptr : in[size_t(ky)].data();  // a padding row
      }
      std::vector<float> w(static_cast<size_t>(kh * kw * c)), bias(static_cast<size_t>(c));
      for (auto& e : w) e = random_f32(rng, false);
      for (auto& e : bias) e = random_f32(rng, false);
      std::vector<float> y1(size_t(ow * c), 9.0f), y2 = y1;
      const float* bp = rng() % 2 ? bias.data() : nullptr;
      const auto [lo, hi] = random_clamp(rng);
      run_both(b, d, F32DwArgs{rows.data(), w.data(), bp, y1.data(), c, ow, iw, kh, kw, stride, dilation, pad, lo, hi},
               F32DwArgs{rows.data(), w.data(), bp, y2.data(), c, ow, iw, kh, kw, stride, dilation, pad, lo, hi});
      CHECK_MESSAGE(first_f32_diff(y1, y2) == -1, d.name() << " c " << c << " window " << kh << "x" << kw << " stride " << stride << " dilation "
                             << dilation << " pad " << pad << " iw " << iw);
      ++cases;
    }
  }
  MESSAGE(cases << " f32 depthwise cases");
}

// kWoGemm: 8- and 4-bit weights of both signs, with and without zero points (storage extremes
// among them), per-column or block-wise scales (blocks that do not divide K), columns around
// every step (odd counts for nibble packing), rows around the 4-row tile, strided rows, NaN/inf/±0
// activations, bias or none, fused clamps.
void check_wo_gemm(const Backend& b, std::mt19937& rng) {
  int cases = 0, declined = 0;
  for (unsigned bits : {8u, 4u}) {
    for (bool is_signed : {true, false}) {
      for (bool zp : {false, true}) {
        for (WeightRound round : {WeightRound::kNone, WeightRound::kBf16, WeightRound::kF16}) {
          // Half the 24 kernels on LLVM rows, every bits/signedness/zero point/rounding met.
          if (!in_part(b, (bits == 4) + is_signed + zp + unsigned(round), 1, 2)) continue;
          KernelDesc d;
          d.op = KernelOp::kWoGemm;
          d.weight_round = round;
          d.isa = b.isa();
          d.generator = b.generator();
          d.storage_signed = is_signed;
          d.weight_bits = uint8_t(bits);
          d.weight_zp = zp;
          if (!b.why_not(d).empty()) {  // e.g. f16 weights at AVX2 on a CPU without F16C
            ++declined;
            continue;
          }
          const int32_t qmin = is_signed ? -(1 << (bits - 1)) : 0, qmax = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
          for (int64_t rows : {1, 3, 4, 5, 9}) {
            for (int64_t n : {1, 15, 16, 17, 63, 64, 65, 130}) {
              // K past the kernels' 64-row chunks now and then, blocks shorter and longer than one.
              const int64_t k = 1 + int64_t(rng() % (rng() % 3 == 0 ? 300 : 70));
              const int64_t block = rng() % 3 == 0 ? k : 1 + int64_t(rng() % (rng() % 2 ? 33 : 150));
              const int64_t blocks = (k + block - 1) / block;
              const int64_t w_stride = bits == 8 ? n + int64_t(rng() % 3) : (n + 1) / 2 + int64_t(rng() % 2);
              const int64_t xs = k + int64_t(rng() % 3), ys = n + int64_t(rng() % 3), ps = n + int64_t(rng() % 2);
              std::vector<float> x(size_t(rows * xs)), scales(size_t(blocks * ps)), bias(static_cast<size_t>(n));
              std::vector<uint8_t> w(size_t(k * w_stride));
              std::vector<int16_t> zps(size_t(blocks * ps));
              for (auto& e : x) e = random_f32(rng, true);
              for (auto& e : w) e = uint8_t(rng());
              // Rounded weights: now and then scales that overflow f16 (inf) or go subnormal in it.
              const bool extreme = round != WeightRound::kNone && rng() % 3 == 0;
              for (auto& e : scales) e = std::ldexp(float(1 + rng() % 1000) / 1000.0f, extreme ? int(rng() % 40) - 30 : -int(rng() % 12));
              for (auto& e : zps) e = int16_t(rng() % 4 == 0 ? (rng() % 2 ? qmin : qmax) : qmin + int32_t(rng() % uint32_t(qmax - qmin + 1)));
              for (auto& e : bias) e = random_f32(rng, false);
              std::vector<float> y1(size_t(rows * ys), 9.0f), y2 = y1;
              const float* bp = rng() % 2 ? bias.data() : nullptr;
              const auto [lo, hi] = random_clamp(rng);
              const int16_t* zp_ptr = zp ? zps.data() : nullptr;
              run_both(b, d,
                       WoGemmArgs{x.data(), w.data(), scales.data(), zp_ptr, bp, y1.data(), rows, k, n, xs, w_stride, ps, ys, block, lo, hi},
                       WoGemmArgs{x.data(), w.data(), scales.data(), zp_ptr, bp, y2.data(), rows, k, n, xs, w_stride, ps, ys, block, lo, hi});
              CHECK_MESSAGE(first_f32_diff(y1, y2) == -1, d.name() << " rows " << rows << " n " << n << " k " << k << " block " << block);
              for (int64_t r = 0; r < rows; ++r) {
                for (int64_t j = n; j < ys; ++j) CHECK(y1[size_t(r * ys + j)] == 9.0f);  // the gaps between rows
              }
              ++cases;
            }
          }
        }
      }
    }
  }
  MESSAGE(cases << " weight-only GEMM cases (" << declined << " descriptions with rounded weights declined)");
}

// kDynGemm: random records (any weight byte, scales over decades as f32 or as normal f16
// values, zero points z' across the unsigned range as bytes or one for all), i8 activations with their
// block sums and scales (NaN now and then), rows around the row groups and past the 64-row
// chunk, columns around every step and strip, strided output rows, bias or none, fused clamps.
void check_dyn_gemm(const Backend& b, std::mt19937& rng) {
  int cases = 0;
  for (unsigned bits : {8u, 4u}) {
    KernelDesc d;
    d.op = KernelOp::kDynGemm;
    d.isa = b.isa();
    d.generator = b.generator();
    d.storage_signed = rng() % 2;
    d.weight_bits = uint8_t(bits);
    for (int64_t rows : {1, 2, 3, 4, 5, 9, 70}) {
      for (int64_t n : {1, 15, 16, 17, 63, 64, 65, 130}) {
        // Every record format in turn: f32 or f16 scales, with or without z' bytes.
        d.scale_f16 = cases % 2 == 1;
        d.weight_zp = cases / 2 % 2 == 1;
        d.zero_point = d.weight_zp ? 0 : int32_t(rng() % (1u << bits));  // one z' for every column
        const int64_t blocks = 1 + int64_t(rng() % 4), block_padded = 8 * (1 + int64_t(rng() % (rng() % 3 == 0 ? 40 : 5)));
        const DynRecordLayout layout = dyn_record_layout(block_padded, d);
        const int64_t record = layout.bytes, strips = (n + kDynStripCols - 1) / kDynStripCols;
        std::vector<uint8_t> w(size_t(strips * blocks * record));
        for (auto& e : w) e = uint8_t(rng());
        for (int64_t r = 0; r < strips * blocks; ++r) {
          uint8_t* rec = w.data() + r * record;
          for (int64_t c = 0; c < kDynStripCols; ++c) {
            if (d.scale_f16) {
              const uint16_t h = uint16_t((1 + rng() % 30) << 10 | rng() % 1024);  // positive normal f16
              std::memcpy(rec + layout.scales + c * 2, &h, 2);
            } else {
              const float scale = std::ldexp(float(1 + rng() % 1000) / 1000.0f, -int(rng() % 12));
              std::memcpy(rec + layout.scales + c * 4, &scale, 4);
            }
            if (d.weight_zp) rec[layout.zps + c] = uint8_t(rng() % (1u << bits));
          }
        }
        const int64_t x_stride = blocks * block_padded, ys = n + int64_t(rng() % 3);
        std::vector<int8_t> xq(size_t(rows * x_stride));
        std::vector<float> xd(size_t(rows * blocks)), bias(static_cast<size_t>(n));
        std::vector<int32_t> xsum(size_t(rows * blocks), 0);
        for (size_t i = 0; i < xq.size(); ++i) {
          xq[i] = int8_t(int(rng() % 255) - 127);
          xsum[i / size_t(block_padded)] += xq[i];
        }
        for (auto& e : xd) e = rng() % 50 == 0 ? NAN : std::ldexp(float(1 + rng() % 1000) / 1000.0f, int(rng() % 20) - 10);
        for (auto& e : bias) e = random_f32(rng, false);
        std::vector<float> y1(size_t(rows * ys), 9.0f), y2 = y1;
        const float* bp = rng() % 2 ? bias.data() : nullptr;
        const auto [lo, hi] = random_clamp(rng);
        run_both(b, d,
                 DynGemmArgs{xq.data(), xd.data(), xsum.data(), w.data(), bp, y1.data(), rows, n, blocks, block_padded, x_stride, ys, lo, hi},
                 DynGemmArgs{xq.data(), xd.data(), xsum.data(), w.data(), bp, y2.data(), rows, n, blocks, block_padded, x_stride, ys, lo, hi});
        CHECK_MESSAGE(first_f32_diff(y1, y2) == -1, d.name() << " rows " << rows << " n " << n << " blocks " << blocks << " of " << block_padded);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t j = n; j < ys; ++j) CHECK(y1[size_t(r * ys + j)] == 9.0f);  // the gaps between rows
        }
        ++cases;
      }
    }
  }
  MESSAGE(cases << " dynamic i8 GEMM cases");
}

// kEwProgram: a broadcast gelu(a - b) program (test_ew_programs.cpp has the random ones).
void check_ew_program(const Backend& b, std::mt19937& rng) {
  EwProgram p;
  p.inputs = {{EwStorage::kF32, false}, {EwStorage::kF32, true}};
  EwInstr la, lb, sub, gelu;
  la.op = lb.op = EwOp::kLoad;
  lb.input = 1;
  sub.op = EwOp::kSub;
  sub.a = 0;
  sub.b = 1;
  gelu.op = EwOp::kGelu;
  gelu.a = 2;
  p.code = {la, lb, sub, gelu};
  p.result = 3;
  auto code = b.compile_program(p);
  REQUIRE_MESSAGE(code.is_ok(), code.status().to_string());
  std::uniform_real_distribution<float> any(-6.0f, 6.0f);
  std::vector<float> a(2 * 37), y1(a.size()), y2(a.size());
  for (float& v : a) v = any(rng);
  const float s = any(rng);
  EwArgs args{};
  args.in[0] = a.data();
  args.in[1] = &s;
  args.in_step[0] = 37 * 4;
  args.out_step = 37 * 4;
  args.n = 37;
  args.rows = 2;
  args.out = y1.data();
  reinterpret_cast<EwFn>(const_cast<void*>((*code)->entry()))(&args, &p);
  args.out = y2.data();
  twin_ew_program(&args, &p);
  CHECK(std::memcmp(y1.data(), y2.data(), y1.size() * 4) == 0);
}

}  // namespace

TEST_CASE("the twins' weight rounding to bf16 and f16 equals the IR's conversions") {
  // Every f32 the kernels could round (random bit patterns, weighted towards f16's subnormal,
  // tie and overflow regions), against qrt's own f16/bf16 conversions of the value.
  std::mt19937 rng(61);
  auto check = [](float v) {
    const float f16 = qrt::jit::twin::round_to_f16(v), bf16 = qrt::jit::twin::round_to_bf16(v);
    const float want16 = qrt::f16_bits_to_float(qrt::f16_bits_from_double(double(v)));
    const float wantb = qrt::bf16_bits_to_float(qrt::bf16_bits_from_double(double(v)));
    if (std::isnan(v)) {
      CHECK((std::isnan(f16) && std::isnan(bf16)));
      return;
    }
    CHECK_MESSAGE(std::memcmp(&f16, &want16, 4) == 0, "f16 of " << v);
    CHECK_MESSAGE(std::memcmp(&bf16, &wantb, 4) == 0, "bf16 of " << v);
  };
  for (float v : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 6.103515625e-05f, 6.1035e-05f, 2.98e-08f,
                  2.9802322e-08f, 5.96e-08f, 1.0e-9f, 3.4028235e38f, 3.3961e38f, INFINITY, -INFINITY, NAN, 1.00390625f,
                  1.0009765625f, 1.00048828125f}) {
    check(v);
  }
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = uint32_t(rng());
    if (i % 2) bits = (bits & 0x80000000u) | (uint32_t(0x33000000u + (rng() % 0x0C000000u)) & 0x7FFFFFFFu);  // 2^-25 .. 2^17
    float v;
    std::memcpy(&v, &bits, 4);
    check(v);
  }
}

TEST_CASE("the f16 widening and narrowing around the f32 kernels equal the IR's conversions") {
  // Every f16 bit pattern widened; f32 values narrowed: the special values, then random bit
  // patterns weighted towards f16's subnormal, tie and overflow regions.
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float got = qrt::jit::f16_to_f32(uint16_t(h)), want = qrt::f16_bits_to_float(uint16_t(h));
    if (std::isnan(want)) {
      CHECK_MESSAGE(std::isnan(got), "f16 bits " << h);
      continue;
    }
    CHECK_MESSAGE(std::memcmp(&got, &want, 4) == 0, "f16 bits " << h);
  }
  int checked = 0;
  auto check = [&](float v) {
    const uint16_t got = qrt::jit::f32_to_f16(v), want = qrt::f16_bits_from_double(double(v));
    CHECK_MESSAGE(got == want, "f16 of " << v << ": " << got << " vs " << want);
    ++checked;
  };
  for (float v : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 6.103515625e-05f, 6.1035e-05f, 6.1032e-05f,
                  2.98e-08f, 2.9802322e-08f, 2.9802326e-08f, 5.96e-08f, 1.0e-9f, 3.4028235e38f, INFINITY, -INFINITY, NAN,
                  -NAN, 1.00048828125f, 1.00146484375f, 1.0009765625f}) {
    check(v);
  }
  std::mt19937 rng(67);
  for (int i = 0; i < 400000; ++i) {
    uint32_t bits = uint32_t(rng());
    if (i % 2) bits = (bits & 0x80000000u) | (uint32_t(0x32000000u + (rng() % 0x0E000000u)) & 0x7FFFFFFFu);  // 2^-27 .. 2^17
    if (i % 8 == 3) bits = (bits & ~0x1FFFu) | (i % 16 == 3 ? 0x1000u : 0x0u);  // exact ties, exact f16 values
    float v;
    std::memcpy(&v, &bits, 4);
    check(v);
  }
  MESSAGE(checked << " f32 values narrowed, 65536 f16 widened");
}

TEST_CASE("the array widening and narrowing (AVX2+F16C or portable vectors, then a scalar tail) give the scalar conversions' bits") {
  // Every bf16 and f16 pattern, from offsets 0..7 so that each pattern meets every vector lane
  // and the tail; then f32 values (specials, ties, subnormal and overflow regions) narrowed.
  // Both the host's path and the portable one (what other hosts run) are checked.
  (void)qrt::jit::kernel_list();  // installs the host's conversions
  MESSAGE("the host's bf16/f16 conversions: " << std::string(qrt::jit::host_half_conversions_name()));
  struct Path {
    const char* name;
    void (*widen)(const uint8_t*, qrt::FloatKind, int64_t, float*);
    void (*narrow)(const float*, qrt::FloatKind, int64_t, uint8_t*);
  };
  for (const Path& path : {Path{"dispatched", qrt::jit::widen_to_f32, qrt::jit::narrow_from_f32},
                           Path{"portable", qrt::jit::widen_to_f32_portable, qrt::jit::narrow_from_f32_portable}}) {
    CAPTURE(path.name);
    std::vector<uint8_t> patterns(2 * 0x10000u);
    for (uint32_t h = 0; h < 0x10000u; ++h) {
      const uint16_t b = uint16_t(h);
      std::memcpy(&patterns[2 * h], &b, 2);
    }
    std::vector<float> wide(0x10000u);
    for (qrt::FloatKind kind : {qrt::FloatKind::kBF16, qrt::FloatKind::kF16}) {
      for (int64_t offset = 0; offset < 8; ++offset) {
        const int64_t count = 0x10000 - offset - (offset >= 5 ? 3 : 0);  // tails of 0..7 elements
        path.widen(patterns.data() + 2 * offset, kind, count, wide.data());
        int wrong = 0;
        for (int64_t i = 0; i < count; ++i) {
          const uint16_t h = uint16_t(offset + i);
          const float want = kind == qrt::FloatKind::kF16 ? qrt::jit::f16_to_f32(h) : [&] {
            const uint32_t u = uint32_t(h) << 16;
            float f;
            std::memcpy(&f, &u, 4);
            return f;
          }();
          wrong += std::memcmp(&wide[size_t(i)], &want, 4) != 0;
        }
        CHECK_MESSAGE(wrong == 0, std::string(qrt::float_kind_name(kind)) << " widening from offset " << offset << ": " << wrong << " wrong");
      }
    }
    std::vector<float> values = {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 6.103515625e-05f, 6.1032e-05f,
                                 2.9802322e-08f, 2.9802326e-08f, 5.96e-08f, 1.0e-9f, 3.4028235e38f, -3.4028235e38f, INFINITY,
                                 -INFINITY, NAN, -NAN, 1.00048828125f, 1.00146484375f, 1.0009765625f, 1.00390625f, 1.01171875f};
    std::mt19937 rng(71);
    while (values.size() < 300003) {
      uint32_t bits = uint32_t(rng());
      if (values.size() % 2) bits = (bits & 0x80000000u) | (uint32_t(0x32000000u + (rng() % 0x0E000000u)) & 0x7FFFFFFFu);
      if (values.size() % 8 == 3) bits = (bits & ~0x1FFFu) | (values.size() % 16 == 3 ? 0x1000u : 0x0u);  // f16 ties
      if (values.size() % 8 == 5) bits = (bits & ~0xFFFFu) | (values.size() % 16 == 5 ? 0x8000u : 0x0u);  // bf16 ties
      float v;
      std::memcpy(&v, &bits, 4);
      values.push_back(v);
    }
    std::vector<uint8_t> narrow(2 * values.size());
    for (qrt::FloatKind kind : {qrt::FloatKind::kBF16, qrt::FloatKind::kF16}) {
      path.narrow(values.data(), kind, int64_t(values.size()), narrow.data());
      int wrong = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        uint16_t got;
        std::memcpy(&got, &narrow[2 * i], 2);
        if (std::isnan(values[i])) {
          // NaN stays NaN (quiet) in both.
          const bool nan = kind == qrt::FloatKind::kF16 ? (got & 0x7C00u) == 0x7C00u && (got & 0x3FFu) != 0
                                                        : (got & 0x7F80u) == 0x7F80u && (got & 0x7Fu) != 0;
          wrong += !nan;
          continue;
        }
        const uint16_t want = kind == qrt::FloatKind::kF16 ? qrt::f16_bits_from_double(double(values[i]))
                                                           : qrt::bf16_bits_from_double(double(values[i]));
        if (got != want && wrong < 5) MESSAGE(std::string(qrt::float_kind_name(kind)) << " of " << values[i] << ": " << got << " vs " << want);
        wrong += got != want;
      }
      CHECK_MESSAGE(wrong == 0, std::string(qrt::float_kind_name(kind)) << " narrowing: " << wrong << " of " << values.size() << " wrong");
    }
  }
}

TEST_CASE("every kernel-list row at the level under test matches its scalar twin") {
  std::mt19937 rng(2026);
  int rows = 0, native_rows = 0, llvm_rows = 0, program_rows = 0;
  std::vector<std::pair<const Backend*, void (*)(const Backend&, std::mt19937&)>> done;
  for (const KernelListRow& row : kernel_list()) {
    // Scalar rows of the native generator are the twins themselves.
    if (row.isa != qrt_test::test_isa() || (row.isa == Isa::kScalar && row.backend == &scalar_backend())) continue;
    REQUIRE_MESSAGE(row.backend->available(), row.backend->name() << " is listed for a level the host has");
    ++rows;
    if (row.op == KernelOp::kEwProgram) ++program_rows;
    else if (row.backend->generator() == Generator::kNative) ++native_rows;
    else ++llvm_rows;
    CAPTURE(row.backend->name());
    CAPTURE(kernel_op_name(row.op));
    void (*check)(const Backend&, std::mt19937&) = nullptr;
    switch (row.op) {
      case KernelOp::kGemm: check = check_gemm; break;
      case KernelOp::kPackRows: check = check_pack_rows; break;
      case KernelOp::kDepthwise: check = check_depthwise; break;
      case KernelOp::kDwInterleave: check = check_dw_interleave; break;
      case KernelOp::kDwRows: check = check_dw_rows; break;
      case KernelOp::kMaxPool:
      case KernelOp::kAvgPool: check = check_pool; break;
      case KernelOp::kF32Gemm: check = check_f32_gemm; break;
      case KernelOp::kF32Dwconv: check = check_f32_dwconv; break;
      case KernelOp::kWoGemm: check = check_wo_gemm; break;
      case KernelOp::kDynGemm: check = check_dyn_gemm; break;
      case KernelOp::kEwProgram: check = check_ew_program; break;
      case KernelOp::kLut8: check = check_lut8; break;
      case KernelOp::kInterleavePlanes: check = check_interleave_planes; break;
      case KernelOp::kRequantQ31:
      case KernelOp::kRequantF64: continue;  // test_profile_requant.cpp checks these rows
      default: check = check_streams; break;  // convert, element-wise and clamp kinds
    }
    // One check per (backend, checker): a checker covers every kind it names.
    if (std::find(done.begin(), done.end(), std::make_pair(row.backend, check)) != done.end()) continue;
    done.emplace_back(row.backend, check);
    check(*row.backend, rng);
  }
  MESSAGE(rows << " kernel-list rows at " << std::string(qrt_test::test_isa_name()) << " checked against their twins");
  // AVX2 has every kind but programs (the dot4 depthwise rows on vpmaddwd included).
  if (qrt_test::test_isa() == Isa::kAvx2) CHECK(native_rows == int(KernelOp::kCount) - 1);
  // Where LLVM serves the level: programs, and with its kernel templates every kind but the
  // dot4 rows.
  if (llvm_backend(qrt_test::test_isa())) {
    CHECK(program_rows == 1);
    if (llvm_kernel_templates_built()) CHECK(llvm_rows == int(KernelOp::kCount) - 3);
  }
  if (qrt_test::test_isa() == Isa::kAvx2Vnni || qrt_test::test_isa() == Isa::kAvx512Vnni ||
      qrt_test::test_isa() == Isa::kAvx512Amx) {
    CHECK(rows >= 2);  // the GEMM tiles and their packing
  }
  // AArch64: the a64 backend's GEMM tiles and packing at every NEON level.
  if (qrt_test::test_isa() == Isa::kNeon || qrt_test::test_isa() == Isa::kNeonDot || qrt_test::test_isa() == Isa::kNeonI8mm) {
    CHECK(native_rows >= 2);
  }
}

TEST_CASE("the kernel list has the scalar twins of every kind, and rows name their level") {
  for (size_t k = 0; k < size_t(KernelOp::kCount); ++k) {
    const Backend* twin = kernel_list_backend(KernelOp(k), Isa::kScalar);
    REQUIRE(twin != nullptr);
    CHECK(twin->available());
    CHECK(twin_entry(KernelOp(k)) != nullptr);
  }
  for (const KernelListRow& row : kernel_list()) CHECK(row.backend->isa() == row.isa);
}

TEST_CASE("QRT_PERF_MAP=1 names each generated kernel's code range in /tmp/perf-<pid>.map, and only then") {
  const char* before = std::getenv("QRT_PERF_MAP");
  const std::string saved = before ? before : "";
  auto make = [](const std::string& name) {
    // One byte of code (never called): the map records where it lies and how long it is.
    auto code = ExecutableCode::create(1, [](void* dst, uint64_t) {
      *static_cast<uint8_t*>(dst) = 0xC3;
      return qrt::Status::ok();
    }, name);
    REQUIRE(code.is_ok());
    return code.value();
  };
  auto read_map = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  ::unsetenv("QRT_PERF_MAP");
  CHECK(perf_map_path().empty());
  ::setenv("QRT_PERF_MAP", "1", 1);
  const std::string path = perf_map_path();
  REQUIRE(path == "/tmp/perf-" + std::to_string(::getpid()) + ".map");
  std::remove(path.c_str());
  auto named = make("qrt_test_kernel\nsecond line");
  char expected[96];
  std::snprintf(expected, sizeof expected, "%" PRIxPTR " 1 qrt_test_kernel second line\n",
                reinterpret_cast<uintptr_t>(named->entry()));
  CHECK(read_map(path) == expected);
  ::setenv("QRT_PERF_MAP", "0", 1);
  auto unnamed = make("not recorded");
  CHECK(read_map(path) == expected);
  std::remove(path.c_str());
  if (before) ::setenv("QRT_PERF_MAP", saved.c_str(), 1);
  else ::unsetenv("QRT_PERF_MAP");
}
