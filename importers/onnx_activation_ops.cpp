// qrt — ONNX import of the activations and normalizations that have no qrt op of their own,
// as compositions of element-wise ops in the order ONNX's reference evaluates them (each step
// one rounding of the element type): LeakyRelu, Elu, Selu, HardSigmoid, HardSwish,
// ThresholdedRelu, Sum, Mean, LogSoftmax, and BatchNormalization in inference mode. The plan fuses each
// composition into one element-wise program; between 8-bit QDQ pairs it becomes a 256-entry
// table (fold-qdq), as any unary region does.
#include <cmath>
#include <cstring>

#include <onnx/onnx_pb.h>

#include "importers/onnx_importer_impl.h"
#include "ir/ops.h"

namespace qrt::importers::onnx_detail {

int Importer::float_scalar(double v, const ElementType& e) {
  DenseElements d;
  d.type = Type::tensor({}, e);
  const uint64_t bits = float_kind_bits(v, e.float_kind);
  d.bytes.resize(element_byte_size(e));
  std::memcpy(d.bytes.data(), &bits, d.bytes.size());
  return emit(OpKind::kConstant, {}, d.type, {{"value", Attribute::make_dense(d)}});
}

int Importer::leaky_relu(int x, float alpha) {
  // relu(x) + alpha · min(x, 0): x where x >= 0 (plus +0), alpha · x where x < 0, NaN as NaN.
  const Type t = type(x);
  const int pos = emit(OpKind::kRelu, {x}, t);
  const int neg = emit(OpKind::kClamp, {x}, t, {{"max", Attribute::make_float(0.0, FloatKind::kF32)},
                                               {"min", Attribute::make_float(-INFINITY, FloatKind::kF32)}});
  return emit(OpKind::kAdd, {pos, emit(OpKind::kMul, {neg, float_scalar(alpha, t.element)}, t)}, t);
}

Result<bool> Importer::activation_op(const onnx::NodeProto& node, const Attrs& a) {
  const std::string& op = node.op_type();
  const bool unary = op == "LeakyRelu" || op == "Elu" || op == "Selu" || op == "HardSigmoid" || op == "HardSwish" ||
                     op == "ThresholdedRelu";
  if (unary) {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    if (!t.element.is_float()) return error(node, "expects a float tensor, got " + t.to_string());
    const Type flags = Type::tensor(t.dims, ElementType::make_int(1));
    auto k = [&](double v) { return float_scalar(v, t.element); };
    auto bin = [&](OpKind kind, int lhs, int rhs) { return emit(kind, {lhs, rhs}, t); };
    int y = -1;
    if (op == "LeakyRelu") {
      QRT_ASSIGN_OR_RETURN(float alpha, attr_float(node, a, "alpha", 0.01f));
      y = leaky_relu(x, alpha);
    } else if (op == "Elu") {
      // x < 0 ? (exp(x) - 1) · alpha : x.
      QRT_ASSIGN_OR_RETURN(float alpha, attr_float(node, a, "alpha", 1.0f));
      const int neg = bin(OpKind::kMul, bin(OpKind::kSub, emit(OpKind::kExp, {x}, t), k(1.0)), k(alpha));
      y = emit(OpKind::kWhere, {emit(OpKind::kLess, {x, k(0.0)}, flags), neg, x}, t);
    } else if (op == "Selu") {
      // x > 0 ? x · gamma : (exp(x) · alpha - alpha) · gamma.
      QRT_ASSIGN_OR_RETURN(float alpha, attr_float(node, a, "alpha", 1.67326319217681884765625f));
      QRT_ASSIGN_OR_RETURN(float gamma, attr_float(node, a, "gamma", 1.05070102214813232421875f));
      const int ka = k(alpha), kg = k(gamma);
      const int neg = bin(OpKind::kMul, bin(OpKind::kSub, bin(OpKind::kMul, emit(OpKind::kExp, {x}, t), ka), ka), kg);
      y = emit(OpKind::kWhere, {emit(OpKind::kGreater, {x, k(0.0)}, flags), bin(OpKind::kMul, x, kg), neg}, t);
    } else if (op == "HardSigmoid" || op == "HardSwish") {
      // clamp(x · alpha + beta, 0, 1), times x for HardSwish (alpha 1/6, beta 1/2).
      float alpha = 1.0f / 6.0f, beta = 0.5f;
      if (op == "HardSigmoid") {
        QRT_ASSIGN_OR_RETURN(alpha, attr_float(node, a, "alpha", 0.2f));
        QRT_ASSIGN_OR_RETURN(beta, attr_float(node, a, "beta", 0.5f));
      }
      y = emit(OpKind::kClamp, {bin(OpKind::kAdd, bin(OpKind::kMul, x, k(alpha)), k(beta))}, t,
               {{"max", Attribute::make_float(1.0, FloatKind::kF32)}, {"min", Attribute::make_float(0.0, FloatKind::kF32)}});
      if (op == "HardSwish") y = bin(OpKind::kMul, x, y);
    } else {  // ThresholdedRelu: x > alpha ? x : 0.
      QRT_ASSIGN_OR_RETURN(float alpha, attr_float(node, a, "alpha", 1.0f));
      y = emit(OpKind::kWhere, {emit(OpKind::kGreater, {x, k(alpha)}, flags), x, k(0.0)}, t);
    }
    bind(node, 0, y);
    return true;
  }
  if (op == "Sum" || op == "Mean") {
    // Left to right with numpy broadcasting; Mean divides the sum by the count.
    if (node.input_size() < 1) return error(node, "expects at least one input", ErrorCode::kParse);
    QRT_ASSIGN_OR_RETURN(int acc, value(node, 0));
    for (int i = 1; i < node.input_size(); ++i) {
      QRT_ASSIGN_OR_RETURN(int x, value(node, i));
      if (!(type(x).element == type(acc).element)) return error(node, "inputs of different types");
      auto dims = broadcast_shapes(type(acc).dims, type(x).dims);
      if (!dims.is_ok()) return error(node, dims.status().message(), ErrorCode::kVerify);
      acc = emit(OpKind::kAdd, {acc, x}, Type::tensor(*dims, type(acc).element));
    }
    if (!type(acc).element.is_float()) return error(node, "expects float tensors, got " + type(acc).to_string());
    if (op == "Mean" && node.input_size() > 1) {
      const Type t = type(acc);
      acc = emit(OpKind::kDiv, {acc, float_scalar(double(node.input_size()), t.element)}, t);
    }
    bind(node, 0, acc);
    return true;
  }
  if (op == "LogSoftmax") {
    // d = x - max(x), y = d - log(Σ exp(d)) along `axis` (ONNX's reference): finite where
    // log(softmax(x)) would underflow to -inf.
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    if (!t.element.is_float()) return error(node, "expects a float tensor, got " + t.to_string());
    const int64_t rank = int64_t(t.rank());
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", opset_ >= 13 ? -1 : 1));
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return error(node, "axis out of range", ErrorCode::kVerify);
    // Before opset 13 LogSoftmax flattened everything from `axis` on: the same only over the last.
    if (opset_ < 13 && axis != rank - 1) return error(node, "opset < 13 LogSoftmax over a non-final axis is not supported");
    std::vector<int64_t> kept = t.dims;
    kept[size_t(axis)] = 1;
    const Type kt = Type::tensor(kept, t.element);
    const std::vector<std::pair<std::string, Attribute>> reduce = {{"axes", Attribute::make_int_array({axis})},
                                                                   {"keepdims", Attribute::make_int(1)}};
    const int d = emit(OpKind::kSub, {x, emit(OpKind::kReduceMax, {x}, kt, reduce)}, t);
    const int sum = emit(OpKind::kReduceSum, {emit(OpKind::kExp, {d}, t)}, kt, reduce);
    bind(node, 0, emit(OpKind::kSub, {d, emit(OpKind::kLog, {sum}, kt)}, t));
    return true;
  }
  if (op == "BatchNormalization") {
    // Inference: scale · (x - mean) / sqrt(var + epsilon) + B, the parameters [C] along axis 1.
    QRT_ASSIGN_OR_RETURN(int64_t training, attr_int(node, a, "training_mode", 0));
    if (training != 0) return error(node, "training_mode = 1 is not supported (inference only)");
    for (int o = 1; o < node.output_size(); ++o) {
      if (!node.output(o).empty()) return error(node, "the running mean and variance outputs are not supported");
    }
    if (node.input_size() != 5) return error(node, "expects 5 inputs", ErrorCode::kParse);
    QRT_ASSIGN_OR_RETURN(float epsilon, attr_float(node, a, "epsilon", 1e-5f));
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    if (!t.element.is_float() || t.rank() < 2 || t.dims[1] < 0) {
      return error(node, "expects a float tensor of rank >= 2 with static channels, got " + t.to_string());
    }
    std::vector<int64_t> param_dims(t.rank() - 1, 1);
    param_dims[0] = t.dims[1];
    int params[4];
    for (int i = 1; i <= 4; ++i) {
      QRT_ASSIGN_OR_RETURN(int p, value(node, i));
      const Type& tp = type(p);
      if (!(tp.element == t.element) || tp.rank() != 1 || tp.dims[0] != t.dims[1]) {
        return error(node, "input " + std::to_string(i) + " must be [" + std::to_string(t.dims[1]) + "] of " +
                               t.element.to_string() + ", got " + tp.to_string());
      }
      params[i - 1] = emit(OpKind::kReshape, {p}, Type::tensor(param_dims, t.element));
    }
    const Type pt = Type::tensor(param_dims, t.element);
    const int centred = emit(OpKind::kSub, {x, params[2]}, t);
    const int scaled = emit(OpKind::kMul, {params[0], centred}, t);
    const int deviation = emit(OpKind::kSqrt, {emit(OpKind::kAdd, {params[3], float_scalar(epsilon, t.element)}, pt)}, pt);
    bind(node, 0, emit(OpKind::kAdd, {emit(OpKind::kDiv, {scaled, deviation}, t), params[1]}, t));
    return true;
  }
  return false;
}

}  // namespace qrt::importers::onnx_detail
