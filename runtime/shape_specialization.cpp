// qrt — static plans for the input shapes a dynamic-shape plan meets.
//
// A plan with a dynamic dimension (an ONNX model's batch `?`) runs on the graph walk
// (run_dynamic): per op, the result's shape is computed, its buffer looked up, and the walk's
// bookkeeping paid; element-wise chains do not fuse and there is no arena. When a context runs
// the same input shapes twice in a row, the shapes its values had are known (every value a run
// reads or returns was seen; no qrt op takes a result shape from operand values, only from
// operand shapes and attributes, so they hold for every run on those input shapes), and the
// lowered graph with those dims is a static graph: it is
// verified and compiled like any static plan (kernels chosen for the shapes, fused regions, an
// arena), and the context's later runs on those shapes take it. The plan keeps the compiled
// specializations for all its contexts (each context has its own arena for them); results are
// the same bytes, since every kernel computes the reference's.
//
// Limits: at most kMaxSpecializations shapes per plan and per context (a model fed ever new
// shapes stays on the graph walk after that); a specialization that fails to verify, compile
// or fit the memory budget left over by the dynamic plan is remembered as failed and not tried
// again. QRT_PLAN_NO_SPECIALIZATION turns them off; the reference backend does not take them.
#include <mutex>

#include "runtime/session.h"

namespace qrt::runtime {

/// Plans specialized per input shapes, shared by the contexts of one dynamic-shape plan.
struct ShapeSpecializations {
  struct Entry {
    std::vector<std::vector<int64_t>> input_dims;
    std::shared_ptr<const Plan> plan;  ///< null: this shape's specialization failed (not tried again)
  };
  std::mutex mutex;
  std::vector<Entry> entries;
};

namespace {

constexpr size_t kMaxSpecializations = 8;

bool may_specialize(const Plan& plan) {
  return !plan.static_shapes && plan.specializations && plan.settings.generated &&
         !(plan.settings.flags & QRT_PLAN_NO_SPECIALIZATION);
}

// The lowered graph of `dynamic` with every value's dims as a run saw them, compiled.
Result<std::unique_ptr<Plan>> compile_specialization(const Plan& dynamic, const std::vector<std::vector<int64_t>>& seen) {
  auto graph = std::make_shared<Graph>(*dynamic.graph);  // the large constants are shared, not copied
  for (size_t v = 0; v < graph->values.size(); ++v) {
    Type& t = graph->values[v].type;
    if (t.has_static_shape()) continue;
    if (v >= seen.size() || seen[v].size() != t.dims.size()) {
      return Status::error("value %" + graph->values[v].name + " of type " + t.to_string() +
                           " was not seen by the run, so its shape is unknown");
    }
    t.dims = seen[v];
  }
  QRT_RETURN_IF_ERROR(verify_graph(*graph));
  auto plan = std::make_unique<Plan>();
  plan->graph = graph;
  plan->inputs = dynamic.inputs;
  plan->outputs = dynamic.outputs;
  for (size_t i = 0; i < plan->inputs.size(); ++i) plan->inputs[i].dims = graph->values[size_t(graph->inputs[i])].type.dims;
  for (size_t i = 0; i < plan->outputs.size(); ++i) plan->outputs[i].dims = graph->values[size_t(graph->outputs[i])].type.dims;
  plan->settings = dynamic.settings;
  // The dynamic plan keeps its constants and their prepared copies: the specialization gets
  // what is left of the budget.
  const size_t held = 2 * graph_constant_bytes(*dynamic.graph);
  plan->settings.budget = dynamic.settings.budget > held ? dynamic.settings.budget - held : 0;
  QRT_RETURN_IF_ERROR(compile_lowered_graph(*plan, *graph));
  if (!plan->static_shapes) return Status::error("the specialized graph still has dynamic shapes");
  return plan;
}

// The plan's specialization for `dims`: compiled on the first request, null where that failed.
std::shared_ptr<const Plan> specialization_for(const Plan& dynamic, const std::vector<std::vector<int64_t>>& dims,
                                               const std::vector<std::vector<int64_t>>& seen) {
  ShapeSpecializations& cache = *dynamic.specializations;
  std::lock_guard<std::mutex> lock(cache.mutex);
  for (const ShapeSpecializations::Entry& e : cache.entries) {
    if (e.input_dims == dims) return e.plan;
  }
  if (cache.entries.size() >= kMaxSpecializations) return nullptr;
  // A failure (a verifier or budget error) leaves this shape on the walk, which already ran it.
  ShapeSpecializations::Entry entry{dims, nullptr};
  Result<std::unique_ptr<Plan>> compiled = compile_specialization(dynamic, seen);
  if (compiled.is_ok()) entry.plan = std::shared_ptr<const Plan>(std::move(compiled).value());
  cache.entries.push_back(entry);
  return entry.plan;
}

std::vector<std::vector<int64_t>> input_dims(const std::vector<Tensor>& inputs) {
  std::vector<std::vector<int64_t>> dims;
  dims.reserve(inputs.size());
  for (const Tensor& t : inputs) dims.push_back(t.type.dims);
  return dims;
}

bool same_dims(const std::vector<std::vector<int64_t>>& dims, const std::vector<Tensor>& inputs) {
  if (dims.size() != inputs.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (dims[i] != inputs[i].type.dims) return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<ShapeSpecializations> new_shape_specializations() { return std::make_shared<ShapeSpecializations>(); }

Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;
Context::~Context() = default;

bool Context::records_shapes() const { return may_specialize(*plan) && specialized.size() < kMaxSpecializations; }

Result<bool> Context::run_specialized() {
  for (const std::unique_ptr<SpecializedRun>& s : specialized) {
    if (!same_dims(s->input_dims, inputs)) continue;
    Context& c = *s->context;
    for (size_t i = 0; i < inputs.size(); ++i) {
      c.inputs[i] = Tensor::view_of(inputs[i].type, const_cast<uint8_t*>(inputs[i].bytes()));
    }
    QRT_RETURN_IF_ERROR(c.run_static());
    // The op list is the dynamic plan's (only dims changed): timings line up op by op.
    op_ns = c.op_ns;
    outputs.resize(c.outputs.size());
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      outputs[i] = Tensor::view_of(c.outputs[i].type, const_cast<uint8_t*>(c.outputs[i].bytes()));
    }
    return true;
  }
  return false;
}

void Context::maybe_specialize() {
  if (!records_shapes()) return;
  if (!same_dims(last_input_dims, inputs)) {
    last_input_dims = input_dims(inputs);  // (a shape run once more keeps its copy)
    return;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::vector<int64_t>& d = seen_dims[size_t(plan->graph->outputs[i])];
    d = outputs[i].type.dims;
  }
  std::shared_ptr<const Plan> p = specialization_for(*plan, last_input_dims, seen_dims);
  if (!p) return;
  auto run = std::make_unique<SpecializedRun>();
  run->input_dims = last_input_dims;
  run->plan = p;
  run->context = std::make_unique<Context>(p.get(), pool);
  run->context->input_set.assign(p->inputs.size(), true);
  // (The walk's buffers stay: this run's outputs are views of them.)
  specialized.push_back(std::move(run));
}

size_t specialization_count(const Plan& plan) {
  if (!plan.specializations) return 0;
  std::lock_guard<std::mutex> lock(plan.specializations->mutex);
  size_t n = 0;
  for (const ShapeSpecializations::Entry& e : plan.specializations->entries) n += e.plan ? 1 : 0;
  return n;
}

}  // namespace qrt::runtime
