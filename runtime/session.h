// qrt — the C++ objects behind the C API handles: model, plan, execution context.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "include/qrt.h"
#include "ir/graph.h"
#include "jit/core/aligned_bytes.h"
#include "jit/ops/select.h"
#include "runtime/memory_plan.h"
#include "runtime/split_choice.h"
#include "runtime/thread_pool.h"
#include "jit/core/tensor.h"

namespace qrt::runtime {

/// Everything qrt_tensor_info points into, owned by the model.
struct TensorInfoStorage {
  std::string name;
  std::string type;
  Type ir_type;
  qrt_dtype dtype = QRT_DTYPE_INVALID;
  std::vector<int64_t> dims;
  qrt_quant_kind quant = QRT_QUANT_NONE;
  std::vector<double> scales;
  std::vector<int64_t> zero_points;

  /// Fills the C view.
  void fill(qrt_tensor_info* info) const;
};

/// A loaded, verified graph plus its input/output descriptions.
struct Model {
  std::shared_ptr<const Graph> graph;
  std::vector<TensorInfoStorage> inputs;
  std::vector<TensorInfoStorage> outputs;
};

/// Loads a model from MLIR text or an ONNX protobuf (by `name`'s extension, else by content);
/// `name` is used in diagnostics.
/// `max_memory` (0: default_memory_budget()) bounds the bytes and the constants they claim.
Result<std::unique_ptr<Model>> load_model(const std::string& text, const std::string& name, size_t max_memory = 0);
/// Reads a file and loads it (a .qrt container is mapped; its weights are not counted).
Result<std::unique_ptr<Model>> load_model_file(const std::string& path, size_t max_memory = 0);

/// The memory budget when the caller names none: the host's physical memory.
size_t default_memory_budget();
/// Bytes held by the graph's dense constants (views into a mapped file included).
size_t graph_constant_bytes(const Graph& graph);

/// The memory layout qrt uses for an element type.
qrt_dtype dtype_of(const ElementType& element);

/// What compiling a lowered graph into a plan needs of the plan's options (create_plan keeps
/// them so that a dynamic-shape plan can compile its static specializations later).
struct PlanSettings {
  qrt_backend backend = QRT_BACKEND_REF;
  jit::IsaSet isas;
  jit::Generator generator = jit::Generator::kNative;
  bool generated = false;       ///< kernels are generated (JIT or LLVM backend)
  unsigned flags = 0;           ///< QRT_PLAN_* bits
  size_t threads = 1;
  size_t budget = 0;            ///< the memory budget in bytes
};

struct ShapeSpecializations;

/// An immutable compiled plan. Shares the graph with the model it came from.
struct Plan {
  std::shared_ptr<const Graph> graph;
  std::vector<TensorInfoStorage> inputs;
  std::vector<TensorInfoStorage> outputs;
  qrt_backend backend = QRT_BACKEND_REF;
  /// Per op of `graph`: the generated kernel that runs it (JIT backend), or none.
  std::vector<std::unique_ptr<jit::OpKernel>> kernels;
  /// Per op: the values its kernel reads, in order — the op's operands, except for the root of
  /// a fused element-wise region, which reads the region's inputs, and a row-fused consumer
  /// (jit/ops/row_fusion.h), which reads its producer's input.
  std::vector<std::vector<int>> operands;
  /// Per op: the root op of the fused region (or the row-fused consumer) that computes it, or -1.
  std::vector<int> fused_into;
  /// Per op: why the reference runs it (empty where a kernel does).
  std::vector<std::string> why_not;
  /// Per op: true when nothing reads its results at run time (they only feed prepacked
  /// kernel constants), so runs skip it.
  std::vector<bool> skip;
  /// Per op: the kernel's describe(), or "reference".
  std::vector<std::string> kernel_names;
  /// Per op: what each allowed ISA level said when the kernel was chosen.
  std::vector<std::string> selection;
  /// The ISA levels the plan's kernels may use.
  jit::IsaSet isas;
  /// Per op: arithmetic operations per run (matmul/conv with static shapes), else 0.
  std::vector<uint64_t> op_ops;
  /// Threads each context's pool runs (the caller included).
  size_t threads = 1;
  /// Every value has a static shape (set by create_plan): runs use the arena below and kernels
  /// may fuse (else the dynamic executor).
  bool static_shapes = false;
  /// Per value: its bytes when a qrt.constant op produces it (computed once, here).
  std::vector<std::unique_ptr<Tensor>> constants;
  /// Per value: where it lives in a context's arena (static shapes only).
  MemoryPlan memory;
  /// The options it was compiled with.
  PlanSettings settings;
  /// Dynamic-shape plans: the static plans compiled for input shapes that runs met
  /// (shape_specialization.cpp); shared by every context of the plan, guarded inside.
  std::shared_ptr<ShapeSpecializations> specializations;
};

/// Compiles `model` with `options`.
/// The backend a plan asking for `requested` runs: QRT_BACKEND_DEFAULT made concrete (qrt.h:
/// native kernels where the host has a SIMD level with them, else LLVM's where built), any
/// other value itself.
qrt_backend resolved_backend(qrt_backend requested);

Result<std::unique_ptr<Plan>> create_plan(const Model& model, const qrt_plan_options& options);

/// Chooses the kernels of `plan.graph` (lowered: passes run, activations re-stored; `own_graph`
/// is the same graph, which the plan alone holds), fuses element-wise regions where every shape
/// is static, evaluates constants and plans the arena, with `plan.settings`.
Status compile_lowered_graph(Plan& plan, Graph& own_graph);

/// OK when a plan holding `constants` bytes of constants (twice: the graph's copy and the
/// kernels' prepared one) and an arena of `arena` bytes fits in `budget`, else the error
/// qrt_plan_create reports (QRT_OUT_OF_MEMORY).
Status check_memory_budget(size_t constants, size_t arena, size_t budget);

/// A context's run on a static plan specialized for its inputs' shapes (shape_specialization.cpp).
struct SpecializedRun;
/// An empty cache of specializations, for a dynamic-shape plan.
std::shared_ptr<ShapeSpecializations> new_shape_specializations();
/// How many input shapes `plan` runs on a static specialization (0 for static plans).
size_t specialization_count(const Plan& plan);

/// Per-run state of one thread's use of a plan: its thread pool and arena, bound inputs and
/// outputs, the last outputs and per-op timings.
struct Context {
  const Plan* plan = nullptr;
  std::vector<Tensor> inputs;      ///< copies (set_input) or views of caller buffers (bind_input)
  std::vector<bool> input_set;
  std::vector<Tensor> outputs;     ///< views into the arena, a specialization's arena or the walk's buffers
  bool has_outputs = false;
  std::shared_ptr<ThreadPool> pool;
  jit::AlignedBytes arena;
  std::vector<Tensor> arena_views;  ///< per value: its typed view into the arena (if planned)
  std::vector<std::pair<void*, size_t>> bound_outputs;  ///< per output: caller buffer or null
  std::vector<uint64_t> op_ns;     ///< per op: nanoseconds in the last run (0 if skipped)
  std::vector<const Tensor*> value_at;  ///< run scratch: where each value is (no allocation per run)
  /// Static plans, built by the first run: where each value but the graph inputs is (a constant,
  /// an arena view or an empty result's view; null for the inputs), and per op whether it has
  /// anything to compute (a result with elements). Neither changes from run to run; working
  /// them out again per value and op cost digits_cnn 4% of its 2.7 µs run (performance.md).
  std::vector<const Tensor*> static_value_at;
  std::vector<uint8_t> op_computes;
  std::vector<const Tensor*> operand_scratch;  ///< run scratch: one op's operands
  /// Static plans on several threads: per op, the pool or the calling thread, by measurement
  /// (split_choice.h); empty (every op on the pool) otherwise or under QRT_PLAN_FIXED_SPLIT.
  SplitChoice split_choice;
  /// Run scratch of dynamic shapes (run_dynamic): per op, the buffer its kernel wrote last,
  /// kept while the op's result shape stays the same (runs on one input shape allocate none).
  std::vector<Tensor> dynamic_results;
  /// Dynamic-shape plans: the input shapes of the last run, and per value the dims it had there
  /// (recorded while the context may still specialize; empty where not seen).
  std::vector<std::vector<int64_t>> last_input_dims;
  std::vector<std::vector<int64_t>> seen_dims;
  /// The static plans this context has run for input shapes, with their own arenas.
  std::vector<std::unique_ptr<SpecializedRun>> specialized;

  /// Creates the pool and the arena for `plan`.
  explicit Context(const Plan* plan);
  /// The same, running on `pool` (a specialized plan's context shares its owner's threads).
  Context(const Plan* plan, std::shared_ptr<ThreadPool> pool);
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  ~Context();
  /// Validates and copies one input.
  Status set_input(size_t index, qrt_dtype dtype, size_t rank, const int64_t* dims,
                   const void* data, size_t bytes);
  /// Validates one input and keeps a view of the caller's buffer (no copy).
  Status bind_input(size_t index, qrt_dtype dtype, size_t rank, const int64_t* dims, const void* data,
                    size_t bytes);
  /// Binds a caller buffer that each successful run fills with output `index`.
  Status bind_output(size_t index, void* data, size_t bytes);
  /// Runs the plan.
  Status run();

 private:
  Result<Tensor> checked_input(size_t index, qrt_dtype dtype, size_t rank, const int64_t* dims, const void* data,
                               size_t bytes) const;
  Status run_static();
  Status run_dynamic();
  /// Runs the static plan specialized for the inputs' shapes, where there is one (true),
  /// compiling it when the last run had the same shapes.
  Result<bool> run_specialized();
  /// Whether dynamic runs record the dims of every value (the context may still specialize).
  bool records_shapes() const;
  /// After a successful dynamic run: compiles (or takes from the plan) the static plan for
  /// these input shapes when the run before had them too.
  void maybe_specialize();
  /// Whether value `v` is an op's result of no elements (the memory plan places no bytes for it).
  bool empty_result(size_t v) const;
};

/// A context's run on a static plan specialized for its inputs' shapes (shape_specialization.cpp).
struct SpecializedRun {
  std::vector<std::vector<int64_t>> input_dims;
  std::shared_ptr<const Plan> plan;
  std::unique_ptr<Context> context;  ///< runs `plan` on the owner's thread pool
};

/// Evaluates constants and plans the arena of a plan whose kernels are chosen (and whose
/// static_shapes is set).
Status prepare_execution(Plan& plan);

}  // namespace qrt::runtime
