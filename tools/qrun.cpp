// qrun — runs a qrt graph with .npy inputs and outputs. Uses only the public C API.
#include <qrt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "npy.h"
#include "qrun_bench.h"

namespace {

const char* kUsage =
    "usage: qrun MODEL [--input NAME=FILE.npy ...] [--random SEED] [--output-dir DIR] [--print]\n"
    "            [--backend jit|ref] [--isa LEVEL] [--threads N] [--no-fusion] [--kernels] [--bench ITER]\n"
    "            [--profile] [--trace FILE.json] [--passes LIST]\n"
    "\n"
    "Runs a model: generated kernels (bit-exact with the reference backend, whose numerics\n"
    "are defined in docs/numerics.md) where they apply, the reference elsewhere. MODEL is\n"
    "qrt MLIR text (.mlir, see docs/ops.md), the .qrt binary container (docs/formats.md),\n"
    "ONNX (.onnx) or TFLite (.tflite; docs/importers.md).\n"
    "\n"
    "options:\n"
    "  --input NAME=FILE.npy  bind graph input NAME (its SSA name without '%') to a .npy\n"
    "                         file; repeat for each input. Quantized inputs hold their stored\n"
    "                         integers (e.g. int8 for i8 storage), float inputs their floats.\n"
    "  --random SEED          fill every input not bound by --input with deterministic\n"
    "                         random data: floats uniform in [-1, 1), quantized values uniform\n"
    "                         over the storage bounds; dynamic dimensions become 1.\n"
    "  --output-dir DIR       write each output to DIR/NAME.npy (DIR is created if missing)\n"
    "  --print                print the outputs' types and values, and those of inputs made by\n"
    "                         --random (the default when --output-dir is not given)\n"
    "  --backend B            jit (the default): kernels of the best allowed ISA level where\n"
    "                         they apply, bit-exact with the reference, which runs the rest;\n"
    "                         ref: the scalar reference for every op\n"
    "  --isa LEVEL            cap the JIT backend's ISA level: scalar (portable C++ kernels),\n"
    "                         avx2, avx2-vnni, avx512-vnni, neon, neon-dot, neon-i8mm; the host\n"
    "                         must have it (--version lists the host's levels). Default: the\n"
    "                         host's best. Results are identical at every level.\n"
    "  --threads N            threads per run, the calling thread included (default 1)\n"
    "  --no-fusion            run every element-wise op on its own kernel (default: chains of\n"
    "                         them run as one fused element-wise program; same results).\n"
    "                         QRT_CACHE_DIR=DIR in the environment keeps the LLVM backend's\n"
    "                         compiled programs in DIR for later runs\n"
    "  --bench ITER           after the first run, time ITER more and print latency\n"
    "                         min/median/p90/max (ms) and throughput (runs/s)\n"
    "  --profile              print per op: kernel, mean time, share and GOPS (matmul/conv),\n"
    "                         and the arena against the sum of all intermediates\n"
    "  --trace FILE.json      write the last run's ops as a Chrome trace (chrome://tracing,\n"
    "                         Perfetto)\n"
    "  --passes LIST          graph passes before kernels are chosen (comma-separated;\n"
    "                         default fake-quant,propagate,fold-pad,fold-qdq,to-nhwc,\n"
    "                         fuse-clamp,check-integer; '' for none: fold-qdq runs QDQ\n"
    "                         regions as integer ops, to-nhwc runs NCHW convolutions and\n"
    "                         pools in NHWC, fuse-clamp folds activations into producers;\n"
    "                         see qopt --help)\n"
    "  --kernels              print, per op, the kernel that runs it (its contract name and\n"
    "                         multiply method) or why the reference runs it, and what each\n"
    "                         allowed ISA level said when it was chosen\n"
    "  --version              print the version, CPU features and LLVM facts, then exit\n"
    "  -h, --help             print this help and exit\n"
    "\n"
    ".npy dtypes: f16 <f2, f32 <f4, f64 <f8, i8 |i1, i16 <i2, i32 <i4, i64 <i8, u8 |u1,\n"
    "u16 <u2, u32 <u4, u64 <u8, i1 |b1; bf16 tensors travel as raw '<u2' bit patterns.\n"
    "\n"
    "exit status: 0 on success, 1 when the model, an input or the run fails, 2 on a usage\n"
    "error. Errors are one line on stderr.\n";

int fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "qrun: error: %s\n", message.c_str());
  return code;
}

std::string api_error(const char* what) {
  return std::string(what) + ": " + qrt_last_error_message();
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Deterministic across platforms: splitmix64.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1p-53; }
};

uint16_t f32_to_f16_bits(float f) {
  // Round-to-nearest-even conversion through the bit pattern (normal, subnormal, inf/nan).
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));
  if (exp >= 31) return uint16_t(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return uint16_t(sign);
    mant |= 0x800000u;
    const uint32_t shift = uint32_t(14 - exp);
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t h = uint32_t(exp) << 10 | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return uint16_t(sign | h);
}

float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  float v;
  if (exp == 0) {
    v = std::ldexp(float(mant), -24);
  } else if (exp == 31) {
    v = mant ? NAN : INFINITY;
  } else {
    v = std::ldexp(float(mant | 0x400u), int(exp) - 25);
  }
  return sign ? -v : v;
}

// Fills `a` with deterministic random data for `info`; false (with `error`) when the
// tensor would not fit in this machine's memory.
bool fill_random(const qrt_tensor_info& info, Rng& rng, qrt_tools::NpyArray& a, std::string& error) {
  a.dtype = info.dtype;
  size_t n = 1;
  a.shape.clear();
  for (size_t d = 0; d < info.rank; ++d) {
    a.shape.push_back(info.dims[d] < 0 ? 1 : info.dims[d]);
    n *= size_t(a.shape.back());  // verified types have < 2^48 elements: no overflow
  }
  const size_t es = qrt_dtype_size(info.dtype);
  const double physical = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (double(n) * double(es) > physical) {
    char gb[32];
    std::snprintf(gb, sizeof gb, "%.1f", double(n) * double(es) / 1e9);
    error = "--random: input '" + std::string(info.name) + "' " + shape_string(a.shape) + " needs " +
            gb + " GB, more than this machine's memory";
    return false;
  }
  a.data.assign(n * es, 0);
  for (size_t i = 0; i < n; ++i) {
    uint8_t* p = a.data.data() + i * es;
    const double u = rng.uniform();
    if (info.quant != QRT_QUANT_NONE || info.dtype >= QRT_DTYPE_I8) {
      int64_t lo = info.storage_min, hi = info.storage_max;
      if (info.quant == QRT_QUANT_NONE) {
        const bool is_unsigned = info.dtype >= QRT_DTYPE_U8 && info.dtype <= QRT_DTYPE_U64;
        lo = info.dtype == QRT_DTYPE_BOOL ? 0 : is_unsigned ? 0 : -100;
        hi = info.dtype == QRT_DTYPE_BOOL ? 1 : 100;
      }
      const int64_t v = lo + int64_t(u * double(hi - lo + 1));
      std::memcpy(p, &v, es);  // little-endian: the low bytes hold the value
    } else {
      const float f = float(u * 2.0 - 1.0);
      if (info.dtype == QRT_DTYPE_F32) {
        std::memcpy(p, &f, 4);
      } else if (info.dtype == QRT_DTYPE_F64) {
        const double d = u * 2.0 - 1.0;
        std::memcpy(p, &d, 8);
      } else if (info.dtype == QRT_DTYPE_F16) {
        const uint16_t h = f32_to_f16_bits(f);
        std::memcpy(p, &h, 2);
      } else {  // bf16: truncating the f32 pattern of a value in [-1, 1) is fine for test data
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        const uint16_t b = uint16_t(bits >> 16);
        std::memcpy(p, &b, 2);
      }
    }
  }
  return true;
}

std::string element_string(qrt_dtype dtype, const uint8_t* p) {
  char buf[64];
  switch (dtype) {
    case QRT_DTYPE_F32: { float f; std::memcpy(&f, p, 4); std::snprintf(buf, sizeof buf, "%.9g", double(f)); break; }
    case QRT_DTYPE_F64: { double d; std::memcpy(&d, p, 8); std::snprintf(buf, sizeof buf, "%.17g", d); break; }
    case QRT_DTYPE_F16: { uint16_t h; std::memcpy(&h, p, 2); std::snprintf(buf, sizeof buf, "%.5g", double(f16_bits_to_f32(h))); break; }
    case QRT_DTYPE_BF16: { uint16_t h; std::memcpy(&h, p, 2); uint32_t b = uint32_t(h) << 16; float f; std::memcpy(&f, &b, 4); std::snprintf(buf, sizeof buf, "%.4g", double(f)); break; }
    case QRT_DTYPE_I8: std::snprintf(buf, sizeof buf, "%d", int(int8_t(p[0]))); break;
    case QRT_DTYPE_U8: case QRT_DTYPE_BOOL: std::snprintf(buf, sizeof buf, "%u", unsigned(p[0])); break;
    case QRT_DTYPE_I16: { int16_t v; std::memcpy(&v, p, 2); std::snprintf(buf, sizeof buf, "%d", int(v)); break; }
    case QRT_DTYPE_U16: { uint16_t v; std::memcpy(&v, p, 2); std::snprintf(buf, sizeof buf, "%u", unsigned(v)); break; }
    case QRT_DTYPE_I32: { int32_t v; std::memcpy(&v, p, 4); std::snprintf(buf, sizeof buf, "%d", int(v)); break; }
    case QRT_DTYPE_U32: { uint32_t v; std::memcpy(&v, p, 4); std::snprintf(buf, sizeof buf, "%u", unsigned(v)); break; }
    case QRT_DTYPE_I64: { int64_t v; std::memcpy(&v, p, 8); std::snprintf(buf, sizeof buf, "%lld", (long long)v); break; }
    case QRT_DTYPE_U64: { uint64_t v; std::memcpy(&v, p, 8); std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)v); break; }
    default: std::snprintf(buf, sizeof buf, "?"); break;
  }
  return buf;
}

// Prints nested lists like NumPy, eliding the middle of long dimensions.
void print_values(qrt_dtype dtype, const std::vector<int64_t>& shape, const uint8_t* data,
                  size_t dim, size_t& index, std::string& out) {
  if (dim == shape.size()) {
    out += element_string(dtype, data + index * qrt_dtype_size(dtype));
    ++index;
    return;
  }
  size_t inner = 1;
  for (size_t d = dim + 1; d < shape.size(); ++d) inner *= size_t(shape[d]);
  out += "[";
  const int64_t n = shape[dim];
  for (int64_t k = 0; k < n; ++k) {
    if (n > 16 && k == 6) {
      out += ", ...";
      index += size_t(n - 12) * inner;
      k = n - 6;
    }
    if (k) out += ", ";
    print_values(dtype, shape, data, dim + 1, index, out);
  }
  out += "]";
}

void print_tensor(const char* kind, const char* name, const char* type, qrt_dtype dtype,
                  const std::vector<int64_t>& shape, const uint8_t* data) {
  std::string values;
  size_t index = 0;
  print_values(dtype, shape, data, 0, index, values);
  std::printf("%s %s: %s %s %s\n%s\n", kind, name, type, shape_string(shape).c_str(),
              qrt_dtype_name(dtype), values.c_str());
}

std::string safe_file_name(const std::string& name) {
  std::string s;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    s += ok ? c : '_';
  }
  return s.empty() || s[0] == '.' ? "_" + s : s;
}

struct Options {
  std::string model;
  std::map<std::string, std::string> inputs;
  bool has_seed = false;
  uint64_t seed = 0;
  std::string output_dir;
  bool print = false;
  qrt_backend backend = QRT_BACKEND_DEFAULT;
  std::string isa;  // empty: the host's best
  bool no_fusion = false;
  bool kernels = false;
  size_t threads = 1;
  bool has_passes = false;
  std::string passes;
  qrt_tools::BenchOptions bench;
};

// Owns the C handles so every exit path releases them.
struct Handles {
  qrt_model_t* model = nullptr;
  qrt_plan_t* plan = nullptr;
  qrt_context_t* context = nullptr;
  ~Handles() {
    qrt_context_destroy(context);
    qrt_plan_destroy(plan);
    qrt_model_destroy(model);
  }
};

int parse_args(int argc, char** argv, Options& o, bool& exit_now) {
  exit_now = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      exit_now = true;
      return 0;
    } else if (a == "--version") {
      std::fputs(qrt_build_info(), stdout);
      exit_now = true;
      return 0;
    } else if (a == "--input") {
      const char* v = value("--input");
      if (!v) return fail("--input needs NAME=FILE.npy", 2);
      const std::string s = v;
      const size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
        return fail("--input expects NAME=FILE.npy, got '" + s + "'", 2);
      }
      if (!o.inputs.emplace(s.substr(0, eq), s.substr(eq + 1)).second) {
        return fail("input '" + s.substr(0, eq) + "' is bound twice", 2);
      }
    } else if (a == "--random") {
      const char* v = value("--random");
      char* end = nullptr;
      if (!v || !*v || (o.seed = std::strtoull(v, &end, 10), *end != '\0') || v[0] == '-') {
        return fail("--random needs a non-negative integer SEED", 2);
      }
      o.has_seed = true;
    } else if (a == "--output-dir") {
      const char* v = value("--output-dir");
      if (!v || !*v) return fail("--output-dir needs a directory", 2);
      o.output_dir = v;
    } else if (a == "--backend") {
      const char* v = value("--backend");
      const std::string b = v ? v : "";
      if (b == "jit") {
        o.backend = QRT_BACKEND_JIT;
      } else if (b == "ref") {
        o.backend = QRT_BACKEND_REF;
      } else {
        return fail("--backend must be jit or ref, got '" + b + "'", 2);
      }
    } else if (a == "--no-fusion") {
      o.no_fusion = true;
    } else if (a == "--isa") {
      const char* v = value("--isa");
      if (!v || !*v) return fail("--isa needs a level (e.g. avx2; see --help)", 2);
      o.isa = v;
    } else if (a == "--print") {
      o.print = true;
    } else if (a == "--kernels") {
      o.kernels = true;
    } else if (a == "--threads" || a == "--bench") {
      const char* v = value(a.c_str());
      if (!v) return 2;
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (*v == '\0' || *end != '\0' || n < 1 || n > 1024) {
        return fail(a + " must be an integer in 1..1024, got '" + v + "'", 2);
      }
      if (a == "--threads") o.threads = size_t(n);
      else o.bench.iterations = int(n);
    } else if (a == "--passes") {
      const char* v = value("--passes");
      if (!v) return fail("--passes needs a comma-separated list", 2);
      o.has_passes = true;
      o.passes = v;
    } else if (a == "--profile") {
      o.bench.profile = true;
    } else if (a == "--trace") {
      const char* v = value("--trace");
      if (!v) return 2;
      o.bench.trace_path = v;
    } else if (!a.empty() && a[0] == '-') {
      return fail("unknown option '" + a + "' (see qrun --help)", 2);
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      return fail("unexpected argument '" + a + "': only one MODEL may be given", 2);
    }
  }
  if (o.model.empty()) return fail("no MODEL given (see qrun --help)", 2);
  if (o.output_dir.empty()) o.print = true;
  return 0;
}

}  // namespace

int run_main(int argc, char** argv) {
  Options o;
  bool exit_now = false;
  if (int rc = parse_args(argc, argv, o, exit_now); rc != 0 || exit_now) return rc;

  Handles h;
  if (qrt_model_load_file(o.model.c_str(), &h.model) != QRT_OK) return fail(qrt_last_error_message());
  size_t n_in = 0, n_out = 0;
  qrt_model_num_inputs(h.model, &n_in);
  qrt_model_num_outputs(h.model, &n_out);
  qrt_plan_options plan_options;
  qrt_plan_options_init(&plan_options);
  plan_options.backend = o.backend;
  plan_options.threads = o.threads;
  if (o.has_passes) plan_options.passes = o.passes.c_str();
  if (!o.isa.empty()) plan_options.isa = o.isa.c_str();
  if (o.no_fusion) plan_options.flags |= QRT_PLAN_NO_FUSION;
  if (qrt_plan_create(h.model, &plan_options, &h.plan) != QRT_OK) return fail(api_error("compiling the model"));
  if (qrt_context_create(h.plan, &h.context) != QRT_OK) return fail(api_error("creating a context"));
  if (o.kernels) {
    size_t ops = 0;
    qrt_plan_num_ops(h.plan, &ops);
    for (size_t i = 0; i < ops; ++i) {
      qrt_op_info info;
      qrt_plan_op_info(h.plan, i, &info);
      const char* selection = "";
      qrt_plan_op_selection(h.plan, i, &selection);
      std::printf("op %zu %s: %s%s%s\n", i, info.op, info.kernel, *info.reason ? ": " : "", info.reason);
      if (*selection) std::printf("    isa: %s\n", selection);
    }
  }

  // Reject --input names the model does not have before reading any file.
  std::map<std::string, bool> known;
  for (size_t i = 0; i < n_in; ++i) {
    qrt_tensor_info info;
    qrt_model_input_info(h.model, i, &info);
    known[info.name] = true;
  }
  for (const auto& [name, file] : o.inputs) {
    if (!known.count(name)) {
      std::string names;
      for (const auto& [k, v] : known) names += (names.empty() ? "" : ", ") + k;
      return fail("--input " + name + "=" + file + ": the model has no input '" + name +
                  "' (inputs: " + (names.empty() ? "none" : names) + ")");
    }
  }

  Rng rng{o.seed};
  for (size_t i = 0; i < n_in; ++i) {
    qrt_tensor_info info;
    qrt_model_input_info(h.model, i, &info);
    qrt_tools::NpyArray array;
    std::string where;
    auto bound = o.inputs.find(info.name);
    if (bound != o.inputs.end()) {
      std::string error;
      if (!qrt_tools::read_npy(bound->second, array, error)) return fail(error);
      if (array.dtype != info.dtype && !(info.dtype == QRT_DTYPE_BF16 && array.dtype == QRT_DTYPE_U16)) {
        return fail(bound->second + ": input '" + info.name + "' (" + info.type + ") needs dtype " +
                    qrt_dtype_name(info.dtype) + " ('" + qrt_tools::npy_descr(info.dtype) +
                    "'), the file holds " + qrt_dtype_name(array.dtype) + " ('" +
                    qrt_tools::npy_descr(array.dtype) + "')");
      }
      array.dtype = info.dtype;
      where = bound->second + ": ";
    } else if (o.has_seed) {
      std::string error;
      if (!fill_random(info, rng, array, error)) return fail(error);
    } else {
      return fail("input '" + std::string(info.name) + "' (" + info.type +
                  ") is not bound: pass --input " + info.name + "=FILE.npy or --random SEED");
    }
    if (qrt_context_set_input(h.context, i, array.dtype, array.shape.size(), array.shape.data(),
                              array.data.data(), array.data.size()) != QRT_OK) {
      return fail(where + qrt_last_error_message());
    }
    // Generated inputs are shown so that a run can be understood; given ones the user has.
    if (o.print && bound == o.inputs.end()) {
      print_tensor("input", info.name, info.type, array.dtype, array.shape, array.data.data());
    }
  }
  if (qrt_context_run(h.context) != QRT_OK) return fail(qrt_last_error_message());
  const std::string bench_error = qrt_tools::bench_and_profile(h.context, h.plan, o.threads, o.bench);
  if (!bench_error.empty()) return fail(bench_error);

  if (!o.output_dir.empty()) {
    struct stat st;
    if (stat(o.output_dir.c_str(), &st) != 0 && mkdir(o.output_dir.c_str(), 0777) != 0) {
      return fail(o.output_dir + ": cannot create directory: " + std::strerror(errno));
    }
  }
  for (size_t i = 0; i < n_out; ++i) {
    qrt_tensor_info info;
    qrt_tensor_view view;
    qrt_model_output_info(h.model, i, &info);
    if (qrt_context_output(h.context, i, &view) != QRT_OK) return fail(api_error("reading outputs"));
    const std::vector<int64_t> shape(view.dims, view.dims + view.rank);
    const auto* bytes = static_cast<const uint8_t*>(view.data);
    if (o.print) print_tensor("output", info.name, info.type, view.dtype, shape, bytes);
    if (!o.output_dir.empty()) {
      qrt_tools::NpyArray array;
      array.dtype = view.dtype;
      array.shape = shape;
      array.data.assign(bytes, bytes + view.bytes);
      std::string error;
      const std::string path = o.output_dir + "/" + safe_file_name(info.name) + ".npy";
      if (!qrt_tools::write_npy(path, array, error)) return fail(error);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::bad_alloc&) {
    return fail("out of memory (an input or output is larger than this machine can hold)");
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what());
  }
}
