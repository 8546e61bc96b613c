// qrt — kernel selection (see select.h) and the family of each op.
#include "jit/ops/select.h"

#include <algorithm>

#include "ir/nn_params.h"
#include "ir/ops.h"
#include "jit/kernel_list.h"
#include "jit/ops/conv_transpose_kernels.h"
#include "jit/ops/arg_reduce_kernels.h"
#include "jit/ops/cumsum_mod_kernels.h"
#include "jit/ops/scatter_kernels.h"
#include "jit/ops/per_axis_kernels.h"
#include "jit/ops/profile_kernels.h"
#include "jit/ops/stablehlo_kernels.h"
#include "jit/ops/wide_input_kernels.h"
#include "jit/ref/reference.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

const OpFamily* family_for(const Graph& graph, const Op& op) {
  const Type& x = graph.values[size_t(op.operands[0])].type;
  if (is_float_unary_function(op.kind)) return &ew_program_family();
  switch (op.kind) {
    case OpKind::kQCast:
    case OpKind::kDCast: return &convert_family();
    case OpKind::kMatmul:
      if (x.element.is_quant()) return &qgemm_matmul_family();
      if (dynamic_matmul_applies(graph, op)) return &dynamic_matmul_family();
      return weight_only_matmul_applies(graph, op) ? &weight_only_matmul_family() : &f32_matmul_family();
    case OpKind::kConv2d: {
      if (x.element.is_float()) return &f32_conv_family();
      // Depthwise (NHWC): one input channel per group, as many groups as filters. Other grouped
      // convolutions (a channel multiplier, NCHW depthwise) run as GEMMs per run of groups.
      const Type& f = graph.values[size_t(op.operands[1])].type;
      auto w = conv2d_window(op, f.dims);
      if (!w.is_ok() || f.rank() != 4) return &qgemm_conv_family();  // its prepare() reports the error
      const int64_t per_group = w->nchw ? f.dims[1] : f.dims[3];
      const bool depthwise = w->groups != 1 && per_group == 1 && f.dims[0] == w->groups && !w->nchw;
      return depthwise ? &depthwise_family() : &qgemm_conv_family();
    }
    case OpKind::kAdd:
    case OpKind::kMul: return x.element.is_quant() ? &elementwise_family() : &ew_program_family();
    case OpKind::kRequantize: return &elementwise_family();
    case OpKind::kRelu:
    case OpKind::kClamp: return x.element.is_quant() ? &clamp_family() : &ew_program_family();
    case OpKind::kLogistic:
    case OpKind::kSub:
    case OpKind::kDiv:
    case OpKind::kPow:
    case OpKind::kMax:
    case OpKind::kMin:
    case OpKind::kEqual:
    case OpKind::kLess:
    case OpKind::kGreater:
    case OpKind::kNot:
    case OpKind::kWhere:
    case OpKind::kNeg: return &ew_program_family();
    case OpKind::kCast: return half_float_cast_applies(graph, op) ? &half_cast_family() : &ew_program_family();
    case OpKind::kSoftmax:
    case OpKind::kLayerNorm:
    case OpKind::kDynamicQuantize: return &row_family();
    case OpKind::kTranspose: return interleave_planes_applies(graph, op) ? &planes_family() : &layout_family();
    case OpKind::kPad:
    case OpKind::kReshape:
    case OpKind::kSCast:
    case OpKind::kConcat:
    case OpKind::kResize:
    case OpKind::kGather:
    case OpKind::kGatherElements:
    case OpKind::kSlice: return &layout_family();
    case OpKind::kMaxPool2d:
    case OpKind::kAvgPool2d: return x.element.is_float() ? &f32_pool_family() : &pool_family();
    case OpKind::kMean: return x.element.is_float() ? &f32_pool_family() : &pool_family();
    case OpKind::kReduceSum:
    case OpKind::kReduceMax:
    case OpKind::kReduceMin:
    case OpKind::kReduceProd: return x.element.is_float() ? &f32_pool_family() : nullptr;
    default: return nullptr;
  }
}

namespace {

// The best level in `allowed` whose backend runs `family`'s kernel for `op`.
Result<KernelChoice> select_in_family(const Graph& graph, const Op& op, const OpFamily* family, const IsaSet& allowed,
                                      Generator generator);

// Whether `op` under graph's numerics profile can run on its family's kernels with the
// profile's requantization in the kernels' epilogue (GemmTraits::q31_epilogue, and the dot4
// depthwise rows where dw_rows_why_not allows it): tflite (double rounding) convolutions and
// matmuls on the GEMM and depthwise families.
const OpFamily* profile_epilogue_family(const Graph& graph, const Op& op) {
  if (graph.numerics != NumericsProfile::kTflite || op.operands.empty()) return nullptr;
  if (op.kind != OpKind::kConv2d && op.kind != OpKind::kMatmul) return nullptr;
  const OpFamily* family = family_for(graph, op);
  return family == &qgemm_conv_family() || family == &qgemm_matmul_family() || family == &depthwise_family() ? family
                                                                                                          : nullptr;
}

// Whether `op` is a quantized element-wise op or conversion whose family is not the
// element-wise programs', so that a program may take it where that family refuses.
bool program_fallback(const Graph& graph, const Op& op) {
  if (op.operands.empty() || family_for(graph, op) == &ew_program_family()) return false;
  // Programs take per-tensor quantization only (one scale and zero point per value).
  auto per_axis = [&](int v) { return graph.values[size_t(v)].type.element.kind == ElementKind::kUniformPerAxis; };
  if (std::any_of(op.operands.begin(), op.operands.end(), per_axis) || std::any_of(op.results.begin(), op.results.end(), per_axis)) {
    return false;
  }
  switch (op.kind) {
    case OpKind::kAdd:
    case OpKind::kMul:
    case OpKind::kRequantize:
    case OpKind::kRelu:
    case OpKind::kClamp:
    case OpKind::kQCast:
    case OpKind::kDCast: return true;
    default: return false;
  }
}

}  // namespace

Result<KernelChoice> select_kernel(const Graph& graph, const Op& op, const IsaSet& allowed, Generator generator) {
  // A convolution of several batch groups has no kernel of its own: the expand-batch-groups
  // pass (default pipeline) splits it into one convolution per group. Left whole (another
  // pipeline, or a form the pass keeps), the reference computes it.
  if (op.kind == OpKind::kConv2d) {
    const Attribute* b = op.attr("batch_groups");
    if (b && b->kind == Attribute::Kind::kInt && b->i != 1) {
      KernelChoice whole;
      whole.why_not = "batch_groups " + std::to_string(b->i) +
                      " (the expand-batch-groups pass splits such a convolution into one per batch group)";
      return whole;
    }
  }
  // StableHLO's quantized ops: dequantize, the float op's kernel, quantize (stablehlo_kernels.h).
  std::string stablehlo_why;
  if (graph.numerics == NumericsProfile::kStableHlo && !profile_formula(graph, op).empty()) {
    QRT_ASSIGN_OR_RETURN(KernelChoice stablehlo, select_stablehlo_kernel(graph, op, allowed, generator));
    if (stablehlo.kernel) return stablehlo;
    stablehlo_why = stablehlo.why_not;
  }
  // A quantized transposed convolution runs as a stride-1 convolution of a staged input,
  // chosen like any other (its profile's requantization included).
  if (op.kind == OpKind::kConvTranspose2d && stablehlo_why.empty()) {
    return select_conv_transpose_kernel(graph, op, allowed, generator);
  }
  // 16-bit activations: two byte halves on the 8-bit kernels, under every integer profile.
  if (wide_input_applies(graph, op)) return select_wide_input_kernel(graph, op, allowed, generator);
  KernelChoice choice;
  // Kernels implement the default formulas; where the graph's numerics profile redefines the
  // op, the reference computes it.
  if (std::string formula = profile_formula(graph, op); !formula.empty()) {
    std::unique_ptr<OpKernel> portable = make_profile_binary_kernel(graph, op, allowed, generator);
    if (!portable) portable = make_profile_activation_kernel(graph, op);
    if (!portable) portable = make_profile_mean_kernel(graph, op);
    if (!portable) portable = make_profile_avg_pool_kernel(graph, op);
    if (!portable) portable = make_profile_cast_kernel(graph, op, allowed, generator);
    if (!portable) portable = make_per_axis_convert_kernel(graph, op);
    if (portable) {
      choice.kernel = std::move(portable);
      choice.chain = std::string("any ISA: chosen (portable C++, numerics profile ") + formula + ")";
      choice.isa = allowed.by_preference().front();  // portable C++ runs at the best allowed level
      return choice;
    }
    // A contraction whose kernel computes the profile's requantization in its epilogue, at the
    // best allowed level with a kernel of its kind only (a lower level's kernel loses to that
    // level's int32 path; avx512-amx has GEMM tiles but takes depthwise from avx512-vnni).
    const OpFamily* epilogue_family = profile_epilogue_family(graph, op);
    auto fused_at = [&](const IsaSet& level) -> Result<KernelChoice> {
      QRT_ASSIGN_OR_RETURN(KernelChoice fused, select_in_family(graph, op, epilogue_family, level, generator));
      if (fused.kernel) fused.chain += " (numerics profile " + formula + ": TFLite's requantization in the kernel's epilogue)";
      return fused;
    };
    IsaSet best;
    if (epilogue_family) {
      for (Isa isa : allowed.by_preference()) {
        if (!kernel_list_backend(epilogue_family->kind_of(op), isa, generator)) continue;
        best.add(isa);
        break;
      }
      QRT_ASSIGN_OR_RETURN(KernelChoice fused, fused_at(best));
      if (fused.kernel) return fused;
    }
    // A contraction the profile redefines only in its requantization: the kernels compute its
    // int32 accumulators, portable C++ the profile's requantization.
    if (std::optional<std::shared_ptr<Graph>> acc = accumulator_graph(graph, op)) {
      const Op& inner = (*acc)->ops.back();
      QRT_ASSIGN_OR_RETURN(KernelChoice contraction, select_kernel(**acc, inner, allowed, generator));
      // Where a lower level computes the accumulators (avx512-amx declines k below one 64-byte
      // step to avx512-vnni), that level's tiles with the requantization in their epilogue
      // beat its int32 results plus a separate requantization pass.
      if (contraction.kernel && epilogue_family && !best.has(contraction.isa)) {
        IsaSet level;
        level.add(contraction.isa);
        QRT_ASSIGN_OR_RETURN(KernelChoice fused, fused_at(level));
        if (fused.kernel) {
          fused.chain = contraction.chain + "; at " + isa_name(contraction.isa) + ": " + fused.chain;
          return fused;
        }
      }
      if (contraction.kernel) {
        contraction.kernel = make_profile_requant_kernel(graph, op, *acc, std::move(contraction.kernel), allowed, generator);
        return contraction;
      }
      formula += " (and no kernel computes its accumulators: " + contraction.why_not + ")";
    }
    choice.why_not = "numerics profile " + formula + "; the kernels implement the default formula" +
                     (stablehlo_why.empty() ? "" : " (dequantize-op-quantize on the float kernels: " + stablehlo_why + ")");
    return choice;
  }
  QRT_ASSIGN_OR_RETURN(choice,
                       select_in_family(graph, op, op.operands.empty() ? nullptr : family_for(graph, op), allowed, generator));
  // A contraction whose 16-bit result no kernel's epilogue writes: the kernels compute its
  // int32 accumulators, portable C++ the default requantization.
  if (!choice.kernel) {
    if (std::optional<std::shared_ptr<Graph>> acc = wide_result_accumulator_graph(graph, op)) {
      const Op& inner = (*acc)->ops.back();
      QRT_ASSIGN_OR_RETURN(KernelChoice contraction, select_kernel(**acc, inner, allowed, generator));
      if (contraction.kernel) {
        contraction.kernel = make_profile_requant_kernel(graph, op, *acc, std::move(contraction.kernel), allowed, generator);
        return contraction;
      }
      choice.why_not += " (and no kernel computes its accumulators: " + contraction.why_not + ")";
    }
  }
  // Pools and means the pool kernels do not take (16-bit values, means over other axes), and
  // per-axis conversions: the reference's formulas in portable C++.
  if (!choice.kernel) {
    std::unique_ptr<OpKernel> pool = make_portable_pool_kernel(graph, op);
    if (!pool) pool = make_per_axis_convert_kernel(graph, op);
    if (!pool) pool = make_arg_reduce_kernel(graph, op);
    if (!pool) pool = make_cumsum_mod_kernel(graph, op);
    if (!pool) pool = make_topk_kernel(graph, op);
    if (!pool) pool = make_scatter_nd_kernel(graph, op);
    if (!pool) pool = make_gather_nd_kernel(graph, op);
    if (pool) {
      choice.chain = "the vector kernels: " + choice.why_not + "; any ISA: chosen (portable C++)";
      choice.kernel = std::move(pool);
      choice.isa = allowed.by_preference().front();
      choice.why_not.clear();
      return choice;
    }
  }
  // Quantized element-wise ops and conversions the integer kernels do not take (16-bit
  // storage, mixed widths) run as element-wise programs of the same formulas.
  if (!choice.kernel && program_fallback(graph, op)) {
    QRT_ASSIGN_OR_RETURN(KernelChoice program, select_in_family(graph, op, &ew_program_family(), allowed, generator));
    if (program.kernel) {
      program.chain = "the integer kernel: " + choice.why_not + "; as an element-wise program: " + program.chain;
      return program;
    }
    choice.why_not += "; no element-wise program either: " + program.why_not;
  }
  return choice;
}

namespace {

Result<KernelChoice> select_in_family(const Graph& graph, const Op& op, const OpFamily* family, const IsaSet& allowed,
                                      Generator generator) {
  KernelChoice choice;
  if (!family) {
    choice.why_not = "no generated kernel for this op";
    return choice;
  }
  QRT_ASSIGN_OR_RETURN(std::unique_ptr<PreparedOp> prepared, family->prepare(graph, op, &choice.why_not));
  if (!prepared) return choice;
  if (family->kind() == KernelOp::kCount) {
    // Plain C++ that runs on every host: no backend to ask.
    QRT_ASSIGN_OR_RETURN(choice.kernel, family->create(*prepared, nullptr));
    choice.chain = std::string("any ISA: chosen (portable C++ ") + family->name() + ")";
    return choice;
  }
  std::string refusals;
  for (Isa isa : allowed.by_preference()) {
    auto say = [&](const std::string& what) {
      choice.chain += (choice.chain.empty() ? "" : "; ") + std::string(isa_name(isa)) + ": " + what;
    };
    const Backend* backend = kernel_list_backend(family->kind_of(op), isa, generator);
    if (!backend) {
      say(std::string("no ") + (generator == Generator::kLlvm ? "LLVM " : "") + kernel_op_name(family->kind_of(op)) +
          " kernel at this level");
      continue;
    }
    if (!backend->available()) {
      say("the " + std::string(backend->name()) + " backend cannot run here");
      continue;
    }
    const std::string why = family->check(*prepared, backend);
    if (!why.empty()) {
      say(why);
      refusals += (refusals.empty() ? "" : "; ") + std::string(isa_name(isa)) + ": " + why;
      continue;
    }
    auto kernel = family->create_in_plan(*prepared, backend, generator);
    if (!kernel.is_ok()) {
      if (kernel.status().code() != ErrorCode::kUnsupported) return kernel.status();
      say(kernel.status().message());
      refusals += (refusals.empty() ? "" : "; ") + std::string(isa_name(isa)) + ": " + kernel.status().message();
      continue;
    }
    say("chosen");
    choice.kernel = std::move(kernel).value();
    choice.isa = isa;
    return choice;
  }
  choice.why_not = refusals.empty() ? "no backend at the allowed ISA levels (" + allowed.to_string() + ")" : refusals;
  return choice;
}

// The value of `value` when it is computable at plan time: a constant, or an op whose operands
// all are (e.g. the reshape or transpose importers put between a filter and its conv).
std::unique_ptr<Tensor> fold_constant(const Graph& graph, int value, int depth) {
  const int producer = graph.values[size_t(value)].producer;
  if (producer < 0 || depth > 8) return nullptr;
  const Op& op = graph.ops[size_t(producer)];
  if (op.results.size() != 1) return nullptr;
  std::vector<std::unique_ptr<Tensor>> operands;
  std::vector<const Tensor*> ptrs;
  for (int v : op.operands) {
    operands.push_back(fold_constant(graph, v, depth + 1));
    if (!operands.back()) return nullptr;
    ptrs.push_back(operands.back().get());
  }
  auto t = evaluate_op_reference(graph, op, ptrs);
  if (!t.is_ok()) return nullptr;
  return std::make_unique<Tensor>(std::move(t).value());
}

}  // namespace

std::unique_ptr<Tensor> constant_operand(const Graph& graph, int value) { return fold_constant(graph, value, 0); }

Result<std::vector<int64_t>> OpKernel::checked_result_dims(const Op& op, std::vector<int64_t> dims) const {
  bool ok = dims.size() == result_type_.dims.size();
  for (size_t d = 0; ok && d < dims.size(); ++d) ok = result_type_.dims[d] < 0 || result_type_.dims[d] == dims[d];
  if (!ok) {
    return Status::error_at(op.loc, std::string("'") + op_info(op.kind).name + "' op computed result shape [" +
                                        dims_to_string(dims) + "] contradicts its type " + result_type_.to_string());
  }
  return dims;
}

Result<Tensor> OpKernel::run(const std::vector<const Tensor*>& operands) const {
  QRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, result_dims(operands));
  Type t = result_type_;
  t.dims = std::move(dims);
  Tensor y = Tensor::zeros(t);
  QRT_RETURN_IF_ERROR(run_into(operands, y, serial()));
  return y;
}

std::optional<bool> activations_read_unsigned(const IsaSet& allowed, Generator generator) {
  const std::vector<Isa> levels = allowed.by_preference();
  if (levels.empty()) return std::nullopt;
  // The LLVM templates' tiles multiply u8 quads (GemmPath::kDot4) at every level.
  if (generator == Generator::kLlvm) return true;
  switch (levels.front()) {
    case Isa::kScalar:  // the pair-sum twin reads u8 rows; the widened one copies either
    case Isa::kAvx2:
    case Isa::kAvx2Vnni:
    case Isa::kAvx512Vnni:
    case Isa::kNeon:      // smlal on u8 rows widened to u16
    case Isa::kNeonI8mm:  // usmmla: u8 rows
      return true;
    case Isa::kNeonDot:  // sdot: s8 quads
      return false;
    default:
      return std::nullopt;
  }
}

}  // namespace qrt::jit
