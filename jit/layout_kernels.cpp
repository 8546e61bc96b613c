// qrt — kernels for the ops around the arithmetic: quantized clamp/relu (vpminub/vpmaxub and
// friends), pad (fill, then row copies), transpose (strided gathers), reshape (a copy, or
// nothing when planned in place). Plain C++ (AVX2 intrinsics for clamp): these ops move
// bytes, so code generation buys nothing. Static shapes only; the results are the reference's
// bit for bit by construction (clamp bounds are quantized with the same numerics calls).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ir/ops.h"
#include "jit/op_kernels.h"
#include "ir/numerics.h"

namespace qrt::jit {

namespace {

// The common shape contract: the operand has the shape the plan was made for.
class StaticShapeKernel : public OpKernel {
 public:
  StaticShapeKernel(const Graph& graph, const Op& op)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op),
        operand_dims_(graph.values[size_t(op.operands[0])].type.dims) {}
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    if (operands[0]->type.dims != operand_dims_) {
      return Status::error_at(op_.loc, std::string("'") + op_info(op_.kind).name + "' op operand has shape [" +
                                           dims_to_string(operands[0]->type.dims) + "], the plan was made for [" +
                                           dims_to_string(operand_dims_) + "]");
    }
    return result_type_.dims;
  }

 protected:
  Op op_;
  std::vector<int64_t> operand_dims_;
};

__attribute__((target("avx2"))) void clamp_bytes(const uint8_t* x, uint8_t* y, size_t n, bool is_signed, int lo, int hi) {
  size_t i = 0;
  const __m256i l = _mm256_set1_epi8(char(lo)), h = _mm256_set1_epi8(char(hi));
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i r = is_signed ? _mm256_min_epi8(_mm256_max_epi8(v, l), h) : _mm256_min_epu8(_mm256_max_epu8(v, l), h);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), r);
  }
  for (; i < n; ++i) {
    const int v = is_signed ? int(int8_t(x[i])) : int(x[i]);
    y[i] = uint8_t(std::min(std::max(v, lo), hi));
  }
}

class ClampOpKernel final : public OpKernel {
 public:
  ClampOpKernel(const Graph& graph, const Op& op, int lo, int hi)
      : OpKernel(graph.values[size_t(op.results[0])].type), lo_(lo), hi_(hi), signed_(result_type_.element.storage.is_signed) {}
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;  // element-wise: any shape
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const size_t n = y.byte_size(), chunk = 256 * 1024;
    parallel.for_each((n + chunk - 1) / chunk, [&](size_t t) {
      const size_t begin = t * chunk;
      clamp_bytes(operands[0]->bytes() + begin, y.bytes() + begin, std::min(chunk, n - begin), signed_, lo_, hi_);
    });
    return Status::ok();
  }
  bool can_overwrite_operand(size_t) const override { return true; }
  std::string describe() const override {
    return std::string(signed_ ? "qs8" : "qu8") + "_clamp [" + std::to_string(lo_) + ", " + std::to_string(hi_) + "]";
  }

 private:
  int lo_, hi_;
  bool signed_;
};

class PadOpKernel final : public StaticShapeKernel {
 public:
  PadOpKernel(const Graph& graph, const Op& op, std::vector<int64_t> pads, std::vector<uint8_t> fill)
      : StaticShapeKernel(graph, op), pads_(std::move(pads)), fill_(std::move(fill)) {}
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel&) const override {
    const Tensor& x = *operands[0];
    const size_t es = fill_.size(), rank = x.type.rank();
    if (std::all_of(fill_.begin(), fill_.end(), [&](uint8_t b) { return b == fill_[0]; })) {
      std::memset(y.bytes(), fill_[0], y.byte_size());
    } else {
      for (size_t i = 0; i < size_t(y.num_elements()); ++i) std::memcpy(y.bytes() + i * es, fill_.data(), es);
    }
    if (x.num_elements() == 0) return Status::ok();
    // Copy innermost rows: for every index of the outer dimensions, one memcpy.
    const int64_t row = x.type.dims[rank - 1];
    std::vector<int64_t> idx(rank, 0);
    for (size_t i = 0; i < size_t(x.num_elements()); i += size_t(row)) {
      size_t dst = 0;
      for (size_t d = 0; d < rank; ++d) dst = dst * size_t(y.type.dims[d]) + size_t(idx[d] + pads_[d]);
      std::memcpy(y.bytes() + dst * es, x.bytes() + i * es, size_t(row) * es);
      for (size_t d = rank - 1; d-- > 0;) {
        if (++idx[d] < x.type.dims[d]) break;
        idx[d] = 0;
      }
    }
    return Status::ok();
  }
  std::string describe() const override { return "pad_copy"; }

 private:
  std::vector<int64_t> pads_;
  std::vector<uint8_t> fill_;  // one element's bytes
};

// Walks rows [row_begin, row_end) of `dims` (a row: the last dimension) with `strides` giving
// the other tensor's stride per dimension of `dims`. Gather walks the output and reads the
// input through the strides; scatter (for short output rows, e.g. NCHW -> NHWC with few
// channels) walks the input sequentially and writes the output through them.
template <typename T, bool kScatter>
void transpose_walk(const T* x, T* y, const std::vector<int64_t>& dims, const std::vector<size_t>& strides,
                    size_t row_begin, size_t row_end) {
  const size_t rank = dims.size(), row = size_t(dims[rank - 1]), last_stride = strides[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  size_t r = row_begin;
  for (size_t d = rank - 1; d-- > 0;) {  // the multi-index of the first row
    idx[d] = int64_t(r % size_t(dims[d]));
    r /= size_t(dims[d]);
  }
  for (size_t rw = row_begin; rw < row_end; ++rw) {
    size_t other = 0;
    for (size_t d = 0; d + 1 < rank; ++d) other += size_t(idx[d]) * strides[d];
    for (size_t i = 0; i < row; ++i) {
      if constexpr (kScatter) {
        y[other + i * last_stride] = x[rw * row + i];
      } else {
        y[rw * row + i] = x[other + i * last_stride];
      }
    }
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

class TransposeOpKernel final : public StaticShapeKernel {
 public:
  TransposeOpKernel(const Graph& graph, const Op& op, std::vector<int64_t> perm) : StaticShapeKernel(graph, op) {
    // strides_[d]: input stride of output dimension d.
    std::vector<size_t> in_strides(operand_dims_.size(), 1);
    for (size_t d = operand_dims_.size(); d-- > 1;) in_strides[d - 1] = in_strides[d] * size_t(operand_dims_[d]);
    for (int64_t p : perm) strides_.push_back(in_strides[size_t(p)]);
    // out_strides_[d]: output stride of input dimension d.
    const std::vector<int64_t>& out = result_type_.dims;
    std::vector<size_t> out_row_strides(out.size(), 1);
    for (size_t d = out.size(); d-- > 1;) out_row_strides[d - 1] = out_row_strides[d] * size_t(out[d]);
    out_strides_.resize(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) out_strides_[size_t(perm[d])] = out_row_strides[d];
    scatter_ = !out.empty() && out.back() < 16 && operand_dims_.back() > out.back();
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const auto& dims = y.type.dims;
    if (dims.empty() || y.num_elements() == 0) {
      std::memcpy(y.bytes(), operands[0]->bytes(), y.byte_size());
      return Status::ok();
    }
    const size_t es = y.element_size();
    const std::vector<int64_t>& rows_of = scatter_ ? operand_dims_ : dims;
    const size_t row = size_t(rows_of.back()), rows = size_t(y.num_elements()) / row;
    const size_t per_task = std::max<size_t>(1, 64 * 1024 / (row * es));
    parallel.for_each((rows + per_task - 1) / per_task, [&](size_t t) {
      const size_t r0 = t * per_task, r1 = std::min(rows, r0 + per_task);
      switch (es) {
        case 1: run_rows<uint8_t>(*operands[0], y, r0, r1); break;
        case 2: run_rows<uint16_t>(*operands[0], y, r0, r1); break;
        case 4: run_rows<uint32_t>(*operands[0], y, r0, r1); break;
        default: run_rows<uint64_t>(*operands[0], y, r0, r1); break;
      }
    });
    return Status::ok();
  }
  std::string describe() const override { return scatter_ ? "transpose_scatter" : "transpose_gather"; }

 private:
  template <typename T>
  void run_rows(const Tensor& x, Tensor& y, size_t r0, size_t r1) const {
    const T* in = reinterpret_cast<const T*>(x.bytes());
    T* out = reinterpret_cast<T*>(y.bytes());
    if (scatter_) {
      transpose_walk<T, true>(in, out, operand_dims_, out_strides_, r0, r1);
    } else {
      transpose_walk<T, false>(in, out, y.type.dims, strides_, r0, r1);
    }
  }

  std::vector<size_t> strides_, out_strides_;
  bool scatter_ = false;
};

class ReshapeOpKernel final : public OpKernel {
 public:
  ReshapeOpKernel(const Graph& graph, const Op& op) : OpKernel(graph.values[size_t(op.results[0])].type), op_(op) {}
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    auto dims = reshape_dims(result_type_, operands[0]->num_elements());
    if (!dims.is_ok()) return Status::error_at(op_.loc, "'qrt.reshape' op " + dims.status().message());
    return dims;
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel&) const override {
    if (operands[0]->bytes() != y.bytes()) std::memcpy(y.bytes(), operands[0]->bytes(), y.byte_size());
    return Status::ok();  // planned in place: nothing to move
  }
  bool can_overwrite_operand(size_t) const override { return true; }
  std::string describe() const override { return "reshape_copy"; }

 private:
  Op op_;
};

}  // namespace

Result<KernelChoice> select_layout_kernel(const Graph& graph, const Op& op) {
  KernelChoice choice;
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  const bool shape_free = op.kind == OpKind::kRelu || op.kind == OpKind::kClamp || op.kind == OpKind::kReshape;
  if (!shape_free && (!x.has_static_shape() || !y.has_static_shape())) {
    choice.why_not = "dynamic shapes run on the reference";
    return choice;
  }
  const ElementType& e = y.element;
  const bool elementwise = op.kind == OpKind::kRelu || op.kind == OpKind::kClamp || op.kind == OpKind::kReshape;
  if (elementwise && (x.element.kind == ElementKind::kUniformPerAxis || y.element.kind == ElementKind::kUniformPerAxis)) {
    choice.why_not = "per-axis types run on the reference";
    return choice;
  }
  switch (op.kind) {
    case OpKind::kRelu:
    case OpKind::kClamp: {
      if (e.kind != ElementKind::kUniform || e.storage.width != 8) {
        choice.why_not = "only 8-bit per-tensor clamps have a kernel";
        return choice;
      }
      const int64_t zp = e.zero_points[0];
      int64_t lo = zp, hi = e.storage.max;
      if (op.kind == OpKind::kClamp) {
        const float sc = numerics::compute_scale_f32(e.scales[0], e.float_kind);
        const double min = op.attr("min")->f, max = op.attr("max")->f;
        if (e.float_kind == FloatKind::kF64) {
          lo = numerics::quantize_f64(min, e.scales[0], zp, e.storage.min, e.storage.max);
          hi = numerics::quantize_f64(max, e.scales[0], zp, e.storage.min, e.storage.max);
        } else {
          lo = numerics::quantize_f32(float(min), sc, zp, e.storage.min, e.storage.max);
          hi = numerics::quantize_f32(float(max), sc, zp, e.storage.min, e.storage.max);
        }
      }
      choice.kernel = std::make_unique<ClampOpKernel>(graph, op, int(lo), int(hi));
      return choice;
    }
    case OpKind::kPad: {
      if (e.kind == ElementKind::kUniformPerAxis) {
        choice.why_not = "per-axis padding values run on the reference";
        return choice;
      }
      std::vector<int64_t> pads;
      for (const Attribute& a : op.attr("pads")->array) pads.push_back(a.i);
      const double value = op.attr("value") ? op.attr("value")->f : 0.0;
      // The fill element, computed as the reference computes it.
      Tensor one = Tensor::zeros(Type::tensor({1}, e));
      if (e.is_float()) {
        one.set_float(0, value);
      } else if (e.float_kind == FloatKind::kF64) {
        one.set_int(0, numerics::quantize_f64(value, e.scales[0], e.zero_points[0], e.storage.min, e.storage.max));
      } else {
        one.set_int(0, numerics::quantize_f32(float(value), numerics::compute_scale_f32(e.scales[0], e.float_kind),
                                              e.zero_points[0], e.storage.min, e.storage.max));
      }
      if (!e.is_float() && !e.is_uniform()) {
        choice.why_not = "padding of this element type runs on the reference";
        return choice;
      }
      choice.kernel = std::make_unique<PadOpKernel>(graph, op, pads, std::vector<uint8_t>(one.bytes(), one.bytes() + one.byte_size()));
      return choice;
    }
    case OpKind::kTranspose: {
      std::vector<int64_t> perm;
      for (const Attribute& a : op.attr("perm")->array) perm.push_back(a.i);
      if (element_byte_size(e) > 8 || element_byte_size(e) == 3) {
        choice.why_not = "element size";
        return choice;
      }
      choice.kernel = std::make_unique<TransposeOpKernel>(graph, op, perm);
      return choice;
    }
    default:
      choice.kernel = std::make_unique<ReshapeOpKernel>(graph, op);
      return choice;
  }
}

}  // namespace qrt::jit
