// qrt — the numerics profiles' contraction kernels (see profile_kernels.h).
#include "jit/ops/profile_kernels.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cmath>
#include <functional>
#include <tuple>
#include <type_traits>

#include "ir/nn_params.h"
#include "ir/ops.h"
#include "ir/quant_params.h"
#include "jit/core/microkernel.h"
#include "jit/ops/accumulator_graph.h"
#include "jit/kernel_list.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

namespace {

// The requantization micro-kernel `op` (kRequantQ31 or kRequantF64) of the best level in
// `allowed` that has one (the scalar twin at worst) from `generator`, for 8-bit results of
// `is_signed` storage; null where none serves.
std::shared_ptr<const CompiledKernel> find_requant_kernel(KernelOp op, const IsaSet& allowed, Generator generator,
                                                          bool is_signed, bool single_rounding, KernelDesc* desc) {
  KernelDesc d;
  d.op = op;
  d.generator = generator;
  d.storage_signed = is_signed;
  d.single_rounding = single_rounding;
  for (Isa isa : allowed.by_preference()) {
    d.isa = isa;
    const Backend* b = kernel_list_backend(d.op, isa, generator);
    if (!b || !b->available() || !b->why_not(d).empty()) continue;
    Result<std::shared_ptr<const CompiledKernel>> code = code_cache().get(d);
    if (!code.is_ok()) continue;
    *desc = d;
    return *code;
  }
  return nullptr;
}

class ProfileRequantKernel final : public OpKernel {
 public:
  ProfileRequantKernel(const Graph& graph, const Op& op, std::shared_ptr<Graph> acc_graph,
                       std::unique_ptr<OpKernel> contraction, int axis, const IsaSet& allowed, Generator generator)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        acc_graph_(std::move(acc_graph)),
        contraction_(std::move(contraction)),
        axis_(size_t(axis)),
        out_(result_type_.element),
        requant_(graph.numerics, graph.values[size_t(op.operands[0])].type.element,
                 graph.values[size_t(op.operands[1])].type.element, result_type_.element,
                 size_t(result_type_.dims[size_t(axis)])),
        profile_(numerics_profile_name(graph.numerics)) {
    ChannelOutputs outputs = channel_outputs(op, out_, size_t(result_type_.dims[axis_]));
    zo_ = std::move(outputs.zo);
    lo_ = std::move(outputs.lo);
    hi_ = std::move(outputs.hi);
    choose_requant_kernel(graph, allowed, generator);
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return contraction_->result_dims(operands);
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    Type acc_type = contraction_->result_type();
    acc_type.dims = out.type.dims;
    // The accumulators live in a buffer of the calling thread, kept between runs (no
    // allocation or page faults per run; contexts on other threads have their own).
    thread_local std::vector<int32_t> scratch;
    if (scratch.size() < size_t(out.num_elements())) scratch.resize(size_t(out.num_elements()));
    Tensor acc = Tensor::view_of(acc_type, scratch.data());
    size_t inner = 1;
    for (size_t d = axis_ + 1; d < out.type.rank(); ++d) inner *= size_t(out.type.dims[d]);
    const size_t channels = size_t(out.type.dims[axis_]), n = size_t(out.num_elements());
    if (code_ && inner == 1) {
      // Channels innermost (NHWC, matmul rows): pixels of `channels` accumulators, requantized
      // block by block as the contraction makes them where it can, else after it.
      const RequantSink sink(*this, out.bytes(), int64_t(channels));
      if (contraction_->takes_sink()) return contraction_->run_into_sink(operands, acc, sink, parallel);
      QRT_RETURN_IF_ERROR(contraction_->run_into(operands, acc, parallel));
      const size_t pixels = channels ? n / channels : 0;
      const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(int64_t(n / 16384), 4 * int64_t(parallel.threads())));
      parallel.for_each(size_t(tasks), [&](size_t t) {
        const int64_t begin = int64_t(pixels * t / size_t(tasks)), end = int64_t(pixels * (t + 1) / size_t(tasks));
        sink.take(reinterpret_cast<const int32_t*>(acc.bytes()) + begin * int64_t(channels), int64_t(channels), begin,
                  end - begin);
      });
      return Status::ok();
    }
    QRT_RETURN_IF_ERROR(contraction_->run_into(operands, acc, parallel));
    const size_t rows = inner ? n / inner : 0;  // runs of `inner` elements sharing one channel
    const auto* a = reinterpret_cast<const int32_t*>(acc.bytes());
    const QuantStorage& st = out_.storage;
    const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(int64_t(n / 16384), 4 * int64_t(parallel.threads())));
    parallel.for_each(size_t(tasks), [&](size_t t) {
      const size_t begin = rows * t / size_t(tasks), end = rows * (t + 1) / size_t(tasks);
      auto requantize_rows = [&](auto* y) {
        size_t c = begin % channels;  // the channel of row r, stepped without a division per row
        for (size_t r = begin; r < end; ++r, c = c + 1 == channels ? 0 : c + 1) {
          for (size_t i = r * inner; i < (r + 1) * inner; ++i) {
            y[i] = static_cast<std::remove_pointer_t<decltype(y)>>(requant_.apply(c, a[i], zo_[c], lo_[c], hi_[c]));
          }
        }
      };
      if (st.width <= 8) {
        st.is_signed ? requantize_rows(reinterpret_cast<int8_t*>(out.bytes()))
                     : requantize_rows(reinterpret_cast<uint8_t*>(out.bytes()));
      } else {
        st.is_signed ? requantize_rows(reinterpret_cast<int16_t*>(out.bytes()))
                     : requantize_rows(reinterpret_cast<uint16_t*>(out.bytes()));
      }
    });
    return Status::ok();
  }

  std::string describe() const override {
    return contraction_->describe() + " into int32, then the " + profile_ + " requantization " +
           (code_ ? "(" + desc_.name() + ")" : "(portable C++)");
  }
  bool reads_operand(size_t index) const override { return contraction_->reads_operand(index); }
  size_t owned_bytes() const override { return contraction_->owned_bytes() + channels_.bytes(); }

 private:
  // The requantization micro-kernel of the best allowed level that has one (the scalar twin at
  // worst) for 8-bit results with the channels innermost: kRequantQ31 under the tflite
  // profiles, kRequantF64 under onnx (finite multipliers); else the per-element loop serves.
  void choose_requant_kernel(const Graph& graph, const IsaSet& allowed, Generator generator) {
    if (out_.storage.width != 8 || axis_ + 1 != result_type_.rank()) return;
    const bool onnx = graph.numerics == NumericsProfile::kOnnx;
    if (!is_tflite(graph.numerics) && !onnx) return;
    if (onnx) {
      for (float m : requant_.multipliers()) {
        if (!std::isfinite(m)) return;
      }
    }
    code_ = find_requant_kernel(onnx ? KernelOp::kRequantF64 : KernelOp::kRequantQ31, allowed, generator,
                                out_.storage.is_signed, graph.numerics == NumericsProfile::kTfliteSingleRounding, &desc_);
    if (!code_) return;
    for (size_t c = 0; c < zo_.size(); ++c) {
      if (onnx) {
        channels_.f32_multiplier.push_back(requant_.multipliers()[c]);
      } else {
        channels_.multiplier.push_back(requant_.q31()[c].multiplier);
        channels_.shift.push_back(requant_.q31()[c].shift);
      }
      channels_.lo_zo.push_back(int32_t(lo_[c] - zo_[c]));
      channels_.hi_zo.push_back(int32_t(hi_[c] - zo_[c]));
      channels_.zo.push_back(int32_t(zo_[c]));
    }
  }

  // Requantizes blocks of pixels into the result's bytes with the chosen micro-kernel.
  class RequantSink final : public AccumulatorSink {
   public:
    RequantSink(const ProfileRequantKernel& k, uint8_t* out, int64_t channels) : k_(k), out_(out), channels_(channels) {}
    void take(const int32_t* acc, int64_t acc_stride, int64_t first, int64_t count) const override {
      const Channels& ch = k_.channels_;
      uint8_t* y = out_ + first * channels_;
      if (k_.desc_.op == KernelOp::kRequantF64) {
        const RequantF64Args args{acc, y, count, channels_, acc_stride, channels_, ch.f32_multiplier.data(),
                                  ch.lo_zo.data(), ch.hi_zo.data(), ch.zo.data()};
        return call_microkernel(k_.code_->entry(), args, k_.desc_);
      }
      const RequantQ31Args args{acc, y, count, channels_, acc_stride, channels_, ch.multiplier.data(), ch.shift.data(),
                                ch.lo_zo.data(), ch.hi_zo.data(), ch.zo.data()};
      call_microkernel(k_.code_->entry(), args, k_.desc_);
    }

   private:
    const ProfileRequantKernel& k_;
    uint8_t* out_;
    int64_t channels_;
  };

  // The micro-kernel's per-channel parameters (Q31 multipliers and shifts, or f32 multipliers).
  struct Channels {
    std::vector<int32_t> multiplier, shift, lo_zo, hi_zo, zo;
    std::vector<float> f32_multiplier;
    size_t bytes() const { return 4 * (multiplier.size() + shift.size() + lo_zo.size() * 3 + f32_multiplier.size()); }
  };

  std::shared_ptr<Graph> acc_graph_;  // the contraction's kernel points into it
  std::unique_ptr<OpKernel> contraction_;
  size_t axis_;
  ElementType out_;
  AccumulatorRequant requant_;
  std::string profile_;
  std::vector<int64_t> zo_, lo_, hi_;
  std::shared_ptr<const CompiledKernel> code_;
  KernelDesc desc_;
  Channels channels_;
};

class ProfileBinaryKernel final : public OpKernel {
 public:
  ProfileBinaryKernel(const Graph& graph, const Op& op, const IsaSet& allowed, Generator generator)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        a_(graph.values[size_t(op.operands[0])].type.element.storage),
        b_(graph.values[size_t(op.operands[1])].type.element.storage),
        binary_(op.kind, graph.values[size_t(op.operands[0])].type.element,
                graph.values[size_t(op.operands[1])].type.element, result_type_.element,
                graph.numerics == NumericsProfile::kTfliteSingleRounding),
        name_(std::string(op.kind == OpKind::kAdd ? "add" : "mul") + " with " + numerics_profile_name(graph.numerics) +
              "'s fixed-point formula (portable C++)") {
    const ElementType& out = result_type_.element;
    const std::optional<FusedClamp> clamp = fused_clamp(op);
    std::tie(lo_, hi_) = clamp ? clamp_stored_bounds(out, 0, clamp->min, clamp->max)
                               : std::pair<int64_t, int64_t>(out.storage.min, out.storage.max);
    // Broadcasting (numpy's rules, static shapes): each operand's element stride per result
    // dimension, 0 where the operand repeats along it.
    for (int i = 0; i < 2; ++i) {
      const std::vector<int64_t>& d = graph.values[size_t(op.operands[size_t(i)])].type.dims;
      std::vector<int64_t>& st = strides_[i];
      st.assign(result_type_.rank(), 0);
      int64_t stride = 1;
      for (size_t k = d.size(); k-- > 0;) {
        const size_t r = result_type_.rank() - d.size() + k;
        st[r] = d[k] == 1 && result_type_.dims[r] != 1 ? 0 : stride;
        stride *= d[k];
      }
      broadcast_ = broadcast_ || d != result_type_.dims;
    }
    if (a_.width == 8 && b_.width == 8 && out.storage.width == 8) {
      q31_code_ = find_requant_kernel(KernelOp::kRequantQ31, allowed, generator, out.storage.is_signed,
                                      binary_.single_rounding(), &q31_desc_);
    }
    if (!q31_code_) return;
    // Bytes in, bytes out: the integer before the output multiplier from two 256-entry tables
    // (add: each operand's rescaled term; they depend on that operand alone), then the
    // requantization kernel over chunks, every lane with the output's parameters.
    name_ = std::string(op.kind == OpKind::kAdd ? "add" : "mul") + " with " + numerics_profile_name(graph.numerics) +
            "'s fixed-point formula (" + (binary_.is_add() ? "input tables, " : "") + q31_desc_.name() + ")";
    const int64_t za = graph.values[size_t(op.operands[0])].type.element.zero_points[0];
    const int64_t zb = graph.values[size_t(op.operands[1])].type.element.zero_points[0];
    for (int q = 0; q < 256; ++q) {
      const int64_t qa = a_.is_signed ? int8_t(q) : q, qb = b_.is_signed ? int8_t(q) : q;
      term_a_[size_t(q)] = binary_.is_add() ? binary_.input_term(0, qa) : int32_t(qa - za);
      term_b_[size_t(q)] = binary_.is_add() ? binary_.input_term(1, qb) : int32_t(qb - zb);
    }
    // Whether no sum of two terms can leave int32: then the add needs no saturation (TFLite's
    // input multipliers are below 1/2, so the terms stay below 2^28 and it never does).
    int64_t max_a = 0, max_b = 0;
    for (int q = 0; q < 256; ++q) {
      max_a = std::max<int64_t>(max_a, std::abs(int64_t(term_a_[size_t(q)])));
      max_b = std::max<int64_t>(max_b, std::abs(int64_t(term_b_[size_t(q)])));
    }
    sums_fit_ = max_a + max_b <= INT32_MAX;
    const int64_t zo = binary_.output_zero_point();
    lanes_.multiplier.assign(kChunk, binary_.output_multiplier().multiplier);
    lanes_.shift.assign(kChunk, binary_.output_multiplier().shift);
    lanes_.lo_zo.assign(kChunk, int32_t(lo_ - zo));
    lanes_.hi_zo.assign(kChunk, int32_t(hi_ - zo));
    lanes_.zo.assign(kChunk, int32_t(zo));
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>&) const override { return result_type_.dims; }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    if (broadcast_) return run_broadcast(operands, out, parallel);
    const size_t n = size_t(out.num_elements());
    const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(int64_t(n / 16384), 4 * int64_t(parallel.threads())));
    if (q31_code_) {
      parallel.for_each(size_t(tasks), [&](size_t t) {
        const size_t begin = n * t / size_t(tasks), end = n * (t + 1) / size_t(tasks);
        run_row_bytes(operands[0]->bytes() + begin, 1, operands[1]->bytes() + begin, 1, out.bytes() + begin, int64_t(end - begin));
      });
      return Status::ok();
    }
    parallel.for_each(size_t(tasks), [&](size_t t) {
      const size_t begin = n * t / size_t(tasks), end = n * (t + 1) / size_t(tasks);
      with_storage(a_, operands[0]->bytes(), [&](const auto* a) {
        with_storage(b_, operands[1]->bytes(), [&](const auto* b) {
          with_storage(result_type_.element.storage, out.bytes(), [&](auto* y) {
            for (size_t i = begin; i < end; ++i) {
              const int64_t v = numerics::clamp_i64(binary_.apply(a[i], b[i]), lo_, hi_);
              y[i] = static_cast<std::remove_pointer_t<decltype(y)>>(v);
            }
          });
        });
      });
    });
    return Status::ok();
  }

  std::string describe() const override { return name_; }

 private:
  static constexpr size_t kChunk = 512;  // elements per kernel call: the int32 chunk stays in L1

  // Broadcast operands: one result row (the innermost dimension) at a time, each operand's row
  // start from its strides, its elements 1 or 0 apart along the row.
  Status run_broadcast(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const {
    const std::vector<int64_t>& dims = result_type_.dims;
    const int64_t inner = dims.empty() ? 1 : dims.back(), rows = inner == 0 ? 0 : out.num_elements() / inner;
    const int64_t per_task = std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1));
    const int64_t tasks = (rows + per_task - 1) / per_task;
    Parallel& par = out.num_elements() >= 16384 ? parallel : serial();
    par.for_each(size_t(tasks), [&](size_t t) {
      for (int64_t r = int64_t(t) * per_task; r < std::min(rows, (int64_t(t) + 1) * per_task); ++r) {
        int64_t off[2] = {0, 0}, rest = r;
        for (size_t k = dims.size() - 1; k-- > 0;) {
          const int64_t i = rest % dims[k];
          rest /= dims[k];
          off[0] += i * strides_[0][k];
          off[1] += i * strides_[1][k];
        }
        const int64_t sa = strides_[0].back(), sb = strides_[1].back();  // broadcasting needs rank >= 1
        if (q31_code_) {
          run_row_bytes(operands[0]->bytes() + off[0], sa, operands[1]->bytes() + off[1], sb, out.bytes() + r * inner, inner);
          continue;
        }
        with_storage(a_, operands[0]->bytes(), [&](const auto* a) {
          with_storage(b_, operands[1]->bytes(), [&](const auto* b) {
            with_storage(result_type_.element.storage, out.bytes(), [&](auto* y) {
              for (int64_t i = 0; i < inner; ++i) {
                const int64_t v = numerics::clamp_i64(binary_.apply(a[off[0] + i * sa], b[off[1] + i * sb]), lo_, hi_);
                y[r * inner + i] = static_cast<std::remove_pointer_t<decltype(y)>>(v);
              }
            });
          });
        });
      }
    });
    return Status::ok();
  }

  // `len` 8-bit results at y from operand rows a and b whose elements are sa and sb (1 or 0)
  // apart, through the tables and the requantization kernel in chunks that stay in L1.
  void run_row_bytes(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, uint8_t* y, int64_t len) const {
    int32_t wide[kChunk];
    for (int64_t c0 = 0; c0 < len; c0 += int64_t(kChunk)) {
      const int64_t n = std::min(int64_t(kChunk), len - c0);
      const uint8_t *ra = a + c0 * sa, *rb = b + c0 * sb;
      if (binary_.is_add() && sums_fit_ && sa == 1 && sb == 1) {
        // The common case, contiguous operands whose sums fit: two lookups and an add.
        for (int64_t i = 0; i < n; ++i) wide[i] = term_a_[ra[i]] + term_b_[rb[i]];
      } else if (binary_.is_add()) {
        // int64 sum saturated to int32, as MultiplyByQuantizedMultiplier's input is.
        for (int64_t i = 0; i < n; ++i) wide[i] = numerics::saturate_i32(int64_t(term_a_[ra[i * sa]]) + int64_t(term_b_[rb[i * sb]]));
      } else {
        for (int64_t i = 0; i < n; ++i) wide[i] = term_a_[ra[i * sa]] * term_b_[rb[i * sb]];  // |.| <= 255²
      }
      const RequantQ31Args args{wide, y + c0, 1, n, n, n, lanes_.multiplier.data(), lanes_.shift.data(),
                                lanes_.lo_zo.data(), lanes_.hi_zo.data(), lanes_.zo.data()};
      call_microkernel(q31_code_->entry(), args, q31_desc_);
    }
  }

  QuantStorage a_, b_;
  std::vector<int64_t> strides_[2];  // per result dimension; 0 where the operand broadcasts
  bool broadcast_ = false;
  TfliteBinary binary_;
  std::string name_;
  int64_t lo_ = 0, hi_ = 0;
  std::shared_ptr<const CompiledKernel> q31_code_;
  KernelDesc q31_desc_;
  std::array<int32_t, 256> term_a_{}, term_b_{};  // add: the input terms; mul: q - z
  bool sums_fit_ = false;                          // add: no term_a + term_b leaves int32
  struct {
    std::vector<int32_t> multiplier, shift, lo_zo, hi_zo, zo;
  } lanes_;
};

// TFLite's softmax along the last axis and int8 logistic (tflite profiles) in portable C++: the
// logistic as a 256-entry table of the reference formula built once, the softmax row by row
// through the same row function as the reference, rows spread over the threads.
class ProfileActivationKernel final : public OpKernel {
 public:
  ProfileActivationKernel(const Graph& graph, const Op& op, std::optional<numerics::TfliteSoftmaxParams> softmax,
                          std::optional<numerics::TfliteLogisticParams> logistic, size_t axis = 0)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        in_(graph.values[size_t(op.operands[0])].type.element.storage),
        softmax_(softmax),
        axis_(axis),
        loc_(op.loc),
        name_(std::string(op.kind == OpKind::kSoftmax ? "softmax" : "logistic (256-entry table)") + " with " +
              numerics_profile_name(graph.numerics) + "'s fixed-point formula (portable C++)") {
    if (logistic) {
      for (int q = -128; q <= 127; ++q) table_[size_t(q + 128)] = int8_t(numerics::logistic_tflite(q, *logistic));
    }
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const size_t n = size_t(out.num_elements());
    if (n == 0) return Status::ok();
    if (!softmax_) {
      const int8_t* x = reinterpret_cast<const int8_t*>(operands[0]->bytes());
      int8_t* y = reinterpret_cast<int8_t*>(out.bytes());
      const size_t tasks = std::max<size_t>(1, std::min<size_t>(n / 65536, 4 * size_t(parallel.threads())));
      parallel.for_each(tasks, [&](size_t t) {
        for (size_t i = n * t / tasks; i < n * (t + 1) / tasks; ++i) y[i] = table_[size_t(int(x[i]) + 128)];
      });
      return Status::ok();
    }
    // Slices along the axis: `len` elements `inner` apart (1 for the last axis).
    const size_t len = size_t(out.type.dims[axis_]);
    size_t inner = 1;
    for (size_t d = axis_ + 1; d < out.type.rank(); ++d) inner *= size_t(out.type.dims[d]);
    const size_t rows = len == 0 ? 0 : n / len;
    const size_t tasks = std::max<size_t>(1, std::min<size_t>(rows * len / 16384, 4 * size_t(parallel.threads())));
    std::atomic<int64_t> stopped{-1};
    parallel.for_each(tasks, [&](size_t t) {
      std::vector<int32_t> row(len);
      std::vector<int64_t> result(len);
      for (size_t r = rows * t / tasks; r < rows * (t + 1) / tasks; ++r) {
        const size_t first = r / inner * len * inner + r % inner;  // the slice's first element
        with_storage(in_, operands[0]->bytes(), [&](const auto* x) {
          for (size_t k = 0; k < len; ++k) row[k] = int32_t(x[first + k * inner]);
        });
        if (!numerics::softmax_tflite_row(row.data(), int64_t(len), *softmax_, result.data())) {
          // The first such slice in element order, as the reference reports it, whatever the split.
          int64_t seen = stopped.load();
          while ((seen < 0 || int64_t(first) < seen) && !stopped.compare_exchange_weak(seen, int64_t(first))) {
          }
          continue;
        }
        with_storage(result_type_.element.storage, out.bytes(), [&](auto* y) {
          for (size_t k = 0; k < len; ++k) y[first + k * inner] = static_cast<std::remove_pointer_t<decltype(y)>>(result[k]);
        });
      }
    });
    if (stopped >= 0) {
      return Status::error_at(loc_, "'qrt.softmax' op tflite softmax: the slice at element " +
                                        std::to_string(stopped.load()) +
                                        " sums to 2^9 or more in exp (TFLite's kernel stops there: its rounding "
                                        "shift would exceed 31)");
    }
    return Status::ok();
  }

  std::string describe() const override { return name_; }

 private:
  QuantStorage in_;
  std::optional<numerics::TfliteSoftmaxParams> softmax_;
  size_t axis_;  // the softmax's axis
  std::array<int8_t, 256> table_{};
  SourceLoc loc_;
  std::string name_;
};

}  // namespace

std::unique_ptr<OpKernel> make_profile_binary_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                                     Generator generator) {
  const bool tflite = is_tflite(graph.numerics);
  if (!tflite || (op.kind != OpKind::kAdd && op.kind != OpKind::kMul) || profile_formula(graph, op).empty()) {
    return nullptr;
  }
  const Type& y = graph.values[size_t(op.results[0])].type;
  if (!y.has_static_shape() || y.element.storage.width > 16 || op.operands.size() != 2) return nullptr;
  for (int v : op.operands) {
    const Type& t = graph.values[size_t(v)].type;
    if (!t.has_static_shape() || t.rank() > y.rank() || t.element.kind != ElementKind::kUniform ||
        t.element.storage.width > 16) {
      return nullptr;
    }
    // Broadcasts to the result under numpy's rules: each dimension equal or 1.
    for (size_t k = 0; k < t.rank(); ++k) {
      const int64_t d = t.dims[k], r = y.dims[y.rank() - t.rank() + k];
      if (d != r && d != 1) return nullptr;
    }
  }
  return std::make_unique<ProfileBinaryKernel>(graph, op, allowed, generator);
}

ChannelOutputs channel_outputs(const Op& op, const ElementType& out, size_t channels) {
  ChannelOutputs o;
  const std::optional<FusedClamp> clamp = fused_clamp(op);
  for (size_t c = 0; c < channels; ++c) {
    const size_t oc = out.num_channels() == 1 ? 0 : c;
    o.zo.push_back(out.zero_points[oc]);
    const auto [lo, hi] = clamp ? clamp_stored_bounds(out, oc, clamp->min, clamp->max)
                                : std::pair<int64_t, int64_t>(out.storage.min, out.storage.max);
    o.lo.push_back(lo);
    o.hi.push_back(hi);
  }
  return o;
}

std::optional<std::shared_ptr<Graph>> accumulator_graph(const Graph& graph, const Op& op) {
  const NumericsProfile p = graph.numerics;
  const bool requant_only = is_tflite(p) || p == NumericsProfile::kOnnx;
  if (!requant_only || (op.kind != OpKind::kMatmul && op.kind != OpKind::kConv2d) || profile_formula(graph, op).empty()) {
    return std::nullopt;
  }
  return contraction_accumulator_graph(graph, op, {});
}

std::optional<std::shared_ptr<Graph>> wide_result_accumulator_graph(const Graph& graph, const Op& op) {
  if (graph.numerics != NumericsProfile::kDefault || (op.kind != OpKind::kMatmul && op.kind != OpKind::kConv2d)) {
    return std::nullopt;
  }
  const ElementType& x = graph.values[size_t(op.operands[0])].type.element;
  const ElementType& w = graph.values[size_t(op.operands[1])].type.element;
  const ElementType& y = graph.values[size_t(op.results[0])].type.element;
  if (!x.is_quant() || !w.is_quant() || !y.is_uniform() || y.storage.width <= 8 || y.storage.width > 16) {
    return std::nullopt;
  }
  return contraction_accumulator_graph(graph, op, {});
}

std::unique_ptr<OpKernel> make_profile_requant_kernel(const Graph& graph, const Op& op, std::shared_ptr<Graph> acc_graph,
                                                      std::unique_ptr<OpKernel> contraction, const IsaSet& allowed,
                                                      Generator generator) {
  return std::make_unique<ProfileRequantKernel>(graph, op, std::move(acc_graph), std::move(contraction),
                                                contraction_channel_axis(graph, op), allowed, generator);
}

std::unique_ptr<OpKernel> make_profile_activation_kernel(const Graph& graph, const Op& op) {
  if (!is_tflite(graph.numerics) || (op.kind != OpKind::kSoftmax && op.kind != OpKind::kLogistic) ||
      profile_formula(graph, op).empty() || fused_clamp(op)) {
    return nullptr;
  }
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  if (!y.has_static_shape() || x.dims != y.dims || y.rank() == 0) return nullptr;
  const bool single = graph.numerics == NumericsProfile::kTfliteSingleRounding;
  std::string why;
  if (op.kind == OpKind::kLogistic) {
    auto p = tflite_logistic_params(x.element, y.element, single, &why);
    return p ? std::make_unique<ProfileActivationKernel>(graph, op, std::nullopt, p) : nullptr;
  }
  // Slices along any axis (TFLite's is the last; the reference applies its formula per slice
  // along the op's axis).
  int64_t axis = op.attr("axis") ? op.attr("axis")->i : -1;
  if (axis < 0) axis += int64_t(y.rank());
  if (axis < 0 || axis >= int64_t(y.rank())) return nullptr;
  auto p = tflite_softmax_params(op, x.element, y.element, single, &why);
  return p ? std::make_unique<ProfileActivationKernel>(graph, op, p, std::nullopt, size_t(axis)) : nullptr;
}

}  // namespace qrt::jit
