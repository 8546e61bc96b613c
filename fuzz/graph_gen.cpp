// The differential fuzzer's graph generator (see graph_gen.h). Activations are NHWC rank-4
// tensors; each step takes the current value (and sometimes an earlier one) and appends ops.
#include "graph_gen.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>

#include "graph_text.h"

namespace qrt_fuzz {

int64_t Chooser::range(int64_t lo, int64_t hi) {
  const uint64_t word = next();
  if (hi <= lo) return lo;
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(word % span);
}

bool Chooser::chance(int num, int den) { return range(0, den - 1) < num; }

double Chooser::unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

uint64_t ByteChooser::next() {
  uint64_t word = 0;
  for (int b = 0; b < 8; ++b, ++pos_)
    if (pos_ < size_) word |= static_cast<uint64_t>(data_[pos_]) << (8 * b);
  return word;
}

namespace {

constexpr int64_t kMaxActivationElements = 1 << 15;  // keeps one graph's run in milliseconds

class Generator {
 public:
  Generator(Chooser& c, const GenLimits& limits) : c_(c), limits_(limits) {}

  GeneratedGraph run() {
    Val cur = make_input();
    std::vector<Val> produced{cur};
    GeneratedGraph out;
    for (int step = 0; step < limits_.max_ops; ++step) {
      cur = step_once(per_tensor_8bit_or_any(cur, false));
      produced.push_back(cur);
      ++out.steps;
    }
    std::vector<Val> results{c_.chance(1, 2) && !cur.elem.is_float() ? dcast(cur) : cur};
    if (produced.size() > 2 && c_.chance(1, 4)) {
      const Val& extra = produced[static_cast<size_t>(c_.range(1, static_cast<int64_t>(produced.size()) - 2))];
      if (extra.name != cur.name) results.push_back(extra);
    }
    out.mlir = g_.finish(results);
    out.summary = summary_;
    return out;
  }

 private:
  Chooser& c_;
  GenLimits limits_;
  GraphText g_;
  std::vector<Val> pool_;  // per-tensor quantized values, for binary ops and concat
  std::string summary_;

  void note(const char* word) { summary_ += (summary_.empty() ? "" : " ") + std::string(word); }
  void note(const std::string& word) { note(word.c_str()); }

  // --- types and data ---------------------------------------------------------------------

  double random_scale() { return std::pow(10.0, c_.unit() * 4.0 - 3.5); }

  int64_t random_zp(const Elem& storage) {
    switch (c_.range(0, 5)) {
      case 0: return storage.qmin;
      case 1: return storage.qmax;
      case 2: return std::clamp<int64_t>(0, storage.qmin, storage.qmax);
      default: return c_.range(storage.qmin, storage.qmax);
    }
  }

  Elem random_storage(bool allow_wide) {
    const int64_t r = c_.range(0, 19);
    Elem s = Elem::storage(r < 10 || r == 16 || r == 18, r >= 18 && allow_wide ? 16 : 8);
    if ((r == 16 || r == 17) && c_.chance(1, 2)) {
      s.narrow = true;
      if (s.is_signed && c_.chance(1, 2)) {
        s.qmin = -127;
      } else {
        s.qmin = c_.range(s.qmin, s.qmin + 40);
        s.qmax = c_.range(s.qmax - 40, s.qmax);
      }
    }
    return s;
  }

  Elem random_act_elem(bool allow_wide = true) {
    Elem s = random_storage(allow_wide);
    return Elem::per_tensor(s, random_scale(), random_zp(s));
  }

  std::vector<int64_t> random_stored(int64_t count, int64_t lo, int64_t hi) {
    std::vector<int64_t> v(static_cast<size_t>(count));
    const int64_t mode = c_.range(0, 9);
    for (auto& x : v) {
      if (mode == 0) x = c_.chance(1, 2) ? lo : hi;  // saturation
      else x = c_.range(lo, hi);
    }
    return v;
  }

  // A filter or matmul weight type: mostly i8 with zero point 0, per tensor or per axis.
  Elem weight_elem(int axis, int64_t channels) {
    Elem s = Elem::storage(!c_.chance(1, 10), 8);
    if (s.is_signed && c_.chance(1, 4)) {
      s.narrow = true;
      s.qmin = -127;
    }
    const bool symmetric = s.is_signed && !c_.chance(1, 5);
    const int64_t n = axis >= 0 ? channels : 1;
    for (int64_t i = 0; i < n; ++i) {
      s.scales.push_back(printed_scale(random_scale() * 0.05));
      s.zps.push_back(symmetric ? 0 : random_zp(s));
    }
    s.axis = axis;
    return s;
  }

  int64_t random_dim(int64_t max) {
    switch (c_.range(0, 5)) {
      case 0: return 1;
      case 1: return std::min<int64_t>(max, c_.chance(1, 2) ? 7 : 13);
      default: return c_.range(1, max);
    }
  }

  int64_t random_channels() {
    switch (c_.range(0, 7)) {
      case 0: return 1;
      case 1: return std::min<int64_t>(limits_.max_channels, 16);
      case 2: return std::min<int64_t>(limits_.max_channels, 32);
      default: return c_.range(1, limits_.max_channels);
    }
  }

  // --- building blocks --------------------------------------------------------------------

  Val make_input() {
    Shape shape{c_.range(1, limits_.max_batch), random_dim(limits_.max_spatial), random_dim(limits_.max_spatial),
                random_channels()};
    if (c_.chance(1, 2)) {
      Val x = g_.add_input(shape, Elem::f32());
      note("qcast");
      Val q = g_.emit("quant.qcast", {x}, "", shape, random_act_elem());
      pool_.push_back(q);
      return q;
    }
    Val x = g_.add_input(shape, random_act_elem());
    pool_.push_back(x);
    return x;
  }

  Val dcast(const Val& x) { return g_.emit("quant.dcast", {x}, "", x.shape, Elem::f32()); }

  Val requantize(const Val& x, const Elem& to) { return g_.emit("qrt.requantize", {x}, "", x.shape, to); }

  // Per-axis values become per-tensor first; with `need_8bit`, 8-bit too (else up to 16 bits).
  Val per_tensor_8bit_or_any(const Val& x, bool need_8bit) {
    if (!x.elem.per_axis() && !x.elem.scales.empty() && x.elem.bits <= (need_8bit ? 8 : 16)) return x;
    note("requant");
    return requantize(x, random_act_elem(!need_8bit));
  }

  // Another per-tensor value of `shape`: an earlier one, a new input, or a constant.
  Val operand_like(const Shape& shape) {
    std::vector<Val> same;
    for (const Val& v : pool_)
      if (v.shape == shape) same.push_back(v);
    const int64_t r = c_.range(0, 3);
    if (r == 0 && !same.empty()) return c_.pick(same);
    const Elem e = random_act_elem();
    if (r == 1) return g_.constant_ints(shape, e, random_stored(num_elements(shape), e.qmin, e.qmax));
    Val v = g_.add_input(shape, e);
    pool_.push_back(v);
    return v;
  }

  std::string fused_clamp(const Elem& out) {
    if (!c_.chance(1, 4)) return "";
    const double lo_real = static_cast<double>(out.qmin - out.zps[0]) * out.scales[0];
    const double hi_real = static_cast<double>(out.qmax - out.zps[0]) * out.scales[0];
    const double span = hi_real - lo_real;
    double a = lo_real - 0.1 * span + c_.unit() * 1.2 * span;
    double b = lo_real - 0.1 * span + c_.unit() * 1.2 * span;
    if (c_.chance(1, 3)) a = 0.0;  // relu-like
    if (a > b) std::swap(a, b);
    return ", clamp_max = " + f32_attr(b) + ", clamp_min = " + f32_attr(a);
  }

  Val finish_activation(const Val& v) {
    if (!v.elem.is_float() && !v.elem.per_axis() && v.elem.bits <= 16) pool_.push_back(v);
    return v;
  }

  // --- steps ------------------------------------------------------------------------------

  Val step_once(const Val& x) {
    const int64_t r = c_.range(0, 99);
    const bool too_big = num_elements(x.shape) > kMaxActivationElements / 2;
    // One contraction in six may take 16-bit activations (int64 accumulators, the byte-half
    // kernels); the others need 8-bit ones.
    if (r < 22) return conv(per_tensor_8bit_or_any(x, !c_.chance(1, 6)), false);
    if (r < 32) return conv(per_tensor_8bit_or_any(x, !c_.chance(1, 6)), true);
    if (r < 40) return matmul(per_tensor_8bit_or_any(x, !c_.chance(1, 6)));
    if (r < 48) return pool(x);
    if (r < 58) return binary(x, r < 54 ? "qrt.add" : "qrt.mul");
    if (r < 62) return unary_clamp(x, r < 60);
    if (r < 66) return finish_activation(requantize(x, random_act_elem()));
    if (r < 71 && !too_big) return concat(x);
    if (r < 74 && !too_big) return pad(x);
    if (r < 77) return transpose(x);
    if (r < 79) return reshape(x);
    if (r < 84) return softmax_or_logistic(x, r < 81);
    if (r < 88) return mean(x);
    if (r < 91) return conv_transpose(per_tensor_8bit_or_any(x, !c_.chance(1, 6)));
    return qdq_region(x);
  }

  struct Window {
    int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oh, ow;
  };

  // A window over H x W: kernel, strides, dilations and pads with an output of at least 1x1
  // (pads smaller than the kernel when `pool`).
  Window random_window(int64_t h, int64_t w, bool pool, int64_t max_kernel) {
    Window win{};
    const std::vector<int64_t> kernels{1, 1, 2, 3, 3, 3, 5, 7};
    win.kh = std::min(c_.pick(kernels), max_kernel);
    win.kw = c_.chance(3, 4) ? win.kh : std::min(c_.pick(kernels), max_kernel);
    win.sh = c_.pick(std::vector<int64_t>{1, 1, 1, 2, 2, 3});
    win.sw = c_.chance(3, 4) ? win.sh : c_.range(1, 2);
    win.dh = !pool && c_.chance(1, 6) ? 2 : 1;
    win.dw = !pool && c_.chance(1, 6) ? c_.range(1, 3) : 1;
    auto pads = [&](int64_t k, int64_t d, int64_t& a, int64_t& b) {
      const int64_t reach = d * (k - 1);
      if (c_.chance(1, 2)) {
        a = reach / 2;
        b = reach - a;
      } else {
        a = c_.range(0, reach);
        b = c_.range(0, reach);
      }
      if (pool) {
        a = std::min(a, k - 1);
        b = std::min(b, k - 1);
      }
    };
    pads(win.kh, win.dh, win.pt, win.pb);
    pads(win.kw, win.dw, win.pl, win.pr);
    auto out = [](int64_t in, int64_t a, int64_t b, int64_t k, int64_t d, int64_t s) {
      const int64_t span = in + a + b - d * (k - 1) - 1;
      return span < 0 ? int64_t{0} : span / s + 1;
    };
    win.oh = out(h, win.pt, win.pb, win.kh, win.dh, win.sh);
    win.ow = out(w, win.pl, win.pr, win.kw, win.dw, win.sw);
    if (win.oh < 1 || win.ow < 1) {  // too little input: a 1x1 window
      win = Window{1, 1, win.sh, win.sw, 1, 1, 0, 0, 0, 0, 0, 0};
      win.oh = (h - 1) / win.sh + 1;
      win.ow = (w - 1) / win.sw + 1;
    }
    return win;
  }

  // The i32 bias of a quantized matmul or convolution: scale s_in * s_w[o], zero point 0.
  Val bias_for(const Val& x, const Elem& w, int64_t channels) {
    Elem b = Elem::storage(true, 32);
    b.axis = w.per_axis() ? 0 : -1;
    for (double sw : w.scales) {
      b.scales.push_back(x.elem.scales[0] * sw);
      b.zps.push_back(0);
    }
    const int64_t magnitude = int64_t{1} << c_.range(4, 24);
    return g_.constant_ints({channels}, b, random_stored(channels, -magnitude, magnitude));
  }

  // The result type of a matmul or convolution: usually per tensor, sometimes per channel,
  // sometimes the raw i32 accumulator.
  Elem accumulate_result(const Val& x, const Elem& w, int64_t channels, int channel_axis) {
    const int64_t r = c_.range(0, 19);
    // The i32 accumulator result only for 8-bit activations: 16-bit ones accumulate in int64.
    if (r == 0 && x.elem.bits <= 8) {
      Elem acc = Elem::storage(true, 32);
      acc.axis = w.per_axis() ? channel_axis : -1;
      for (double sw : w.scales) {
        acc.scales.push_back(x.elem.scales[0] * sw);
        acc.zps.push_back(0);
      }
      return acc;
    }
    if (r == 1) {
      Elem s = random_storage(false);
      s.axis = channel_axis;
      for (int64_t i = 0; i < channels; ++i) {
        s.scales.push_back(printed_scale(random_scale()));
        s.zps.push_back(random_zp(s));
      }
      return s;
    }
    return random_act_elem();
  }

  // One group four times in five, else a divisor of `ci` channels above 1.
  int64_t random_groups(int64_t ci) {
    if (ci <= 1 || !c_.chance(1, 5)) return 1;
    std::vector<int64_t> divisors;
    for (int64_t d = 2; d <= ci; ++d)
      if (ci % d == 0) divisors.push_back(d);
    return c_.pick(divisors);
  }

  // Valid graphs only: K = (ci / groups)·kh·kw terms of up to 255 x 255 must fit the int32
  // accumulator (the verifier's bound), so wide inputs (after a reshape) get small windows:
  // the largest kernel side up to `most` that fits, after making `groups` = ci where even one
  // tap per group would not.
  int64_t fitting_kernel(int64_t ci, int64_t& groups, int64_t most) {
    constexpr int64_t kMaxTerms = 2147483647 / (255 * 255);
    if (ci / groups > kMaxTerms) groups = ci;
    int64_t kernel = most;
    while (kernel > 1 && (ci / groups) * kernel * kernel > kMaxTerms) --kernel;
    return kernel;
  }

  Val conv(const Val& x, bool depthwise) {
    note(depthwise ? "dwconv" : "conv");
    const int64_t n = x.shape[0], h = x.shape[1], w = x.shape[2], ci = x.shape[3];
    int64_t groups = depthwise ? ci : random_groups(ci);
    const int64_t max_kernel = fitting_kernel(ci, groups, 7);
    int64_t co = depthwise || groups == ci ? ci * (c_.chance(1, 4) ? 2 : 1)
                                          : groups * c_.range(1, std::max<int64_t>(1, limits_.max_channels / groups));
    const Window win = random_window(h, w, false, max_kernel);
    const Elem we = weight_elem(0, co);
    // NCHW, as ONNX graphs hold them before the to-nhwc pass: transposes around the conv.
    const bool nchw = c_.chance(1, 8);
    const Shape wshape = nchw ? Shape{co, ci / groups, win.kh, win.kw} : Shape{co, win.kh, win.kw, ci / groups};
    const Val filter = g_.constant_ints(wshape, we, random_stored(num_elements(wshape), we.qmin, we.qmax));
    const Val input = nchw ? g_.emit("qrt.transpose", {x}, "perm = [0, 3, 1, 2]", {n, ci, h, w}, x.elem) : x;
    std::vector<Val> operands{input, filter};
    if (c_.chance(3, 4)) operands.push_back(bias_for(x, we, co));
    Elem out = accumulate_result(x, we, co, nchw ? 1 : 3);
    std::string attrs = "dilations = " + list_text({win.dh, win.dw}) + ", groups = " + std::to_string(groups) +
                        " : i64, " + (nchw ? "layout = \"NCHW\", " : "") + "pads = " +
                        list_text({win.pt, win.pl, win.pb, win.pr}) + ", strides = " + list_text({win.sh, win.sw});
    if (out.scales.size() == 1 && out.bits == 8 && !out.per_axis()) attrs += fused_clamp(out);
    if (!nchw) return finish_activation(g_.emit("qrt.conv2d", operands, attrs, {n, win.oh, win.ow, co}, out));
    const Val y = g_.emit("qrt.conv2d", operands, attrs, {n, co, win.oh, win.ow}, out);
    if (out.per_axis()) out.axis = 3;
    return finish_activation(g_.emit("qrt.transpose", {y}, "perm = [0, 2, 3, 1]", {n, win.oh, win.ow, co}, out));
  }

  // A quantized transposed convolution (NHWC): the window of a convolution, pads that crop
  // the full output, sometimes output_padding and a fused clamp; strides fall to 1 where the
  // output would grow past the activation limit.
  Val conv_transpose(const Val& x) {
    note("conv_transpose");
    const int64_t n = x.shape[0], h = x.shape[1], w = x.shape[2], ci = x.shape[3];
    int64_t groups = random_groups(ci);
    const int64_t max_kernel = fitting_kernel(ci, groups, 5);
    const int64_t co = groups * c_.range(1, std::max<int64_t>(1, limits_.max_channels / groups));
    Window win = random_window(h, w, false, max_kernel);
    int64_t oph = 0, opw = 0, oh = 0, ow = 0;
    for (int attempt = 0; attempt < 2; ++attempt) {
      const int64_t full_h = (h - 1) * win.sh + win.dh * (win.kh - 1) + 1, full_w = (w - 1) * win.sw + win.dw * (win.kw - 1) + 1;
      win.pt = c_.range(0, (full_h - 1) / 2), win.pb = c_.range(0, (full_h - 1) / 2);
      win.pl = c_.range(0, (full_w - 1) / 2), win.pr = c_.range(0, (full_w - 1) / 2);
      oph = c_.chance(1, 3) ? c_.range(0, std::max(win.sh, win.dh) - 1) : 0;
      opw = c_.chance(1, 3) ? c_.range(0, std::max(win.sw, win.dw) - 1) : 0;
      oh = full_h - win.pt - win.pb + oph, ow = full_w - win.pl - win.pr + opw;
      if (n * oh * ow * co <= kMaxActivationElements) break;
      win.sh = win.sw = 1;  // the second attempt grows by the window alone
      win.kh = win.kw = 1, win.dh = win.dw = 1;
    }
    const Elem we = weight_elem(0, co);
    const Shape wshape{co, win.kh, win.kw, ci / groups};
    const Val filter = g_.constant_ints(wshape, we, random_stored(num_elements(wshape), we.qmin, we.qmax));
    std::vector<Val> operands{x, filter};
    if (c_.chance(3, 4)) operands.push_back(bias_for(x, we, co));
    const Elem out = accumulate_result(x, we, co, 3);
    std::string attrs = "dilations = " + list_text({win.dh, win.dw}) + ", groups = " + std::to_string(groups) +
                        " : i64, output_padding = " + list_text({oph, opw}) + ", pads = " +
                        list_text({win.pt, win.pl, win.pb, win.pr}) + ", strides = " + list_text({win.sh, win.sw});
    if (out.scales.size() == 1 && out.bits == 8 && !out.per_axis()) attrs += fused_clamp(out);
    return finish_activation(g_.emit("qrt.conv_transpose2d", operands, attrs, {n, oh, ow, co}, out));
  }

  Val matmul(const Val& x) {
    note("matmul");
    const int64_t rows = x.shape[0] * x.shape[1] * x.shape[2], k = x.shape[3];
    const int64_t cols = random_channels();
    const Val lhs = g_.emit("qrt.reshape", {x}, "", {rows, k}, x.elem);
    Elem we;
    Val rhs;
    if (c_.chance(1, 6)) {  // two activations
      we = random_act_elem(false);
      rhs = g_.add_input({k, cols}, we);
    } else {
      we = weight_elem(c_.chance(1, 2) ? 1 : -1, cols);
      rhs = g_.constant_ints({k, cols}, we, random_stored(k * cols, we.qmin, we.qmax));
    }
    std::vector<Val> operands{lhs, rhs};
    if (c_.chance(2, 3)) operands.push_back(bias_for(x, we, cols));
    const Elem out = accumulate_result(x, we, cols, 1);
    std::string attrs = out.scales.size() == 1 && out.bits == 8 ? fused_clamp(out) : "";
    if (!attrs.empty()) attrs = attrs.substr(2);
    Val y = g_.emit("qrt.matmul", operands, attrs, {rows, cols}, out);
    if (out.per_axis()) y = requantize(y, random_act_elem());  // per-axis values cannot be reshaped
    return finish_activation(g_.emit("qrt.reshape", {y}, "", {x.shape[0], x.shape[1], x.shape[2], cols}, y.elem));
  }

  Val pool(const Val& x) {
    const bool is_max = c_.chance(1, 2);
    note(is_max ? "maxpool" : "avgpool");
    const Window win = random_window(x.shape[1], x.shape[2], true, 3);
    std::string attrs = "kernel = " + list_text({win.kh, win.kw}) + ", pads = " +
                        list_text({win.pt, win.pl, win.pb, win.pr}) + ", strides = " + list_text({win.sh, win.sw});
    Elem out = x.elem;
    if (!is_max) {
      if (c_.chance(1, 2)) attrs = "count_include_pad = 1 : i64, " + attrs;
      if (c_.chance(1, 2)) out = random_act_elem();
    }
    return finish_activation(
        g_.emit(is_max ? "qrt.max_pool2d" : "qrt.avg_pool2d", {x}, attrs, {x.shape[0], win.oh, win.ow, x.shape[3]}, out));
  }

  Val binary(const Val& x, const char* op) {
    note(std::strcmp(op, "qrt.add") == 0 ? "add" : "mul");
    Val other;
    if (c_.chance(1, 5)) {  // broadcast a per-channel constant
      const Shape shape{1, 1, 1, x.shape[3]};
      const Elem e = random_act_elem(false);
      other = g_.constant_ints(shape, e, random_stored(x.shape[3], e.qmin, e.qmax));
    } else {
      other = operand_like(x.shape);
    }
    const Elem out = random_act_elem();
    std::string attrs = out.bits == 8 ? fused_clamp(out) : "";
    if (!attrs.empty()) attrs = attrs.substr(2);
    const bool swap = c_.chance(1, 2);
    return finish_activation(g_.emit(op, swap ? std::vector<Val>{other, x} : std::vector<Val>{x, other}, attrs,
                                     x.shape, out));
  }

  Val unary_clamp(const Val& x, bool relu) {
    note(relu ? "relu" : "clamp");
    if (relu) return finish_activation(g_.emit("qrt.relu", {x}, "", x.shape, x.elem));
    const double lo = static_cast<double>(x.elem.qmin - x.elem.zps[0]) * x.elem.scales[0];
    const double hi = static_cast<double>(x.elem.qmax - x.elem.zps[0]) * x.elem.scales[0];
    double a = lo + c_.unit() * (hi - lo), b = lo + c_.unit() * (hi - lo);
    if (a > b) std::swap(a, b);
    return finish_activation(
        g_.emit("qrt.clamp", {x}, "max = " + f32_attr(b) + ", min = " + f32_attr(a), x.shape, x.elem));
  }

  Val concat(const Val& x) {
    note("concat");
    const int axis = c_.chance(3, 4) ? 3 : static_cast<int>(c_.range(1, 2));
    std::vector<Val> operands{x};
    Shape out = x.shape;
    const int64_t extra = c_.range(1, 2);
    for (int64_t i = 0; i < extra; ++i) {
      Shape s = x.shape;
      s[static_cast<size_t>(axis)] = axis == 3 ? random_channels() : random_dim(limits_.max_spatial);
      out[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
      operands.push_back(operand_like(s));
    }
    if (c_.chance(1, 2)) std::swap(operands[0], operands[1]);
    const Elem e = c_.chance(1, 3) ? operands[0].elem : random_act_elem();
    return finish_activation(g_.emit("qrt.concat", operands, "axis = " + std::to_string(axis) + " : i64", out, e));
  }

  Val pad(const Val& x) {
    note("pad");
    std::vector<int64_t> pads(8, 0);
    for (int d : {1, 2}) {
      pads[static_cast<size_t>(d)] = c_.range(0, 2);
      pads[static_cast<size_t>(d + 4)] = c_.range(0, 2);
    }
    if (c_.chance(1, 6)) pads[7] = c_.range(1, 3);
    Shape out = x.shape;
    for (size_t d = 0; d < 4; ++d) out[d] += pads[d] + pads[d + 4];
    const double value = c_.chance(1, 2) ? 0.0 : (c_.unit() - 0.5) * 200.0 * x.elem.scales[0];
    return finish_activation(
        g_.emit("qrt.pad", {x}, "pads = " + list_text(pads) + ", value = " + f32_attr(value), out, x.elem));
  }

  Val transpose(const Val& x) {
    note("transpose");
    std::vector<int64_t> perm{0, 1, 2, 3};
    for (size_t i = 3; i > 0; --i) std::swap(perm[i], perm[static_cast<size_t>(c_.range(0, static_cast<int64_t>(i)))]);
    Shape out(4);
    for (size_t i = 0; i < 4; ++i) out[i] = x.shape[static_cast<size_t>(perm[i])];
    return finish_activation(g_.emit("qrt.transpose", {x}, "perm = " + list_text(perm), out, x.elem));
  }

  Val reshape(const Val& x) {
    note("reshape");
    const int64_t n = x.shape[0], h = x.shape[1], w = x.shape[2], ch = x.shape[3];
    const std::vector<Shape> shapes{{n, 1, h * w, ch}, {n, h * w, 1, ch}, {n, w, h, ch}, {n, h, w * ch, 1}, {n, 1, 1, h * w * ch}};
    return finish_activation(g_.emit("qrt.reshape", {x}, "", c_.pick(shapes), x.elem));
  }

  Val softmax_or_logistic(const Val& x, bool softmax) {
    note(softmax ? "softmax" : "logistic");
    Elem out;
    switch (c_.range(0, 2)) {
      case 0: out = Elem::per_tensor(Elem::storage(true, 8), 1.0 / 256, -128); break;
      case 1: out = Elem::per_tensor(Elem::storage(false, 8), 1.0 / 256, 0); break;
      default: out = random_act_elem(); break;
    }
    if (!softmax) return finish_activation(g_.emit("qrt.logistic", {x}, "", x.shape, out));
    std::string attrs = "axis = " + std::to_string(c_.chance(3, 4) ? 3 : c_.range(1, 2)) + " : i64";
    if (c_.chance(1, 4)) attrs += ", beta = " + f32_attr(c_.chance(1, 2) ? 0.5 : 2.0);
    return finish_activation(g_.emit("qrt.softmax", {x}, attrs, x.shape, out));
  }

  Val mean(const Val& x) {
    note("mean");
    const bool spatial = c_.chance(3, 4);
    const Shape out = spatial ? Shape{x.shape[0], 1, 1, x.shape[3]} : Shape{x.shape[0], x.shape[1], x.shape[2], 1};
    const std::string axes = spatial ? "[1, 2]" : "[3]";
    return finish_activation(
        g_.emit("qrt.mean", {x}, "axes = " + axes + ", keepdims = 1 : i64", out, random_act_elem()));
  }

  // A constant of `shape` holding values k / 64 with |k| <= 64, exact in bf16 and f16 alike
  // (the f32 bits' top half for bf16; for f16 the exponent rebiased, 10 fraction bits kept).
  Val sixty_fourths(const Shape& shape, const Elem& h) {
    std::vector<uint8_t> bytes;
    for (int64_t i = 0; i < num_elements(shape); ++i) {
      const float v = float(c_.range(-64, 64)) / 64.0f;
      uint32_t x;
      std::memcpy(&x, &v, 4);
      uint32_t bits = x >> 16;
      if (h.kind == Elem::kF16) {
        bits = (x & 0x7FFFFFFFu) == 0 ? (x >> 16) : ((x >> 16) & 0x8000u) | ((((x >> 23) & 0xFFu) - 112u) << 10) | ((x >> 13) & 0x3FFu);
      }
      bytes.push_back(uint8_t(bits & 0xFF));
      bytes.push_back(uint8_t(bits >> 8));
    }
    return g_.constant_float_bytes(shape, h, bytes);
  }

  // The f32 NHWC value xd through a bf16 or f16 region: a cast (one rounding), a convolution or
  // a matmul over its rows with constant filters and bias of that type (the f32 kernels on
  // widened operands, each result rounded once), a cast back to f32.
  Val half_float_region(const Val& xd) {
    const bool bf16 = c_.chance(1, 2);
    const Elem h = Elem::half(bf16);
    const Shape& s = xd.shape;
    const Val xh = g_.emit("qrt.cast", {xd}, "", s, h);
    const int64_t ci = s[3], co = random_channels();
    const bool bias = c_.chance(1, 2);
    Val yh;
    if (c_.chance(1, 2)) {
      note(bf16 ? "bf16_conv" : "f16_conv");
      const Window win = random_window(s[1], s[2], false, 5);
      const Shape wshape{co, win.kh, win.kw, ci};
      std::vector<Val> operands{xh, sixty_fourths(wshape, h)};
      if (bias) operands.push_back(sixty_fourths({co}, h));
      yh = g_.emit("qrt.conv2d", operands,
                   "dilations = " + list_text({win.dh, win.dw}) + ", pads = " + list_text({win.pt, win.pl, win.pb, win.pr}) +
                       ", strides = " + list_text({win.sh, win.sw}),
                   {s[0], win.oh, win.ow, co}, h);
    } else {
      note(bf16 ? "bf16_matmul" : "f16_matmul");
      const int64_t rows = s[0] * s[1] * s[2];
      const Val lhs = g_.emit("qrt.reshape", {xh}, "", {rows, ci}, h);
      std::vector<Val> operands{lhs, sixty_fourths({ci, co}, h)};
      if (bias) operands.push_back(sixty_fourths({co}, h));
      const Val m = g_.emit("qrt.matmul", operands, "", {rows, co}, h);
      yh = g_.emit("qrt.reshape", {m}, "", {s[0], s[1], s[2], co}, h);
    }
    if (c_.chance(1, 2)) yh = half_float_step(yh, h, bf16);
    return g_.emit("qrt.cast", {yh}, "", yh.shape, Elem::f32());
  }

  // One op of a bf16/f16 region after its contraction: a max or average pool, a mean over
  // H and W, a softmax over the channels, or a layer norm over them (the widening kernels).
  Val half_float_step(const Val& x, const Elem& h, bool bf16) {
    const Shape& s = x.shape;
    const std::string kind = bf16 ? "bf16_" : "f16_";
    switch (c_.range(0, 4)) {
      case 0:
      case 1: {
        const bool is_max = c_.chance(1, 2);
        note(kind + (is_max ? "max_pool" : "avg_pool"));
        const Window win = random_window(s[1], s[2], true, 3);
        std::string attrs = "kernel = " + list_text({win.kh, win.kw}) + ", pads = " + list_text({win.pt, win.pl, win.pb, win.pr}) +
                            ", strides = " + list_text({win.sh, win.sw});
        if (!is_max && c_.chance(1, 3)) attrs = "count_include_pad = 1 : i64, " + attrs;
        return g_.emit(is_max ? "qrt.max_pool2d" : "qrt.avg_pool2d", {x}, attrs, {s[0], win.oh, win.ow, s[3]}, h);
      }
      case 2:
        note(kind + "mean");
        return g_.emit("qrt.mean", {x}, "axes = [1, 2], keepdims = 1 : i64", {s[0], 1, 1, s[3]}, h);
      case 3:
        note(kind + "softmax");
        return g_.emit("qrt.softmax", {x}, "axis = 3 : i64", s, h);
      default: {
        note(kind + "layer_norm");
        std::vector<Val> operands{x, sixty_fourths({s[3]}, h)};
        if (c_.chance(1, 2)) operands.push_back(sixty_fourths({s[3]}, h));
        return g_.emit("qrt.layer_norm", operands, "axis = 3 : i64, epsilon = " + f32_attr(1.0e-5), s, h);
      }
    }
  }

  // dcast -> float op -> qcast: what QDQ models hold; fold-qdq turns most of it into
  // integer ops, and plans without passes run the float kernels.
  Val qdq_region(const Val& x) {
    note("qdq");
    const Val xd = dcast(x);
    Val y;
    switch (c_.range(0, 7)) {
      case 0: y = g_.emit("qrt.relu", {xd}, "", x.shape, Elem::f32()); break;
      case 7: y = half_float_region(xd); break;
      case 6: {
        // A weight-only matmul whose activations are quantized per call to i8 per row
        // (activations = "dynamic_i8", the kDynGemm kernels), on the rows of the NHWC value.
        note("dynamic_i8");
        const int64_t rows = x.shape[0] * x.shape[1] * x.shape[2], k = x.shape[3], cols = random_channels();
        const Val lhs = g_.emit("qrt.reshape", {xd}, "", {rows, k}, Elem::f32());
        const Elem we = weight_elem(c_.chance(1, 2) ? 1 : -1, cols);
        const Val wq = g_.constant_ints({k, cols}, we, random_stored(k * cols, we.qmin, we.qmax));
        const Val m = g_.emit("qrt.matmul", {lhs, wq}, "activations = \"dynamic_i8\"", {rows, cols}, Elem::f32());
        y = g_.emit("qrt.reshape", {m}, "", {x.shape[0], x.shape[1], x.shape[2], cols}, Elem::f32());
        break;
      }
      case 5: {
        // A float function of one operand: 8-bit regions become a 256-entry table, others
        // run as element-wise programs. NaN (log of a negative) quantizes to the zero point.
        static const char* const fns[] = {"qrt.exp",   "qrt.tanh",  "qrt.erf",  "qrt.log",   "qrt.log1p",
                                          "qrt.expm1", "qrt.sin",   "qrt.cos",  "qrt.cbrt",  "qrt.abs",
                                          "qrt.sign",  "qrt.floor", "qrt.ceil", "qrt.rsqrt", "qrt.sqrt",
                                          "qrt.neg",   "qrt.round_nearest_even", "qrt.round_nearest_afz"};
        const char* fn = fns[c_.range(0, int64_t(std::size(fns)) - 1)];
        note(fn + 4);
        y = g_.emit(fn, {xd}, "", x.shape, Elem::f32());
        break;
      }
      case 1: y = g_.emit("qrt.add", {xd, dcast(operand_like(x.shape))}, "", x.shape, Elem::f32()); break;
      case 2: {
        const Window win = random_window(x.shape[1], x.shape[2], true, 3);
        y = g_.emit("qrt.avg_pool2d", {xd},
                    "kernel = " + list_text({win.kh, win.kw}) + ", pads = " + list_text({win.pt, win.pl, win.pb, win.pr}) +
                        ", strides = " + list_text({win.sh, win.sw}),
                    {x.shape[0], win.oh, win.ow, x.shape[3]}, Elem::f32());
        break;
      }
      default: {
        const Val x8 = per_tensor_8bit_or_any(x, true);
        const Val x8d = x8.name == x.name ? xd : dcast(x8);
        const int64_t ci = x.shape[3], co = random_channels();
        const Window win = random_window(x.shape[1], x.shape[2], false, 5);
        const Elem we = weight_elem(c_.chance(1, 2) ? 0 : -1, co);
        const Shape wshape{co, win.kh, win.kw, ci};
        const Val wq = g_.constant_ints(wshape, we, random_stored(num_elements(wshape), we.qmin, we.qmax));
        std::vector<Val> operands{x8d, dcast(wq)};
        if (c_.chance(1, 2)) operands.push_back(dcast(bias_for(x8, we, co)));
        y = g_.emit("qrt.conv2d", operands,
                    "dilations = " + list_text({win.dh, win.dw}) + ", pads = " +
                        list_text({win.pt, win.pl, win.pb, win.pr}) + ", strides = " + list_text({win.sh, win.sw}),
                    {x.shape[0], win.oh, win.ow, co}, Elem::f32());
        break;
      }
    }
    return finish_activation(g_.emit("quant.qcast", {y}, "", y.shape, random_act_elem()));
  }
};

}  // namespace

GeneratedGraph generate_graph(Chooser& chooser, const GenLimits& limits) {
  return Generator(chooser, limits).run();
}

}  // namespace qrt_fuzz
