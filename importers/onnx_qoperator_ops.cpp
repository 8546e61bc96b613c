// qrt — ONNX importer: the QOperator contrib ops that quantizers write beside QLinearConv and
// QLinearMatMul (domain com.microsoft): QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
// QLinearAveragePool, QLinearConcat, QLinearSigmoid, QLinearLeakyRelu and QGemm.
//
// Each one is imported as what it means: DequantizeLinear of every quantized input, the float
// op, QuantizeLinear of the result (QGemm without an output scale stays float). The fold-qdq
// pass then turns the integer ones (add, mul, averages, concat, GEMM) into integer kernels,
// exactly as it does for the QDQ format; Sigmoid and LeakyRelu run in float between the casts.
#include <cmath>
#include <cstring>

#include "importers/onnx_importer_impl.h"
#include "ir/ops.h"

namespace qrt::importers::onnx_detail {

namespace {

// One quantized input of a contrib op: the positions of its data, scale and zero point.
struct QInput {
  int data, scale, zp;
};

// How a contrib op maps onto its float op.
struct QOpForm {
  const char* float_op;       // the ONNX op between the casts
  std::vector<QInput> inputs; // quantized inputs (Concat: filled from the node)
  int y_scale, y_zp;          // the result's parameters (-1: a float result)
  int min_inputs;             // inputs that must be present (the result's zero point is optional)
};

}  // namespace

Status Importer::qoperator(const onnx::NodeProto& node, const Attrs& a) {
  const std::string& op = node.op_type();
  QOpForm form;
  if (op == "QLinearAdd" || op == "QLinearMul") {
    form = {op == "QLinearAdd" ? "Add" : "Mul", {{0, 1, 2}, {3, 4, 5}}, 6, 7, 7};
  } else if (op == "QLinearGlobalAveragePool" || op == "QLinearAveragePool" || op == "QLinearSigmoid" ||
             op == "QLinearLeakyRelu") {
    const char* f = op == "QLinearGlobalAveragePool" ? "GlobalAveragePool"
                    : op == "QLinearAveragePool"     ? "AveragePool"
                    : op == "QLinearSigmoid"         ? "Sigmoid"
                                                     : "LeakyRelu";
    form = {f, {{0, 1, 2}}, 3, 4, 4};
  } else if (op == "QLinearConcat") {
    // QLinearConcat(Y_scale, Y_zp, X0, X0_scale, X0_zp, X1, ...).
    form = {"Concat", {}, 0, 1, 5};
    if (node.input_size() < 5 || (node.input_size() - 2) % 3 != 0) {
      return error(node, "expects Y_scale, Y_zero_point, then (X, scale, zero point) triples", ErrorCode::kParse);
    }
    for (int i = 2; i + 2 < node.input_size(); i += 3) form.inputs.push_back({i, i + 1, i + 2});
  } else if (op == "QGemm") {
    form = {"Gemm", {{0, 1, 2}, {3, 4, 5}}, 7, 8, 6};
    if (node.input_size() < 8 || node.input(7).empty()) form.y_scale = form.y_zp = -1;
  } else {
    return error(node, "operator '" + op + "' of domain com.microsoft is not supported");
  }
  if (node.input_size() < form.min_inputs) {
    return error(node, "expects at least " + std::to_string(form.min_inputs) + " inputs", ErrorCode::kParse);
  }
  if (auto it = a.find("channels_last"); it != a.end() && it->second->i() != 0) {
    return error(node, "channels_last = 1 is not supported (the input must be NCHW)");
  }
  const std::string base = node.output(0) + "::" + op;
  // The parts are named after the node, so their errors name it too.
  const std::string part_name = (node.name().empty() ? "#" + std::to_string(node_index_) : node.name()) + " in " + op;
  // The dequantized inputs, through the DequantizeLinear importer (its checks and errors).
  std::vector<std::string> float_inputs;
  for (size_t i = 0; i < form.inputs.size(); ++i) {
    const QInput& in = form.inputs[i];
    onnx::NodeProto dq;
    dq.set_name(part_name);
    dq.set_op_type("DequantizeLinear");
    dq.add_input(node.input(in.data));
    dq.add_input(node.input(in.scale));
    if (in.zp < node.input_size()) dq.add_input(node.input(in.zp));
    dq.add_output(base + "::dq" + std::to_string(i));
    // QGemm's B may be per column: its axis is N (0 when B is transposed).
    if (op == "QGemm" && i == 1) {
      auto* axis = dq.add_attribute();
      axis->set_name("axis");
      axis->set_type(onnx::AttributeProto::INT);
      auto tb = a.find("transB");
      axis->set_i(tb != a.end() && tb->second->i() != 0 ? 0 : 1);
    }
    QRT_RETURN_IF_ERROR(import_node(dq));
    float_inputs.push_back(dq.output(0));
  }
  if (op == "QGemm" && node.input_size() > 6 && !node.input(6).empty()) {
    // C is int32 at scale A_scale · B_scale (per column where B is), zero point 0.
    const DenseElements* c = constant(node, 6);
    const DenseElements* sa = constant(node, 1);
    const DenseElements* sb = constant(node, 4);
    if (!c || !sa || !sb) return error(node, "C and the scales of A and B must be constants");
    if (sa->type.num_elements() != 1) return error(node, "A's scale must be a scalar", ErrorCode::kParse);
    const int64_t n = sb->type.num_elements();
    std::vector<float> scales;
    for (int64_t j = 0; j < n; ++j) scales.push_back(float(sa->float_at(0) * sb->float_at(size_t(j))));
    OnnxValue sc;
    sc.is_const = true;
    sc.dense.type = Type::tensor(n == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{n},
                                 ElementType::make_float(FloatKind::kF32));
    sc.dense.bytes.resize(scales.size() * 4);
    std::memcpy(sc.dense.bytes.data(), scales.data(), sc.dense.bytes.size());
    const std::string scale_name = base + "::c_scale";
    values_[scale_name] = std::move(sc);
    onnx::NodeProto dq;
    dq.set_name(part_name);
    dq.set_op_type("DequantizeLinear");
    dq.add_input(node.input(6));
    dq.add_input(scale_name);
    dq.add_output(base + "::dq_c");
    auto* axis = dq.add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    QRT_RETURN_IF_ERROR(import_node(dq));
    float_inputs.push_back(dq.output(0));
  }
  // The float op, with the node's attributes (but channels_last).
  const std::string float_out = form.y_scale >= 0 ? base + "::f" : node.output(0);
  if (op == "QLinearLeakyRelu") {
    // LeakyRelu(x) = relu(x) + alpha · min(x, 0): relu, clamp, mul, add.
    QRT_ASSIGN_OR_RETURN(float alpha, attr_float(node, a, "alpha", 0.01f));
    const int x = values_.at(float_inputs[0]).value;  // the DequantizeLinear just imported
    OnnxValue v;
    v.value = leaky_relu(x, alpha);
    values_[float_out] = std::move(v);
  } else {
    onnx::NodeProto f;
    f.set_name(part_name);
    f.set_op_type(form.float_op);
    for (const std::string& in : float_inputs) f.add_input(in);
    f.add_output(float_out);
    for (const auto& attr : node.attribute()) {
      if (attr.name() != "channels_last") *f.add_attribute() = attr;
    }
    QRT_RETURN_IF_ERROR(import_node(f));
  }
  if (form.y_scale < 0) return Status::ok();
  onnx::NodeProto q;
  q.set_name(part_name);
  q.set_op_type("QuantizeLinear");
  q.add_input(float_out);
  q.add_input(node.input(form.y_scale));
  if (form.y_zp < node.input_size() && !node.input(form.y_zp).empty()) q.add_input(node.input(form.y_zp));
  q.add_output(node.output(0));
  return import_node(q);
}

}  // namespace qrt::importers::onnx_detail
