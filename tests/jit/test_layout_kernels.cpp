// Tests: the byte-moving kernels — transpose (gather and scatter orders), pad, quantized clamp
// and relu, reshape, gather_elements, cumsum and mod — give the reference's bytes, on one and
// three threads.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "op_kernel_check.h"

namespace {

qrt::Tensor random_input(const std::string& type, std::mt19937& rng) {
  auto t = qrt::parse_type(type);
  REQUIRE(t.is_ok());
  qrt::Tensor x = qrt::Tensor::zeros(*t);
  for (size_t i = 0; i < x.byte_size(); ++i) x.bytes()[i] = uint8_t(rng());
  if (t->element.is_float()) {
    for (size_t i = 0; i < size_t(x.num_elements()); ++i) x.set_float(i, double(int(rng() % 2001) - 1000) / 8.0);
  }
  return x;
}

std::string one_op(const std::string& op, const std::string& attrs, const std::string& in, const std::string& out) {
  return "func.func @main(%x: " + in + ") -> " + out + " {\n  %y = \"" + op + "\"(%x) " + attrs + ": (" + in + ") -> " +
         out + "\n  return %y : " + out + "\n}\n";
}

}  // namespace

TEST_CASE("transpose, pad, clamp, relu and reshape kernels are bit-exact with the reference") {
  std::mt19937 rng(31);
  const std::string q = "!quant.uniform<i8:f32, 0.1:-5>", u = "!quant.uniform<u8<3:250>:f32, 0.02:128>";
  struct Case {
    std::string op, attrs, in, out, kernel;
  };
  const Case cases[] = {
      // NCHW -> NHWC of 1 to 4 byte planes: the kInterleavePlanes kernel (planes_kernels.cpp),
      // pixel counts below, across and past the vector steps, batches of several images.
      {"qrt.transpose", "{perm = [0, 2, 3, 1]} ", "tensor<2x3x9x7x" + q + ">", "tensor<2x9x7x3x" + q + ">", "x8_interleave3planes"},
      {"qrt.transpose", "{perm = [0, 2, 3, 1]} ", "tensor<1x3x45x51x" + u + ">", "tensor<1x45x51x3x" + u + ">", "x8_interleave3planes"},
      {"qrt.transpose", "{perm = [0, 2, 3, 1]} ", "tensor<3x1x17x19xi8>", "tensor<3x17x19x1xi8>", "x8_interleave1planes"},
      {"qrt.transpose", "{perm = [0, 2, 3, 1]} ", "tensor<2x2x33x31x" + u + ">", "tensor<2x33x31x2x" + u + ">", "x8_interleave2planes"},
      {"qrt.transpose", "{perm = [0, 2, 3, 1]} ", "tensor<1x4x64x65xui8>", "tensor<1x64x65x4xui8>", "x8_interleave4planes"},
      {"qrt.transpose", "{perm = [0, 2, 3, 1]} ", "tensor<1x5x4x4x" + q + ">", "tensor<1x4x4x5x" + q + ">", "transpose_gather"},
      {"qrt.transpose", "{perm = [0, 3, 1, 2]} ", "tensor<2x9x7x3xf32>", "tensor<2x3x9x7xf32>", "transpose_gather"},
      {"qrt.transpose", "{perm = [1, 0]} ", "tensor<33x17xi16>", "tensor<17x33xi16>", "transpose_gather"},
      {"qrt.pad", "{pads = [0, 1, 2, 0, 0, 2, 1, 0]} ", "tensor<1x5x6x3x" + q + ">", "tensor<1x8x9x3x" + q + ">", "pad_copy"},
      {"qrt.pad", "{pads = [1, 0, 2, 3], value = 1.5} ", "tensor<4x5xf32>", "tensor<7x8xf32>", "pad_copy"},
      {"qrt.clamp", "{max = 6.0, min = 0.0} ", "tensor<1000x" + q + ">", "tensor<1000x" + q + ">", "qs8_clamp"},
      {"qrt.clamp", "{max = 1.0, min = -1.0} ", "tensor<77x" + u + ">", "tensor<77x" + u + ">", "qu8_clamp"},
      {"qrt.relu", "", "tensor<3x70x" + u + ">", "tensor<3x70x" + u + ">", "qu8_clamp"},
      {"qrt.reshape", "", "tensor<4x6x" + q + ">", "tensor<2x12x" + q + ">", "reshape_copy"},
  };
  for (const Case& c : cases) {
    const std::string text = one_op(c.op, c.attrs, c.in, c.out);
    CAPTURE(text);
    const std::string how = qrt_test::check_last_op(text, random_input(c.in, rng));
    CHECK(how.find(c.kernel) == 0);
  }
}

TEST_CASE("scast, gather, slice, concat and resize kernels move the reference's bytes") {
  std::mt19937 rng(5);
  auto tensor = [&](const std::string& type, int64_t lo, int64_t hi) {
    auto t = qrt::parse_type(type);
    REQUIRE_MESSAGE(t.is_ok(), type);
    qrt::Tensor x = qrt::Tensor::zeros(*t);
    for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
      if (x.type.element.is_float()) {
        x.set_float(i, std::uniform_real_distribution<double>(-4, 4)(rng));
      } else {
        x.set_int(i, std::uniform_int_distribution<int64_t>(lo, hi)(rng));
      }
    }
    return x;
  };
  auto graph = [](const std::vector<std::string>& args, const std::string& op, const std::string& attrs, const std::string& rt) {
    std::string sig, names, types;
    for (size_t i = 0; i < args.size(); ++i) {
      sig += (i ? ", %a" : "%a") + std::to_string(i) + ": " + args[i];
      names += (i ? ", %a" : "%a") + std::to_string(i);
      types += (i ? ", " : "") + args[i];
    }
    return "func.func @main(" + sig + ") -> " + rt + " {\n  %y = \"" + op + "\"(" + names + ")" + attrs + " : (" + types +
           ") -> " + rt + "\n  return %y : " + rt + "\n}\n";
  };
  // scast both ways.
  const std::string q = "tensor<3x17x!quant.uniform<u8:f32, 0.5:3>>", u = "tensor<3x17xui8>";
  CHECK(qrt_test::check_last_op(graph({u}, "quant.scast", "", q), {tensor(u, 0, 255)}).find("scast_copy") == 0);
  CHECK(qrt_test::check_last_op(graph({q}, "quant.scast", "", u), {tensor(q, 0, 255)}).find("scast_copy") == 0);
  // gather: embeddings (axis 0, 2-D indices, negative ones), an inner axis.
  const std::string table = "tensor<50x8xf32>", ids = "tensor<2x7xi64>";
  CHECK(qrt_test::check_last_op(graph({table, ids}, "qrt.gather", " {axis = 0 : i64}", "tensor<2x7x8xf32>"),
                                {tensor(table, 0, 0), tensor(ids, -50, 49)})
            .find("gather_rows") == 0);
  const std::string cube = "tensor<3x5x4xi32>", pick = "tensor<6xi32>";
  CHECK(qrt_test::check_last_op(graph({cube, pick}, "qrt.gather", " {axis = 1 : i64}", "tensor<3x6x4xi32>"),
                                {tensor(cube, -9, 9), tensor(pick, -5, 4)})
            .find("gather_rows") == 0);
  // slice: unit steps, strides, negative steps, a start past the end clamped.
  struct SliceCase {
    std::string in, attrs, out;
  };
  const std::vector<SliceCase> slices = {
      {"tensor<4x9xf32>", "{ends = [3, 9], starts = [1, 2], steps = [1, 1]}", "tensor<2x7xf32>"},
      {"tensor<4x9xf32>", "{ends = [4, 9], starts = [0, 1], steps = [2, 3]}", "tensor<2x3xf32>"},
      {"tensor<4x9xi8>", "{ends = [-5, -10], starts = [3, 8], steps = [-1, -2]}", "tensor<4x5xi8>"},
      {"tensor<1x128x32xf32>", "{ends = [1, 1, 32], starts = [0, 0, 0], steps = [1, 1, 1]}", "tensor<1x1x32xf32>"}};
  for (const SliceCase& c : slices) {
    const std::string text = graph({c.in}, "qrt.slice", " " + c.attrs, c.out);
    CAPTURE(text);
    CHECK(qrt_test::check_last_op(text, {tensor(c.in, -100, 100)}).find("slice_rows") == 0);
  }
  // concat: floats along an inner axis, equal quantized types (bytes move), different scales
  // and zero points (requantized).
  CHECK(qrt_test::check_last_op(graph({"tensor<2x3x5xf32>", "tensor<2x4x5xf32>"}, "qrt.concat", " {axis = 1 : i64}",
                                      "tensor<2x7x5xf32>"),
                                {tensor("tensor<2x3x5xf32>", 0, 0), tensor("tensor<2x4x5xf32>", 0, 0)})
            .find("concat_rows") == 0);
  const std::string qa = "tensor<3x4x!quant.uniform<u8:f32, 0.5:3>>", qb = "tensor<3x2x!quant.uniform<u8:f32, 0.125:200>>";
  const std::string qy = "tensor<3x6x!quant.uniform<u8:f32, 0.5:3>>";
  CHECK(qrt_test::check_last_op(graph({qa, qa}, "qrt.concat", " {axis = 0 : i64}", "tensor<6x4x!quant.uniform<u8:f32, 0.5:3>>"),
                                {tensor(qa, 0, 255), tensor(qa, 0, 255)})
            .find("concat_rows") == 0);
  CHECK(qrt_test::check_last_op(graph({qa, qb}, "qrt.concat", " {axis = 1 : i64}", qy), {tensor(qa, 0, 255), tensor(qb, 0, 255)})
            .find("concat_rows") == 0);
  // resize (nearest): every coordinate and rounding mode, up and down, both layouts, quantized.
  struct ResizeCase {
    std::string in, out, attrs;
  };
  const std::string qr = "!quant.uniform<u8:f32, 0.5:3>";
  const std::vector<ResizeCase> resizes = {
      {"tensor<1x2x3x4xf32>", "tensor<1x2x6x8xf32>",
       "{coordinate_transformation_mode = \"asymmetric\", nearest_mode = \"floor\", scales = [1.0, 1.0, 2.0, 2.0]}"},
      {"tensor<1x2x5x5x" + qr + ">", "tensor<1x2x8x8x" + qr + ">", "{}"},
      {"tensor<1x3x4x7xf32>", "tensor<1x3x9x3xf32>",
       "{coordinate_transformation_mode = \"align_corners\", nearest_mode = \"round_prefer_ceil\"}"},
      {"tensor<1x3x8x8xi8>", "tensor<1x3x3x5xi8>", "{coordinate_transformation_mode = \"pytorch_half_pixel\", nearest_mode = \"ceil\"}"},
      {"tensor<1x4x4x3xf32>", "tensor<1x8x8x3xf32>", "{coordinate_transformation_mode = \"tf_half_pixel_for_nn\"}"}};
  for (const ResizeCase& c : resizes) {
    const std::string text = graph({c.in}, "qrt.resize", " " + c.attrs, c.out);
    CAPTURE(text);
    CHECK(qrt_test::check_last_op(text, {tensor(c.in, 0, 255)}).find("resize_nearest_rows") == 0);
  }
  // An index out of range is an error naming the op and the index, as the reference's.
  auto g = qrt::parse_graph(graph({table, ids}, "qrt.gather", " {axis = 0 : i64}", "tensor<2x7x8xf32>"));
  REQUIRE(g.is_ok());
  auto choice = qrt::jit::select_kernel(*g, g->ops.back(), qrt_test::test_isas());
  REQUIRE(choice.is_ok());
  REQUIRE(choice->kernel);
  qrt::Tensor data = tensor(table, 0, 0), bad = tensor(ids, 0, 3);
  bad.set_int(5, 50);
  auto r = choice->kernel->run({&data, &bad});
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().find("'qrt.gather' op index 50 (element 5) is out of range for dimension 0 of size 50") !=
        std::string::npos);
}

TEST_CASE("linear and cubic resize kernels are bit-exact with the reference (every coordinate mode, f16/bf16/f64)") {
  std::mt19937 rng(61);
  const char* coords[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"};
  const char* kinds[] = {"f32", "f32", "f16", "bf16", "f64"};
  int cases = 0;
  for (int rep = 0; rep < 60; ++rep) {
    const bool cubic = rep % 3 == 2, nhwc = rep % 4 == 1;
    const std::string kind = kinds[rep % 5];
    const int64_t n = 1 + int64_t(rng() % 2), c = 1 + int64_t(rng() % 5), h = 1 + int64_t(rng() % 9),
                  w = 1 + int64_t(rng() % 9);
    // Up, down, or one element; sometimes by explicit scales whose floor(in · s) is the size.
    auto resized = [&](int64_t in) { return rng() % 5 == 0 ? int64_t(1) : std::max<int64_t>(1, in * int64_t(1 + rng() % 3) / int64_t(1 + rng() % 3)); };
    const int64_t oh = resized(h), ow = resized(w);
    auto shape = [&](int64_t a, int64_t b) {
      return "tensor<" + std::to_string(n) + "x" + (nhwc ? std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c)
                                                         : std::to_string(c) + "x" + std::to_string(a) + "x" + std::to_string(b)) +
             "x" + kind + ">";
    };
    std::string attrs = "{coordinate_transformation_mode = \"" + std::string(coords[rep % 5]) + "\", mode = \"" +
                        (cubic ? "cubic" : "linear") + "\"";
    if (cubic) attrs += std::string(", cubic_coeff_a = ") + (rep % 2 ? "-5.000000e-01" : "-7.500000e-01") +
                        ", exclude_outside = " + (rep % 4 == 2 ? "1" : "0") + " : i64";
    attrs += "}";
    const std::string in = shape(h, w), out = shape(oh, ow);
    const std::string text = one_op("qrt.resize", attrs + " ", in, out);
    CAPTURE(text);
    // Values over many decades, some infinities (they spread to their neighbours' outputs).
    auto t = qrt::parse_type(in);
    REQUIRE(t.is_ok());
    qrt::Tensor x = qrt::Tensor::zeros(*t);
    for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
      const double v = std::uniform_real_distribution<double>(-1, 1)(rng) * std::pow(10.0, double(int(rng() % 7) - 3));
      x.set_float(i, rng() % 97 == 0 ? INFINITY : v);
    }
    const std::string how = qrt_test::check_last_op(text, x);
    CHECK_MESSAGE(how.find(cubic ? "cubic resize (portable C++" : "linear resize (portable C++") == 0, how);
    ++cases;
  }
  CHECK(cases == 60);
  // Quantized values interpolate only through dequantization: the verifier says so.
  auto g = qrt::parse_graph(one_op("qrt.resize", "{mode = \"linear\"} ", "tensor<1x1x2x2x!quant.uniform<u8:f32, 0.5:3>>",
                                   "tensor<1x1x4x4x!quant.uniform<u8:f32, 0.5:3>>"));
  REQUIRE_FALSE(g.is_ok());
  CHECK_MESSAGE(g.status().message().find("mode 'linear' interpolates floats") != std::string::npos, g.status().message());
}

TEST_CASE("the gather_elements kernel is bit-exact with the reference (every axis, negative indices, quantized data)") {
  std::mt19937 rng(67);
  int cases = 0;
  for (int rep = 0; rep < 40; ++rep) {
    const size_t rank = 1 + size_t(rng() % 4);
    const int64_t axis = int64_t(rng() % rank);
    std::vector<int64_t> dd(rank), id(rank);
    for (size_t d = 0; d < rank; ++d) {
      dd[d] = 1 + int64_t(rng() % 6);
      // Along the axis any count of indices; elsewhere at most the data's size.
      id[d] = int64_t(d) == axis ? 1 + int64_t(rng() % 7) : 1 + int64_t(rng() % uint64_t(dd[d]));
    }
    const std::string element = rep % 3 == 0 ? "!quant.uniform<i8:f32, 0.5:-3>" : rep % 3 == 1 ? "f32" : "i16";
    const std::string index = rep % 2 ? "i64" : "i32";
    const std::string dt = "tensor<" + qrt_test::shape(dd) + element + ">", it = "tensor<" + qrt_test::shape(id) + index + ">";
    const std::string yt = "tensor<" + qrt_test::shape(id) + element + ">";
    const std::string text = "func.func @main(%d: " + dt + ", %i: " + it + ") -> " + yt + " {\n  %y = \"qrt.gather_elements\"(%d, %i) {axis = " +
                             std::to_string(axis) + " : i64} : (" + dt + ", " + it + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
    CAPTURE(text);
    qrt::Tensor data = random_input(dt, rng);
    auto t = qrt::parse_type(it);
    REQUIRE(t.is_ok());
    qrt::Tensor idx = qrt::Tensor::zeros(*t);
    const int64_t extent = dd[size_t(axis)];
    for (size_t i = 0; i < size_t(idx.num_elements()); ++i) idx.set_int(i, int64_t(rng() % uint64_t(2 * extent)) - extent);
    CHECK(qrt_test::check_last_op(text, {data, idx}) == "gather_elements");
    ++cases;
  }
  CHECK(cases == 40);
  // An index out of range is an error naming the op and the element, as the reference's.
  auto g = qrt::parse_graph(
      "func.func @main(%d: tensor<2x3xf32>, %i: tensor<2x2xi64>) -> tensor<2x2xf32> {\n  %y = \"qrt.gather_elements\"(%d, %i) "
      "{axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>\n  return %y : tensor<2x2xf32>\n}\n");
  REQUIRE(g.is_ok());
  auto choice = qrt::jit::select_kernel(*g, g->ops.back(), qrt_test::test_isas());
  REQUIRE((choice.is_ok() && choice->kernel));
  qrt::Tensor data = random_input("tensor<2x3xf32>", rng), bad = qrt::Tensor::zeros(*qrt::parse_type("tensor<2x2xi64>"));
  bad.set_int(3, -4);
  auto r = choice->kernel->run({&data, &bad});
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().find("'qrt.gather_elements' op index -4 (element 3) is out of range for dimension 1 of size 3") !=
        std::string::npos);
  // Indices larger than the data along another axis: the verifier names the dimension.
  auto wide = qrt::parse_graph(
      "func.func @main(%d: tensor<2x3xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {\n  %y = \"qrt.gather_elements\"(%d, %i) "
      "{axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>\n  return %y : tensor<3x2xf32>\n}\n");
  REQUIRE_FALSE(wide.is_ok());
  CHECK_MESSAGE(wide.status().message().find("indices dimension 0 (3) exceeds the data's (2)") != std::string::npos,
                wide.status().message());
}

TEST_CASE("cumsum and mod kernels are bit-exact with the reference: every axis and flag, broadcasting, float types and integer widths") {
  std::mt19937 rng(4242);
  int cases = 0;
  for (const char* el : {"f32", "f64", "bf16", "f16", "i8", "i32", "i64", "ui16"}) {
    const bool is_float = el[0] == 'f' || el[0] == 'b';
    const bool half = el[0] == 'b' || std::string(el) == "f16";
    const std::string t = std::string("tensor<3x5x7x") + el + ">";
    auto ty = qrt::parse_type(t);
    REQUIRE(ty.is_ok());
    auto fill = [&](qrt::Tensor& x, bool nonzero) {
      for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
        if (is_float) {
          // f16 keeps its exponents small (sums still overflow to inf now and then).
          x.set_float(i, std::ldexp(double(int(rng() % 2001) - 1000), int(rng() % (half ? 20 : 40)) - (half ? 12 : 20)));
        } else {
          int64_t v = int64_t(rng() % 256) - 128;
          if (nonzero && v == 0) v = 3;
          x.set_int(i, v);
        }
      }
    };
    qrt::Tensor x = qrt::Tensor::zeros(*ty);
    fill(x, false);
    if (is_float) x.set_float(17, NAN), x.set_float(40, INFINITY);
    for (int axis = 0; axis < 3; ++axis) {
      for (int flags = 0; flags < 4; ++flags) {
        const std::string text = "func.func @main(%x: " + t + ") -> " + t + " {\n  %y = \"qrt.cumsum\"(%x) {axis = " +
                                 std::to_string(axis) + " : i64, exclusive = " + std::to_string(flags & 1) +
                                 " : i64, reverse = " + std::to_string(flags >> 1) + " : i64} : (" + t + ") -> " + t +
                                 "\n  return %y : " + t + "\n}\n";
        CAPTURE(text);
        const std::string how = qrt_test::check_last_op(text, x);
        CHECK_MESSAGE(how.find("cumsum (portable C++") == 0, how);
        if (half) CHECK_MESSAGE(how.find(std::string(el) + " widened to f32") != std::string::npos, how);
        ++cases;
      }
    }
    // mod against a divisor broadcast along the middle axis, and a full one.
    for (const std::string& bt : {std::string("tensor<3x1x7x") + el + ">", t}) {
      auto bty = qrt::parse_type(bt);
      REQUIRE(bty.is_ok());
      qrt::Tensor b = qrt::Tensor::zeros(*bty);
      fill(b, true);
      for (int fmod : {0, 1}) {
        if (is_float && fmod == 0) continue;
        const std::string text = "func.func @main(%a: " + t + ", %b: " + bt + ") -> " + t + " {\n  %y = \"qrt.mod\"(%a, %b) {fmod = " +
                                 std::to_string(fmod) + " : i64} : (" + t + ", " + bt + ") -> " + t + "\n  return %y : " + t + "\n}\n";
        CAPTURE(text);
        CHECK(qrt_test::check_last_op(text, {x, b}).find("mod (portable C++") == 0);
        ++cases;
      }
    }
  }
  CHECK(cases == 8 * 12 + 4 * 4 + 4 * 2);
}

TEST_CASE("the scatter_nd kernel is bit-exact with the reference: tuple lengths, reductions, duplicates, quantized bytes") {
  std::mt19937 rng(4343);
  int cases = 0;
  for (const std::string el : {"f32", "i32", "i8", "f64", "bf16", "f16", "!quant.uniform<i8:f32, 0.5:3>"}) {
    for (int q = 1; q <= 3; ++q) {
      for (const char* red : {"none", "add", "mul", "max", "min"}) {
        const bool quant = el[0] == '!';
        if (quant && std::string(red) != "none") continue;
        const std::vector<int64_t> dd = {4, 3, 5};
        const int64_t tuples = 6;  // more tuples than rows along the first axis: duplicates
        std::vector<int64_t> ud = {tuples};
        ud.insert(ud.end(), dd.begin() + q, dd.end());
        auto dims = [&](const std::vector<int64_t>& d) {
          std::string s;
          for (int64_t v : d) s += std::to_string(v) + "x";
          return s;
        };
        const std::string dt = "tensor<" + dims(dd) + el + ">", it = "tensor<" + std::to_string(tuples) + "x" + std::to_string(q) + "xi64>",
                          ut = "tensor<" + dims(ud) + el + ">";
        const std::string text = "func.func @main(%d: " + dt + ", %i: " + it + ", %u: " + ut + ") -> " + dt +
                                 " {\n  %y = \"qrt.scatter_nd\"(%d, %i, %u) {reduction = \"" + red + "\"} : (" + dt + ", " + it + ", " +
                                 ut + ") -> " + dt + "\n  return %y : " + dt + "\n}\n";
        CAPTURE(text);
        auto fill = [&](const std::string& type) {
          auto t = qrt::parse_type(type);
          REQUIRE(t.is_ok());
          qrt::Tensor x = qrt::Tensor::zeros(*t);
          for (size_t i = 0; i < size_t(x.num_elements()); ++i) {
            // Quarters up to ±5 (products need up to 9 significant bits: bf16 rounds them); in f16
            // a few up to ±20480, whose products overflow to ±inf.
            if (el[0] == 'f' || el[0] == 'b') {
              const double big = el == "f16" && rng() % 13 == 0 ? 4096.0 : 1.0;
              x.set_float(i, rng() % 17 == 0 ? NAN : big * double(int(rng() % 41) - 20) / 4);
            } else {
              x.set_int(i, int64_t(rng() % 200) - 100);
            }
          }
          return x;
        };
        qrt::Tensor d = fill(dt), u = fill(ut);
        auto itype = qrt::parse_type(it);
        REQUIRE(itype.is_ok());
        qrt::Tensor idx = qrt::Tensor::zeros(*itype);
        for (int64_t t = 0; t < tuples; ++t) {
          for (int k = 0; k < q; ++k) {
            const int64_t n = dd[size_t(k)];
            idx.set_int(size_t(t * q + k), int64_t(rng() % uint64_t(2 * n)) - n);  // negative ones too
          }
        }
        CHECK(qrt_test::check_last_op(text, {d, idx, u}).find("scatter_nd (portable C++") == 0);
        ++cases;
      }
    }
  }
  CHECK(cases == 6 * 3 * 5 + 3);
}

TEST_CASE("the gather_nd kernel is bit-exact with the reference: tuple lengths, batch_dims, element types, threads") {
  std::mt19937 rng(4545);
  int cases = 0;
  auto dims = [](const std::vector<int64_t>& d) {
    std::string s;
    for (int64_t v : d) s += std::to_string(v) + "x";
    return s;
  };
  // The one-op graph gather_nd(%d: dt, %i: it) -> yt.
  auto gather_nd_text = [](const std::string& dt, const std::string& it, const std::string& yt, int b) {
    return "func.func @main(%d: " + dt + ", %i: " + it + ") -> " + yt + " {\n  %y = \"qrt.gather_nd\"(%d, %i) {batch_dims = " +
           std::to_string(b) + " : i64} : (" + dt + ", " + it + ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
  };
  for (const std::string el : {"f32", "i64", "i8", "f16", "!quant.uniform<u8:f32, 0.5:128>"}) {
    for (int b = 0; b <= 1; ++b) {
      const std::vector<int64_t> dd = {3, 4, 5, 6};
      for (int k = 1; k <= 4 - b; ++k) {
        // indices: the batch dimension (b = 1), two more, then the tuple length.
        std::vector<int64_t> id;
        if (b == 1) id.push_back(dd[0]);
        id.insert(id.end(), {7, 2, int64_t(k)});
        std::vector<int64_t> yd(id.begin(), id.end() - 1);
        yd.insert(yd.end(), dd.begin() + b + k, dd.end());
        const std::string dt = "tensor<" + dims(dd) + el + ">", it = "tensor<" + dims(id) + "i32>",
                          yt = yd.empty() ? "tensor<" + el + ">" : "tensor<" + dims(yd) + el + ">";
        const std::string text = gather_nd_text(dt, it, yt, b);
        CAPTURE(text);
        auto dtype = qrt::parse_type(dt), itype = qrt::parse_type(it);
        REQUIRE((dtype.is_ok() && itype.is_ok()));
        qrt::Tensor d = qrt::Tensor::zeros(*dtype), idx = qrt::Tensor::zeros(*itype);
        for (size_t i = 0; i < size_t(d.num_elements()); ++i) {
          if (el[0] == 'f') d.set_float(i, double(int(rng() % 2001) - 1000) / 8);
          else d.set_int(i, int64_t(rng() % 256) - (el == "i8" || el == "i64" ? 128 : 0));
        }
        for (size_t t = 0; t < size_t(idx.num_elements()) / size_t(k); ++t) {
          for (int j = 0; j < k; ++j) {
            const int64_t n = dd[size_t(b + j)];
            idx.set_int(t * size_t(k) + size_t(j), int64_t(rng() % uint64_t(2 * n)) - n);  // negative ones too
          }
        }
        CHECK(qrt_test::check_last_op(text, {d, idx}).find("gather_nd (portable C++") == 0);
        ++cases;
      }
    }
  }
  CHECK(cases == 5 * (4 + 3));
  // Per-axis data whose channels move as whole slices: a batch dimension (axis 0, b = 1) stays
  // in place; a trailing one (axis 3) follows the indices' leading dimensions. Stored bytes
  // are copied, so the parameters go with them.
  const std::string scales4 = "{0.5:1, 0.25:-3, 0.125:7}";
  for (const auto& [b, k, data_axis, out_axis] : std::vector<std::tuple<int, int, int, int>>{{1, 2, 0, 0}, {0, 2, 3, 2}, {1, 1, 3, 3}}) {
    const std::vector<int64_t> dd = data_axis == 0 ? std::vector<int64_t>{3, 4, 5, 6} : std::vector<int64_t>{2, 4, 5, 3};
    std::vector<int64_t> id;
    if (b == 1) id.push_back(dd[0]);
    id.insert(id.end(), {7, int64_t(k)});
    std::vector<int64_t> yd(id.begin(), id.end() - 1);
    yd.insert(yd.end(), dd.begin() + b + k, dd.end());
    auto qtype = [&](int axis) { return "!quant.uniform<i8:f32:" + std::to_string(axis) + ", " + scales4 + ">"; };
    const std::string dt = "tensor<" + dims(dd) + qtype(data_axis) + ">", it = "tensor<" + dims(id) + "i64>",
                      yt = "tensor<" + dims(yd) + qtype(out_axis) + ">";
    const std::string text = gather_nd_text(dt, it, yt, b);
    CAPTURE(text);
    auto dtype = qrt::parse_type(dt), itype = qrt::parse_type(it);
    REQUIRE((dtype.is_ok() && itype.is_ok()));
    qrt::Tensor d = qrt::Tensor::zeros(*dtype), idx = qrt::Tensor::zeros(*itype);
    for (size_t i = 0; i < size_t(d.num_elements()); ++i) d.set_int(i, int64_t(rng() % 256) - 128);
    for (size_t t = 0; t < size_t(idx.num_elements()) / size_t(k); ++t) {
      for (int j = 0; j < k; ++j) idx.set_int(t * size_t(k) + size_t(j), int64_t(rng() % uint64_t(dd[size_t(b + j)])));
    }
    CHECK(qrt_test::check_last_op(text, {d, idx}).find("gather_nd (portable C++") == 0);
  }
}

TEST_CASE("the gather_nd kernel reports the first index out of range, whatever the threads") {
  // 20000 tuples of 12-byte rows: four blocks of tuples (kGatherNdBlockBytes), bad tuples in
  // the last three; the first in tuple order is the one reported.
  const std::string text =
      "func.func @main(%d: tensor<4x3xf32>, %i: tensor<20000x1xi64>) -> tensor<20000x3xf32> {\n"
      "  %y = \"qrt.gather_nd\"(%d, %i) : (tensor<4x3xf32>, tensor<20000x1xi64>) -> tensor<20000x3xf32>\n"
      "  return %y : tensor<20000x3xf32>\n}\n";
  auto g = qrt::parse_graph(text);
  REQUIRE(g.is_ok());
  auto choice = qrt::jit::select_kernel(*g, g->ops.back(), qrt_test::test_isas());
  REQUIRE((choice.is_ok() && choice->kernel));
  auto itype = qrt::parse_type("tensor<20000x1xi64>"), dtype = qrt::parse_type("tensor<4x3xf32>");
  REQUIRE((itype.is_ok() && dtype.is_ok()));
  qrt::Tensor d = qrt::Tensor::zeros(*dtype), idx = qrt::Tensor::zeros(*itype);
  idx.set_int(12000, 9);
  idx.set_int(19999, -5);
  idx.set_int(6000, 4);
  const std::vector<const qrt::Tensor*> ptrs{&d, &idx};
  auto one = choice->kernel->run(ptrs);
  REQUIRE_FALSE(one.is_ok());
  CHECK_MESSAGE(one.status().message().find("index 4 of tuple 6000 is out of range for dimension 0 of size 4") != std::string::npos,
                one.status().message());
  qrt::Tensor out = qrt::Tensor::zeros(choice->kernel->result_type());
  qrt_test::ThreeThreads three;
  auto threaded = choice->kernel->run_into(ptrs, out, three);
  REQUIRE_FALSE(threaded.is_ok());
  CHECK(threaded.message() == one.status().message());
}

TEST_CASE("concat of integer tensors (index tuples, masks) moves their bytes as the reference does") {
  std::mt19937 rng(4444);
  for (const char* el : {"i64", "i32", "i1"}) {
    const std::string a = std::string("tensor<2x3x1x") + el + ">", b = std::string("tensor<2x3x2x") + el + ">",
                      y = std::string("tensor<2x3x3x") + el + ">";
    const std::string text = "func.func @main(%a: " + a + ", %b: " + b + ") -> " + y + " {\n  %y = \"qrt.concat\"(%a, %b) {axis = 2 : i64} : (" +
                             a + ", " + b + ") -> " + y + "\n  return %y : " + y + "\n}\n";
    CAPTURE(text);
    auto ta = qrt::parse_type(a), tb = qrt::parse_type(b);
    REQUIRE((ta.is_ok() && tb.is_ok()));
    qrt::Tensor xa = qrt::Tensor::zeros(*ta), xb = qrt::Tensor::zeros(*tb);
    for (size_t i = 0; i < size_t(xa.num_elements()); ++i) xa.set_int(i, int64_t(rng() % 2));
    for (size_t i = 0; i < size_t(xb.num_elements()); ++i) xb.set_int(i, int64_t(rng() % 2) * (el[1] == '1' ? 1 : -7));
    CHECK(!qrt_test::check_last_op(text, {xa, xb}).empty());
  }
}

TEST_CASE("cumsum, mod, scatter_nd and reduce_min/prod kernels take empty tensors") {
  const qrt::Tensor empty = qrt::Tensor::zeros(*qrt::parse_type("tensor<0x3xf32>"));
  const std::string t = "tensor<0x3xf32>";
  CHECK(!qrt_test::check_last_op("func.func @main(%x: " + t + ") -> " + t + " {\n  %y = \"qrt.cumsum\"(%x) {axis = 0 : i64} : (" + t +
                                     ") -> " + t + "\n  return %y : " + t + "\n}\n",
                                 empty)
             .empty());
  CHECK(!qrt_test::check_last_op("func.func @main(%a: " + t + ", %b: " + t + ") -> " + t + " {\n  %y = \"qrt.mod\"(%a, %b) {fmod = 1 : i64} : (" +
                                     t + ", " + t + ") -> " + t + "\n  return %y : " + t + "\n}\n",
                                 {empty, empty})
             .empty());
  for (const char* op : {"reduce_min", "reduce_prod"}) {
    CHECK(!qrt_test::check_last_op("func.func @main(%x: " + t + ") -> tensor<3xf32> {\n  %y = \"qrt." + std::string(op) +
                                       "\"(%x) {axes = [0]} : (" + t + ") -> tensor<3xf32>\n  return %y : tensor<3xf32>\n}\n",
                                   empty)
               .empty());
  }
  const std::string d = "tensor<4x3xf32>", i = "tensor<0x1xi64>", u = "tensor<0x3xf32>";
  qrt::Tensor data = qrt::Tensor::zeros(*qrt::parse_type(d));
  for (size_t k = 0; k < 12; ++k) data.set_float(k, double(k));
  CHECK(!qrt_test::check_last_op("func.func @main(%d: " + d + ", %i: " + i + ", %u: " + u + ") -> " + d +
                                     " {\n  %y = \"qrt.scatter_nd\"(%d, %i, %u) : (" + d + ", " + i + ", " + u + ") -> " + d +
                                     "\n  return %y : " + d + "\n}\n",
                                 {data, qrt::Tensor::zeros(*qrt::parse_type(i)), qrt::Tensor::zeros(*qrt::parse_type(u))})
             .empty());
}
