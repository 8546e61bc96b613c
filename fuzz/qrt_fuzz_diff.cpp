// qrt-fuzz-diff — the differential graph fuzzer's command: random valid quantized graphs, each
// run on every backend, ISA level and thread count the host has and compared bit for bit with
// the reference. Failures are minimized and can be saved as regression tests.
#include <qrt.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "diff_check.h"
#include "graph_gen.h"
#include "regression_file.h"

namespace {

const char* kUsage =
    "usage: qrt-fuzz-diff [--seed N] [--count M] [--max-ops K] [--threads T] [--no-llvm]\n"
    "                     [--save DIR] [--show] [--coverage] [--numerics P]\n"
    "       qrt-fuzz-diff --replay FILE.mlir...\n"
    "\n"
    "Generates random valid quantized graphs (convolutions of every stride, dilation, group and\n"
    "padding, transposed convolutions with crops and output_padding, matmuls; one contraction\n"
    "in six of 16-bit activations; pooling, add/mul, requantize, concat, pad, transpose,\n"
    "softmax, mean, QDQ regions; i8/u8/i16/u16 storage, zero points at the bounds, per-axis\n"
    "scales) and runs\n"
    "each on every ISA level this host has (1 and T threads), without fusion, without graph\n"
    "passes, and on the LLVM backend, comparing every output byte with the reference backend.\n"
    "A failing graph is shrunk (fewer steps, then smaller shapes) and printed.\n"
    "\n"
    "options:\n"
    "  --seed N       first seed (default 1); graph i uses seed N + i, for its structure and its inputs\n"
    "  --count M      graphs to check (default 100)\n"
    "  --max-ops K    compute steps per graph (default 6)\n"
    "  --threads T    thread count of the multi-threaded runs (default 3; 1: none)\n"
    "  --no-llvm      leave out the LLVM backend (its first compilations are slow)\n"
    "  --save DIR     write each minimized failure to DIR/fuzz-SEED.mlir, a regression test\n"
    "                 (tests/data/fuzz_regressions/ is replayed by the test suite)\n"
    "  --show         print every generated graph\n"
    "  --coverage     print how often each op ran on each kernel\n"
    "  --numerics P   generate graphs that record numerics profile P (default, stablehlo,\n"
    "                 tflite, tflite-single-rounding, onnx): every configuration and the\n"
    "                 reference compute that profile's formulas\n"
    "  --replay F...  check saved graphs (their '// inputs-seed:' line seeds the inputs)\n"
    "exit status: 0 when every graph matched, 1 on any mismatch or invalid graph, 2 on bad usage\n";

struct Case {
  uint64_t seed;
  qrt_fuzz::GenLimits limits;
};

// The numerics profile every generated graph records (--numerics; "" or "default": none).
std::string g_numerics;

qrt_fuzz::GeneratedGraph generate(const Case& c) {
  qrt_fuzz::SeededChooser chooser(c.seed);
  qrt_fuzz::GeneratedGraph g = qrt_fuzz::generate_graph(chooser, c.limits);
  // In the module itself, so the plans of every configuration and a saved regression use it.
  if (!g_numerics.empty() && g_numerics != "default") {
    g.mlir = "module attributes {qrt.numerics = \"" + g_numerics + "\"} {\n" + g.mlir + "}\n";
  }
  return g;
}

qrt_fuzz::DiffOutcome check(const Case& c, const std::vector<qrt_fuzz::RunConfig>& configs) {
  return qrt_fuzz::diff_graph(generate(c).mlir, c.seed, configs);
}

// Fewer steps first (a prefix of the same choices), then smaller shapes, as long as it still
// fails the same way.
Case minimize(Case c, qrt_fuzz::DiffOutcome::Kind kind, const std::vector<qrt_fuzz::RunConfig>& configs) {
  auto still_fails = [&](const Case& t) { return check(t, configs).kind == kind; };
  for (int ops = 0; ops < c.limits.max_ops; ++ops) {
    Case t = c;
    t.limits.max_ops = ops;
    if (still_fails(t)) {
      c = t;
      break;
    }
  }
  for (int* limit : {&c.limits.max_batch, &c.limits.max_spatial, &c.limits.max_channels}) {
    while (*limit > 1) {
      Case t = c;
      int* tl = limit == &c.limits.max_batch ? &t.limits.max_batch
                : limit == &c.limits.max_spatial ? &t.limits.max_spatial : &t.limits.max_channels;
      *tl = *limit / 2;
      if (!still_fails(t)) break;
      c = t;
    }
  }
  return c;
}

bool parse_u64(const char* text, uint64_t* out) {
  if (!text || !*text) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno || *end || text[0] == '-') return false;
  *out = v;
  return true;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "qrt-fuzz-diff: %s\n%s", message.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1, count = 100, max_ops = 6, threads = 3;
  bool show = false, coverage = false;
  qrt_fuzz::ConfigOptions options;
  std::string save_dir;
  std::vector<std::string> replay;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](uint64_t* out) {
      if (i + 1 >= argc || !parse_u64(argv[i + 1], out)) return false;
      ++i;
      return true;
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--seed") {
      if (!value(&seed)) return usage_error("--seed needs a non-negative integer");
    } else if (a == "--count") {
      if (!value(&count)) return usage_error("--count needs a non-negative integer");
    } else if (a == "--max-ops") {
      if (!value(&max_ops) || max_ops > 1000) return usage_error("--max-ops needs an integer in [0, 1000]");
    } else if (a == "--threads") {
      if (!value(&threads) || threads < 1 || threads > 64) return usage_error("--threads needs an integer in [1, 64]");
    } else if (a == "--no-llvm") {
      options.llvm = false;
    } else if (a == "--save") {
      if (i + 1 >= argc) return usage_error("--save needs a directory");
      save_dir = argv[++i];
    } else if (a == "--show") {
      show = true;
    } else if (a == "--coverage") {
      coverage = true;
    } else if (a == "--numerics") {
      static const char* const kProfiles[] = {"default", "stablehlo", "tflite", "tflite-single-rounding", "onnx"};
      if (i + 1 >= argc || std::none_of(std::begin(kProfiles), std::end(kProfiles),
                                        [&](const char* p) { return std::strcmp(p, argv[i + 1]) == 0; })) {
        return usage_error("--numerics needs one of default, stablehlo, tflite, tflite-single-rounding, onnx");
      }
      g_numerics = argv[++i];
    } else if (a == "--replay") {
      while (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0) replay.push_back(argv[++i]);
      if (replay.empty()) return usage_error("--replay needs at least one file");
    } else {
      return usage_error("unknown argument '" + a + "'");
    }
  }
  options.threads = static_cast<size_t>(threads);
  const std::vector<qrt_fuzz::RunConfig> configs = qrt_fuzz::host_configs(options);
  std::printf("qrt-fuzz-diff: %zu configurations on this host (isa levels %s):", configs.size(), qrt_host_isas());
  for (const auto& c : configs) std::printf(" %s", c.label.c_str());
  std::printf("\n");

  int failures = 0;
  int64_t runs = 0;
  qrt_fuzz::KernelCounts kernels;
  const auto start = std::chrono::steady_clock::now();
  if (!replay.empty()) {
    for (const std::string& path : replay) {
      qrt_fuzz::RegressionCase rc;
      std::string error;
      if (!qrt_fuzz::read_regression(path, &rc, &error)) {
        std::fprintf(stderr, "qrt-fuzz-diff: %s\n", error.c_str());
        ++failures;
        continue;
      }
      const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_graph(rc.mlir, rc.input_seed, configs, &kernels);
      runs += o.runs;
      if (o.kind != qrt_fuzz::DiffOutcome::kSame) {
        ++failures;
        std::printf("FAIL %s: %s\n", path.c_str(), o.message.c_str());
      }
    }
    std::printf("qrt-fuzz-diff: %zu saved graphs, %lld runs, %d failing\n", replay.size(), static_cast<long long>(runs),
                failures);
    return failures ? 1 : 0;
  }

  for (uint64_t i = 0; i < count; ++i) {
    Case c{seed + i, {}};
    c.limits.max_ops = static_cast<int>(max_ops);
    const qrt_fuzz::GeneratedGraph g = generate(c);
    if (show) std::printf("// seed %llu: %s\n%s", static_cast<unsigned long long>(c.seed), g.summary.c_str(), g.mlir.c_str());
    const qrt_fuzz::DiffOutcome o = qrt_fuzz::diff_graph(g.mlir, c.seed, configs, &kernels);
    runs += o.runs;
    if (o.kind == qrt_fuzz::DiffOutcome::kSame) continue;
    ++failures;
    const Case small = minimize(c, o.kind, configs);
    const qrt_fuzz::GeneratedGraph sg = generate(small);
    const qrt_fuzz::DiffOutcome so = qrt_fuzz::diff_graph(sg.mlir, small.seed, configs);
    std::printf("%s seed %llu (%s); minimized to %d steps, spatial <= %d, channels <= %d, batch <= %d (%s):\n%s\n%s",
                o.kind == qrt_fuzz::DiffOutcome::kInvalid ? "INVALID" : "MISMATCH",
                static_cast<unsigned long long>(c.seed), g.summary.c_str(), small.limits.max_ops,
                small.limits.max_spatial, small.limits.max_channels, small.limits.max_batch, sg.summary.c_str(),
                so.message.c_str(), sg.mlir.c_str());
    if (!save_dir.empty()) {
      const std::string path = save_dir + "/fuzz-" + std::to_string(c.seed) + ".mlir";
      std::string error;
      if (!qrt_fuzz::write_regression(path, {sg.mlir, small.seed}, so.message, &error))
        std::fprintf(stderr, "qrt-fuzz-diff: %s\n", error.c_str());
      else
        std::printf("saved %s\n", path.c_str());
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (coverage) {
    std::printf("kernels chosen (op -> kernel: runs):\n");
    for (const auto& [name, n] : kernels) std::printf("  %s: %lld\n", name.c_str(), static_cast<long long>(n));
  }
  std::printf("qrt-fuzz-diff: seeds %llu..%llu: %llu graphs, %lld runs, %d failing, %.1f s\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed + count - 1),
              static_cast<unsigned long long>(count), static_cast<long long>(runs), failures, seconds);
  return failures ? 1 : 0;
}
