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

/// An immutable compiled plan. Shares the graph with the model it came from.
struct Plan {
  std::shared_ptr<const Graph> graph;
  std::vector<TensorInfoStorage> inputs;
  std::vector<TensorInfoStorage> outputs;
  qrt_backend backend = QRT_BACKEND_REF;
  /// Per op of `graph`: the generated kernel that runs it (JIT backend), or none.
  std::vector<std::unique_ptr<jit::OpKernel>> kernels;
  /// Per op: the values its kernel reads, in order — the op's operands, except for the root of
  /// a fused element-wise region, which reads the region's inputs.
  std::vector<std::vector<int>> operands;
  /// Per op: the root op of the fused region that computes it, or -1.
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
};

/// Compiles `model` with `options`.
/// The backend a plan asking for `requested` runs: QRT_BACKEND_DEFAULT made concrete (qrt.h:
/// native kernels where the host has a SIMD level with them, else LLVM's where built), any
/// other value itself.
qrt_backend resolved_backend(qrt_backend requested);

Result<std::unique_ptr<Plan>> create_plan(const Model& model, const qrt_plan_options& options);

/// Per-run state of one thread's use of a plan: its thread pool and arena, bound inputs and
/// outputs, the last outputs and per-op timings.
struct Context {
  const Plan* plan = nullptr;
  std::vector<Tensor> inputs;      ///< copies (set_input) or views of caller buffers (bind_input)
  std::vector<bool> input_set;
  std::vector<Tensor> outputs;     ///< views into the arena (static shapes) or owned tensors
  bool has_outputs = false;
  std::unique_ptr<ThreadPool> pool;
  jit::AlignedBytes arena;
  std::vector<Tensor> arena_views;  ///< per value: its typed view into the arena (if planned)
  std::vector<std::pair<void*, size_t>> bound_outputs;  ///< per output: caller buffer or null
  std::vector<uint64_t> op_ns;     ///< per op: nanoseconds in the last run (0 if skipped)
  std::vector<const Tensor*> value_at;  ///< run scratch: where each value is (no allocation per run)
  std::vector<const Tensor*> operand_scratch;  ///< run scratch: one op's operands
  /// Run scratch of dynamic shapes (run_dynamic): per op, the buffer its kernel wrote last,
  /// kept while the op's result shape stays the same (runs on one input shape allocate none).
  std::vector<Tensor> dynamic_results;

  /// Creates the pool and the arena for `plan`.
  explicit Context(const Plan* plan);
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
  /// Whether value `v` is an op's result of no elements (the memory plan places no bytes for it).
  bool empty_result(size_t v) const;
};

/// Evaluates constants and plans the arena of a plan whose kernels are chosen (and whose
/// static_shapes is set).
Status prepare_execution(Plan& plan);

}  // namespace qrt::runtime
