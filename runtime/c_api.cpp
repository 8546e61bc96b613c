// qrt — the C API firewall: the only extern "C" code. No exception crosses it; every
// failure becomes a stable qrt_status plus a thread-local message; outputs are written
// only on success.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <new>
#include <string>

#include "include/qrt.h"
#include "ir/ops.h"
#include "passes/pipeline.h"
#include "ir/binary_format.h"
#include "ir/text_format.h"
#include "jit/core/host_info.h"
#include "jit/kernel_list.h"
#include "jit/llvm/llvm_backend.h"
#include "runtime/calibration.h"
#include "runtime/session.h"

struct qrt_model_s {
  std::unique_ptr<qrt::runtime::Model> impl;
};
struct qrt_plan_s {
  std::unique_ptr<qrt::runtime::Plan> impl;
};
struct qrt_context_s {
  qrt::runtime::Context impl;
};

namespace {

thread_local std::string g_last_error;

qrt_status fail(qrt_status status, std::string message) {
  g_last_error = std::move(message);
  return status;
}

qrt_status status_of(const qrt::Status& s) {
  using qrt::ErrorCode;
  switch (s.code()) {
    case ErrorCode::kParse: return QRT_PARSE_ERROR;
    case ErrorCode::kVerify: return QRT_VERIFY_ERROR;
    case ErrorCode::kInvalidArgument: return QRT_INVALID_ARGUMENT;
    case ErrorCode::kIo: return QRT_IO_ERROR;
    case ErrorCode::kUnsupported: return QRT_UNSUPPORTED;
    case ErrorCode::kRuntime: return QRT_RUNTIME_ERROR;
    case ErrorCode::kOutOfMemory: return QRT_OUT_OF_MEMORY;
    case ErrorCode::kGeneric: break;
  }
  return QRT_INTERNAL_ERROR;
}

qrt_status fail(const qrt::Status& s) { return fail(status_of(s), s.to_string()); }

qrt_status ok() {
  g_last_error.clear();
  return QRT_OK;
}

// Runs `body` and turns any escaping exception into a status.
template <typename Fn>
qrt_status guarded(Fn body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(QRT_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(QRT_INTERNAL_ERROR, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(QRT_INTERNAL_ERROR, "internal error: unknown exception");
  }
}

qrt_status null_argument(const char* function, const char* parameter) {
  return fail(QRT_INVALID_ARGUMENT, std::string(function) + ": '" + parameter + "' is NULL");
}

qrt_status adopt_model(qrt::Result<std::unique_ptr<qrt::runtime::Model>> loaded,
                       qrt_model_t** model_out) {
  if (!loaded.is_ok()) return fail(loaded.status());
  auto* handle = new qrt_model_s{std::move(loaded).value()};
  *model_out = handle;
  return ok();
}

}  // namespace

extern "C" {

const char* qrt_version(void) { return QRT_VERSION_STRING; }

const char* qrt_host_isas(void) {
  static const std::string isas = qrt::jit::host_isas().to_string();
  return isas.c_str();
}

const char* qrt_build_info(void) {
  static const std::string info = [] {
    const qrt::CpuFeatures& cpu = qrt::host_cpu_features();
    const qrt::LlvmInfo& llvm = qrt::llvm_info();
    std::string s = std::string("qrt ") + QRT_VERSION_STRING + "\n";
    s += "cpu: " + (cpu.brand.empty() ? std::string("unknown") : cpu.brand) + " (" + cpu.vendor + ")\n";
    s += "cpu features:";
    const std::pair<const char*, bool> flags[] = {
        {"x86-64", cpu.x86}, {"avx2+fma", cpu.avx2}, {"f16c", cpu.f16c}, {"avx512f", cpu.avx512f}, {"avx512bw", cpu.avx512bw},
        {"avx512-vnni", cpu.avx512_vnni}, {"avx-vnni", cpu.avx_vnni}, {"avx512-bf16", cpu.avx512_bf16},
        {"amx-int8", cpu.amx_int8}, {"amx-granted", cpu.amx_granted}, {"aarch64", cpu.aarch64},
        {"neon", cpu.neon}, {"dotprod", cpu.neon_dot}, {"i8mm", cpu.neon_i8mm}};
    for (const auto& [name, present] : flags) {
      if (present) s += std::string(" ") + name;
    }
    s += "\nllvm: " + llvm.version + ", host cpu " + llvm.host_cpu + ", ORC JIT " +
         (llvm.orc_jit ? "available" : "unavailable: " + llvm.error) + "\n";
    s += "isa levels: " + qrt::jit::host_isas().to_string() + " (best first; --isa caps them)\n";
    s += "kernel list:";
    std::vector<std::string> seen;
    for (const qrt::jit::KernelListRow& r : qrt::jit::kernel_list()) {
      const std::string row = std::string(r.backend->name()) + "@" + qrt::jit::isa_name(r.isa);
      if (std::find(seen.begin(), seen.end(), row) != seen.end()) continue;
      seen.push_back(row);
      s += " " + row + (r.backend->available() ? "" : " (unavailable)");
    }
    s += "\nbackends: ref (the reference interpreter, the numerics oracle); jit (kernels of the best allowed "
         "level, the reference for ops without one); llvm (every kernel from LLVM: ";
    s += qrt::jit::llvm_kernel_templates_built() ? "built" : "not in this build";
    s += "); default: ";
    s += qrt::runtime::resolved_backend(QRT_BACKEND_DEFAULT) == QRT_BACKEND_LLVM ? "llvm" : "jit";
    s += "\nnumerics profiles: " + std::string(qrt::numerics_profile_names()) +
         " (default: the model's own, else default; docs/numerics.md)\n";
    return s;
  }();
  return info.c_str();
}

const char* qrt_status_string(qrt_status status) {
  switch (status) {
    case QRT_OK: return "QRT_OK";
    case QRT_INVALID_ARGUMENT: return "QRT_INVALID_ARGUMENT";
    case QRT_PARSE_ERROR: return "QRT_PARSE_ERROR";
    case QRT_VERIFY_ERROR: return "QRT_VERIFY_ERROR";
    case QRT_IO_ERROR: return "QRT_IO_ERROR";
    case QRT_UNSUPPORTED: return "QRT_UNSUPPORTED";
    case QRT_RUNTIME_ERROR: return "QRT_RUNTIME_ERROR";
    case QRT_OUT_OF_MEMORY: return "QRT_OUT_OF_MEMORY";
    case QRT_INTERNAL_ERROR: return "QRT_INTERNAL_ERROR";
    case QRT_STATUS_MAX_ENUM: break;
  }
  return "QRT_UNKNOWN_STATUS";
}

const char* qrt_last_error_message(void) { return g_last_error.c_str(); }

size_t qrt_dtype_size(qrt_dtype dtype) {
  switch (dtype) {
    case QRT_DTYPE_I8: case QRT_DTYPE_U8: case QRT_DTYPE_BOOL: return 1;
    case QRT_DTYPE_F16: case QRT_DTYPE_BF16: case QRT_DTYPE_I16: case QRT_DTYPE_U16: return 2;
    case QRT_DTYPE_F32: case QRT_DTYPE_I32: case QRT_DTYPE_U32: return 4;
    case QRT_DTYPE_F64: case QRT_DTYPE_I64: case QRT_DTYPE_U64: return 8;
    case QRT_DTYPE_INVALID: case QRT_DTYPE_MAX_ENUM: break;
  }
  return 0;
}

const char* qrt_dtype_name(qrt_dtype dtype) {
  switch (dtype) {
    case QRT_DTYPE_F16: return "f16";
    case QRT_DTYPE_BF16: return "bf16";
    case QRT_DTYPE_F32: return "f32";
    case QRT_DTYPE_F64: return "f64";
    case QRT_DTYPE_I8: return "i8";
    case QRT_DTYPE_I16: return "i16";
    case QRT_DTYPE_I32: return "i32";
    case QRT_DTYPE_I64: return "i64";
    case QRT_DTYPE_U8: return "u8";
    case QRT_DTYPE_U16: return "u16";
    case QRT_DTYPE_U32: return "u32";
    case QRT_DTYPE_U64: return "u64";
    case QRT_DTYPE_BOOL: return "bool";
    case QRT_DTYPE_INVALID: case QRT_DTYPE_MAX_ENUM: break;
  }
  return "invalid";
}

void qrt_free(void* p) { std::free(p); }

void qrt_load_options_init(qrt_load_options* options) {
  if (!options) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
}

namespace {

// The caller's load options over the defaults; false (with the error set) for a bad size.
bool read_load_options(const char* fn, const qrt_load_options* options, qrt_load_options* out) {
  qrt_load_options_init(out);
  if (!options) return true;
  if (options->struct_size < sizeof(size_t) || options->struct_size > sizeof *out) {
    fail(QRT_INVALID_ARGUMENT, std::string(fn) + ": options->struct_size " + std::to_string(options->struct_size) +
                                   " is not a known qrt_load_options size");
    return false;
  }
  std::memcpy(out, options, options->struct_size);
  return true;
}

}  // namespace

qrt_status qrt_model_load_file(const char* path, qrt_model_t** model_out) {
  return qrt_model_load_file_ex(path, nullptr, model_out);
}

qrt_status qrt_model_load_file_ex(const char* path, const qrt_load_options* options, qrt_model_t** model_out) {
  return guarded([&] {
    if (!path) return null_argument("qrt_model_load_file", "path");
    if (!model_out) return null_argument("qrt_model_load_file", "model_out");
    qrt_load_options opts;
    if (!read_load_options("qrt_model_load_file_ex", options, &opts)) return QRT_INVALID_ARGUMENT;
    return adopt_model(qrt::runtime::load_model_file(path, opts.max_memory), model_out);
  });
}

qrt_status qrt_model_load_buffer(const void* data, size_t size, const char* name,
                                 qrt_model_t** model_out) {
  return qrt_model_load_buffer_ex(data, size, name, nullptr, model_out);
}

qrt_status qrt_model_load_buffer_ex(const void* data, size_t size, const char* name,
                                    const qrt_load_options* options, qrt_model_t** model_out) {
  return guarded([&] {
    if (!data && size > 0) return null_argument("qrt_model_load_buffer", "data");
    if (!model_out) return null_argument("qrt_model_load_buffer", "model_out");
    qrt_load_options opts;
    if (!read_load_options("qrt_model_load_buffer_ex", options, &opts)) return QRT_INVALID_ARGUMENT;
    const std::string text(static_cast<const char*>(data), size);
    return adopt_model(qrt::runtime::load_model(text, name ? name : "<buffer>", opts.max_memory), model_out);
  });
}

void qrt_model_destroy(qrt_model_t* model) { delete model; }

qrt_status qrt_model_save(const qrt_model_t* model, const char* path, qrt_format format) {
  return guarded([&] {
    if (!model) return null_argument("qrt_model_save", "model");
    if (!path) return null_argument("qrt_model_save", "path");
    std::string bytes;
    if (format == QRT_FORMAT_TEXT) {
      bytes = qrt::print_graph(*model->impl->graph);
    } else if (format == QRT_FORMAT_BINARY) {
      auto written = qrt::write_binary_graph(*model->impl->graph, std::string("qrt ") + QRT_VERSION_STRING);
      if (!written.is_ok()) return fail(written.status());
      bytes = std::move(written).value();
    } else {
      return fail(QRT_INVALID_ARGUMENT, "qrt_model_save: unknown format " + std::to_string(int(format)));
    }
    FILE* f = std::fopen(path, "wb");
    if (!f) return fail(QRT_IO_ERROR, std::string(path) + ": cannot create file: " + std::strerror(errno));
    const bool written_all = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (std::fclose(f) != 0 || !written_all) return fail(QRT_IO_ERROR, std::string(path) + ": write failed");
    return ok();
  });
}

qrt_status qrt_model_print(const qrt_model_t* model, char** text_out) {
  return guarded([&] {
    if (!model) return null_argument("qrt_model_print", "model");
    if (!text_out) return null_argument("qrt_model_print", "text_out");
    const std::string text = qrt::print_graph(*model->impl->graph);
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (!out) return fail(QRT_OUT_OF_MEMORY, "out of memory");
    std::memcpy(out, text.c_str(), text.size() + 1);
    *text_out = out;
    return ok();
  });
}

qrt_status qrt_model_apply_passes(qrt_model_t* model, const char* passes, char** report_out) {
  return qrt_model_apply_passes_ex(model, passes, 0, report_out);
}

const char* qrt_passes_help(void) {
  static const std::string text = [] {
    std::string t;
    for (const auto& p : qrt::passes::registered_passes()) {
      std::string name = p.name;
      name.resize(std::max<size_t>(name.size(), 14), ' ');
      t += "                   " + name + p.summary + "\n";
    }
    return t;
  }();
  return text.c_str();
}

const char* qrt_calibration_pipeline(void) { return qrt::passes::kCalibratePipeline; }

qrt_status qrt_model_calibrate(qrt_model_t* model, const qrt_tensor_view* inputs, size_t num_inputs) {
  return guarded([&] {
    if (!model) return null_argument("qrt_model_calibrate", "model");
    if (!inputs && num_inputs > 0) return null_argument("qrt_model_calibrate", "inputs");
    qrt::Status s = qrt::runtime::calibrate_model(*model->impl, inputs, num_inputs);
    return s.is_ok() ? ok() : fail(s);
  });
}

qrt_status qrt_model_apply_passes_ex(qrt_model_t* model, const char* passes, unsigned flags, char** report_out) {
  return guarded([&] {
    if (!model) return null_argument("qrt_model_apply_passes", "model");
    if (!passes) return null_argument("qrt_model_apply_passes", "passes");
    std::vector<std::string> report;
    qrt::passes::PipelineOptions options;
    options.report = &report;
    options.print_ir_after_all = (flags & QRT_PASSES_PRINT_IR_AFTER_ALL) != 0;
    options.timing = (flags & QRT_PASSES_TIMING) != 0;
    auto g = qrt::passes::run_pipeline(*model->impl->graph, passes, options);
    if (!g.is_ok()) return fail(g.status());
    std::string text;
    for (const std::string& line : report) text += line + "\n";
    char* out = nullptr;
    if (report_out) {
      out = static_cast<char*>(std::malloc(text.size() + 1));
      if (!out) return fail(QRT_OUT_OF_MEMORY, "out of memory");
      std::memcpy(out, text.c_str(), text.size() + 1);
    }
    model->impl->graph = std::make_shared<const qrt::Graph>(std::move(g).value());  // plans keep theirs
    if (report_out) *report_out = out;
    return ok();
  });
}

qrt_status qrt_model_num_inputs(const qrt_model_t* model, size_t* count_out) {
  if (!model) return null_argument("qrt_model_num_inputs", "model");
  if (!count_out) return null_argument("qrt_model_num_inputs", "count_out");
  *count_out = model->impl->inputs.size();
  return ok();
}

qrt_status qrt_model_num_outputs(const qrt_model_t* model, size_t* count_out) {
  if (!model) return null_argument("qrt_model_num_outputs", "model");
  if (!count_out) return null_argument("qrt_model_num_outputs", "count_out");
  *count_out = model->impl->outputs.size();
  return ok();
}

static qrt_status tensor_info(const char* function, const qrt_model_t* model, size_t index,
                              qrt_tensor_info* info_out, bool input) {
  if (!model) return null_argument(function, "model");
  if (!info_out) return null_argument(function, "info_out");
  const auto& list = input ? model->impl->inputs : model->impl->outputs;
  if (index >= list.size()) {
    return fail(QRT_INVALID_ARGUMENT, std::string(function) + ": index " + std::to_string(index) +
                                          " is out of range (the model has " +
                                          std::to_string(list.size()) +
                                          (input ? " inputs)" : " outputs)"));
  }
  list[index].fill(info_out);
  return ok();
}

qrt_status qrt_model_input_info(const qrt_model_t* model, size_t index, qrt_tensor_info* info_out) {
  return tensor_info("qrt_model_input_info", model, index, info_out, true);
}

qrt_status qrt_model_output_info(const qrt_model_t* model, size_t index, qrt_tensor_info* info_out) {
  return tensor_info("qrt_model_output_info", model, index, info_out, false);
}

void qrt_plan_options_init(qrt_plan_options* options) {
  if (!options) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->backend = QRT_BACKEND_DEFAULT;
}

qrt_status qrt_plan_create(const qrt_model_t* model, const qrt_plan_options* options,
                           qrt_plan_t** plan_out) {
  return guarded([&] {
    if (!model) return null_argument("qrt_plan_create", "model");
    if (!plan_out) return null_argument("qrt_plan_create", "plan_out");
    qrt_plan_options opts;
    qrt_plan_options_init(&opts);
    if (options) {
      if (options->struct_size < sizeof(size_t) || options->struct_size > sizeof opts) {
        return fail(QRT_INVALID_ARGUMENT, "qrt_plan_create: options->struct_size " +
                                              std::to_string(options->struct_size) +
                                              " is not a known qrt_plan_options size");
      }
      std::memcpy(&opts, options, options->struct_size);
    }
    auto plan = qrt::runtime::create_plan(*model->impl, opts);
    if (!plan.is_ok()) return fail(plan.status());
    *plan_out = new qrt_plan_s{std::move(plan).value()};
    return ok();
  });
}

qrt_status qrt_plan_numerics(const qrt_plan_t* plan, const char** profile_out) {
  if (!plan) return null_argument("qrt_plan_numerics", "plan");
  if (!profile_out) return null_argument("qrt_plan_numerics", "profile_out");
  *profile_out = qrt::numerics_profile_name(plan->impl->graph->numerics);
  return ok();
}

qrt_status qrt_model_set_numerics(qrt_model_t* model, const char* profile) {
  return guarded([&] {
    if (!model) return null_argument("qrt_model_set_numerics", "model");
    if (!profile) return null_argument("qrt_model_set_numerics", "profile");
    const std::optional<qrt::NumericsProfile> parsed = qrt::parse_numerics_profile(profile);
    if (!parsed) {
      return fail(QRT_INVALID_ARGUMENT, std::string("qrt_model_set_numerics: unknown numerics profile '") + profile +
                                            "' (profiles: " + qrt::numerics_profile_names() + ")");
    }
    auto g = std::make_shared<qrt::Graph>(*model->impl->graph);  // plans keep theirs
    g->numerics = *parsed;
    model->impl->graph = std::move(g);
    return ok();
  });
}

qrt_status qrt_model_numerics(const qrt_model_t* model, const char** profile_out) {
  if (!model) return null_argument("qrt_model_numerics", "model");
  if (!profile_out) return null_argument("qrt_model_numerics", "profile_out");
  *profile_out = qrt::numerics_profile_name(model->impl->graph->numerics);
  return ok();
}

qrt_status qrt_plan_num_ops(const qrt_plan_t* plan, size_t* count_out) {
  return guarded([&] {
    if (!plan) return null_argument("qrt_plan_num_ops", "plan");
    if (!count_out) return null_argument("qrt_plan_num_ops", "count_out");
    *count_out = plan->impl->graph->ops.size();
    return ok();
  });
}

qrt_status qrt_plan_op_info(const qrt_plan_t* plan, size_t index, qrt_op_info* info_out) {
  return guarded([&] {
    if (!plan) return null_argument("qrt_plan_op_info", "plan");
    if (!info_out) return null_argument("qrt_plan_op_info", "info_out");
    const qrt::runtime::Plan& p = *plan->impl;
    if (index >= p.graph->ops.size()) {
      return fail(QRT_INVALID_ARGUMENT, "qrt_plan_op_info: op index " + std::to_string(index) +
                                            " is out of range (the plan has " + std::to_string(p.graph->ops.size()) +
                                            " ops)");
    }
    info_out->op = qrt::op_info(p.graph->ops[index].kind).name;
    info_out->kernel = p.kernel_names[index].c_str();
    info_out->reason = p.kernels[index] ? "" : p.why_not[index].c_str();
    info_out->ops = p.op_ops[index];
    return ok();
  });
}

qrt_status qrt_plan_op_selection(const qrt_plan_t* plan, size_t index, const char** selection_out) {
  return guarded([&] {
    if (!plan) return null_argument("qrt_plan_op_selection", "plan");
    if (!selection_out) return null_argument("qrt_plan_op_selection", "selection_out");
    const qrt::runtime::Plan& p = *plan->impl;
    if (index >= p.graph->ops.size()) {
      return fail(QRT_INVALID_ARGUMENT, "qrt_plan_op_selection: op index " + std::to_string(index) +
                                            " is out of range (the plan has " + std::to_string(p.graph->ops.size()) +
                                            " ops)");
    }
    *selection_out = p.selection[index].c_str();
    return ok();
  });
}

qrt_status qrt_plan_memory_info(const qrt_plan_t* plan, qrt_memory_info* info_out) {
  return guarded([&] {
    if (!plan) return null_argument("qrt_plan_memory_info", "plan");
    if (!info_out) return null_argument("qrt_plan_memory_info", "info_out");
    const qrt::runtime::MemoryPlan& m = plan->impl->memory;
    info_out->arena_bytes = m.arena_bytes;
    info_out->naive_bytes = m.naive_bytes;
    info_out->in_place = m.in_place;
    return ok();
  });
}

qrt_status qrt_plan_num_specializations(const qrt_plan_t* plan, size_t* count_out) {
  return guarded([&] {
    if (!plan) return null_argument("qrt_plan_num_specializations", "plan");
    if (!count_out) return null_argument("qrt_plan_num_specializations", "count_out");
    *count_out = qrt::runtime::specialization_count(*plan->impl);
    return ok();
  });
}

qrt_status qrt_plan_weight_memory(const qrt_plan_t* plan, qrt_weight_memory* weight_out) {
  return guarded([&] {
    if (!plan) return null_argument("qrt_plan_weight_memory", "plan");
    if (!weight_out) return null_argument("qrt_plan_weight_memory", "weight_out");
    if (weight_out->struct_size < sizeof(size_t) || weight_out->struct_size > sizeof(qrt_weight_memory)) {
      return fail(QRT_INVALID_ARGUMENT, "qrt_plan_weight_memory: weight_out->struct_size " +
                                            std::to_string(weight_out->struct_size) + " is not the size of a qrt_weight_memory (" +
                                            std::to_string(sizeof(qrt_weight_memory)) + ")");
    }
    const qrt::runtime::Plan& p = *plan->impl;
    qrt_weight_memory w{};
    w.struct_size = weight_out->struct_size;
    w.constant_bytes = qrt::runtime::graph_constant_bytes(*p.graph);
    for (const qrt::Op& op : p.graph->ops) {
      if (op.kind != qrt::OpKind::kConstant) continue;
      const qrt::ElementType& e = p.graph->values[size_t(op.results[0])].type.element;
      w.parameter_bytes += e.scales.size() * sizeof(double) + e.zero_points.size() * sizeof(int64_t);
    }
    for (const auto& k : p.kernels) w.kernel_bytes += k ? k->owned_bytes() : 0;
    std::memcpy(weight_out, &w, weight_out->struct_size);
    return ok();
  });
}

void qrt_plan_destroy(qrt_plan_t* plan) { delete plan; }

qrt_status qrt_context_create(const qrt_plan_t* plan, qrt_context_t** context_out) {
  return guarded([&] {
    if (!plan) return null_argument("qrt_context_create", "plan");
    if (!context_out) return null_argument("qrt_context_create", "context_out");
    *context_out = new qrt_context_s{qrt::runtime::Context(plan->impl.get())};
    return ok();
  });
}

void qrt_context_destroy(qrt_context_t* context) { delete context; }

qrt_status qrt_context_set_input(qrt_context_t* context, size_t index, qrt_dtype dtype,
                                 size_t rank, const int64_t* dims, const void* data, size_t bytes) {
  return guarded([&] {
    if (!context) return null_argument("qrt_context_set_input", "context");
    qrt::Status s = context->impl.set_input(index, dtype, rank, dims, data, bytes);
    return s.is_ok() ? ok() : fail(s);
  });
}

qrt_status qrt_context_bind_input(qrt_context_t* context, size_t index, qrt_dtype dtype, size_t rank,
                                  const int64_t* dims, const void* data, size_t bytes) {
  return guarded([&] {
    if (!context) return null_argument("qrt_context_bind_input", "context");
    qrt::Status s = context->impl.bind_input(index, dtype, rank, dims, data, bytes);
    return s.is_ok() ? ok() : fail(s);
  });
}

qrt_status qrt_context_bind_output(qrt_context_t* context, size_t index, void* data, size_t bytes) {
  return guarded([&] {
    if (!context) return null_argument("qrt_context_bind_output", "context");
    qrt::Status s = context->impl.bind_output(index, data, bytes);
    return s.is_ok() ? ok() : fail(s);
  });
}

qrt_status qrt_context_op_time(const qrt_context_t* context, size_t index, uint64_t* ns_out) {
  return guarded([&] {
    if (!context) return null_argument("qrt_context_op_time", "context");
    if (!ns_out) return null_argument("qrt_context_op_time", "ns_out");
    if (index >= context->impl.op_ns.size()) {
      return fail(QRT_INVALID_ARGUMENT, "qrt_context_op_time: op index " + std::to_string(index) +
                                            " is out of range (the plan has " +
                                            std::to_string(context->impl.op_ns.size()) + " ops)");
    }
    *ns_out = context->impl.op_ns[index];
    return ok();
  });
}

qrt_status qrt_context_run(qrt_context_t* context) {
  return guarded([&] {
    if (!context) return null_argument("qrt_context_run", "context");
    qrt::Status s = context->impl.run();
    return s.is_ok() ? ok() : fail(s);
  });
}

qrt_status qrt_context_output(const qrt_context_t* context, size_t index, qrt_tensor_view* view_out) {
  if (!context) return null_argument("qrt_context_output", "context");
  if (!view_out) return null_argument("qrt_context_output", "view_out");
  const auto& impl = context->impl;
  if (!impl.has_outputs) {
    return fail(QRT_INVALID_ARGUMENT, "qrt_context_output: no successful run yet");
  }
  if (index >= impl.outputs.size()) {
    return fail(QRT_INVALID_ARGUMENT, "qrt_context_output: index " + std::to_string(index) +
                                          " is out of range (the model has " +
                                          std::to_string(impl.outputs.size()) + " outputs)");
  }
  const qrt::Tensor& t = impl.outputs[index];
  view_out->dtype = qrt::runtime::dtype_of(t.type.element);
  view_out->rank = t.type.dims.size();
  view_out->dims = t.type.dims.data();
  view_out->data = t.bytes();
  view_out->bytes = t.byte_size();
  return ok();
}

}  // extern "C"
