// Tests: 1-D and 3-D Conv, ConvInteger, QLinearConv and pooling (importers/onnx_spatial_ops.cpp),
// which run as qrt's 2-D ops. Each is checked against a direct loop over the ONNX definition
// written here (integer-valued floats, so every sum is exact), with padding, strides,
// dilations and groups; QLinearConv 1-D against its own 2-D form byte for byte; and the
// refusals name the node and the reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "jit/ref/reference.h"
#include "tests/importers/onnx_builders.h"
#include "tests/importers/onnx_jit_runner.h"

namespace {

using namespace onnx_builders;

using Model = OneNode;

/// Imports `m` and runs it on the reference with input `x`; the output's elements and shape.
std::vector<double> run(const Model& m, const std::vector<double>& x, std::vector<int64_t>* out_dims = nullptr) {
  auto g = import(m.model);
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  qrt::Tensor t = qrt::Tensor::zeros(g->values[size_t(g->inputs[0])].type);
  REQUIRE(size_t(t.num_elements()) == x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (t.type.element.is_float()) t.set_float(i, x[i]);
    else t.set_int(i, int64_t(x[i]));
  }
  auto out = qrt::run_reference(*g, {t});
  REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
  const qrt::Tensor& r = out->at(0);
  if (out_dims) *out_dims = r.type.dims;
  std::vector<double> y;
  for (size_t i = 0; i < size_t(r.num_elements()); ++i) {
    y.push_back(r.type.element.is_float() ? r.float_at(i) : double(r.int_at(i)));
  }
  return y;
}

/// Runs `m` on input `x` on the JIT backend at every ISA level the host has and checks the
/// reference's bytes; the kernel of its op `kernel_op` must be a JIT kernel, not a fallback.
void check_jit_matches_reference(const Model& m, const std::vector<double>& x, const std::string& kernel_op) {
  auto g = import(m.model);
  REQUIRE_MESSAGE(g.is_ok(), g.status().to_string());
  qrt::Tensor t = qrt::Tensor::zeros(g->values[size_t(g->inputs[0])].type);
  for (size_t i = 0; i < x.size(); ++i) {
    if (t.type.element.is_float()) t.set_float(i, x[i]);
    else t.set_int(i, int64_t(x[i]));
  }
  auto want = qrt::run_reference(*g, {t});
  REQUIRE_MESSAGE(want.is_ok(), want.status().to_string());
  for (const std::string& level : tested_levels()) {
    CAPTURE(level);
    std::string kernel;
    auto got = run_jit(*g, {t}, kernel, kernel_op, level.c_str());
    REQUIRE_MESSAGE(got.is_ok(), got.status().to_string());
    REQUIRE(got->at(0).byte_size() == want->at(0).byte_size());
    CHECK(std::memcmp(got->at(0).bytes(), want->at(0).bytes(), want->at(0).byte_size()) == 0);
    CHECK_MESSAGE(!kernel.empty(), kernel_op);
    CHECK_MESSAGE(kernel != "reference", kernel);
  }
}

std::vector<double> small_ints(size_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

std::vector<float> as_floats(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

/// A window over `k` spatial axes: sizes in, kernel, strides, dilations, begin pads, out.
struct Axes {
  std::vector<int64_t> in, k, s, d, pad, out;
  Axes(std::vector<int64_t> in_, std::vector<int64_t> k_, std::vector<int64_t> s_, std::vector<int64_t> d_,
       std::vector<int64_t> pads)  // pads: begins then ends
      : in(in_), k(k_), s(s_), d(d_), pad(pads.begin(), pads.begin() + std::ptrdiff_t(in_.size())) {
    for (size_t i = 0; i < in.size(); ++i) {
      out.push_back((in[i] + pads[i] + pads[i + in.size()] - d[i] * (k[i] - 1) - 1) / s[i] + 1);
    }
  }
  int64_t volume(const std::vector<int64_t>& v) const {
    int64_t n = 1;
    for (int64_t x : v) n *= x;
    return n;
  }
  /// Visits every (output position, tap) pair whose input position lies inside the input:
  /// f(flat output index, flat tap index, flat input index).
  template <typename F>
  void each(F f) const {
    const size_t r = in.size();
    std::vector<int64_t> o(r, 0);
    for (int64_t oi = 0; oi < volume(out); ++oi) {
      int64_t rem = oi;
      for (size_t a = r; a-- > 0;) o[a] = rem % out[a], rem /= out[a];
      for (int64_t ti = 0; ti < volume(k); ++ti) {
        int64_t trem = ti, flat = 0;
        bool inside = true;
        std::vector<int64_t> t(r);
        for (size_t a = r; a-- > 0;) t[a] = trem % k[a], trem /= k[a];
        for (size_t a = 0; a < r; ++a) {
          const int64_t p = o[a] * s[a] - pad[a] + t[a] * d[a];
          inside = inside && p >= 0 && p < in[a];
          flat = flat * in[a] + p;
        }
        if (inside) f(oi, ti, flat);
      }
    }
  }
};

/// ONNX Conv over [N, C, spatial...] with filter [O, C/g, k...], bias, and (x - zx)(w - zw)
/// products: a direct loop.
std::vector<double> direct_conv(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias,
                                int64_t n, int64_t c, int64_t o, int64_t group, const Axes& ax, double zx = 0,
                                double zw = 0) {
  const int64_t cg = c / group, og = o / group, in_sz = ax.volume(ax.in), out_sz = ax.volume(ax.out), k_sz = ax.volume(ax.k);
  std::vector<double> y(size_t(n * o * out_sz), 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < o; ++oc) {
      const int64_t grp = oc / og;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const double* xs = x.data() + (b * c + grp * cg + ci) * in_sz;
        const double* ws = w.data() + (oc * cg + ci) * k_sz;
        ax.each([&](int64_t oi, int64_t ti, int64_t xi) { y[size_t((b * o + oc) * out_sz + oi)] += (xs[xi] - zx) * (ws[ti] - zw); });
      }
      if (!bias.empty()) {
        for (int64_t oi = 0; oi < out_sz; ++oi) y[size_t((b * o + oc) * out_sz + oi)] += bias[size_t(oc)];
      }
    }
  }
  return y;
}

Model conv_model(const std::vector<int64_t>& xd, const std::vector<int64_t>& wd, const std::vector<double>& w,
                 const std::vector<double>& bias, int64_t group, const std::vector<int64_t>& s,
                 const std::vector<int64_t>& d, const std::vector<int64_t>& pads) {
  Model m("Conv", xd, bias.empty() ? std::vector<std::string>{"w"} : std::vector<std::string>{"w", "b"});
  add_floats(m.g, "w", wd, as_floats(w));
  if (!bias.empty()) add_floats(m.g, "b", {int64_t(bias.size())}, as_floats(bias));
  set_int_attr(m.node, "group", group);
  set_ints_attr(m.node, "strides", s);
  set_ints_attr(m.node, "dilations", d);
  if (!pads.empty()) set_ints_attr(m.node, "pads", pads);
  return m;
}

}  // namespace

TEST_CASE("1-D and 3-D Conv give the direct loop's sums: pads, strides, dilations, groups, bias") {
  SUBCASE("1-D, two groups") {
    const Axes ax({9}, {3}, {2}, {2}, {1, 2});
    const auto x = small_ints(1 * 4 * 9, -5, 5, 1), w = small_ints(6 * 2 * 3, -3, 3, 2), b = small_ints(6, -9, 9, 3);
    Model m = conv_model({1, 4, 9}, {6, 2, 3}, w, b, 2, {2}, {2}, {1, 2});
    std::vector<int64_t> dims;
    CHECK(run(m, x, &dims) == direct_conv(x, w, b, 1, 4, 6, 2, ax));
    CHECK(dims == std::vector<int64_t>{1, 6, ax.out[0]});
  }
  SUBCASE("3-D, two groups, batch 2, every axis padded and strided or dilated") {
    const Axes ax({5, 4, 5}, {3, 2, 3}, {2, 1, 2}, {1, 2, 1}, {1, 0, 1, 2, 1, 0});
    const auto x = small_ints(2 * 4 * 100, -5, 5, 4), w = small_ints(6 * 2 * 18, -3, 3, 5), b = small_ints(6, -9, 9, 6);
    Model m = conv_model({2, 4, 5, 4, 5}, {6, 2, 3, 2, 3}, w, b, 2, {2, 1, 2}, {1, 2, 1}, {1, 0, 1, 2, 1, 0});
    std::vector<int64_t> dims;
    CHECK(run(m, x, &dims) == direct_conv(x, w, b, 2, 4, 6, 2, ax));
    CHECK(dims == std::vector<int64_t>{2, 6, ax.out[0], ax.out[1], ax.out[2]});
    check_jit_matches_reference(m, x, "qrt.conv2d");  // integer-valued floats: exact in any order
  }
  SUBCASE("3-D, one group, SAME_UPPER, no bias") {
    const Axes ax({4, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 1, 1, 1});
    const auto x = small_ints(3 * 36, -5, 5, 7), w = small_ints(2 * 3 * 8, -3, 3, 8);
    Model m = conv_model({1, 3, 4, 3, 3}, {2, 3, 2, 2, 2}, w, {}, 1, {1, 1, 1}, {1, 1, 1}, {});
    auto* pad = m.node->add_attribute();
    pad->set_name("auto_pad");
    pad->set_type(onnx::AttributeProto::STRING);
    pad->set_s("SAME_UPPER");
    CHECK(run(m, x) == direct_conv(x, w, {}, 1, 3, 2, 1, ax));
  }
}

TEST_CASE("3-D ConvTranspose gives the direct scatter's sums: strides, dilations, pads, output_padding, groups, SAME") {
  // y[n, g·Og + o, p] += x[n, g·Cg + ci, i] · w[g·Cg + ci, o, t] + bias, p = i·s - pad + t·d.
  auto direct = [](const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias, int64_t c,
                   int64_t og, int64_t group, const std::vector<int64_t>& in, const std::vector<int64_t>& k,
                   const std::vector<int64_t>& s, const std::vector<int64_t>& d, const std::vector<int64_t>& pad,
                   const std::vector<int64_t>& out) {
    const int64_t cg = c / group, o_all = og * group;
    std::vector<double> y(size_t(o_all * out[0] * out[1] * out[2]), 0.0);
    for (int64_t oc = 0; oc < o_all; ++oc) {
      for (size_t i = 0; i < size_t(out[0] * out[1] * out[2]); ++i) y[size_t(oc * out[0] * out[1] * out[2]) + i] = bias[size_t(oc)];
    }
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t g = ch / cg;
      for (int64_t o = 0; o < og; ++o) {
        for (int64_t i0 = 0; i0 < in[0]; ++i0) for (int64_t i1 = 0; i1 < in[1]; ++i1) for (int64_t i2 = 0; i2 < in[2]; ++i2) {
          for (int64_t t0 = 0; t0 < k[0]; ++t0) for (int64_t t1 = 0; t1 < k[1]; ++t1) for (int64_t t2 = 0; t2 < k[2]; ++t2) {
            const int64_t p0 = i0 * s[0] - pad[0] + t0 * d[0], p1 = i1 * s[1] - pad[1] + t1 * d[1], p2 = i2 * s[2] - pad[2] + t2 * d[2];
            if (p0 < 0 || p0 >= out[0] || p1 < 0 || p1 >= out[1] || p2 < 0 || p2 >= out[2]) continue;
            const double xv = x[size_t(((ch * in[0] + i0) * in[1] + i1) * in[2] + i2)];
            const double wv = w[size_t((((ch * og + o) * k[0] + t0) * k[1] + t1) * k[2] + t2)];
            y[size_t((((g * og + o) * out[0] + p0) * out[1] + p1) * out[2] + p2)] += xv * wv;
          }
        }
      }
    }
    return y;
  };
  SUBCASE("two groups, every attribute") {
    // out = s·(in - 1) + output_padding + d·(k - 1) + 1 - pads
    const std::vector<int64_t> in = {3, 4, 3}, k = {2, 3, 2}, s = {2, 1, 2}, d = {1, 2, 1}, op = {1, 0, 1};
    const std::vector<int64_t> pads = {1, 0, 1, 0, 1, 1};
    std::vector<int64_t> out(3);
    for (size_t i = 0; i < 3; ++i) out[i] = s[i] * (in[i] - 1) + op[i] + d[i] * (k[i] - 1) + 1 - pads[i] - pads[i + 3];
    const auto x = small_ints(4 * 36, -5, 5, 31), w = small_ints(4 * 3 * 12, -3, 3, 32), b = small_ints(6, -9, 9, 33);
    Model m("ConvTranspose", {1, 4, 3, 4, 3}, {"w", "b"});
    add_floats(m.g, "w", {4, 3, 2, 3, 2}, as_floats(w));
    add_floats(m.g, "b", {6}, as_floats(b));
    set_int_attr(m.node, "group", 2);
    set_ints_attr(m.node, "strides", s);
    set_ints_attr(m.node, "dilations", d);
    set_ints_attr(m.node, "pads", pads);
    set_ints_attr(m.node, "output_padding", op);
    std::vector<int64_t> dims;
    CHECK(run(m, x, &dims) == direct(x, w, b, 4, 3, 2, in, k, s, d, {1, 0, 1}, out));
    CHECK(dims == std::vector<int64_t>{1, 6, out[0], out[1], out[2]});
    check_jit_matches_reference(m, x, "qrt.conv_transpose2d");
  }
  SUBCASE("SAME_UPPER, stride 2: every output depth has taps or bias only") {
    const std::vector<int64_t> in = {3, 2, 2}, k = {3, 3, 3}, s = {2, 2, 2}, d = {1, 1, 1};
    // total padding = s·(in - 1) + k - s·in = k - s = 1: SAME_UPPER puts 0 at the start.
    const std::vector<int64_t> out = {6, 4, 4};
    const auto x = small_ints(2 * 12, -5, 5, 34), w = small_ints(2 * 1 * 27, -3, 3, 35);
    Model m("ConvTranspose", {1, 2, 3, 2, 2}, {"w", "b"});
    add_floats(m.g, "w", {2, 1, 3, 3, 3}, as_floats(w));
    add_floats(m.g, "b", {1}, {0.5f});
    set_ints_attr(m.node, "strides", s);
    auto* pad = m.node->add_attribute();
    pad->set_name("auto_pad");
    pad->set_type(onnx::AttributeProto::STRING);
    pad->set_s("SAME_UPPER");
    CHECK(run(m, x) == direct(x, w, {0.5}, 2, 1, 1, in, k, s, d, {0, 0, 0}, out));
  }
}

TEST_CASE("3-D ConvInteger pads depth with x's zero point; QLinearConv 1-D is its 2-D form byte for byte") {
  // u8 x with zero point 7, i8 w with zero point -2: int32 sums, exact.
  const Axes ax({4, 3, 4}, {2, 3, 2}, {1, 2, 1}, {2, 1, 1}, {1, 1, 0, 2, 0, 1});
  const auto x = small_ints(2 * 48, 0, 255, 9), w = small_ints(4 * 1 * 12, -128, 127, 10);
  Model m("ConvInteger", {1, 2, 4, 3, 4}, {"w", "zx", "zw"}, onnx::TensorProto::UINT8);
  std::vector<int8_t> wb(w.begin(), w.end());
  add_raw(m.g, "w", onnx::TensorProto::INT8, {4, 1, 2, 3, 2}, wb.data(), wb.size());
  const uint8_t zx = 7;
  const int8_t zw = -2;
  add_raw(m.g, "zx", onnx::TensorProto::UINT8, {}, &zx, 1);
  add_raw(m.g, "zw", onnx::TensorProto::INT8, {}, &zw, 1);
  set_int_attr(m.node, "group", 2);
  set_ints_attr(m.node, "strides", {1, 2, 1});
  set_ints_attr(m.node, "dilations", {2, 1, 1});
  set_ints_attr(m.node, "pads", {1, 1, 0, 2, 0, 1});
  CHECK(run(m, x) == direct_conv(x, w, {}, 1, 2, 4, 2, ax, 7, -2));
  check_jit_matches_reference(m, x, "qrt.conv2d");

  // QLinearConv [1, 3, 11] against the same node on [1, 3, 1, 11].
  auto qlinear = [](const std::vector<int64_t>& xd, const std::vector<int64_t>& wd, bool one_d) {
    Model q("QLinearConv", xd, {"sx", "zx", "w", "sw", "zw", "sy", "zy", "b"}, onnx::TensorProto::UINT8);
    const auto wv = small_ints(4 * 3 * 3, -100, 100, 11);
    std::vector<int8_t> wb8(wv.begin(), wv.end());
    add_raw(q.g, "w", onnx::TensorProto::INT8, wd, wb8.data(), wb8.size());
    add_floats(q.g, "sx", {}, {0.05f});
    add_floats(q.g, "sw", {4}, {0.01f, 0.02f, 0.005f, 0.03f});
    add_floats(q.g, "sy", {}, {0.11f});
    const uint8_t zxq = 131, zyq = 120;
    const int8_t zwq[4] = {0, 0, 0, 0};
    add_raw(q.g, "zx", onnx::TensorProto::UINT8, {}, &zxq, 1);
    add_raw(q.g, "zw", onnx::TensorProto::INT8, {4}, zwq, 4);
    add_raw(q.g, "zy", onnx::TensorProto::UINT8, {}, &zyq, 1);
    const int32_t bias[4] = {100, -2000, 35, 0};
    add_raw(q.g, "b", onnx::TensorProto::INT32, {4}, bias, sizeof(bias));
    set_ints_attr(q.node, "strides", one_d ? std::vector<int64_t>{2} : std::vector<int64_t>{1, 2});
    set_ints_attr(q.node, "pads", one_d ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{0, 1, 0, 2});
    return q;
  };
  const auto xq = small_ints(33, 0, 255, 12);
  std::vector<int64_t> d1, d2;
  const auto y1 = run(qlinear({1, 3, 11}, {4, 3, 3}, true), xq, &d1);
  const auto y2 = run(qlinear({1, 3, 1, 11}, {4, 3, 1, 3}, false), xq, &d2);
  CHECK(y1 == y2);
  CHECK(d1 == std::vector<int64_t>{1, 4, 6});
  CHECK(std::any_of(y1.begin(), y1.end(), [](double v) { return v != 120; }));  // not all the zero point
  check_jit_matches_reference(qlinear({1, 3, 11}, {4, 3, 3}, true), xq, "qrt.conv2d");
}

TEST_CASE("3-D MaxPool and AveragePool: pads, strides, ceil_mode, count_include_pad; 1-D and 3-D global pools") {
  const std::vector<int64_t> xd = {1, 2, 5, 4, 5};
  const auto x = small_ints(200, -20, 20, 13);
  // Direct 3-D pooling over a box: count = taps inside the input (or inside input and pads).
  auto direct = [&](bool is_max, bool include_pad, const Axes& ax, const std::vector<int64_t>& pads) {
    std::vector<double> y;
    const int64_t in_sz = ax.volume(ax.in), out_sz = ax.volume(ax.out);
    for (int64_t ch = 0; ch < 2; ++ch) {
      std::vector<double> acc(size_t(out_sz), is_max ? -INFINITY : 0.0), cnt(size_t(out_sz), 0.0);
      ax.each([&](int64_t oi, int64_t, int64_t xi) {
        const double v = x[size_t(ch * in_sz + xi)];
        acc[size_t(oi)] = is_max ? std::max(acc[size_t(oi)], v) : acc[size_t(oi)] + v;
        cnt[size_t(oi)] += 1;
      });
      for (int64_t oi = 0; oi < out_sz; ++oi) {
        double count = cnt[size_t(oi)];
        if (include_pad) {  // the window clipped to the input plus the explicit pads
          count = 1;
          int64_t rem = oi;
          for (size_t a = 3; a-- > 0;) {
            const int64_t o = rem % ax.out[a];
            rem /= ax.out[a];
            const int64_t lo = std::max<int64_t>(o * ax.s[a] - ax.pad[a], -pads[a]);
            const int64_t hi = std::min<int64_t>(o * ax.s[a] - ax.pad[a] + ax.k[a], ax.in[a] + pads[a + 3]);
            count *= double(hi - lo);
          }
        }
        y.push_back(is_max ? acc[size_t(oi)] : acc[size_t(oi)] / count);
      }
    }
    return y;
  };
  auto pool = [&](const std::string& op, const std::vector<int64_t>& pads, bool include_pad, bool ceil) {
    Model m(op, xd);
    set_ints_attr(m.node, "kernel_shape", {3, 2, 2});
    set_ints_attr(m.node, "strides", {2, 2, 1});
    set_ints_attr(m.node, "pads", pads);
    if (include_pad) set_int_attr(m.node, "count_include_pad", 1);
    if (ceil) set_int_attr(m.node, "ceil_mode", 1);
    return m;
  };
  const std::vector<int64_t> pads = {1, 1, 0, 1, 0, 1};
  const Axes ax({5, 4, 5}, {3, 2, 2}, {2, 2, 1}, {1, 1, 1}, pads);
  CHECK(run(pool("MaxPool", pads, false, false), x) == direct(true, false, ax, pads));
  check_jit_matches_reference(pool("MaxPool", pads, false, false), x, "qrt.reduce_max");
  for (bool include_pad : {false, true}) {
    const auto got = run(pool("AveragePool", pads, include_pad, false), x), want = direct(false, include_pad, ax, pads);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
  }
  // ceil_mode: depth 5 + 0 + 0 with k 3, s 2 -> 2 windows either way; H 4, k 2, s 3 -> 2 (ceil) vs 1.
  {
    Model m(("MaxPool"), xd);
    set_ints_attr(m.node, "kernel_shape", {3, 2, 2});
    set_ints_attr(m.node, "strides", {2, 3, 2});
    set_int_attr(m.node, "ceil_mode", 1);
    std::vector<int64_t> dims;
    const auto got = run(m, x, &dims);
    CHECK(dims == std::vector<int64_t>{1, 2, 2, 2, 3});
    const Axes ceil_ax({5, 4, 5}, {3, 2, 2}, {2, 3, 2}, {1, 1, 1}, {0, 0, 0, 0, 1, 1});
    CHECK(got == direct(true, false, ceil_ax, {0, 0, 0, 0, 1, 1}));
  }
  Model g3("GlobalAveragePool", xd), g1("GlobalMaxPool", {1, 2, 100});
  std::vector<int64_t> dims3, dims1;
  const auto avg = run(g3, x, &dims3), mx = run(g1, x, &dims1);
  CHECK(dims3 == std::vector<int64_t>{1, 2, 1, 1, 1});
  CHECK(dims1 == std::vector<int64_t>{1, 2, 1});
  for (int ch = 0; ch < 2; ++ch) {
    double s = 0, m = -INFINITY;
    for (int i = 0; i < 100; ++i) s += x[size_t(ch * 100 + i)], m = std::max(m, x[size_t(ch * 100 + i)]);
    CHECK(avg[size_t(ch)] == doctest::Approx(s / 100).epsilon(1e-6));
    CHECK(mx[size_t(ch)] == m);
  }
  // 1-D max pooling of int8 values (stored values, no arithmetic).
  Model i1("MaxPool", {1, 1, 7}, {}, onnx::TensorProto::INT8);
  set_ints_attr(i1.node, "kernel_shape", {3});
  set_ints_attr(i1.node, "strides", {2});
  set_ints_attr(i1.node, "pads", {1, 1});
  CHECK(run(i1, {-128, 5, -7, 127, -1, 0, -128}) == std::vector<double>{5, 127, 127, 0});
}

TEST_CASE("1-D and 3-D forms refuse what they cannot express, naming the node and the reason") {
  Model t("ConvTranspose", {1, 2, 3, 3, 3}, {"w"});
  add_floats(t.g, "w", {2, 1, 2, 2, 2}, std::vector<float>(16, 1.0f));
  set_ints_attr(t.node, "output_padding", {1, 1});
  CHECK(import_error(t).find("ConvTranspose_node") != std::string::npos);
  CHECK(import_error(t).find("must describe 3 spatial dimensions") != std::string::npos);

  // A zero point computed at run time cannot fill depth padding.
  Model r("ConvInteger", {1, 1, 3, 3, 3}, {"w", "zx"}, onnx::TensorProto::UINT8);
  add_value(r.g->mutable_input(), "zx", onnx::TensorProto::UINT8, {})->mutable_type()->mutable_tensor_type()->mutable_shape();
  const int8_t w8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  add_raw(r.g, "w", onnx::TensorProto::INT8, {1, 1, 2, 2, 2}, w8, 8);
  set_ints_attr(r.node, "pads", {1, 0, 0, 0, 0, 0});
  CHECK(import_error(r).find("depth padding needs x's zero point as a constant scalar") != std::string::npos);

  // [N, C, L] with N and L both dynamic: the reshapes to 2-D infer only one.
  Model dyn("Conv", {1, 2, 9}, {"w"});
  add_floats(dyn.g, "w", {1, 2, 3}, std::vector<float>(6, 1.0f));
  auto* shape = dyn.g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(0)->set_dim_param("N");
  shape->mutable_dim(2)->set_dim_param("L");
  CHECK(import_error(dyn).find("needs all but one of its input's sizes static, got tensor<?x2x?xf32>") != std::string::npos);

  Model p("MaxPool", {1, 1, 7});
  set_ints_attr(p.node, "kernel_shape", {3});
  set_ints_attr(p.node, "pads", {1, 1, 1, 1});
  CHECK(import_error(p).find("pads must describe 1 spatial dimension, got [1, 1, 1, 1]") != std::string::npos);

  Model d("AveragePool", {1, 1, 4, 4, 4});
  set_ints_attr(d.node, "kernel_shape", {2, 2, 2});
  set_ints_attr(d.node, "dilations", {2, 1, 1});
  CHECK(import_error(d).find("dilated pooling is not supported") != std::string::npos);

  // Sizes that would make the depth gather's index table or a stacked dimension huge: errors,
  // not allocations.
  Model big("Conv", {1, 1, int64_t(1) << 30, 1, 1}, {"w"});
  add_floats(big.g, "w", {1, 1, 1, 1, 1}, {1.0f});
  CHECK(import_error(big).find("exceeds qrt's limits") != std::string::npos);
  Model wide_pool("MaxPool", {1, 1, int64_t(1) << 25, 1, 1});
  set_ints_attr(wide_pool.node, "kernel_shape", {2, 1, 1});
  CHECK(import_error(wide_pool).find("exceed qrt's limit of 16777216") != std::string::npos);

  Model k("Conv", {1, 2, 4, 4, 4}, {"w"});
  add_floats(k.g, "w", {1, 1, 2, 2, 2}, std::vector<float>(8, 1.0f));
  CHECK(import_error(k).find("group 1 does not fit input channels 2") != std::string::npos);

  // 64-bit integer inputs (fuzz_load_onnx -seed=56: a ConvTranspose over i64 built a quantized
  // storage type of 64 bits, a signed overflow under UBSan): refused by name, each 3-D form.
  Model ct("ConvTranspose", {1, 1, 3, 4, 5}, {"w"}, onnx::TensorProto::INT64);
  add_floats(ct.g, "w", {1, 1, 2, 2, 2}, std::vector<float>(8, 1.0f));
  CHECK(import_error(ct).find("3-D ConvTranspose over tensor<1x1x3x4x5xi64> is not supported: integer inputs must "
                              "have 8, 16 or 32 bits") != std::string::npos);
  Model cv("Conv", {1, 1, 3, 4, 5}, {"w"}, onnx::TensorProto::INT64);
  add_floats(cv.g, "w", {1, 1, 2, 2, 2}, std::vector<float>(8, 1.0f));
  CHECK(import_error(cv).find("3-D Conv over tensor<1x1x3x4x5xi64> is not supported") != std::string::npos);
  Model mp("MaxPool", {1, 1, 3, 4, 5}, {}, onnx::TensorProto::UINT64);
  set_ints_attr(mp.node, "kernel_shape", {2, 2, 2});
  set_ints_attr(mp.node, "pads", {1, 0, 0, 1, 0, 0});
  CHECK(import_error(mp).find("3-D MaxPool over tensor<1x1x3x4x5xui64> is not supported") != std::string::npos);
}

TEST_CASE("QDQ 1-D and 3-D Convs fold into integer convolutions with the reference's bytes at every level") {
  // x -> Q -> DQ -> Conv (k 3 per axis, pads 1, per-channel w) -> Q -> DQ -> y, over [1, 4, 16]
  // and [1, 4, 4, 4, 4]: the 2-D form's reshapes, gathers and transposes run on stored values.
  for (const bool three_d : {false, true}) {
    CAPTURE(three_d);
    const std::vector<int64_t> xd = three_d ? std::vector<int64_t>{1, 4, 4, 4, 4} : std::vector<int64_t>{1, 4, 16};
    const std::vector<int64_t> wd = three_d ? std::vector<int64_t>{5, 4, 3, 3, 3} : std::vector<int64_t>{5, 4, 3};
    onnx::ModelProto model = empty_model(13);
    onnx::GraphProto* g = model.mutable_graph();
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, xd);
    g->add_output()->set_name("y");
    const uint8_t zx = 128, zy = 100;
    add_floats(g, "sx", {}, {0.05f});
    add_raw(g, "zx", onnx::TensorProto::UINT8, {}, &zx, 1);
    add_floats(g, "sy", {}, {0.2f});
    add_raw(g, "zy", onnx::TensorProto::UINT8, {}, &zy, 1);
    add_floats(g, "sw", {5}, {0.01f, 0.02f, 0.03f, 0.015f, 0.005f});
    const std::vector<int8_t> zw(5, 0);
    add_raw(g, "zw", onnx::TensorProto::INT8, {5}, zw.data(), zw.size());
    const auto wv = small_ints(size_t(three_d ? 5 * 4 * 27 : 5 * 4 * 3), -127, 127, 21);
    const std::vector<int8_t> w(wv.begin(), wv.end());
    add_raw(g, "wq", onnx::TensorProto::INT8, wd, w.data(), w.size());
    add_node(g, "QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
    add_node(g, "DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
    set_int_attr(add_node(g, "DequantizeLinear", {"wq", "sw", "zw"}, {"wd"}), "axis", 0);
    set_ints_attr(add_node(g, "Conv", {"xd", "wd"}, {"c"}), "pads", std::vector<int64_t>(three_d ? 6 : 2, 1));
    add_node(g, "QuantizeLinear", {"c", "sy", "zy"}, {"yq"});
    add_node(g, "DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
    auto imported = import(model);
    REQUIRE_MESSAGE(imported.is_ok(), imported.status().to_string());
    qrt::Tensor t = qrt::Tensor::zeros(imported->values[size_t(imported->inputs[0])].type);
    const std::vector<double> x = small_ints(size_t(t.num_elements()), -60, 60, 22);
    for (size_t i = 0; i < x.size(); ++i) t.set_float(i, x[i] * 0.05);
    // The scalar level's kernels (the twins, themselves checked against the reference).
    std::string kernel;
    auto want = run_jit(*imported, {t}, kernel, "qrt.conv2d", "scalar");
    REQUIRE(want.is_ok());
    size_t moved = 0;
    for (size_t i = 0; i < size_t(want->at(0).num_elements()); ++i) moved += want->at(0).float_at(i) != 0.0;
    CHECK(moved > size_t(want->at(0).num_elements()) / 2);  // most outputs off the zero point
    for (const std::string& level : tested_levels()) {
      CAPTURE(level);
      auto got = run_jit(*imported, {t}, kernel, "qrt.conv2d", level.c_str());
      REQUIRE(got.is_ok());
      CHECK_MESSAGE(kernel.rfind("qu8_qs8_qu8_", 0) == 0, kernel);  // u8 x s8 -> u8: folded
      CHECK(std::memcmp(got->at(0).bytes(), want->at(0).bytes(), want->at(0).byte_size()) == 0);
    }
  }
}

TEST_CASE("NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss refuse malformed nodes, naming what is wrong") {
  // Targets of the wrong shape, float targets, an unknown reduction, weights of the wrong size.
  {
    OneNode m("NegativeLogLikelihoodLoss", {2, 3, 4}, {"t"});
    add_value(m.g->mutable_input(), "t", onnx::TensorProto::INT64, {2, 3});
    CHECK_MESSAGE(import_error(m).find("targets must have shape [2x4] (the input's without C), got tensor<2x3xi64>") !=
                      std::string::npos,
                  import_error(m));
  }
  {
    OneNode m("SoftmaxCrossEntropyLoss", {2, 3}, {"t"});
    add_value(m.g->mutable_input(), "t", onnx::TensorProto::FLOAT, {2});
    CHECK(import_error(m).find("expects integer targets") != std::string::npos);
  }
  {
    OneNode m("NegativeLogLikelihoodLoss", {2, 3}, {"t"});
    add_value(m.g->mutable_input(), "t", onnx::TensorProto::INT64, {2});
    auto* attr = m.node->add_attribute();
    attr->set_name("reduction");
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s("average");
    CHECK(import_error(m).find("unknown reduction 'average'") != std::string::npos);
  }
  {
    OneNode m("NegativeLogLikelihoodLoss", {2, 3}, {"t", "w"});
    add_value(m.g->mutable_input(), "t", onnx::TensorProto::INT64, {2});
    add_floats(m.g, "w", {4}, {1, 2, 3, 4});
    CHECK(import_error(m).find("weights must be [3] of the input's type") != std::string::npos);
  }
  {
    OneNode m("NegativeLogLikelihoodLoss", {3}, {"t"});
    add_value(m.g->mutable_input(), "t", onnx::TensorProto::INT64, {1});
    CHECK(import_error(m).find("expects a float input [N, C, d...]") != std::string::npos);
  }
}
