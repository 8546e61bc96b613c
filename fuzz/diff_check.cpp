// The differential check (see diff_check.h).
#include "diff_check.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>

namespace qrt_fuzz {

namespace {

// Owning handles for the C API's objects.
struct ModelFree {
  void operator()(qrt_model_t* m) const { qrt_model_destroy(m); }
};
struct PlanFree {
  void operator()(qrt_plan_t* p) const { qrt_plan_destroy(p); }
};
struct ContextFree {
  void operator()(qrt_context_t* c) const { qrt_context_destroy(c); }
};
using ModelPtr = std::unique_ptr<qrt_model_t, ModelFree>;
using PlanPtr = std::unique_ptr<qrt_plan_t, PlanFree>;
using ContextPtr = std::unique_ptr<qrt_context_t, ContextFree>;

std::string status_text(qrt_status s) {
  return std::string(qrt_status_string(s)) + ": " + qrt_last_error_message();
}

std::vector<std::string> split_levels(const char* list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t b = item.find_first_not_of(' ');
    if (b != std::string::npos) out.push_back(item.substr(b));
  }
  return out;
}

struct Input {
  qrt_dtype dtype;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

// Values for one input: quantized inputs hold stored integers inside the bounds, float
// inputs hold reals around the input's first consumer's scale, which the generator does not
// tell us, so a spread over many decades with a few specials.
Input make_input(const qrt_tensor_info& info, std::mt19937_64& rng) {
  Input in{info.dtype, std::vector<int64_t>(info.dims, info.dims + info.rank), {}};
  size_t count = 1;
  for (int64_t& d : in.dims) {
    if (d < 0) d = 1;  // a dynamic dimension
    count *= static_cast<size_t>(d);
  }
  const size_t elem = qrt_dtype_size(info.dtype);
  in.bytes.resize(count * elem);
  const int mode = static_cast<int>(rng() % 8);
  for (size_t i = 0; i < count; ++i) {
    if (info.dtype == QRT_DTYPE_F32) {
      float v;
      const uint64_t r = rng();
      if (mode == 0 && r % 16 == 0) {
        const float specials[] = {INFINITY, -INFINITY, NAN, -0.0f, 1e30f, -1e30f, 1e-40f, 0.0f};
        v = specials[(r >> 8) % 8];
      } else {
        const double magnitude = std::pow(10.0, static_cast<double>((r >> 8) % 4096) / 4096.0 * 4.0 - 2.0);
        v = static_cast<float>((r & 1 ? -1.0 : 1.0) * magnitude * static_cast<double>((r >> 20) % 1000) / 1000.0);
      }
      std::memcpy(&in.bytes[i * 4], &v, 4);
      continue;
    }
    const int64_t lo = info.storage_min, hi = info.storage_max;
    const uint64_t r = rng();
    int64_t v = mode == 0 ? (r & 1 ? lo : hi) : lo + static_cast<int64_t>(r % static_cast<uint64_t>(hi - lo + 1));
    for (size_t b = 0; b < elem; ++b) in.bytes[i * elem + b] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b));
  }
  return in;
}

struct RunResult {
  qrt_status status = QRT_OK;
  std::string error;
  std::vector<qrt_tensor_view> views;     // shapes and dtypes (data points into `bytes`)
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<std::vector<int64_t>> dims;
  std::string kernels;                    // "op: kernel" lines of the plan
  bool skipped = false;                   // over the memory budget: not run
  std::string view_error;                 // an output view that contradicts itself or the model
};

// What is wrong with output `index`'s view, or "": its rank is the model's, its static
// dimensions match, and it holds exactly its elements' bytes, at a pointer where there are any.
std::string check_view(const qrt_model_t* model, size_t index, const qrt_tensor_view& view) {
  qrt_tensor_info info;
  qrt_model_output_info(model, index, &info);
  const std::string what = "output " + std::to_string(index) + "'s view";
  if (view.rank != info.rank) {
    return what + " has rank " + std::to_string(view.rank) + ", the model's output rank " + std::to_string(info.rank);
  }
  size_t count = 1;
  for (size_t d = 0; d < view.rank; ++d) {
    if (view.dims[d] < 0 || (info.dims[d] >= 0 && view.dims[d] != info.dims[d])) {
      return what + " has dimension " + std::to_string(d) + " = " + std::to_string(view.dims[d]) + ", the model's " +
             std::to_string(info.dims[d]);
    }
    count *= size_t(view.dims[d]);
  }
  if (info.dtype != QRT_DTYPE_INVALID && view.dtype != info.dtype) {
    return what + " is " + qrt_dtype_name(view.dtype) + ", the model's output " + qrt_dtype_name(info.dtype);
  }
  if (view.bytes != count * qrt_dtype_size(view.dtype)) {
    return what + " holds " + std::to_string(view.bytes) + " bytes for " + std::to_string(count) + " elements";
  }
  if (view.bytes > 0 && view.data == nullptr) return what + " has " + std::to_string(view.bytes) + " bytes at null";
  return "";
}

RunResult run_config(const qrt_model_t* model, const std::vector<Input>& inputs, qrt_backend backend,
                     const RunConfig& config, KernelCounts* counts, size_t max_memory) {
  RunResult r;
  qrt_plan_options options;
  qrt_plan_options_init(&options);
  options.backend = backend;
  options.threads = config.threads;
  options.isa = config.isa.empty() ? nullptr : config.isa.c_str();
  options.flags = config.flags;
  options.max_memory = max_memory;
  if (config.no_passes) options.passes = "";
  qrt_plan_t* raw_plan = nullptr;
  r.status = qrt_plan_create(model, &options, &raw_plan);
  if (r.status != QRT_OK) {
    r.error = "plan: " + status_text(r.status);
    r.skipped = r.status == QRT_OUT_OF_MEMORY;  // over the budget: not run
    return r;
  }
  PlanPtr plan(raw_plan);
  size_t ops = 0;
  qrt_plan_num_ops(plan.get(), &ops);
  for (size_t i = 0; i < ops; ++i) {
    qrt_op_info info;
    if (qrt_plan_op_info(plan.get(), i, &info) != QRT_OK) continue;
    r.kernels += std::string("    ") + info.op + ": " + info.kernel + "\n";
    if (counts && backend != QRT_BACKEND_REF && std::strcmp(info.op, "qrt.constant") != 0) {
      // The contract name alone: the remarks after it name op indices and weights.
      std::string kernel(info.kernel, std::strcspn(info.kernel, " "));
      // Why the reference runs it, without the values that make each reason unique.
      if (kernel == "reference" && info.reason[0]) {
        std::string reason = info.reason;
        for (char& ch : reason)
          if (ch >= '0' && ch <= '9') ch = '#';
        kernel += " (" + reason.substr(0, 200) + ")";
      }
      ++(*counts)[std::string(info.op) + " -> " + kernel];
    }
  }
  qrt_context_t* raw_ctx = nullptr;
  r.status = qrt_context_create(plan.get(), &raw_ctx);
  if (r.status != QRT_OK) {
    r.error = "context: " + status_text(r.status);
    return r;
  }
  ContextPtr ctx(raw_ctx);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    r.status = qrt_context_set_input(ctx.get(), i, in.dtype, in.dims.size(), in.dims.data(), in.bytes.data(),
                                     in.bytes.size());
    if (r.status != QRT_OK) {
      r.error = "input " + std::to_string(i) + ": " + status_text(r.status);
      return r;
    }
  }
  r.status = qrt_context_run(ctx.get());
  if (r.status != QRT_OK) {
    r.error = "run: " + status_text(r.status);
    return r;
  }
  size_t outputs = 0;
  qrt_model_num_outputs(model, &outputs);
  for (size_t i = 0; i < outputs; ++i) {
    qrt_tensor_view view;
    qrt_context_output(ctx.get(), i, &view);
    if (std::string bad = check_view(model, i, view); !bad.empty()) {
      r.view_error = bad;
      return r;
    }
    const auto* p = static_cast<const uint8_t*>(view.data);
    r.bytes.emplace_back(p, p + view.bytes);
    r.dims.emplace_back(view.dims, view.dims + view.rank);
    r.views.push_back(view);
  }
  return r;
}

// One element as text, for messages.
std::string element_text(qrt_dtype dtype, const uint8_t* p) {
  switch (dtype) {
    case QRT_DTYPE_F32: { float f; std::memcpy(&f, p, 4); std::ostringstream s; s.precision(9); s << f; return s.str(); }
    case QRT_DTYPE_I8: return std::to_string(static_cast<int8_t>(p[0]));
    case QRT_DTYPE_U8: return std::to_string(p[0]);
    case QRT_DTYPE_I16: { int16_t v; std::memcpy(&v, p, 2); return std::to_string(v); }
    case QRT_DTYPE_U16: { uint16_t v; std::memcpy(&v, p, 2); return std::to_string(v); }
    case QRT_DTYPE_I32: { int32_t v; std::memcpy(&v, p, 4); return std::to_string(v); }
    default: return "?";
  }
}

bool same_element(qrt_dtype dtype, const uint8_t* a, const uint8_t* b, size_t size) {
  if (dtype == QRT_DTYPE_F32) {
    float x, y;
    std::memcpy(&x, a, 4);
    std::memcpy(&y, b, 4);
    if (std::isnan(x) && std::isnan(y)) return true;  // which NaN is not part of the contract
  }
  return std::memcmp(a, b, size) == 0;
}

// "" when equal, else what differs first.
std::string compare(const RunResult& ref, const RunResult& got) {
  if (ref.status != got.status) {
    return "status " + std::string(qrt_status_string(got.status)) + " (" + got.error + ") where the reference gave " +
           qrt_status_string(ref.status) + (ref.error.empty() ? "" : " (" + ref.error + ")");
  }
  if (ref.status != QRT_OK) return "";
  if (ref.bytes.size() != got.bytes.size()) return "a different number of outputs";
  for (size_t o = 0; o < ref.bytes.size(); ++o) {
    if (ref.dims[o] != got.dims[o] || ref.views[o].dtype != got.views[o].dtype) return "output " + std::to_string(o) + ": shape or dtype differs";
    const size_t elem = qrt_dtype_size(ref.views[o].dtype);
    const size_t count = elem ? ref.bytes[o].size() / elem : 0;
    size_t mismatches = 0, first = 0;
    for (size_t i = 0; i < count; ++i) {
      if (!same_element(ref.views[o].dtype, &ref.bytes[o][i * elem], &got.bytes[o][i * elem], elem)) {
        if (mismatches++ == 0) first = i;
      }
    }
    if (mismatches) {
      return "output " + std::to_string(o) + ": " + std::to_string(mismatches) + " of " + std::to_string(count) +
             " elements differ; first at flat index " + std::to_string(first) + ": " +
             element_text(ref.views[o].dtype, &got.bytes[o][first * elem]) + " where the reference gives " +
             element_text(ref.views[o].dtype, &ref.bytes[o][first * elem]);
    }
  }
  return "";
}

}  // namespace

std::vector<RunConfig> host_configs(const ConfigOptions& options) {
  const std::vector<std::string> levels = split_levels(qrt_host_isas());
  std::vector<RunConfig> configs;
  for (const std::string& level : levels) {
    configs.push_back({"jit@" + level, QRT_BACKEND_JIT, level, 1, 0, false});
    if (options.threads > 1)
      configs.push_back({"jit@" + level + "/" + std::to_string(options.threads) + "t", QRT_BACKEND_JIT, level,
                         options.threads, 0, false});
  }
  if (!levels.empty()) {
    configs.push_back({"jit@" + levels[0] + "/nofuse", QRT_BACKEND_JIT, levels[0], 1, QRT_PLAN_NO_FUSION, false});
    configs.push_back({"jit@" + levels[0] + "/rowfuse", QRT_BACKEND_JIT, levels[0], 1, QRT_PLAN_ROW_FUSION, false});
    configs.push_back({"jit@" + levels[0] + "/nopasses", QRT_BACKEND_JIT, levels[0], 1, 0, true});
  }
  const bool llvm_built = std::strstr(qrt_build_info(), "every kernel from LLVM: built") != nullptr;
  if (options.llvm && llvm_built) {
    for (const std::string& level : levels) {
      // LLVM serves avx2-vnni hosts at avx2 (qrt.h): that run would repeat the avx2 one.
      if (level == "avx2-vnni") continue;
      configs.push_back({"llvm@" + level, QRT_BACKEND_LLVM, level, 1, 0, false});
    }
  }
  return configs;
}

DiffOutcome diff_graph(const std::string& mlir, uint64_t input_seed, const std::vector<RunConfig>& configs,
                       KernelCounts* kernels) {
  DiffOutcome out;
  qrt_model_t* raw_model = nullptr;
  const qrt_status load = qrt_model_load_buffer(mlir.data(), mlir.size(), "fuzz.mlir", &raw_model);
  if (load != QRT_OK) {
    out.kind = DiffOutcome::kInvalid;
    out.message = "load: " + status_text(load);
    return out;
  }
  ModelPtr model(raw_model);
  return diff_model(model.get(), input_seed, configs, kernels);
}

DiffOutcome diff_model(const qrt_model_t* model, uint64_t input_seed, const std::vector<RunConfig>& configs,
                       KernelCounts* kernels, const DiffBudget& budget) {
  DiffOutcome out;
  size_t num_inputs = 0;
  qrt_model_num_inputs(model, &num_inputs);
  std::mt19937_64 rng(input_seed);
  std::vector<Input> inputs;
  for (size_t i = 0; i < num_inputs; ++i) {
    qrt_tensor_info info;
    qrt_model_input_info(model, i, &info);
    int64_t count = 1;
    for (size_t d = 0; d < info.rank; ++d) {
      if (info.dims[d] > 0) count = info.dims[d] > budget.max_input_elements ? budget.max_input_elements + 1 : count * info.dims[d];
      if (count > budget.max_input_elements) {
        out.kind = DiffOutcome::kSkipped;
        out.message = "input " + std::to_string(i) + " has more than " + std::to_string(budget.max_input_elements) + " elements";
        return out;
      }
    }
    if (qrt_dtype_size(info.dtype) == 0 || info.dtype == QRT_DTYPE_BOOL || info.dtype == QRT_DTYPE_F16 ||
        info.dtype == QRT_DTYPE_BF16 || info.dtype == QRT_DTYPE_F64 || info.dtype == QRT_DTYPE_I64 ||
        info.dtype == QRT_DTYPE_U32 || info.dtype == QRT_DTYPE_U64) {
      out.kind = DiffOutcome::kSkipped;
      out.message = std::string("input ") + std::to_string(i) + " is " + qrt_dtype_name(info.dtype) + ", which the fuzzer does not fill";
      return out;
    }
    inputs.push_back(make_input(info, rng));
  }
  RunResult refs[2];  // [no_passes]
  bool have_ref[2] = {false, false};
  for (const RunConfig& config : configs) {
    const int which = config.no_passes ? 1 : 0;
    if (!have_ref[which]) {
      RunConfig ref_config = config;
      ref_config.threads = 1;
      ref_config.isa.clear();
      refs[which] = run_config(model, inputs, QRT_BACKEND_REF, ref_config, nullptr, budget.max_memory);
      ++out.runs;
      have_ref[which] = true;
      if (!refs[which].view_error.empty()) {
        out.kind = DiffOutcome::kMismatch;
        out.message = std::string("reference") + (which ? " without passes" : "") + ": " + refs[which].view_error;
        return out;
      }
      if (refs[which].skipped) {
        out.kind = DiffOutcome::kSkipped;
        out.message = refs[which].error;
        return out;
      }
      if (refs[which].status != QRT_OK && refs[which].status != QRT_RUNTIME_ERROR) {
        out.kind = DiffOutcome::kInvalid;
        out.message = std::string("reference") + (which ? " without passes" : "") + ": " + refs[which].error;
        return out;
      }
    }
    const RunResult got = run_config(model, inputs, config.backend, config, kernels, budget.max_memory);
    ++out.runs;
    if (!got.view_error.empty()) {
      out.kind = DiffOutcome::kMismatch;
      out.message = config.label + ": " + got.view_error;
      return out;
    }
    if (got.skipped) {
      out.kind = DiffOutcome::kSkipped;
      out.message = config.label + ": " + got.error;
      return out;
    }
    const std::string difference = compare(refs[which], got);
    if (!difference.empty()) {
      out.kind = DiffOutcome::kMismatch;
      out.message = config.label + ": " + difference + "\n  plan of " + config.label + ":\n" + got.kernels;
      return out;
    }
  }
  return out;
}

}  // namespace qrt_fuzz
