// qrt — f32 max and average pooling (qrt.max_pool2d / qrt.avg_pool2d) in either layout, as
// plain C++ that runs on every host: the reference's formulas in its window order (rows, then
// columns; padding skipped): max keeps the first NaN it meets, the average sums in f32 and
// divides by the count (or the window size with count_include_pad). Dynamic batch and spatial
// sizes are fine; results are the reference's bytes.
#include <algorithm>
#include <cmath>

#include "ir/nn_params.h"
#include "ir/ops.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

namespace {

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
    const float* xs = reinterpret_cast<const float*>(x.bytes());
    float* ys = reinterpret_cast<float*>(y.bytes());
    auto at = [&](int64_t n, int64_t ch, int64_t r, int64_t col, int64_t h, int64_t wd) {
      return w_.nchw ? ((n * c + ch) * h + r) * wd + col : ((n * h + r) * wd + col) * c + ch;
    };
    // One task per output row of one image.
    parallel.for_each(size_t(xd[0] * oh), [&](size_t t) {
      const int64_t n = int64_t(t) / oh, py = int64_t(t) % oh;
      for (int64_t px = 0; px < ow; ++px) {
        for (int64_t ch = 0; ch < c; ++ch) {
          double best = -INFINITY;
          float sum = 0.0f;
          int64_t count = 0;
          for (int64_t ky = 0; ky < w_.kh; ++ky) {
            const int64_t r = py * w_.sh - w_.pad_top + ky;
            if (r < 0 || r >= ih) continue;
            for (int64_t kx = 0; kx < w_.kw; ++kx) {
              const int64_t col = px * w_.sw - w_.pad_left + kx;
              if (col < 0 || col >= iw) continue;
              const float v = xs[at(n, ch, r, col, ih, iw)];
              ++count;
              if (is_max_) {
                if (double(v) > best || std::isnan(v)) best = std::isnan(best) ? best : double(v);  // NaN propagates
              } else {
                sum = sum + v;
              }
            }
          }
          const int64_t divisor = w_.count_include_pad ? w_.kh * w_.kw : count;
          ys[at(n, ch, py, px, oh, ow)] = is_max_ ? float(best) : sum / float(divisor);
        }
      }
    });
    return Status::ok();
  }

  std::string describe() const override {
    return std::string("f32_") + (is_max_ ? "maxpool" : "avgpool") + "_" + std::to_string(w_.kh) + "x" +
           std::to_string(w_.kw) + " (portable C++; the reference's window order)";
  }

 private:
  Op op_;
  Window2d w_;
  bool is_max_;
};

struct PreparedFloatPool final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  Window2d w;
};

class FloatPoolFamily final : public OpFamily {
 public:
  const char* name() const override { return "f32pool"; }
  KernelOp kind() const override { return KernelOp::kCount; }  // plain C++ on every host

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const ElementType& ex = graph.values[size_t(op.operands[0])].type.element;
    const ElementType& eo = graph.values[size_t(op.results[0])].type.element;
    if (!ex.is_float() || ex.float_kind != FloatKind::kF32 || !(ex == eo)) {
      return refuse(why_not, "only f32 float pooling has a kernel");
    }
    if (op.kind == OpKind::kMean) return refuse(why_not, "float means run on the reference");
    auto p = std::make_unique<PreparedFloatPool>();
    QRT_ASSIGN_OR_RETURN(p->w, pool2d_window(op));
    p->graph = &graph;
    p->op = &op;
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp&, const Backend*) const override { return ""; }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend*) const override {
    const auto& p = static_cast<const PreparedFloatPool&>(prepared);
    return std::unique_ptr<OpKernel>(std::make_unique<FloatPoolOpKernel>(*p.graph, *p.op, p.w));
  }
};

}  // namespace

const OpFamily& f32_pool_family() {
  static const FloatPoolFamily family;
  return family;
}

}  // namespace qrt::jit
