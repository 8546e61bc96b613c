// qrt — model loading, plan creation and execution behind the C API (see session.h).
#include "runtime/session.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "importers/onnx_importer.h"
#include "ir/binary_format.h"
#include "importers/tflite_importer.h"
#include "ir/text_format.h"
#include "jit/core/host_info.h"
#include "jit/llvm/llvm_backend.h"
#include "jit/ops/ew_fusion.h"
#include "jit/ops/row_fusion.h"
#include "jit/ref/reference.h"
#include "passes/activation_storage.h"
#include "passes/dead_code.h"
#include "passes/pipeline.h"

namespace qrt::runtime {

qrt_dtype dtype_of(const ElementType& e) {
  if (e.is_float()) {
    switch (e.float_kind) {
      case FloatKind::kF16: return QRT_DTYPE_F16;
      case FloatKind::kBF16: return QRT_DTYPE_BF16;
      case FloatKind::kF32: return QRT_DTYPE_F32;
      case FloatKind::kF64: return QRT_DTYPE_F64;
      default: return QRT_DTYPE_INVALID;  // f8 and tf32 are IR-only
    }
  }
  if (e.is_integer() && e.int_width == 1) return QRT_DTYPE_BOOL;
  if (!e.is_integer() && !e.is_uniform()) return QRT_DTYPE_INVALID;
  const bool is_unsigned = e.is_integer() ? e.int_sign == Signedness::kUnsigned : !e.storage.is_signed;
  switch (element_byte_size(e)) {
    case 1: return is_unsigned ? QRT_DTYPE_U8 : QRT_DTYPE_I8;
    case 2: return is_unsigned ? QRT_DTYPE_U16 : QRT_DTYPE_I16;
    case 4: return is_unsigned ? QRT_DTYPE_U32 : QRT_DTYPE_I32;
    default: return is_unsigned ? QRT_DTYPE_U64 : QRT_DTYPE_I64;
  }
}

void TensorInfoStorage::fill(qrt_tensor_info* info) const {
  info->name = name.c_str();
  info->type = type.c_str();
  info->dtype = dtype;
  info->rank = dims.size();
  info->dims = dims.data();
  info->quant = quant;
  info->quant_axis = quant == QRT_QUANT_PER_AXIS ? ir_type.element.axis : -1;
  info->quant_count = scales.size();
  info->scales = scales.data();
  info->zero_points = zero_points.data();
  const bool q = ir_type.element.is_uniform();
  info->storage_min = q ? ir_type.element.storage.min : 0;
  info->storage_max = q ? ir_type.element.storage.max : 0;
}

namespace {

TensorInfoStorage describe(const Value& v, std::string name) {
  TensorInfoStorage s;
  s.name = std::move(name);
  s.type = v.type.to_string();
  s.ir_type = v.type;
  s.dtype = dtype_of(v.type.element);
  s.dims = v.type.dims;
  if (v.type.element.is_uniform()) {
    s.quant = v.type.element.kind == ElementKind::kUniformPerAxis ? QRT_QUANT_PER_AXIS
                                                                  : QRT_QUANT_PER_TENSOR;
    s.scales = v.type.element.scales;
    s.zero_points = v.type.element.zero_points;
  }
  return s;
}


bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}


// The quant dialect's placeholder types, which passes resolve and plans refuse.
bool is_placeholder(const ElementType& e) {
  return e.kind == ElementKind::kCalibrated || e.kind == ElementKind::kAny;
}

// Floats (or quant types expressed in them) that qrt holds in the IR but plans do not run:
// the f8 kinds and tf32.
bool is_ir_only_float(const ElementType& e) {
  const bool has_float = e.is_float() || (e.kind != ElementKind::kInteger && e.has_expressed);
  return has_float && !float_kind_runs(e.float_kind);
}

Result<std::unique_ptr<Model>> describe_model(Graph g) {
  // Every plan copies the graph, and every pass copies it again: share the weights.
  share_dense_attributes(g);
  auto model = std::make_unique<Model>();
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.values[size_t(g.inputs[i])];
    // !quant.calibrated / !quant.any arguments are valid MLIR: such models load, print and
    // go through passes; only planning refuses them, naming the value (create_plan).
    if (dtype_of(v.type.element) == QRT_DTYPE_INVALID && !is_placeholder(v.type.element) &&
        !is_ir_only_float(v.type.element)) {
      return Status::error("input '%" + v.name + "' has type " + v.type.to_string() +
                           ", which has no memory layout (only float, integer and "
                           "!quant.uniform tensors can be graph inputs)")
          .with_code(ErrorCode::kUnsupported);
    }
    model->inputs.push_back(describe(v, v.name));
  }
  std::set<std::string> used;
  for (const auto& in : model->inputs) used.insert(in.name);
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Value& v = g.values[size_t(g.outputs[i])];
    if (dtype_of(v.type.element) == QRT_DTYPE_INVALID && !is_placeholder(v.type.element) &&
        !is_ir_only_float(v.type.element)) {
      return Status::error("output " + std::to_string(i) + " has type " + v.type.to_string() +
                           ", which has no memory layout")
          .with_code(ErrorCode::kUnsupported);
    }
    std::string out_name = v.name;
    if (out_name.empty() || !used.insert(out_name).second) {
      out_name = "output" + std::to_string(i);
      used.insert(out_name);
    }
    model->outputs.push_back(describe(v, out_name));
  }
  model->graph = std::make_shared<const Graph>(std::move(g));
  return model;
}

// A read-only mapping of a whole file, unmapped when the last weight view lets go.
struct Mapping {
  const uint8_t* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data) munmap(const_cast<uint8_t*>(data), size);
  }
};

Result<std::shared_ptr<Mapping>> map_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(path + ": cannot open file: " + std::strerror(errno)).with_code(ErrorCode::kIo);
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0) {
    close(fd);
    return Status::error(path + ": cannot map an empty or unreadable file").with_code(ErrorCode::kIo);
  }
  void* p = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return Status::error(path + ": mmap failed: " + std::strerror(errno)).with_code(ErrorCode::kIo);
  auto m = std::make_shared<Mapping>();
  m->data = static_cast<const uint8_t*>(p);
  m->size = size_t(st.st_size);
  return m;
}

// An op can be skipped when every reader of its results either is a kernel that does not read
// that operand (prepacked weights) or is skipped itself; graph outputs are always computed.
void mark_skippable_ops(Plan& plan) {
  const Graph& g = *plan.graph;
  plan.skip.assign(g.ops.size(), false);
  std::vector<bool> needed(g.values.size(), false);
  for (int v : g.outputs) needed[size_t(v)] = true;
  for (size_t o = g.ops.size(); o-- > 0;) {
    const Op& op = g.ops[o];
    bool any_needed = false;
    for (int r : op.results) any_needed = any_needed || needed[size_t(r)];
    plan.skip[o] = !any_needed;
    if (!any_needed) continue;
    const std::vector<int>& operands = plan.operands[o];
    for (size_t i = 0; i < operands.size(); ++i) {
      if (!plan.kernels[o] || plan.kernels[o]->reads_operand(i)) needed[size_t(operands[i])] = true;
    }
  }
}

// Empties the bytes of each constant that nothing reads at run time and whose every use ends in
// a kernel that holds its own prepared copy (packed, repacked, dequantized), directly or through
// ops that never run (a transpose folded into a convolution's packed filters): the plan then
// keeps the weights once, in the form its kernels read (qrt_plan_weight_memory counts them as
// kernel bytes). A constant a kernel reads in place (a weight-only view), or that any op without
// such a copy reads, keeps its bytes. Static-shape plans only: the dynamic executor walks the
// graph. Ops are in topological order, so a backward walk sees every reader before its operands.
void drop_copied_constants(const Plan& plan, Graph& g) {
  std::vector<std::vector<std::pair<size_t, size_t>>> readers(g.values.size());  // (op, operand index)
  for (size_t o = 0; o < g.ops.size(); ++o) {
    if (plan.fused_into[o] >= 0) continue;  // never runs; its region's root reads the inputs
    const std::vector<int>& operands = plan.skip[o] ? g.ops[o].operands : plan.operands[o];
    for (size_t i = 0; i < operands.size(); ++i) readers[size_t(operands[i])].emplace_back(o, i);
  }
  // copied[v]: every use of value v (produced by an op that never runs) ends in kernels' copies.
  std::vector<char> copied(g.values.size(), 0);
  for (size_t o = g.ops.size(); o-- > 0;) {
    if (!plan.skip[o]) continue;
    Op& op = g.ops[o];
    for (int v : op.results) {
      const std::vector<std::pair<size_t, size_t>>& r = readers[size_t(v)];
      copied[size_t(v)] = !r.empty() && std::all_of(r.begin(), r.end(), [&](const std::pair<size_t, size_t>& reader) {
        const size_t ro = reader.first;
        const std::vector<int>& results = g.ops[ro].results;
        if (plan.skip[ro]) return std::all_of(results.begin(), results.end(), [&](int x) { return copied[size_t(x)] != 0; });
        // `reader.second` indexes the values the kernel reads (plan.operands): a fused region's
        // inputs (its kernel holds no copies), a row-fused pair's constants (both hold theirs).
        const jit::OpKernel* k = plan.kernels[ro].get();
        return k && k->holds_operand_copy(reader.second);
      });
    }
    if (op.kind != OpKind::kConstant || op.results.size() != 1 || !copied[size_t(op.results[0])]) continue;
    for (auto& [name, value] : op.attrs) {
      if (name != "value" || value.kind != Attribute::Kind::kDense) continue;
      value.dense.bytes = std::vector<uint8_t>();  // frees them (clear() would keep the capacity)
      value.dense.view_owner.reset();
      value.dense.view_data = nullptr;
      value.dense.view_size = 0;
    }
  }
}

}  // namespace

size_t default_memory_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? size_t(pages) * size_t(page) : size_t(16) << 30;
}

size_t graph_constant_bytes(const Graph& graph) {
  size_t bytes = 0;
  for (const Op& op : graph.ops) {
    if (op.kind != OpKind::kConstant) continue;
    if (const Attribute* v = op.attr("value"); v && v->kind == Attribute::Kind::kDense) bytes += v->dense.size();
  }
  return bytes;
}

namespace {

// A model's constants over the budget: they were read from the bytes, so this refuses what an
// importer built, before any plan copies it.
Status check_model_budget(const Graph& g, const std::string& name, size_t budget, bool mapped) {
  const size_t held = mapped ? 0 : graph_constant_bytes(g);
  if (held <= budget) return Status::ok();
  return Status::error(name + ": the model's constants hold " + std::to_string(held) + " bytes, more than the memory budget of " +
                       std::to_string(budget) + " bytes (qrt_load_options.max_memory, qrun --max-memory)")
      .with_code(ErrorCode::kOutOfMemory);
}

}  // namespace

Result<std::unique_ptr<Model>> load_model(const std::string& bytes, const std::string& name, size_t max_memory) {
  const size_t budget = max_memory ? max_memory : default_memory_budget();
  if (bytes.size() > budget) {
    return Status::error(name + ": the model's " + std::to_string(bytes.size()) + " bytes exceed the memory budget of " +
                         std::to_string(budget) + " bytes (qrt_load_options.max_memory, qrun --max-memory)")
        .with_code(ErrorCode::kOutOfMemory);
  }
  if (looks_like_binary_graph(bytes.data(), bytes.size())) {
    // A copy that the weight views can share.
    auto owned = std::make_shared<std::string>(bytes);
    QRT_ASSIGN_OR_RETURN(Graph g, read_binary_graph(owned, reinterpret_cast<const uint8_t*>(owned->data()),
                                                    owned->size(), name));
    QRT_RETURN_IF_ERROR(check_model_budget(g, name, budget, false));
    return describe_model(std::move(g));
  }
  // The format comes from the extension, else from the first bytes.
  const bool known_text = ends_with(name, ".mlir");
  const bool is_tflite = ends_with(name, ".tflite") ||
                         (!known_text && importers::looks_like_tflite(bytes.data(), bytes.size()));
  const bool is_onnx = !is_tflite && (ends_with(name, ".onnx") ||
                                      (!known_text && importers::looks_like_onnx(bytes.data(), bytes.size())));
  QRT_ASSIGN_OR_RETURN(Graph g, is_tflite ? importers::import_tflite(bytes.data(), bytes.size(), name)
                                : is_onnx ? importers::import_onnx(bytes.data(), bytes.size(), name)
                                          : parse_graph(bytes, name, budget));
  QRT_RETURN_IF_ERROR(check_model_budget(g, name, budget, false));
  return describe_model(std::move(g));
}


Result<std::unique_ptr<Model>> load_model_file(const std::string& path, size_t max_memory) {
  if (ends_with(path, ".qrt")) {
    // Mapped, not read: the weights are used in place.
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<Mapping> m, map_file(path));
    QRT_ASSIGN_OR_RETURN(Graph g, read_binary_graph(m, m->data, m->size, path));
    return describe_model(std::move(g));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::error(path + ": cannot open file: " + std::strerror(errno))
        .with_code(ErrorCode::kIo);
  }
  // One read into a buffer of the file's size; a stream without a size (a pipe) is copied
  // through a string stream.
  std::string bytes;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const size_t budget = max_memory ? max_memory : default_memory_budget();
  if (size >= 0 && size_t(size) > budget) {
    return Status::error(path + ": the file's " + std::to_string(size) + " bytes exceed the memory budget of " +
                         std::to_string(budget) + " bytes (qrt_load_options.max_memory, qrun --max-memory)")
        .with_code(ErrorCode::kOutOfMemory);
  }
  if (size >= 0) {
    in.seekg(0, std::ios::beg);
    bytes.resize(size_t(size));
    in.read(bytes.data(), size);
    if (in.gcount() != size) return Status::error(path + ": read error").with_code(ErrorCode::kIo);
  } else {
    in.clear();
    std::ostringstream buffer;
    buffer << in.rdbuf();
    bytes = std::move(buffer).str();
  }
  if (in.bad()) return Status::error(path + ": read error").with_code(ErrorCode::kIo);
  return load_model(bytes, path, max_memory);
}

qrt_backend resolved_backend(qrt_backend requested) {
  if (requested != QRT_BACKEND_DEFAULT) return requested;
  const bool native_simd = jit::host_best_isa() != jit::Isa::kScalar;
  const jit::Backend* llvm = jit::llvm_backend(jit::Isa::kScalar);
  if (!native_simd && jit::llvm_kernel_templates_built() && llvm && llvm->available()) return QRT_BACKEND_LLVM;
  return QRT_BACKEND_JIT;
}

Status check_memory_budget(size_t constants, size_t arena, size_t budget) {
  const size_t need = (constants > SIZE_MAX / 4 ? SIZE_MAX / 2 : 2 * constants) + std::min(arena, SIZE_MAX / 2);
  if (need <= budget) return Status::ok();
  return Status::error("the plan needs at least " + std::to_string(need) + " bytes (2 x " + std::to_string(constants) +
                       " bytes of constants, " + (arena ? std::to_string(arena) + " bytes of arena" : "before its arena") +
                       "), more than the memory budget of " + std::to_string(budget) +
                       " bytes (qrt_plan_options.max_memory, qrun --max-memory)")
      .with_code(ErrorCode::kOutOfMemory);
}

Status compile_lowered_graph(Plan& plan, Graph& own_graph) {
  const PlanSettings& settings = plan.settings;
  plan.backend = settings.backend;
  plan.isas = settings.isas;
  plan.threads = settings.threads;
  plan.selection.assign(plan.graph->ops.size(), "");
  plan.kernels.resize(plan.graph->ops.size());
  plan.why_not.assign(plan.graph->ops.size(), "the reference backend was chosen");
  if (settings.generated) {
    for (size_t o = 0; o < plan.graph->ops.size(); ++o) {
      QRT_ASSIGN_OR_RETURN(jit::KernelChoice choice,
                           jit::select_kernel(*plan.graph, plan.graph->ops[o], settings.isas, settings.generator));
      plan.kernels[o] = std::move(choice.kernel);
      plan.selection[o] = std::move(choice.chain);
      plan.why_not[o] = std::move(choice.why_not);  // the reference runs ops without a kernel
    }
  }
  plan.operands.clear();
  for (const Op& op : plan.graph->ops) plan.operands.push_back(op.operands);
  plan.fused_into.assign(plan.graph->ops.size(), -1);
  plan.static_shapes = true;
  for (const Value& v : plan.graph->values) plan.static_shapes = plan.static_shapes && v.type.has_static_shape();
  if (settings.generated && plan.static_shapes && !(settings.flags & QRT_PLAN_NO_FUSION)) {
    // Fused element-wise regions: the root runs the region's program on the region's inputs;
    // the other members never run (mark_skippable_ops finds that nothing reads them).
    QRT_ASSIGN_OR_RETURN(std::vector<jit::FusedRegion> regions, jit::fuse_elementwise_regions(*plan.graph, settings.isas, settings.generator));
    for (jit::FusedRegion& r : regions) {
      const size_t root = r.ops.back();
      plan.kernels[root] = std::move(r.kernel);
      plan.operands[root] = r.inputs;
      plan.selection[root] = std::move(r.chain);
      plan.why_not[root].clear();
      for (size_t i = 0; i + 1 < r.ops.size(); ++i) {
        plan.kernels[r.ops[i]].reset();
        plan.fused_into[r.ops[i]] = int(root);
      }
    }
    const bool rows = (settings.flags & QRT_PLAN_ROW_FUSION) != 0;  // 1x1 conv -> depthwise (row_fusion.h)
    for (jit::RowFusion& f : rows ? jit::fuse_row_producers(*plan.graph, plan.kernels, plan.operands, plan.fused_into)
                                  : std::vector<jit::RowFusion>()) {
      plan.kernels[f.consumer] = std::move(f.kernel);
      plan.operands[f.consumer] = std::move(f.operands);
      plan.fused_into[f.producer] = int(f.consumer);
    }
  }
  for (const auto& k : plan.kernels) plan.kernel_names.push_back(k ? k->describe() : "reference");
  mark_skippable_ops(plan);
  if (plan.static_shapes) drop_copied_constants(plan, own_graph);
  for (size_t o = 0; o < plan.graph->ops.size(); ++o) {
    if (plan.fused_into[o] >= 0) {
      plan.kernel_names[o] = "fused into op " + std::to_string(plan.fused_into[o]);
    } else if (plan.skip[o]) {
      plan.kernel_names[o] = "skipped: its result only feeds prepacked weights";
    } else if (plan.graph->ops[o].kind == OpKind::kConstant) {
      plan.kernel_names[o] = "constant: evaluated once, when the plan is made";
    }
  }
  QRT_RETURN_IF_ERROR(prepare_execution(plan));
  QRT_RETURN_IF_ERROR(check_memory_budget(graph_constant_bytes(*plan.graph), plan.memory.arena_bytes, settings.budget));
  return Status::ok();
}

Result<std::unique_ptr<Plan>> create_plan(const Model& model, const qrt_plan_options& options) {
  if (options.backend != QRT_BACKEND_DEFAULT && options.backend != QRT_BACKEND_REF &&
      options.backend != QRT_BACKEND_JIT && options.backend != QRT_BACKEND_LLVM) {
    return Status::error("unknown backend " + std::to_string(int(options.backend)))
        .with_code(ErrorCode::kInvalidArgument);
  }
  if (options.backend == QRT_BACKEND_LLVM && !jit::llvm_kernel_templates_built()) {
    return Status::error("the LLVM backend is not in this build: " +
                         std::string(llvm_info().orc_jit ? "it was configured without the kernel templates (clang++-19)"
                                                         : llvm_info().error))
        .with_code(ErrorCode::kUnsupported);
  }
  jit::IsaSet isas = jit::host_isas();
  if (options.isa) {
    const std::optional<jit::Isa> cap = jit::parse_isa(options.isa);
    if (!cap) {
      return Status::error(std::string("unknown ISA level '") + options.isa + "' (levels: " + jit::isa_names() + ")")
          .with_code(ErrorCode::kInvalidArgument);
    }
    std::string why;
    const std::optional<jit::IsaSet> capped = jit::capped_isas(*cap, &why);
    if (!capped) return Status::error(why).with_code(ErrorCode::kUnsupported);
    isas = *capped;
  }
  if (options.threads > 1024) {
    return Status::error("threads must be at most 1024, got " + std::to_string(options.threads))
        .with_code(ErrorCode::kInvalidArgument);
  }
  // The memory budget (docs/c-api.md): the plan holds the constants twice (its copy of the
  // graph, then their prepacked or evaluated form) and each context one arena. Checked before
  // the passes copy the graph, and again once the arena's size is known, before any context
  // allocates it.
  const size_t budget = options.max_memory ? options.max_memory : default_memory_budget();
  const size_t model_constants = graph_constant_bytes(*model.graph);
  QRT_RETURN_IF_ERROR(check_memory_budget(model_constants, 0, budget));
  auto plan = std::make_unique<Plan>();
  // The pass pipeline (default: explicit pads fold into the quantized convolutions reading
  // them), then dead-op elimination: values nothing returns need not be computed.
  for (const Value& v : model.graph->values) {
    const ElementType& e = v.type.element;
    if (is_ir_only_float(e)) {
      return Status::error("value %" + v.name + " has type " + v.type.to_string() + ": qrt parses, verifies and prints " +
                           float_kind_name(e.float_kind) + ", but plans run only f16, bf16, f32 and f64")
          .with_code(ErrorCode::kUnsupported);
    }
  }
  auto lowered = passes::run_pipeline(*model.graph, options.passes ? options.passes : passes::kDefaultPipeline);
  if (!lowered.is_ok()) return lowered.status();
  Graph lowered_graph = std::move(lowered).value();
  if (options.numerics) {
    const std::optional<NumericsProfile> profile = parse_numerics_profile(options.numerics);
    if (!profile) {
      return Status::error(std::string("unknown numerics profile '") + options.numerics + "' (profiles: " +
                           numerics_profile_names() + ")")
          .with_code(ErrorCode::kInvalidArgument);
    }
    lowered_graph.numerics = *profile;
  }
  const qrt_backend backend = resolved_backend(options.backend);
  const bool generated = backend == QRT_BACKEND_JIT || backend == QRT_BACKEND_LLVM;
  const jit::Generator generator = backend == QRT_BACKEND_LLVM ? jit::Generator::kLlvm : jit::Generator::kNative;
  if (generated) {
    // Internal 8-bit activations in the storage the level's kernels read as it is (neon-dot:
    // i8; u8 elsewhere but avx512-amx, which reads either), so the convolutions read their
    // rows in place instead of through a flipping copy. The values are unchanged; graph
    // inputs and outputs keep their types.
    if (const std::optional<bool> to_unsigned = jit::activations_read_unsigned(isas, generator)) {
      lowered_graph = passes::retype_activation_storage(lowered_graph, *to_unsigned);
      if (Status s = verify_graph(lowered_graph); !s.is_ok()) {
        return Status::error("re-storing activations produced an invalid graph: " + s.to_string());
      }
    }
  }
  // The plan's own copy of the graph: nothing else holds it, so constants only the kernels'
  // prepared copies need can be dropped from it below.
  const std::shared_ptr<Graph> own_graph = std::make_shared<Graph>(std::move(lowered_graph));
  plan->graph = own_graph;
  for (int in : plan->graph->inputs) {
    const Value& v = plan->graph->values[size_t(in)];
    if (is_placeholder(v.type.element)) {
      return Status::error("argument %" + v.name + " has the placeholder type " + v.type.to_string() +
                           ", which cannot run: a graph input needs a float, integer or !quant.uniform type")
          .with_code(ErrorCode::kInvalidArgument);
    }
  }
  for (const Value& v : plan->graph->values) {
    const ElementKind k = v.type.element.kind;
    if (k == ElementKind::kCalibrated || k == ElementKind::kAny) {
      return Status::error("value %" + v.name + " has the placeholder type " + v.type.to_string() +
                           ", which cannot run: resolve it with the 'propagate' pass (e.g. passes \"" +
                           passes::kCalibratePipeline + "\")")
          .with_code(ErrorCode::kInvalidArgument);
    }
  }
  plan->inputs = model.inputs;
  plan->outputs = model.outputs;
  plan->settings = PlanSettings{backend, isas, generator, generated, options.flags,
                                options.threads > 0 ? options.threads : 1, budget};
  QRT_RETURN_IF_ERROR(compile_lowered_graph(*plan, *own_graph));
  if (!plan->static_shapes) plan->specializations = new_shape_specializations();
  return plan;
}

Result<Tensor> Context::checked_input(size_t index, qrt_dtype dtype, size_t rank, const int64_t* dims,
                                      const void* data, size_t bytes) const {
  auto invalid = [](std::string m) { return Status::error(std::move(m)).with_code(ErrorCode::kInvalidArgument); };
  if (index >= plan->inputs.size()) {
    return invalid("input index " + std::to_string(index) + " is out of range (the model has " +
                   std::to_string(plan->inputs.size()) + " inputs)");
  }
  const TensorInfoStorage& info = plan->inputs[index];
  const std::string who = "input '" + info.name + "'";
  if (dtype != info.dtype) {
    return invalid(who + " expects dtype " + qrt_dtype_name(info.dtype) + ", got " +
                   qrt_dtype_name(dtype));
  }
  if (rank != info.dims.size() || (rank > 0 && !dims)) {
    return invalid(who + " expects rank " + std::to_string(info.dims.size()) + " (" + info.type +
                   "), got rank " + std::to_string(rank));
  }
  std::vector<int64_t> shape(dims, dims + rank);
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] < 0 || (info.dims[d] >= 0 && shape[d] != info.dims[d])) {
      return invalid(who + " expects shape " + info.type + ", got [" + dims_to_string(shape) + "]");
    }
  }
  Type type = info.ir_type;
  type.dims = shape;
  Status per_axis = Type::tensor(shape, type.element).verify();
  if (!per_axis.is_ok()) return invalid(who + ": " + per_axis.message());
  Tensor t = Tensor::view_of(type, const_cast<void*>(data));
  const size_t expected = t.byte_size();
  if (bytes != expected || (expected > 0 && !data)) {
    return invalid(who + " of shape [" + dims_to_string(shape) + "] needs " +
                   std::to_string(expected) + " bytes, got " + std::to_string(bytes));
  }
  const ElementType& e = t.type.element;
  if (e.is_uniform()) {
    for (size_t i = 0; i < size_t(t.num_elements()); ++i) {
      const int64_t v = t.int_at(i);
      if (v < e.storage.min || v > e.storage.max) {
        return invalid(who + ": stored value " + std::to_string(v) + " at element " +
                       std::to_string(i) + " is outside the storage bounds [" +
                       std::to_string(e.storage.min) + ", " + std::to_string(e.storage.max) + "]");
      }
    }
  }
  return t;
}

Status Context::set_input(size_t index, qrt_dtype dtype, size_t rank, const int64_t* dims,
                          const void* data, size_t bytes) {
  QRT_ASSIGN_OR_RETURN(Tensor view, checked_input(index, dtype, rank, dims, data, bytes));
  inputs[index] = view.clone();
  input_set[index] = true;
  return Status::ok();
}

Status Context::bind_input(size_t index, qrt_dtype dtype, size_t rank, const int64_t* dims,
                           const void* data, size_t bytes) {
  QRT_ASSIGN_OR_RETURN(Tensor view, checked_input(index, dtype, rank, dims, data, bytes));
  inputs[index] = std::move(view);
  input_set[index] = true;
  return Status::ok();
}

Status Context::bind_output(size_t index, void* data, size_t bytes) {
  auto invalid = [](std::string m) { return Status::error(std::move(m)).with_code(ErrorCode::kInvalidArgument); };
  if (index >= plan->outputs.size()) {
    return invalid("output index " + std::to_string(index) + " is out of range (the model has " +
                   std::to_string(plan->outputs.size()) + " outputs)");
  }
  const TensorInfoStorage& info = plan->outputs[index];
  if (!data) {
    bound_outputs[index] = {nullptr, 0};  // unbinds
    return Status::ok();
  }
  const Type& t = info.ir_type;
  if (!t.has_static_shape()) {
    return invalid("output '" + info.name + "' has a dynamic shape (" + info.type +
                   "): read it with qrt_context_output instead");
  }
  const size_t expected = size_t(t.num_elements()) * element_byte_size(t.element);
  if (bytes != expected) {
    return invalid("output '" + info.name + "' of type " + info.type + " needs " + std::to_string(expected) +
                   " bytes, got " + std::to_string(bytes));
  }
  bound_outputs[index] = {data, bytes};
  return Status::ok();
}

}  // namespace qrt::runtime
