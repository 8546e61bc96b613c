// qrt — TFLite importer (see tflite_importer.h and docs/importers.md).
#include "importers/tflite_importer.h"

#include <cmath>
#include <cstring>
#include <set>

#include "importers/tflite_schema_generated.h"
#include "importers/value_names.h"
#include "ir/ops.h"

namespace qrt::importers {

namespace {

namespace fb = qrt::tflite_fb;

// The builtin operator codes qrt reads (values from the TFLite format).
enum Builtin : int {
  kAdd = 0, kAveragePool2d = 1, kConcatenation = 2, kConv2d = 3, kDepthwiseConv2d = 4,
  kDequantize = 6, kFullyConnected = 9, kLogistic = 14, kMaxPool2d = 17, kMul = 18, kRelu = 19,
  kReluN1To1 = 20, kRelu6 = 21, kReshape = 22, kSoftmax = 25, kPad = 34, kTranspose = 39,
  kMean = 40, kTransposeConv = 67, kQuantize = 114,
};

// Element-wise functions of one operand: float tensors map to the op itself; quantized ones
// follow StableHLO's pattern dcast -> op -> qcast, which fold-qdq fuses into one 256-entry
// table when both sides have 8-bit storage.
struct UnaryBuiltin {
  int code;
  const char* name;
  OpKind kind;
};
constexpr UnaryBuiltin kUnaryBuiltins[] = {
    {8, "FLOOR", OpKind::kFloor}, {28, "TANH", OpKind::kTanh},   {47, "EXP", OpKind::kExp},
    {59, "NEG", OpKind::kNeg},    {66, "SIN", OpKind::kSin},     {73, "LOG", OpKind::kLog},
    {75, "SQRT", OpKind::kSqrt},  {76, "RSQRT", OpKind::kRsqrt}, {101, "ABS", OpKind::kAbs},
    {104, "CEIL", OpKind::kCeil}, {108, "COS", OpKind::kCos},    {116, "ROUND", OpKind::kRoundEven},  // TFLite's RoundToNearest: ties to even
    {158, "SIGN", OpKind::kSign}};

const UnaryBuiltin* unary_builtin(int code) {
  for (const UnaryBuiltin& u : kUnaryBuiltins) {
    if (u.code == code) return &u;
  }
  return nullptr;
}

const char* builtin_name(int code) {
  if (const UnaryBuiltin* u = unary_builtin(code)) return u->name;
  switch (code) {
    case kAdd: return "ADD";
    case kAveragePool2d: return "AVERAGE_POOL_2D";
    case kConcatenation: return "CONCATENATION";
    case kConv2d: return "CONV_2D";
    case kTransposeConv: return "TRANSPOSE_CONV";
    case kDepthwiseConv2d: return "DEPTHWISE_CONV_2D";
    case kDequantize: return "DEQUANTIZE";
    case kFullyConnected: return "FULLY_CONNECTED";
    case kLogistic: return "LOGISTIC";
    case kMaxPool2d: return "MAX_POOL_2D";
    case kMul: return "MUL";
    case kRelu: return "RELU";
    case kReluN1To1: return "RELU_N1_TO_1";
    case kRelu6: return "RELU6";
    case kReshape: return "RESHAPE";
    case kSoftmax: return "SOFTMAX";
    case kPad: return "PAD";
    case kTranspose: return "TRANSPOSE";
    case kMean: return "MEAN";
    case kQuantize: return "QUANTIZE";
    case 41: return "SUB";
    case 42: return "DIV";
    case 43: return "SQUEEZE";
    case 45: return "STRIDED_SLICE";
    case 117: return "HARD_SWISH";
    default: return nullptr;
  }
}

class TfliteImporter {
 public:
  TfliteImporter(const fb::Model* model, std::string name) : model_(model), name_(std::move(name)) {}
  Result<Graph> run();

 private:
  Status error(const std::string& message, ErrorCode code = ErrorCode::kUnsupported) const {
    return Status::error(where_ + message).with_code(code);
  }
  Result<Type> tensor_type(int index);
  const fb::Tensor* tensor(int index) const { return subgraph_->tensors()->Get(flatbuffers::uoffset_t(index)); }
  const flatbuffers::Vector<uint8_t>* tensor_data(int index) const;
  Result<int> value(int tensor_index);
  Result<std::vector<int64_t>> int_constant(int tensor_index);
  int emit(OpKind kind, std::vector<int> operands, const Type& result,
           std::vector<std::pair<std::string, Attribute>> attrs = {}) {
    return g_.result(g_.add_op(kind, std::move(operands), {result}, std::move(attrs)));
  }
  Result<int> fused_activation(int value, fb::ActivationFunctionType act);
  Status import_operator(const fb::Operator* op, int code);
  Result<std::vector<int64_t>> same_or_valid_pads(fb::Padding padding, const Type& in, int64_t kh, int64_t kw,
                                                   int64_t sh, int64_t sw, int64_t dh, int64_t dw);
  void bind(int tensor_index, int value);
  std::string ssa_name(std::string raw);

  const fb::Model* model_;
  const fb::SubGraph* subgraph_ = nullptr;
  std::string name_;
  std::string where_;
  Graph g_;
  std::vector<int> values_;  // tensor index -> qrt value (-1: not yet defined)
  std::set<std::string> used_names_;
};

std::string TfliteImporter::ssa_name(std::string raw) { return unique_ssa_name(raw, "t", used_names_); }

const flatbuffers::Vector<uint8_t>* TfliteImporter::tensor_data(int index) const {
  const fb::Tensor* t = tensor(index);
  if (!model_->buffers() || t->buffer() == 0 || t->buffer() >= model_->buffers()->size()) return nullptr;
  const fb::Buffer* b = model_->buffers()->Get(t->buffer());
  return b && b->data() && b->data()->size() > 0 ? b->data() : nullptr;
}

Result<Type> TfliteImporter::tensor_type(int index) {
  if (index < 0 || !subgraph_->tensors() || flatbuffers::uoffset_t(index) >= subgraph_->tensors()->size()) {
    return error("tensor index " + std::to_string(index) + " is out of range", ErrorCode::kParse);
  }
  const fb::Tensor* t = tensor(index);
  const std::string tname = t->name() ? t->name()->str() : std::to_string(index);
  if (t->sparsity()) return error("tensor '" + tname + "' is sparse, which qrt does not support");
  Type type;
  if (t->shape()) {
    for (int32_t d : *t->shape()) type.dims.push_back(d);
  }
  const fb::QuantizationParameters* q = t->quantization();
  // The verifier checks vector lengths, not the alignment of 8-byte elements.
  if (q && q->zero_point() && q->zero_point()->size() > 0 &&
      reinterpret_cast<uintptr_t>(q->zero_point()->Data()) % 8 != 0) {
    return error("tensor '" + tname + "' has misaligned zero points", ErrorCode::kParse);
  }
  const bool quantized = q && q->scale() && q->scale()->size() > 0;
  ElementType storage;
  switch (t->type()) {
    case fb::TensorType_FLOAT32: type.element = ElementType::make_float(FloatKind::kF32); break;
    case fb::TensorType_FLOAT16: type.element = ElementType::make_float(FloatKind::kF16); break;
    case fb::TensorType_FLOAT64: type.element = ElementType::make_float(FloatKind::kF64); break;
    case fb::TensorType_INT8: storage = ElementType::make_int(8); break;
    case fb::TensorType_UINT8: storage = ElementType::make_int(8, Signedness::kUnsigned); break;
    case fb::TensorType_INT16: storage = ElementType::make_int(16); break;
    case fb::TensorType_INT32: storage = ElementType::make_int(32); break;
    case fb::TensorType_INT64: storage = ElementType::make_int(64); break;
    case fb::TensorType_BOOL: storage = ElementType::make_int(1); break;
    default:
      return error("tensor '" + tname + "' has type " + fb::EnumNameTensorType(t->type()) + ", which qrt does not support");
  }
  if (storage.is_integer()) {
    type.element = storage;
    if (quantized && storage.int_width <= 32) {
      const QuantStorage s = QuantStorage::full_range(storage.int_width, storage.int_sign != Signedness::kUnsigned);
      std::vector<double> scales;
      std::vector<int64_t> zps;
      for (flatbuffers::uoffset_t i = 0; i < q->scale()->size(); ++i) {
        scales.push_back(q->scale()->Get(i));
        zps.push_back(q->zero_point() && i < q->zero_point()->size() ? q->zero_point()->Get(i) : 0);
      }
      if (scales.size() == 1) {
        type.element = ElementType::make_uniform(s, FloatKind::kF32, scales[0], zps[0]);
      } else {
        // A 1-D tensor's channels lie along axis 0, whatever quantized_dimension says (some
        // converters store the filter's axis on the bias).
        const int32_t axis = type.dims.size() == 1 ? 0 : q->quantized_dimension();
        type.element = ElementType::make_per_axis(s, FloatKind::kF32, axis, scales, zps);
      }
    }
  }
  Status ok = type.verify();
  if (!ok.is_ok()) return error("tensor '" + tname + "': " + ok.message(), ErrorCode::kVerify);
  return type;
}

Result<int> TfliteImporter::value(int index) {
  QRT_ASSIGN_OR_RETURN(Type t, tensor_type(index));
  if (values_[size_t(index)] >= 0) return values_[size_t(index)];
  const auto* data = tensor_data(index);
  const fb::Tensor* ft = tensor(index);
  const std::string tname = ft->name() ? ft->name()->str() : std::to_string(index);
  if (!data) return error("tensor '" + tname + "' is read before any operator produces it", ErrorCode::kParse);
  DenseElements d;
  d.type = Type::tensor(t.dims, t.element);
  if (t.element.is_uniform()) {
    d.type.element = ElementType::make_int(t.element.storage.width,
                                           t.element.storage.is_signed ? Signedness::kSignless : Signedness::kUnsigned);
  }
  const size_t expected = dense_byte_size(d.type);  // TFLite packs INT4 two per byte, as qrt does
  if (data->size() != expected) {
    return error("constant tensor '" + tname + "' " + t.to_string() + " has " + std::to_string(data->size()) +
                     " bytes of data, expected " + std::to_string(expected), ErrorCode::kParse);
  }
  d.bytes.assign(data->begin(), data->end());
  const int v = emit(OpKind::kConstant, {}, t, {{"value", Attribute::make_dense(std::move(d))}});
  g_.values[size_t(v)].name = ssa_name(tname);
  values_[size_t(index)] = v;
  return v;
}

Result<std::vector<int64_t>> TfliteImporter::int_constant(int index) {
  QRT_ASSIGN_OR_RETURN(Type t, tensor_type(index));
  const auto* data = tensor_data(index);
  if (!data || !t.element.is_integer() || (t.element.int_width != 32 && t.element.int_width != 64)) {
    return error("operand " + std::to_string(index) + " must be a constant int32 or int64 tensor", ErrorCode::kParse);
  }
  const unsigned w = t.element.int_width / 8;
  if (data->size() != size_t(t.num_elements()) * w) return error("constant operand has the wrong size", ErrorCode::kParse);
  std::vector<int64_t> out;
  for (size_t i = 0; i < size_t(t.num_elements()); ++i) {
    if (w == 4) {
      int32_t v;
      std::memcpy(&v, data->data() + i * 4, 4);
      out.push_back(v);
    } else {
      int64_t v;
      std::memcpy(&v, data->data() + i * 8, 8);
      out.push_back(v);
    }
  }
  return out;
}

void TfliteImporter::bind(int tensor_index, int value) {
  values_[size_t(tensor_index)] = value;
  const fb::Tensor* t = tensor(tensor_index);
  if (g_.values[size_t(value)].name.empty()) {
    g_.values[size_t(value)].name = ssa_name(t->name() ? t->name()->str() : "t" + std::to_string(tensor_index));
  }
}

Result<int> TfliteImporter::fused_activation(int v, fb::ActivationFunctionType act) {
  double lo, hi;
  switch (act) {
    case fb::ActivationFunctionType_NONE: return v;
    case fb::ActivationFunctionType_RELU: lo = 0.0; hi = INFINITY; break;
    case fb::ActivationFunctionType_RELU6: lo = 0.0; hi = 6.0; break;
    case fb::ActivationFunctionType_RELU_N1_TO_1: lo = -1.0; hi = 1.0; break;
    default:
      return error(std::string("fused activation ") + fb::EnumNameActivationFunctionType(act) + " is not supported");
  }
  const Type t = g_.values[size_t(v)].type;
  return emit(OpKind::kClamp, {v}, t, {{"max", Attribute::make_float(hi, FloatKind::kF32)},
                                       {"min", Attribute::make_float(lo, FloatKind::kF32)}});
}

// TFLite SAME: out = ceil(in / stride), the extra padding row/column goes at the end.
Result<std::vector<int64_t>> TfliteImporter::same_or_valid_pads(fb::Padding padding, const Type& in, int64_t kh,
                                                                 int64_t kw, int64_t sh, int64_t sw, int64_t dh,
                                                                 int64_t dw) {
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1) return error("strides and dilations must be >= 1", ErrorCode::kParse);
  if (padding == fb::Padding_VALID) return std::vector<int64_t>{0, 0, 0, 0};
  // Sizes, strides and dilations are int32 in the file, so the sums below fit int64; a dynamic
  // (-1) or empty filter would give meaningless pads.
  if (kh < 1 || kw < 1) {
    return error("SAME padding needs static kernel sizes >= 1, got " + std::to_string(kh) + " x " + std::to_string(kw),
                 ErrorCode::kVerify);
  }
  std::vector<int64_t> pads(4, 0);
  const int64_t sizes[2] = {in.dims[1], in.dims[2]}, k[2] = {kh, kw}, s[2] = {sh, sw}, d[2] = {dh, dw};
  for (int i = 0; i < 2; ++i) {
    if (sizes[i] < 0) return error("SAME padding needs static spatial sizes");
    const int64_t out = (sizes[i] + s[i] - 1) / s[i];
    const int64_t total = std::max<int64_t>(0, (out - 1) * s[i] + d[i] * (k[i] - 1) + 1 - sizes[i]);
    pads[size_t(i)] = total / 2;
    pads[size_t(i) + 2] = total - total / 2;
  }
  return pads;
}

Status TfliteImporter::import_operator(const fb::Operator* op, int code) {
  auto in = [&](size_t i) -> int {
    return op->inputs() && i < op->inputs()->size() ? op->inputs()->Get(flatbuffers::uoffset_t(i)) : -1;
  };
  const int out_index = op->outputs() && op->outputs()->size() == 1 ? op->outputs()->Get(0) : -1;
  if (out_index < 0) return error("operators must have exactly one output", ErrorCode::kParse);
  QRT_ASSIGN_OR_RETURN(Type out, tensor_type(out_index));
  const auto* opts = op;
  auto operand = [&](size_t i) -> Result<int> {
    if (in(i) < 0) return error("input " + std::to_string(i) + " is missing", ErrorCode::kParse);
    return value(in(i));
  };
  int result = -1;
  switch (code) {
    case kConv2d:
    case kDepthwiseConv2d: {
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      QRT_ASSIGN_OR_RETURN(int w, operand(1));
      const Type tx = g_.values[size_t(x)].type, tw = g_.values[size_t(w)].type;
      if (tx.rank() != 4 || tw.rank() != 4) return error("input and filter must be 4-D", ErrorCode::kParse);
      int64_t sh, sw, dh, dw, groups = 1;
      fb::Padding padding;
      fb::ActivationFunctionType act;
      if (code == kConv2d) {
        const fb::Conv2DOptions* o = opts->builtin_options_as_Conv2DOptions();
        if (!o) return error("missing Conv2DOptions", ErrorCode::kParse);
        sh = o->stride_h(); sw = o->stride_w(); dh = o->dilation_h_factor(); dw = o->dilation_w_factor();
        padding = o->padding(); act = o->fused_activation_function();
      } else {
        const fb::DepthwiseConv2DOptions* o = opts->builtin_options_as_DepthwiseConv2DOptions();
        if (!o) return error("missing DepthwiseConv2DOptions", ErrorCode::kParse);
        sh = o->stride_h(); sw = o->stride_w(); dh = o->dilation_h_factor(); dw = o->dilation_w_factor();
        padding = o->padding(); act = o->fused_activation_function();
        // The depthwise filter [1, kh, kw, C*M] becomes qrt's [C*M, kh, kw, 1] with groups C.
        groups = tx.dims[3];
        if (tw.dims[0] != 1 || groups < 1 || tw.dims[3] % groups != 0) {
          return error("depthwise filter " + tw.to_string() + " does not fit input " + tx.to_string(), ErrorCode::kParse);
        }
        ElementType te = tw.element;
        if (te.kind == ElementKind::kUniformPerAxis) te.axis = 0;
        w = emit(OpKind::kTranspose, {w}, Type::tensor({tw.dims[3], tw.dims[1], tw.dims[2], 1}, te),
                 {{"perm", Attribute::make_int_array({3, 1, 2, 0})}});
      }
      QRT_ASSIGN_OR_RETURN(auto pads, same_or_valid_pads(padding, tx, tw.dims[1], tw.dims[2], sh, sw, dh, dw));
      std::vector<int> operands = {x, w};
      if (in(2) >= 0) {
        QRT_ASSIGN_OR_RETURN(int b, operand(2));
        operands.push_back(b);
      }
      result = emit(OpKind::kConv2d, operands, out,
                    {{"dilations", Attribute::make_int_array({dh, dw})}, {"groups", Attribute::make_int(groups)},
                     {"pads", Attribute::make_int_array(pads)}, {"strides", Attribute::make_int_array({sh, sw})}});
      QRT_ASSIGN_OR_RETURN(result, fused_activation(result, act));
      break;
    }
    case kAveragePool2d:
    case kMaxPool2d: {
      const fb::Pool2DOptions* o = opts->builtin_options_as_Pool2DOptions();
      if (!o) return error("missing Pool2DOptions", ErrorCode::kParse);
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      const Type tx = g_.values[size_t(x)].type;
      if (tx.rank() != 4) return error("input must be 4-D", ErrorCode::kParse);
      QRT_ASSIGN_OR_RETURN(auto pads, same_or_valid_pads(o->padding(), tx, o->filter_height(), o->filter_width(),
                                                         o->stride_h(), o->stride_w(), 1, 1));
      result = emit(code == kMaxPool2d ? OpKind::kMaxPool2d : OpKind::kAvgPool2d, {x}, out,
                    {{"kernel", Attribute::make_int_array({o->filter_height(), o->filter_width()})},
                     {"pads", Attribute::make_int_array(pads)},
                     {"strides", Attribute::make_int_array({o->stride_h(), o->stride_w()})}});
      QRT_ASSIGN_OR_RETURN(result, fused_activation(result, o->fused_activation_function()));
      break;
    }
    case kFullyConnected: {
      const fb::FullyConnectedOptions* o = opts->builtin_options_as_FullyConnectedOptions();
      if (o && o->weights_format() != 0) return error("shuffled weight formats are not supported");
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      QRT_ASSIGN_OR_RETURN(int w, operand(1));
      const Type tx = g_.values[size_t(x)].type, tw = g_.values[size_t(w)].type;
      if (tw.rank() != 2) return error("weights must be 2-D", ErrorCode::kParse);
      const int64_t k = tw.dims[1], n = tw.dims[0];
      // Weights [N, K] -> [K, N]; a per-channel axis 0 moves to 1.
      ElementType te = tw.element;
      if (te.kind == ElementKind::kUniformPerAxis) te.axis = 1;
      w = emit(OpKind::kTranspose, {w}, Type::tensor({k, n}, te), {{"perm", Attribute::make_int_array({1, 0})}});
      if (tx.rank() != 2 || tx.dims[1] != k) {
        x = emit(OpKind::kReshape, {x}, Type::tensor({-1, k}, tx.element));
      }
      std::vector<int> operands = {x, w};
      if (in(2) >= 0) {
        QRT_ASSIGN_OR_RETURN(int b, operand(2));
        operands.push_back(b);
      }
      Type mm = out;
      mm.dims = {g_.values[size_t(x)].type.dims[0] < 0 && out.rank() == 2 ? out.dims[0] : g_.values[size_t(x)].type.dims[0], n};
      result = emit(OpKind::kMatmul, operands, mm);
      if (!(mm == out)) result = emit(OpKind::kReshape, {result}, out);
      QRT_ASSIGN_OR_RETURN(result, fused_activation(result, o ? o->fused_activation_function()
                                                                 : fb::ActivationFunctionType_NONE));
      break;
    }
    case kTransposeConv: {
      // Inputs: output shape, OHWI weights, NHWC input, optional bias. TFLite pads as a
      // forward convolution from the output to the input would; outputs that no input
      // reaches at the end are qrt's output_padding.
      QRT_ASSIGN_OR_RETURN(int w, operand(1));
      QRT_ASSIGN_OR_RETURN(int x, operand(2));
      const Type tx = g_.values[size_t(x)].type, tw = g_.values[size_t(w)].type;
      if (tx.rank() != 4 || tw.rank() != 4 || out.rank() != 4) return error("input, weights and output must be 4-D", ErrorCode::kParse);
      const fb::TransposeConvOptions* o = opts->builtin_options_as_TransposeConvOptions();
      if (!o) return error("missing TransposeConvOptions", ErrorCode::kParse);
      const int64_t s[2] = {o->stride_h(), o->stride_w()}, k[2] = {tw.dims[1], tw.dims[2]};
      QRT_ASSIGN_OR_RETURN(auto fwd, same_or_valid_pads(o->padding(), out, k[0], k[1], s[0], s[1], 1, 1));
      std::vector<int64_t> pads = {fwd[0], fwd[1], 0, 0}, out_pad = {0, 0};
      for (size_t i = 0; i < 2; ++i) {
        if (tx.dims[1 + i] < 0 || out.dims[1 + i] < 0) return error("TRANSPOSE_CONV needs static spatial sizes");
        const int64_t rest = (tx.dims[1 + i] - 1) * s[i] - pads[i] + k[i] - out.dims[1 + i];
        if (rest >= 0) {
          pads[i + 2] = rest;
        } else {
          out_pad[i] = -rest;
        }
      }
      std::vector<int> operands = {x, w};
      if (in(3) >= 0) {
        QRT_ASSIGN_OR_RETURN(int b, operand(3));
        operands.push_back(b);
      }
      result = emit(OpKind::kConvTranspose2d, operands, out,
                    {{"output_padding", Attribute::make_int_array(out_pad)}, {"pads", Attribute::make_int_array(pads)},
                     {"strides", Attribute::make_int_array({s[0], s[1]})}});
      QRT_ASSIGN_OR_RETURN(result, fused_activation(result, o->fused_activation_function()));
      break;
    }
    case kAdd:
    case kMul: {
      QRT_ASSIGN_OR_RETURN(int a, operand(0));
      QRT_ASSIGN_OR_RETURN(int b, operand(1));
      result = emit(code == kAdd ? OpKind::kAdd : OpKind::kMul, {a, b}, out);
      const auto act = code == kAdd ? (opts->builtin_options_as_AddOptions()
                                           ? opts->builtin_options_as_AddOptions()->fused_activation_function()
                                           : fb::ActivationFunctionType_NONE)
                                    : (opts->builtin_options_as_MulOptions()
                                           ? opts->builtin_options_as_MulOptions()->fused_activation_function()
                                           : fb::ActivationFunctionType_NONE);
      QRT_ASSIGN_OR_RETURN(result, fused_activation(result, act));
      break;
    }
    case kPad: {
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      QRT_ASSIGN_OR_RETURN(auto p, int_constant(in(1)));
      const size_t rank = g_.values[size_t(x)].type.rank();
      if (p.size() != 2 * rank) return error("paddings must be [rank, 2]", ErrorCode::kParse);
      std::vector<int64_t> pads(2 * rank);
      for (size_t d = 0; d < rank; ++d) {
        pads[d] = p[2 * d];
        pads[d + rank] = p[2 * d + 1];
      }
      result = emit(OpKind::kPad, {x}, out, {{"pads", Attribute::make_int_array(pads)}});
      break;
    }
    case kMean: {
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      QRT_ASSIGN_OR_RETURN(auto axes, int_constant(in(1)));
      const int64_t rank = int64_t(g_.values[size_t(x)].type.rank());
      for (int64_t& a : axes) a = a < 0 ? a + rank : a;
      const fb::ReducerOptions* o = opts->builtin_options_as_ReducerOptions();
      result = emit(OpKind::kMean, {x}, out, {{"axes", Attribute::make_int_array(axes)},
                                              {"keepdims", Attribute::make_int(o && o->keep_dims() ? 1 : 0)}});
      break;
    }
    case kReshape: {
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      result = emit(OpKind::kReshape, {x}, out);  // the output tensor records the new shape
      break;
    }
    case kTranspose: {
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      QRT_ASSIGN_OR_RETURN(auto perm, int_constant(in(1)));
      result = emit(OpKind::kTranspose, {x}, out, {{"perm", Attribute::make_int_array(perm)}});
      break;
    }
    case kConcatenation: {
      const fb::ConcatenationOptions* o = opts->builtin_options_as_ConcatenationOptions();
      std::vector<int> xs;
      for (size_t i = 0; op->inputs() && i < op->inputs()->size(); ++i) {
        QRT_ASSIGN_OR_RETURN(int x, operand(i));
        xs.push_back(x);
      }
      if (xs.empty()) return error("no inputs", ErrorCode::kParse);
      int64_t axis = o ? o->axis() : 0;
      if (axis < 0) axis += int64_t(out.rank());
      result = emit(OpKind::kConcat, xs, out, {{"axis", Attribute::make_int(axis)}});
      QRT_ASSIGN_OR_RETURN(result, fused_activation(result, o ? o->fused_activation_function()
                                                                 : fb::ActivationFunctionType_NONE));
      break;
    }
    case kSoftmax: {
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      const fb::SoftmaxOptions* o = opts->builtin_options_as_SoftmaxOptions();
      const double beta = o ? o->beta() : 1.0;
      result = emit(OpKind::kSoftmax, {x}, out, {{"axis", Attribute::make_int(-1)},
                                                 {"beta", Attribute::make_float(beta, FloatKind::kF32)}});
      break;
    }
    case kLogistic: {
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      result = emit(OpKind::kLogistic, {x}, out);
      break;
    }
    case kRelu:
    case kRelu6:
    case kReluN1To1: {
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      result = emit(OpKind::kClamp, {x}, out,
                    {{"max", Attribute::make_float(code == kRelu ? INFINITY : code == kRelu6 ? 6.0 : 1.0, FloatKind::kF32)},
                     {"min", Attribute::make_float(code == kReluN1To1 ? -1.0 : 0.0, FloatKind::kF32)}});
      break;
    }
    case kQuantize: {
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      const bool from_float = g_.values[size_t(x)].type.element.is_float();
      result = emit(from_float ? OpKind::kQCast : OpKind::kRequantize, {x}, out);
      break;
    }
    case kDequantize: {
      QRT_ASSIGN_OR_RETURN(int x, operand(0));
      result = emit(OpKind::kDCast, {x}, out);
      break;
    }
    default: {
      if (const UnaryBuiltin* u = unary_builtin(code)) {
        QRT_ASSIGN_OR_RETURN(int x, operand(0));
        const Type tx = g_.values[size_t(x)].type;
        if (!tx.element.is_quant() && !out.element.is_quant()) {
          result = emit(u->kind, {x}, out);
          break;
        }
        const FloatKind fk = tx.element.is_quant() ? tx.element.float_kind : out.element.float_kind;
        const Type ft = Type::tensor(tx.dims, ElementType::make_float(fk));
        const int f = tx.element.is_quant() ? emit(OpKind::kDCast, {x}, ft) : x;
        const int y = emit(u->kind, {f}, Type::tensor(out.dims, ElementType::make_float(fk)));
        result = out.element.is_quant() ? emit(OpKind::kQCast, {y}, out) : y;
        break;
      }
      const char* n = builtin_name(code);
      return error(std::string("unsupported TFLite operator ") + (n ? n : "with builtin code " + std::to_string(code)));
    }
  }
  bind(out_index, result);
  return Status::ok();
}

Result<Graph> TfliteImporter::run() {
  if (!model_->subgraphs() || model_->subgraphs()->size() == 0) return error("the model has no subgraph", ErrorCode::kParse);
  if (model_->subgraphs()->size() > 1) {
    return error("models with " + std::to_string(model_->subgraphs()->size()) + " subgraphs are not supported");
  }
  subgraph_ = model_->subgraphs()->Get(0);
  const size_t n_tensors = subgraph_->tensors() ? subgraph_->tensors()->size() : 0;
  values_.assign(n_tensors, -1);
  if (subgraph_->inputs()) {
    for (int32_t i : *subgraph_->inputs()) {
      QRT_ASSIGN_OR_RETURN(Type t, tensor_type(i));
      for (int64_t& d : t.dims) d = d < 0 ? -1 : d;
      const fb::Tensor* ft = tensor(i);
      values_[size_t(i)] = g_.add_input(t, ssa_name(ft->name() ? ft->name()->str() : "input"));
    }
  }
  const auto* ops = subgraph_->operators();
  for (flatbuffers::uoffset_t k = 0; ops && k < ops->size(); ++k) {
    const fb::Operator* op = ops->Get(k);
    if (!model_->operator_codes() || op->opcode_index() >= model_->operator_codes()->size()) {
      return error("operator #" + std::to_string(k) + " has an invalid opcode index", ErrorCode::kParse);
    }
    const fb::OperatorCode* oc = model_->operator_codes()->Get(op->opcode_index());
    // The extended builtin_code takes over from the byte-sized deprecated one.
    const int code = std::max<int>(oc->deprecated_builtin_code(), oc->builtin_code());
    const char* n = builtin_name(code);
    where_ = "operator #" + std::to_string(k) + " (" + (n ? n : "code " + std::to_string(code)) + "): ";
    if (code == 32) {  // CUSTOM
      return error("custom operator '" + (oc->custom_code() ? oc->custom_code()->str() : std::string("?")) +
                   "' is not supported");
    }
    QRT_RETURN_IF_ERROR(import_operator(op, code));
  }
  where_.clear();
  if (!subgraph_->outputs() || subgraph_->outputs()->size() == 0) return error("the subgraph has no outputs", ErrorCode::kParse);
  for (int32_t o : *subgraph_->outputs()) {
    QRT_ASSIGN_OR_RETURN(int v, value(o));
    g_.outputs.push_back(v);
  }
  Status verified = verify_graph(g_);
  if (!verified.is_ok()) {
    return Status::error("the imported graph does not verify: " + verified.message()).with_code(ErrorCode::kVerify);
  }
  return std::move(g_);
}

}  // namespace

bool looks_like_tflite(const void* data, size_t size) {
  return size >= 8 && std::memcmp(static_cast<const char*>(data) + 4, "TFL3", 4) == 0;
}

Result<Graph> import_tflite(const void* data, size_t size, const std::string& name) {
  const SourceLoc file{name, 0, 0};
  if (!looks_like_tflite(data, size)) {
    return Status::error_at(file, "not a TFLite model (no \"TFL3\" identifier at byte offset 4)").with_code(ErrorCode::kParse);
  }
  // The verifier bounds-checks every offset before anything is read.
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data), size, 64, 1000000);
  if (!tflite_fb::VerifyModelBuffer(verifier)) {
    return Status::error_at(file, "not a valid TFLite flatbuffer (the flatbuffers verifier rejected it; the file "
                                  "is truncated or corrupted)").with_code(ErrorCode::kParse);
  }
  const tflite_fb::Model* model = tflite_fb::GetModel(data);
  if (model->version() != 3) {
    return Status::error_at(file, "TFLite schema version " + std::to_string(model->version()) +
                                      " is not supported (qrt reads version 3)").with_code(ErrorCode::kUnsupported);
  }
  Result<Graph> g = TfliteImporter(model, name).run();
  if (!g.is_ok()) return g.status().with_loc(file);
  return g;
}

}  // namespace qrt::importers
