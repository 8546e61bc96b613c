// qrt — 16-bit activations on the 8-bit contraction kernels (see wide_input_kernels.h).
#include "jit/ops/wide_input_kernels.h"

#include <atomic>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>

#include "ir/ops.h"
#include "ir/quant_params.h"
#include "jit/ops/accumulator_graph.h"
#include "jit/ops/profile_kernels.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

namespace {

// `r` (inside ±2^40) rounded to the nearest integer, ties to even. nearbyint is a libm call
// that saves and restores the floating-point environment on x86-64 without SSE4.1 (about 20
// cycles); adding and subtracting 1.5 · 2^52 rounds the same way (in the default rounding
// mode, for |r| < 2^51) in two additions the compiler may not fold without -ffast-math.
inline int64_t round_to_int64(double r) {
  constexpr double kShift = 0x1.8p52;
  return int64_t((r + kShift) - kShift);
}

// The element type of one byte half of `x` (per-tensor, 9 to 16 bits): the high byte signed
// like x with zero point floor(zx / 256), or the low byte unsigned with zero point zx mod 256;
// both keep x's scale, so the halves' accumulator type is the op's.
ElementType byte_half(const ElementType& x, bool high) {
  const int64_t zx = x.zero_points[0];
  const bool is_signed = high && x.storage.is_signed;
  const int64_t zp = high ? (zx >> 8) : (zx & 0xFF);
  return ElementType::make_uniform(QuantStorage::full_range(8, is_signed), x.float_kind, x.scales[0], zp);
}

class WideInputKernel final : public OpKernel {
 public:
  struct Half {
    std::shared_ptr<Graph> graph;  // its kernel points into it
    std::unique_ptr<OpKernel> kernel;
    ElementType element;
  };

  WideInputKernel(const Graph& graph, const Op& op, Half high, Half low, std::optional<std::vector<int64_t>> bias)
      : OpKernel(graph.values[size_t(op.results[0])].type),
        op_(op),
        high_(std::move(high)),
        low_(std::move(low)),
        bias_(std::move(bias)),
        has_bias_(op.operands.size() > 2),
        axis_(size_t(contraction_channel_axis(graph, op))),
        requant_(graph.numerics, graph.values[size_t(op.operands[0])].type.element,
                 graph.values[size_t(op.operands[1])].type.element, result_type_.element,
                 size_t(result_type_.dims[size_t(contraction_channel_axis(graph, op))]),
                 has_bias_ ? &graph.values[size_t(op.operands[2])].type.element : nullptr),
        profile_(numerics_profile_name(graph.numerics)) {
    const ElementType& x = graph.values[size_t(op.operands[0])].type.element;
    if (graph.numerics == NumericsProfile::kDefault) {
      m_ = requant_.multipliers();
      default_fast_ = std::all_of(m_.begin(), m_.end(), [](float m) { return std::isfinite(m); });
    }
    // TFLite's 16x8 kernels keep int32 accumulators beside an int32 bias (reference_util.h).
    int32_accumulator_ = is_tflite(graph.numerics) && has_bias_ &&
                         !tflite_int64_accumulator(x, graph.values[size_t(op.operands[1])].type.element,
                                                   &graph.values[size_t(op.operands[2])].type.element);
    ChannelOutputs outputs = channel_outputs(op, result_type_.element, size_t(result_type_.dims[axis_]));
    zo_ = std::move(outputs.zo);
    lo_ = std::move(outputs.lo);
    hi_ = std::move(outputs.hi);
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return high_.kernel->result_dims({operands[0], operands[1]});
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const size_t n_in = size_t(x.num_elements()), n_out = size_t(out.num_elements());
    // Halves and accumulators live in buffers of the calling thread, kept between runs.
    thread_local Scratch scratch;
    Scratch* s = &scratch;
    s->reserve(n_in, n_out);
    split(x, s->high.data(), s->low.data(), parallel);
    Type high_type = x.type, low_type = x.type;
    high_type.element = high_.element;
    low_type.element = low_.element;
    const Tensor high = Tensor::view_of(high_type, s->high.data()), low = Tensor::view_of(low_type, s->low.data());
    Type acc_type = high_.kernel->result_type();
    acc_type.dims = out.type.dims;
    Tensor acc_high = Tensor::view_of(acc_type, s->acc_high.data()), acc_low = Tensor::view_of(acc_type, s->acc_low.data());
    QRT_RETURN_IF_ERROR(high_.kernel->run_into({&high, operands[1]}, acc_high, parallel));
    std::vector<int64_t> run_time_bias;
    if (has_bias_ && !bias_) {
      for (size_t c = 0; c < zo_.size(); ++c) run_time_bias.push_back(operands[2]->int_at(c));
    }
    Combine combine{*this, s->acc_high.data(), bias_ ? bias_->data() : has_bias_ ? run_time_bias.data() : nullptr,
                    out.bytes(), false};
    // |256·acc_high + acc_low| < 2^40: a bias inside ±2^62 cannot overflow int64, and only
    // TFLite's int32 accumulators (an i32 bias) have a narrower range to check.
    combine.checked = int32_accumulator_;
    for (size_t c = 0; combine.bias && c < zo_.size() && !combine.checked; ++c) {
      combine.checked = combine.bias[c] > (int64_t(1) << 62) || combine.bias[c] < -(int64_t(1) << 62);
    }
    size_t inner = 1;
    for (size_t d = axis_ + 1; d < out.type.rank(); ++d) inner *= size_t(out.type.dims[d]);
    // (Handing the low half's blocks to a sink while in cache measured slower: the kernels'
    // sink paths block finer than their plain ones.)
    QRT_RETURN_IF_ERROR(low_.kernel->run_into({&low, operands[1]}, acc_low, parallel));
    const int64_t n = int64_t(n_out), rows = int64_t(n_out / inner);
    const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(n / 16384, 4 * int64_t(parallel.threads())));
    parallel.for_each(size_t(tasks), [&](size_t t) {
      const int64_t begin = rows * int64_t(t) / tasks, end = rows * int64_t(t + 1) / tasks;
      combine.rows(s->acc_low.data(), inner, size_t(begin), size_t(end));
    });
    if (const size_t at = combine.overflow_at.load(); at != SIZE_MAX) {
      return Status::error_at(op_.loc, std::string("'") + op_info(op_.kind).name + "' op " +
                                           (int32_accumulator_ ? "int32" : "int64") +
                                           " accumulator overflow at result element " + std::to_string(at));
    }
    return Status::ok();
  }

  std::string describe() const override {
    return "16-bit activations as two byte halves: " + high_.kernel->describe() + " and " + low_.kernel->describe() +
           " into int32, combined in int64, then the " + profile_ + " requantization (portable C++)";
  }
  bool reads_operand(size_t index) const override {
    if (index == 2) return has_bias_ && !bias_;
    return high_.kernel->reads_operand(index) || low_.kernel->reads_operand(index);
  }
  bool holds_operand_copy(size_t index) const override {
    if (index == 2) return bool(bias_);
    return high_.kernel->holds_operand_copy(index) && low_.kernel->holds_operand_copy(index);
  }
  size_t owned_bytes() const override {
    return high_.kernel->owned_bytes() + low_.kernel->owned_bytes() + (bias_ ? 8 * bias_->size() : 0);
  }

 private:
  struct Scratch {
    std::vector<uint8_t> high, low;
    std::vector<int32_t> acc_high, acc_low;
    void reserve(size_t n_in, size_t n_out) {
      if (high.size() < n_in) high.resize(n_in), low.resize(n_in);
      if (acc_high.size() < n_out) acc_high.resize(n_out), acc_low.resize(n_out);
    }
  };

  // The high and low bytes of every element. For signed x the high byte's bits are those of
  // x >> 8 (arithmetic): the two's-complement i8 the high half stores.
  static void split(const Tensor& x, uint8_t* high, uint8_t* low, Parallel& parallel) {
    const int64_t n = x.num_elements(), tasks = even_tasks(n, kMinStreamTaskElements, parallel);
    const auto* in = reinterpret_cast<const uint16_t*>(x.bytes());
    parallel.for_each(size_t(tasks), [&](size_t t) {
      const size_t begin = size_t(part_start(n, tasks, int64_t(t), 64)), end = size_t(part_start(n, tasks, int64_t(t) + 1, 64));
      for (size_t i = begin; i < end; ++i) {
        low[i] = uint8_t(in[i]);
        high[i] = uint8_t(in[i] >> 8);
      }
    });
  }

  // Combines the halves' accumulators and requantizes them, over runs of rows.
  struct Combine {
    Combine(const WideInputKernel& kernel, const int32_t* high, const int64_t* b, uint8_t* y, bool check)
        : k(kernel), acc_high(high), bias(b), out(y), checked(check) {}
    // Rows [begin, end) of `inner` elements each (one channel per row; inner 1: elements).
    void rows(const int32_t* acc_low, size_t inner, size_t begin, size_t end) const {
      const size_t channels = k.zo_.size();
      if (inner == 1) {
        // Runs of consecutive channels, cut at pixel ends.
        for (size_t i = begin; i < end;) {
          const size_t c = i % channels, run = std::min(channels - c, end - i);
          k.combine_run(acc_high + i, acc_low + i, i, run, c, 1, *this);
          i += run;
        }
        return;
      }
      for (size_t r = begin; r < end; ++r) {
        k.combine_run(acc_high + r * inner, acc_low + r * inner, r * inner, inner, r % channels, 0, *this);
      }
    }
    const WideInputKernel& k;
    const int32_t* acc_high;
    const int64_t* bias;
    uint8_t* out;
    bool checked;
    mutable std::atomic<size_t> overflow_at{SIZE_MAX};  // the first element whose accumulator overflowed
  };

  // Result elements [index, index + count): acc = 256·high[j] + low[j] + bias, channel
  // c0 + j·dc, then the profile's requantization.
  void combine_run(const int32_t* high, const int32_t* low, size_t index, size_t count, size_t c0, size_t dc,
                   const Combine& cb) const {
    with_storage(result_type_.element.storage, cb.out, [&](auto* y) {
      using Out = std::remove_pointer_t<decltype(y)>;
      auto loop = [&](auto&& requantize) {
        for (size_t j = 0; j < count; ++j) {
          const size_t c = c0 + j * dc;
          int64_t acc = int64_t(high[j]) * 256 + low[j];
          const int64_t b = cb.bias ? cb.bias[c] : 0;
          if (!cb.checked) {
            y[index + j] = Out(requantize(c, acc + b));
            continue;
          }
          if (__builtin_add_overflow(acc, b, &acc) || (int32_accumulator_ && (acc < INT32_MIN || acc > INT32_MAX))) {
            size_t seen = cb.overflow_at.load();
            while (index + j < seen && !cb.overflow_at.compare_exchange_weak(seen, index + j)) {
            }
            continue;
          }
          y[index + j] = Out(requantize(c, acc));
        }
      };
      if (default_fast_) {
        // numerics::requantize inlined: f32(acc) · M rounded to nearest even, then + zo and
        // the bounds (finite multipliers only).
        loop([&](size_t c, int64_t acc) {
          const double p = double(float(acc) * m_[c]);
          const double limited = p < -0x1p40 ? -0x1p40 : p > 0x1p40 ? 0x1p40 : p;
          return std::clamp<int64_t>(round_to_int64(limited) + zo_[c], lo_[c], hi_[c]);
        });
      } else {
        loop([&](size_t c, int64_t acc) { return requant_.apply(c, acc, zo_[c], lo_[c], hi_[c]); });
      }
    });
  }

  Op op_;
  Half high_, low_;
  std::optional<std::vector<int64_t>> bias_;  // a constant bias, read once
  bool has_bias_;
  size_t axis_;
  AccumulatorRequant requant_;
  std::string profile_;
  bool int32_accumulator_ = false;
  bool default_fast_ = false;  // the default profile with finite multipliers: the inlined loop
  std::vector<float> m_;
  std::vector<int64_t> zo_, lo_, hi_;
};

}  // namespace

bool wide_input_applies(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::kMatmul && op.kind != OpKind::kConv2d) return false;
  if (graph.numerics == NumericsProfile::kStableHlo || op.operands.size() < 2) return false;
  const ElementType& x = graph.values[size_t(op.operands[0])].type.element;
  const ElementType& w = graph.values[size_t(op.operands[1])].type.element;
  return x.kind == ElementKind::kUniform && x.storage.width > 8 && x.storage.width <= 16 && w.is_quant();
}

Result<KernelChoice> select_wide_input_kernel(const Graph& graph, const Op& op, const IsaSet& allowed,
                                              Generator generator) {
  KernelChoice choice;
  const ElementType& x = graph.values[size_t(op.operands[0])].type.element;
  const ElementType& w = graph.values[size_t(op.operands[1])].type.element;
  const ElementType& y = graph.values[size_t(op.results[0])].type.element;
  auto refuse_with = [&](std::string why) -> Result<KernelChoice> {
    choice.why_not = "16-bit activations: " + std::move(why);
    return std::move(choice);
  };
  if (!w.is_uniform() || w.storage.width != 8) return refuse_with("the byte-half kernels take 8-bit weights");
  if (!y.is_uniform() || y.storage.width > 16) {
    return refuse_with("the byte-half kernels write results of at most 16 bits, not " + y.to_string());
  }
  WideInputKernel::Half halves[2];
  std::string chain;
  for (int h = 0; h < 2; ++h) {
    WideInputKernel::Half& half = halves[h];
    half.element = byte_half(x, h == 0);
    AccumulatorGraphOptions options;
    options.lhs = &half.element;
    options.without_bias = true;
    std::optional<std::shared_ptr<Graph>> sub = contraction_accumulator_graph(graph, op, options);
    if (!sub) return refuse_with("the result cannot be requantized per output channel");
    // The halves' int32 bound (K · 255 · max|w − zw|) is the verifier's to prove.
    if (Status st = verify_graph(**sub); !st.is_ok()) return refuse_with(st.message());
    QRT_ASSIGN_OR_RETURN(KernelChoice part, select_kernel(**sub, (*sub)->ops.back(), allowed, generator));
    if (!part.kernel) return refuse_with("no kernel computes a byte half's accumulators: " + part.why_not);
    half.graph = std::move(*sub);
    half.kernel = std::move(part.kernel);
    if (h == 0) {
      chain = part.chain;
      choice.isa = part.isa;
    }
  }
  std::optional<std::vector<int64_t>> bias;
  if (op.operands.size() > 2) {
    if (std::unique_ptr<Tensor> b = constant_operand(graph, op.operands[2])) {
      bias.emplace();
      for (size_t c = 0; c < size_t(b->num_elements()); ++c) bias->push_back(b->int_at(c));
    }
  }
  choice.kernel = std::make_unique<WideInputKernel>(graph, op, std::move(halves[0]), std::move(halves[1]), std::move(bias));
  choice.chain = chain + " (both byte halves of the 16-bit activations)";
  return choice;
}

}  // namespace qrt::jit
