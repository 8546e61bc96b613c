// qrt — ONNX importer: 1-D and 3-D convolutions and pooling, built on qrt's 2-D ops.
//
// 1-D (inputs [N, C, L]): the axis becomes W of a [N, C, 1, L] image, and each window
// attribute gains a leading 1 (kernel, strides, dilations) or 0 (pads, output padding). The
// 2-D node then goes through the 2-D importer (its checks, quantization and errors), and
// computes exactly what the 1-D op defines, on the same kernels.
//
// 3-D convolution (inputs [N, C, D, H, W]): the depth taps become channels. Output depth o
// reads input slices o·sd + t·dd (t < kd, after depth padding); gathered, the kd slices of one
// output depth stack as the channels of one image in a batch of N·Do, ordered [group, tap,
// channel], and the filter [O, C/g, kd, kh, kw] becomes [O, kd·C/g, kh, kw]. One 2-D
// convolution then sums exactly the 3-D products (integer kernels bit for bit), at the cost of
// kd/sd copies of the input.
//
// 3-D pooling: a box window is separable. The 2-D pool runs over (H, W) on [N, C·D, H, W],
// then the depth windows are gathered and reduced: max, or sum divided by the window's count
// of depth slices (all kd with count_include_pad, else those inside the input). Average
// pooling so rounds twice (float only; ONNX's AveragePool takes floats).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "importers/onnx_importer_impl.h"
#include "ir/nn_params.h"

namespace qrt::importers::onnx_detail {

namespace {

bool is_conv(const std::string& op) { return op == "Conv" || op == "ConvInteger" || op == "QLinearConv"; }
bool is_pool(const std::string& op) { return op == "MaxPool" || op == "AveragePool"; }
bool is_global_pool(const std::string& op) { return op == "GlobalMaxPool" || op == "GlobalAveragePool"; }

/// The filter's input index of a convolution node (-1 for pools).
int weight_input(const std::string& op) {
  if (op == "QLinearConv") return 3;
  return op == "Conv" || op == "ConvInteger" || op == "ConvTranspose" ? 1 : -1;
}

/// True when the product of sizes (each in [0, 2^48], or -1 dynamic, which counts as 1) stays
/// within a dimension's bound.
bool product_fits(std::initializer_list<int64_t> sizes) {
  __int128 p = 1;
  for (int64_t v : sizes) {
    p *= v < 0 ? 1 : v;
    if (p > kMaxTensorElements) return false;
  }
  return true;
}

std::vector<int64_t> with(std::vector<int64_t> v, size_t at, int64_t x) {
  v.insert(v.begin() + std::ptrdiff_t(at), x);
  return v;
}

/// `src`'s elements under `dims`, element i taken from src element src_of(i) (whole bytes per
/// element only: false for sub-byte types).
bool rearranged(const DenseElements& src, const std::vector<int64_t>& dims, const std::function<int64_t(int64_t)>& src_of,
                DenseElements& out) {
  const Type& t = src.type;
  const int64_t n = t.num_elements();
  const size_t bytes = dense_byte_size(t);
  if (n <= 0 || bytes % size_t(n) != 0) return false;
  const size_t es = bytes / size_t(n);
  out = DenseElements();
  out.type = Type::tensor(dims, t.element);
  out.bytes.resize(bytes);
  for (int64_t i = 0; i < n; ++i) std::memcpy(out.bytes.data() + size_t(i) * es, src.data() + size_t(src_of(i)) * es, es);
  return true;
}

}  // namespace

Result<int> Importer::import_part(const onnx::NodeProto& part) {
  QRT_RETURN_IF_ERROR(import_node(part));
  onnx::NodeProto reader;
  reader.add_input(part.output(0));
  return value(reader, 0);
}

int Importer::through_dcast(int v, const std::function<int(int)>& f) {
  const int p = g_.values[size_t(v)].producer;
  if (p >= 0 && g_.ops[size_t(p)].kind == OpKind::kDCast) {
    const int xq = g_.ops[size_t(p)].operands[0];
    if (type(xq).element.kind == ElementKind::kUniform) {
      const int moved = f(xq);
      return emit(OpKind::kDCast, {moved}, Type::tensor(type(moved).dims, type(v).element));
    }
  }
  return f(v);
}

Result<OnnxValue> Importer::filter_2d(const onnx::NodeProto& node, int input, const std::vector<int64_t>& dims,
                                      const std::function<int64_t(int64_t)>& src_of, const std::function<int(int)>& ops) {
  // An initializer stays a constant (the 2-D importer may need its values); a graph constant,
  // or the dcast of one (QDQ weights), is rearranged into a new constant, so that the
  // convolution reads a constant (and fold-qdq sees dcast(constant)).
  OnnxValue out;
  if (const DenseElements* c = constant(node, input); c && rearranged(*c, dims, src_of, out.dense)) {
    out.is_const = true;
    return out;
  }
  QRT_ASSIGN_OR_RETURN(int w, value(node, input));
  auto constant_of = [&](int v) -> const DenseElements* {
    const int p = g_.values[size_t(v)].producer;
    if (p < 0 || g_.ops[size_t(p)].kind != OpKind::kConstant) return nullptr;
    const Attribute* a = g_.ops[size_t(p)].attr("value");
    return a && a->kind == Attribute::Kind::kDense ? &a->dense : nullptr;
  };
  const int p = g_.values[size_t(w)].producer;
  const bool dq = p >= 0 && g_.ops[size_t(p)].kind == OpKind::kDCast;
  const int src = dq ? g_.ops[size_t(p)].operands[0] : w;
  DenseElements d;
  if (const DenseElements* c = constant_of(src); c && rearranged(*c, dims, src_of, d)) {
    const int cv = emit(OpKind::kConstant, {}, Type::tensor(dims, type(src).element), {{"value", Attribute::make_dense(d)}});
    out.value = dq ? emit(OpKind::kDCast, {cv}, Type::tensor(dims, type(w).element)) : cv;
    return out;
  }
  out.value = ops(w);
  return out;
}

Result<bool> Importer::spatial_op(const onnx::NodeProto& node, const Attrs& a) {
  const std::string& op = node.op_type();
  if (!is_conv(op) && !is_pool(op) && !is_global_pool(op) && op != "ConvTranspose") return false;
  if (node.input_size() < 1 || node.input(0).empty()) return false;  // the 2-D importer says what is missing
  QRT_ASSIGN_OR_RETURN(const Type tx, input_type(node, 0));
  if (tx.rank() != 3 && tx.rank() != 5) return false;
  if (node.output_size() > 1 && !node.output(1).empty()) return error(node, "the Indices output is not supported");
  if (tx.rank() == 3) {
    QRT_RETURN_IF_ERROR(lift_1d(node, a, weight_input(op)));
    return true;
  }
  if (op == "ConvTranspose") {
    QRT_RETURN_IF_ERROR(conv_transpose_3d(node, a));
    return true;
  }
  if (is_global_pool(op)) {
    // Over all of D·H·W: the same window as a 2-D global pool of [N, C, D·H, W].
    QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
    const std::vector<int64_t>& d = tx.dims;
    if (d[2] < 0 || d[3] < 0 || d[4] < 0) return error(node, "needs static spatial sizes");
    if (!product_fits({d[2], d[3]})) return error(node, "D x H exceeds qrt's limit of 2^48", ErrorCode::kVerify);
    onnx::NodeProto part = part_of(node);
    const std::string xname = node.output(0) + "::x2d";
    values_[xname] = OnnxValue{emit(OpKind::kReshape, {x}, Type::tensor({d[0], d[1], d[2] * d[3], d[4]}, tx.element)), false, {}};
    part.set_input(0, xname);
    QRT_ASSIGN_OR_RETURN(int y, import_part(part));
    bind(node, 0, emit(OpKind::kReshape, {y}, Type::tensor({d[0], d[1], 1, 1, 1}, type(y).element)));
    return true;
  }
  QRT_RETURN_IF_ERROR(is_conv(op) ? conv_3d(node, a) : pool_3d(node, a));
  return true;
}

Status Importer::lift_1d(const onnx::NodeProto& node, const Attrs& a, int weight) {
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  const Type tx = type(x);
  // The reshapes to and from [N, C, 1, L] infer at most one dynamic dimension.
  if (std::count(tx.dims.begin(), tx.dims.end(), int64_t(-1)) > 1) {
    return error(node, "a 1-D op runs as a 2-D one and needs all but one of its input's sizes static, got " +
                           tx.to_string() + " (give the input a static shape)");
  }
  onnx::NodeProto part = part_of(node);
  const std::string base = node.output(0) + "::";
  const int x2 = through_dcast(x, [&](int v) {
    return emit(OpKind::kReshape, {v}, Type::tensor(with(type(v).dims, 2, 1), type(v).element));
  });
  values_[base + "x2d"] = OnnxValue{x2, false, {}};
  part.set_input(0, base + "x2d");
  if (weight >= 0 && weight < node.input_size() && !node.input(weight).empty()) {
    QRT_ASSIGN_OR_RETURN(const Type tw, input_type(node, weight));
    if (tw.rank() != 3) return error(node, "a 1-D filter must be 3-D, got " + tw.to_string(), ErrorCode::kVerify);
    const std::vector<int64_t> dims = with(tw.dims, 2, 1);
    QRT_ASSIGN_OR_RETURN(OnnxValue w2, filter_2d(node, weight, dims, [](int64_t i) { return i; }, [&](int w) {
                           return emit(OpKind::kReshape, {w}, Type::tensor(dims, type(w).element));
                         }));
    values_[base + "w2d"] = std::move(w2);
    part.set_input(weight, base + "w2d");
  }
  for (const auto& [name, attr] : a) {
    const bool window = name == "kernel_shape" || name == "strides" || name == "dilations" || name == "pads" ||
                        name == "output_padding" || name == "output_shape";
    if (!window) {
      *part.add_attribute() = *attr;
      continue;
    }
    QRT_ASSIGN_OR_RETURN(auto v, attr_ints(node, a, name.c_str(), {}));
    const size_t expected = name == "pads" ? 2 : 1;
    if (v.size() != expected) {
      return error(node, name + " must describe 1 spatial dimension, got " + Attribute::make_int_array(v).to_string(),
                   ErrorCode::kParse);
    }
    if (name == "pads") v = {0, v[0], 0, v[1]};
    else v = {name == "kernel_shape" || name == "strides" || name == "dilations" || name == "output_shape" ? 1 : 0, v[0]};
    set_ints(part, name, v);
  }
  QRT_ASSIGN_OR_RETURN(int y, import_part(part));
  const Type ty = type(y);
  if (ty.rank() != 4) return error(node, "the 2-D form gave " + ty.to_string() + " (an importer bug)", ErrorCode::kGeneric);
  bind(node, 0, emit(OpKind::kReshape, {y}, Type::tensor({ty.dims[0], ty.dims[1], ty.dims[3]}, ty.element)));
  return Status::ok();
}

Status Importer::check_depth_input(const onnx::NodeProto& node, const Type& t) {
  // pad_depth moves integers as a quantized type of scale 1, whose storage holds 8 to 32 bits.
  const ElementType& e = t.element;
  if (e.is_integer() && e.int_width != 8 && e.int_width != 16 && e.int_width != 32) {
    return error(node, "3-D " + node.op_type() + " over " + t.to_string() +
                           " is not supported: integer inputs must have 8, 16 or 32 bits", ErrorCode::kUnsupported);
  }
  return Status::ok();
}

int Importer::pad_depth(int x, int64_t before, int64_t after, double fill) {
  if (before == 0 && after == 0) return x;
  const Type t = type(x);
  std::vector<int64_t> pads(2 * t.rank(), 0);
  pads[2] = before;
  pads[2 + t.rank()] = after;
  std::vector<int64_t> dims = t.dims;
  dims[2] += before + after;
  const std::vector<std::pair<std::string, Attribute>> attrs = {{"pads", Attribute::make_int_array(pads)},
                                                                {"value", Attribute::make_float(fill)}};
  if (!t.element.is_integer()) return emit(OpKind::kPad, {x}, Type::tensor(dims, t.element), attrs);
  // Integers move as a quantized type of scale 1: the fill is then the stored value itself.
  const ElementType& e = t.element;
  const ElementType q = ElementType::make_uniform(QuantStorage::full_range(e.int_width, e.int_sign != Signedness::kUnsigned),
                                                  FloatKind::kF32, 1.0, 0);
  const int stored = emit(OpKind::kSCast, {x}, Type::tensor(t.dims, q));
  const int padded = emit(OpKind::kPad, {stored}, Type::tensor(dims, q), attrs);
  return emit(OpKind::kSCast, {padded}, Type::tensor(dims, e));
}

int Importer::gather_depth(int x, const std::vector<int64_t>& index, int64_t out, int64_t k) {
  const Type t = type(x);
  DenseElements idx = DenseElements::zeros(Type::tensor({out, k}, ElementType::make_int(64)));
  for (size_t i = 0; i < index.size(); ++i) idx.set_int(i, index[i]);
  const int vi = emit(OpKind::kConstant, {}, idx.type, {{"value", Attribute::make_dense(idx)}});
  std::vector<int64_t> dims = {t.dims[0], t.dims[1], out, k};
  dims.insert(dims.end(), t.dims.begin() + 3, t.dims.end());
  return emit(OpKind::kGather, {x, vi}, Type::tensor(dims, t.element), {{"axis", Attribute::make_int(2)}});
}

int Importer::gather_depth_windows(int x, int64_t out, int64_t k, int64_t stride, int64_t dilation) {
  std::vector<int64_t> index;
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t j = 0; j < k; ++j) index.push_back(o * stride + j * dilation);
  }
  return gather_depth(x, index, out, k);
}

int Importer::stack_depth_taps(int gathered, int64_t group) {
  const Type t = type(gathered);
  const ElementType& e = t.element;
  const int64_t n = t.dims[0], c = t.dims[1], out_d = t.dims[2], kd = t.dims[3], h = t.dims[4], w = t.dims[5];
  const int64_t cg = c / group;
  int stacked;
  if (group == 1) {
    stacked = emit(OpKind::kTranspose, {gathered}, Type::tensor({n, out_d, kd, c, h, w}, e),
                   {{"perm", Attribute::make_int_array({0, 2, 3, 1, 4, 5})}});
  } else {
    const int g7 = emit(OpKind::kReshape, {gathered}, Type::tensor({n, group, cg, out_d, kd, h, w}, e));
    stacked = emit(OpKind::kTranspose, {g7}, Type::tensor({n, out_d, group, kd, cg, h, w}, e),
                   {{"perm", Attribute::make_int_array({0, 3, 1, 4, 2, 5, 6})}});
  }
  return emit(OpKind::kReshape, {stacked}, Type::tensor({n < 0 ? -1 : n * out_d, kd * c, h, w}, e));
}

Status Importer::check_depth_stacking(const onnx::NodeProto& node, int64_t n, int64_t c, int64_t out_d, int64_t kd) {
  if (kd < 1) return error(node, "the filter has no depth taps", ErrorCode::kVerify);
  if (out_d > kMaxDepthTaps / kd || !product_fits({n, out_d}) || !product_fits({kd, c})) {
    return error(node, "stacking " + std::to_string(out_d) + " output depths of " + std::to_string(kd) + " taps over " +
                           std::to_string(c) + " channels exceeds qrt's limits (" + std::to_string(kMaxDepthTaps) +
                           " taps in all, 2^48 per dimension)", ErrorCode::kVerify);
  }
  return Status::ok();
}

int Importer::unstack_depth(int y, int64_t n, int64_t out_d) {
  const Type ty = type(y);
  const ElementType& e = ty.element;
  const int64_t o = ty.dims[1], ho = ty.dims[2], wo = ty.dims[3];
  const int y5 = emit(OpKind::kReshape, {y}, Type::tensor({n, out_d, o, ho, wo}, e));
  return emit(OpKind::kTranspose, {y5}, Type::tensor({n, o, out_d, ho, wo}, e), {{"perm", Attribute::make_int_array({0, 2, 1, 3, 4})}});
}

namespace {

/// Output size of one axis, or -1 when the window does not fit (128-bit: d·(k - 1) may pass
/// 2^63 for sizes and dilations that are each within qrt's limits).
int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad_begin, int64_t pad_end) {
  const __int128 span = __int128(in) + pad_begin + pad_end - __int128(d) * (k - 1) - 1;
  return span < 0 ? -1 : int64_t(span / s + 1);
}

}  // namespace

Status Importer::conv_3d(const onnx::NodeProto& node, const Attrs& a) {
  const std::string& op = node.op_type();
  const int wi = weight_input(op);
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  QRT_ASSIGN_OR_RETURN(const Type tw, input_type(node, wi));
  const Type tx = type(x);
  if (tw.rank() != 5 || !tw.has_static_shape()) {
    return error(node, "a 3-D filter must be a 5-D tensor of static shape, got " + tw.to_string(), ErrorCode::kVerify);
  }
  for (size_t i = 1; i < 5; ++i) {
    if (tx.dims[i] < 0) return error(node, "3-D convolution needs static C, D, H and W, got " + tx.to_string());
  }
  QRT_RETURN_IF_ERROR(check_depth_input(node, tx));
  const int64_t out_c = tw.dims[0], cg = tw.dims[1], kd = tw.dims[2], kh = tw.dims[3], kw = tw.dims[4];
  QRT_ASSIGN_OR_RETURN(int64_t group, attr_int(node, a, "group", 1));
  if (group < 1 || tx.dims[1] % group != 0 || tx.dims[1] / group != cg || out_c % group != 0) {
    return error(node, "group " + std::to_string(group) + " does not fit input channels " + std::to_string(tx.dims[1]) +
                           " and filter " + tw.to_string(), ErrorCode::kVerify);
  }
  QRT_ASSIGN_OR_RETURN(auto kernel, attr_ints(node, a, "kernel_shape", {kd, kh, kw}));
  QRT_ASSIGN_OR_RETURN(auto strides, attr_ints(node, a, "strides", {1, 1, 1}));
  QRT_ASSIGN_OR_RETURN(auto dilations, attr_ints(node, a, "dilations", {1, 1, 1}));
  QRT_ASSIGN_OR_RETURN(auto pads, attr_ints(node, a, "pads", {0, 0, 0, 0, 0, 0}));
  QRT_ASSIGN_OR_RETURN(std::string auto_pad, attr_string(node, a, "auto_pad", "NOTSET"));
  if (kernel != std::vector<int64_t>{kd, kh, kw}) return error(node, "kernel_shape disagrees with the filter", ErrorCode::kVerify);
  if (strides.size() != 3 || dilations.size() != 3 || pads.size() != 6) {
    return error(node, "strides, dilations and pads must describe 3 spatial dimensions", ErrorCode::kParse);
  }
  for (size_t i = 0; i < 3; ++i) {
    if (strides[i] < 1 || strides[i] > kMaxWindowParam || dilations[i] < 1 || dilations[i] > kMaxWindowParam ||
        pads[i] < 0 || pads[i] > kMaxWindowParam || pads[i + 3] < 0 || pads[i + 3] > kMaxWindowParam) {
      return error(node, "strides and dilations must be in [1, " + std::to_string(kMaxWindowParam) + "] and pads in [0, " +
                             std::to_string(kMaxWindowParam) + "]", ErrorCode::kVerify);
    }
  }
  auto resolved = resolve_pads(auto_pad, pads, {tx.dims[2], tx.dims[3], tx.dims[4]}, kernel, strides, dilations);
  if (!resolved.is_ok()) return error(node, resolved.status().message());
  pads = *resolved;
  const int64_t out_d = window_out(tx.dims[2], kd, strides[0], dilations[0], pads[0], pads[3]);
  if (out_d < 1) return error(node, "the depth window (" + std::to_string(kd) + " taps) is larger than the padded input", ErrorCode::kVerify);
  QRT_RETURN_IF_ERROR(check_depth_stacking(node, tx.dims[0], tx.dims[1], out_d, kd));

  // Depth padding holds the input's real zero: 0, or x's zero point for the integer forms.
  double fill = 0.0;
  const int zp_input = op == "Conv" ? -1 : 2;
  if (zp_input >= 0 && zp_input < node.input_size() && !node.input(zp_input).empty() && (pads[0] != 0 || pads[3] != 0)) {
    const DenseElements* zp = constant(node, zp_input);
    if (!zp || zp->type.num_elements() != 1) {
      return error(node, "depth padding needs x's zero point as a constant scalar");
    }
    fill = double(zp->int_at(0));
  }
  // On stored values when x is a dcast (QDQ): padding with real 0 holds the zero point, and
  // fold-qdq then sees dcast -> conv.
  const int x2 = through_dcast(x, [&](int v) {
    const int xp = pad_depth(v, pads[0], pads[3], fill);
    return stack_depth_taps(gather_depth_windows(xp, out_d, kd, strides[0], dilations[0]), group);
  });
  const std::string base = node.output(0) + "::";
  values_[base + "x2d"] = OnnxValue{x2, false, {}};

  // The filter [O, C/g, kd, kh, kw] as [O, kd·C/g, kh, kw] (taps before channels).
  const std::vector<int64_t> w2_dims = {out_c, kd * cg, kh, kw};
  const int64_t plane = kh * kw;
  QRT_ASSIGN_OR_RETURN(
      OnnxValue w2, filter_2d(node, wi, w2_dims,
                              [&](int64_t i) {
                                const int64_t e = i % plane, r = i / plane, ci = r % cg, t = r / cg % kd, o = r / cg / kd;
                                return ((o * cg + ci) * kd + t) * plane + e;
                              },
                              [&](int w) {
                                const ElementType we = type(w).element;
                                const int t5 = emit(OpKind::kTranspose, {w}, Type::tensor({out_c, kd, cg, kh, kw}, we),
                                                    {{"perm", Attribute::make_int_array({0, 2, 1, 3, 4})}});
                                return emit(OpKind::kReshape, {t5}, Type::tensor(w2_dims, we));
                              }));
  values_[base + "w2d"] = std::move(w2);

  onnx::NodeProto part = part_of(node);
  part.set_input(0, base + "x2d");
  part.set_input(wi, base + "w2d");
  set_ints(part, "strides", {strides[1], strides[2]});
  set_ints(part, "dilations", {dilations[1], dilations[2]});
  set_ints(part, "pads", {pads[1], pads[2], pads[4], pads[5]});
  auto* g = part.add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(group);
  QRT_ASSIGN_OR_RETURN(int y, import_part(part));  // [N·Do, O, Ho, Wo]
  bind(node, 0, unstack_depth(y, tx.dims[0], out_d));
  return Status::ok();
}

Status Importer::pool_3d(const onnx::NodeProto& node, const Attrs& a) {
  const bool is_max = node.op_type() == "MaxPool";
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  const Type tx = type(x);
  for (size_t i = 1; i < 5; ++i) {
    if (tx.dims[i] < 0) return error(node, "3-D pooling needs static C, D, H and W, got " + tx.to_string());
  }
  QRT_RETURN_IF_ERROR(check_depth_input(node, tx));
  QRT_ASSIGN_OR_RETURN(auto kernel, attr_ints(node, a, "kernel_shape", {}));
  QRT_ASSIGN_OR_RETURN(auto strides, attr_ints(node, a, "strides", {1, 1, 1}));
  QRT_ASSIGN_OR_RETURN(auto pads, attr_ints(node, a, "pads", {0, 0, 0, 0, 0, 0}));
  QRT_ASSIGN_OR_RETURN(auto dilations, attr_ints(node, a, "dilations", {1, 1, 1}));
  QRT_ASSIGN_OR_RETURN(int64_t ceil_mode, attr_int(node, a, "ceil_mode", 0));
  QRT_ASSIGN_OR_RETURN(int64_t storage_order, attr_int(node, a, "storage_order", 0));
  QRT_ASSIGN_OR_RETURN(int64_t include_pad, attr_int(node, a, "count_include_pad", 0));
  QRT_ASSIGN_OR_RETURN(std::string auto_pad, attr_string(node, a, "auto_pad", "NOTSET"));
  if (kernel.size() != 3 || strides.size() != 3 || pads.size() != 6) {
    return error(node, "kernel_shape, strides and pads must describe 3 spatial dimensions", ErrorCode::kParse);
  }
  if (storage_order != 0) return error(node, "storage_order = 1 is not supported");
  if (dilations != std::vector<int64_t>{1, 1, 1}) return error(node, "dilated pooling is not supported");
  for (size_t i = 0; i < 3; ++i) {
    if (kernel[i] < 1 || kernel[i] > kMaxWindowParam || strides[i] < 1 || strides[i] > kMaxWindowParam || pads[i] < 0 ||
        pads[i] > kMaxWindowParam || pads[i + 3] < 0 || pads[i + 3] > kMaxWindowParam) {
      return error(node, "kernel_shape and strides must be in [1, " + std::to_string(kMaxWindowParam) + "] and pads in [0, " +
                             std::to_string(kMaxWindowParam) + "]", ErrorCode::kVerify);
    }
  }
  auto resolved = resolve_pads(auto_pad, pads, {tx.dims[2], tx.dims[3], tx.dims[4]}, kernel, strides, {1, 1, 1});
  if (!resolved.is_ok()) return error(node, resolved.status().message());
  pads = *resolved;
  const int64_t explicit_end = pads[3];  // count_include_pad counts these, not ceil_mode's extra
  const OpKind kind = is_max ? OpKind::kMaxPool2d : OpKind::kAvgPool2d;
  if (ceil_mode != 0) QRT_RETURN_IF_ERROR(ceil_mode_pads(node, kind, include_pad != 0, tx, kernel, strides, pads));
  const int64_t n = tx.dims[0], c = tx.dims[1], d = tx.dims[2], kd = kernel[0], sd = strides[0];
  const int64_t out_d = window_out(d, kd, sd, 1, pads[0], pads[3]);
  if (out_d < 1) return error(node, "the depth window (" + std::to_string(kd) + ") is larger than the padded input", ErrorCode::kVerify);
  if (!product_fits({c, d})) return error(node, "C x D exceeds qrt's limit of 2^48", ErrorCode::kVerify);

  // The 2-D pool over (H, W) of every depth slice.
  const std::string base = node.output(0) + "::";
  values_[base + "x2d"] =
      OnnxValue{emit(OpKind::kReshape, {x}, Type::tensor({n, c * d, tx.dims[3], tx.dims[4]}, tx.element)), false, {}};
  onnx::NodeProto part = part_of(node);
  part.set_input(0, base + "x2d");
  set_ints(part, "kernel_shape", {kernel[1], kernel[2]});
  set_ints(part, "strides", {strides[1], strides[2]});
  set_ints(part, "pads", {pads[1], pads[2], pads[4], pads[5]});
  if (include_pad != 0) {
    auto* attr = part.add_attribute();
    attr->set_name("count_include_pad");
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(include_pad);
  }
  QRT_ASSIGN_OR_RETURN(int p, import_part(part));  // [N, C·D, Ho, Wo]
  const Type tp = type(p);
  const ElementType& e = tp.element;
  const int64_t ho = tp.dims[2], wo = tp.dims[3];
  const int p5 = emit(OpKind::kReshape, {p}, Type::tensor({n, c, d, ho, wo}, e));
  if (kd == 1 && sd == 1 && pads[0] == 0 && pads[3] == 0) {
    bind(node, 0, p5);
    return Status::ok();
  }
  if (out_d > kMaxDepthTaps / kd) {
    return error(node, "the depth windows (" + std::to_string(out_d) + " x " + std::to_string(kd) + " taps) exceed qrt's limit of " +
                           std::to_string(kMaxDepthTaps), ErrorCode::kVerify);
  }
  // The depth windows: padding never wins a max (-inf, or the storage's least value) and adds
  // nothing to a sum.
  double fill = 0.0;
  if (is_max) {
    fill = e.is_integer() ? (e.int_sign == Signedness::kUnsigned ? 0.0 : -std::ldexp(1.0, int(e.int_width) - 1))
                          : -std::numeric_limits<double>::infinity();
  }
  const int windows = gather_depth_windows(pad_depth(p5, pads[0], pads[3], fill), out_d, kd, sd, 1);
  const Type out = Type::tensor({n, c, out_d, ho, wo}, e);
  const std::vector<std::pair<std::string, Attribute>> over_taps = {{"axes", Attribute::make_int_array({3})},
                                                                    {"keepdims", Attribute::make_int(0)}};
  if (is_max) {
    bind(node, 0, emit(OpKind::kReduceMax, {windows}, out, over_taps));
    return Status::ok();
  }
  if (!e.is_float()) return error(node, "average pooling of " + e.to_string() + " tensors is not supported");
  const int sum = emit(OpKind::kReduceSum, {windows}, out, over_taps);
  // The count of each output depth's window: its taps inside the input, or inside the input
  // and the explicit pads (count_include_pad).
  DenseElements counts = DenseElements::zeros(Type::tensor({1, 1, out_d, 1, 1}, ElementType::make_float(FloatKind::kF64)));
  for (int64_t o = 0; o < out_d; ++o) {
    int64_t count = 0;
    for (int64_t t = 0; t < kd; ++t) {
      const int64_t z = o * sd + t - pads[0];
      count += include_pad != 0 ? (z >= -pads[0] && z < d + explicit_end) : (z >= 0 && z < d);
    }
    const double v = double(count);
    std::memcpy(counts.bytes.data() + size_t(o) * 8, &v, 8);
  }
  const int cv = emit(OpKind::kConstant, {}, counts.type, {{"value", Attribute::make_dense(counts)}});
  const int cast = e.float_kind == FloatKind::kF64 ? cv : emit(OpKind::kCast, {cv}, Type::tensor(counts.type.dims, e));
  bind(node, 0, emit(OpKind::kDiv, {sum, cast}, out));
  return Status::ok();
}

}  // namespace qrt::importers::onnx_detail
