// qrt — ONNX importer (see onnx_importer.h and docs/importers.md).
#include "importers/onnx_importer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <onnx/onnx_pb.h>

#include "importers/onnx_importer_impl.h"
#include "importers/onnx_tensors.h"
#include "importers/value_names.h"
#include "ir/nn_params.h"
#include "ir/ops.h"

namespace qrt::importers {

namespace onnx_detail {

std::string Importer::ssa_name(const std::string& onnx_name) {
  return unique_ssa_name(onnx_name, "v", used_names_);
}

const DenseElements* Importer::constant(const onnx::NodeProto& node, int input) const {
  if (input >= node.input_size() || node.input(input).empty()) return nullptr;
  auto it = values_.find(node.input(input));
  return it != values_.end() && it->second.is_const ? &it->second.dense : nullptr;
}

Result<int> Importer::value(const onnx::NodeProto& node, int input) {
  if (input >= node.input_size() || node.input(input).empty()) {
    return error(node, "input " + std::to_string(input) + " is missing", ErrorCode::kParse);
  }
  const std::string& name = node.input(input);
  auto it = values_.find(name);
  if (it == values_.end()) {
    return error(node, "input '" + name + "' is not produced by any earlier node, initializer or graph input",
                 ErrorCode::kParse);
  }
  OnnxValue& v = it->second;
  if (v.value < 0) {  // materialize a constant
    v.value = emit(OpKind::kConstant, {}, v.dense.type, {{"value", Attribute::make_dense(v.dense)}});
    g_.values[size_t(v.value)].name = ssa_name(name);
  }
  return v.value;
}

int Importer::emit(OpKind kind, std::vector<int> operands, const Type& result,
                   std::vector<std::pair<std::string, Attribute>> attrs) {
  const int op = g_.add_op(kind, std::move(operands), {result}, std::move(attrs));
  return g_.result(op);
}

void Importer::bind(const onnx::NodeProto& node, int output, int value) {
  OnnxValue v;
  v.value = value;
  if (g_.values[size_t(value)].name.empty()) g_.values[size_t(value)].name = ssa_name(node.output(output));
  values_[node.output(output)] = v;
}

Result<int64_t> Importer::attr_int(const onnx::NodeProto& node, const Attrs& a, const char* name, int64_t fallback) {
  auto it = a.find(name);
  if (it == a.end()) return fallback;
  if (it->second->type() != onnx::AttributeProto::INT) return error(node, std::string("attribute '") + name + "' must be an int");
  return it->second->i();
}

Result<float> Importer::attr_float(const onnx::NodeProto& node, const Attrs& a, const char* name, float fallback) {
  auto it = a.find(name);
  if (it == a.end()) return fallback;
  if (it->second->type() != onnx::AttributeProto::FLOAT) return error(node, std::string("attribute '") + name + "' must be a float");
  return it->second->f();
}

Result<std::vector<int64_t>> Importer::attr_ints(const onnx::NodeProto& node, const Attrs& a, const char* name,
                                                 std::vector<int64_t> fallback) {
  auto it = a.find(name);
  if (it == a.end()) return fallback;
  if (it->second->type() != onnx::AttributeProto::INTS) return error(node, std::string("attribute '") + name + "' must be ints");
  return std::vector<int64_t>(it->second->ints().begin(), it->second->ints().end());
}

Result<std::string> Importer::attr_string(const onnx::NodeProto& node, const Attrs& a, const char* name,
                                          std::string fallback) {
  auto it = a.find(name);
  if (it == a.end()) return fallback;
  if (it->second->type() != onnx::AttributeProto::STRING) return error(node, std::string("attribute '") + name + "' must be a string");
  return it->second->s();
}

Result<Graph> Importer::run(const onnx::ModelProto& model) {
  for (const auto& op_set : model.opset_import()) {
    if (op_set.domain().empty() || op_set.domain() == "ai.onnx") opset_ = op_set.version();
  }
  const onnx::GraphProto& graph = model.graph();
  g_.name = "main";
  for (const auto& init : graph.initializer()) {
    OnnxValue v;
    v.is_const = true;
    QRT_ASSIGN_OR_RETURN(v.dense, dense_of(init, init.name()));
    values_[init.name()] = std::move(v);
  }
  for (const auto& [input_name, data] : frozen_) {
    bool found = false;
    for (const auto& input : graph.input()) found = found || input.name() == input_name;
    if (!found) return Status::error("there is no graph input '" + input_name + "' to freeze").with_code(ErrorCode::kInvalidArgument);
    OnnxValue v;
    v.is_const = true;
    v.dense = data;
    values_[input_name] = std::move(v);
  }
  for (const auto& input : graph.input()) {
    if (values_.count(input.name())) continue;  // an initializer listed as an input, or frozen
    QRT_ASSIGN_OR_RETURN(Type t, type_of(input.type(), input.name()));
    OnnxValue v;
    v.value = g_.add_input(t, ssa_name(input.name()));
    values_[input.name()] = v;
  }
  for (const auto& node : graph.node()) {
    QRT_RETURN_IF_ERROR(import_node(node));
    ++node_index_;
  }
  for (const auto& output : graph.output()) {
    auto it = values_.find(output.name());
    if (it == values_.end()) {
      return Status::error("graph output '" + output.name() + "' is never produced").with_code(ErrorCode::kParse);
    }
    onnx::NodeProto fake;
    fake.add_input(output.name());
    QRT_ASSIGN_OR_RETURN(int v, value(fake, 0));
    // An output reached through Identity keeps the ONNX output's name (what qrun writes
    // NAME.npy as), unless the value is a graph input or another output already.
    const bool renamable = g_.values[size_t(v)].producer >= 0 && g_.values[size_t(v)].name != output.name() &&
                           std::find(g_.outputs.begin(), g_.outputs.end(), v) == g_.outputs.end();
    if (renamable && !used_names_.count(output.name()) && ssa_name(output.name()) == output.name()) {
      g_.values[size_t(v)].name = output.name();
    }
    g_.outputs.push_back(v);
  }
  Status verified = verify_graph(g_);
  if (!verified.is_ok()) {
    return Status::error("the imported graph does not verify (an importer bug): " + verified.message())
        .with_code(ErrorCode::kVerify);
  }
  return std::move(g_);
}

Status Importer::import_node(const onnx::NodeProto& node) {
  if (node.domain() == "com.microsoft") {
    Attrs a;
    for (const auto& attr : node.attribute()) a[attr.name()] = &attr;
    if (node.output_size() < 1 || node.output(0).empty()) return error(node, "its first output is omitted (qrt imports every op through its first output)", ErrorCode::kParse);
    if (node.op_type() == "MatMulNBits") return matmul_nbits(node, a);
    return qoperator(node, a);
  }
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    return error(node, "operators of domain '" + node.domain() + "' are not supported");
  }
  if (node.output_size() < 1 || node.output(0).empty()) return error(node, "its first output is omitted (qrt imports every op through its first output)", ErrorCode::kParse);
  Attrs a;
  for (const auto& attr : node.attribute()) a[attr.name()] = &attr;
  const std::string& op = node.op_type();
  auto unary = [&](OpKind kind, std::vector<std::pair<std::string, Attribute>> attrs = {}) -> Status {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    bind(node, 0, emit(kind, {x}, type(x), std::move(attrs)));
    return Status::ok();
  };
  QRT_ASSIGN_OR_RETURN(bool folded, fold_node(node, a));
  if (folded) return Status::ok();
  QRT_ASSIGN_OR_RETURN(bool spatial, spatial_op(node, a));  // 1-D and 3-D windows
  if (spatial) return Status::ok();
  if (op == "QuantizeLinear") return quantize_linear(node, a);
  if (op == "DequantizeLinear") return dequantize_linear(node, a);
  if (op == "Conv") return conv(node, a);
  if (op == "ConvTranspose") return conv_transpose(node, a);
  if (op == "QLinearMatMul") return qlinear_matmul(node, a, false);
  if (op == "MatMulInteger") return qlinear_matmul(node, a, true);
  if (op == "QLinearConv") return qlinear_conv(node, a, false);
  if (op == "ConvInteger") return qlinear_conv(node, a, true);
  if (op == "MaxPool") return pool(node, a, OpKind::kMaxPool2d, false);
  if (op == "AveragePool") return pool(node, a, OpKind::kAvgPool2d, false);
  if (op == "GlobalAveragePool") return pool(node, a, OpKind::kAvgPool2d, true);
  if (op == "GlobalMaxPool") return pool(node, a, OpKind::kMaxPool2d, true);
  if (op == "Gemm") return gemm(node, a);
  if (op == "Relu") return unary(OpKind::kRelu);
  if (op == "DynamicQuantizeLinear") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    if (node.output_size() != 3) return error(node, "expects 3 outputs", ErrorCode::kParse);
    const ElementType u8 = ElementType::make_int(8, Signedness::kUnsigned);
    const int k = g_.add_op(OpKind::kDynamicQuantize, {x},
                            {Type::tensor(type(x).dims, u8), Type::tensor({}, ElementType::make_float(FloatKind::kF32)),
                             Type::tensor({}, u8)});
    for (int i = 0; i < 3; ++i) bind(node, i, g_.ops[size_t(k)].results[size_t(i)]);
    return Status::ok();
  }
  if (op == "Sigmoid") return unary(OpKind::kLogistic);
  if (op == "Softmax") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const int64_t rank = int64_t(type(x).rank());
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", opset_ >= 13 ? -1 : 1));
    if (axis < 0) axis += rank;
    // Before opset 13 Softmax flattened everything from `axis` on; that equals qrt's
    // per-axis softmax only over the last dimension.
    if (opset_ < 13 && axis != rank - 1) return error(node, "opset < 13 Softmax over a non-final axis is not supported");
    return unary(OpKind::kSoftmax, {{"axis", Attribute::make_int(axis)}});
  }
  if (op == "Identity") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    values_[node.output(0)] = values_[node.input(0)];
    (void)x;
    return Status::ok();
  }
  if (op == "Constant") {
    auto it = a.find("value");
    if (it == a.end() || it->second->type() != onnx::AttributeProto::TENSOR) {
      return error(node, "only the 'value' form of Constant is supported");
    }
    OnnxValue v;
    v.is_const = true;
    QRT_ASSIGN_OR_RETURN(v.dense, dense_of(it->second->t(), node.output(0)));
    values_[node.output(0)] = std::move(v);
    return Status::ok();
  }
  if (op == "Clip") {
    float lo = -INFINITY, hi = INFINITY;
    if (opset_ >= 11) {
      // Integer tensors, or bounds computed at run time: max then min (numpy's clip, NaN passing
      // through; an upper bound below the lower gives the upper).
      QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
      bool runtime_bounds = false;
      for (int i : {1, 2}) {
        if (i < node.input_size() && !node.input(i).empty() && !constant(node, i)) runtime_bounds = true;
      }
      const ElementType e = type(x).element;  // a copy: value() below may emit a constant and grow g_.values
      if (e.is_integer() || (e.is_float() && runtime_bounds)) {
        for (int i : {1, 2}) {
          if (i >= node.input_size() || node.input(i).empty()) continue;
          QRT_ASSIGN_OR_RETURN(int bound, value(node, i));
          const Type& tb = type(bound);
          if (!(tb.element == e) || !(tb.rank() == 0 || (tb.rank() == 1 && tb.dims[0] == 1 && type(x).rank() >= 1))) {
            return error(node, "min and max must be scalars of the input's type " + e.to_string() + ", got " +
                                   type(bound).to_string());
          }
          const Type t = type(x);
          x = emit(i == 1 ? OpKind::kMax : OpKind::kMin, {x, bound}, t);
        }
        bind(node, 0, x);
        return Status::ok();
      }
    }
    if (opset_ < 11) {
      QRT_ASSIGN_OR_RETURN(lo, attr_float(node, a, "min", lo));
      QRT_ASSIGN_OR_RETURN(hi, attr_float(node, a, "max", hi));
    } else {
      for (int i : {1, 2}) {
        if (i >= node.input_size() || node.input(i).empty()) continue;
        const DenseElements* c = constant(node, i);
        if (!c || c->type.num_elements() != 1 || !c->type.element.is_float()) {
          return error(node, "min and max must be constant float scalars");
        }
        (i == 1 ? lo : hi) = float(c->float_at(0));
      }
    }
    return unary(OpKind::kClamp, {{"max", Attribute::make_float(hi, FloatKind::kF32)},
                                  {"min", Attribute::make_float(lo, FloatKind::kF32)}});
  }
  if (op == "Add" || op == "Mul") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int y, value(node, 1));
    auto dims = broadcast_shapes(type(x).dims, type(y).dims);
    if (!dims.is_ok()) return error(node, dims.status().message(), ErrorCode::kVerify);
    bind(node, 0, emit(op == "Add" ? OpKind::kAdd : OpKind::kMul, {x, y}, Type::tensor(*dims, type(x).element)));
    return Status::ok();
  }
  if (op == "MatMul") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int w, value(node, 1));
    const Type tx = type(x), tw = type(w);  // copies: emit() may grow g_.values
    if (tx.rank() < 2 || tw.rank() < 2) return error(node, "1-D MatMul operands are not supported");
    auto dims = matmul_result_dims(tx.dims, tw.dims);
    if (!dims.is_ok()) return error(node, dims.status().message(), ErrorCode::kVerify);
    bind(node, 0, emit(OpKind::kMatmul, {x, w}, Type::tensor(*dims, tx.element)));
    return Status::ok();
  }
  if (op == "Transpose") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    std::vector<int64_t> reverse;
    for (size_t i = t.rank(); i-- > 0;) reverse.push_back(int64_t(i));
    QRT_ASSIGN_OR_RETURN(auto perm, attr_ints(node, a, "perm", reverse));
    if (perm.size() != t.rank()) return error(node, "perm has the wrong length", ErrorCode::kParse);
    std::vector<int64_t> dims;
    for (int64_t p : perm) {
      if (p < 0 || p >= int64_t(t.rank())) return error(node, "perm entry out of range", ErrorCode::kParse);
      dims.push_back(t.dims[size_t(p)]);
    }
    bind(node, 0, emit(OpKind::kTranspose, {x}, Type::tensor(dims, t.element), {{"perm", Attribute::make_int_array(perm)}}));
    return Status::ok();
  }
  if (op == "Concat") {
    // Its first input gives the rank and element type: a node without inputs read past an
    // empty list (fuzz_c_api -seed=57, UBSan).
    if (node.input_size() < 1) return error(node, "expects at least one input", ErrorCode::kParse);
    std::vector<int> xs;
    for (int i = 0; i < node.input_size(); ++i) {
      QRT_ASSIGN_OR_RETURN(int x, value(node, i));
      xs.push_back(x);
    }
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 0));
    const Type t0 = type(xs[0]);
    if (axis < 0) axis += int64_t(t0.rank());
    if (axis < 0 || axis >= int64_t(t0.rank())) return error(node, "axis out of range", ErrorCode::kParse);
    std::vector<int64_t> dims = t0.dims;
    dims[size_t(axis)] = 0;
    for (int x : xs) {
      if (type(x).rank() != t0.rank()) return error(node, "inputs differ in rank", ErrorCode::kVerify);
      const int64_t d = type(x).dims[size_t(axis)];
      dims[size_t(axis)] = (dims[size_t(axis)] < 0 || d < 0) ? -1 : dims[size_t(axis)] + d;
    }
    bind(node, 0, emit(OpKind::kConcat, xs, Type::tensor(dims, t0.element), {{"axis", Attribute::make_int(axis)}}));
    return Status::ok();
  }
  if (op == "Flatten") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 1));
    if (axis < 0) axis += int64_t(t.rank());
    if (axis < 0 || axis > int64_t(t.rank())) return error(node, "axis out of range", ErrorCode::kParse);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < t.rank(); ++d) {
      int64_t& part = int64_t(d) < axis ? outer : inner;
      part = (part < 0 || t.dims[d] < 0) ? -1 : part * t.dims[d];
    }
    return reshape_like(node, {outer, inner});
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const Type t = type(x);
    std::vector<int64_t> axes;
    if (opset_ >= 13) {
      if (node.input_size() > 1 && !node.input(1).empty()) {
        const DenseElements* c = constant(node, 1);
        if (!c || !c->type.element.is_integer()) return error(node, "axes must be a constant int64 tensor");
        for (size_t i = 0; i < size_t(c->type.num_elements()); ++i) axes.push_back(c->int_at(i));
      }
    } else {
      QRT_ASSIGN_OR_RETURN(axes, attr_ints(node, a, "axes", {}));
    }
    std::vector<int64_t> dims;
    if (op == "Squeeze") {
      std::vector<bool> drop(t.rank(), false);
      for (int64_t ax : axes) {
        if (ax < 0) ax += int64_t(t.rank());
        if (ax < 0 || ax >= int64_t(t.rank()) || t.dims[size_t(ax)] != 1) {
          return error(node, "axis " + std::to_string(ax) + " is not a dimension of size 1 in " + t.to_string(),
                       ErrorCode::kVerify);
        }
        drop[size_t(ax)] = true;
      }
      for (size_t d = 0; d < t.rank(); ++d) {
        if (axes.empty() ? t.dims[d] != 1 : !drop[d]) dims.push_back(t.dims[d]);
      }
    } else {
      const int64_t out_rank = int64_t(t.rank() + axes.size());
      std::vector<bool> added(size_t(out_rank), false);
      for (int64_t ax : axes) {
        if (ax < 0) ax += out_rank;
        if (ax < 0 || ax >= out_rank || added[size_t(ax)]) return error(node, "invalid axes", ErrorCode::kVerify);
        added[size_t(ax)] = true;
      }
      size_t next = 0;
      for (int64_t d = 0; d < out_rank; ++d) dims.push_back(added[size_t(d)] ? 1 : t.dims[next++]);
    }
    return reshape_like(node, dims);
  }
  if (op == "Reshape") {
    const DenseElements* shape = constant(node, 1);
    if (!shape || !shape->type.element.is_integer()) return error(node, "the shape input must be a constant int64 tensor");
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    QRT_ASSIGN_OR_RETURN(int64_t allowzero, attr_int(node, a, "allowzero", 0));
    std::vector<int64_t> target;
    for (size_t i = 0; i < size_t(shape->type.num_elements()); ++i) {
      int64_t d = shape->int_at(i);
      if (d == 0 && !allowzero) {
        if (i >= type(x).rank()) return error(node, "shape entry 0 copies a dimension the input lacks", ErrorCode::kParse);
        d = type(x).dims[i];
      }
      if (d < -1) return error(node, "shape entry " + std::to_string(d) + " is invalid", ErrorCode::kParse);
      target.push_back(d);
    }
    // A -1 entry is inferred when everything else is known.
    const int64_t n = type(x).num_elements();
    int64_t known = 1;
    int unknown = 0;
    for (int64_t d : target) {
      if (d < 0) {
        ++unknown;
      } else if (__builtin_mul_overflow(known, d, &known)) {  // the entries come from the file
        return error(node, "the target shape's element count overflows int64", ErrorCode::kParse);
      }
    }
    if (unknown == 1 && n >= 0) {
      for (int64_t& d : target) {
        if (d < 0) d = known == 0 ? 0 : n / known;
      }
    }
    return reshape_like(node, target);
  }
  QRT_ASSIGN_OR_RETURN(bool activation, activation_op(node, a));
  if (activation) return Status::ok();
  QRT_ASSIGN_OR_RETURN(bool handled, math_op(node, a));
  if (handled) return Status::ok();
  QRT_ASSIGN_OR_RETURN(bool moved, layout_op(node, a));
  if (moved) return Status::ok();
  QRT_ASSIGN_OR_RETURN(bool composed, composite_op(node, a));
  if (composed) return Status::ok();
  QRT_ASSIGN_OR_RETURN(bool loss, loss_op(node, a));
  if (loss) return Status::ok();
  return error(node, "unsupported ONNX op '" + op + "' (see docs/importers.md for the supported set)");
}

Status Importer::reshape_like(const onnx::NodeProto& node, std::vector<int64_t> target) {
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  if (std::count(target.begin(), target.end(), int64_t(-1)) > 1) {
    return error(node, "more than one dimension of the result would be dynamic");
  }
  bind(node, 0, emit(OpKind::kReshape, {x}, Type::tensor(target, type(x).element)));
  return Status::ok();
}

// ONNX pads are [x1_begin, x2_begin, x1_end, x2_end] = qrt's [top, left, bottom, right]
// (in general all begins, then all ends, for in_hw.size() spatial dimensions);
// SAME_UPPER / SAME_LOWER are resolved here from static spatial sizes.
Result<std::vector<int64_t>> resolve_pads(const std::string& auto_pad, std::vector<int64_t> pads,
                                          const std::vector<int64_t>& in_hw, const std::vector<int64_t>& k,
                                          const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  if (auto_pad == "NOTSET") return pads;
  const size_t n = in_hw.size();
  if (auto_pad == "VALID") return std::vector<int64_t>(2 * n, 0);
  // Checked before the arithmetic: a stride of 0 would divide by zero, and d·(k - 1) stays
  // inside 64 bits only for windows within qrt's limit.
  auto check = [&](const char* what, const std::vector<int64_t>& v) -> Status {
    for (int64_t x : v) {
      if (x < 1 || x > kMaxWindowParam) {
        return Status::error("auto_pad " + auto_pad + " needs " + what + " in [1, " + std::to_string(kMaxWindowParam) +
                             "], got " + Attribute::make_int_array(v).to_string());
      }
    }
    return Status::ok();
  };
  QRT_RETURN_IF_ERROR(check("strides", s));
  QRT_RETURN_IF_ERROR(check("dilations", d));
  QRT_RETURN_IF_ERROR(check("kernel sizes", k));
  if (s.size() != n || d.size() != n || k.size() != n) {
    return Status::error("strides, dilations and kernel sizes must describe " + std::to_string(n) + " spatial dimensions");
  }
  std::vector<int64_t> out(2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (in_hw[i] < 0) return Status::error("auto_pad " + auto_pad + " needs static spatial sizes");
    const int64_t o = (in_hw[i] + s[i] - 1) / s[i];
    const int64_t total = std::max<int64_t>(0, (o - 1) * s[i] + d[i] * (k[i] - 1) + 1 - in_hw[i]);
    const int64_t small = total / 2, large = total - small;
    out[i] = auto_pad == "SAME_UPPER" ? small : large;
    out[i + n] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return out;
}

Result<std::vector<std::pair<std::string, Attribute>>> Importer::conv_attrs(const onnx::NodeProto& node, const Attrs& a,
                                                                          const Type& tx, const Type& tw) {
  if (tx.rank() != 4 || tw.rank() != 4) return error(node, "only 2-D convolutions (4-D tensors) are supported");
  QRT_ASSIGN_OR_RETURN(auto strides, attr_ints(node, a, "strides", {1, 1}));
  QRT_ASSIGN_OR_RETURN(auto dilations, attr_ints(node, a, "dilations", {1, 1}));
  QRT_ASSIGN_OR_RETURN(auto pads, attr_ints(node, a, "pads", {0, 0, 0, 0}));
  QRT_ASSIGN_OR_RETURN(int64_t group, attr_int(node, a, "group", 1));
  QRT_ASSIGN_OR_RETURN(std::string auto_pad, attr_string(node, a, "auto_pad", "NOTSET"));
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4) {
    return error(node, "strides, dilations and pads must describe 2 spatial dimensions", ErrorCode::kParse);
  }
  auto resolved = resolve_pads(auto_pad, pads, {tx.dims[2], tx.dims[3]}, {tw.dims[2], tw.dims[3]}, strides, dilations);
  if (!resolved.is_ok()) return error(node, resolved.status().message());
  return std::vector<std::pair<std::string, Attribute>>{
      {"dilations", Attribute::make_int_array(dilations)}, {"groups", Attribute::make_int(group)},
      {"layout", Attribute::make_string("NCHW")}, {"pads", Attribute::make_int_array(*resolved)},
      {"strides", Attribute::make_int_array(strides)}};
}

Status Importer::conv(const onnx::NodeProto& node, const Attrs& a) {
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  QRT_ASSIGN_OR_RETURN(int w, value(node, 1));
  const Type tx = type(x), tw = type(w);  // copies: emit() may grow g_.values
  QRT_ASSIGN_OR_RETURN(auto attrs, conv_attrs(node, a, tx, tw));
  std::vector<int> operands = {x, w};
  if (node.input_size() > 2 && !node.input(2).empty()) {
    QRT_ASSIGN_OR_RETURN(int b, value(node, 2));
    operands.push_back(b);
  }
  Op probe;
  for (auto& [k, v] : attrs) probe.set_attr(k, v);
  QRT_ASSIGN_OR_RETURN(Window2d win, conv2d_window(probe, tw.dims));
  bind(node, 0, emit(OpKind::kConv2d, operands, Type::tensor(window_output_dims(tx.dims, win, tw.dims[0]), tx.element), attrs));
  return Status::ok();
}

// ceil_mode = 1: the output size rounds up, ceil((in + pads - k) / s) + 1, less one where the
// last window would start in the end padding (ONNX ignores such windows). The windows past the
// end become end padding, which max pooling ignores and average pooling leaves out of its count
// (with count_include_pad = 1 ONNX counts only the explicit pads: refused where they differ).
Status Importer::ceil_mode_pads(const onnx::NodeProto& node, OpKind kind, bool include_pad, const Type& tx,
                                const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                std::vector<int64_t>& pads) {
  const size_t n = kernel.size();
  if (strides.size() != n || pads.size() != 2 * n || tx.rank() != n + 2) {
    return error(node, "kernel_shape, strides and pads must describe " + std::to_string(n) + " spatial dimensions", ErrorCode::kParse);
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = tx.dims[2 + i], k = kernel[i], s = strides[i];
    if (in < 0) return error(node, "ceil_mode = 1 needs static spatial sizes");
    if (s <= 0 || k <= 0) return error(node, "kernel_shape and strides must be positive", ErrorCode::kParse);
    const int64_t span = in + pads[i] + pads[i + n] - k;
    if (span < 0) continue;  // the window is larger than the padded input: the verifier says so
    int64_t out = (span + s - 1) / s + 1;
    if ((out - 1) * s >= in + pads[i]) --out;
    const int64_t extra = (out - 1) * s + k - (in + pads[i] + pads[i + n]);
    if (extra <= 0) continue;
    if (kind == OpKind::kAvgPool2d && include_pad) {
      return error(node, "ceil_mode = 1 with count_include_pad = 1 is not supported where the last window passes the padding");
    }
    pads[i + n] += extra;
  }
  return Status::ok();
}

Status Importer::pool(const onnx::NodeProto& node, const Attrs& a, OpKind kind, bool global) {
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  const Type tx = type(x);
  if (tx.rank() != 4) return error(node, "only 2-D pooling (4-D tensors) is supported");
  if (node.output_size() > 1 && !node.output(1).empty()) return error(node, "the Indices output is not supported");
  std::vector<int64_t> kernel, strides = {1, 1}, pads = {0, 0, 0, 0};
  int64_t include_pad = 0;
  if (global) {
    if (tx.dims[2] < 0 || tx.dims[3] < 0) return error(node, "needs static spatial sizes");
    kernel = {tx.dims[2], tx.dims[3]};
  } else {
    QRT_ASSIGN_OR_RETURN(kernel, attr_ints(node, a, "kernel_shape", {}));
    QRT_ASSIGN_OR_RETURN(strides, attr_ints(node, a, "strides", {1, 1}));
    QRT_ASSIGN_OR_RETURN(pads, attr_ints(node, a, "pads", {0, 0, 0, 0}));
    QRT_ASSIGN_OR_RETURN(auto dilations, attr_ints(node, a, "dilations", {1, 1}));
    QRT_ASSIGN_OR_RETURN(int64_t ceil_mode, attr_int(node, a, "ceil_mode", 0));
    QRT_ASSIGN_OR_RETURN(int64_t storage_order, attr_int(node, a, "storage_order", 0));
    QRT_ASSIGN_OR_RETURN(include_pad, attr_int(node, a, "count_include_pad", 0));
    QRT_ASSIGN_OR_RETURN(std::string auto_pad, attr_string(node, a, "auto_pad", "NOTSET"));
    if (kernel.size() != 2 || strides.size() != 2 || pads.size() != 4) {
      return error(node, "kernel_shape, strides and pads must describe 2 spatial dimensions", ErrorCode::kParse);
    }
    if (storage_order != 0) return error(node, "storage_order = 1 is not supported");
    if (dilations != std::vector<int64_t>{1, 1}) return error(node, "dilated pooling is not supported");
    auto resolved = resolve_pads(auto_pad, pads, {tx.dims[2], tx.dims[3]}, kernel, strides, {1, 1});
    if (!resolved.is_ok()) return error(node, resolved.status().message());
    pads = *resolved;
    if (ceil_mode != 0) QRT_RETURN_IF_ERROR(ceil_mode_pads(node, kind, include_pad != 0, tx, kernel, strides, pads));
  }
  std::vector<std::pair<std::string, Attribute>> attrs = {
      {"kernel", Attribute::make_int_array(kernel)}, {"layout", Attribute::make_string("NCHW")},
      {"pads", Attribute::make_int_array(pads)}, {"strides", Attribute::make_int_array(strides)}};
  if (kind == OpKind::kAvgPool2d && include_pad) attrs.push_back({"count_include_pad", Attribute::make_int(1)});
  Op probe;
  for (auto& [k, v] : attrs) probe.set_attr(k, v);
  QRT_ASSIGN_OR_RETURN(Window2d win, pool2d_window(probe));
  const std::vector<int64_t> out_dims = window_output_dims(tx.dims, win, tx.dims[1]);
  if (tx.element.is_integer()) {
    // Max pooling of 8- or 16-bit integers selects stored values: it runs on them as a
    // quantized type of scale 1 (quant.scast in and out, no arithmetic).
    const ElementType& e = tx.element;
    if (kind != OpKind::kMaxPool2d || (e.int_width != 8 && e.int_width != 16)) {
      return error(node, "pooling of " + e.to_string() + " tensors is not supported (max pooling of 8- and 16-bit integers is)");
    }
    const ElementType q = ElementType::make_uniform(QuantStorage::full_range(e.int_width, e.int_sign != Signedness::kUnsigned),
                                                    FloatKind::kF32, 1.0, 0);
    const int stored = emit(OpKind::kSCast, {x}, Type::tensor(tx.dims, q));
    const int pooled = emit(kind, {stored}, Type::tensor(out_dims, q), attrs);
    bind(node, 0, emit(OpKind::kSCast, {pooled}, Type::tensor(out_dims, e)));
    return Status::ok();
  }
  bind(node, 0, emit(kind, {x}, Type::tensor(out_dims, tx.element), attrs));
  return Status::ok();
}

// Gemm: Y = alpha · A' B' + beta · C with A' = transA ? Aᵀ : A (likewise B). A C of shape [N]
// or [1, N] with alpha = beta = 1 is the matmul's bias (the form quantized models fold);
// otherwise (float) the product is scaled by alpha, and beta · C added with broadcasting, each
// a rounding step in that order, as ONNX's reference computes it.
Status Importer::gemm(const onnx::NodeProto& node, const Attrs& a) {
  QRT_ASSIGN_OR_RETURN(float alpha, attr_float(node, a, "alpha", 1.0f));
  QRT_ASSIGN_OR_RETURN(float beta, attr_float(node, a, "beta", 1.0f));
  QRT_ASSIGN_OR_RETURN(int64_t trans_a, attr_int(node, a, "transA", 0));
  QRT_ASSIGN_OR_RETURN(int64_t trans_b, attr_int(node, a, "transB", 0));
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  QRT_ASSIGN_OR_RETURN(int w, value(node, 1));
  auto transpose = [&](int v) {
    const Type& t = type(v);
    return emit(OpKind::kTranspose, {v}, Type::tensor({t.dims[1], t.dims[0]}, t.element),
                {{"perm", Attribute::make_int_array({1, 0})}});
  };
  if (type(x).rank() != 2 || type(w).rank() != 2) return error(node, "A and B must be 2-D", ErrorCode::kParse);
  if (trans_a) x = transpose(x);
  if (trans_b) w = transpose(w);
  std::vector<int> operands = {x, w};
  const int64_t n = type(w).dims[1];
  const Type ty = Type::tensor({type(x).dims[0], n}, type(x).element);
  const bool has_c = node.input_size() > 2 && !node.input(2).empty();
  int c = -1;
  if (has_c) {
    QRT_ASSIGN_OR_RETURN(c, value(node, 2));
    const Type tc = type(c);
    const bool row = (tc.rank() == 1 && tc.dims[0] == n) || (tc.rank() == 2 && tc.dims[0] == 1 && tc.dims[1] == n);
    if (row && alpha == 1.0f && beta == 1.0f) {
      if (tc.rank() == 2) c = emit(OpKind::kReshape, {c}, Type::tensor({n}, tc.element));
      operands.push_back(c);
      bind(node, 0, emit(OpKind::kMatmul, operands, ty));
      return Status::ok();
    }
  }
  if ((alpha != 1.0f || (has_c && (beta != 1.0f || type(c).rank() > 2))) && !ty.element.is_float()) {
    return error(node, "alpha, beta and a C that is not a row of N values need float operands, got " + ty.to_string());
  }
  int y = emit(OpKind::kMatmul, operands, ty);
  if (alpha != 1.0f) y = emit(OpKind::kMul, {y, float_scalar(alpha, ty.element)}, ty);
  if (has_c) {
    const Type tc = type(c);
    auto dims = broadcast_shapes(ty.dims, tc.dims);
    if (!dims.is_ok() || *dims != ty.dims) {
      return error(node, "C " + tc.to_string() + " does not broadcast to the product's shape [" + dims_to_string(ty.dims) + "]");
    }
    if (beta != 1.0f) c = emit(OpKind::kMul, {c, float_scalar(beta, tc.element)}, tc);
    y = emit(OpKind::kAdd, {y, c}, ty);
  }
  bind(node, 0, y);
  return Status::ok();
}

}  // namespace onnx_detail

bool looks_like_onnx(const void* data, size_t size) {
  // A ModelProto starts with a protobuf key; MLIR text starts with a letter, '/', or space.
  const auto* p = static_cast<const unsigned char*>(data);
  return size > 0 && (p[0] == 0x08 || p[0] == 0x12 || p[0] == 0x1a || p[0] == 0x3a);
}

Result<Graph> import_onnx(const void* data, size_t size, const std::string& name,
                          const std::map<std::string, DenseElements>& frozen_inputs) {
  // Every error is reported against the file: "model.onnx: error: node 'conv1' (Conv): ...".
  const SourceLoc file{name, 0, 0};
  onnx::ModelProto model;
  if (size > size_t(INT32_MAX) || !model.ParseFromArray(data, int(size))) {
    return Status::error_at(file, "not a valid ONNX model (the protobuf does not parse)").with_code(ErrorCode::kParse);
  }
  if (!model.has_graph()) return Status::error_at(file, "the ONNX model has no graph").with_code(ErrorCode::kParse);
  Result<Graph> g = onnx_detail::Importer(name, frozen_inputs).run(model);
  if (!g.is_ok()) return g.status().with_loc(file);
  return g;
}

}  // namespace qrt::importers
