// Tests: the byte-moving kernels — transpose (gather and scatter orders), pad, quantized clamp
// and relu, reshape — give the reference's bytes, on one and three threads.
#include <doctest/doctest.h>

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
      {"qrt.transpose", "{perm = [0, 2, 3, 1]} ", "tensor<2x3x9x7x" + q + ">", "tensor<2x9x7x3x" + q + ">", "transpose_scatter"},
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
