// Tests: every op verifier message, pinned exactly. Each case is a one-op graph whose op
// breaks one rule; the diagnostic must name the op, the rule and the values.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "ir/graph.h"
#include "ir/nn_params.h"
#include "ir/ops.h"
#include "ir/text_format.h"

namespace {

// Builds `func.func @main(ARGS) -> RET { %r = OP ; return %r : RET }` and returns the
// verifier's message (without location), or "ok".
std::string verify_op(const std::string& args, const std::string& op, const std::string& ret) {
  const std::string text = "func.func @main(" + args + ") -> " + ret + " {\n  %r = " + op +
                           "\n  return %r : " + ret + "\n}\n";
  auto g = qrt::parse_graph(text, "v.mlir");
  if (g.is_ok()) return "ok";
  CHECK(g.status().loc().line == 2);  // located at the op
  CHECK(g.status().code() == qrt::ErrorCode::kVerify);
  return g.status().message();
}

const std::string Q8 = "!quant.uniform<i8:f32, 5.000000e-01:-3>";
const std::string QU8 = "!quant.uniform<u8:f32, 2.500000e-01:128>";

}  // namespace

TEST_CASE("quant.qcast / dcast / scast rules") {
  CHECK(verify_op("%a: tensor<4xf32>", "\"quant.qcast\"(%a) : (tensor<4xf32>) -> tensor<4x" + Q8 + ">",
                  "tensor<4x" + Q8 + ">") == "ok");
  CHECK(verify_op("%a: tensor<4xi8>", "\"quant.qcast\"(%a) : (tensor<4xi8>) -> tensor<4x" + Q8 + ">",
                  "tensor<4x" + Q8 + ">") ==
        "'quant.qcast' op operand must be a float scalar or tensor, got tensor<4xi8>");
  CHECK(verify_op("%a: tensor<4xf32>", "\"quant.qcast\"(%a) : (tensor<4xf32>) -> tensor<4xf32>",
                  "tensor<4xf32>") ==
        "'quant.qcast' op result must be a !quant.uniform, !quant.calibrated or !quant.any scalar or tensor, got tensor<4xf32>");
  CHECK(verify_op("%a: tensor<4xf32>", "\"quant.qcast\"(%a) : (tensor<4xf32>) -> tensor<5x" + Q8 + ">",
                  "tensor<5x" + Q8 + ">") ==
        "'quant.qcast' op input and result are both scalars or both tensors with matching shape "
        "(got tensor<4xf32> and tensor<5x" + Q8 + ">)");
  CHECK(verify_op("%a: f32", "\"quant.qcast\"(%a) : (f32) -> tensor<1x" + Q8 + ">", "tensor<1x" + Q8 + ">") ==
        "'quant.qcast' op input and result are both scalars or both tensors with matching shape "
        "(got f32 and tensor<1x" + Q8 + ">)");
  CHECK(verify_op("%a: tensor<4xf16>", "\"quant.qcast\"(%a) : (tensor<4xf16>) -> tensor<4x" + Q8 + ">",
                  "tensor<4x" + Q8 + ">") ==
        "'quant.qcast' op operand element type f16 must equal the expressed type f32 of the result");
  CHECK(verify_op("%a: tensor<4x" + Q8 + ">", "\"quant.dcast\"(%a) : (tensor<4x" + Q8 + ">) -> tensor<4xf32>",
                  "tensor<4xf32>") == "ok");
  CHECK(verify_op("%a: tensor<4xf32>", "\"quant.dcast\"(%a) : (tensor<4xf32>) -> tensor<4xf32>",
                  "tensor<4xf32>") ==
        "'quant.dcast' op operand must be a !quant.uniform, !quant.calibrated or !quant.any scalar or tensor, got tensor<4xf32>");
  CHECK(verify_op("%a: tensor<4x" + Q8 + ">", "\"quant.dcast\"(%a) : (tensor<4x" + Q8 + ">) -> tensor<4xi8>",
                  "tensor<4xi8>") ==
        "'quant.dcast' op result must be a float scalar or tensor, got tensor<4xi8>");
  CHECK(verify_op("%a: tensor<4x" + Q8 + ">", "\"quant.dcast\"(%a) : (tensor<4x" + Q8 + ">) -> tensor<4xf64>",
                  "tensor<4xf64>") ==
        "'quant.dcast' op result element type f64 must equal the expressed type f32 of the operand");
  CHECK(verify_op("%a: tensor<4xi8>", "\"quant.scast\"(%a) : (tensor<4xi8>) -> tensor<4x" + Q8 + ">",
                  "tensor<4x" + Q8 + ">") == "ok");
  CHECK(verify_op("%a: tensor<4xf32>", "\"quant.scast\"(%a) : (tensor<4xf32>) -> tensor<4x" + Q8 + ">",
                  "tensor<4x" + Q8 + ">") ==
        "'quant.scast' op input must be integer and result must be quantized, or vice versa (got "
        "tensor<4xf32> and tensor<4x" + Q8 + ">)");
  CHECK(verify_op("%a: tensor<4x" + Q8 + ">", "\"quant.scast\"(%a) : (tensor<4x" + Q8 + ">) -> tensor<4xi16>",
                  "tensor<4xi16>") ==
        "'quant.scast' op integer type i16 must have the width of the storage type i8");
  CHECK(verify_op("%a: tensor<4x" + Q8 + ">", "\"quant.scast\"(%a) : (tensor<4x" + Q8 + ">) -> tensor<2x2xi8>",
                  "tensor<2x2xi8>") ==
        "'quant.scast' op input and result are both scalars or both tensors with matching shape "
        "(got tensor<4x" + Q8 + "> and tensor<2x2xi8>)");
}

TEST_CASE("per-axis integrity is checked on every value") {
  const std::string pa = "!quant.uniform<i8:f32:1, {1.0, 2.0}>";
  auto g = qrt::parse_graph("func.func @main(%a: tensor<3x2xf32>) -> tensor<3x2x" + pa + "> {\n"
                            "  %r = \"quant.qcast\"(%a) : (tensor<3x2xf32>) -> tensor<3x2x" + pa + ">\n"
                            "  return %r : tensor<3x2x" + pa + ">\n}\n");
  CHECK(g.is_ok());
  auto bad = qrt::parse_graph("func.func @main(%a: tensor<2x3xf32>) -> f32 {\n"
                              "  %r = \"quant.qcast\"(%a) : (tensor<2x3xf32>) -> tensor<2x3x" + pa + ">\n}\n", "p.mlir");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().to_string() ==
        "p.mlir:2:49: error: channel axis 1 has size 3 but the quantized type has 2 scales");
  // The builder path reaches the same rule through verify_graph().
  qrt::Graph b;
  auto per_axis = qrt::parse_type("tensor<2x2x" + pa + ">");
  REQUIRE(per_axis.is_ok());
  qrt::Type wrong = *per_axis;
  wrong.dims = {2, 5};
  const int in = b.add_input(qrt::parse_type("tensor<2x5xf32>").value(), "a");
  const int op = b.add_op(qrt::OpKind::kQCast, {in}, {wrong});
  b.outputs.push_back(b.result(op));
  CHECK(qrt::verify_graph(b).message() ==
        "channel axis 1 has size 5 but the quantized type has 2 scales");
}

TEST_CASE("constant rules") {
  CHECK(verify_op("", "\"qrt.constant\"() : () -> tensor<2xf32>", "tensor<2xf32>") ==
        "'qrt.constant' op requires attribute 'value'");
  CHECK(verify_op("", "\"qrt.constant\"() {value = 3 : i64} : () -> tensor<2xf32>", "tensor<2xf32>") ==
        "'qrt.constant' op attribute 'value' must be dense elements, got integer");
  CHECK(verify_op("", "\"qrt.constant\"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<2xf32>",
                  "tensor<2xf32>") ==
        "'qrt.constant' op value shape tensor<3xf32> does not match result type tensor<2xf32>");
  CHECK(verify_op("", "\"qrt.constant\"() {value = dense<1.0> : tensor<2xf64>} : () -> tensor<2xf32>",
                  "tensor<2xf32>") ==
        "'qrt.constant' op value element type f64 must equal the result element type f32");
  CHECK(verify_op("", "\"qrt.constant\"() {value = dense<1> : tensor<2xi16>} : () -> tensor<2x" + Q8 + ">",
                  "tensor<2x" + Q8 + ">") ==
        "'qrt.constant' op value of a quantized constant must hold 8-bit integers (the storage of " +
            Q8 + "), got i16");
  CHECK(verify_op("", "\"qrt.constant\"() {value = dense<[0, -128]> : tensor<2xi8>} : () -> "
                      "tensor<2x!quant.uniform<i8<-127:127>:f32, 1.0>>",
                  "tensor<2x!quant.uniform<i8<-127:127>:f32, 1.0>>") ==
        "'qrt.constant' op element 1 value -128 is outside the storage bounds [-127, 127]");
  // Full-range whole-byte storage skips the scan; 4-bit values are held as nibbles, so a
  // signless literal is its 4 bits (9 is 0b1001, -7 as signed storage, as mlir-opt reads it),
  // and narrowed bounds are still scanned.
  CHECK(verify_op("", "\"qrt.constant\"() {value = dense<[0, 9]> : tensor<2xi4>} : () -> "
                      "tensor<2x!quant.uniform<i4:f32, 1.0>>",
                  "tensor<2x!quant.uniform<i4:f32, 1.0>>") == "ok");
  CHECK(verify_op("", "\"qrt.constant\"() {value = dense<[0, 5]> : tensor<2xi4>} : () -> "
                      "tensor<2x!quant.uniform<i4<-4:3>:f32, 1.0>>",
                  "tensor<2x!quant.uniform<i4<-4:3>:f32, 1.0>>") ==
        "'qrt.constant' op element 1 value 5 is outside the storage bounds [-4, 3]");
  CHECK(verify_op("", "\"qrt.constant\"() {value = dense<[0, 15]> : tensor<2xi4>} : () -> "
                      "tensor<2x!quant.uniform<u4<1:15>:f32, 1.0:1>>",
                  "tensor<2x!quant.uniform<u4<1:15>:f32, 1.0:1>>") ==
        "'qrt.constant' op element 0 value 0 is outside the storage bounds [1, 15]");
  CHECK(verify_op("", "\"qrt.constant\"() {value = dense<[0, -128, 127]> : tensor<3xi8>} : () -> "
                      "tensor<3x!quant.uniform<i8:f32, 1.0>>",
                  "tensor<3x!quant.uniform<i8:f32, 1.0>>") == "ok");
  {
    // Only the builder can pair a static dense value with a dynamic result type.
    qrt::Graph b;
    qrt::DenseElements d;
    d.type = qrt::parse_type("tensor<2xf32>").value();
    d.bytes.assign(8, 0);
    const int op = b.add_op(qrt::OpKind::kConstant, {}, {qrt::parse_type("tensor<?xf32>").value()},
                            {{"value", qrt::Attribute::make_dense(d)}});
    b.outputs.push_back(b.result(op));
    CHECK(qrt::verify_graph(b).message() ==
          "'qrt.constant' op result must be a statically shaped tensor, got tensor<?xf32>");
  }
  CHECK(verify_op("", "\"qrt.constant\"() {value = dense<1> : tensor<2xi8>, bias = 1} : () -> tensor<2xi8>",
                  "tensor<2xi8>") == "'qrt.constant' op has unknown attribute 'bias' (allowed: value)");
}

TEST_CASE("add / mul rules") {
  CHECK(verify_op("%a: tensor<2x3xf32>, %b: tensor<3xf32>",
                  "\"qrt.add\"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>",
                  "tensor<2x3xf32>") == "ok");
  CHECK(verify_op("%a: tensor<2x3xf32>, %b: tensor<2xf32>",
                  "\"qrt.add\"(%a, %b) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>",
                  "tensor<2x3xf32>") ==
        "'qrt.add' op shapes [2x3] and [2] are not broadcast-compatible");
  CHECK(verify_op("%a: tensor<2x3xf32>, %b: tensor<3xf32>",
                  "\"qrt.mul\"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>", "tensor<3xf32>") ==
        "'qrt.mul' op result shape tensor<3xf32> does not match the expected shape [2x3]");
  CHECK(verify_op("%a: tensor<3xf32>, %b: tensor<3x" + Q8 + ">",
                  "\"qrt.add\"(%a, %b) : (tensor<3xf32>, tensor<3x" + Q8 + ">) -> tensor<3xf32>", "tensor<3xf32>") ==
        "'qrt.add' op operands and result must be all float, all integer or all per-layer or per-axis !quant.uniform, got "
        "tensor<3xf32>, tensor<3x" + Q8 + "> -> tensor<3xf32>");
  CHECK(verify_op("%a: tensor<3xf32>, %b: tensor<3xf16>",
                  "\"qrt.add\"(%a, %b) : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>", "tensor<3xf32>") ==
        "'qrt.add' op float operands and result must have one element type, got tensor<3xf32>, "
        "tensor<3xf16> -> tensor<3xf32>");
  CHECK(verify_op("%a: tensor<3x" + Q8 + ">, %b: tensor<3x" + QU8 + ">",
                  "\"qrt.mul\"(%a, %b) : (tensor<3x" + Q8 + ">, tensor<3x" + QU8 + ">) -> tensor<3x" + Q8 + ">",
                  "tensor<3x" + Q8 + ">") == "ok");
  CHECK(verify_op("%a: f32, %b: tensor<1xf32>", "\"qrt.add\"(%a, %b) : (f32, tensor<1xf32>) -> f32", "f32") ==
        "'qrt.add' op operands and result must be all scalars or all tensors");
  CHECK(verify_op("%a: tensor<3xf32>", "\"qrt.add\"(%a) : (tensor<3xf32>) -> tensor<3xf32>", "tensor<3xf32>") ==
        "'qrt.add' op expects 2 operands, got 1");
}

TEST_CASE("matmul rules") {
  const std::string w = "!quant.uniform<i8:f32:1, {1.0e-2, 2.0e-2}>";
  CHECK(verify_op("%a: tensor<3x4xf32>, %b: tensor<4x2xf32>",
                  "\"qrt.matmul\"(%a, %b) : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>",
                  "tensor<3x2xf32>") == "ok");
  CHECK(verify_op("%a: tensor<5x3x4xf32>, %b: tensor<4x2x" + w + ">",
                  "\"qrt.matmul\"(%a, %b) : (tensor<5x3x4xf32>, tensor<4x2x" + w + ">) -> tensor<5x3x2xf32>",
                  "tensor<5x3x2xf32>") == "ok");  // hybrid with batch dims
  CHECK(verify_op("%a: tensor<4xf32>, %b: tensor<4x2xf32>",
                  "\"qrt.matmul\"(%a, %b) : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>", "tensor<2xf32>") ==
        "'qrt.matmul' op operands must be tensors of rank >= 2, got tensor<4xf32> and tensor<4x2xf32>");
  CHECK(verify_op("%a: tensor<3x4xf32>, %b: tensor<5x2xf32>",
                  "\"qrt.matmul\"(%a, %b) : (tensor<3x4xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>",
                  "tensor<3x2xf32>") ==
        "'qrt.matmul' op contracting dimensions differ: lhs tensor<3x4xf32> has K = 4, rhs "
        "tensor<5x2xf32> has K = 5");
  CHECK(verify_op("%a: tensor<2x3x4xf32>, %b: tensor<5x4x2xf32>",
                  "\"qrt.matmul\"(%a, %b) : (tensor<2x3x4xf32>, tensor<5x4x2xf32>) -> tensor<2x3x2xf32>",
                  "tensor<2x3x2xf32>") ==
        "'qrt.matmul' op batch dimensions: shapes [2] and [5] are not broadcast-compatible");
  CHECK(verify_op("%a: tensor<3x4x" + Q8 + ">, %b: tensor<4x2xf32>",
                  "\"qrt.matmul\"(%a, %b) : (tensor<3x4x" + Q8 + ">, tensor<4x2xf32>) -> tensor<3x2xf32>",
                  "tensor<3x2xf32>") ==
        "'qrt.matmul' op expects float x float -> float, float x quantized -> float (hybrid) or "
        "quantized x quantized -> quantized, got tensor<3x4x" + Q8 + "> x tensor<4x2xf32> -> tensor<3x2xf32>");
  CHECK(verify_op("%a: tensor<3x4xf16>, %b: tensor<4x2x" + w + ">",
                  "\"qrt.matmul\"(%a, %b) : (tensor<3x4xf16>, tensor<4x2x" + w + ">) -> tensor<3x2xf16>",
                  "tensor<3x2xf16>") ==
        "'qrt.matmul' op hybrid matmul needs the rhs expressed type and the result element type "
        "to equal the lhs type f16");
  const std::string w0 = "!quant.uniform<i8:f32:0, {1.0e-2, 2.0e-2}>";
  CHECK(verify_op("%a: tensor<3x2xf32>, %b: tensor<2x2x" + w0 + ">",
                  "\"qrt.matmul\"(%a, %b) : (tensor<3x2xf32>, tensor<2x2x" + w0 + ">) -> tensor<3x2xf32>",
                  "tensor<3x2xf32>") ==
        "'qrt.matmul' op rhs may only be quantized per-axis along its last dimension (axis 1), got axis 0");
  // Operands wider than 8 bits accumulate in int64 (16-bit ones pass), whose bound 32-bit
  // operands exceed.
  const std::string i16 = "!quant.uniform<i16:f32, 1.0>";
  CHECK(verify_op("%a: tensor<1x4x" + i16 + ">, %b: tensor<4x1x" + i16 + ">",
                  "\"qrt.matmul\"(%a, %b) : (tensor<1x4x" + i16 + ">, tensor<4x1x" + i16 + ">) -> tensor<1x1x" + i16 + ">",
                  "tensor<1x1x" + i16 + ">") == "ok");
  const std::string big = "!quant.uniform<i32:f32, 1.0>";
  CHECK(verify_op("%a: tensor<1x4x" + big + ">, %b: tensor<4x1x" + big + ">",
                  "\"qrt.matmul\"(%a, %b) : (tensor<1x4x" + big + ">, tensor<4x1x" + big + ">) -> tensor<1x1x" + big + ">",
                  "tensor<1x1x" + big + ">") ==
        "'qrt.matmul' op int64 accumulator could overflow: K = 4 times the largest |a - za| x |w - zw| "
        "exceeds 2^63 - 1");
  CHECK(verify_op("%a: tensor<1x140000x" + Q8 + ">, %b: tensor<140000x1x" + Q8 + ">",
                  "\"qrt.matmul\"(%a, %b) : (tensor<1x140000x" + Q8 + ">, tensor<140000x1x" + Q8 + ">) -> tensor<1x1x" + Q8 + ">",
                  "tensor<1x1x" + Q8 + ">") ==
        "'qrt.matmul' op int32 accumulator could overflow: K = 140000 times the largest |a - za| x |w - zw| "
        "exceeds 2^31 - 1");
  CHECK(verify_op("%a: tensor<3x4x" + Q8 + ">, %b: tensor<4x2x" + w + ">, %c: tensor<2xi32>",
                  "\"qrt.matmul\"(%a, %b, %c) : (tensor<3x4x" + Q8 + ">, tensor<4x2x" + w + ">, tensor<2xi32>) -> tensor<3x2x" + Q8 + ">",
                  "tensor<3x2x" + Q8 + ">") ==
        "'qrt.matmul' op bias of a quantized matmul must be !quant.uniform with i32 storage, got tensor<2xi32>");
  const std::string bias_bad = "!quant.uniform<i32:f32:0, {5.0e-3, 1.0}>";
  CHECK(verify_op("%a: tensor<3x4x" + Q8 + ">, %b: tensor<4x2x" + w + ">, %c: tensor<2x" + bias_bad + ">",
                  "\"qrt.matmul\"(%a, %b, %c) : (tensor<3x4x" + Q8 + ">, tensor<4x2x" + w + ">, tensor<2x" + bias_bad + ">) -> tensor<3x2x" + Q8 + ">",
                  "tensor<3x2x" + Q8 + ">") ==
        "'qrt.matmul' op bias scale 1.000000e+00 of channel 1 must equal lhs scale x rhs scale = 1.000000e-02");
  const std::string bias_zp = "!quant.uniform<i32:f32, 5.0e-3:1>";
  CHECK(verify_op("%a: tensor<3x4x" + Q8 + ">, %b: tensor<4x2x" + w + ">, %c: tensor<2x" + bias_zp + ">",
                  "\"qrt.matmul\"(%a, %b, %c) : (tensor<3x4x" + Q8 + ">, tensor<4x2x" + w + ">, tensor<2x" + bias_zp + ">) -> tensor<3x2x" + Q8 + ">",
                  "tensor<3x2x" + Q8 + ">") == "'qrt.matmul' op bias zero point must be 0, got 1");
  CHECK(verify_op("%a: tensor<3x4xf32>, %b: tensor<4x2xf32>, %c: tensor<3xf32>",
                  "\"qrt.matmul\"(%a, %b, %c) : (tensor<3x4xf32>, tensor<4x2xf32>, tensor<3xf32>) -> tensor<3x2xf32>",
                  "tensor<3x2xf32>") ==
        "'qrt.matmul' op bias must be a 1-D tensor of N = 2 elements, got tensor<3xf32>");
  CHECK(verify_op("%a: tensor<3x4xf32>, %b: tensor<4x2xf32>",
                  "\"qrt.matmul\"(%a, %b) : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<2x3xf32>",
                  "tensor<2x3xf32>") ==
        "'qrt.matmul' op result shape tensor<2x3xf32> does not match the expected shape [3x2]");
}

TEST_CASE("relu / clamp / reshape / requantize rules") {
  CHECK(verify_op("%a: tensor<3xi8>", "\"qrt.relu\"(%a) : (tensor<3xi8>) -> tensor<3xi8>", "tensor<3xi8>") ==
        "'qrt.relu' op operand must be float or !quant.uniform, got tensor<3xi8>");
  CHECK(verify_op("%a: tensor<3x" + Q8 + ">", "\"qrt.relu\"(%a) : (tensor<3x" + Q8 + ">) -> tensor<3x" + QU8 + ">",
                  "tensor<3x" + QU8 + ">") ==
        "'qrt.relu' op result type tensor<3x" + QU8 + "> must equal the operand type tensor<3x" + Q8 + ">");
  CHECK(verify_op("%a: tensor<3xf32>", "\"qrt.clamp\"(%a) {min = 0.0} : (tensor<3xf32>) -> tensor<3xf32>",
                  "tensor<3xf32>") == "'qrt.clamp' op requires float attributes 'min' and 'max'");
  CHECK(verify_op("%a: tensor<3xf32>", "\"qrt.clamp\"(%a) {min = 0, max = 6.0} : (tensor<3xf32>) -> tensor<3xf32>",
                  "tensor<3xf32>") ==
        "'qrt.clamp' op attributes 'min' and 'max' must be non-NaN floats, got 0 : i64");
  CHECK(verify_op("%a: tensor<3xf32>", "\"qrt.clamp\"(%a) {min = 6.0, max = 1.0} : (tensor<3xf32>) -> tensor<3xf32>",
                  "tensor<3xf32>") == "'qrt.clamp' op min 6.000000e+00 must not exceed max 1.000000e+00");
  CHECK(verify_op("%a: tensor<3xf32>", "\"qrt.clamp\"(%a) {lo = 6.0} : (tensor<3xf32>) -> tensor<3xf32>",
                  "tensor<3xf32>") == "'qrt.clamp' op has unknown attribute 'lo' (allowed: max, min)");
  CHECK(verify_op("%a: tensor<2x3xf32>", "\"qrt.reshape\"(%a) : (tensor<2x3xf32>) -> tensor<5xf32>", "tensor<5xf32>") ==
        "'qrt.reshape' op cannot reshape 6 elements (tensor<2x3xf32>) into 5 (tensor<5xf32>)");
  CHECK(verify_op("%a: tensor<2x3xf32>", "\"qrt.reshape\"(%a) : (tensor<2x3xf32>) -> tensor<6xf16>", "tensor<6xf16>") ==
        "'qrt.reshape' op result element type f16 must equal the operand element type f32");
  CHECK(verify_op("%a: tensor<?x3xf32>", "\"qrt.reshape\"(%a) : (tensor<?x3xf32>) -> tensor<?xf32>", "tensor<?xf32>") == "ok");
  CHECK(verify_op("%a: tensor<?x3xf32>", "\"qrt.reshape\"(%a) : (tensor<?x3xf32>) -> tensor<?x?xf32>", "tensor<?x?xf32>") ==
        "'qrt.reshape' op result shape may have at most one dynamic dimension (inferred from the "
        "element count), got tensor<?x?xf32>");
  const std::string pa = "!quant.uniform<i8:f32:0, {1.0, 2.0}>";
  CHECK(verify_op("%a: tensor<2x3x" + pa + ">", "\"qrt.reshape\"(%a) : (tensor<2x3x" + pa + ">) -> tensor<2x1x3x" + pa + ">",
                  "tensor<2x1x3x" + pa + ">") ==
        "'qrt.reshape' op per-axis quantized tensors cannot be reshaped (the channel axis would lose its meaning)");
  CHECK(verify_op("%a: tensor<3xf32>", "\"qrt.requantize\"(%a) : (tensor<3xf32>) -> tensor<3x" + Q8 + ">",
                  "tensor<3x" + Q8 + ">") ==
        "'qrt.requantize' op operand and result must be !quant.uniform, got tensor<3xf32> -> tensor<3x" + Q8 + ">");
  const std::string pb = "!quant.uniform<i8:f32:1, {1.0, 2.0}>";
  CHECK(verify_op("%a: tensor<2x2x" + pa + ">", "\"qrt.requantize\"(%a) : (tensor<2x2x" + pa + ">) -> tensor<2x2x" + pb + ">",
                  "tensor<2x2x" + pb + ">") ==
        "'qrt.requantize' op per-axis operand and result must use the same channel axis, got 0 and 1");
}

TEST_CASE("window geometry: hostile strides, pads, dilations and kernels are refused without overflow") {
  // CI's fuzz_load_binary found dilation × (KH - 1) overflowing int64 in the output-size rule.
  const std::string x = "tensor<1x8x8x1xf32>";
  CHECK(verify_op("%x: " + x + ", %w: tensor<1x7x1x1xf32>",
                  "\"qrt.conv2d\"(%x, %w) {dilations = [3328832364318031873, 1]} : (" + x +
                      ", tensor<1x7x1x1xf32>) -> tensor<1x2x8x1xf32>",
                  "tensor<1x2x8x1xf32>") ==
        "'qrt.conv2d' op dilations value 3328832364318031873 exceeds qrt's limit of 2147483647");
  CHECK(verify_op("%x: " + x,
                  "\"qrt.max_pool2d\"(%x) {kernel = [2, 2], pads = [9223372036854775807, 0, 0, 0]} : (" + x +
                      ") -> tensor<1x1x1x1xf32>",
                  "tensor<1x1x1x1xf32>") ==
        "'qrt.max_pool2d' op pads value 9223372036854775807 exceeds qrt's limit of 2147483647");
  CHECK(verify_op("%x: " + x, "\"qrt.avg_pool2d\"(%x) {kernel = [2147483648, 2]} : (" + x + ") -> tensor<1x1x1x1xf32>",
                  "tensor<1x1x1x1xf32>") == "'qrt.avg_pool2d' op kernel value 2147483648 exceeds qrt's limit of 2147483647");
  // Within the limits, a 2^40-tap filter at the largest dilation spans 2^71 rows: 128-bit math.
  const std::string big = "tensor<1x1099511627776x1x1xf32>";
  const std::string msg = verify_op("%x: " + x + ", %w: " + big,
                                    "\"qrt.conv2d\"(%x, %w) {dilations = [2147483647, 1], pads = [2147483647, "
                                    "2147483647, 0, 0]} : (" + x + ", " + big + ") -> tensor<1x1x8x1xf32>",
                                    "tensor<1x1x8x1xf32>");
  CHECK(msg.find("window is larger than the padded input") != std::string::npos);
  CHECK(qrt::window_output_size(8, int64_t(1) << 40, 1, 2147483647, 0, 0) == 0);
  CHECK(qrt::window_output_size(int64_t(1) << 48, 1, 1, 1, 2147483647, 2147483647) ==
        (int64_t(1) << 48) + 2 * int64_t(2147483647));
  CHECK(qrt::window_output_size(8, 3, 2, 1, 1, 1) == 4);
  CHECK(qrt::window_output_size(-1, 3, 2, 1, 1, 1) == -1);
}

TEST_CASE("pads, groups and dynamic filters: limits named, sizes computed without overflow") {
  // pad: dims + pads overflowed int64 when only pads >= 0 was checked.
  CHECK(verify_op("%a: tensor<4xf32>", "\"qrt.pad\"(%a) {pads = [9223372036854775807, 1]} : (tensor<4xf32>) -> tensor<100xf32>",
                  "tensor<100xf32>") == "'qrt.pad' op pads value 9223372036854775807 exceeds qrt's limit of 2147483647");
  CHECK(verify_op("%a: tensor<4xf32>",
                  "\"qrt.pad\"(%a) {pads = [2147483647, 2147483647]} : (tensor<4xf32>) -> tensor<4294967298xf32>",
                  "tensor<4294967298xf32>") == "ok");
  // groups: capped like the other window attributes; channels compared as c / groups (ig x
  // groups overflowed int64 for a 2^40-channel filter).
  const std::string x = "tensor<1x4x4x2xf32>";
  CHECK(verify_op("%a: " + x + ", %w: tensor<?x1x1x2xf32>",
                  "\"qrt.conv2d\"(%a, %w) {groups = 9223372036854775807} : (" + x + ", tensor<?x1x1x2xf32>) -> tensor<1x4x4x?xf32>",
                  "tensor<1x4x4x?xf32>") == "'qrt.conv2d' op groups value 9223372036854775807 exceeds qrt's limit of 2147483647");
  CHECK(verify_op("%a: " + x + ", %w: tensor<?x1x1x2xf32>",
                  "\"qrt.conv_transpose2d\"(%a, %w) {groups = 2147483648} : (" + x +
                      ", tensor<?x1x1x2xf32>) -> tensor<1x4x4x?xf32>",
                  "tensor<1x4x4x?xf32>") == "'qrt.conv_transpose2d' op groups value 2147483648 exceeds qrt's limit of 2147483647");
  const std::string wide = "tensor<?x1x1x1099511627776xf32>";
  CHECK(verify_op("%a: " + x + ", %w: " + wide,
                  "\"qrt.conv2d\"(%a, %w) {groups = 2147483647} : (" + x + ", " + wide + ") -> tensor<1x4x4x?xf32>",
                  "tensor<1x4x4x?xf32>") ==
        "'qrt.conv2d' op input has 2 channels but the filter expects 1099511627776 per group x 2147483647 groups");
  CHECK(verify_op("%a: tensor<1x4x4x6xf32>, %w: tensor<?x1x1x2xf32>",
                  "\"qrt.conv2d\"(%a, %w) {groups = 3} : (tensor<1x4x4x6xf32>, tensor<?x1x1x2xf32>) -> tensor<1x4x4x?xf32>",
                  "tensor<1x4x4x?xf32>") == "ok");
  // A dynamic filter height/width is a dynamic output size, not a kernel of -1 rows.
  CHECK(qrt::window_output_size(4, -1, 1, 1, 0, 0) == -1);
  const std::string dyn = "tensor<1x?x?x1xf32>", in = "tensor<1x4x4x1xf32>";
  CHECK(verify_op("%a: " + in + ", %w: " + dyn,
                  "\"qrt.conv2d\"(%a, %w) : (" + in + ", " + dyn + ") -> tensor<1x3x2x1xf32>", "tensor<1x3x2x1xf32>") == "ok");
  CHECK(verify_op("%a: tensor<1x1x1x1xf32>, %w: " + dyn,
                  "\"qrt.conv_transpose2d\"(%a, %w) : (tensor<1x1x1x1xf32>, " + dyn + ") -> tensor<1x?x?x1xf32>",
                  "tensor<1x?x?x1xf32>") == "ok");
  qrt::Window2d w;
  w.kh = -1;
  CHECK(qrt::transposed_output_dims({1, 4, 4, 1}, w, 1) == std::vector<int64_t>{1, -1, 4, 1});
  // K = ig x kh x kw of a filter with a 0 dimension is bounded only by 2^48 per dimension.
  const std::string qf = "tensor<0x281474976710656x281474976710656x1x" + Q8 + ">";
  const std::string qx = "tensor<1x?x?x1x" + Q8 + ">", qy = "tensor<1x?x?x0x" + Q8 + ">";
  CHECK(verify_op("%a: " + qx + ", %w: " + qf, "\"qrt.conv2d\"(%a, %w) : (" + qx + ", " + qf + ") -> " + qy, qy) ==
        "'qrt.conv2d' op int32 accumulator could overflow: K = 1 x 281474976710656 x 281474976710656 (input channels per "
        "group x kh x kw) exceeds 2^48");
}

TEST_CASE("slice, concat, mean, bias, resize and fake_quant: hostile values are refused or computed exactly") {
  // slice: e - s + step - 1 and -step overflowed for steps near the int64 limits.
  for (const char* step : {"9223372036854775807", "-9223372036854775807", "-9223372036854775808"}) {
    CAPTURE(step);
    const bool up = step[0] != '-';
    const std::string bounds = up ? "starts = [0], ends = [4]" : "starts = [3], ends = [0]";
    const std::string op = "\"qrt.slice\"(%a) {" + bounds + ", steps = [" + step + "]} : (tensor<4xf32>) -> ";
    CHECK(verify_op("%a: tensor<4xf32>", op + "tensor<1xf32>", "tensor<1xf32>") == "ok");
    CHECK(verify_op("%a: tensor<4xf32>", op + "tensor<3xf32>", "tensor<3xf32>") ==
          "'qrt.slice' op result shape tensor<3xf32> does not match the expected shape [1]");
  }
  CHECK(qrt::slice_extent(4, 3, 0, INT64_MIN) == 1);
  CHECK(qrt::slice_extent(10, 0, 10, 3) == 4);
  CHECK(qrt::slice_extent(10, 9, -11, -3) == 4);
  CHECK(qrt::slice_extent(10, 2, 1, 1) == 0);
  CHECK(qrt::slice_extent(int64_t(1) << 48, 0, INT64_MAX, 1) == int64_t(1) << 48);
  // concat: the sizes along the axis are summed against 2^48 (they wrapped past int64).
  const std::string big = "tensor<0x281474976710656xf32>";
  CHECK(verify_op("%a: " + big, "\"qrt.concat\"(%a, %a) {axis = 1} : (" + big + ", " + big + ") -> tensor<0x?xf32>",
                  "tensor<0x?xf32>") ==
        "'qrt.concat' op operands 0 to 1 add up to 562949953421312 along axis 1, more than qrt's limit of 2^48");
  const std::string half = "tensor<2x70368744177664xf32>";
  CHECK(verify_op("%a: " + half,
                  "\"qrt.concat\"(%a, %a, %a) {axis = 0} : (" + half + ", " + half + ", " + half +
                      ") -> tensor<?x70368744177664xf32>",
                  "tensor<?x70368744177664xf32>") ==
        "'qrt.concat' op tensor<6x70368744177664xf32> has more elements than qrt supports (2^48)");
  // mean: the count of reduced terms saturates instead of overflowing.
  const std::string m = "tensor<0x281474976710656x281474976710656x" + Q8 + ">";
  CHECK(verify_op("%a: " + m, "\"qrt.mean\"(%a) {axes = [1, 2], accumulator = \"i32\"} : (" + m + ") -> tensor<0x" + Q8 + ">",
                  "tensor<0x" + Q8 + ">") ==
        "'qrt.mean' op the i32 accumulator could overflow: at least 2147483648 terms of up to 130");
  // bias: with a dynamic N, per-axis bias and weights may disagree on the channel count
  // (the scales were read past the weights' end).
  const std::string a = "tensor<2x4x!quant.uniform<i8:f32, 5.000000e-01>>",
                    wt = "tensor<4x?x!quant.uniform<i8:f32:1, {5.000000e-01,5.000000e-01}>>",
                    b = "tensor<5x!quant.uniform<i32:f32:0, {2.500000e-01,2.500000e-01,2.500000e-01,2.500000e-01,2.500000e-01}>>",
                    r = "tensor<2x?x!quant.uniform<i8:f32, 5.000000e-01>>";
  CHECK(verify_op("%a: " + a + ", %w: " + wt + ", %b: " + b,
                  "\"qrt.matmul\"(%a, %w, %b) : (" + a + ", " + wt + ", " + b + ") -> " + r, r) ==
        "'qrt.matmul' op bias has 5 per-axis scales but the weights have 2");
  // resize: floor(in x scale) is converted to int64 only within 2^48.
  CHECK(verify_op("%a: tensor<4xf32>", "\"qrt.resize\"(%a) {scales = [1.0e300]} : (tensor<4xf32>) -> tensor<?xf32>",
                  "tensor<?xf32>") ==
        "'qrt.resize' op scale 1.000000e+300 of dimension 0 resizes 4 elements to more than qrt's limit of 2^48");
  CHECK(verify_op("%a: tensor<?xf32>", "\"qrt.resize\"(%a) {scales = [1.0e300]} : (tensor<?xf32>) -> tensor<?xf32>",
                  "tensor<?xf32>") == "ok");
  // fake_quant: a range narrower than the storage's steps has no scale (0 / 0 became the zero
  // point).
  CHECK(verify_op("%a: tensor<4xf32>", "\"qrt.fake_quant\"(%a) {min = 0.0, max = 4.9e-324} : (tensor<4xf32>) -> tensor<4xf32>",
                  "tensor<4xf32>") ==
        "'qrt.fake_quant' op the range [0.000000e+00, 4.940660e-324] gives the scale 0.000000e+00, which is not a "
        "positive finite f32");
}

TEST_CASE("every op in the table has a name, a summary and a verifier") {
  for (const qrt::OpInfo& info : qrt::all_ops()) {
    CHECK(qrt::find_op(info.name) == &info);
    CHECK(std::string(info.summary).size() > 10);
    CHECK(bool(info.verify));
  }
  CHECK(qrt::find_op("qrt.nonexistent") == nullptr);
}

TEST_CASE("share_dense_attributes: copies of the graph share the weights, values unchanged") {
  qrt::Graph g;
  qrt::DenseElements big;
  big.type = qrt::parse_type("tensor<4096xi8>").value();
  for (size_t i = 0; i < 4096; ++i) big.bytes.push_back(uint8_t(i * 7));
  qrt::DenseElements small;
  small.type = qrt::parse_type("tensor<4xi8>").value();
  small.bytes = {1, 2, 3, 4};
  const int a = g.add_op(qrt::OpKind::kConstant, {}, {big.type}, {{"value", qrt::Attribute::make_dense(big)}});
  const int b = g.add_op(qrt::OpKind::kConstant, {}, {small.type}, {{"value", qrt::Attribute::make_dense(small)}});
  g.outputs = {g.result(a), g.result(b)};
  const std::string before = qrt::print_graph(g);
  qrt::share_dense_attributes(g);
  const qrt::DenseElements& shared = g.ops[size_t(a)].attr("value")->dense;
  CHECK(shared.is_view());
  CHECK(shared.bytes.empty());
  REQUIRE(shared.size() == 4096);
  CHECK(std::memcmp(shared.data(), big.bytes.data(), 4096) == 0);
  CHECK_FALSE(g.ops[size_t(b)].attr("value")->dense.is_view());  // below the size threshold
  CHECK(qrt::print_graph(g) == before);
  CHECK(qrt::verify_graph(g).is_ok());
  const qrt::Graph copy = g;
  CHECK(copy.ops[size_t(a)].attr("value")->dense.data() == shared.data());
}
