// Tests: qrt.conv2d on the generated kernels — GEMM through im2col (NHWC and NCHW, strides,
// dilations, asymmetric padding), direct 1x1 GEMMs, and the depthwise kernel (channel tails,
// odd and even tap counts, padding) — is bit-exact with the reference under random
// quantization (extreme zero points, per-channel scales, saturation, bias, int32 output).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "ir/float_format.h"
#include "jit/ops/conv_groups.h"

#include "op_kernel_check.h"

namespace {

using qrt_test::shape;

// Three threads that leave small work whole (as the runtime's pool): a grouped convolution
// too small to split runs its GEMMs side by side, one per thread.
class ThreeWholeTasks final : public qrt::jit::Parallel {
 public:
  size_t threads() const override { return 3; }
  void for_each(size_t n, qrt::jit::TaskFn fn) override {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
    };
    std::thread a(work), b(work);
    work();
    a.join();
    b.join();
  }
};


struct ConvCase {
  int64_t n = 1, h = 5, w = 5, c = 3, o = 4, kh = 3, kw = 3;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, groups = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool nchw = false;
  bool wide_out = false;  // a 16-bit result (random_quant_case's, scaled to 16 bits)
};

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1) {
  return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

std::string scale_list(const qrt_test::QuantCase& q, int64_t channels) {
  std::string s;
  for (int64_t j = 0; j < channels; ++j) {
    char buf[48];
    const double ws = q.w.scales[q.w.scales.size() == 1 ? 0 : size_t(j)];
    std::snprintf(buf, sizeof buf, "%s%.17g", j ? ", " : "", q.x.scales[0] * ws);
    s += buf;
  }
  return s;
}

// Runs one case through check_last_op; returns the kernel description.
// `symmetric_weights`: s8 weights with zero points 0 (the common case, and the one window
// tiles serve); `weight_limit` > 0: weight values within ±weight_limit (pair sums then
// provably fit s16, so the scalar level takes the maddubs layout and its window tiles).
// `whole`: also runs the chosen kernel on ThreeWholeTasks and compares with one thread.
std::string check_conv(const ConvCase& cc, std::mt19937& rng, bool expect_kernel = true, const std::string& profile = "",
                       bool symmetric_weights = false, int weight_limit = 0, bool whole = false) {
  const int64_t per_group = cc.c / cc.groups;
  const int64_t oh = out_size(cc.h, cc.kh, cc.sh, cc.dh, cc.pt, cc.pb);
  const int64_t ow = out_size(cc.w, cc.kw, cc.sw, cc.dw, cc.pl, cc.pr);
  const int channel_axis = cc.nchw ? 1 : 3;
  qrt_test::QuantCase q = qrt_test::random_quant_case(rng, per_group * cc.kh * cc.kw, cc.o, 0, channel_axis);
  if (cc.wide_out && !q.accumulator_out) {
    // The same real range in 256 times finer steps: zero points and bounds scaled up.
    q.out.bits = 16;
    for (double& s : q.out.scales) s /= 256.0;
    q.out.lo = q.out.lo == (q.out.is_signed ? -128 : 0) ? (q.out.is_signed ? -32768 : 0) : q.out.lo * 256;
    q.out.hi = q.out.hi == (q.out.is_signed ? 127 : 255) ? (q.out.is_signed ? 32767 : 65535) : q.out.hi * 256;
    for (int& zp : q.out.zps) zp = std::clamp(zp * 256 + int(rng() % 256) - 128, q.out.lo, q.out.hi);
    q.clamp_attrs = qrt_test::random_clamp_attrs(rng, q.out);
  }
  if (symmetric_weights) {
    if (!q.w.is_signed) q.w.lo = -128;  // signed weights keep their -128 or -127
    q.w.is_signed = true;
    q.w.hi = 127;
    for (int& zp : q.w.zps) zp = 0;
  }
  const std::vector<int64_t> xd = cc.nchw ? std::vector<int64_t>{cc.n, cc.c, cc.h, cc.w}
                                          : std::vector<int64_t>{cc.n, cc.h, cc.w, cc.c};
  const std::vector<int64_t> fd = cc.nchw ? std::vector<int64_t>{cc.o, per_group, cc.kh, cc.kw}
                                          : std::vector<int64_t>{cc.o, cc.kh, cc.kw, per_group};
  const std::vector<int64_t> yd = cc.nchw ? std::vector<int64_t>{cc.n, cc.o, oh, ow}
                                          : std::vector<int64_t>{cc.n, oh, ow, cc.o};
  const std::string xt = "tensor<" + shape(xd) + q.x.type() + ">";
  const std::string ft = "tensor<" + shape(fd) + q.w.type() + ">";
  const std::string ot = q.accumulator_out ? "tensor<" + shape(yd) + "!quant.uniform<i32:f32:" +
                                                 std::to_string(channel_axis) + ", {" + scale_list(q, cc.o) + "}>>"
                                           : "tensor<" + shape(yd) + q.out.type() + ">";
  std::vector<int> f = qrt_test::random_values(rng, size_t(cc.o * per_group * cc.kh * cc.kw),
                                               weight_limit ? std::max(q.w.lo, -weight_limit) : q.w.lo,
                                               weight_limit ? std::min(q.w.hi, weight_limit) : q.w.hi);
  std::string text = "func.func @main(%x: " + xt + ") -> " + ot + " {\n";
  text += "  %f = \"qrt.constant\"() {value = " + qrt_test::hex_dense(qrt_test::bytes_of(f)) + " : tensor<" +
          shape(fd) + (q.w.is_signed ? "i8" : "ui8") + ">} : () -> " + ft + "\n";
  std::string operands = "%x, %f", types = xt + ", " + ft;
  if (q.bias) {
    std::vector<uint8_t> bytes(size_t(cc.o) * 4);
    for (int64_t j = 0; j < cc.o; ++j) {
      const int32_t b = std::uniform_int_distribution<int32_t>(-50000, 50000)(rng);
      std::memcpy(bytes.data() + j * 4, &b, 4);
    }
    const std::string bt = "tensor<" + std::to_string(cc.o) + "x!quant.uniform<i32:f32:0, {" + scale_list(q, cc.o) + "}>>";
    text += "  %b = \"qrt.constant\"() {value = " + qrt_test::hex_dense(bytes) + " : tensor<" + std::to_string(cc.o) +
            "xi32>} : () -> " + bt + "\n";
    operands += ", %b";
    types += ", " + bt;
  }
  auto list = [](std::vector<int64_t> v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  text += "  %y = \"qrt.conv2d\"(" + operands + ") {dilations = " + list({cc.dh, cc.dw}) +
          ", groups = " + std::to_string(cc.groups) + " : i64, layout = \"" + (cc.nchw ? "NCHW" : "NHWC") +
          "\", pads = " + list({cc.pt, cc.pl, cc.pb, cc.pr}) + ", strides = " + list({cc.sh, cc.sw}) + q.clamp_attrs + "} : (" +
          types + ") -> " + ot + "\n";
  text += "  return %y : " + ot + "\n}\n";
  CAPTURE(text);
  auto t = qrt::parse_type(xt);
  REQUIRE(t.is_ok());
  qrt::Tensor x = qrt::Tensor::zeros(*t);
  const auto v = qrt_test::random_values(rng, size_t(x.num_elements()), q.x.lo, q.x.hi);
  for (size_t i = 0; i < v.size(); ++i) x.set_int(i, v[i]);
  const std::string how = qrt_test::check_last_op(qrt_test::with_profile(text, profile), x, expect_kernel);
  if (whole) {
    auto g = qrt::parse_graph(qrt_test::with_profile(text, profile));
    REQUIRE(g.is_ok());
    auto choice = qrt::jit::select_kernel(*g, g->ops.back(), qrt_test::test_isas());
    REQUIRE((choice.is_ok() && choice->kernel));
    std::vector<qrt::Tensor> operands{x.clone()};
    for (size_t i = 1; i < g->ops.back().operands.size(); ++i) {
      auto t = qrt::evaluate_op_reference(*g, g->ops[size_t(g->values[size_t(g->ops.back().operands[i])].producer)], {});
      REQUIRE(t.is_ok());
      operands.push_back(std::move(t).value());
    }
    std::vector<const qrt::Tensor*> ptrs;
    for (const auto& t : operands) ptrs.push_back(&t);
    auto one = choice->kernel->run(ptrs);
    REQUIRE(one.is_ok());
    qrt::Tensor three = qrt::Tensor::zeros(one->type);
    ThreeWholeTasks parallel;
    REQUIRE(choice->kernel->run_into(ptrs, three, parallel).is_ok());
    CHECK(std::equal(three.bytes(), three.bytes() + three.byte_size(), one->bytes()));
  }
  return how;
}

}  // namespace

TEST_CASE("conv2d through the GEMM kernels is bit-exact with the reference") {
  std::mt19937 rng(11);
  std::vector<ConvCase> shapes;
  for (bool nchw : {false, true}) {
    ConvCase c;
    c.nchw = nchw;
    shapes.push_back(c);                                                  // 3x3, no padding
    c.kh = c.kw = 1, c.h = 6, c.w = 7, c.c = 17, c.o = 19;
    shapes.push_back(c);                                                  // 1x1 (direct in NHWC)
    c.sh = c.sw = 2;
    shapes.push_back(c);                                                  // 1x1 stride 2
    c = ConvCase{};
    c.nchw = nchw, c.n = 2, c.h = 9, c.w = 8, c.c = 8, c.o = 16, c.pt = c.pl = c.pb = c.pr = 1;
    shapes.push_back(c);                                                  // 3x3 pad 1
    c.sh = 2, c.sw = 2, c.pt = 0, c.pl = 1, c.pb = 1, c.pr = 0;
    shapes.push_back(c);                                                  // stride 2, asymmetric pads
    c = ConvCase{};
    c.nchw = nchw, c.h = 11, c.w = 10, c.c = 5, c.o = 33, c.kh = 5, c.kw = 3, c.dh = 2, c.dw = 1, c.pt = 2;
    shapes.push_back(c);                                                  // 5x3, dilation 2
    c = ConvCase{};
    c.nchw = nchw, c.c = 1, c.o = 1, c.kh = 2, c.kw = 2;
    shapes.push_back(c);                                                  // single channel
    c = ConvCase{};
    c.nchw = nchw, c.h = 4, c.w = 2, c.c = 3, c.o = 5, c.kh = 3, c.kw = 5, c.pt = c.pb = 1, c.pl = c.pr = 2;
    shapes.push_back(c);                                                  // window wider than the input
    c = ConvCase{};
    c.nchw = nchw, c.h = 7, c.w = 7, c.c = 40, c.o = 9, c.pt = c.pl = c.pb = c.pr = 1;
    shapes.push_back(c);                                                  // window rows of 120 bytes
    c = ConvCase{};
    c.nchw = nchw, c.h = 6, c.w = 9, c.c = 2, c.o = 7, c.dh = 2, c.dw = 2, c.pt = c.pl = c.pb = c.pr = 2;
    shapes.push_back(c);                                                  // dilated across, padded
    c = ConvCase{};
    c.nchw = nchw, c.h = 21, c.w = 20, c.c = 3, c.o = 16, c.kh = c.kw = 7, c.sh = c.sw = 2;
    c.pt = c.pl = c.pb = c.pr = 3;
    shapes.push_back(c);                                                  // a 7x7 s2 stem over RGB
  }
  int cases = 0;
  for (const ConvCase& c : shapes) {
    for (int rep = 0; rep < 6; ++rep) {
      const std::string how = check_conv(c, rng);
      CHECK(how.find("_gemm_") != std::string::npos);
      ++cases;
    }
  }
  MESSAGE(cases << " convolution cases");
}

TEST_CASE("depthwise conv2d on its own kernel is bit-exact with the reference") {
  std::mt19937 rng(13);
  int cases = 0, dot4_rows = 0, pairs = 0, paired_pixels = 0, paired_stride2 = 0;
  for (int64_t channels : {1, 7, 16, 17, 32, 40, 80, 96, 100, 136}) {
    for (int variant = 0; variant < 13; ++variant) {
      ConvCase c;
      c.c = c.o = c.groups = channels;
      c.h = 7, c.w = 9;
      switch (variant) {
        case 0: break;                                                    // 3x3 (9 taps, odd)
        case 1: c.pt = c.pl = c.pb = c.pr = 1; break;                     // 3x3 pad 1
        case 2: c.kh = c.kw = 2, c.sh = c.sw = 2, c.pb = c.pr = 1; break; // 2x2 stride 2 (even taps)
        case 3: c.kh = c.kw = 5, c.pt = c.pl = 2, c.pb = c.pr = 2, c.n = 2; break;
        case 4: c.kh = 1, c.kw = 3, c.dw = 2, c.sh = 2, c.pl = 3; break;  // dilation, one-sided pad
        // Rows wide enough that the interior positions are interleaved from the input in place
        // and the edges from a padded copy (the last rows' interiors stop short of the end).
        case 5: c.h = 4, c.w = 40, c.pt = c.pl = c.pb = c.pr = 1; break;
        case 6: c.h = 5, c.w = 41, c.sh = c.sw = 2, c.dh = c.dw = 2, c.pl = 3, c.pt = 1, c.pr = 2, c.n = 2; break;
        // Stride 1 pairs pixels on a position where the rows can: an even width with one-sided
        // pads and in-place interiors, a 7-wide window, a 2x2 one whose last pixel is alone.
        case 7: c.h = 4, c.w = 41, c.pt = c.pl = 1; break;
        case 8: c.h = 3, c.w = 38, c.kh = 3, c.kw = 7, c.pl = c.pr = 3, c.pt = 1; break;
        case 9: c.kh = c.kw = 2, c.pb = c.pr = 1, c.h = 6, c.w = 8; break;
        // Stride 2 pairs too, the odd pixel's last tap in the next position: TensorFlow's SAME
        // padding of an even width (0 before, 1 after), an odd width padded on both sides, and
        // two pads after where a position's last byte is the first pad (it must be read padded).
        case 10: c.h = 6, c.w = 40, c.sh = c.sw = 2, c.pb = c.pr = 1; break;
        case 11: c.h = 5, c.w = 41, c.sh = c.sw = 2, c.pt = c.pl = c.pb = c.pr = 1; break;
        default: c.h = 5, c.w = 38, c.sh = c.sw = 2, c.pt = c.pl = 1, c.pb = c.pr = 2; break;
      }
      for (int rep = 0; rep < 3; ++rep) {
        const std::string how = check_conv(c, rng);
        if (channels == 1) {
          CHECK(how.find("_gemm_") != std::string::npos);  // 1 channel: a plain conv
        } else {
          // The dot4 rows where the level has them, the weights fit s8 and the output is 8-bit;
          // the s16 pair kernel otherwise.
          const bool rows = how.find("_dwrows_") != std::string::npos;
          CHECK((rows || how.find("_dwconv_") != std::string::npos));
          (rows ? dot4_rows : pairs) += 1;
          const bool pairable = c.dw == 1 && ((c.sw == 1 && c.kw % 4 != 0) || c.sw == 2);
          if (how.find("_pairs") != std::string::npos) {
            CHECK(pairable);
            CHECK((how.find("_pairs2") != std::string::npos) == (c.sw == 2));
            ++paired_pixels;
            paired_stride2 += c.sw == 2;
          }
        }
        ++cases;
      }
    }
  }
  MESSAGE(cases << " depthwise cases: " << dot4_rows << " on the dot4 rows (" << paired_pixels
                << " pairing pixels on a position, " << paired_stride2 << " of them at stride 2), " << pairs
                << " on s16 pairs");
  CHECK(pairs > 0);
  const bool vnni = qrt_test::test_isa() == qrt::jit::Isa::kAvx512Vnni || qrt_test::test_isa() == qrt::jit::Isa::kAvx512Amx ||
                    qrt_test::test_isa() == qrt::jit::Isa::kAvx2Vnni;
  if (vnni) {
    CHECK(paired_pixels > 20);
    CHECK(paired_stride2 > 10);
  }
  // avx512-amx takes depthwise from avx512-vnni; AArch64 has the rows where sdot is. Plain avx2
  // runs them on vpmaddwd only where two pixels share a position at stride 1 (rows_path), the
  // pair kernel elsewhere.
  if (vnni || qrt_test::test_isa() == qrt::jit::Isa::kNeonDot || qrt_test::test_isa() == qrt::jit::Isa::kNeonI8mm) {
    CHECK(dot4_rows > 20);
  } else if (qrt_test::test_isa() == qrt::jit::Isa::kAvx2) {
    CHECK(dot4_rows > 10);
    CHECK(paired_pixels == dot4_rows);
    CHECK(paired_stride2 == 0);
  } else {
    CHECK(dot4_rows == 0);
  }
}

TEST_CASE("grouped conv2d runs as GEMMs per run of groups, bit-exact with the reference") {
  // Grouped convolutions, depthwise ones with a channel multiplier and NCHW depthwise ones:
  // one GEMM per group, or per run of neighbouring groups merged into block-diagonal weights
  // (off-block weights at the column's zero point) where a group has under 16 output channels.
  std::mt19937 rng(43);
  int cases = 0, merged = 0, direct = 0, windows = 0;
  const int64_t group_counts[] = {2, 3, 4, 6, 8, 32};
  const int64_t in_per_group[] = {1, 2, 3, 5, 8, 16};
  const int64_t out_per_group[] = {1, 2, 3, 4, 7, 16, 20};
  for (int round = 0; round < 48; ++round) {
    ConvCase c;
    c.groups = group_counts[rng() % 6];
    c.c = c.groups * in_per_group[rng() % 6];
    c.o = c.groups * out_per_group[rng() % 7];
    if (round % 8 == 3) c.c = c.groups, c.o = c.groups * (1 + int64_t(rng() % 3));  // depthwise, multiplier 1..3
    c.nchw = round % 3 == 2;
    if (!c.nchw && c.c == c.groups && c.o == c.groups) c.o *= 2;  // NHWC depthwise has its own kernel
    c.n = 1 + int64_t(round % 5 == 0);
    c.h = 4 + int64_t(rng() % 6), c.w = 4 + int64_t(rng() % 9);
    switch (round % 4) {
      case 0: c.kh = c.kw = 1; break;                                                  // 1x1 (direct in NHWC)
      case 1: c.pt = c.pl = c.pb = c.pr = 1; break;                                    // 3x3 pad 1
      case 2: c.sh = c.sw = 2, c.pt = c.pl = 1, c.pb = 0, c.pr = 1; break;              // 3x3 stride 2
      default: c.kh = 2, c.kw = 3, c.dh = 2, c.pt = 1, c.pb = 1, c.pr = 2; break;       // dilated rows, one-sided pads
    }
    const char* profile = round % 6 == 5 ? "tflite" : round % 6 == 4 ? "onnx" : "";
    CAPTURE(c.groups);
    CAPTURE(c.c);
    CAPTURE(c.o);
    CAPTURE(round);
    const std::string how = check_conv(c, rng, true, profile);
    CHECK_MESSAGE(how.find(std::to_string(c.groups) + " groups as ") != std::string::npos, how);
    CHECK_MESSAGE(how.find("_gemm_") != std::string::npos, how);
    const int64_t ocpg = c.o / c.groups;
    const bool merges = ocpg < 16 && qrt::jit::merged_groups(c.groups, ocpg) > 1;
    CHECK_MESSAGE((how.find("merged groups") != std::string::npos) == merges, how);
    merged += merges;
    direct += how.find("on the input rows") != std::string::npos;
    windows += how.find("on windows") != std::string::npos;
    ++cases;
  }
  MESSAGE(cases << " grouped cases: " << merged << " with merged groups, " << direct << " on the input rows, " << windows
                << " on window tiles");
  CHECK(merged > 10);
  CHECK(direct > 0);

  // Small enough that one GEMM's work does not fill three threads: the GEMMs run side by side.
  for (bool nchw : {false, true}) {
    ConvCase c;
    c.groups = 4, c.c = 4 * 8, c.o = 4 * 20, c.h = 6, c.w = 7, c.pt = c.pl = c.pb = c.pr = 1, c.nchw = nchw;
    const std::string how = check_conv(c, rng, true, "", false, 0, true);
    REQUIRE(how.find("4 groups as 4 GEMMs") != std::string::npos);
  }
}

TEST_CASE("f32, bf16, f16 and hybrid conv2d and f32 pooling kernels are bit-exact with the reference") {
  // bf16 and f16 convolutions widen their operands to f32, run the f32 kernels and round each
  // result once, as the reference computes them (docs/numerics.md, compute precision).
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> any(-2.0f, 2.0f);
  std::string kind = "f32";
  auto list = [](std::vector<int64_t> v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  // n values of the case's float type, little-endian.
  auto float_bytes = [&](size_t n, float scale) {
    const size_t width = kind == "f32" ? 4 : 2;
    std::vector<uint8_t> b(n * width);
    for (size_t i = 0; i < n; ++i) {
      // Magnitudes over several decades, so the summation order shows.
      const float v = any(rng) * scale * std::pow(10.0f, float(int(rng() % 5) - 2));
      if (width == 4) {
        std::memcpy(&b[i * 4], &v, 4);
      } else {
        const uint16_t bits = kind == "bf16" ? qrt::bf16_bits_from_double(v) : qrt::f16_bits_from_double(v);
        std::memcpy(&b[i * 2], &bits, 2);
      }
    }
    return b;
  };
  int cases = 0;
  for (int round = 0; round < 3 * 36; ++round) {
    kind = round < 36 ? "f32" : round < 72 ? "bf16" : "f16";
    ConvCase cc;
    cc.nchw = round % 2 == 0;
    // Plain, grouped, depthwise (channel counts around the vector widths).
    const bool depthwise = round % 6 == 3;
    const int64_t dw_channels[] = {6, 20, 37};
    cc.groups = round % 6 == 1 ? 2 : depthwise ? dw_channels[round / 6 % 3] : 1;
    cc.c = depthwise ? cc.groups : 4 * int64_t(1 + rng() % 3);
    cc.o = depthwise ? cc.groups : cc.groups * int64_t(1 + rng() % 20);
    cc.n = 1 + int64_t(rng() % 2);
    cc.h = 5 + int64_t(rng() % 6);
    cc.w = 4 + int64_t(rng() % 7);
    cc.kh = 1 + int64_t(rng() % 3);
    cc.kw = 1 + int64_t(rng() % 3);
    cc.sh = 1 + int64_t(rng() % 2);
    cc.sw = 1 + int64_t(rng() % 2);
    cc.dh = 1 + int64_t(rng() % 2 == 0 && cc.kh > 1);
    cc.dw = 1;
    cc.pt = int64_t(rng() % 2), cc.pl = int64_t(rng() % 2), cc.pb = int64_t(rng() % 3), cc.pr = int64_t(rng() % 2);
    // Every sixth round from 5 on: a 1x1 stride-1 convolution without padding (the NHWC ones
    // read the activations as the GEMM's rows).
    const bool pointwise = round % 6 == 5;
    if (pointwise) {
      cc.kh = cc.kw = cc.sh = cc.sw = cc.dh = 1;
      cc.pt = cc.pl = cc.pb = cc.pr = 0;
    }
    const bool hybrid = round % 4 == 2, bias = round % 3 != 0, clamp = round % 5 == 4;
    const int64_t per_group = cc.c / cc.groups;
    const int64_t oh = out_size(cc.h, cc.kh, cc.sh, cc.dh, cc.pt, cc.pb), ow = out_size(cc.w, cc.kw, cc.sw, cc.dw, cc.pl, cc.pr);
    const std::vector<int64_t> xd = cc.nchw ? std::vector<int64_t>{cc.n, cc.c, cc.h, cc.w} : std::vector<int64_t>{cc.n, cc.h, cc.w, cc.c};
    const std::vector<int64_t> fd = cc.nchw ? std::vector<int64_t>{cc.o, per_group, cc.kh, cc.kw}
                                            : std::vector<int64_t>{cc.o, cc.kh, cc.kw, per_group};
    const std::vector<int64_t> yd = cc.nchw ? std::vector<int64_t>{cc.n, cc.o, oh, ow} : std::vector<int64_t>{cc.n, oh, ow, cc.o};
    const std::string xt = "tensor<" + shape(xd) + kind + ">", yt = "tensor<" + shape(yd) + kind + ">";
    const size_t fcount = size_t(cc.o * per_group * cc.kh * cc.kw);
    std::string ft, text = "func.func @main(%x: " + xt + ") -> " + yt + " {\n";
    if (hybrid) {
      std::string scales;
      for (int64_t j = 0; j < cc.o; ++j) scales += (j ? ", " : "") + std::to_string(0.01 * double(j + 1)) + ":" + std::to_string(int(j % 5) - 2);
      ft = "tensor<" + shape(fd) + "!quant.uniform<i8:" + kind + ":0, {" + scales + "}>>";
      text += "  %f = \"qrt.constant\"() {value = " + qrt_test::hex_dense(qrt_test::bytes_of(qrt_test::random_values(rng, fcount, -128, 127))) +
              " : tensor<" + shape(fd) + "i8>} : () -> " + ft + "\n";
    } else {
      ft = "tensor<" + shape(fd) + kind + ">";
      text += "  %f = \"qrt.constant\"() {value = " + qrt_test::hex_dense(float_bytes(fcount, 1.0f)) + " : " + ft + "} : () -> " + ft + "\n";
    }
    std::string operands = "%x, %f", types = xt + ", " + ft;
    if (bias) {
      const std::string bt = "tensor<" + std::to_string(cc.o) + "x" + kind + ">";
      text += "  %b = \"qrt.constant\"() {value = " + qrt_test::hex_dense(float_bytes(size_t(cc.o), 10.0f)) + " : " + bt + "} : () -> " + bt + "\n";
      operands += ", %b";
      types += ", " + bt;
    }
    text += "  %y = \"qrt.conv2d\"(" + operands + ") {" + std::string(clamp ? "clamp_max = 0.5 : f64, clamp_min = -0.25 : f64, " : "") +
            "dilations = " + list({cc.dh, cc.dw}) + ", groups = " + std::to_string(cc.groups) + " : i64, layout = \"" +
            (cc.nchw ? "NCHW" : "NHWC") + "\", pads = " + list({cc.pt, cc.pl, cc.pb, cc.pr}) + ", strides = " + list({cc.sh, cc.sw}) +
            "} : (" + types + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
    CAPTURE(text);
    auto t = qrt::parse_type(xt);
    REQUIRE(t.is_ok());
    qrt::Tensor x = qrt::Tensor::zeros(*t);
    const std::vector<uint8_t> xb = float_bytes(size_t(x.num_elements()), 1.0f);
    std::memcpy(x.bytes(), xb.data(), xb.size());
    const std::string how = qrt_test::check_last_op(text, x);
    // NCHW convolutions and grouped ones run on im2col blocks; NHWC depthwise and pointwise
    // ones on their own forms.
    const char* form = cc.nchw ? "_conv_im2col" : depthwise ? "_dwconv" : pointwise ? "_conv1x1" : "_conv_im2col";
    CHECK_MESSAGE(how.find(std::string(hybrid ? "f32_qc8w_f32" : "f32_f32_f32") + form) == 0, how);
    if (kind != "f32") CHECK_MESSAGE(how.find(kind + " operands widened to f32, results rounded once to " + kind) != std::string::npos, how);
    ++cases;
    if (kind != "f32") continue;
    // Pooling over the same input: max (with a NaN planted) and average, both count modes.
    x.set_float(size_t(rng() % uint64_t(x.num_elements())), NAN);
    for (const char* pool : {"qrt.max_pool2d", "qrt.avg_pool2d"}) {
      // Pooling pads stay below the window.
      cc.pt = std::min(cc.pt, cc.kh - 1), cc.pb = std::min(cc.pb, cc.kh - 1);
      cc.pl = std::min(cc.pl, cc.kw - 1), cc.pr = std::min(cc.pr, cc.kw - 1);
      const int64_t ph = out_size(cc.h, cc.kh, cc.sh, 1, cc.pt, cc.pb), pw = out_size(cc.w, cc.kw, cc.sw, 1, cc.pl, cc.pr);
      const std::vector<int64_t> pd = cc.nchw ? std::vector<int64_t>{cc.n, cc.c, ph, pw} : std::vector<int64_t>{cc.n, ph, pw, cc.c};
      const std::string pt = "tensor<" + shape(pd) + "f32>";
      const std::string ptext = "func.func @main(%x: " + xt + ") -> " + pt + " {\n  %y = \"" + pool + "\"(%x) {" +
                                (round % 2 && std::string(pool) == "qrt.avg_pool2d" ? "count_include_pad = 1 : i64, " : "") + "kernel = " + list({cc.kh, cc.kw}) +
                                ", layout = \"" + (cc.nchw ? "NCHW" : "NHWC") + "\", pads = " + list({cc.pt, cc.pl, cc.pb, cc.pr}) +
                                ", strides = " + list({cc.sh, cc.sw}) + "} : (" + xt + ") -> " + pt + "\n  return %y : " + pt + "\n}\n";
      CAPTURE(ptext);
      CHECK(qrt_test::check_last_op(ptext, x).find("pool_") != std::string::npos);
    }
  }
  MESSAGE(cases << " float convolution cases (f32, bf16, f16), f32 ones with pooling");
}

TEST_CASE("conv2d under the tflite and onnx profiles: kernel accumulators, the profile's requantization") {
  // The kernels compute the int32 accumulators and portable C++ the profile's requantization;
  // random quantization, both layouts, GEMM and depthwise, fused clamps and saturation.
  std::mt19937 rng(29);
  int cases = 0, fused_cases = 0;
  const qrt::jit::Isa level = qrt_test::test_isa();
  const bool q31_everywhere =
      level == qrt::jit::Isa::kAvx512Vnni || level == qrt::jit::Isa::kAvx512Amx || level == qrt::jit::Isa::kScalar;
  for (const char* profile : {"tflite", "tflite-single-rounding", "onnx"}) {
    CAPTURE(std::string(profile));
    for (bool nchw : {false, true}) {
      ConvCase c;
      c.nchw = nchw, c.h = 9, c.w = 8, c.c = 8, c.o = 19, c.pt = c.pl = c.pb = c.pr = 1;
      ConvCase d;
      d.nchw = nchw, d.c = d.o = d.groups = 17, d.h = 7, d.w = 9, d.pt = d.pl = d.pb = d.pr = 1;
      ConvCase one;
      one.nchw = nchw, one.kh = one.kw = 1, one.h = 6, one.w = 7, one.c = 17, one.o = 40;
      for (const ConvCase& cc : {c, d, one}) {
        if (nchw && cc.groups > 1) continue;  // NCHW depthwise has no kernel in any profile
        for (int rep = 0; rep < 4; ++rep) {
          const std::string how = check_conv(cc, rng, true, profile);
          // 32-bit results are accumulators, the same in every profile: no requantization step.
          if (how.find("_s32_") != std::string::npos && how.find("requantization") == std::string::npos) continue;
          // The profile's requantization after the kernel, or (tflite, at a level whose GEMM tiles
          // or depthwise rows have it) in the kernel's epilogue: names "..._q31[_tapsN]__<level>".
          const bool fused = std::string(profile) == "tflite" && how.find("_q31_") != std::string::npos;
          CHECK_MESSAGE((fused || how.find(std::string("then the ") + profile + " requantization") != std::string::npos), how);
          // Where every GEMM tile that computes the accumulators has the Q31 epilogue, no GEMM
          // convolution is left to a separate pass: avx512-amx's GEMMs below one 64-byte k step
          // (the 1x1 case, k 17) run on avx512-vnni's tiles with it. (Depthwise convolutions
          // off the dot4 rows, e.g. 17 channels, take the s16 kernels, which have none.)
          if (std::string(profile) == "tflite" && q31_everywhere && cc.groups == 1) CHECK_MESSAGE(fused, how);
          fused_cases += fused;
          ++cases;
        }
      }
    }
  }
  MESSAGE(cases << " profile convolution cases, " << fused_cases << " with TFLite's requantization in the kernel's epilogue");
  // avx512-vnni's (and avx512-amx's) GEMM tiles and depthwise rows, and the scalar twins, have
  // the Q31 epilogue.
  if (q31_everywhere) CHECK(fused_cases > 0);
}

TEST_CASE("conv2d under stablehlo: dequantized operands on the f32 convolution, then StableHLO's quantize") {
  std::mt19937 rng(43);
  int cases = 0;
  for (bool nchw : {false, true}) {
    ConvCase c;
    c.nchw = nchw, c.h = 9, c.w = 8, c.c = 8, c.o = 19, c.pt = c.pl = c.pb = c.pr = 1;
    ConvCase d;
    d.nchw = nchw, d.c = d.o = d.groups = 17, d.h = 7, d.w = 9, d.pt = d.pl = d.pb = d.pr = 1;
    ConvCase one;
    one.nchw = nchw, one.kh = one.kw = 1, one.h = 6, one.w = 7, one.c = 17, one.o = 40, one.sh = one.sw = 2;
    for (const ConvCase& cc : {c, d, one}) {
      for (int rep = 0; rep < 3; ++rep) {
        const std::string how = check_conv(cc, rng, false, "stablehlo");
        if (how.empty()) continue;  // a float convolution without a kernel (checked on the reference)
        CHECK_MESSAGE(how.find("stablehlo dequantize-op-quantize: dequantize (1 byte table), ") == 0, how);
        ++cases;
      }
    }
  }
  MESSAGE(cases << " stablehlo convolutions on the float kernels");
  CHECK(cases >= 9);
}

TEST_CASE("conv2d with 16-bit results: the kernels' int32 accumulators, then the default requantization") {
  // No contraction kernel's epilogue writes 16 bits: the GEMM, depthwise and grouped kernels
  // compute the accumulators and portable C++ requantizes them (fused clamps, per-channel
  // scales, both layouts).
  std::mt19937 rng(47);
  int cases = 0, wide = 0;
  for (int round = 0; round < 24; ++round) {
    ConvCase c;
    c.wide_out = true;
    c.nchw = round % 4 == 3;
    c.h = 6, c.w = 7, c.pt = c.pl = c.pb = c.pr = round % 2;
    switch (round % 3) {
      case 0: c.c = 8, c.o = 19; break;                                       // GEMM
      case 1: c.c = c.o = c.groups = 17, c.nchw = false; break;               // depthwise
      default: c.c = 12, c.o = 8, c.groups = 4, c.kh = c.kw = 1, c.pt = c.pl = c.pb = c.pr = 0; break;  // grouped 1x1
    }
    CAPTURE(round);
    const std::string how = check_conv(c, rng);
    const bool accumulators = how.find("_s32_") != std::string::npos && how.find("requantization") == std::string::npos;
    if (!accumulators) {
      CHECK_MESSAGE(how.find("into int32, then the default requantization (portable C++)") != std::string::npos, how);
      ++wide;
    }
    ++cases;
  }
  MESSAGE(cases << " cases, " << wide << " with 16-bit results");
  CHECK(wide > 12);
}

TEST_CASE("conv2d on window tiles (the padded input read in place) is bit-exact with the reference") {
  // Output rows at least half a tile wide take the window tiles where the level has them:
  // window rows (kw·C bytes rounded up to whole k steps — AMX: 64 bytes; the scalar level's
  // twins: a quad — at most 4× longer) without dilation along the row, window pixels
  // (channels in whole k steps) with it. Strides, dilations, asymmetric pads, output rows
  // longer and shorter than a tile, narrow last panels, a batch, one tap, stems of 3 channels.
  std::mt19937 rng(29);
  std::vector<ConvCase> shapes;
  ConvCase c;
  c.h = 9, c.w = 37, c.c = 64, c.o = 40, c.pt = c.pl = c.pb = c.pr = 1;
  shapes.push_back(c);                                                  // 3x3 pad 1, 37 = 32 + 5 per row
  c.n = 2, c.h = 7, c.w = 37, c.c = 128, c.o = 32, c.sh = c.sw = 2, c.pt = 0, c.pl = 1, c.pb = 1, c.pr = 0;
  shapes.push_back(c);                                                  // stride 2, asymmetric pads, batch 2
  c = ConvCase{};
  c.h = 12, c.w = 40, c.c = 64, c.o = 17, c.kh = 3, c.kw = 5, c.dh = 2, c.dw = 3, c.pt = 2, c.pb = 1, c.pl = 5, c.pr = 6;
  shapes.push_back(c);                                                  // 3x5, dilations 2 and 3
  c = ConvCase{};
  c.h = 5, c.w = 64, c.c = 192, c.o = 64, c.kh = 1, c.kw = 1, c.sh = 1, c.sw = 2;
  shapes.push_back(c);                                                  // 1x1 stride 2: one tap
  c = ConvCase{};
  c.h = 4, c.w = 18, c.c = 8, c.o = 5, c.kh = c.kw = 2, c.pb = 1;
  shapes.push_back(c);                                                  // 8 channels: the scalar level's windows
  c = ConvCase{};
  c.h = 21, c.w = 70, c.c = 3, c.o = 33, c.kh = c.kw = 7, c.sh = c.sw = 2, c.pt = c.pl = c.pb = c.pr = 3;
  shapes.push_back(c);                                                  // a 7x7 s2 stem: window rows of 21 bytes
  c = ConvCase{};
  c.h = 9, c.w = 66, c.c = 20, c.o = 16, c.kh = c.kw = 3, c.pt = c.pl = 1, c.pb = c.pr = 0;
  shapes.push_back(c);                                                  // window rows of 60 bytes
  // Whether the level's GEMM tiles come as window tiles (every x86 level and the scalar
  // twins; not the AArch64 levels yet).
  bool level_windows = false;
  for (qrt::jit::GemmPath p : {qrt::jit::GemmPath::kMaddubs, qrt::jit::GemmPath::kMaddwd, qrt::jit::GemmPath::kDot4,
                               qrt::jit::GemmPath::kSdot4, qrt::jit::GemmPath::kMlal, qrt::jit::GemmPath::kUsmmla8}) {
    const auto t = qrt_test::test_backend(qrt::jit::KernelOp::kGemm).gemm_traits(p);
    level_windows = level_windows || (t && t->window_taps);
  }
  int windows = 0, expected = 0, cases = 0;
  for (const ConvCase& s : shapes) {
    const int64_t ow = out_size(s.w, s.kw, s.sw, s.dw, s.pl, s.pr);
    for (int rep = 0; rep < 4; ++rep) {
      const std::string how = check_conv(s, rng, true, "", rep != 0, rep == 3 ? 60 : 0);
      CAPTURE(how);
      REQUIRE(how.find("_gemm_") != std::string::npos);
      // Which tiles ran: their k step (AMX: 64 bytes, the others a quad) and height. Window
      // tiles take byte rows and no weight zero points (row sums would need a pass of their own).
      const bool wzp = how.find("_wzp") != std::string::npos;
      const bool byte_rows = how.find("dot4_") != std::string::npos || how.find("_maddubs") != std::string::npos;
      const int64_t step = how.find("avx512amx") != std::string::npos ? 64 : 4;
      const int64_t mr = std::stoll(how.substr(how.find("_gemm_") + 6));
      const bool on_windows = how.find(" on windows of the padded input") != std::string::npos;
      const int64_t run = s.kw * s.c, padded_run = (run + step - 1) / step * step;
      if (on_windows) {
        CHECK(how.find("_taps" + std::to_string(s.dw == 1 ? s.kh : s.kh * s.kw) + "__") != std::string::npos);
        ++windows;
      }
      const bool fits = s.dw == 1 ? padded_run <= 4 * run : s.c % step == 0;
      const bool serves = level_windows && byte_rows && !wzp && fits && ow >= (mr + 1) / 2;
      CHECK(on_windows == serves);
      expected += serves;
      ++cases;
    }
  }
  MESSAGE(cases << " convolution cases, " << windows << " on window tiles at " << std::string(qrt::jit::isa_name(qrt_test::test_isa())));
  // A level with window tiles has them on its byte paths; at AVX2 those need weights whose
  // pairs cannot saturate (the cases with small weights).
  if (level_windows) CHECK(expected >= 4);
}
