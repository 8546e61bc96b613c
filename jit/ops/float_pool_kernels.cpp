// qrt — float max and average pooling (qrt.max_pool2d / qrt.avg_pool2d) in either layout, and
// float qrt.mean and qrt.reduce_* over any axes, as plain C++ that runs on every host: the
// reference's formulas in its order (pooling: the window's rows, then columns, padding skipped;
// mean: the input in row-major order): max keeps the first NaN it meets, the averages sum in
// f32 (f64 tensors: in double) and divide once.
// NHWC pooling and means whose innermost dimension is kept work on whole channel rows in
// generic 4-lane vectors (SSE2 or NEON at the baseline): each lane is one output, its sum in
// the reference's order. Dynamic sizes are fine; results are the reference's bytes.
// bf16 and f16 tensors widen to f32 (exact) and each result rounds once to the type, which is
// how the reference computes them (float_widening.h); reduce_sum and reduce_prod round their
// double accumulators to the type directly, as the reference does, never through f32.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "ir/float_format.h"
#include "ir/nn_params.h"
#include "ir/ops.h"
#include "jit/ops/float_widening.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

namespace {

using f32x4 = float __attribute__((vector_size(16)));

f32x4 load4(const float* p) {
  f32x4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store4(float* p, f32x4 v) { std::memcpy(p, &v, sizeof v); }

// acc[i] = acc[i] + x[i], i < n (T: float, or double for f64 tensors).
template <typename T>
void add_row(T* acc, const T* x, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    for (; i + 4 <= n; i += 4) store4(acc + i, load4(acc + i) + load4(x + i));
  }
  for (; i < n; ++i) acc[i] = acc[i] + x[i];
}

// best[i] = x[i] where x[i] > best[i] or x[i] is NaN, unless best[i] is already NaN (the first
// NaN stays; equal values, ±0 included, keep the earlier one), i < n.
template <typename T>
void max_row(T* best, const T* x, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    for (; i + 4 <= n; i += 4) {
      const f32x4 b = load4(best + i), v = load4(x + i);
      store4(best + i, (((v > b) | (v != v)) & (b == b)) ? v : b);
    }
  }
  for (; i < n; ++i) {
    if ((x[i] > best[i] || std::isnan(x[i])) && !std::isnan(best[i])) best[i] = x[i];
  }
}

// T is the compute type: float for f32, bf16 and f16 (widened), double for f64 (the
// reference's f64 formulas: double maxima, double sums divided once).
template <typename T>
class FloatPoolOpKernel final : public OpKernel {
 public:
  FloatPoolOpKernel(const Graph& graph, const Op& op, Window2d w)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), w_(w), is_max_(op.kind == OpKind::kMaxPool2d) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const auto& xd = operands[0]->type.dims;
    if (xd.size() != 4) return Status::error_at(op_.loc, "'" + std::string(op_info(op_.kind).name) + "' op expects a 4-D input");
    std::vector<int64_t> dims = window_output_dims(xd, w_, xd[w_.channel_dim()]);
    if (dims[w_.height_dim()] <= 0 || dims[w_.width_dim()] <= 0) {
      return Status::error_at(op_.loc, "'" + std::string(op_info(op_.kind).name) +
                                           "' op the pooling window is larger than the padded input at run time");
    }
    return checked_result_dims(op_, std::move(dims));
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const auto& xd = x.type.dims;
    const auto& yd = y.type.dims;
    const int64_t c = xd[w_.channel_dim()], ih = xd[w_.height_dim()], iw = xd[w_.width_dim()];
    const int64_t oh = yd[w_.height_dim()], ow = yd[w_.width_dim()];
    const FloatKind kind = x.type.element.float_kind;
    const bool wide = kind != FloatKind::kF32;
    // NHWC: one plane of `c` lanes (a pixel's channels); NCHW: `c` planes of one lane.
    const int64_t planes = w_.nchw ? c : 1, lanes = w_.nchw ? 1 : c;
    // One task per output row of one image. bf16/f16 widen the window's input rows per task
    // (a row is widened kh / sh times in all) and round the output row once: no tensor-sized
    // buffers, so nothing to allocate or fault in per run.
    parallel.for_each(size_t(xd[0] * oh), [&](size_t t) {
      const int64_t n = int64_t(t) / oh, py = int64_t(t) % oh;
      thread_local std::vector<const T*> rows;
      thread_local std::vector<float> in_rows, out_row;
      rows.assign(size_t(w_.kh), nullptr);
      if (wide) {
        in_rows.resize(size_t(w_.kh * iw * lanes));
        out_row.resize(size_t(ow * lanes));
      }
      for (int64_t p = 0; p < planes; ++p) {
        for (int64_t ky = 0; ky < w_.kh; ++ky) {
          const int64_t r = py * w_.sh - w_.pad_top + ky;
          if (r < 0 || r >= ih) {
            rows[size_t(ky)] = nullptr;
            continue;
          }
          const int64_t at = w_.nchw ? ((n * c + p) * ih + r) * iw : (n * ih + r) * iw * c;
          if constexpr (std::is_same_v<T, float>) {
            if (wide) {
              float* dst = in_rows.data() + ky * iw * lanes;
              widen_to_f32(x.bytes() + at * 2, kind, iw * lanes, dst);
              rows[size_t(ky)] = dst;
              continue;
            }
          }
          rows[size_t(ky)] = reinterpret_cast<const T*>(x.bytes()) + at;
        }
        const int64_t out_at = w_.nchw ? ((n * c + p) * oh + py) * ow : (n * oh + py) * ow * c;
        if constexpr (std::is_same_v<T, float>) {
          if (wide) {
            pool_row(rows.data(), out_row.data(), lanes, iw, ow);
            narrow_from_f32(out_row.data(), kind, ow * lanes, y.bytes() + out_at * 2);
            continue;
          }
        }
        pool_row(rows.data(), reinterpret_cast<T*>(y.bytes()) + out_at, lanes, iw, ow);
      }
      release_large(in_rows);
      release_large(out_row);
    });
    return Status::ok();
  }

  std::string describe() const override {
    return std::string(float_kind_name(result_type_.element.float_kind)) + "_" + (is_max_ ? "maxpool" : "avgpool") + "_" +
           std::to_string(w_.kh) + "x" + std::to_string(w_.kw) + " (portable C++; " +
           widening_note(result_type_.element.float_kind) + "the reference's window order" +
           (w_.nchw ? "" : std::is_same_v<T, float> ? ", channel rows in vectors" : ", channel rows") + ")";
  }

 private:
  // One output row of `ow` pixels from the window's input rows: rows[ky] is the input row of
  // window row ky as iw pixels of `lanes` values, or null in the padding. Each output lane
  // folds its window in the reference's order (rows, then columns; padding skipped).
  void pool_row(const T* const* rows, T* out_row, int64_t lanes, int64_t iw, int64_t ow) const {
    for (int64_t px = 0; px < ow; ++px) {
      // The window's columns inside the input: kx in [k0, k1).
      const int64_t c0 = px * w_.sw - w_.pad_left;
      const int64_t k0 = std::max<int64_t>(0, -c0), k1 = std::min<int64_t>(w_.kw, iw - c0);
      T* out = out_row + px * lanes;
      int64_t count = 0;
      if (lanes == 1) {
        // NCHW: one value per position, in scalars (the same rule as max_row / add_row).
        T best = -INFINITY, sum = 0;
        for (int64_t ky = 0; ky < w_.kh; ++ky) {
          if (!rows[ky]) continue;
          const T* x = rows[ky] + c0;
          for (int64_t kx = k0; kx < k1; ++kx) {
            const T v = x[kx];
            if (is_max_) {
              if ((v > best || v != v) && best == best) best = v;
            } else {
              sum = sum + v;
            }
          }
          count += std::max<int64_t>(0, k1 - k0);
        }
        const T divisor = T(w_.count_include_pad ? w_.kh * w_.kw : count);
        out[0] = is_max_ ? best : sum / divisor;
        continue;
      }
      std::fill(out, out + lanes, is_max_ ? T(-INFINITY) : T(0));
      for (int64_t ky = 0; ky < w_.kh; ++ky) {
        if (!rows[ky]) continue;
        for (int64_t kx = k0; kx < k1; ++kx) {
          const T* x = rows[ky] + (c0 + kx) * lanes;
          if (is_max_) {
            max_row(out, x, lanes);
          } else {
            add_row(out, x, lanes);
          }
        }
        count += std::max<int64_t>(0, k1 - k0);
      }
      if (!is_max_) {
        const T divisor = T(w_.count_include_pad ? w_.kh * w_.kw : count);
        for (int64_t ch = 0; ch < lanes; ++ch) out[ch] = out[ch] / divisor;
      }
    }
  }

  Op op_;
  Window2d w_;
  bool is_max_;
};

/// qrt.mean and the qrt.reduce_* ops: reductions over axes rather than 2-D windows.
bool is_reduction(OpKind kind) {
  return kind == OpKind::kMean || kind == OpKind::kReduceSum || kind == OpKind::kReduceMax ||
         kind == OpKind::kReduceMin || kind == OpKind::kReduceProd;
}

// f32 qrt.mean and qrt.reduce_{sum,max,min,prod}: the input as rows of its kept innermost
// dimensions (`inner` values), each folded in row-major order into the accumulator row of its
// output. mean: f32 sums, then / count; reduce_sum / reduce_prod: double sums / products
// rounded once; reduce_max / reduce_min: the first of equal values, NaN when any input is NaN
// (the reference's formulas).
template <typename T>
class FloatMeanOpKernel final : public OpKernel {
 public:
  FloatMeanOpKernel(const Graph& graph, const Op& op, std::vector<bool> reduced, bool keepdims)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), reduced_(std::move(reduced)), keepdims_(keepdims) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const auto& xd = operands[0]->type.dims;
    if (xd.size() != reduced_.size()) {
      return Status::error_at(op_.loc, "'" + std::string(op_info(op_.kind).name) + "' op input has rank " + std::to_string(xd.size()) +
                                           ", the op reduces a rank-" + std::to_string(reduced_.size()) + " tensor");
    }
    std::vector<int64_t> dims;
    for (size_t d = 0; d < xd.size(); ++d) {
      if (!reduced_[d]) dims.push_back(xd[d]);
      else if (keepdims_) dims.push_back(1);
    }
    return checked_result_dims(op_, std::move(dims));
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel&) const override {
    const Tensor& x = *operands[0];
    const auto& xd = x.type.dims;
    const size_t rank = xd.size();
    // The kept innermost dimensions form contiguous rows of `inner` values in input and output.
    size_t split = rank;
    int64_t inner = 1;
    while (split > 0 && !reduced_[split - 1]) inner *= xd[--split];
    int64_t count = 1;
    for (size_t d = 0; d < rank; ++d) count *= reduced_[d] ? xd[d] : 1;
    // bf16/f16 input rows widen a block of about 4K values at a time (no tensor-sized buffer).
    thread_local std::vector<float> wide_block, wide_y;
    const FloatKind in_kind = x.type.element.float_kind, out_kind = y.type.element.float_kind;
    const T* xs = reinterpret_cast<const T*>(x.bytes());
    T* ys;
    if constexpr (std::is_same_v<T, float>) {
      ys = f32_destination(y, wide_y);
    } else {
      ys = reinterpret_cast<T*>(y.bytes());
    }
    const int64_t out_n = y.num_elements();
    const OpKind kind = op_.kind;
    const bool is_max = kind == OpKind::kReduceMax, is_min = kind == OpKind::kReduceMin;
    // reduce_sum and reduce_prod accumulate in double and round once, as the reference does.
    const bool in_double = kind == OpKind::kReduceSum || kind == OpKind::kReduceProd;
    std::fill(ys, ys + out_n, is_max ? T(-INFINITY) : is_min ? T(INFINITY) : T(0));
    std::vector<double> acc(in_double ? size_t(out_n) : 0, kind == OpKind::kReduceProd ? 1.0 : 0.0);
    std::vector<uint8_t> nan(is_max || is_min ? size_t(out_n) : 0, 0);
    const int64_t rows = inner == 0 ? 0 : x.num_elements() / inner;
    const int64_t block = std::max<int64_t>(1, 4096 / std::max<int64_t>(inner, 1));
    std::vector<int64_t> idx(split, 0);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t o = 0;  // the output row of input row r: its kept leading indices
      for (size_t d = 0; d < split; ++d) o = reduced_[d] ? o : o * xd[d] + idx[d];
      const T* row = xs + r * inner;
      if constexpr (std::is_same_v<T, float>) {
        if (in_kind != FloatKind::kF32) {
          if (r % block == 0) {
            const int64_t values = std::min(block, rows - r) * inner;
            wide_block.resize(size_t(values));
            widen_to_f32(x.bytes() + r * inner * 2, in_kind, values, wide_block.data());
          }
          row = wide_block.data() + (r % block) * inner;
        }
      }
      if (kind == OpKind::kReduceSum) {
        double* a = &acc[size_t(o * inner)];
        for (int64_t i = 0; i < inner; ++i) a[i] = a[i] + double(row[i]);
      } else if (kind == OpKind::kReduceProd) {
        double* a = &acc[size_t(o * inner)];
        for (int64_t i = 0; i < inner; ++i) a[i] = a[i] * double(row[i]);
      } else if (is_max || is_min) {
        T* best = ys + o * inner;
        uint8_t* seen_nan = &nan[size_t(o * inner)];
        for (int64_t i = 0; i < inner; ++i) {
          seen_nan[i] |= std::isnan(row[i]) ? 1 : 0;
          // std::max / std::min(acc, v): ties keep acc
          if (is_max) best[i] = best[i] < row[i] ? row[i] : best[i];
          else best[i] = row[i] < best[i] ? row[i] : best[i];
        }
      } else {
        add_row(ys + o * inner, row, inner);
      }
      for (size_t d = split; d-- > 0;) {
        if (++idx[d] < xd[d]) break;
        idx[d] = 0;
      }
    }
    for (int64_t o = 0; o < out_n; ++o) {
      // A double result rounds to the type once (through f32 a bf16/f16 result would round twice).
      if (in_double) ys[o] = out_kind == FloatKind::kF32 || out_kind == FloatKind::kF64 ? T(acc[size_t(o)]) : rounded_to(acc[size_t(o)], out_kind);
      else if (is_max || is_min) ys[o] = nan[size_t(o)] ? T(NAN) : ys[o];
      else ys[o] = ys[o] / T(count);
    }
    if constexpr (std::is_same_v<T, float>) store_f32_results(y, wide_y);
    release_large(wide_block);
    release_large(wide_y);
    return Status::ok();
  }

  std::string describe() const override {
    const char* what = op_.kind == OpKind::kReduceMax    ? "reduce_max"
                       : op_.kind == OpKind::kReduceMin  ? "reduce_min"
                       : op_.kind == OpKind::kReduceSum  ? "reduce_sum"
                       : op_.kind == OpKind::kReduceProd ? "reduce_prod"
                                                         : "mean";
    const FloatKind kind = result_type_.element.float_kind;
    return std::string(float_kind_name(kind)) + "_" + what + " (portable C++; " + widening_note(kind) +
           "the reference's row-major order, kept innermost rows together)";
  }

 private:
  Op op_;
  std::vector<bool> reduced_;
  bool keepdims_;
};

struct PreparedFloatPool final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  Window2d w;
  std::vector<bool> reduced;  // qrt.mean: the reduced axes
  bool keepdims = false;
};

class FloatPoolFamily final : public OpFamily {
 public:
  const char* name() const override { return "f32pool"; }
  KernelOp kind() const override { return KernelOp::kCount; }  // plain C++ on every host

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const ElementType& ex = graph.values[size_t(op.operands[0])].type.element;
    const ElementType& eo = graph.values[size_t(op.results[0])].type.element;
    if (!ex.is_float() || !(is_f32_or_narrower(ex.float_kind) || ex.float_kind == FloatKind::kF64) || !(ex == eo)) {
      return refuse(why_not, "only f32, f64, bf16 and f16 pooling and reductions with the result of the input's type have a kernel");
    }
    auto p = std::make_unique<PreparedFloatPool>();
    if (is_reduction(op.kind)) {
      const size_t rank = graph.values[size_t(op.operands[0])].type.rank();
      p->reduced.assign(rank, false);
      for (const Attribute& a : op.attr("axes")->array) {
        if (a.i < 0 || size_t(a.i) >= rank) return refuse(why_not, "a mean axis is out of range");
        p->reduced[size_t(a.i)] = true;
      }
      p->keepdims = op.attr("keepdims") && op.attr("keepdims")->i != 0;
      p->graph = &graph;
      p->op = &op;
      return std::unique_ptr<PreparedOp>(std::move(p));
    }
    QRT_ASSIGN_OR_RETURN(p->w, pool2d_window(op));
    p->graph = &graph;
    p->op = &op;
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp&, const Backend*) const override { return ""; }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend*) const override {
    const auto& p = static_cast<const PreparedFloatPool&>(prepared);
    const bool f64 = p.graph->values[size_t(p.op->operands[0])].type.element.float_kind == FloatKind::kF64;
    if (is_reduction(p.op->kind)) {
      if (f64) return std::unique_ptr<OpKernel>(std::make_unique<FloatMeanOpKernel<double>>(*p.graph, *p.op, p.reduced, p.keepdims));
      return std::unique_ptr<OpKernel>(std::make_unique<FloatMeanOpKernel<float>>(*p.graph, *p.op, p.reduced, p.keepdims));
    }
    if (f64) return std::unique_ptr<OpKernel>(std::make_unique<FloatPoolOpKernel<double>>(*p.graph, *p.op, p.w));
    return std::unique_ptr<OpKernel>(std::make_unique<FloatPoolOpKernel<float>>(*p.graph, *p.op, p.w));
  }
};

}  // namespace

const OpFamily& f32_pool_family() {
  static const FloatPoolFamily family;
  return family;
}

}  // namespace qrt::jit
