// Google Benchmark: peers on the same shapes as bench_gemm.cpp, in the same binary, so each
// qrt row has its ratio measured in one run. oneDNN (libdnnl-dev): int8 matmul u8 x s8 -> u8
// and int8 NHWC convolutions; XNNPACK (libxnnpack-dev): qs8 fully connected and qs8 NHWC
// convolutions. Rows are compiled only where the packages were found at configure time.
// oneDNN's threads follow OMP_NUM_THREADS (docs/performance.md runs with 1). Neither peer can
// be capped per row: oneDNN's ISA is capped per process (ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI,
// AVX2_VNNI, AVX2; its label names the kernel and ISA it chose) and XNNPACK picks its best,
// so one run sets qrt's rows at every level beside the peers at one level each.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "bench_shapes.h"

#if QRT_BENCH_ONEDNN
#include <dnnl.hpp>
#endif
#if QRT_BENCH_XNNPACK
#include <xnnpack.h>
#endif

namespace {

[[maybe_unused]] std::vector<int8_t> random_s8(size_t n, int lo, int hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = int8_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  return v;
}

[[maybe_unused]] void set_gops(benchmark::State& state, double ops) {
  state.counters["GOPS"] = benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

// The weights' stream rate of a GEMV-like row, as BM_qrt_gemm reports it.
[[maybe_unused]] void set_weight_bytes(benchmark::State& state, int64_t m, int64_t k, int64_t n) {
  if (const int64_t bytes = bench::weight_stream_bytes(m, k, n)) state.SetBytesProcessed(int64_t(state.iterations()) * bytes);
}

#if QRT_BENCH_ONEDNN
using dnnl::memory;

// Runs `prim` with weights reordered into the layout the primitive chose (packed once).
template <typename Pd, typename Prim>
void run_onednn(benchmark::State& state, const dnnl::engine& eng, const Pd& pd, const memory::desc& src_md,
                const memory::desc& w_plain_md, const memory::desc& dst_md, const std::vector<int8_t>& w, double ops) {
  dnnl::stream s(eng);
  std::vector<uint8_t> src(src_md.get_size(), 77), dst(dst_md.get_size());
  memory src_m(src_md, eng, src.data()), dst_m(dst_md, eng, dst.data());
  memory w_plain(w_plain_md, eng, const_cast<int8_t*>(w.data()));
  memory w_m(pd.weights_desc(), eng);
  dnnl::reorder(w_plain, w_m).execute(s, w_plain, w_m);
  Prim prim(pd);
  for (auto _ : state) {
    prim.execute(s, {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, w_m}, {DNNL_ARG_DST, dst_m}});
    s.wait();
  }
  set_gops(state, ops);
}

void BM_onednn_matmul(benchmark::State& state) {
  const memory::dim m = state.range(0), k = state.range(1), n = state.range(2);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  const memory::desc a({m, k}, memory::data_type::u8, memory::format_tag::ab);
  const memory::desc b_any({k, n}, memory::data_type::s8, memory::format_tag::any);
  const memory::desc b_plain({k, n}, memory::data_type::s8, memory::format_tag::ab);
  const memory::desc c({m, n}, memory::data_type::u8, memory::format_tag::ab);
  dnnl::primitive_attr attr;
  attr.set_output_scales(1 << 1, std::vector<float>(size_t(n), 1.0f / float(k * 64)));
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b_any, c), attr, eng);
  run_onednn<dnnl::matmul::primitive_desc, dnnl::matmul>(state, eng, pd, a, b_plain, c,
                                                         random_s8(size_t(k * n), -127, 127, 1), 2.0 * m * n * k);
  set_weight_bytes(state, m, k, n);
  state.SetLabel(pd.impl_info_str());
}

// oneDNN's f32 matmul on the weight-only shapes (bench_weight_only.cpp): f32 x f32 -> f32,
// weights reordered once into the layout it chose; bytes_per_second counts the f32 weights.
void BM_onednn_matmul_f32(benchmark::State& state) {
  const memory::dim m = state.range(0), k = state.range(1), n = state.range(2);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const memory::desc a({m, k}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc b_any({k, n}, memory::data_type::f32, memory::format_tag::any);
  const memory::desc b_plain({k, n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc c({m, n}, memory::data_type::f32, memory::format_tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b_any, c), eng);
  std::vector<float> src(size_t(m * k), 0.25f), dst(size_t(m * n)), w(size_t(k * n));
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 61) - 30) * 0.001f;
  memory src_m(a, eng, src.data()), dst_m(c, eng, dst.data()), w_plain(b_plain, eng, w.data());
  memory w_m(pd.weights_desc(), eng);
  dnnl::reorder(w_plain, w_m).execute(s, w_plain, w_m);
  dnnl::matmul prim(pd);
  for (auto _ : state) {
    prim.execute(s, {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, w_m}, {DNNL_ARG_DST, dst_m}});
    s.wait();
  }
  set_gops(state, 2.0 * double(m * n * k));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(k * n * 4));
  state.SetLabel(pd.impl_info_str());
}

void BM_onednn_conv(benchmark::State& state) {
  const bench::ConvShape cs = bench::conv_shapes()[size_t(state.range(0))];
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  const memory::dim oh = cs.out_h(), ow = cs.out_w();
  const memory::desc src({1, cs.c, cs.h, cs.w}, memory::data_type::u8, memory::format_tag::nhwc);
  const memory::desc dst({1, cs.o, oh, ow}, memory::data_type::u8, memory::format_tag::nhwc);
  memory::desc w_any, w_plain;
  if (cs.depthwise) {
    w_any = memory::desc({cs.c, 1, 1, cs.k, cs.k}, memory::data_type::s8, memory::format_tag::any);
    w_plain = memory::desc({cs.c, 1, 1, cs.k, cs.k}, memory::data_type::s8, memory::format_tag::goihw);
  } else {
    w_any = memory::desc({cs.o, cs.c, cs.k, cs.k}, memory::data_type::s8, memory::format_tag::any);
    w_plain = memory::desc({cs.o, cs.c, cs.k, cs.k}, memory::data_type::s8, memory::format_tag::oihw);
  }
  dnnl::primitive_attr attr;
  attr.set_output_scales(1 << 1, std::vector<float>(size_t(cs.o), 0.001f));
  const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                          src, w_any, dst, {cs.stride, cs.stride}, {cs.pad, cs.pad}, {cs.pad, cs.pad});
  const dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
  const int64_t per_group = cs.depthwise ? 1 : cs.c;
  run_onednn<dnnl::convolution_forward::primitive_desc, dnnl::convolution_forward>(
      state, eng, pd, src, w_plain, dst, random_s8(size_t(cs.o * per_group * cs.k * cs.k), -127, 127, 3),
      2.0 * double(oh * ow * cs.o * per_group * cs.k * cs.k));
  state.SetLabel(pd.impl_info_str());
}
#endif

#if QRT_BENCH_XNNPACK
bool xnnpack_ready() {
  static const bool ok = xnn_initialize(nullptr) == xnn_status_success;
  return ok;
}

void run_xnnpack(benchmark::State& state, xnn_operator_t op, double ops) {
  for (auto _ : state) {
    if (xnn_run_operator(op, nullptr) != xnn_status_success) {
      state.SkipWithError("xnn_run_operator failed");
      break;
    }
  }
  set_gops(state, ops);
  xnn_delete_operator(op);
}

void BM_xnnpack_fully_connected(benchmark::State& state) {
  if (!xnnpack_ready()) return state.SkipWithError("xnn_initialize failed");
  const size_t m = size_t(state.range(0)), k = size_t(state.range(1)), n = size_t(state.range(2));
  const auto w = random_s8(n * k, -127, 127, 1);  // XNNPACK's layout: [N][K]
  const std::vector<int32_t> bias(n, 1000);
  std::vector<int8_t> in(m * k, 5), out(m * n);
  xnn_operator_t op = nullptr;
  if (xnn_create_fully_connected_nc_qs8(k, n, k, n, 0, 0.02f, 0.003f, w.data(), bias.data(), 0, 0.05f, -128, 127, 0,
                                        &op) != xnn_status_success ||
      xnn_setup_fully_connected_nc_qs8(op, m, in.data(), out.data(), nullptr) != xnn_status_success) {
    return state.SkipWithError("XNNPACK refused the fully connected operator");
  }
  run_xnnpack(state, op, 2.0 * double(m * n * k));
  set_weight_bytes(state, int64_t(m), int64_t(k), int64_t(n));
}

void BM_xnnpack_conv(benchmark::State& state) {
  if (!xnnpack_ready()) return state.SkipWithError("xnn_initialize failed");
  const bench::ConvShape cs = bench::conv_shapes()[size_t(state.range(0))];
  const size_t groups = cs.depthwise ? size_t(cs.c) : 1, gin = cs.depthwise ? 1 : size_t(cs.c),
               gout = cs.depthwise ? 1 : size_t(cs.o);
  const size_t oh = size_t(cs.out_h()), ow = size_t(cs.out_w());
  const auto w = random_s8(size_t(cs.o) * gin * size_t(cs.k * cs.k), -127, 127, 3);
  const std::vector<int32_t> bias(size_t(cs.o), 1000);
  std::vector<int8_t> in(size_t(cs.h * cs.w * cs.c), 5), out(oh * ow * size_t(cs.o));
  const uint32_t p = uint32_t(cs.pad), k = uint32_t(cs.k), st = uint32_t(cs.stride);
  xnn_operator_t op = nullptr;
  if (xnn_create_convolution2d_nhwc_qs8(p, p, p, p, k, k, st, st, 1, 1, uint32_t(groups), gin, gout, size_t(cs.c),
                                        size_t(cs.o), 0, 0.02f, 0.003f, w.data(), bias.data(), 0, 0.05f, -128, 127,
                                        0, &op) != xnn_status_success ||
      xnn_setup_convolution2d_nhwc_qs8(op, 1, size_t(cs.h), size_t(cs.w), in.data(), out.data(), nullptr) !=
          xnn_status_success) {
    return state.SkipWithError("XNNPACK refused the convolution operator");
  }
  run_xnnpack(state, op, 2.0 * double(oh * ow * size_t(cs.o) * gin * size_t(cs.k * cs.k)));
}
#endif

[[maybe_unused]] void gemm_args(benchmark::internal::Benchmark* b) {
  for (const auto& s : bench::gemm_shapes()) b->Args({s.m, s.k, s.n});
  b->ArgNames({"M", "K", "N"})->Unit(benchmark::kMillisecond);
}

[[maybe_unused]] void weight_only_args(benchmark::internal::Benchmark* b) {
  for (int64_t m : {1, 8}) {
    for (auto [k, n] : {std::pair<int64_t, int64_t>{4096, 4096}, {4096, 11008}, {11008, 4096}}) b->Args({m, k, n});
  }
  b->ArgNames({"M", "K", "N"})->Unit(benchmark::kMillisecond);
}

[[maybe_unused]] void conv_args(benchmark::internal::Benchmark* b) {
  for (size_t i = 0; i < bench::conv_shapes().size(); ++i) b->Arg(int64_t(i));
  b->ArgName("shape")->Unit(benchmark::kMillisecond);
}

}  // namespace

#if QRT_BENCH_ONEDNN
BENCHMARK(BM_onednn_matmul)->Apply(gemm_args);
BENCHMARK(BM_onednn_matmul_f32)->Apply(weight_only_args);
BENCHMARK(BM_onednn_conv)->Apply(conv_args);
#endif
#if QRT_BENCH_XNNPACK
BENCHMARK(BM_xnnpack_fully_connected)->Apply(gemm_args);
BENCHMARK(BM_xnnpack_conv)->Apply(conv_args);
#endif
