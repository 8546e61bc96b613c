// qrt — depthwise convolution (NHWC, channel multiplier 1, quantized) on the depthwise
// micro-kernel: every output pixel reads its window through an indirection row of tap
// pointers (positions in the padding point at a row of zero points), a channel block at a
// time, two taps per s16 multiply-add.
//
// Exactness: with w''[t][c] = w[t][c] - zw[c] in s16 and x widened to s16,
//   acc[c] = Σ_t x_t[c]·w''[t][c] - zx·Σ_t w''[t][c] + bias[c]
// where the second term folds into the bias at pack time; pair sums of s16 products fit s32,
// and every result is proven to fit int32, so the kernel is exact for every input.
//
// Where the level has vpdpbusd and every w'' fits s8 (symmetric s8 weights; u8 weights near
// their zero point), 8-bit outputs take the dot4 row path instead: each input row is
// interleaved once into u8 quads of four horizontal taps per channel (s8 inputs flipped to
// u = x + 128, the 128·Σw'' folded into the bias), kept in a per-thread ring of kh·dh rows,
// and every output row is kh · ceil(kw / 4) vpdpbusd per 16 channels with no shuffle in the
// pixel loop. At stride 1 (dilation 1, kw not a multiple of 4) a position's quads also hold
// the next pixel's window one tap on, so only every other position is interleaved and the
// rows multiply it twice, by the window and by the window shifted one tap (paired_pixels):
// half the interleaving, half the quad loads. At stride 2 pixel pairs' positions are 4
// columns apart: the odd pixel's window starts two taps on and, for 3 taps, ends in the next
// position's first tap (a third weight set, pair_shift 2): half the interleaving, at the cost
// of half as many products again. Exact for the same reason: u8 x s8 quads sum
// into int32 without saturation and the result is proven to fit int32 (wrapping intermediate
// sums do not matter).
#include <algorithm>
#include <memory>
#include <mutex>
#include <cmath>
#include <cstring>

#include "ir/nn_params.h"
#include "jit/core/aligned_bytes.h"
#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/ops/op_kernel.h"
#include "jit/ops/requant_epilogue.h"
#include "jit/ops/window_runs.h"

namespace qrt::jit {

namespace {

// A depthwise task's least work, in vector steps (a tap of one pixel over 32 channels, about
// 1 ns each on the kernels measured): ~2 µs, above the ~1 µs a hand-off to another thread costs.
constexpr int64_t kMinDepthwiseTaskSteps = 2048;

// The output dims of a depthwise op over input `x`, or the error naming the op.
template <typename Checked>
Result<std::vector<int64_t>> depthwise_result_dims(const Op& op, const Window2d& w, const Tensor& x, int64_t c,
                                                   Checked checked) {
  if (x.type.dims[3] != c) {
    return Status::error_at(op.loc, "'qrt.conv2d' op input has " + std::to_string(x.type.dims[3]) +
                                        " channels at run time, the filter expects " + std::to_string(c));
  }
  std::vector<int64_t> dims = window_output_dims(x.type.dims, w, c);
  if (dims[1] <= 0 || dims[2] <= 0) {
    return Status::error_at(op.loc, "'qrt.conv2d' op the window is larger than the padded input at run time");
  }
  return checked(std::move(dims));
}

class DepthwiseOpKernel final : public SinkableKernel {
 public:
  DepthwiseOpKernel(const Graph& graph, const Op& op, const Window2d& w, KernelDesc desc,
                    std::shared_ptr<const CompiledKernel> code, AlignedBytes weights, AlignedBytes epilogue, uint8_t pad)
      : SinkableKernel(graph.values[size_t(op.results[0])].type), op_(op), w_(w), desc_(desc), code_(std::move(code)),
        weights_(std::move(weights)), epilogue_(std::move(epilogue)), pad_byte_(pad) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return depthwise_result_dims(op_, w_, *operands[0], desc_.channels, [this](std::vector<int64_t> d) {
      return checked_result_dims(op_, std::move(d));
    });
  }

  bool takes_sink() const override { return desc_.out == OutKind::kS32; }

  // With a sink (int32) each output row goes to it from a thread-local buffer.
  Status run_with_sink(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel,
                       const AccumulatorSink* sink) const override {
    const Tensor& x = *operands[0];
    const int64_t c = desc_.channels, oh = y.type.dims[1], ow = y.type.dims[2], h = x.type.dims[1], wd = x.type.dims[2];
    const unsigned ob = desc_.out == OutKind::kS32 || desc_.out == OutKind::kF32 ? 4 : 1;
    const unsigned taps = desc_.taps;
    // Interior pixels (window inside the row horizontally) run in stepping mode, so the pad
    // row must stay zero points over a whole run of steps.
    // The calling thread's row; workers read it through `pad` (naming a thread_local inside
    // the task would give each worker its own, empty one).
    thread_local std::vector<uint8_t> pad_row;
    pad_row.assign(size_t(window_pad_bytes(w_, wd, ow, c)), pad_byte_);
    const uint8_t* pad = pad_row.data();
    // Tasks of whole output rows, as many as the work is worth (a row costs about ow·taps
    // vector steps per 32 channels).
    const int64_t rows = y.type.dims[0] * oh;
    const int64_t tasks = worthwhile_tasks(rows * ow * taps * ((c + 31) / 32), kMinDepthwiseTaskSteps, parallel);
    const int64_t rows_per_task = (rows + tasks - 1) / tasks;
    auto run_row = [&](int64_t task_row) {
      thread_local std::vector<const uint8_t*> ptrs;
      const int64_t n = task_row / oh, oy = task_row % oh;
      DepthwiseArgs args;
      args.out_stride = c * ob;
      args.weights = weights_.data();
      args.epilogue = epilogue_.data();
      thread_local std::vector<int32_t> accumulators;
      uint8_t* out_row = sink ? reinterpret_cast<uint8_t*>(scratch(accumulators, size_t(ow * c)))
                              : y.bytes() + ((n * oh + oy) * ow) * c * ob;
      for_each_window_run(w_, x.bytes(), n, h, wd, c, oy, ow, taps, pad, ptrs,
                          [&](int64_t from, int64_t to, const uint8_t* const* row, bool stepping) {
                            args.taps = row;
                            args.out = out_row + from * c * ob;
                            args.pixels = to - from;
                            args.taps_stride = stepping ? 0 : int64_t(8 * taps);
                            args.pixel_step = stepping ? w_.sw * c : 0;
                            call_microkernel(code_->entry(), args, desc_);
                          });
      if (sink) sink->take(reinterpret_cast<const int32_t*>(out_row), c, (n * oh + oy) * ow, ow);
    };
    parallel.for_each(size_t((rows + rows_per_task - 1) / rows_per_task), [&](size_t task) {
      const int64_t first = int64_t(task) * rows_per_task;
      for (int64_t r = first; r < std::min(rows, first + rows_per_task); ++r) run_row(r);
    });
    return Status::ok();
  }

  bool reads_operand(size_t index) const override { return index == 0; }  // weights are prepacked
  bool holds_operand_copy(size_t index) const override { return index != 0; }
  std::string describe() const override { return desc_.name() + " (s16 weights, int32 sums: exact for every input)"; }
  size_t owned_bytes() const override { return weights_.size() + epilogue_.size(); }

 private:
  Op op_;
  Window2d w_;
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
  AlignedBytes weights_, epilogue_;
  uint8_t pad_byte_;
};


// The dot4 row path (see the top of the file).
class DepthwiseRowsOpKernel final : public SinkableKernel {
 public:
  DepthwiseRowsOpKernel(const Graph& graph, const Op& op, const Window2d& w, KernelDesc interleave, KernelDesc rows,
                        std::shared_ptr<const CompiledKernel> interleave_code, std::shared_ptr<const CompiledKernel> rows_code,
                        AlignedBytes weights, AlignedBytes epilogue, uint8_t pad)
      : SinkableKernel(graph.values[size_t(op.results[0])].type), op_(op), w_(w), interleave_(interleave), rows_(rows),
        interleave_code_(std::move(interleave_code)), rows_code_(std::move(rows_code)), weights_(std::move(weights)),
        epilogue_(std::move(epilogue)), pad_byte_(pad) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return depthwise_result_dims(op_, w_, *operands[0], rows_.channels, [this](std::vector<int64_t> d) {
      return checked_result_dims(op_, std::move(d));
    });
  }

  bool takes_sink() const override { return rows_.out == OutKind::kS32; }

  // 8-bit results: int32 ones go to a sink, which a fused kernel does not take.
  bool reads_operand_rows() const override { return rows_.out != OutKind::kS32; }

  // Bands on several threads each compute the input rows their windows share with the band
  // before: where that would add more than 1/20 of the rows (a 7x7 image on two threads: 2 of
  // 7), the rows are computed once, split over the threads, into a buffer read in place.
  Status run_reading_rows(const std::vector<const Tensor*>& operands, const ProducedRows& rows, Tensor& y,
                          Parallel& parallel) const override {
    if (!reads_operand_rows()) return OpKernel::run_reading_rows(operands, rows, y, parallel);
    const Tensor& x = *operands[0];
    const int64_t images = x.type.dims[0], h = x.type.dims[1], row_bytes = x.type.dims[2] * x.type.dims[3];
    const int64_t bands = band_tasks(y, parallel);
    const int64_t shared = std::max<int64_t>(0, (w_.kh - 1) * w_.dh + 1 - w_.sh);
    if (bands <= 1 || (bands - 1) * shared * 20 <= images * h) return run_rows(x, &rows, y, parallel, nullptr);
    thread_local std::vector<uint8_t> computed;  // the caller's: the workers fill it through `at`
    uint8_t* at = scratch(computed, size_t(images * h * row_bytes));
    const int64_t block = std::clamp<int64_t>(rows.producer.rows_per_call(x.type.dims[2]), 1, h), all = images * h;
    parallel.for_each(size_t(bands), [&](size_t t) {
      const int64_t end = part_start(all, bands, int64_t(t) + 1);
      for (int64_t r = part_start(all, bands, int64_t(t)); r < end;) {
        const int64_t n = r / h, count = std::min({block, end - r, h - r % h});
        rows.producer.produce_rows(rows.input, n, r % h, count, at + r * row_bytes);
        r += count;
      }
    });
    const Tensor whole = Tensor::view_of(x.type, at);
    return run_rows(whole, nullptr, y, parallel, nullptr);
  }

  // With a sink (int32) each output row goes to it from a thread-local buffer.
  Status run_with_sink(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel,
                       const AccumulatorSink* sink) const override {
    return run_rows(*operands[0], nullptr, y, parallel, sink);
  }

 private:
  // One band of output rows per thread: each band interleaves the kh - 1 input rows above it
  // again, so more, smaller tasks would cost more than they balance.
  int64_t band_tasks(const Tensor& y, const Parallel& parallel) const {
    const int64_t rows = y.type.dims[0] * y.type.dims[1], c = rows_.channels;
    const int64_t work = rows * y.type.dims[2] * rows_.kh * dw_rows_groups(rows_.taps) * ((c + 15) / 16);
    return std::min(rows, even_tasks(work, kMinDepthwiseTaskSteps, parallel));
  }

  // The input rows from x, or made by `produced` (then x gives only the dims).
  Status run_rows(const Tensor& x, const ProducedRows* produced, Tensor& y, Parallel& parallel,
                  const AccumulatorSink* sink) const {
    const int64_t c = rows_.channels, oh = y.type.dims[1], ow = y.type.dims[2], h = x.type.dims[1], wd = x.type.dims[2];
    const int64_t ob = rows_.out == OutKind::kS32 ? 4 : 1;
    const unsigned groups = dw_rows_groups(rows_.taps);
    const int64_t position_bytes = dw_rows_position_bytes(rows_.panel, rows_.channels, rows_.taps);
    // Interleaved positions: one per output pixel, or one per pair of them (paired_pixels), and
    // one more where the last odd pixel reads the next position's quads (three weight sets).
    const int64_t per_position = dw_rows_pixels_per_position(rows_.paired_pixels);
    const bool reads_next = dw_rows_weight_sets(rows_.taps, rows_.paired_pixels, rows_.pair_shift) == 3;
    const int64_t interleaved = (ow + per_position - 1) / per_position + (reads_next ? 1 : 0);
    const int64_t row_bytes = interleaved * position_bytes;
    // Positions are `stride` columns apart.
    const int64_t stride = per_position * w_.sw, step = stride * c;
    // Padded input row: the positions the windows reach (taps up to the group's fourth), the
    // image at pad_left, zero points elsewhere, and slack for the widest block's lanes.
    const int64_t reach = std::max((ow - 1) * w_.sw, (interleaved - 1) * stride) + (4 * int64_t(groups) - 1) * w_.dw + 1;
    const int64_t positions = std::max(reach, w_.pad_left + wd);
    const size_t padded_bytes = size_t(positions * c + dw_rows_padded_channels(rows_.panel, rows_.channels) + 64);
    // The interleaved row of the vertical padding, shared by every task and every call.
    const std::shared_ptr<const AlignedBytes> pad_row = padding_row(interleaved, padded_bytes, row_bytes);
    const AlignedBytes& pad_interleaved = *pad_row;
    const int64_t rows = y.type.dims[0] * oh;
    const int64_t tasks = band_tasks(y, parallel);
    const int64_t ring = w_.kh * w_.dh;
    // Positions whose windows lie inside the input row (no padding) are interleaved from the
    // input in place; only the edge positions read a padded copy, of the bytes they reach.
    // A position's reads end `reach_bytes` past its first tap (the group's fourth tap and the
    // widest block's lanes, which meet zero weights or are not stored: any bytes will do
    // there, so they may run into the next row), with 64 bytes of slack.
    // A position is inside when its last pixel's window is; with three weight sets, when all
    // its quads are (each byte meets a weight of one pixel or the other).
    const int64_t reach_bytes = (4 * int64_t(groups) - 1) * w_.dw * c + dw_rows_padded_channels(rows_.panel, rows_.channels) + 64;
    const int64_t inner_lo = std::min(interleaved, (w_.pad_left + stride - 1) / stride);
    // The first tap of the last window inside the row, less the position's later pixels.
    const int64_t span = reads_next ? 4 * int64_t(groups) : (per_position - 1) * w_.sw + (w_.kw - 1) * w_.dw + 1;
    const int64_t last_first_tap = wd + w_.pad_left - span;
    const int64_t inner_hi = last_first_tap < 0 ? inner_lo : std::clamp(last_first_tap / stride + 1, inner_lo, interleaved);
    // Computed rows (a fused producer) go to a per-thread buffer, a block of rows at a time,
    // with the reads' slack after it.
    const int64_t block = produced ? std::clamp<int64_t>(produced->producer.rows_per_call(wd), 1, h) : 0;
    const int64_t produced_bytes = block * wd * c + reach_bytes;
    parallel.for_each(size_t(tasks), [&](size_t task) {
      // Per thread: the padded input row and a ring of interleaved rows, slot iy mod kh·dh
      // (the rows one output row reads are kh·dh apart at most, so they never share a slot).
      thread_local std::vector<uint8_t> padded;
      thread_local std::vector<AlignedBytes> slots;
      thread_local std::vector<int64_t> tags;
      thread_local std::vector<uint8_t> produced_buffer;
      uint8_t* produced_rows = block ? scratch(produced_buffer, size_t(produced_bytes)) : nullptr;
      int64_t produced_from = -1, produced_rows_count = 0;  // the block's rows: n · h + y, how many
      padded.assign(padded_bytes, pad_byte_);
      if (slots.size() < size_t(ring) || (slots.size() > 0 && slots[0].size() < size_t(row_bytes))) {
        slots.clear();
        for (int64_t i = 0; i < ring; ++i) slots.emplace_back(size_t(row_bytes));
      }
      tags.assign(size_t(ring), -1);  // a new input tensor: nothing cached
      const uint8_t* row_ptrs[256];
      const int64_t last = part_start(rows, tasks, int64_t(task) + 1);
      for (int64_t r = part_start(rows, tasks, int64_t(task)); r < last; ++r) {
        const int64_t n = r / oh, oy = r % oh;
        for (int64_t dy = 0; dy < w_.kh; ++dy) {
          const int64_t iy = oy * w_.sh - w_.pad_top + dy * w_.dh;
          if (iy < 0 || iy >= h) {
            row_ptrs[dy] = pad_interleaved.data();
            continue;
          }
          const size_t slot = size_t(iy % ring);
          if (tags[slot] != n * h + iy) {
            const uint8_t* src;
            int64_t readable;
            if (block) {
              // A block from this row on, of the rows this task still reads in this image (rows
              // come in order; two bands share only the rows their windows overlap).
              if (n * h + iy < produced_from || n * h + iy >= produced_from + produced_rows_count) {
                const int64_t last_oy = std::min(oh - 1, last - 1 - n * oh);
                const int64_t last_iy = std::min(h - 1, last_oy * w_.sh - w_.pad_top + (w_.kh - 1) * w_.dh);
                produced_rows_count = std::clamp<int64_t>(last_iy - iy + 1, 1, block);
                produced->producer.produce_rows(produced->input, n, iy, produced_rows_count, produced_rows);
                produced_from = n * h + iy;
              }
              const int64_t at = n * h + iy - produced_from;
              src = produced_rows + at * wd * c;
              readable = produced_bytes - at * wd * c;
            } else {
              src = x.bytes() + (n * h + iy) * wd * c;
              readable = int64_t(x.byte_size()) - (n * h + iy) * wd * c;
            }
            // The interior ends where a read would pass the input's last byte (the last rows).
            const int64_t room = readable + w_.pad_left * c - reach_bytes;
            const int64_t hi = room < 0 ? inner_lo : std::clamp(room / step + 1, inner_lo, inner_hi);
            uint8_t* slot_row = slots[slot].data();
            if (inner_lo > 0) {  // the left edge: the input bytes its positions reach
              const int64_t reach = (inner_lo - 1) * step + reach_bytes - w_.pad_left * c;
              std::memcpy(padded.data() + w_.pad_left * c, src, size_t(std::clamp<int64_t>(reach, 0, wd * c)));
              interleave(padded.data(), slot_row, inner_lo);
            }
            if (hi > inner_lo) interleave(src + inner_lo * step - w_.pad_left * c, slot_row + inner_lo * position_bytes, hi - inner_lo);
            if (hi < interleaved) {  // the right edge: the input bytes from its first position's on
              const int64_t from = std::clamp<int64_t>(hi * step - w_.pad_left * c, 0, wd * c);
              std::memcpy(padded.data() + w_.pad_left * c + from, src + from, size_t(wd * c - from));
              interleave(padded.data() + hi * step, slot_row + hi * position_bytes, interleaved - hi);
            }
            tags[slot] = n * h + iy;
          }
          row_ptrs[dy] = slots[slot].data();
        }
        thread_local std::vector<int32_t> accumulators;
        uint8_t* out = sink ? reinterpret_cast<uint8_t*>(scratch(accumulators, size_t(ow * c))) : y.bytes() + (n * oh + oy) * ow * c * ob;
        DwRowsArgs args{row_ptrs, out, ow, weights_.data(), epilogue_.data()};
        call_microkernel(rows_code_->entry(), args, rows_);
        if (sink) sink->take(reinterpret_cast<const int32_t*>(out), c, (n * oh + oy) * ow, ow);
      }
    });
    return Status::ok();
  }

 public:
  bool reads_operand(size_t index) const override { return index == 0; }  // weights are prepacked
  bool holds_operand_copy(size_t index) const override { return index != 0; }
  std::string describe() const override {
    return rows_.name() + " + " + interleave_.name() +
           (rows_.path == GemmPath::kSdot4 ? " (s8 x s8 quads: exact for every input)" : " (u8 x s8 quads: exact for every input)");
  }
  size_t owned_bytes() const override { return weights_.size() + epilogue_.size(); }

 private:
  // The interleaved row of zero points for a count of positions (one per static shape), made
  // on the first call that needs it; calls from several contexts share it.
  std::shared_ptr<const AlignedBytes> padding_row(int64_t positions, size_t padded_bytes, int64_t row_bytes) const {
    std::lock_guard<std::mutex> lock(pad_mutex_);
    if (pad_row_ && pad_row_positions_ == positions) return pad_row_;
    std::vector<uint8_t> padded(padded_bytes, pad_byte_);
    auto row = std::make_shared<AlignedBytes>(size_t(row_bytes));
    interleave(padded.data(), row->data(), positions);
    pad_row_ = row;
    pad_row_positions_ = positions;
    return pad_row_;
  }

  // Interleaves `positions` positions, stride · (pixels per position) columns apart.
  void interleave(const uint8_t* padded, uint8_t* out, int64_t positions) const {
    const int64_t c = interleave_.channels, step = dw_rows_pixels_per_position(rows_.paired_pixels) * w_.sw * c;
    call_microkernel(interleave_code_->entry(), DwInterleaveArgs{padded, out, positions, step, w_.dw * c}, interleave_);
  }

  Op op_;
  Window2d w_;
  KernelDesc interleave_, rows_;
  std::shared_ptr<const CompiledKernel> interleave_code_, rows_code_;
  AlignedBytes weights_, epilogue_;
  uint8_t pad_byte_;
  mutable std::mutex pad_mutex_;
  mutable std::shared_ptr<const AlignedBytes> pad_row_;
  mutable int64_t pad_row_positions_ = -1;
};

struct PreparedDepthwise final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  Window2d w;
  ChannelQuant q;
  int64_t channels = 0;
  unsigned real_taps = 0, taps = 0;    // taps: rounded up to pairs
  std::vector<int32_t> wdev;           // per channel and tap: w - zw (channel-major)
  std::vector<int64_t> bias;           // per channel (0 without a bias)
};

class DepthwiseFamily final : public OpFamily {
 public:
  const char* name() const override { return "dwconv"; }
  KernelOp kind() const override { return KernelOp::kDepthwise; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    const Type& x = graph.values[size_t(op.operands[0])].type;
    const Type& f = graph.values[size_t(op.operands[1])].type;
    const Type& out = graph.values[size_t(op.results[0])].type;
    ConvOperands operands;
    QRT_ASSIGN_OR_RETURN(std::string why, read_conv_operands(graph, op, operands));
    if (!why.empty()) return refuse(why_not, why);
    auto p = std::make_unique<PreparedDepthwise>();
    p->w = operands.w;
    const Window2d& w = p->w;
    const std::unique_ptr<Tensor>& filter = operands.filter;
    const std::unique_ptr<Tensor>& bias = operands.bias;
    const int64_t channels = f.dims[0];
    if (w.nchw) return refuse(why_not, "depthwise convolutions in NCHW run on the reference");
    if (w.groups != channels) return refuse(why_not, "depthwise convolutions with a channel multiplier run on the reference");
    if (why = fill_channel_quant(x.element, f.element, out.element, size_t(channels), p->q); !why.empty()) {
      return refuse(why_not, why);
    }
    if (why = apply_fused_clamp(op, out.element, p->q); !why.empty()) return refuse(why_not, why);
    if (why = apply_numerics_profile(graph, x.element, f.element, out.element, p->q); !why.empty()) {
      return refuse(why_not, why);
    }
    p->real_taps = unsigned(w.kh * w.kw);
    p->taps = (p->real_taps + 1) / 2 * 2;
    if (p->taps > 1024) return refuse(why_not, "the window has more than 1024 positions");
    // The int32 proof and the folded constants, per channel (filter OHWI with I = 1).
    const int64_t x_dev = activation_deviation(p->q);
    p->wdev.resize(size_t(channels) * p->real_taps);
    p->bias.assign(size_t(channels), 0);
    for (int64_t ch = 0; ch < channels; ++ch) {
      const int32_t zw = p->q.w_zero_point[size_t(ch)];
      p->bias[size_t(ch)] = bias ? bias->int_at(size_t(ch)) : 0;
      int64_t bound = std::llabs(p->bias[size_t(ch)]);
      for (unsigned t = 0; t < p->real_taps; ++t) {
        const int32_t wv = int32_t(filter->int_at(size_t(ch) * p->real_taps + t)) - zw;
        p->wdev[size_t(ch) * p->real_taps + t] = wv;
        bound += x_dev * std::llabs(wv);
      }
      if (why = int32_bound_why_not(ch, bound); !why.empty()) return refuse(why_not, why);
    }
    if (why = multipliers_why_not(p->q); !why.empty()) return refuse(why_not, why);
    p->graph = &graph;
    p->op = &op;
    p->channels = channels;
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedDepthwise&>(prepared);
    if (rows_path(p, *backend)) return "";
    return backend->why_not(desc_for(p, *backend));
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedDepthwise&>(prepared);
    if (rows_path(p, *backend)) return create_rows(p, *backend);
    const KernelDesc d = desc_for(p, *backend);
    const unsigned block = d.panel, pairs = p.taps / 2;
    const int64_t blocks = (p.channels + block - 1) / block;
    const int32_t zx = p.q.a_zero_point;
    // The layout of microkernel.h: per block, per tap pair, two halves of 8 lanes x 2 taps.
    AlignedBytes weights(size_t(blocks * pairs * block * 4));
    AlignedBytes epilogue(size_t(blocks * kEpFields * block * 4));
    auto* w16 = reinterpret_cast<int16_t*>(weights.data());
    for (int64_t b = 0; b < blocks; ++b) {
      for (unsigned lane = 0; lane < block; ++lane) {
        const int64_t ch = b * block + depthwise_lane_channel(block, lane);
        if (ch >= p.channels) continue;
        int64_t wsum = 0;
        for (unsigned t = 0; t < p.real_taps; ++t) {
          const int32_t wv = p.wdev[size_t(ch) * p.real_taps + t];
          w16[depthwise_weight_index(block, pairs, size_t(b), lane, t)] = int16_t(wv);
          wsum += wv;
        }
        const int32_t folded = int32_t(p.bias[size_t(ch)] - int64_t(zx) * wsum);
        put_epilogue_lane(epilogue.data() + b * kEpFields * block * 4, block, lane, p.q, size_t(ch), folded,
                          p.q.w_zero_point[size_t(ch)]);
      }
    }
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
    return std::unique_ptr<OpKernel>(std::make_unique<DepthwiseOpKernel>(
        *p.graph, *p.op, p.w, d, std::move(code), std::move(weights), std::move(epilogue), uint8_t(zx)));
  }

 private:
  // kSatUpper where the rows' saturating narrowing enforces every channel's upper bound by
  // itself, so they need not clamp to it (gemm_pack.cpp's proof for the GEMM tiles): 8-bit
  // results under the f32 requantization, every upper bound the storage's, and
  // |f32(acc)·M| <= 2^30 for acc = bias + Σ (x - zx)·w'', so the rounded value plus the zero
  // point fits int32 and vcvtps2dq cannot overflow to INT_MIN.
  static uint8_t rows_saturate(const PreparedDepthwise& p) {
    if (p.q.q31 || (p.q.out != OutKind::kU8 && p.q.out != OutKind::kS8)) return 0;
    const int32_t storage_hi = p.q.out == OutKind::kS8 ? 127 : 255;
    const int64_t a_dev = std::max<int64_t>(p.q.a_zero_point - p.q.a_min, p.q.a_max - p.q.a_zero_point);
    for (int64_t ch = 0; ch < p.channels; ++ch) {
      if (p.q.out_hi[size_t(ch)] != storage_hi) return 0;
      int64_t bound = std::llabs(p.bias[size_t(ch)]);
      for (unsigned t = 0; t < p.real_taps; ++t) bound += a_dev * std::llabs(int64_t(p.wdev[size_t(ch) * p.real_taps + t]));
      if (!(double(bound) * std::fabs(double(p.q.multiplier[size_t(ch)])) <= double(1 << 30))) return 0;
    }
    return kSatUpper;
  }

  // The dot4 row kernels' descriptions (interleave, rows).
  static std::pair<KernelDesc, KernelDesc> rows_descs(const PreparedDepthwise& p, const Backend& backend) {
    KernelDesc in;
    in.op = KernelOp::kDwInterleave;
    in.isa = backend.isa();
    in.generator = backend.generator();
    in.storage_signed = p.q.a_signed;
    in.taps = uint16_t(p.w.kw);
    in.channels = uint32_t(p.channels);
    in.panel = uint8_t(backend.depthwise_traits().rows_panel);
    if (backend.depthwise_traits().rows_signed_quads) in.path = GemmPath::kSdot4;
    KernelDesc rows = in;
    rows.op = KernelOp::kDwRows;
    if (backend.depthwise_traits().rows_maddwd) rows.path = GemmPath::kMaddwd;  // s16 weights
    rows.out = p.q.out;
    rows.q31 = p.q.q31;
    rows.kh = uint8_t(p.w.kh);
    rows.saturate = rows_saturate(p);
    // At stride 1 a position's quads (input columns x .. x + 4·groups - 1) also hold the next
    // pixel's window when the width leaves a tap spare: interleave every other position and
    // multiply it twice, the second time by the window shifted one tap on. At stride 2 the
    // positions of pixel pairs are 4 columns apart: the odd pixel's window starts two taps on
    // and, for 3 taps, ends in the next position's quads (a third weight set).
    KernelDesc paired = rows;
    paired.paired_pixels = true;
    paired.pair_shift = uint8_t(p.w.sw);
    if ((p.w.sw == 1 || p.w.sw == 2) && p.w.dw == 1 && backend.why_not(paired).empty()) rows = paired;
    return {in, rows};
  }

  // Whether the dot4 row path serves the op on `backend`: the level has it, the output is
  // 8-bit, the window is at most 64 x 64 taps and 256 input columns wide (dilations
  // included), no window sees only padding along the row, and every w'' fits s8. The path
  // keeps a padded copy of an input row that reaches past the last window: pads of a window or
  // more with a stride as large, or a dilation of 2^27, asked for 8-12 GB on a 3x3 input; the
  // pointer path pads one pixel at a time.
  static bool rows_path(const PreparedDepthwise& p, const Backend& backend) {
    if (backend.depthwise_traits().rows_panel == 0 || p.w.kh > 64 || p.w.kw > 64) return false;
    const int64_t window = (p.w.kw - 1) * p.w.dw + 1;
    if (window > 256 || p.w.pad_left >= window || p.w.pad_right >= window) return false;
    if (p.q.out != OutKind::kU8 && p.q.out != OutKind::kS8 && p.q.out != OutKind::kS32) return false;
    for (int32_t v : p.wdev) {
      if (v < -128 || v > 127) return false;
    }
    const auto [in, rows] = rows_descs(p, backend);
    // AVX2's rows (two vpmaddwd per quad) pass the s16 pair kernel only where two pixels share
    // each position's quads (stride 1): mobilenet_v2's 3x3 layers ran 1.06-1.25x as fast at
    // stride 1 and 0.68-0.83x at stride 2, where each position feeds three products and holds
    // twice the input columns (docs/performance.md).
    if (backend.depthwise_traits().rows_maddwd && (!rows.paired_pixels || rows.pair_shift != 1)) return false;
    return backend.why_not(in).empty() && backend.why_not(rows).empty();
  }

  static Result<std::unique_ptr<OpKernel>> create_rows(const PreparedDepthwise& p, const Backend& backend) {
    const auto [in, rows] = rows_descs(p, backend);
    const unsigned panel = rows.panel, kh = rows.kh, kw = rows.taps;
    const unsigned sets = dw_rows_weight_sets(kw, rows.paired_pixels, rows.pair_shift);
    const int64_t blocks = (p.channels + panel - 1) / panel;
    // Quads are u = x + 128 for s8 inputs: the bias folds (zx + 128)·Σw''. Signed quads (sdot)
    // are x - 128 for u8 inputs: (zx - 128)·Σw''.
    const bool signed_quads = rows.path == GemmPath::kSdot4;
    const int64_t zu = int64_t(p.q.a_zero_point) + (p.q.a_signed == signed_quads ? 0 : p.q.a_signed ? 128 : -128);
    AlignedBytes weights(size_t(dw_rows_weight_bytes(rows, sets)));
    AlignedBytes epilogue(size_t(blocks * kEpFields * panel * 4));
    for (int64_t b = 0; b < blocks; ++b) {
      const unsigned width = dw_rows_block_width(panel, rows.channels, size_t(b));
      for (unsigned lane = 0; lane < width; ++lane) {
        const int64_t ch = b * panel + dw_rows_lane_channel(width, lane);
        if (ch >= p.channels) continue;
        int64_t wsum = 0;
        for (unsigned dy = 0; dy < kh; ++dy) {
          for (unsigned kx = 0; kx < kw; ++kx) {
            const int32_t wv = p.wdev[size_t(ch) * p.real_taps + dy * kw + kx];
            // Set 0: the position's own pixel; with pairs, the odd pixel's tap in set 1 (its
            // position's quads, pair_shift bytes on) or set 2 (the next position's).
            dw_rows_put_weight(weights.data(), rows, size_t(b), dy, kx / 4, lane, kx % 4, 0, sets, int8_t(wv));
            if (rows.paired_pixels) {
              const auto [set, byte] = dw_rows_odd_tap(kw, rows.pair_shift, kx);
              dw_rows_put_weight(weights.data(), rows, size_t(b), dy, byte / 4, lane, byte % 4, set, sets, int8_t(wv));
            }
            wsum += wv;
          }
        }
        const int32_t folded = int32_t(uint32_t(uint64_t(p.bias[size_t(ch)] - zu * wsum)));
        put_epilogue_lane(epilogue.data() + b * kEpFields * panel * 4, panel, lane, p.q, size_t(ch), folded,
                          p.q.w_zero_point[size_t(ch)]);
      }
    }
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> in_code, code_cache().get(in));
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> rows_code, code_cache().get(rows));
    return std::unique_ptr<OpKernel>(std::make_unique<DepthwiseRowsOpKernel>(
        *p.graph, *p.op, p.w, in, rows, std::move(in_code), std::move(rows_code), std::move(weights), std::move(epilogue),
        uint8_t(p.q.a_zero_point)));
  }

  static KernelDesc desc_for(const PreparedDepthwise& p, const Backend& backend) {
    KernelDesc d;
    d.op = KernelOp::kDepthwise;
    d.isa = backend.isa();
    d.generator = backend.generator();
    d.storage_signed = p.q.a_signed;
    d.out = p.q.out;
    d.taps = uint16_t(p.taps);
    d.channels = uint32_t(p.channels);
    d.panel = uint8_t(backend.depthwise_traits().block);
    d.q31 = p.q.q31;  // no pixel kernel has the Q31 epilogue: window_kernel_why_not refuses it
    return d;
  }
};

}  // namespace

const OpFamily& depthwise_family() {
  static const DepthwiseFamily family;
  return family;
}

}  // namespace qrt::jit
