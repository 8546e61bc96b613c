// qrt — kernels for the ops around the arithmetic: quantized clamp/relu (the clamp
// micro-kernel of the chosen level), pad (fill, then row copies), transpose (strided gathers),
// reshape and scast (a copy, or nothing when planned in place); gather, slice, concat and
// resize, whose kernels are in copy_kernels.cpp. All but clamp are plain C++ that runs on
// every host: these ops move bytes, so code generation buys nothing. Static shapes only; the
// results are the reference's bit for bit by construction (clamp bounds are quantized with the
// same numerics calls).
#include <algorithm>
#include <cstring>

#include "ir/nn_params.h"
#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/ops/layout_ops.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

namespace {

class ClampOpKernel final : public OpKernel {
 public:
  ClampOpKernel(const Graph& graph, const Op& op, int lo, int hi, KernelDesc desc, std::shared_ptr<const CompiledKernel> code)
      : OpKernel(graph.values[size_t(op.results[0])].type), lo_(lo), hi_(hi),
        desc_(desc), code_(std::move(code)) {}
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;  // element-wise: any shape
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const size_t n = y.byte_size(), chunk = 256 * 1024;
    parallel.for_each((n + chunk - 1) / chunk, [&](size_t t) {
      const size_t begin = t * chunk;
      const ClampArgs args{operands[0]->bytes() + begin, y.bytes() + begin, std::min(chunk, n - begin), lo_, hi_};
      call_microkernel(code_->entry(), args, desc_);
    });
    return Status::ok();
  }
  bool can_overwrite_operand(size_t) const override { return true; }
  std::string describe() const override {
    return desc_.name() + " [" + std::to_string(lo_) + ", " + std::to_string(hi_) + "]";
  }

 private:
  int lo_, hi_;
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
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

// Any shape, dynamic dimensions included (a batch left open by an NCHW -> NHWC layout
// transpose): the strides follow the operand's run-time dimensions.
class TransposeOpKernel final : public OpKernel {
 public:
  TransposeOpKernel(const Graph& graph, const Op& op, std::vector<int64_t> perm)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), perm_(std::move(perm)) {
    const Type& x = graph.values[size_t(op.operands[0])].type;
    if (!x.has_static_shape() || !result_type_.has_static_shape()) {
      name_ = "transpose (strides per call)";
    } else {
      const auto& out = result_type_.dims;
      // (NCHW -> NHWC of 1 to 4 byte planes is planes_family's, planes_kernels.cpp.)
      name_ = !out.empty() && out.back() < 16 && x.dims.back() > out.back() ? "transpose_scatter" : "transpose_gather";
    }
  }
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const std::vector<int64_t>& in = operands[0]->type.dims;
    if (in.size() != perm_.size()) {
      return Status::error_at(op_.loc, "'qrt.transpose' op operand has rank " + std::to_string(in.size()) + ", perm has " +
                                           std::to_string(perm_.size()) + " entries");
    }
    std::vector<int64_t> dims;
    for (int64_t p : perm_) dims.push_back(in[size_t(p)]);
    return checked_result_dims(op_, std::move(dims));
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const auto& dims = y.type.dims;
    if (dims.empty() || y.num_elements() == 0) {
      std::memcpy(y.bytes(), operands[0]->bytes(), y.byte_size());
      return Status::ok();
    }
    const std::vector<int64_t>& in_dims = operands[0]->type.dims;
    // strides[d]: input stride of output dimension d; out_strides[d]: output stride of input
    // dimension d. Scatter (walk the input's rows) when the output's rows are short.
    std::vector<size_t> in_strides(in_dims.size(), 1), out_row_strides(dims.size(), 1), strides, out_strides(perm_.size());
    for (size_t d = in_dims.size(); d-- > 1;) in_strides[d - 1] = in_strides[d] * size_t(in_dims[d]);
    for (int64_t p : perm_) strides.push_back(in_strides[size_t(p)]);
    for (size_t d = dims.size(); d-- > 1;) out_row_strides[d - 1] = out_row_strides[d] * size_t(dims[d]);
    for (size_t d = 0; d < perm_.size(); ++d) out_strides[size_t(perm_[d])] = out_row_strides[d];
    const bool scatter = dims.back() < 16 && in_dims.back() > dims.back();
    const size_t es = y.element_size();
    const std::vector<int64_t>& rows_of = scatter ? in_dims : dims;
    const size_t row = size_t(rows_of.back()), rows = size_t(y.num_elements()) / row;
    const size_t per_task = std::max<size_t>(1, 64 * 1024 / (row * es));
    parallel.for_each((rows + per_task - 1) / per_task, [&](size_t t) {
      const size_t r0 = t * per_task, r1 = std::min(rows, r0 + per_task);
      const std::vector<int64_t>& walk_dims = scatter ? in_dims : dims;
      const std::vector<size_t>& walk_strides = scatter ? out_strides : strides;
      switch (es) {
        case 1: run_rows<uint8_t>(*operands[0], y, scatter, walk_dims, walk_strides, r0, r1); break;
        case 2: run_rows<uint16_t>(*operands[0], y, scatter, walk_dims, walk_strides, r0, r1); break;
        case 4: run_rows<uint32_t>(*operands[0], y, scatter, walk_dims, walk_strides, r0, r1); break;
        default: run_rows<uint64_t>(*operands[0], y, scatter, walk_dims, walk_strides, r0, r1); break;
      }
    });
    return Status::ok();
  }
  std::string describe() const override { return name_; }

 private:
  template <typename T>
  static void run_rows(const Tensor& x, Tensor& y, bool scatter, const std::vector<int64_t>& dims,
                       const std::vector<size_t>& strides, size_t r0, size_t r1) {
    const T* in = reinterpret_cast<const T*>(x.bytes());
    T* out = reinterpret_cast<T*>(y.bytes());
    if (scatter) {
      transpose_walk<T, true>(in, out, dims, strides, r0, r1);
    } else {
      transpose_walk<T, false>(in, out, dims, strides, r0, r1);
    }
  }

  Op op_;
  std::vector<int64_t> perm_;
  std::string name_;
};

class ReshapeOpKernel final : public OpKernel {
 public:
  ReshapeOpKernel(const Graph& graph, const Op& op) : OpKernel(graph.values[size_t(op.results[0])].type), op_(op) {}
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    // An scast keeps its operand's shape, whatever its type leaves open: inferring it as a
    // reshape's refused a result with two dynamic dimensions (fuzz_c_api -seed=54).
    if (op_.kind == OpKind::kSCast) return checked_result_dims(op_, operands[0]->type.dims);
    auto dims = reshape_dims(result_type_, operands[0]->num_elements());
    if (!dims.is_ok()) return Status::error_at(op_.loc, "'qrt.reshape' op " + dims.status().message());
    return dims;
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel&) const override {
    if (operands[0]->bytes() != y.bytes()) std::memcpy(y.bytes(), operands[0]->bytes(), y.byte_size());
    return Status::ok();  // planned in place: nothing to move
  }
  bool can_overwrite_operand(size_t) const override { return true; }
  std::string describe() const override {
    return op_.kind == OpKind::kSCast ? "scast_copy (nothing to move when planned in place)" : "reshape_copy";
  }

 private:
  Op op_;
};

// The checks every family here shares; "" when the op is eligible.
std::string shape_why_not(const Graph& graph, const Op& op) {
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  if (op.kind == OpKind::kTranspose) return "";  // any shape and type: stored values move
  const bool shape_free = op.kind == OpKind::kRelu || op.kind == OpKind::kClamp || op.kind == OpKind::kReshape ||
                          op.kind == OpKind::kSCast;
  if (!shape_free && (!x.has_static_shape() || !y.has_static_shape())) return "dynamic shapes run on the reference";
  if (shape_free && (x.element.kind == ElementKind::kUniformPerAxis || y.element.kind == ElementKind::kUniformPerAxis)) {
    return "per-axis types run on the reference";
  }
  return "";
}

struct PreparedClamp final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  int lo = 0, hi = 0;
  KernelDesc desc;  // all but the ISA
};

class ClampFamily final : public OpFamily {
 public:
  const char* name() const override { return "clamp"; }
  KernelOp kind() const override { return KernelOp::kClamp; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    *why_not = shape_why_not(graph, op);
    const ElementType& e = graph.values[size_t(op.results[0])].type.element;
    if (why_not->empty() && (e.kind != ElementKind::kUniform || e.storage.width != 8)) {
      *why_not = "only 8-bit per-tensor clamps have a kernel";
    }
    if (!why_not->empty()) return std::unique_ptr<PreparedOp>();
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
    auto p = std::make_unique<PreparedClamp>();
    p->graph = &graph;
    p->op = &op;
    p->lo = int(lo);
    p->hi = int(hi);
    p->desc.op = KernelOp::kClamp;
    p->desc.storage_signed = e.storage.is_signed;
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    KernelDesc d = static_cast<const PreparedClamp&>(prepared).desc;
    d.isa = backend->isa();
    d.generator = backend->generator();
    return backend->why_not(d);
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedClamp&>(prepared);
    KernelDesc d = p.desc;
    d.isa = backend->isa();
    d.generator = backend->generator();
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
    return std::unique_ptr<OpKernel>(std::make_unique<ClampOpKernel>(*p.graph, *p.op, p.lo, p.hi, d, std::move(code)));
  }
};

struct PreparedLayout final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  std::vector<int64_t> ints;     // pad: pads; transpose: perm; gather: axis; slice: first indices
  std::vector<int64_t> steps;    // slice
  std::vector<std::vector<int64_t>> maps;  // resize: per axis, the source index of each output index
  std::vector<uint8_t> fill;     // pad: one element's bytes
  bool interpolate = false;      // resize: linear or cubic
};

class LayoutFamily final : public OpFamily {
 public:
  const char* name() const override { return "layout"; }
  KernelOp kind() const override { return KernelOp::kCount; }  // plain C++ on every host

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    *why_not = shape_why_not(graph, op);
    if (!why_not->empty()) return std::unique_ptr<PreparedOp>();
    const ElementType& e = graph.values[size_t(op.results[0])].type.element;
    auto p = std::make_unique<PreparedLayout>();
    p->graph = &graph;
    p->op = &op;
    if (op.kind == OpKind::kPad) {
      if (e.kind == ElementKind::kUniformPerAxis) {
        *why_not = "per-axis padding values run on the reference";
        return std::unique_ptr<PreparedOp>();
      }
      if (!e.is_float() && !e.is_uniform()) {
        *why_not = "padding of this element type runs on the reference";
        return std::unique_ptr<PreparedOp>();
      }
      for (const Attribute& a : op.attr("pads")->array) p->ints.push_back(a.i);
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
      p->fill.assign(one.bytes(), one.bytes() + one.byte_size());
    } else if (op.kind == OpKind::kGatherElements) {
      p->ints = {op.attr("axis")->i};
    } else if (op.kind == OpKind::kGather) {
      const Type& idx = graph.values[size_t(op.operands[1])].type;
      if (!idx.has_static_shape()) {
        *why_not = "dynamic shapes run on the reference";
        return std::unique_ptr<PreparedOp>();
      }
      p->ints = {op.attr("axis") ? op.attr("axis")->i : 0};
    } else if (op.kind == OpKind::kResize && op.attr("mode") && op.attr("mode")->s != "nearest") {
      p->interpolate = true;  // linear or cubic (resize_kernels.cpp), if it takes the op
      if (!make_interpolating_resize_kernel(graph, op, why_not)) return std::unique_ptr<PreparedOp>();
    } else if (op.kind == OpKind::kResize) {
      const Type& x = graph.values[size_t(op.operands[0])].type;
      std::vector<double> scales;
      const std::vector<int64_t> dims = resize_output_dims(op, x.dims, graph.values[size_t(op.results[0])].type.dims, &scales);
      const std::string coord =
          op.attr("coordinate_transformation_mode") ? op.attr("coordinate_transformation_mode")->s : "half_pixel";
      const std::string nearest = op.attr("nearest_mode") ? op.attr("nearest_mode")->s : "round_prefer_floor";
      for (size_t d = 0; d < dims.size(); ++d) {
        p->maps.push_back(resize_nearest_indices(x.dims[d], dims[d], scales[d], coord, nearest));
      }
    } else if (op.kind == OpKind::kConcat) {
      for (int v : op.operands) {
        const ElementType& ie = graph.values[size_t(v)].type.element;
        if (!graph.values[size_t(v)].type.has_static_shape()) {
          *why_not = "dynamic shapes run on the reference";
          return std::unique_ptr<PreparedOp>();
        }
        if (e.is_uniform() && !(ie == e) && (e.kind != ElementKind::kUniform || ie.kind != ElementKind::kUniform)) {
          *why_not = "per-axis requantizing concatenation runs on the reference";
          return std::unique_ptr<PreparedOp>();
        }
      }
      p->ints = {op.attr("axis")->i};
    } else if (op.kind == OpKind::kSlice) {
      // The first index and step of every dimension, as the reference computes them.
      const Type& x = graph.values[size_t(op.operands[0])].type;
      const auto& starts = op.attr("starts")->array;
      const Attribute* steps = op.attr("steps");
      for (size_t d = 0; d < x.dims.size(); ++d) {
        const int64_t step = steps ? steps->array[d].i : 1;
        p->ints.push_back(slice_start(x.dims[d], starts[d].i, step));
        p->steps.push_back(step);
      }
    } else if (op.kind == OpKind::kTranspose) {
      for (const Attribute& a : op.attr("perm")->array) p->ints.push_back(a.i);
      if (element_byte_size(e) > 8 || element_byte_size(e) == 3) {
        *why_not = "element size";
        return std::unique_ptr<PreparedOp>();
      }
    }
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp&, const Backend*) const override { return ""; }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend*) const override {
    const auto& p = static_cast<const PreparedLayout&>(prepared);
    switch (p.op->kind) {
      case OpKind::kPad: return std::unique_ptr<OpKernel>(std::make_unique<PadOpKernel>(*p.graph, *p.op, p.ints, p.fill));
      case OpKind::kTranspose: return std::unique_ptr<OpKernel>(std::make_unique<TransposeOpKernel>(*p.graph, *p.op, p.ints));
      case OpKind::kGather: return make_gather_kernel(*p.graph, *p.op, p.ints[0]);
      case OpKind::kGatherElements: return make_gather_elements_kernel(*p.graph, *p.op, p.ints[0]);
      case OpKind::kConcat: return make_concat_kernel(*p.graph, *p.op, p.ints[0]);
      case OpKind::kResize: {
        if (!p.interpolate) return make_resize_kernel(*p.graph, *p.op, p.maps);
        std::string why;
        std::unique_ptr<OpKernel> k = make_interpolating_resize_kernel(*p.graph, *p.op, &why);
        if (!k) return Status::error("qrt.resize: " + why).with_code(ErrorCode::kUnsupported);
        return k;
      }
      case OpKind::kSlice: return make_slice_kernel(*p.graph, *p.op, p.ints, p.steps);
      default: return std::unique_ptr<OpKernel>(std::make_unique<ReshapeOpKernel>(*p.graph, *p.op));
    }
  }
};

}  // namespace

const OpFamily& clamp_family() {
  static const ClampFamily family;
  return family;
}

const OpFamily& layout_family() {
  static const LayoutFamily family;
  return family;
}

}  // namespace qrt::jit
