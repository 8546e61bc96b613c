// qrt — hybrid qrt.matmul with activations = "dynamic_i8" (docs/numerics.md, "Dynamic i8
// activations"): f32 rows (bf16 and f16 widened exactly) quantized to i8 per call, per row and per block of the weights along
// K (numerics::quantize_block_i8, the reference's own function), then the kDynGemm
// micro-kernel of the chosen level: exact integer block sums from 8- or 4-bit weights kept
// packed, f32 block terms in block order. The llama.cpp Q8 form, made exact and portable.
//
// Memory: the weights are repacked once, at plan time, into kDynGemm's record layout
// (microkernel.h): the same bits per weight as stored, plus per block and column a scale (f16
// where every scale is exactly a normal f16, as in llama.cpp's Q4_0 and ONNX's f16
// MatMulNBits, else f32) and a u8 zero point (none where one serves the whole weight), so a
// plan holds the packed weights and nothing wider. For 4-bit blocks of 32 that is 4.5 bits per
// weight (f16 scales, one zero point) to 5.25 (f32 scales, zero points that differ), against
// f32's 32: the bytes a GEMV streams.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/float_format.h"
#include "ir/numerics_dynamic.h"
#include "ir/ops.h"
#include "jit/core/aligned_bytes.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/ops/float_gemm_tasks.h"
#include "jit/ops/float_widening.h"
#include "jit/ops/op_kernel.h"
#include "jit/ops/weight_blocks.h"

namespace qrt::jit {

namespace {

// Rows quantized per task when a call has enough of them to share the work.
constexpr int64_t kQuantizeRowsPerTask = 16;

// The weights in kDynGemm's record layout.
struct DynWeights {
  AlignedBytes records;
  int64_t k = 0, n = 0, block = 0, block_padded = 0, blocks = 0;
  unsigned bits = 8;
  bool is_signed = true;
  bool scale_f16 = false;  // the records hold f16 scales (each exactly its f32 compute scale)
  bool has_zps = false;    // the records hold a z' byte per column (the zero points differ)
  int32_t common_zp = 0;   // without them, every column's z' (KernelDesc::zero_point)
};

// Whether f32 `s` is a positive normal f16 value exactly (the records' f16 scales).
bool exact_normal_f16(float s) {
  return s >= 0x1p-14f && round_to_float_kind(double(s), FloatKind::kF16) == double(s);  // NaN fails too
}

// Writes the records of `w` ([k, n] stored values `stored(kk, j)`, parameters `p`).
template <typename Stored>
void pack_records(DynWeights& w, const WeightBlocks& p, Stored stored) {
  const int64_t strips = (w.n + kDynStripCols - 1) / kDynStripCols;
  const DynRecordLayout layout = dyn_record_layout(w.block_padded, w.bits, w.scale_f16, w.has_zps);
  const int64_t record = layout.bytes;
  const int64_t group_bytes = w.bits == 4 ? 256 : 512;
  const int32_t offset = w.is_signed ? 1 << (w.bits - 1) : 0;
  w.records = AlignedBytes(size_t(strips * w.blocks * record));
  uint8_t* out = w.records.data();
  std::memset(out, 0, w.records.size());
  // Rows of the stored weights outermost and 64 columns innermost, so the source is read along
  // its rows (a column-major walk missed the cache on every weight: seconds per 4096x11008).
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t cols = std::min(kDynStripCols, w.n - s * kDynStripCols);
    for (int64_t b = 0; b < w.blocks; ++b) {
      uint8_t* rec = out + (s * w.blocks + b) * record;
      for (int64_t kk = b * w.block; kk < std::min(w.k, (b + 1) * w.block); ++kk) {
        const int64_t i = kk - b * w.block;  // k within the block
        uint8_t* g = rec + i / 8 * group_bytes;
        for (int64_t c = 0; c < cols; ++c) {
          // The bits of q + offset (a folded constant may read as signless: the mask fixes both).
          const uint8_t u = uint8_t((stored(kk, s * kDynStripCols + c) + offset) & ((1 << w.bits) - 1));
          if (w.bits == 4) {
            g[c * 4 + i % 4] |= uint8_t(u << (i % 8 / 4 * 4));
          } else {
            g[i % 8 / 4 * 256 + c * 4 + i % 4] = u;
          }
        }
      }
      for (int64_t c = 0; c < cols; ++c) {
        const size_t pi = size_t(b * w.n + s * kDynStripCols + c);
        const float scale = p.scales[pi];
        if (w.scale_f16) {
          const uint16_t h = f16_bits_from_double(double(scale));  // exact: exact_normal_f16 held
          std::memcpy(rec + layout.scales + c * 2, &h, 2);
        } else {
          std::memcpy(rec + layout.scales + c * 4, &scale, 4);
        }
        if (w.has_zps) rec[layout.zps + c] = uint8_t(p.zps[pi] + offset);  // in [0, 2^bits): weight_blocks checked
      }
    }
  }
}

class DynamicMatmulOpKernel final : public HeldWeightsMatmulKernel {
 public:
  DynamicMatmulOpKernel(const Graph& graph, const Op& op, std::shared_ptr<const DynWeights> w, std::vector<float> bias,
                        KernelDesc desc, std::shared_ptr<const CompiledKernel> code)
      : HeldWeightsMatmulKernel(graph, op, w->k, w->n, std::move(bias)), w_(std::move(w)), desc_(desc), code_(std::move(code)) {}

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const DynWeights& w = *w_;
    const int64_t rows = operands[0]->num_elements() / w.k;
    if (rows == 0) return Status::ok();
    // bf16 / f16 activations widen to f32 (exact) row by row inside the quantization tasks,
    // and a bf16 / f16 result is the f32 result rounded once, as the reference computes them.
    const Tensor& x = *operands[0];
    const bool wide_rows = x_kind_ != FloatKind::kF32;
    thread_local std::vector<float> wide_y;
    // The activations quantized per row and block: i8 values (blocks padded with zeros to
    // block_padded), scales and sums.
    const int64_t x_stride = w.blocks * w.block_padded;
    std::vector<int8_t> xq(size_t(rows * x_stride), 0);
    std::vector<float> xd(size_t(rows * w.blocks));
    std::vector<int32_t> xsum(size_t(rows * w.blocks));
    const int64_t row_tasks = (rows + kQuantizeRowsPerTask - 1) / kQuantizeRowsPerTask;
    Parallel& qpar = worthwhile_tasks(rows * w.k * 8, kMinF32TaskMacs, parallel) > 1 ? parallel : serial();
    qpar.for_each(size_t(row_tasks), [&](size_t t) {
      thread_local std::vector<float> wide_row;
      if (wide_rows) wide_row.resize(size_t(w.k));
      for (int64_t r = int64_t(t) * kQuantizeRowsPerTask; r < std::min(rows, int64_t(t + 1) * kQuantizeRowsPerTask); ++r) {
        const float* row = reinterpret_cast<const float*>(x.bytes()) + r * w.k;
        if (wide_rows) {
          widen_to_f32(x.bytes() + r * w.k * 2, x_kind_, w.k, wide_row.data());
          row = wide_row.data();
        }
        for (int64_t b = 0; b < w.blocks; ++b) {
          const int64_t k0 = b * w.block, len = std::min(w.block, w.k - k0);
          xd[size_t(r * w.blocks + b)] = numerics::quantize_block_i8(row + k0, len, xq.data() + r * x_stride + b * w.block_padded,
                                                                     &xsum[size_t(r * w.blocks + b)]);
        }
      }
    });
    float* out = f32_destination(y, wide_y);
    const int64_t strips = (w.n + kDynStripCols - 1) / kDynStripCols;
    const int64_t record = dyn_record_layout(w.block_padded, w.bits, w.scale_f16, w.has_zps).bytes;
    const int64_t tasks = std::min(strips, worthwhile_tasks(rows * w.k * w.n, kMinF32TaskMacs, parallel));
    const int64_t per_task = (strips + tasks - 1) / tasks;
    Parallel& par = tasks > 1 ? parallel : serial();
    par.for_each(size_t((strips + per_task - 1) / per_task), [&](size_t t) {
      const int64_t s0 = int64_t(t) * per_task, c0 = s0 * kDynStripCols;
      const int64_t c1 = std::min(w.n, (s0 + per_task) * kDynStripCols);
      DynGemmArgs a{xq.data(), xd.data(), xsum.data(), w.records.data() + s0 * w.blocks * record,
                    bias_.empty() ? nullptr : bias_.data() + c0, out + c0, rows, c1 - c0, w.blocks, w.block_padded,
                    x_stride, w.n, lo_, hi_};
      call_microkernel(code_->entry(), a, desc_);
    });
    store_f32_results(y, wide_y);
    release_large(wide_y);  // a prefill's results give theirs back; a decode step's few rows keep it
    return Status::ok();
  }

  std::string describe() const override {
    const DynWeights& w = *w_;
    const std::string widened = x_kind_ == FloatKind::kF32 ? "" : std::string(float_kind_name(x_kind_)) + " activations widened to f32, ";
    const std::string narrowed = y_kind_ == FloatKind::kF32 ? "" : ", results rounded once to " + std::string(float_kind_name(y_kind_));
    return desc_.name() + " (" + widened + "activations quantized to i8 per row and block of " + std::to_string(w.block) +
           " along K; weights packed: " + std::to_string(w.records.size()) + " bytes with " + (w.scale_f16 ? "f16" : "f32") +
           " scales" + (w.has_zps ? " and zero points" : "") + "; exact block sums" + narrowed + ")";
  }

  // The records are the weights' only form the kernel reads: the plan may drop the constant.
  bool holds_operand_copy(size_t index) const override { return index != 0; }

 private:
  size_t owned_bytes() const override { return w_->records.size() + bias_.size() * sizeof(float); }

  std::shared_ptr<const DynWeights> w_;
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
};

struct PreparedDynamic final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  std::shared_ptr<DynWeights> w;
  std::vector<float> bias;
};

KernelDesc dyn_desc(const DynWeights& w, const Backend* backend) {
  KernelDesc d;
  d.op = KernelOp::kDynGemm;
  d.isa = backend->isa();
  d.generator = backend->generator();
  d.storage_signed = w.is_signed;
  d.weight_bits = uint8_t(w.bits);
  d.weight_zp = w.has_zps;
  d.zero_point = w.has_zps ? 0 : w.common_zp;
  d.scale_f16 = w.scale_f16;
  return d;
}

class DynamicMatmulFamily final : public OpFamily {
 public:
  const char* name() const override { return "dyngemm"; }
  KernelOp kind() const override { return KernelOp::kDynGemm; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const Type& wt = graph.values[size_t(op.operands[1])].type;
    const ElementType& e = wt.element;
    if (e.storage.width != 8 && e.storage.width != 4) {
      return refuse(why_not, "weight storage of " + std::to_string(e.storage.width) + " bits (the kernel reads 8 or 4)");
    }
    if (wt.rank() != 2 || !wt.has_static_shape() || wt.dims[0] <= 0 || wt.dims[1] <= 0) {
      return refuse(why_not, "weights must be a non-empty 2-D constant");
    }
    auto w = std::make_shared<DynWeights>();
    w->k = wt.dims[0];
    w->n = wt.dims[1];
    w->bits = e.storage.width;
    w->is_signed = e.storage.is_signed;
    WeightBlocks params;
    if (std::string why; !weight_blocks(e, w->k, w->n, params, &why)) return refuse(why_not, why);
    w->block = params.block;
    w->block_padded = (w->block + 7) / 8 * 8;
    w->blocks = (w->k + w->block - 1) / w->block;
    w->scale_f16 = std::all_of(params.scales.begin(), params.scales.end(), exact_normal_f16);
    const int32_t offset = w->is_signed ? 1 << (w->bits - 1) : 0;
    for (int16_t zp : params.zps) {
      // The verifier keeps zero points in the storage range; a record's z' byte relies on it.
      if (zp + offset < 0 || zp + offset >= (1 << w->bits)) {
        return refuse(why_not, "zero point " + std::to_string(zp) + " outside the " + std::to_string(w->bits) + "-bit storage range");
      }
    }
    // One zero point for every block and column (0, or u4's 8 as ONNX's MatMulNBits defaults
    // it) goes in the kernel's description instead of a byte per column in every record.
    const bool common = std::all_of(params.zps.begin(), params.zps.end(), [&](int16_t z) { return z == params.zps.front(); });
    w->has_zps = !common;
    w->common_zp = (params.zps.empty() ? 0 : params.zps.front()) + offset;
    const int64_t n = w->n;
    const int pv = graph.values[size_t(op.operands[1])].producer;
    const DenseElements* dense = pv >= 0 && graph.ops[size_t(pv)].kind == OpKind::kConstant ? &graph.ops[size_t(pv)].attr("value")->dense : nullptr;
    if (dense && dense->type.element.is_integer() && dense->type.element.int_width == w->bits) {
      // The constant's own bits ([K, N] row-major, 4-bit values two per byte, low nibble
      // first): the packer keeps q + offset modulo 2^bits, whatever the bits' signedness.
      const uint8_t* bytes = dense->data();
      if (w->bits == 8) {
        pack_records(*w, params, [&](int64_t kk, int64_t j) { return int32_t(bytes[kk * n + j]); });
      } else {
        pack_records(*w, params, [&](int64_t kk, int64_t j) {
          const int64_t i = kk * n + j;
          return int32_t(bytes[i / 2] >> (i % 2 * 4) & 15);
        });
      }
    } else {
      std::unique_ptr<Tensor> stored = constant_operand(graph, op.operands[1]);
      if (!stored) return refuse(why_not, "the weights are not a constant");
      pack_records(*w, params, [&](int64_t kk, int64_t j) { return int32_t(stored->int_at(size_t(kk * n + j))); });
    }
    auto p = std::make_unique<PreparedDynamic>();
    if (std::string why; !constant_f32_bias(graph, op, w->n, &p->bias, &why)) return refuse(why_not, why);
    p->graph = &graph;
    p->op = &op;
    p->w = std::move(w);
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    return backend->why_not(dyn_desc(*static_cast<const PreparedDynamic&>(prepared).w, backend));
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedDynamic&>(prepared);
    const KernelDesc d = dyn_desc(*p.w, backend);
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
    return std::unique_ptr<OpKernel>(std::make_unique<DynamicMatmulOpKernel>(*p.graph, *p.op, p.w, p.bias, d, std::move(code)));
  }
};

}  // namespace

bool dynamic_matmul_applies(const Graph& graph, const Op& op) {
  (void)graph;
  const Attribute* a = op.kind == OpKind::kMatmul ? op.attr("activations") : nullptr;
  return a && a->kind == Attribute::Kind::kString && a->s == "dynamic_i8";
}

const OpFamily& dynamic_matmul_family() {
  static const DynamicMatmulFamily family;
  return family;
}

}  // namespace qrt::jit
