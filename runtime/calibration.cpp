// qrt — calibration (see calibration.h).
#include "runtime/calibration.h"

#include <cmath>
#include <map>

#include "jit/ref/reference.h"
#include "passes/calibrate.h"

namespace qrt::runtime {

namespace {

void widen(std::map<int, ValueStats>& stats, int v, const Tensor& t) {
  if (!t.type.element.is_float()) return;
  bool any = false;
  double lo = 0.0, hi = 0.0;
  for (size_t i = 0; i < size_t(t.num_elements()); ++i) {
    const double x = t.float_at(i);
    if (std::isnan(x)) continue;
    lo = any ? std::min(lo, x) : x;
    hi = any ? std::max(hi, x) : x;
    any = true;
  }
  if (!any) return;
  auto [it, fresh] = stats.try_emplace(v);
  it->second.min = fresh ? lo : std::min(it->second.min, lo);
  it->second.max = fresh ? hi : std::max(it->second.max, hi);
}

}  // namespace

Status calibrate_model(Model& model, const qrt_tensor_view* inputs, size_t num_inputs) {
  if (num_inputs != model.inputs.size()) {
    return Status::error("the model has " + std::to_string(model.inputs.size()) + " inputs, got " +
                         std::to_string(num_inputs))
        .with_code(ErrorCode::kInvalidArgument);
  }
  // A reference plan without passes validates the inputs exactly as runs do.
  qrt_plan_options options;
  qrt_plan_options_init(&options);
  options.backend = QRT_BACKEND_REF;
  options.passes = "";
  QRT_ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, create_plan(model, options));
  Context context(plan.get());
  for (size_t i = 0; i < num_inputs; ++i) {
    const qrt_tensor_view& in = inputs[i];
    QRT_RETURN_IF_ERROR(context.bind_input(i, in.dtype, in.rank, in.dims, in.data, in.bytes));
  }
  const Graph& g = *model.graph;
  std::map<int, ValueStats> stats;
  for (size_t i = 0; i < num_inputs; ++i) widen(stats, g.inputs[i], context.inputs[i]);
  auto observe = [&](size_t o, const std::vector<const Tensor*>& operands) -> std::optional<Result<Tensor>> {
    const Op& op = g.ops[o];
    if (op.results.size() != 1) return std::nullopt;
    Result<Tensor> r = evaluate_op_reference(g, op, operands);
    if (r.is_ok()) widen(stats, op.results[0], r.value());
    return r;
  };
  QRT_RETURN_IF_ERROR(run_graph(g, context.inputs, observe).status());
  model.graph = std::make_shared<const Graph>(passes::insert_stats(g, stats));
  return Status::ok();
}

}  // namespace qrt::runtime
