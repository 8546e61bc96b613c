// qrt — running a plan: constants evaluated once, an arena planned by liveness, each op on
// its generated kernel (spread over the context's thread pool) or on the reference.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "ir/ops.h"
#include "jit/ref/reference.h"
#include "runtime/session.h"

namespace qrt::runtime {

namespace {

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

Status runtime_error(const Status& s) { return s.code() == ErrorCode::kGeneric ? s.with_code(ErrorCode::kRuntime) : s; }

}  // namespace

Status prepare_execution(Plan& plan) {
  const Graph& g = *plan.graph;
  plan.constants.clear();
  plan.constants.resize(g.values.size());
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    if (op.kind != OpKind::kConstant || plan.skip[o]) continue;
    QRT_ASSIGN_OR_RETURN(Tensor t, evaluate_op_reference(g, op, {}));
    plan.constants[size_t(op.results[0])] = std::make_unique<Tensor>(std::move(t));
  }
  plan.op_ops.assign(g.ops.size(), 0);
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    const Type& y = g.values[size_t(op.results[0])].type;
    const Type& w = op.operands.size() > 1 ? g.values[size_t(op.operands[1])].type : y;
    if (!y.has_static_shape() || !w.has_static_shape()) continue;
    if (op.kind == OpKind::kMatmul) plan.op_ops[o] = 2 * uint64_t(y.num_elements()) * uint64_t(w.dims[w.rank() - 2]);
    // Filters are [O, ...] with the per-group window in the other three dimensions (an empty
    // filter of no output channels counts none: fuzz_c_api -seed=62 divided by its O = 0).
    if (op.kind == OpKind::kConv2d && w.rank() > 0 && w.dims[0] > 0) {
      plan.op_ops[o] = 2 * uint64_t(y.num_elements()) * uint64_t(w.num_elements() / w.dims[0]);
    }
    // Transposed: every input pixel meets every filter tap of its group (the scatter form's
    // products; those the pads crop included).
    if (op.kind == OpKind::kConvTranspose2d) {
      const Type& x = g.values[size_t(op.operands[0])].type;
      if (x.has_static_shape() && x.rank() == 4 && x.dims[3] > 0) {
        plan.op_ops[o] = 2 * uint64_t(x.num_elements() / x.dims[3]) * uint64_t(w.num_elements());
      }
    }
  }
  // A fused op's work is its root's (a row-fused 1x1 convolution's GEMM runs in its consumer).
  for (size_t o = 0; o < g.ops.size(); ++o) {
    if (plan.fused_into[o] < 0) continue;
    plan.op_ops[size_t(plan.fused_into[o])] += plan.op_ops[o];
    plan.op_ops[o] = 0;
  }
  if (!plan.static_shapes) return Status::ok();  // the dynamic executor allocates per op (create_plan decided)

  // Liveness: from the producing op to the last reader; graph outputs to the end.
  std::vector<PlannedValue> values(g.values.size());
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    if (plan.skip[o] || op.kind == OpKind::kConstant) continue;
    for (int r : op.results) {
      values[size_t(r)].bytes = size_t(g.values[size_t(r)].type.num_elements()) * element_byte_size(g.values[size_t(r)].type.element);
      values[size_t(r)].first = values[size_t(r)].last = int(o);
    }
    for (int v : plan.operands[o]) values[size_t(v)].last = int(o);
  }
  for (int v : g.outputs) values[size_t(v)].last = int(g.ops.size());
  // In place: an element-wise kernel's result takes the slot of an operand dying at that op.
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    if (plan.skip[o] || !plan.kernels[o] || op.results.size() != 1) continue;
    PlannedValue& result = values[size_t(op.results[0])];
    const std::vector<int>& operands = plan.operands[o];
    for (size_t i = 0; i < operands.size(); ++i) {
      const PlannedValue& operand = values[size_t(operands[i])];
      if (operand.bytes == result.bytes && operand.bytes > 0 && operand.last == int(o) &&
          plan.kernels[o]->can_overwrite_operand(i)) {
        result.in_place_of = operands[i];
        break;
      }
    }
  }
  plan.memory = plan_memory(values);
  QRT_ASSERT(memory_plan_is_valid(values, plan.memory));
  return Status::ok();
}

Context::Context(const Plan* p) : Context(p, std::make_shared<ThreadPool>(p->threads)) {}

Context::Context(const Plan* p, std::shared_ptr<ThreadPool> threads) : plan(p), pool(std::move(threads)) {
  inputs.resize(p->inputs.size());
  input_set.assign(p->inputs.size(), false);
  bound_outputs.assign(p->outputs.size(), {nullptr, 0});
  op_ns.assign(p->graph->ops.size(), 0);
  if (!p->static_shapes) return;
  if (p->threads > 1 && !(p->settings.flags & QRT_PLAN_FIXED_SPLIT)) split_choice.reset(p->graph->ops.size());
  arena = jit::AlignedBytes(p->memory.arena_bytes);
  arena_views.resize(p->graph->values.size());
  for (size_t v = 0; v < arena_views.size(); ++v) {
    if (p->memory.offsets[v] >= 0) {
      arena_views[v] = Tensor::view_of(p->graph->values[v].type, arena.data() + p->memory.offsets[v]);
    } else if (empty_result(v)) {
      // No bytes to place: a view of none, so that its kernel and readers still see its shape.
      static uint8_t nothing = 0;
      arena_views[v] = Tensor::view_of(p->graph->values[v].type, &nothing);
    }
  }
}

bool Context::empty_result(size_t v) const {
  const Value& value = plan->graph->values[v];
  return value.producer >= 0 && !plan->constants[v] && value.type.has_static_shape() && value.type.num_elements() == 0;
}

Status Context::run() {
  for (size_t i = 0; i < input_set.size(); ++i) {
    if (!input_set[i]) {
      return Status::error("input '" + plan->inputs[i].name + "' (index " + std::to_string(i) +
                           ") has not been set")
          .with_code(ErrorCode::kInvalidArgument);
    }
  }
  has_outputs = false;
  std::fill(op_ns.begin(), op_ns.end(), 0);
  if (plan->static_shapes) {
    QRT_RETURN_IF_ERROR(run_static());
  } else {
    QRT_ASSIGN_OR_RETURN(const bool specialized_run, run_specialized());
    if (!specialized_run) {
      QRT_RETURN_IF_ERROR(run_dynamic());
      maybe_specialize();
    }
  }
  // Bound output buffers are written only after a successful run.
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (bound_outputs[i].first && outputs[i].byte_size() > 0) {
      std::memcpy(bound_outputs[i].first, outputs[i].bytes(), outputs[i].byte_size());
    }
  }
  has_outputs = true;
  return Status::ok();
}

Status Context::run_static() {
  const Graph& g = *plan->graph;
  if (static_value_at.size() != g.values.size()) {
    static_value_at.assign(g.values.size(), nullptr);
    for (size_t v = 0; v < g.values.size(); ++v) {
      if (plan->constants[v]) static_value_at[v] = plan->constants[v].get();
      if (plan->memory.offsets[v] >= 0 || empty_result(v)) static_value_at[v] = &arena_views[v];
    }
    // An op whose results are all empty (a zero in their shapes) has nothing to compute; its
    // kernel is not asked to split zero rows into tasks.
    op_computes.assign(g.ops.size(), 0);
    for (size_t o = 0; o < g.ops.size(); ++o) {
      const std::vector<int>& results = g.ops[o].results;
      op_computes[o] = !std::all_of(results.begin(), results.end(),
                                    [&](int r) { return arena_views[size_t(r)].num_elements() == 0; });
    }
  }
  // Where each value's bytes are for this run (scratch kept by the context: steady-state runs
  // allocate nothing here).
  std::vector<const Tensor*>& value = value_at;
  value.assign(static_value_at.begin(), static_value_at.end());
  // The inputs where nothing else was placed (a constant or an arena view takes precedence).
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (!static_value_at[size_t(g.inputs[i])]) value[size_t(g.inputs[i])] = &inputs[i];
  }
  std::vector<const Tensor*>& operands = operand_scratch;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    if (plan->skip[o] || op.kind == OpKind::kConstant) continue;
    const uint64_t start = now_ns();
    operands.clear();
    for (int v : plan->operands[o]) operands.push_back(value[size_t(v)]);
    if (!op_computes[o] && plan->kernels[o]) {
      op_ns[o] = now_ns() - start;
      continue;
    }
    if (const jit::OpKernel* k = plan->kernels[o].get()) {
      Status s = Status::ok();
      jit::Parallel& threads = split_choice.on_pool(o) ? static_cast<jit::Parallel&>(*pool) : jit::serial();
      if (op.results.size() == 1) {
        s = k->run_into(operands, arena_views[size_t(op.results[0])], threads);
      } else {
        std::vector<Tensor*> results;
        for (int r : op.results) results.push_back(&arena_views[size_t(r)]);
        s = k->run_results_into(operands, results, threads);
      }
      if (!s.is_ok()) return runtime_error(s);
    } else {
      auto results = evaluate_op_results(g, op, operands);
      if (!results.is_ok()) return runtime_error(results.status());
      for (size_t r = 0; r < op.results.size(); ++r) {
        Tensor& out = arena_views[size_t(op.results[r])];
        const Tensor& got = (*results)[r];
        QRT_ASSERT(got.type.dims == out.type.dims);  // static shapes were verified
        if (got.byte_size() > 0) std::memcpy(out.bytes(), got.bytes(), got.byte_size());  // (an empty result has no pointer)
      }
    }
    op_ns[o] = now_ns() - start;
    if (plan->kernels[o]) split_choice.record(o, op_ns[o]);
  }
  split_choice.end_run();
  outputs.resize(g.outputs.size());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Tensor* t = value[size_t(g.outputs[i])];
    // The view is kept from the last run where it still points at the value. An empty value
    // has no bytes (nullptr), as has a view never set: the type tells them apart.
    if (outputs[i].view != t->bytes() || outputs[i].type != t->type) {
      outputs[i] = Tensor::view_of(t->type, const_cast<uint8_t*>(t->bytes()));
    }
  }
  return Status::ok();
}

Status Context::run_dynamic() {
  // Shapes are known only as ops run: the reference's graph walk allocates each result, and
  // kernels still run on the pool.
  const Plan& p = *plan;
  // The dims every value takes, for a static plan of these input shapes (shape_specialization.cpp).
  const bool record = records_shapes();
  // Every run reads the same values, so each run overwrites the last one's dims in place.
  if (record && seen_dims.size() != p.graph->values.size()) seen_dims.assign(p.graph->values.size(), {});
  auto run_kernel = [this, &p, record](size_t o, const std::vector<const Tensor*>& operands) -> std::optional<Result<Tensor>> {
    if (record) {
      const std::vector<int>& read = p.graph->ops[o].operands;
      for (size_t i = 0; i < read.size() && i < operands.size(); ++i) {
        if (!p.graph->values[size_t(read[i])].type.has_static_shape()) seen_dims[size_t(read[i])] = operands[i]->type.dims;
      }
    }
    if (p.skip[o]) return Result<Tensor>(Tensor());  // feeds only prepacked constants
    // Ops with several results take the graph walk's own path (it stores every result).
    if (!p.kernels[o] || p.graph->ops[o].results.size() != 1) return std::nullopt;
    const uint64_t start = now_ns();
    auto dims = p.kernels[o]->result_dims(operands);
    if (!dims.is_ok()) return Result<Tensor>(dims.status());
    // The operands' run-time shapes can give a result the declared type's static dimensions
    // contradict (a reshape to [?, 16] of 4096 values feeding a matmul typed [1, 1]); the
    // reference refuses that, and so do the kernels.
    const Op& op = p.graph->ops[o];
    if (Status s = check_op_result_shape(op, p.graph->values[size_t(op.results[0])].type, *dims); !s.is_ok()) {
      return Result<Tensor>(s);
    }
    if (record && !p.graph->values[size_t(op.results[0])].type.has_static_shape()) seen_dims[size_t(op.results[0])] = *dims;
    // The op's buffer from the last run where the shape is unchanged (kernels write every
    // element, as they do into the static plans' arena); the graph walk gets a view of it,
    // valid until the next run, as the outputs' views are.
    // (A rank-0 result's dims equal those of a buffer never made: its bytes must be there too.)
    Tensor& y = dynamic_results[o];
    const Type& declared = p.kernels[o]->result_type();
    if (y.type.dims != *dims || !(y.type.element == declared.element) || y.type.is_tensor != declared.is_tensor ||
        y.storage.size() != y.byte_size()) {
      Type t = declared;
      t.dims = *dims;
      y = Tensor::zeros(t);
    }
    // An empty result has nothing to compute (as in run_static).
    Status s = y.num_elements() == 0 ? Status::ok() : p.kernels[o]->run_into(operands, y, *pool);
    op_ns[o] = now_ns() - start;
    if (!s.is_ok()) return Result<Tensor>(s);
    return Result<Tensor>(Tensor::view_of(y.type, y.bytes()));
  };
  dynamic_results.resize(p.graph->ops.size());
  std::vector<Tensor> in;
  // Views of the bound or copied inputs: the graph walk only reads them.
  for (const Tensor& t : inputs) in.push_back(Tensor::view_of(t.type, const_cast<uint8_t*>(t.bytes())));
  auto result = run_graph(*p.graph, std::move(in), run_kernel);
  if (!result.is_ok()) return runtime_error(result.status());
  outputs = std::move(result).value();
  return Status::ok();
}

}  // namespace qrt::runtime
