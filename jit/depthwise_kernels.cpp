// qrt — depthwise convolution on the generated AVX2 kernel: packing, indirection rows, and
// the run loop (see depthwise_kernels.h).
#include "jit/depthwise_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "jit/code_cache.h"
#include "jit/gemm_kernels.h"
#include "jit/window_runs.h"

namespace qrt::jit {

namespace {

// Lane order of a 16-channel block after vpunpck{l,h}wd + vpmaddwd: the first register holds
// channels 0-3 and 8-11, the second 4-7 and 12-15.
unsigned permuted_channel(unsigned lane) {
  const unsigned half = lane / 8, i = lane % 8;
  return (i / 4) * 8 + half * 4 + i % 4;
}

class DepthwiseOpKernel final : public OpKernel {
 public:
  DepthwiseOpKernel(const Graph& graph, const Op& op, const Window2d& w, KernelDesc desc,
                    std::shared_ptr<ExecutableCode> code, AlignedBytes weights, AlignedBytes epilogue, uint8_t pad)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), w_(w), desc_(desc), code_(std::move(code)),
        weights_(std::move(weights)), epilogue_(std::move(epilogue)), pad_byte_(pad) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const Tensor& x = *operands[0];
    const int64_t c = desc_.channels;
    if (x.type.dims[3] != c) {
      return Status::error_at(op_.loc, "'qrt.conv2d' op input has " + std::to_string(x.type.dims[3]) +
                                           " channels at run time, the filter expects " + std::to_string(c));
    }
    std::vector<int64_t> dims = window_output_dims(x.type.dims, w_, c);
    if (dims[1] <= 0 || dims[2] <= 0) {
      return Status::error_at(op_.loc, "'qrt.conv2d' op the window is larger than the padded input at run time");
    }
    return checked_result_dims(op_, std::move(dims));
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const int64_t c = desc_.channels, oh = y.type.dims[1], ow = y.type.dims[2], h = x.type.dims[1], wd = x.type.dims[2];
    const unsigned ob = desc_.out == OutKind::kS32 || desc_.out == OutKind::kF32 ? 4 : 1;
    const unsigned taps = desc_.taps;
    // Interior pixels (window inside the row horizontally) run in stepping mode, so the pad
    // row must stay zero points over a whole run of steps.
    // The calling thread's row; workers read it through `pad` (naming a thread_local inside
    // the task would give each worker its own, empty one).
    thread_local std::vector<uint8_t> pad_row;
    pad_row.assign(size_t(c + ow * w_.sw * c), pad_byte_);
    const uint8_t* pad = pad_row.data();
    const auto fn = reinterpret_cast<void (*)(const DepthwiseArgs*)>(const_cast<void*>(code_->entry()));
    // One task per output row.
    parallel.for_each(size_t(y.type.dims[0] * oh), [&](size_t task) {
      thread_local std::vector<const uint8_t*> ptrs;
      const int64_t n = int64_t(task) / oh, oy = int64_t(task) % oh;
      DepthwiseArgs args;
      args.out_stride = c * ob;
      args.weights = weights_.data();
      args.epilogue = epilogue_.data();
      uint8_t* out_row = y.bytes() + ((n * oh + oy) * ow) * c * ob;
      for_each_window_run(w_, x.bytes(), n, h, wd, c, oy, ow, taps, pad, ptrs,
                          [&](int64_t from, int64_t to, const uint8_t* const* row, bool stepping) {
                            args.taps = row;
                            args.out = out_row + from * c * ob;
                            args.pixels = to - from;
                            args.taps_stride = stepping ? 0 : int64_t(8 * taps);
                            args.pixel_step = stepping ? w_.sw * c : 0;
                            fn(&args);
                          });
    });
    return Status::ok();
  }

  bool reads_operand(size_t index) const override { return index == 0; }  // weights are prepacked
  std::string describe() const override { return desc_.name() + " (s16 vpmaddwd: exact for every input)"; }

 private:
  Op op_;
  Window2d w_;
  KernelDesc desc_;
  std::shared_ptr<ExecutableCode> code_;
  AlignedBytes weights_, epilogue_;
  uint8_t pad_byte_;
};

}  // namespace

Result<KernelChoice> select_depthwise_kernel(const Graph& graph, const Op& op, const Window2d& w,
                                             const Tensor& filter, const Tensor* bias) {
  KernelChoice choice;
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& out = graph.values[size_t(op.results[0])].type;
  const int64_t channels = filter.type.dims[0];
  if (w.nchw) {
    choice.why_not = "depthwise convolutions in NCHW run on the reference";
    return choice;
  }
  if (w.groups != channels) {
    choice.why_not = "depthwise convolutions with a channel multiplier run on the reference";
    return choice;
  }
  GemmSpec spec;  // only its quantization fields
  spec.n = channels;
  choice.why_not = fill_gemm_quantization(x.element, filter.type.element, out.element, spec);
  if (!choice.why_not.empty()) return choice;
  const unsigned real_taps = unsigned(w.kh * w.kw);
  const unsigned taps = (real_taps + 1) / 2 * 2;
  if (taps > 1024) {
    choice.why_not = "the window has more than 1024 positions";
    return choice;
  }
  const int64_t blocks = (channels + 15) / 16;
  const int32_t zx = spec.a_zero_point;
  AlignedBytes weights(size_t(blocks * (taps / 2) * 64));
  AlignedBytes epilogue(size_t(blocks * kEpFields * 64));
  auto* w16 = reinterpret_cast<int16_t*>(weights.data());
  for (int64_t b = 0; b < blocks; ++b) {
    for (unsigned lane = 0; lane < 16; ++lane) {
      const int64_t ch = b * 16 + permuted_channel(lane);
      if (ch >= channels) continue;
      const int32_t zw = spec.w_zero_point[size_t(ch)];
      int64_t wsum = 0, bound = bias ? std::llabs(bias->int_at(size_t(ch))) : 0;
      const int64_t x_dev = std::max<int64_t>(std::llabs(spec.a_min - zx), std::llabs(spec.a_max - zx));
      for (unsigned t = 0; t < real_taps; ++t) {
        // Filter OHWI with I = 1: element (ch, t).
        const int32_t wv = int32_t(filter.int_at(size_t(ch) * real_taps + t)) - zw;
        // Pair p = t / 2 holds (tap 2p, tap 2p+1) interleaved per lane: 16 s16 per register.
        w16[((b * (taps / 2) + t / 2) * 2 + lane / 8) * 16 + (lane % 8) * 2 + t % 2] = int16_t(wv);
        wsum += wv;
        bound += x_dev * std::llabs(wv);
      }
      if (bound > std::numeric_limits<int32_t>::max()) {
        choice.why_not = "channel " + std::to_string(ch) + " could leave int32 (bound " + std::to_string(bound) + ")";
        return choice;
      }
      uint8_t* block = epilogue.data() + b * kEpFields * 64;
      auto put = [&](size_t field, const void* v) { std::memcpy(block + field * 64 + lane * 4, v, 4); };
      const int32_t folded = int32_t((bias ? bias->int_at(size_t(ch)) : 0) - int64_t(zx) * wsum);
      put(kEpBias, &folded);
      if (spec.out != OutKind::kS32) {
        const float m = spec.multiplier[size_t(ch)];
        if (!std::isfinite(m)) {
          choice.why_not = "a requantization multiplier is not finite";
          return choice;
        }
        put(kEpMultiplier, &m);
      }
      if (spec.out == OutKind::kU8 || spec.out == OutKind::kS8) {
        const int32_t zo = spec.out_zero_point[size_t(ch)];
        const float lo = float(spec.out_min - zo), hi = float(spec.out_max - zo);
        put(kEpLowerBound, &lo);
        put(kEpUpperBound, &hi);
        put(kEpOutputZeroPoint, &zo);
      }
    }
  }
  KernelDesc d;
  d.op = KernelOp::kDepthwise;
  d.storage_signed = spec.a_signed;
  d.out = spec.out;
  d.taps = uint16_t(taps);
  d.channels = uint32_t(channels);
  QRT_ASSIGN_OR_RETURN(std::shared_ptr<ExecutableCode> code, code_cache().get(d));
  choice.kernel = std::make_unique<DepthwiseOpKernel>(graph, op, w, d, std::move(code), std::move(weights),
                                                      std::move(epilogue), uint8_t(zx));
  return choice;
}

}  // namespace qrt::jit
