// qrt — weight-only (hybrid) qrt.matmul whose weights stay packed: f32 activations times 8- or
// 4-bit weights, per-layer, per-column or sub-channel (block-wise along K) scales and zero
// points, run by the kWoGemm micro-kernel of the chosen level, which dequantizes the weights in
// registers with the dcast formula and keeps the reference's order (docs/numerics.md), so the
// result is bit-identical to dequantize-then-matmul.
//
// Memory: a weight that is a constant in the [K, N] layout the kernel reads (the matmul's own
// right-hand side) is used in place — the graph's bytes, mapped from a .qrt file or shared with
// the model — so a plan holds the packed weights once, plus f32 scales (and int16 zero points
// where any is non-zero) per block and column. A weight reached through a transpose is folded
// and packed once, at plan time.
#include <algorithm>
#include <cmath>

#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/ops/float_gemm_tasks.h"
#include "jit/ops/float_widening.h"
#include "jit/ops/op_kernel.h"
#include "jit/ops/weight_blocks.h"

namespace qrt::jit {

namespace {

constexpr int64_t kColumnChunk = 64;  // columns per task unit: a multiple of every kernel's step

WeightRound weight_round_of(FloatKind expressed) {
  return expressed == FloatKind::kBF16 ? WeightRound::kBf16 : expressed == FloatKind::kF16 ? WeightRound::kF16 : WeightRound::kNone;
}

// The weight's bytes and parameters in kWoGemm's layout (WoGemmArgs).
struct PackedWeights {
  DenseElements bytes;        // [K, N] stored values: a view of the graph's constant, or owned
  std::vector<float> scales;  // [K / block, N] compute scales
  std::vector<int16_t> zps;   // same layout, empty when every zero point is 0
  int64_t k = 0, n = 0, block = 0, w_stride = 0;
  unsigned bits = 8;
  bool is_signed = true;
  WeightRound round = WeightRound::kNone;  // the weights' expressed type, where narrower than f32
};

}  // namespace

namespace {

// Where `e` puts block boundaries along K and which parameter serves (kb, j); false when the
// weight-only kernel cannot express it (the caller says why).
bool fill_parameters(const ElementType& e, int64_t k, int64_t n, PackedWeights& p, std::string* why) {
  WeightBlocks b;
  if (!weight_blocks(e, k, n, b, why)) return false;
  p.block = b.block;
  p.scales = std::move(b.scales);
  p.zps = std::move(b.zps);
  return true;
}

class WeightOnlyMatmulOpKernel final : public HeldWeightsMatmulKernel {
 public:
  WeightOnlyMatmulOpKernel(const Graph& graph, const Op& op, std::shared_ptr<const PackedWeights> w, std::vector<float> bias,
                           KernelDesc desc, std::shared_ptr<const CompiledKernel> code)
      : HeldWeightsMatmulKernel(graph, op, w->k, w->n, std::move(bias)), w_(std::move(w)), desc_(desc), code_(std::move(code)) {}

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const PackedWeights& w = *w_;
    const int64_t rows = operands[0]->num_elements() / w.k;
    if (rows == 0) return Status::ok();
    // bf16 / f16 activations widen to f32 (exact) and results narrow once at the end: the
    // kernel computes in f32, as the reference does (docs/numerics.md, compute precision).
    thread_local std::vector<float> wide_x, wide_y;
    const float* x = f32_elements(*operands[0], wide_x);
    float* out = f32_destination(y, wide_y);
    // Columns split between tasks (a GEMV has one row: its weights are the work to share),
    // each task all rows of its columns.
    const int64_t chunks = (w.n + kColumnChunk - 1) / kColumnChunk;
    const int64_t tasks = std::min(chunks, worthwhile_tasks(rows * w.k * w.n, kMinF32TaskMacs, parallel));
    const int64_t per_task = (chunks + tasks - 1) / tasks;
    Parallel& par = tasks > 1 ? parallel : serial();
    par.for_each(size_t((chunks + per_task - 1) / per_task), [&](size_t t) {
      const int64_t c0 = int64_t(t) * per_task * kColumnChunk;
      const int64_t c1 = std::min(w.n, c0 + per_task * kColumnChunk);
      WoGemmArgs a{x, w.bytes.data() + (w.bits == 8 ? c0 : c0 / 2), w.scales.data() + c0,
                   w.zps.empty() ? nullptr : w.zps.data() + c0, bias_.empty() ? nullptr : bias_.data() + c0, out + c0,
                   rows, w.k, c1 - c0, w.k, w.w_stride, w.n, w.n, w.block, lo_, hi_};
      call_microkernel(code_->entry(), a, desc_);
    });
    store_f32_results(y, wide_y);
    // A decode step's few rows keep their buffers for the next call; a prefill's many rows give
    // theirs back (its products dwarf one allocation).
    release_large(wide_x);
    release_large(wide_y);
    return Status::ok();
  }

  // A view shares the graph's (mapped or model's) bytes; a folded or owned copy replaces them.
  bool holds_operand_copy(size_t index) const override { return index == 2 || (index == 1 && !w_->bytes.is_view()); }

  std::string describe() const override {
    const PackedWeights& w = *w_;
    return desc_.name() + " (weights packed: " + std::to_string(w.bytes.size()) + " bytes" +
           (w.bytes.is_view() ? " in place" : "") + ", blocks of " + std::to_string(w.block) +
           " along K; k-ordered f32 sums, no FMA)";
  }

 private:
  size_t owned_bytes() const override {
    return (w_->bytes.is_view() ? 0 : w_->bytes.size()) + w_->scales.size() * sizeof(float) + w_->zps.size() * sizeof(int16_t) +
           bias_.size() * sizeof(float);
  }

  std::shared_ptr<const PackedWeights> w_;
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
};

struct PreparedWeightOnly final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  std::shared_ptr<PackedWeights> w;
  std::vector<float> bias;
};

KernelDesc wo_desc(const PackedWeights& w, const Backend* backend) {
  KernelDesc d;
  d.op = KernelOp::kWoGemm;
  d.isa = backend->isa();
  d.generator = backend->generator();
  d.storage_signed = w.is_signed;
  d.weight_bits = uint8_t(w.bits);
  d.weight_zp = !w.zps.empty();
  d.weight_round = w.round;
  return d;
}

class WeightOnlyMatmulFamily final : public OpFamily {
 public:
  const char* name() const override { return "wogemm"; }
  KernelOp kind() const override { return KernelOp::kWoGemm; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const Type& x = graph.values[size_t(op.operands[0])].type;
    const Type& wt = graph.values[size_t(op.operands[1])].type;
    const Type& out = graph.values[size_t(op.results[0])].type;
    if (!x.element.is_float() || !is_f32_or_narrower(x.element.float_kind) || !out.element.is_float() ||
        !is_f32_or_narrower(out.element.float_kind)) {
      return refuse(why_not, "only f32, bf16 and f16 activations and results have a weight-only kernel");
    }
    const ElementType& e = wt.element;
    if (!e.is_any_uniform() || !is_f32_or_narrower(e.float_kind)) {
      return refuse(why_not, "weights must be !quant.uniform expressed in f32, bf16 or f16");
    }
    if (e.storage.width != 8 && e.storage.width != 4) {
      return refuse(why_not, "weight storage of " + std::to_string(e.storage.width) + " bits (the kernel reads 8 or 4)");
    }
    if (wt.rank() != 2 || !wt.has_static_shape() || wt.dims[0] <= 0 || wt.dims[1] <= 0) {
      return refuse(why_not, "weights must be a non-empty 2-D constant");
    }
    auto p = std::make_unique<PreparedWeightOnly>();
    auto w = std::make_shared<PackedWeights>();
    w->k = wt.dims[0];
    w->n = wt.dims[1];
    w->bits = e.storage.width;
    w->is_signed = e.storage.is_signed;
    w->round = weight_round_of(e.float_kind);
    if (std::string why; !fill_parameters(e, w->k, w->n, *w, &why)) return refuse(why_not, why);
    const Type bytes_type = Type::tensor(wt.dims, ElementType::make_int(w->bits));
    const int pv = graph.values[size_t(op.operands[1])].producer;
    const Op* producer = pv >= 0 ? &graph.ops[size_t(pv)] : nullptr;
    if (producer && producer->kind == OpKind::kConstant) {
      // The constant's own bytes: [K, N] row-major, nibbles packed along N.
      w->bytes = producer->attr("value")->dense;
      w->bytes.type = bytes_type;
    } else {
      std::unique_ptr<Tensor> folded = constant_operand(graph, op.operands[1]);
      if (!folded) return refuse(why_not, "the weights are not a constant");
      w->bytes = DenseElements::zeros(bytes_type);
      for (size_t i = 0; i < size_t(w->k * w->n); ++i) w->bytes.set_int(i, folded->int_at(i));
    }
    w->w_stride = w->bits == 8 ? w->n : (w->n + 1) / 2;
    if (w->bits == 4 && w->n % 2 != 0) {
      // Rows of an odd width share a byte: repack with each row starting on a byte.
      DenseElements rows = DenseElements::zeros(Type::tensor({w->k, w->n + 1}, ElementType::make_int(4)));
      for (int64_t kk = 0; kk < w->k; ++kk) {
        for (int64_t j = 0; j < w->n; ++j) rows.set_int(size_t(kk * (w->n + 1) + j), w->bytes.int_at(size_t(kk * w->n + j)));
      }
      w->bytes = std::move(rows);
    }
    if (std::string why; !constant_f32_bias(graph, op, w->n, &p->bias, &why)) return refuse(why_not, why);
    p->graph = &graph;
    p->op = &op;
    p->w = std::move(w);
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    return backend->why_not(wo_desc(*static_cast<const PreparedWeightOnly&>(prepared).w, backend));
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedWeightOnly&>(prepared);
    const KernelDesc d = wo_desc(*p.w, backend);
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
    return std::unique_ptr<OpKernel>(
        std::make_unique<WeightOnlyMatmulOpKernel>(*p.graph, *p.op, p.w, p.bias, d, std::move(code)));
  }
};

}  // namespace

bool weight_only_matmul_applies(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::kMatmul || op.operands.size() < 2) return false;
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& w = graph.values[size_t(op.operands[1])].type;
  const ElementType& e = w.element;
  return x.element.is_float() && is_f32_or_narrower(x.element.float_kind) && e.is_any_uniform() &&
         is_f32_or_narrower(e.float_kind) && (e.storage.width == 8 || e.storage.width == 4) && w.rank() == 2 &&
         w.has_static_shape() && !(e.kind == ElementKind::kUniformPerAxis && e.axis != 1);
}

const OpFamily& weight_only_matmul_family() {
  static const WeightOnlyMatmulFamily family;
  return family;
}

}  // namespace qrt::jit
