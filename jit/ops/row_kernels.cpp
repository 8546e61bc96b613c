// qrt — row-wise ops of transformer graphs: softmax (over any axis), layer normalization
// and dynamic-range quantization. Their reductions keep the reference's order (sequential f32
// or double sums, as docs/numerics.md defines them) in C++; their element-wise passes are
// element-wise programs of the chosen level (exp of the shifted row, the division by the sum,
// quantization with a scale and zero point known only at run time), so results are the
// reference's bytes. bf16 and f16 values load widened to f32 (exact) and each result rounds
// once to its type, as the reference computes them (docs/numerics.md, compute precision).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/float_format.h"
#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/core/code_cache.h"
#include "jit/ops/ew_ops.h"
#include "jit/ops/float_widening.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

namespace {

// An 8-bit per-tensor quantized type's storage, scale (compute_scale_f32) and zero point.
struct RowQuant {
  EwStorage storage = EwStorage::kU8;
  float scale = 1.0f;
  int64_t zp = 0, lo = 0, hi = 255;
};

// Per-tensor quantization of 8- or 16-bit storage (softmax; dynamic quantization takes 8 bits).
std::optional<RowQuant> row_quant(const ElementType& e, bool allow_16bit = false) {
  if (e.kind != ElementKind::kUniform || (e.storage.width != 8 && !(allow_16bit && e.storage.width == 16))) {
    return std::nullopt;
  }
  RowQuant q;
  q.storage = e.storage.width == 16 ? (e.storage.is_signed ? EwStorage::kI16 : EwStorage::kU16)
                                    : (e.storage.is_signed ? EwStorage::kI8 : EwStorage::kU8);
  q.scale = numerics::compute_scale_f32(e.scales[0], e.float_kind);
  q.zp = e.zero_points[0];
  q.lo = e.storage.min;
  q.hi = e.storage.max;
  return q;
}


EwFn entry(const CompiledKernel& k) { return reinterpret_cast<EwFn>(const_cast<void*>(k.entry())); }

// Rows of `len` values: rows [r0, r1) of `rows` per task, about 16K values per task.
template <typename Fn>
void for_row_blocks(Parallel& parallel, int64_t rows, int64_t len, Fn fn) {
  const int64_t per = parallel.split_small_work() ? 1 : std::max<int64_t>(1, 16384 / std::max<int64_t>(len, 1));
  const int64_t tasks = (rows + per - 1) / per;
  parallel.for_each(size_t(tasks), [&](size_t t) { fn(int64_t(t) * per, std::min(rows, int64_t(t + 1) * per)); });
}

// --- softmax -------------------------------------------------------------
// m = max of the row (std::max from -inf: NaN never wins), e = exp_f32((x - m) * beta) (program
// A), sum = Σ e in order (f32), y = e / sum (program B, quantized when the result is).
class SoftmaxKernel final : public OpKernel {
 public:
  SoftmaxKernel(const Graph& g, const Op& op, EwProgram a, EwProgram b, std::shared_ptr<const CompiledKernel> ka,
                std::shared_ptr<const CompiledKernel> kb, std::optional<RowQuant> in, std::string level)
      : OpKernel(g.values[size_t(op.results[0])].type), a_(std::move(a)), b_(std::move(b)), ka_(std::move(ka)),
        kb_(std::move(kb)), in_(in), level_(std::move(level)) {
    const ElementType& xe = g.values[size_t(op.operands[0])].type.element;
    if (xe.is_float()) in_float_ = xe.float_kind;
    const int64_t rank = int64_t(result_type_.rank());
    int64_t axis = op.attr("axis") ? op.attr("axis")->i : -1;
    if (axis < 0) axis += rank;
    axis_ = rank == 0 ? 0 : size_t(axis);
    inner_axis_ = rank > 0 && axis != rank - 1;
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const unsigned in_bytes = x.element_size(), out_bytes = y.element_size();
    const int64_t len = x.type.dims.empty() ? 1 : x.type.dims[axis_];
    int64_t inner = 1;
    for (size_t d = axis_ + 1; d < x.type.rank(); ++d) inner *= x.type.dims[d];
    if (inner == 1) {
      const int64_t rows = len == 0 ? 0 : x.num_elements() / len;
      for_row_blocks(parallel, rows, len, [&](int64_t r0, int64_t r1) {
        rows_into(x.bytes() + r0 * len * in_bytes, y.bytes() + r0 * len * out_bytes, r1 - r0, len, in_bytes, out_bytes);
      });
      return Status::ok();
    }
    // An inner axis: each outer block [len][inner] is transposed into `inner` rows of `len`,
    // computed as rows (the same order of every sum), and transposed back.
    const int64_t outer = len * inner == 0 ? 0 : x.num_elements() / (len * inner);
    parallel.for_each(size_t(outer), [&](size_t o) {
      thread_local std::vector<uint8_t> rows_in, rows_out;
      rows_in.resize(size_t(len * inner) * in_bytes);
      rows_out.resize(size_t(len * inner) * out_bytes);
      const uint8_t* block = x.bytes() + int64_t(o) * len * inner * in_bytes;
      for (int64_t k = 0; k < len; ++k) {
        for (int64_t j = 0; j < inner; ++j) {
          std::memcpy(&rows_in[size_t(j * len + k) * in_bytes], block + (k * inner + j) * in_bytes, in_bytes);
        }
      }
      rows_into(rows_in.data(), rows_out.data(), inner, len, in_bytes, out_bytes);
      uint8_t* out = y.bytes() + int64_t(o) * len * inner * out_bytes;
      for (int64_t k = 0; k < len; ++k) {
        for (int64_t j = 0; j < inner; ++j) {
          std::memcpy(out + (k * inner + j) * out_bytes, &rows_out[size_t(j * len + k) * out_bytes], out_bytes);
        }
      }
    });
    return Status::ok();
  }

  std::string describe() const override {
    return std::string(ew_storage_name(a_.inputs[0].storage)) + "_" + ew_storage_name(b_.out) + "_softmax__" + level_ +
           " (row max and f32 sum in order; exp and division as programs" +
           (inner_axis_ ? "; an inner axis transposed into rows per outer block)" : ")");
  }

 private:
  // Stored value k of a row of the quantized input.
  int64_t stored_at(const uint8_t* row, int64_t k) const {
    switch (in_->storage) {
      case EwStorage::kI8: return int8_t(row[k]);
      case EwStorage::kI16: return reinterpret_cast<const int16_t*>(row)[k];
      case EwStorage::kU16: return reinterpret_cast<const uint16_t*>(row)[k];
      default: return row[k];
    }
  }

  // `n` contiguous rows of `len` elements from `in` into `out`.
  void rows_into(const uint8_t* in, uint8_t* out, int64_t n, int64_t len, unsigned in_bytes, unsigned out_bytes) const {
    // Scratch per worker thread, reused across runs (steady-state runs allocate nothing).
    thread_local std::vector<float> m, e, sum, widened;
    m.resize(size_t(n));
    e.resize(size_t(n * len));
    sum.resize(size_t(n));
    for (int64_t r = 0; r < n; ++r) {
      const uint8_t* row = in + r * len * in_bytes;
      float best = -INFINITY;
      if (in_) {
        // Dequantization is monotonic (scale > 0): the largest stored value's value.
        int64_t q = INT64_MIN;
        for (int64_t k = 0; k < len; ++k) q = std::max<int64_t>(q, stored_at(row, k));
        if (len > 0) best = std::max(best, numerics::dequantize_f32(q, in_->zp, in_->scale));
      } else if (in_bytes == 4) {
        const float* v = reinterpret_cast<const float*>(row);
        for (int64_t k = 0; k < len; ++k) best = std::max(best, v[k]);
      } else {
        // bf16 / f16: the widened values (program A widens them the same way).
        widened.resize(size_t(len));
        widen_to_f32(row, in_float_, len, widened.data());
        for (int64_t k = 0; k < len; ++k) best = std::max(best, widened[size_t(k)]);
      }
      m[size_t(r)] = best;
    }
    EwArgs args{};
    args.in[0] = in;
    args.in_step[0] = len * in_bytes;
    args.in[1] = m.data();
    args.in_step[1] = 4;
    args.out = e.data();
    args.out_step = len * 4;
    args.n = len;
    args.rows = n;
    entry(*ka_)(&args, &a_);
    for (int64_t r = 0; r < n; ++r) {
      float s = 0.0f;
      for (int64_t k = 0; k < len; ++k) s = s + e[size_t(r * len + k)];
      sum[size_t(r)] = s;
    }
    args.in[0] = e.data();
    args.in_step[0] = len * 4;
    args.in[1] = sum.data();
    args.out = out;
    args.out_step = len * out_bytes;
    entry(*kb_)(&args, &b_);
  }

  EwProgram a_, b_;
  std::shared_ptr<const CompiledKernel> ka_, kb_;
  std::optional<RowQuant> in_;
  FloatKind in_float_ = FloatKind::kF32;  // a float input's kind
  std::string level_;
  size_t axis_ = 0;
  bool inner_axis_ = false;
};

// --- layer normalization --------------------------------------------------------------------
// Per row of the normalized dimensions: mean and variance in double, summed in order, then
// one f32 normalization, scale and bias per element (the reference's formula).
class LayerNormKernel final : public OpKernel {
 public:
  LayerNormKernel(const Graph& g, const Op& op, int64_t axis, double eps)
      : OpKernel(g.values[size_t(op.results[0])].type), axis_(axis), eps_(eps) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    int64_t n = 1;
    for (size_t d = size_t(axis_); d < x.type.dims.size(); ++d) n *= x.type.dims[d];
    const int64_t rows = n == 0 ? 0 : x.num_elements() / n;
    // Scale and bias (one row) widened once per run; bf16/f16 rows widen and round per task,
    // so no tensor-sized buffer is allocated.
    thread_local std::vector<float> wide_scale, wide_bias;
    const float* scale = f32_elements(*operands[1], wide_scale);
    const float* bias = operands.size() > 2 ? f32_elements(*operands[2], wide_bias) : nullptr;
    const FloatKind xk = x.type.element.float_kind, yk = y.type.element.float_kind;
    for_row_blocks(parallel, rows, n, [&](int64_t r0, int64_t r1) {
      thread_local std::vector<float> in_block, out_block;
      const float* xb = reinterpret_cast<const float*>(x.bytes()) + r0 * n;
      if (xk != FloatKind::kF32) {
        in_block.resize(size_t((r1 - r0) * n));
        widen_to_f32(x.bytes() + r0 * n * 2, xk, (r1 - r0) * n, in_block.data());
        xb = in_block.data();
      }
      float* yb = reinterpret_cast<float*>(y.bytes()) + r0 * n;
      if (yk != FloatKind::kF32) {
        out_block.resize(size_t((r1 - r0) * n));
        yb = out_block.data();
      }
      for (int64_t r = 0; r < r1 - r0; ++r) {
        const float* v = xb + r * n;
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) sum += double(v[i]);
        const double mean = sum / double(n);
        double sq = 0.0;
        for (int64_t i = 0; i < n; ++i) {
          const double c = double(v[i]) - mean;
          sq += c * c;
        }
        const double rstd = 1.0 / std::sqrt(sq / double(n) + eps_);
        float* out = yb + r * n;
        for (int64_t i = 0; i < n; ++i) {
          const float normalized = float((double(v[i]) - mean) * rstd);
          out[i] = normalized * scale[i] + (bias ? bias[i] : 0.0f);
        }
      }
      if (yk != FloatKind::kF32) narrow_from_f32(yb, yk, (r1 - r0) * n, y.bytes() + r0 * n * 2);
      release_large(in_block);
      release_large(out_block);
    });
    release_large(wide_scale);
    release_large(wide_bias);
    return Status::ok();
  }

  std::string describe() const override {
    const FloatKind kind = result_type_.element.float_kind;
    return std::string(float_kind_name(kind)) + "_layernorm (" + widening_note(kind) + "double row statistics in order, f32 affine)";
  }

 private:
  int64_t axis_;
  double eps_;
};

// --- dynamic-range quantization -------------------------------------------------------------
// ONNX DynamicQuantizeLinear for u8: the range [min(0, x), max(0, x)] (NaN ignored; min and max
// do not depend on the order, so rows reduce in parallel), then the quantization program with
// the scale and zero point as run-time scalars.
class DynamicQuantizeKernel final : public OpKernel {
 public:
  DynamicQuantizeKernel(const Graph& g, const Op& op, EwProgram p, std::shared_ptr<const CompiledKernel> k, std::string level)
      : OpKernel(g.values[size_t(op.results[0])].type), p_(std::move(p)), k_(std::move(k)), level_(std::move(level)) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;
  }

  Status run_into(const std::vector<const Tensor*>&, Tensor&, Parallel&) const override {
    return Status::error("qrt.dynamic_quantize has three results: run_results_into computes them");
  }

  Status run_results_into(const std::vector<const Tensor*>& operands, const std::vector<Tensor*>& results,
                          Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const float* v = reinterpret_cast<const float*>(x.bytes());
    const int64_t n = x.num_elements(), chunk = parallel.split_small_work() ? 7 : 65536;
    const int64_t tasks = std::max<int64_t>(1, (n + chunk - 1) / chunk);
    std::vector<float> lo(size_t(tasks), 0.0f), hi(size_t(tasks), 0.0f);
    parallel.for_each(size_t(tasks), [&](size_t t) {
      float l = 0.0f, h = 0.0f;
      for (int64_t i = int64_t(t) * chunk, end = std::min(n, int64_t(t + 1) * chunk); i < end; ++i) {
        l = std::min(l, v[i]);
        h = std::max(h, v[i]);
      }
      lo[t] = l;
      hi[t] = h;
    });
    float l = 0.0f, h = 0.0f;
    for (int64_t t = 0; t < tasks; ++t) {
      l = std::min(l, lo[size_t(t)]);
      h = std::max(h, hi[size_t(t)]);
    }
    const float scale = (h - l) / 255.0f;
    int64_t zp = 0;
    if (scale > 0.0f) zp = numerics::add_zero_point_and_clamp(numerics::round_half_even(0.0f - l / scale), 0, 0, 255);
    Tensor& y = *results[0];
    if (scale > 0.0f) {
      parallel.for_each(size_t(tasks), [&](size_t t) {
        const int64_t begin = int64_t(t) * chunk;
        EwArgs args{};
        args.in[0] = v + begin;
        args.in[1] = &scale;
        args.in[2] = &zp;
        args.out = y.bytes() + begin;
        args.n = std::min(n, begin + chunk) - begin;
        args.rows = 1;
        entry(*k_)(&args, &p_);
      });
    } else {
      std::memset(y.bytes(), 0, y.byte_size());
    }
    results[1]->set_float(0, double(scale));
    results[2]->set_int(0, zp);
    return Status::ok();
  }

  std::string describe() const override {
    return "f32_u8_dynamic_quantize__" + level_ + " (range reduced in parallel; quantization as a program)";
  }

 private:
  EwProgram p_;
  std::shared_ptr<const CompiledKernel> k_;
  std::string level_;
};

struct PreparedRows final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  std::vector<EwProgram> programs;  // softmax: A and B; dynamic_quantize: one; layer_norm: none
  std::optional<RowQuant> softmax_in;
};

class RowFamily final : public OpFamily {
 public:
  const char* name() const override { return "rows"; }
  KernelOp kind() const override { return KernelOp::kEwProgram; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& g, const Op& op, std::string* why_not) const override {
    auto p = std::make_unique<PreparedRows>();
    p->graph = &g;
    p->op = &op;
    const Type& x = g.values[size_t(op.operands[0])].type;
    const Type& y = g.values[size_t(op.results[0])].type;
    if (!x.has_static_shape()) return refuse(why_not, "dynamic shapes run on the reference");
    if (op.kind == OpKind::kSoftmax) {
      int64_t axis = op.attr("axis") ? op.attr("axis")->i : -1;
      if (axis < 0) axis += int64_t(x.rank());
      if (x.rank() > 0 && (axis < 0 || axis >= int64_t(x.rank()))) return refuse(why_not, "the softmax axis is out of range");
      const std::optional<RowQuant> qi = row_quant(x.element, true), qo = row_quant(y.element, true);
      auto float_storage = [](const ElementType& e) {
        return e.is_float() && is_f32_or_narrower(e.float_kind) ? value_storage(e) : std::nullopt;
      };
      const std::optional<EwStorage> fi = float_storage(x.element), fo = float_storage(y.element);
      if ((!qi && !fi) || (!qo && !fo)) {
        return refuse(why_not, "softmax kernels take f32, bf16, f16 or 8- or 16-bit per-tensor quantized values");
      }
      ProgramBuilder a;
      uint8_t v = a.load(qi ? qi->storage : *fi, false);
      if (qi) {
        EwInstr dq;
        dq.op = EwOp::kDequant;
        dq.a = v;
        dq.i = qi->zp;
        dq.f = qi->scale;
        v = a.add(dq);
      }
      const uint8_t m = a.load(EwStorage::kF32, true);
      EwInstr beta;
      beta.op = EwOp::kConst;
      beta.f = op.attr("beta") ? float(op.attr("beta")->f) : 1.0f;
      const uint8_t shifted = a.op(EwOp::kSub, EwType::kF32, v, m);
      const uint8_t z = a.op(EwOp::kMul, EwType::kF32, shifted, a.add(beta));
      a.p.result = a.op(EwOp::kExp, EwType::kF32, z);
      ProgramBuilder b;
      const uint8_t e = b.load(EwStorage::kF32, false);  // input 0: the exponentials
      const uint8_t sum = b.load(EwStorage::kF32, true);  // input 1: the row's sum
      uint8_t r = b.op(EwOp::kDiv, EwType::kF32, e, sum);
      if (qo) {
        EwInstr q;
        q.op = EwOp::kQuant;
        q.type = EwType::kI64;
        q.a = r;
        q.f = qo->scale;
        q.i = qo->zp;
        q.j = qo->lo;
        q.k = qo->hi;
        if (!(q.f > 0.0f) || !std::isfinite(q.f)) return refuse(why_not, "the output scale is not a positive f32");
        r = b.add(q);
      }
      b.p.result = r;
      b.p.out = qo ? qo->storage : *fo;  // a bf16/f16 store rounds the f32 quotient once
      p->programs = {a.p, b.p};
      p->softmax_in = qi;
    } else if (op.kind == OpKind::kLayerNorm) {
      if (!y.element.is_float() || !is_f32_or_narrower(y.element.float_kind)) {
        return refuse(why_not, "layer norm kernels give f32, bf16 and f16 results");
      }
      for (int v : op.operands) {
        const ElementType& e = g.values[size_t(v)].type.element;
        if (!e.is_float() || !is_f32_or_narrower(e.float_kind)) {
          return refuse(why_not, "layer norm kernels take f32, bf16 and f16 operands");
        }
        if (!g.values[size_t(v)].type.has_static_shape()) return refuse(why_not, "dynamic shapes run on the reference");
      }
    } else if (op.kind == OpKind::kDynamicQuantize) {
      if (!is_f32(x.element)) return refuse(why_not, "dynamic quantization kernels take f32 input");
      ProgramBuilder b;
      const uint8_t v = b.load(EwStorage::kF32, false);
      const uint8_t s = b.load(EwStorage::kF32, true);
      const uint8_t z = b.load(EwStorage::kI64, true);
      EwInstr q;
      q.op = EwOp::kQuantVar;
      q.type = EwType::kI64;
      q.a = v;
      q.b = s;
      q.c = z;
      q.j = 0;
      q.k = 255;
      b.p.result = b.add(q);
      b.p.out = EwStorage::kU8;
      p->programs = {b.p};
    } else {
      return refuse(why_not, "not a row op");
    }
    for (const EwProgram& prog : p->programs) {
      if (std::string w = prog.validate(); !w.empty()) return Status::error("internal: " + prog.name() + ": " + w);
    }
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    for (const EwProgram& prog : static_cast<const PreparedRows&>(prepared).programs) {
      if (std::string why = backend->program_why_not(prog); !why.empty()) return why;
    }
    return "";
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedRows&>(prepared);
    const Graph& g = *p.graph;
    const Op& op = *p.op;
    std::vector<std::shared_ptr<const CompiledKernel>> code;
    for (const EwProgram& prog : p.programs) {
      QRT_ASSIGN_OR_RETURN(auto k, program_cache().get(ProgramKey{backend->isa(), prog, prog.key()}));
      code.push_back(std::move(k));
    }
    const std::string level = std::string(backend->name()) + "_" + isa_suffix(backend->isa());
    if (op.kind == OpKind::kSoftmax) {
      return std::unique_ptr<OpKernel>(
          std::make_unique<SoftmaxKernel>(g, op, p.programs[0], p.programs[1], code[0], code[1], p.softmax_in, level));
    }
    if (op.kind == OpKind::kLayerNorm) {
      return std::unique_ptr<OpKernel>(std::make_unique<LayerNormKernel>(g, op, op.attr("axis")->i, op.attr("epsilon")->f));
    }
    return std::unique_ptr<OpKernel>(std::make_unique<DynamicQuantizeKernel>(g, op, p.programs[0], code[0], level));
  }
};

}  // namespace

const OpFamily& row_family() {
  static const RowFamily family;
  return family;
}

}  // namespace qrt::jit
