// qrt — quantized max and average pooling (NHWC, 8-bit per tensor) on the pooling
// micro-kernel, which reads each output pixel's window through tap pointers, like the
// depthwise kernel: windows touching the padding get one pointer row per pixel (padding taps
// point at a row of qmin for max, of the zero point for average), interior runs step one row
// along the input.
//
// Max: the largest stored value of the window; a row of qmin never wins, and every window
// holds at least one input position (pads < window, checked).
// Average: acc = Σ_taps x - zx·taps = Σ_inside (x - zx) exactly in int32, then
// clamp(rne(f32(acc) · M) + zo) with M = f32(s_in / (s_out · count)) per pixel (count = the
// positions inside the input, or the whole window with count_include_pad).
#include <algorithm>
#include <cmath>

#include "ir/nn_params.h"
#include "ir/numerics.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/ops/op_kernel.h"
#include "jit/ops/window_runs.h"

namespace qrt::jit {

namespace {

// A pooling task's least work in window bytes read (outputs x taps): ~1.5 µs of vector max
// or sum, above the ~1 µs a hand-off to another thread costs.
constexpr int64_t kMinPoolTaskBytes = 96 * 1024;


// Input positions of a window along one axis: start .. start + k - 1 clipped to [0, size).
int64_t inside(int64_t start, int64_t k, int64_t size) {
  return std::max<int64_t>(0, std::min(start + k, size) - std::max<int64_t>(start, 0));
}

class PoolOpKernel final : public OpKernel {
 public:
  PoolOpKernel(const Graph& graph, const Op& op, const Window2d& w, KernelDesc desc, std::shared_ptr<const CompiledKernel> code,
               PoolArgs params, uint8_t pad_byte, std::vector<float> multipliers)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), w_(w), desc_(desc), code_(std::move(code)),
        params_(params), pad_byte_(pad_byte), multipliers_(std::move(multipliers)) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const Tensor& x = *operands[0];
    const std::string name = desc_.op == KernelOp::kMaxPool ? "'qrt.max_pool2d'" : "'qrt.avg_pool2d'";
    if (x.type.dims[3] != int64_t(desc_.channels)) {
      return Status::error_at(op_.loc, name + " op input has " + std::to_string(x.type.dims[3]) +
                                           " channels at run time, the plan was made for " + std::to_string(desc_.channels));
    }
    std::vector<int64_t> dims = window_output_dims(x.type.dims, w_, desc_.channels);
    if (dims[1] <= 0 || dims[2] <= 0) {
      return Status::error_at(op_.loc, name + " op the pooling window is larger than the padded input at run time");
    }
    if (op_.kind == OpKind::kMean) {
      // A mean over H and W is a global average pool; its result keeps or drops those axes.
      if (x.type.dims[1] != w_.kh || x.type.dims[2] != w_.kw) {
        return Status::error_at(op_.loc, "'qrt.mean' op input is " + std::to_string(x.type.dims[1]) + "x" +
                                             std::to_string(x.type.dims[2]) + " at run time, the plan was made for " +
                                             std::to_string(w_.kh) + "x" + std::to_string(w_.kw));
      }
      return result_type_.dims;
    }
    return dims;
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const std::vector<int64_t> dims = window_output_dims(x.type.dims, w_, desc_.channels);
    const int64_t c = desc_.channels, oh = dims[1], ow = dims[2];
    // The calling thread's row; workers read it through `pad` (naming a thread_local inside
    // the task would give each worker its own, empty one).
    thread_local std::vector<uint8_t> pad_row;
    pad_row.assign(size_t(window_pad_bytes(w_, x.type.dims[2], ow, c)), pad_byte_);
    const uint8_t* pad = pad_row.data();
    const unsigned taps = desc_.taps;
    const bool per_pixel_count = desc_.op == KernelOp::kAvgPool && !w_.count_include_pad;
    // Tasks of whole output rows, as many as the work is worth (a small model's pooling runs
    // on the calling thread: a hand-off costs more than the pooling).
    const int64_t rows = dims[0] * oh;
    const int64_t tasks = std::min(rows, worthwhile_tasks(rows * ow * c * taps, kMinPoolTaskBytes, parallel));
    const int64_t rows_per_task = (rows + tasks - 1) / tasks;
    parallel.for_each(size_t((rows + rows_per_task - 1) / rows_per_task), [&](size_t task) {
      for (int64_t r = int64_t(task) * rows_per_task; r < std::min(rows, (int64_t(task) + 1) * rows_per_task); ++r) {
        pool_row(x, y, r / oh, r % oh, oh, ow, pad, per_pixel_count);
      }
    });
    return Status::ok();
  }

  std::string describe() const override { return desc_.name(); }

 private:
  // Output row oy of image n.
  void pool_row(const Tensor& x, Tensor& y, int64_t n, int64_t oy, int64_t oh, int64_t ow, const uint8_t* pad,
                bool per_pixel_count) const {
    const int64_t c = desc_.channels, h = x.type.dims[1], wd = x.type.dims[2];
    const unsigned taps = desc_.taps;
    thread_local std::vector<const uint8_t*> ptrs;
    PoolArgs args = params_;
    args.out_stride = c;
    uint8_t* out_row = y.bytes() + (n * oh + oy) * ow * c;
    const int64_t rows = inside(oy * w_.sh - w_.pad_top, w_.kh, h);
    for_each_window_run(w_, x.bytes(), n, h, wd, c, oy, ow, taps, pad, ptrs,
                        [&](int64_t from, int64_t to, const uint8_t* const* row, bool stepping) {
                          args.taps_stride = stepping ? 0 : int64_t(8 * taps);
                          args.pixel_step = stepping ? w_.sw * c : 0;
                          // Average without count_include_pad: the divisor is the pixel's
                          // count of input positions (the same along a stepped run).
                          const int64_t step = per_pixel_count && !stepping ? 1 : to - from;
                          for (int64_t p = from; p < to; p += step) {
                            const int64_t cols = stepping ? w_.kw : inside(p * w_.sw - w_.pad_left, w_.kw, wd);
                            args.m = multipliers_[per_pixel_count ? size_t(rows * cols) : multipliers_.size() - 1];
                            args.taps = row + (p - from) * (stepping ? 0 : int64_t(taps));
                            args.out = out_row + p * c;
                            args.pixels = step;
                            call_microkernel(code_->entry(), args, desc_);
                          }
                        });
  }

  Op op_;
  Window2d w_;
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
  PoolArgs params_;
  uint8_t pad_byte_;
  std::vector<float> multipliers_;  // by count of window positions (0 .. kh·kw)
};

// Max pooling over NCHW planes (ONNX layouts): plain C++, one task per (image, channel)
// plane; padding never wins, and every window holds an input position (checked).
class PlanarMaxPoolKernel final : public OpKernel {
 public:
  PlanarMaxPoolKernel(const Graph& graph, const Op& op, const Window2d& w)
      : OpKernel(graph.values[size_t(op.results[0])].type), w_(w),
        signed_(graph.values[size_t(op.operands[0])].type.element.storage.is_signed) {}
  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return window_output_dims(operands[0]->type.dims, w_, operands[0]->type.dims[1]);
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const int64_t h = x.type.dims[2], wd = x.type.dims[3], oh = y.type.dims[2], ow = y.type.dims[3];
    parallel.for_each(size_t(x.type.dims[0] * x.type.dims[1]), [&](size_t plane) {
      const uint8_t* in = x.bytes() + plane * size_t(h * wd);
      uint8_t* out = y.bytes() + plane * size_t(oh * ow);
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          int best = -1000;
          for (int64_t ky = 0; ky < w_.kh; ++ky) {
            const int64_t iy = oy * w_.sh - w_.pad_top + ky;
            if (iy < 0 || iy >= h) continue;
            for (int64_t kx = 0; kx < w_.kw; ++kx) {
              const int64_t ix = ox * w_.sw - w_.pad_left + kx;
              if (ix < 0 || ix >= wd) continue;
              const uint8_t b = in[iy * wd + ix];
              best = std::max(best, signed_ ? int(int8_t(b)) : int(b));
            }
          }
          out[oy * ow + ox] = uint8_t(best);
        }
      }
    });
    return Status::ok();
  }
  std::string describe() const override { return std::string(signed_ ? "qs8" : "qu8") + "_maxpool_nchw"; }

 private:
  Window2d w_;
  bool signed_;
};

struct PreparedPool final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  Window2d w;
  bool planar = false;     // NCHW max pooling: plain C++ on every level
  KernelDesc desc;         // all but the ISA
  PoolArgs params{};
  uint8_t pad = 0;
  std::vector<float> multipliers;
};

class PoolFamily final : public OpFamily {
 public:
  const char* name() const override { return "pool"; }
  KernelOp kind() const override { return KernelOp::kAvgPool; }
  KernelOp kind_of(const Op& op) const override {
    return op.kind == OpKind::kMaxPool2d ? KernelOp::kMaxPool : KernelOp::kAvgPool;
  }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const ElementType& ex = graph.values[size_t(op.operands[0])].type.element;
    const ElementType& eo = graph.values[size_t(op.results[0])].type.element;
    if (!ex.is_quant()) return refuse(why_not, "float pooling runs on the reference");
    if (!is_8bit_per_tensor(ex) || !is_8bit_per_tensor(eo)) return refuse(why_not, "only 8-bit per-tensor pooling has a kernel");
    const Type& xt = graph.values[size_t(op.operands[0])].type;
    auto p = std::make_unique<PreparedPool>();
    p->graph = &graph;
    p->op = &op;
    Window2d& w = p->w;
    if (op.kind == OpKind::kMean) {
      // Mean over H and W of NHWC: a global average pool (same formula, count = H·W).
      std::vector<int64_t> axes;
      for (const Attribute& a : op.attr("axes")->array) axes.push_back(a.i);
      std::sort(axes.begin(), axes.end());
      if (xt.rank() != 4 || axes != std::vector<int64_t>{1, 2} || xt.dims[1] <= 0 || xt.dims[2] <= 0) {
        return refuse(why_not, "only means over the H and W axes of a 4-D tensor with static H, W have a kernel");
      }
      w.kh = xt.dims[1];
      w.kw = xt.dims[2];
      w.count_include_pad = true;
    } else {
      QRT_ASSIGN_OR_RETURN(w, pool2d_window(op));
    }
    if (w.nchw && op.kind == OpKind::kMaxPool2d && w.pad_top < w.kh && w.pad_bottom < w.kh && w.pad_left < w.kw &&
        w.pad_right < w.kw && ex == eo) {
      p->planar = true;
      return std::unique_ptr<PreparedOp>(std::move(p));
    }
    const int64_t channels = xt.rank() == 4 ? xt.dims[3] : -1;
    if (w.nchw || channels <= 0) return refuse(why_not, "only NHWC pooling with a static channel count has a kernel");
    if (w.pad_top >= w.kh || w.pad_bottom >= w.kh || w.pad_left >= w.kw || w.pad_right >= w.kw || w.kh * w.kw > 4096) {
      return refuse(why_not, "padding as large as the window (or a window over 4096 positions)");
    }
    const bool is_max = op.kind == OpKind::kMaxPool2d;
    if (!graph.values[size_t(op.results[0])].type.has_static_shape() && op.kind == OpKind::kMean) {
      return refuse(why_not, "a mean with a dynamic result shape runs on the reference");
    }
    if (is_max && !(ex == eo)) return refuse(why_not, "max pooling between different types");
    KernelDesc& d = p->desc;
    d.op = is_max ? KernelOp::kMaxPool : KernelOp::kAvgPool;
    d.storage_signed = ex.storage.is_signed;
    d.out = eo.storage.is_signed ? OutKind::kS8 : OutKind::kU8;
    d.taps = uint16_t(w.kh * w.kw);
    d.channels = uint32_t(channels);
    const int32_t zx = int32_t(ex.zero_points[0]);
    if (!is_max) {
      p->params.bias = -zx * int32_t(d.taps);
      p->params.zo = int32_t(eo.zero_points[0]);
      p->params.lo = float(eo.storage.min - p->params.zo);
      p->params.hi = float(eo.storage.max - p->params.zo);
      for (int64_t count = 0; count <= w.kh * w.kw; ++count) {
        const float m = count == 0 ? 0.0f : numerics::multiplier(ex.scales[0], eo.scales[0] * double(count));
        if (!std::isfinite(m)) return refuse(why_not, "a pooling multiplier is not finite");
        p->multipliers.push_back(m);
      }
    } else {
      p->multipliers.push_back(0.0f);
    }
    p->pad = uint8_t(is_max ? ex.storage.min : zx);  // qmin never wins; zx adds nothing
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedPool&>(prepared);
    if (p.planar) return "";
    KernelDesc d = p.desc;
    d.isa = backend->isa();
    d.generator = backend->generator();
    return backend->why_not(d);
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedPool&>(prepared);
    if (p.planar) return std::unique_ptr<OpKernel>(std::make_unique<PlanarMaxPoolKernel>(*p.graph, *p.op, p.w));
    KernelDesc d = p.desc;
    d.isa = backend->isa();
    d.generator = backend->generator();
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
    return std::unique_ptr<OpKernel>(
        std::make_unique<PoolOpKernel>(*p.graph, *p.op, p.w, d, std::move(code), p.params, p.pad, p.multipliers));
  }
};

}  // namespace

const OpFamily& pool_family() {
  static const PoolFamily family;
  return family;
}

}  // namespace qrt::jit
