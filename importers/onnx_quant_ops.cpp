// qrt — ONNX importer: the quantization ops (QuantizeLinear, DequantizeLinear, QLinearMatMul,
// MatMulInteger, QLinearConv, ConvInteger). ONNX integer tensors become qrt values of
// !quant.uniform type through quant.scast, so the integer kernels see scales and zero points.
#include <cmath>

#include "importers/onnx_importer_impl.h"
#include "importers/onnx_tensors.h"
#include "ir/nn_params.h"
#include "ir/ops.h"

namespace qrt::importers::onnx_detail {

// Input `i` as constant data: nullptr when the input is absent, an error when it is present
// but computed at run time (quantization parameters are part of qrt's types).
Result<const DenseElements*> Importer::param(const onnx::NodeProto& node, int i, const char* what) {
  if (i >= node.input_size() || node.input(i).empty()) return static_cast<const DenseElements*>(nullptr);
  const DenseElements* c = constant(node, i);
  if (!c) {
    return error(node, std::string("the ") + what + " '" + node.input(i) +
                           "' must be a constant (an initializer or Constant node); qrt types carry "
                           "quantization parameters statically");
  }
  return c;
}

Result<ElementType> Importer::make_quant_type(const onnx::NodeProto& node, const ElementType& storage,
                                              const Type& data_type, const DenseElements* scale,
                                              const DenseElements* zp, int64_t axis) {
  if (scale && !scale->type.element.is_float()) return error(node, "a scale must be a constant float tensor");
  if (!storage.is_integer() || storage.int_width > 32 || storage.int_width < 2) {
    return error(node, "quantized data must be a 4-, 8-, 16- or 32-bit integer tensor, got " + storage.to_string());
  }
  const size_t ns = scale ? size_t(scale->type.num_elements()) : 1;
  const size_t nz = zp ? size_t(zp->type.num_elements()) : 1;
  // An empty one would be read at element 0 all the same (fuzz_load_onnx -seed=58).
  if (ns == 0 || nz == 0) {
    return error(node, std::string(ns == 0 ? "the scale" : "the zero point") + " holds no elements", ErrorCode::kParse);
  }
  if (ns != nz && ns != 1 && nz != 1) return error(node, "scale and zero point differ in size", ErrorCode::kParse);
  const size_t n = std::max(ns, nz);
  const QuantStorage s = QuantStorage::full_range(storage.int_width, storage.int_sign != Signedness::kUnsigned);
  std::vector<double> scales;
  std::vector<int64_t> zps;
  for (size_t i = 0; i < n; ++i) {
    scales.push_back(scale ? scale->float_at(ns == 1 ? 0 : i) : 1.0);
    zps.push_back(zp ? zp->int_at(nz == 1 ? 0 : i) : 0);
  }
  const FloatKind expressed = scale ? scale->type.element.float_kind : FloatKind::kF32;
  ElementType e;
  if (n == 1) {
    e = ElementType::make_uniform(s, expressed, scales[0], zps[0]);
  } else {
    if (axis < 0) axis += int64_t(data_type.rank());
    e = ElementType::make_per_axis(s, expressed, int32_t(axis), scales, zps);
  }
  Status ok = Type::tensor(data_type.dims, e).verify();
  if (!ok.is_ok()) return error(node, ok.message(), ErrorCode::kVerify);
  return e;
}

Result<ElementType> Importer::quant_type(const onnx::NodeProto& node, const ElementType& storage, const Type& data_type,
                                         const DenseElements* scale, const DenseElements* zp, int64_t axis,
                                         int64_t block_size) {
  if (block_size < 0) return error(node, "block_size must be >= 0, got " + std::to_string(block_size), ErrorCode::kParse);
  // block_size 0 (the default) is per tensor or per axis; a single scale ignores it.
  if (block_size == 0 || scale->type.num_elements() == 1) return make_quant_type(node, storage, data_type, scale, zp, axis);
  return make_block_quant_type(node, storage, data_type, scale, zp, axis, block_size);
}

Result<Type> Importer::input_type(const onnx::NodeProto& node, int input) {
  // A constant's type without materializing it (its quantized form may still be chosen).
  if (const DenseElements* c = constant(node, input)) return c->type;
  QRT_ASSIGN_OR_RETURN(int v, value(node, input));
  return type(v);
}

Result<ElementType> Importer::storage_of(const onnx::NodeProto& node, int input) {
  if (const DenseElements* c = constant(node, input)) return c->type.element;
  QRT_ASSIGN_OR_RETURN(int v, value(node, input));
  const ElementType e = type(v).element;
  if (e.is_uniform()) {
    return ElementType::make_int(e.storage.width, e.storage.is_signed ? Signedness::kSignless : Signedness::kUnsigned);
  }
  return e;
}

Result<int> Importer::quantized_value(const onnx::NodeProto& node, int input, const ElementType& q) {
  if (const DenseElements* data = constant(node, input)) {
    // A quantized initializer becomes a quantized constant holding its stored integers.
    const int c = emit(OpKind::kConstant, {}, Type::tensor(data->type.dims, q), {{"value", Attribute::make_dense(*data)}});
    g_.values[size_t(c)].name = ssa_name(node.input(input));
    return c;
  }
  QRT_ASSIGN_OR_RETURN(int x, value(node, input));
  const Type tx = type(x);
  if (tx.element == q) return x;
  // The stored integers of a quantized value of this very type (a QLinear op's result read
  // by the next QLinear op): that value itself, no scast pair.
  if (const int producer = g_.values[size_t(x)].producer; producer >= 0 && g_.ops[size_t(producer)].kind == OpKind::kSCast) {
    const int source = g_.ops[size_t(producer)].operands[0];
    if (type(source).element == q && type(source).dims == tx.dims) return source;
  }
  // Same stored integers, other parameters: reinterpret through the storage type.
  int raw = x;
  if (tx.element.is_uniform()) raw = emit(OpKind::kSCast, {x}, Type::tensor(tx.dims, ElementType::make_int(q.storage.width)));
  return emit(OpKind::kSCast, {raw}, Type::tensor(tx.dims, q));
}

int Importer::to_storage_int(int quantized) {
  const Type t = type(quantized);
  const Signedness sign = t.element.storage.is_signed ? Signedness::kSignless : Signedness::kUnsigned;
  return emit(OpKind::kSCast, {quantized}, Type::tensor(t.dims, ElementType::make_int(t.element.storage.width, sign)));
}

Status Importer::quantize_linear(const onnx::NodeProto& node, const Attrs& a) {
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  const Type tx = type(x);
  QRT_ASSIGN_OR_RETURN(const DenseElements* scale, param(node, 1, "scale"));
  QRT_ASSIGN_OR_RETURN(const DenseElements* zp, param(node, 2, "zero point"));
  if (!scale) return error(node, "the scale input is missing", ErrorCode::kParse);
  QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 1));
  QRT_ASSIGN_OR_RETURN(int64_t block_size, attr_int(node, a, "block_size", 0));
  // The stored type: the zero point's, else opset 21's output_dtype, else uint8.
  QRT_ASSIGN_OR_RETURN(int64_t output_dtype, attr_int(node, a, "output_dtype", 0));
  ElementType storage = ElementType::make_int(8, Signedness::kUnsigned);
  if (output_dtype != 0) {
    auto named = element_type_of(int(output_dtype));
    if (!named.is_ok() || !named->is_integer()) {
      return error(node, "output_dtype " + std::to_string(output_dtype) +
                             " is not an integer type qrt quantizes to (INT4, UINT4, INT8, UINT8, INT16, UINT16, INT32)");
    }
    storage = *named;
  }
  if (zp) {
    if (output_dtype != 0 && !(zp->type.element == storage)) {
      return error(node, "output_dtype " + storage.to_string() + " differs from the zero point's type " +
                             zp->type.element.to_string(), ErrorCode::kVerify);
    }
    storage = zp->type.element;
  }
  QRT_ASSIGN_OR_RETURN(ElementType q, quant_type(node, storage, tx, scale, zp, axis, block_size));
  if (!tx.element.is_float() || tx.element.float_kind != q.float_kind) {
    return error(node, "input " + tx.to_string() + " must be a float tensor of the scale's type", ErrorCode::kVerify);
  }
  bind(node, 0, emit(OpKind::kQCast, {x}, Type::tensor(tx.dims, q)));
  return Status::ok();
}

Status Importer::dequantize_linear(const onnx::NodeProto& node, const Attrs& a) {
  QRT_ASSIGN_OR_RETURN(const DenseElements* scale, param(node, 1, "scale"));
  QRT_ASSIGN_OR_RETURN(const DenseElements* zp, param(node, 2, "zero point"));
  if (!scale) return error(node, "the scale input is missing", ErrorCode::kParse);
  QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 1));
  QRT_ASSIGN_OR_RETURN(int64_t block_size, attr_int(node, a, "block_size", 0));
  QRT_ASSIGN_OR_RETURN(ElementType storage, storage_of(node, 0));
  QRT_ASSIGN_OR_RETURN(const Type data_type, input_type(node, 0));
  QRT_ASSIGN_OR_RETURN(ElementType q, quant_type(node, storage, data_type, scale, zp, axis, block_size));
  QRT_ASSIGN_OR_RETURN(int qv, quantized_value(node, 0, q));
  bind(node, 0, emit(OpKind::kDCast, {qv}, Type::tensor(data_type.dims, ElementType::make_float(q.float_kind))));
  return Status::ok();
}

// Inputs by position: QLinear*(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias?) and
// *Integer(x, w, x_zp?, w_zp?).
Result<Importer::QLinearParams> Importer::qlinear_params(const onnx::NodeProto& node, bool integer_only) {
  QLinearParams p;
  QRT_ASSIGN_OR_RETURN(p.x_zp, param(node, 2, "zero point of the first operand"));
  QRT_ASSIGN_OR_RETURN(p.w_zp, param(node, integer_only ? 3 : 5, "zero point of the second operand"));
  if (integer_only) return p;
  QRT_ASSIGN_OR_RETURN(p.x_scale, param(node, 1, "scale of the first operand"));
  QRT_ASSIGN_OR_RETURN(p.w_scale, param(node, 4, "scale of the second operand"));
  QRT_ASSIGN_OR_RETURN(p.y_scale, param(node, 6, "scale of the result"));
  QRT_ASSIGN_OR_RETURN(p.y_zp, param(node, 7, "zero point of the result"));
  QRT_ASSIGN_OR_RETURN(p.bias, param(node, 8, "bias"));
  if (!p.x_scale || !p.w_scale || !p.y_scale) return error(node, "a scale input is missing", ErrorCode::kParse);
  return p;
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) and
// MatMulInteger(a, b, a_zp?, b_zp?) (integer_only: scales 1, an int32 accumulator result).
Status Importer::qlinear_matmul(const onnx::NodeProto& node, const Attrs& a, bool integer_only) {
  (void)a;
  if (integer_only && node.input_size() > 2 && !node.input(2).empty() && !constant(node, 2)) {
    return matmul_integer_runtime_zp(node);
  }
  const int ia = 0, ib = integer_only ? 1 : 3;
  QRT_ASSIGN_OR_RETURN(QLinearParams p, qlinear_params(node, integer_only));
  const DenseElements *a_scale = p.x_scale, *a_zp = p.x_zp, *b_scale = p.w_scale, *b_zp = p.w_zp;
  const DenseElements *y_scale = p.y_scale, *y_zp = p.y_zp;
  QRT_ASSIGN_OR_RETURN(ElementType sa, storage_of(node, ia));
  QRT_ASSIGN_OR_RETURN(ElementType sb, storage_of(node, ib));
  QRT_ASSIGN_OR_RETURN(const Type ta, input_type(node, ia));
  QRT_ASSIGN_OR_RETURN(const Type tb, input_type(node, ib));
  if (ta.rank() < 2 || tb.rank() < 2) return error(node, "1-D operands are not supported");
  if (a_zp && a_zp->type.num_elements() > 1) return error(node, "a per-row zero point of A is not supported");
  QRT_ASSIGN_OR_RETURN(ElementType qa, make_quant_type(node, sa, ta, a_scale, a_zp, 0));
  QRT_ASSIGN_OR_RETURN(ElementType qb, make_quant_type(node, sb, tb, b_scale, b_zp, int64_t(tb.rank()) - 1));
  QRT_ASSIGN_OR_RETURN(int va, quantized_value(node, ia, qa));
  QRT_ASSIGN_OR_RETURN(int vb, quantized_value(node, ib, qb));
  auto matmul_dims = matmul_result_dims(ta.dims, tb.dims);
  if (!matmul_dims.is_ok()) return error(node, matmul_dims.status().message(), ErrorCode::kVerify);
  const std::vector<int64_t>& dims = *matmul_dims;
  ElementType qy;
  if (integer_only) {
    const QuantStorage s32 = QuantStorage::full_range(32, true);
    qy = ElementType::make_uniform(s32, FloatKind::kF32, 1.0, 0);  // the accumulator type
  } else {
    const ElementType sy = y_zp ? y_zp->type.element : ElementType::make_int(8, Signedness::kUnsigned);
    QRT_ASSIGN_OR_RETURN(qy, make_quant_type(node, sy, Type::tensor(dims, sy), y_scale, y_zp, 0));
  }
  bind(node, 0, to_storage_int(emit(OpKind::kMatmul, {va, vb}, Type::tensor(dims, qy))));
  return Status::ok();
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?) and
// ConvInteger(x, w, x_zp?, w_zp?) (integer_only: scales 1, an int32 accumulator result).
Status Importer::qlinear_conv(const onnx::NodeProto& node, const Attrs& a, bool integer_only) {
  if (integer_only && node.input_size() > 2 && !node.input(2).empty() && !constant(node, 2)) {
    return conv_integer_runtime_zp(node, a);
  }
  const int ix = 0, iw = integer_only ? 1 : 3;
  QRT_ASSIGN_OR_RETURN(QLinearParams p, qlinear_params(node, integer_only));
  const DenseElements *x_scale = p.x_scale, *x_zp = p.x_zp, *w_scale = p.w_scale, *w_zp = p.w_zp;
  const DenseElements *y_scale = p.y_scale, *y_zp = p.y_zp, *bias = p.bias;
  QRT_ASSIGN_OR_RETURN(ElementType sx, storage_of(node, ix));
  QRT_ASSIGN_OR_RETURN(ElementType sw, storage_of(node, iw));
  QRT_ASSIGN_OR_RETURN(const Type tx, input_type(node, ix));
  QRT_ASSIGN_OR_RETURN(const Type tw, input_type(node, iw));
  QRT_ASSIGN_OR_RETURN(auto attrs, conv_attrs(node, a, tx, tw));
  QRT_ASSIGN_OR_RETURN(ElementType qx, make_quant_type(node, sx, tx, x_scale, x_zp, 1));
  QRT_ASSIGN_OR_RETURN(ElementType qw, make_quant_type(node, sw, tw, w_scale, w_zp, 0));
  QRT_ASSIGN_OR_RETURN(int vx, quantized_value(node, ix, qx));
  QRT_ASSIGN_OR_RETURN(int vw, quantized_value(node, iw, qw));
  Op probe;
  for (auto& [k, v] : attrs) probe.set_attr(k, v);
  QRT_ASSIGN_OR_RETURN(Window2d win, conv2d_window(probe, tw.dims));
  const std::vector<int64_t> dims = window_output_dims(tx.dims, win, tw.dims[0]);
  std::vector<int> operands = {vx, vw};
  ElementType qy;
  const QuantStorage s32 = QuantStorage::full_range(32, true);
  if (integer_only) {
    qy = ElementType::make_uniform(s32, FloatKind::kF32, 1.0, 0);
  } else {
    const ElementType sy = y_zp ? y_zp->type.element : ElementType::make_int(8, Signedness::kUnsigned);
    QRT_ASSIGN_OR_RETURN(qy, make_quant_type(node, sy, Type::tensor(dims, sy), y_scale, y_zp, 1));
    if (const DenseElements* b = bias) {
      // The int32 bias has scale x_scale * w_scale[o] and zero point 0 by definition.
      std::vector<double> scales;
      for (size_t o = 0; o < size_t(tw.dims[0]); ++o) scales.push_back(accumulator_scale(qx, qw, o));
      const ElementType qb = ElementType::make_per_axis(s32, FloatKind::kF32, 0, scales,
                                                        std::vector<int64_t>(scales.size(), 0));
      const int bc = emit(OpKind::kConstant, {}, Type::tensor(b->type.dims, qb), {{"value", Attribute::make_dense(*b)}});
      operands.push_back(bc);
    }
  }
  bind(node, 0, to_storage_int(emit(OpKind::kConv2d, operands, Type::tensor(dims, qy), attrs)));
  return Status::ok();
}

// ConvInteger(x, w, x_zp, w_zp) with x_zp computed at run time: over the taps inside the
// input (padding contributes nothing: it holds the zero point), Σ (x - zx)(w - zw) =
// Σ x·(w - zw) - zx·S[p][o], where S[p][o] sums (w - zw) over the taps of output position p
// that fall inside the input. The first is an integer convolution with a zero-point-free x,
// the second zx times a constant of the output's spatial shape. Exact in int32.
Status Importer::conv_integer_runtime_zp(const onnx::NodeProto& node, const Attrs& a) {
  QRT_ASSIGN_OR_RETURN(int zx, value(node, 2));
  const Type tzx = type(zx);
  if (tzx.num_elements() != 1) return error(node, "a per-channel zero point of x (" + tzx.to_string() + ") is not supported");
  const DenseElements* w = constant(node, 1);
  if (!w) return error(node, "the filter must be a constant when x's zero point is computed at run time");
  QRT_ASSIGN_OR_RETURN(const DenseElements* zw, param(node, 3, "zero point of the filter"));
  QRT_ASSIGN_OR_RETURN(ElementType sx, storage_of(node, 0));
  QRT_ASSIGN_OR_RETURN(const Type tx, input_type(node, 0));
  const Type tw = w->type;
  if (!(tzx.element == sx)) return error(node, "x's zero point " + tzx.to_string() + " must have x's element type");
  if (tx.rank() != 4 || tw.rank() != 4 || !tx.has_static_shape()) {
    return error(node, "a run-time zero point needs a 4-D input of static shape");
  }
  QRT_ASSIGN_OR_RETURN(auto attrs, conv_attrs(node, a, tx, tw));
  QRT_ASSIGN_OR_RETURN(ElementType qx, make_quant_type(node, sx, tx, nullptr, nullptr, 1));
  QRT_ASSIGN_OR_RETURN(ElementType qw, make_quant_type(node, tw.element, tw, nullptr, zw, 0));
  QRT_ASSIGN_OR_RETURN(int vx, quantized_value(node, 0, qx));
  QRT_ASSIGN_OR_RETURN(int vw, quantized_value(node, 1, qw));
  Op probe;
  for (auto& [k, v] : attrs) probe.set_attr(k, v);
  QRT_ASSIGN_OR_RETURN(Window2d win, conv2d_window(probe, tw.dims));
  const std::vector<int64_t> dims = window_output_dims(tx.dims, win, tw.dims[0]);
  const ElementType acc_type = ElementType::make_uniform(QuantStorage::full_range(32, true), FloatKind::kF32, 1.0, 0);
  const int acc = to_storage_int(emit(OpKind::kConv2d, {vx, vw}, Type::tensor(dims, acc_type), attrs));
  // S over [1, O, OH, OW] (the importer's NCHW layout).
  const int64_t out_c = tw.dims[0], ig = tw.dims[1], kh = tw.dims[2], kw = tw.dims[3];
  const int64_t ih = tx.dims[2], iw = tx.dims[3], oh = dims[2], ow = dims[3];
  const ElementType i32 = ElementType::make_int(32);
  DenseElements sums;
  sums.type = Type::tensor({1, out_c, oh, ow}, i32);
  sums.bytes.assign(size_t(out_c * oh * ow) * 4, 0);
  for (int64_t o = 0; o < out_c; ++o) {
    const int64_t zero = qw.zero_points[qw.zero_points.size() == 1 ? 0 : size_t(o)];
    for (int64_t py = 0; py < oh; ++py) {
      for (int64_t px = 0; px < ow; ++px) {
        int64_t s = 0;
        for (int64_t ci = 0; ci < ig; ++ci) {
          for (int64_t ky = 0; ky < kh; ++ky) {
            const int64_t y = py * win.sh - win.pad_top + ky * win.dh;
            if (y < 0 || y >= ih) continue;
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t x = px * win.sw - win.pad_left + kx * win.dw;
              if (x < 0 || x >= iw) continue;
              s += w->int_at(size_t(((o * ig + ci) * kh + ky) * kw + kx)) - zero;
            }
          }
        }
        const int32_t s32 = int32_t(s);
        std::memcpy(sums.bytes.data() + size_t((o * oh + py) * ow + px) * 4, &s32, 4);
      }
    }
  }
  bind_zero_point_correction(node, acc, dims, zx, sums);
  return Status::ok();
}

}  // namespace qrt::importers::onnx_detail
