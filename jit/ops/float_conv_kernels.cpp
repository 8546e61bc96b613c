// qrt — qrt.conv2d with f32 activations and constant f32 or quantized (hybrid) filters, any
// layout, stride, dilation, padding and group count (bf16 and f16 operands widened to f32
// exactly, results rounded once: float_widening.h), in three forms:
//   - NHWC 1x1, stride 1, no padding, one group: the activations are the GEMM's rows (no copy);
//   - NHWC depthwise (one input and one output channel per group): the kF32Dwconv row kernel;
//   - anything else: per group, im2col blocks of pixels (K ordered input channel, kernel row,
//     kernel column, as the reference sums; padding taps are zeros) times the filter matrix.
// Every form keeps the reference's order exactly (acc from +0, acc + f32(x·w) in increasing
// k, then + bias, then the fused clamp as qrt.clamp): a zero tap adds +0 or -0 to a sum that
// is never -0, so skipping or including one changes nothing; filters must be finite (0 · inf
// would not be). The results are the reference's bytes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/nn_params.h"
#include "ir/numerics.h"
#include "ir/ops.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/ops/float_gemm_tasks.h"
#include "jit/ops/float_widening.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

namespace {

constexpr int64_t kBlockRows = 48;  // im2col pixels per task: a multiple of every native tile's rows

enum class ConvForm { kPointwise, kDepthwise, kIm2col };

class FloatConvOpKernel final : public OpKernel {
 public:
  FloatConvOpKernel(const Graph& graph, const Op& op, Window2d w, ConvForm form, int64_t out_c, int64_t in_per_group,
                    std::vector<float> filters, std::vector<float> bias, std::optional<FusedClamp> clamp, unsigned hybrid,
                    KernelDesc desc, std::shared_ptr<const CompiledKernel> code)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), w_(w), form_(form), out_c_(out_c),
        ig_(in_per_group), ocpg_(out_c / w.groups), k_(in_per_group * w.kh * w.kw),
        n_padded_(f32_padded_cols(ocpg_)), filters_(std::move(filters)), bias_(std::move(bias)),
        lo_(clamp ? rounded_to(clamp->min, result_type_.element.float_kind) : -INFINITY),
        hi_(clamp ? rounded_to(clamp->max, result_type_.element.float_kind) : INFINITY), hybrid_(hybrid),
        desc_(desc), code_(std::move(code)) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const auto& xd = operands[0]->type.dims;
    if (xd.size() != 4 || xd[w_.channel_dim()] != ig_ * w_.groups) {
      return Status::error_at(op_.loc, "'qrt.conv2d' op input has shape [" + dims_to_string(xd) + "], the filter expects " +
                                           std::to_string(ig_ * w_.groups) + " channels");
    }
    std::vector<int64_t> dims = window_output_dims(xd, w_, out_c_);
    if (dims[w_.height_dim()] <= 0 || dims[w_.width_dim()] <= 0) {
      return Status::error_at(op_.loc, "'qrt.conv2d' op the window is larger than the padded input at run time");
    }
    return checked_result_dims(op_, std::move(dims));
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    thread_local std::vector<float> wide_x, wide_y;
    const float* xs = f32_elements(x, wide_x);
    float* ys = f32_destination(y, wide_y);
    if (form_ == ConvForm::kPointwise) {
      // Every pixel is a row of C values: y[pixels x out_c] = x[pixels x C] · W.
      const int64_t pixels = x.num_elements() / k_;
      for_each_f32_row_block(parallel, pixels, k_, out_c_, [&](int64_t p0, int64_t rows) {
        gemm(xs + p0 * k_, k_, ys + p0 * out_c_, out_c_, rows, 0);
      });
    } else if (form_ == ConvForm::kDepthwise) {
      run_depthwise(xs, x.type.dims, ys, y.type.dims, parallel);
    } else {
      run_im2col(xs, x.type.dims, ys, y.type.dims, parallel);
    }
    store_f32_results(y, wide_y);
    release_large(wide_x);
    release_large(wide_y);
    return Status::ok();
  }

  bool reads_operand(size_t index) const override { return index == 0; }  // filters and bias prepared once
  bool holds_operand_copy(size_t index) const override { return index != 0; }
  std::string describe() const override {
    std::string name = desc_.name();
    if (hybrid_) name.replace(0, std::string("f32_f32_f32").size(), "f32_qc" + std::to_string(hybrid_) + "w_f32");
    if (form_ != ConvForm::kDepthwise) {
      name.replace(name.find("gemm"), 4, form_ == ConvForm::kPointwise ? "conv1x1" : "conv_im2col");
    }
    return name + " (" + widening_note(result_type_.element.float_kind) + "the reference's order of f32 sums, no FMA" +
           (hybrid_ ? "; filters dequantized once" : "") + ")";
  }
  size_t owned_bytes() const override { return (filters_.size() + bias_.size()) * sizeof(float); }

 private:
  // rows x ocpg results of group g from rows of k_ values (x_stride apart) into y.
  void gemm(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t rows, int64_t g) const {
    const float* bias = bias_.empty() ? nullptr : &bias_[size_t(g * n_padded_)];
    const F32GemmArgs args{x, &filters_[size_t(g * k_ * n_padded_)], bias, y, rows, k_, ocpg_, n_padded_, x_stride,
                           y_stride, lo_, hi_};
    call_microkernel(code_->entry(), args, desc_);
  }

  // f32 activations xs of shape xd into f32 results ys of shape yd.
  void run_depthwise(const float* xs, const std::vector<int64_t>& xd, float* ys, const std::vector<int64_t>& yd,
                     Parallel& parallel) const {
    const int64_t batch = xd[0], ih = xd[1], iw = xd[2], c = xd[3], oh = yd[1], ow = yd[2];
    // Output rows in as many tasks as the work is worth (a 7x7 layer's row is ~2 µs: handing
    // each to another thread would cost more than it saves).
    const int64_t out_rows = batch * oh;
    for_each_in_worthwhile_tasks(parallel, out_rows, out_rows * ow * c * w_.kh * w_.kw, [&](int64_t r) {
      thread_local std::vector<const float*> rows;
      const int64_t n = r / oh, oy = r % oh;
      rows.assign(size_t(w_.kh), nullptr);
      for (int64_t ky = 0; ky < w_.kh; ++ky) {
        const int64_t iy = oy * w_.sh - w_.pad_top + ky * w_.dh;
        if (iy >= 0 && iy < ih) rows[size_t(ky)] = xs + (n * ih + iy) * iw * c;
      }
      const F32DwArgs args{rows.data(), filters_.data(), bias_.empty() ? nullptr : bias_.data(), ys + r * ow * c,
                           c, ow, iw, w_.kh, w_.kw, w_.sw, w_.dw, w_.pad_left, lo_, hi_};
      call_microkernel(code_->entry(), args, desc_);
    });
  }

  void run_im2col(const float* xs, const std::vector<int64_t>& xd, float* ys, const std::vector<int64_t>& yd,
                  Parallel& parallel) const {
    const int64_t batch = xd[0], ih = xd[w_.height_dim()], iw = xd[w_.width_dim()], c = xd[w_.channel_dim()];
    const int64_t oh = yd[w_.height_dim()], ow = yd[w_.width_dim()], pixels = oh * ow;
    const int64_t tiles = (pixels + kBlockRows - 1) / kBlockRows;
    // Element offset of activation (n, channel, row, column) in the layout.
    auto x_at = [&](int64_t n, int64_t ch, int64_t r, int64_t col) {
      return w_.nchw ? ((n * c + ch) * ih + r) * iw + col : ((n * ih + r) * iw + col) * c + ch;
    };
    // Offsets of the window's taps from its first tap, in K order (channel, row, column):
    // pixels whose window is inside the input gather by these alone.
    std::vector<int64_t> tap_offsets(static_cast<size_t>(k_));
    for (int64_t ci = 0, kk = 0; ci < ig_; ++ci) {
      for (int64_t ky = 0; ky < w_.kh; ++ky) {
        for (int64_t kx = 0; kx < w_.kw; ++kx) tap_offsets[size_t(kk++)] = x_at(0, ci, ky * w_.dh, kx * w_.dw);
      }
    }
    // One block of kBlockRows pixels of one group of one image: gather, then the GEMM.
    auto im2col_block = [&](int64_t t) {
      const int64_t tile = t % tiles, g = t / tiles % w_.groups, n = t / tiles / w_.groups;
      const int64_t p0 = tile * kBlockRows, rows = std::min(kBlockRows, pixels - p0);
      // Scratch per worker thread, reused by every tile (every element is written below).
      thread_local std::vector<float> a, out;
      a.resize(size_t(kBlockRows * k_));
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t py = (p0 + r) / ow, px = (p0 + r) % ow;
        const int64_t y0 = py * w_.sh - w_.pad_top, x0 = px * w_.sw - w_.pad_left;
        float* row = &a[size_t(r * k_)];
        if (y0 >= 0 && y0 + (w_.kh - 1) * w_.dh < ih && x0 >= 0 && x0 + (w_.kw - 1) * w_.dw < iw) {
          const float* first = xs + x_at(n, g * ig_, y0, x0);
          for (int64_t kk = 0; kk < k_; ++kk) row[kk] = first[tap_offsets[size_t(kk)]];
          continue;
        }
        for (int64_t ci = 0; ci < ig_; ++ci) {
          for (int64_t ky = 0; ky < w_.kh; ++ky) {
            const int64_t yy = y0 + ky * w_.dh;
            for (int64_t kx = 0; kx < w_.kw; ++kx) {
              const int64_t xx = x0 + kx * w_.dw;
              const bool inside = yy >= 0 && yy < ih && xx >= 0 && xx < iw;
              *row++ = inside ? xs[x_at(n, g * ig_ + ci, yy, xx)] : 0.0f;
            }
          }
        }
      }
      if (!w_.nchw) {  // NHWC: the group's columns of the block's output pixels, in place
        gemm(a.data(), k_, ys + (n * pixels + p0) * out_c_ + g * ocpg_, out_c_, rows, g);
        return;
      }
      out.resize(size_t(kBlockRows * ocpg_));
      gemm(a.data(), k_, out.data(), ocpg_, rows, g);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < ocpg_; ++j) {
          ys[((n * out_c_ + g * ocpg_ + j) * oh * ow) + p0 + r] = out[size_t(r * ocpg_ + j)];
        }
      }
    };
    for_each_in_worthwhile_tasks(parallel, batch * w_.groups * tiles, batch * pixels * out_c_ * k_, im2col_block);
  }

  Op op_;
  Window2d w_;
  ConvForm form_;
  int64_t out_c_, ig_, ocpg_, k_, n_padded_;
  // Per group: k x n_padded in 16-column panels (padding 0), n_padded bias values. Depthwise:
  // taps x C, C values.
  std::vector<float> filters_, bias_;
  float lo_, hi_;  // the fused clamp's bounds rounded to the result type (-inf, +inf without one)
  unsigned hybrid_;  // the weights' storage bits; 0: f32 weights
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
};

struct PreparedF32Conv final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  Window2d w;
  ConvForm form = ConvForm::kIm2col;
  int64_t out_c = 0, ig = 0;
  std::vector<float> filters, bias;
  unsigned hybrid = 0;  // the weights' storage bits; 0: f32 weights
};

class F32ConvFamily final : public OpFamily {
 public:
  const char* name() const override { return "f32conv"; }
  KernelOp kind() const override { return KernelOp::kF32Gemm; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const Type& x = graph.values[size_t(op.operands[0])].type;
    const Type& ft = graph.values[size_t(op.operands[1])].type;
    const Type& out = graph.values[size_t(op.results[0])].type;
    const FloatKind kind = x.element.float_kind;  // the verifier ties filters, bias and result to it
    if (!x.element.is_float() || !is_f32_or_narrower(kind) || !out.element.is_float() || out.element.float_kind != kind) {
      return refuse(why_not, "only f32, bf16 and f16 activations and results have a float convolution kernel");
    }
    const bool hybrid = ft.element.kind == ElementKind::kUniform || ft.element.kind == ElementKind::kUniformPerAxis;
    if (ft.element.float_kind != kind || !(ft.element.is_float() || hybrid)) {
      return refuse(why_not, "filters must be floats of the activations' type or quantized with it as expressed type");
    }
    std::unique_ptr<Tensor> f = constant_operand(graph, op.operands[1]);
    if (!f || ft.rank() != 4) return refuse(why_not, "the filter is not a 4-D constant");
    QRT_ASSIGN_OR_RETURN(Window2d w, conv2d_window(op, ft.dims));
    auto p = std::make_unique<PreparedF32Conv>();
    const int64_t out_c = ft.dims[0], ig = w.nchw ? ft.dims[1] : ft.dims[3];
    if (out_c <= 0 || ig <= 0 || w.groups <= 0 || out_c % w.groups != 0) return refuse(why_not, "malformed groups");
    const int64_t ocpg = out_c / w.groups, k = ig * w.kh * w.kw, n_padded = f32_padded_cols(ocpg);
    const bool pads = w.pad_top || w.pad_left || w.pad_bottom || w.pad_right;
    if (!w.nchw && ig == 1 && ocpg == 1) {
      p->form = ConvForm::kDepthwise;
    } else if (!w.nchw && w.groups == 1 && w.kh == 1 && w.kw == 1 && w.sh == 1 && w.sw == 1 && !pads) {
      p->form = ConvForm::kPointwise;
    }
    const bool dw = p->form == ConvForm::kDepthwise;
    p->filters.assign(size_t(dw ? k * out_c : w.groups * k * n_padded), 0.0f);
    const ElementType& e = ft.element;
    if (e.kind == ElementKind::kUniformPerAxis && e.axis != 0) {
      return refuse(why_not, "per-axis filters must be quantized along the output channels");
    }
    for (int64_t o = 0; o < out_c; ++o) {
      const int64_t g = o / ocpg, j = o % ocpg;
      for (int64_t ci = 0; ci < ig; ++ci) {
        for (int64_t ky = 0; ky < w.kh; ++ky) {
          for (int64_t kx = 0; kx < w.kw; ++kx) {
            const size_t fi = size_t(w.nchw ? ((o * ft.dims[1] + ci) * ft.dims[2] + ky) * ft.dims[3] + kx
                                            : ((o * ft.dims[1] + ky) * ft.dims[2] + kx) * ft.dims[3] + ci);
            float v;
            if (hybrid) {  // the dcast formula, per output channel (axis 0) or per tensor
              const size_t ch = e.kind == ElementKind::kUniformPerAxis ? size_t(o) : 0;
              v = numerics::dequantize_f32(f->int_at(fi), e.zero_points[ch], numerics::compute_scale_f32(e.scales[ch], e.float_kind));
              v = rounded_to(double(v), kind);  // the dcast's rounding to a bf16/f16 expressed type
            } else {
              v = float(f->float_at(fi));
            }
            if (!std::isfinite(v)) return refuse(why_not, "a filter value is not finite (padding taps could not be skipped)");
            const int64_t kk = (ci * w.kh + ky) * w.kw + kx;
            // Depthwise: tap-major, the channels of a tap contiguous (F32DwArgs::w).
            p->filters[dw ? size_t(kk * out_c + o) : size_t(g * k * n_padded) + f32_panel_index(kk, j, k)] = v;
          }
        }
      }
    }
    if (op.operands.size() > 2) {
      std::unique_ptr<Tensor> b = constant_operand(graph, op.operands[2]);
      if (!b || !b->type.element.is_float() || b->type.element.float_kind != kind || b->num_elements() != out_c) {
        return refuse(why_not, "the bias is not a constant of the activations' type with one value per output channel");
      }
      p->bias.assign(size_t(dw ? out_c : w.groups * n_padded), 0.0f);
      for (int64_t o = 0; o < out_c; ++o) {
        p->bias[size_t(dw ? o : o / ocpg * n_padded + o % ocpg)] = float(b->float_at(size_t(o)));
      }
    }
    p->graph = &graph;
    p->op = &op;
    p->w = w;
    p->out_c = out_c;
    p->ig = ig;
    p->hybrid = hybrid ? ft.element.storage.width : 0;
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    return backend->why_not(desc(static_cast<const PreparedF32Conv&>(prepared), backend));
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedF32Conv&>(prepared);
    const KernelDesc d = desc(p, backend);
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
    return std::unique_ptr<OpKernel>(std::make_unique<FloatConvOpKernel>(*p.graph, *p.op, p.w, p.form, p.out_c, p.ig,
                                                                         p.filters, p.bias, fused_clamp(*p.op), p.hybrid,
                                                                         d, std::move(code)));
  }

 private:
  static KernelDesc desc(const PreparedF32Conv& p, const Backend* backend) {
    return p.form == ConvForm::kDepthwise ? f32_dwconv_desc(backend->isa(), backend->generator())
                                          : f32_gemm_desc(backend->isa(), backend->generator());
  }
};

}  // namespace

const OpFamily& f32_conv_family() {
  static const F32ConvFamily family;
  return family;
}

}  // namespace qrt::jit
