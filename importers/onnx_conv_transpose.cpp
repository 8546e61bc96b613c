// qrt — ONNX importer: ConvTranspose as qrt.conv_transpose2d.
//
// ONNX holds activations in NCHW and the filter as [C_in, C_out / group, kH, kW]; the qrt op
// is NHWC with an OHWI filter [C_out, kH, kW, C_in / group]. The importer transposes the
// input and the result, and rearranges the filter with reshapes and a transpose (so a
// DequantizeLinear'd or computed filter works as well as a constant one). Padding follows the
// operator's definition: explicit `pads`, or `output_shape` / `auto_pad` SAME_* resolved into
// pads, with rows past the natural output size becoming qrt's `output_padding`.
#include <cstdlib>
#include <string>
#include <vector>

#include "importers/onnx_importer_impl.h"
#include "ir/nn_params.h"
#include "ir/ops.h"

namespace qrt::importers::onnx_detail {

namespace {

using Wide = __int128;

// Python's floor division, which ONNX's definition of the pads uses.
int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

}  // namespace

Status Importer::conv_transpose(const onnx::NodeProto& node, const Attrs& a) {
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  QRT_ASSIGN_OR_RETURN(int w, value(node, 1));
  const Type tx = type(x), tw = type(w);  // copies: emit() may grow g_.values
  if (tx.rank() != 4 || tw.rank() != 4) return error(node, "only 2-D transposed convolutions (4-D tensors) are supported");
  for (int64_t d : tw.dims) {
    if (d < 0) return error(node, "the filter needs a static shape");
  }
  QRT_ASSIGN_OR_RETURN(auto strides, attr_ints(node, a, "strides", {1, 1}));
  QRT_ASSIGN_OR_RETURN(auto dilations, attr_ints(node, a, "dilations", {1, 1}));
  QRT_ASSIGN_OR_RETURN(auto pads, attr_ints(node, a, "pads", {0, 0, 0, 0}));
  QRT_ASSIGN_OR_RETURN(auto out_pad, attr_ints(node, a, "output_padding", {0, 0}));
  QRT_ASSIGN_OR_RETURN(auto out_shape, attr_ints(node, a, "output_shape", {}));
  QRT_ASSIGN_OR_RETURN(auto kernel, attr_ints(node, a, "kernel_shape", {tw.dims[2], tw.dims[3]}));
  QRT_ASSIGN_OR_RETURN(int64_t group, attr_int(node, a, "group", 1));
  QRT_ASSIGN_OR_RETURN(std::string auto_pad, attr_string(node, a, "auto_pad", "NOTSET"));
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 || out_pad.size() != 2 || kernel.size() != 2) {
    return error(node, "strides, dilations, pads, output_padding and kernel_shape must describe 2 spatial dimensions",
                 ErrorCode::kParse);
  }
  if (kernel[0] != tw.dims[2] || kernel[1] != tw.dims[3]) return error(node, "kernel_shape disagrees with the filter");
  if (group < 1 || tw.dims[0] % group != 0) return error(node, "group " + std::to_string(group) + " does not divide the filter's input channels");
  // Checked before the arithmetic below (which computes in 128 bits where sizes multiply).
  auto check = [&](const char* what, const std::vector<int64_t>& v, int64_t lo) -> Status {
    for (int64_t x : v) {
      if (x < lo || x > kMaxWindowParam) {
        return error(node, std::string(what) + " must be in [" + std::to_string(lo) + ", " +
                               std::to_string(kMaxWindowParam) + "], got " + Attribute::make_int_array(v).to_string(),
                     ErrorCode::kVerify);
      }
    }
    return Status::ok();
  };
  QRT_RETURN_IF_ERROR(check("strides", strides, 1));
  QRT_RETURN_IF_ERROR(check("dilations", dilations, 1));
  QRT_RETURN_IF_ERROR(check("kernel_shape", kernel, 1));
  QRT_RETURN_IF_ERROR(check("output_padding", out_pad, 0));
  if (tw.dims[1] > 0 && group > kMaxTensorElements / tw.dims[1]) {
    return error(node, "group " + std::to_string(group) + " x " + std::to_string(tw.dims[1]) +
                           " output channels per group exceeds qrt's limit of 2^48", ErrorCode::kVerify);
  }
  if (out_shape.size() == 4) out_shape = {out_shape[2], out_shape[3]};
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  if (same && out_shape.empty()) {
    for (size_t i = 0; i < 2; ++i) {
      if (tx.dims[2 + i] < 0) return error(node, "output_shape and auto_pad need static spatial sizes");
      if (Wide(tx.dims[2 + i]) * strides[i] > kMaxTensorElements) {
        return error(node, "auto_pad " + auto_pad + " makes an output of " + std::to_string(tx.dims[2 + i]) +
                               " x stride " + std::to_string(strides[i]) + ", more than qrt's limit of 2^48",
                     ErrorCode::kVerify);
      }
    }
    out_shape = {tx.dims[2] * strides[0], tx.dims[3] * strides[1]};
  }
  if (!out_shape.empty()) {
    if (out_shape.size() != 2) return error(node, "output_shape must give 2 spatial sizes", ErrorCode::kParse);
    for (size_t i = 0; i < 2; ++i) {
      if (tx.dims[2 + i] < 0) return error(node, "output_shape and auto_pad need static spatial sizes");
      if (out_shape[i] < 0 || out_shape[i] > kMaxTensorElements) {
        return error(node, "output_shape " + Attribute::make_int_array(out_shape).to_string() +
                               " has a size outside [0, 2^48]", ErrorCode::kVerify);
      }
      // Below 2^80 in 128 bits; pads beyond 2^31 - 1 are then the verifier's to refuse.
      const Wide wide_total = Wide(strides[i]) * (tx.dims[2 + i] - 1) + out_pad[i] +
                              Wide(kernel[i] - 1) * dilations[i] + 1 - out_shape[i];
      if (wide_total > Wide(int64_t(1) << 32) || wide_total < -Wide(int64_t(1) << 32)) {
        return error(node, "output_shape " + Attribute::make_int_array(out_shape).to_string() +
                               " needs pads beyond qrt's limit of " + std::to_string(kMaxWindowParam),
                     ErrorCode::kVerify);
      }
      const int64_t total = int64_t(wide_total);
      const bool upper = auto_pad == "SAME_UPPER";
      pads[i] = upper ? floor_div2(total) : total - floor_div2(total);
      pads[i + 2] = upper ? total - floor_div2(total) : floor_div2(total);
    }
  }
  for (size_t i = 0; i < 2; ++i) {
    if (pads[i] < 0) return error(node, "an output larger than the input reaches at its start is not supported");
    if (pads[i + 2] < 0) {  // rows past the natural end: zeros (plus the bias), as output_padding
      out_pad[i] -= pads[i + 2];
      pads[i + 2] = 0;
    }
  }
  const int64_t cg = tw.dims[0] / group, mg = tw.dims[1], kh = tw.dims[2], kw = tw.dims[3];
  const ElementType we = tw.element;
  int filter = w;
  if (group == 1) {
    filter = emit(OpKind::kTranspose, {w}, Type::tensor({mg, kh, kw, cg}, we), {{"perm", Attribute::make_int_array({1, 2, 3, 0})}});
  } else {
    const int w5 = emit(OpKind::kReshape, {w}, Type::tensor({group, cg, mg, kh, kw}, we));
    const int t5 = emit(OpKind::kTranspose, {w5}, Type::tensor({group, mg, kh, kw, cg}, we),
                        {{"perm", Attribute::make_int_array({0, 2, 3, 4, 1})}});
    filter = emit(OpKind::kReshape, {t5}, Type::tensor({group * mg, kh, kw, cg}, we));
  }
  const int xt = emit(OpKind::kTranspose, {x}, Type::tensor({tx.dims[0], tx.dims[2], tx.dims[3], tx.dims[1]}, tx.element),
                      {{"perm", Attribute::make_int_array({0, 2, 3, 1})}});
  std::vector<int> operands = {xt, filter};
  if (node.input_size() > 2 && !node.input(2).empty()) {
    QRT_ASSIGN_OR_RETURN(int b, value(node, 2));
    operands.push_back(b);
  }
  const std::vector<std::pair<std::string, Attribute>> attrs = {
      {"dilations", Attribute::make_int_array(dilations)}, {"groups", Attribute::make_int(group)},
      {"output_padding", Attribute::make_int_array(out_pad)}, {"pads", Attribute::make_int_array(pads)},
      {"strides", Attribute::make_int_array(strides)}};
  Op probe;
  probe.kind = OpKind::kConvTranspose2d;
  for (auto& [k, v] : attrs) probe.set_attr(k, v);
  auto win = conv_transpose2d_window(probe, {group * mg, kh, kw, cg});
  if (!win.is_ok()) return error(node, win.status().message());
  const std::vector<int64_t> yd = transposed_output_dims(type(xt).dims, *win, group * mg);
  const int y = emit(OpKind::kConvTranspose2d, operands, Type::tensor(yd, tx.element), attrs);
  bind(node, 0, emit(OpKind::kTranspose, {y}, Type::tensor({yd[0], yd[3], yd[1], yd[2]}, tx.element),
                     {{"perm", Attribute::make_int_array({0, 3, 1, 2})}}));
  return Status::ok();
}

// 3-D: output depth od takes, from tap t, input slice id where od = id·sd - pd + t·dd (none
// where that has no integer solution inside the input: then a zero slice). Those kd slices,
// gathered, stack as channels [group, tap, C/group] of one image in a batch of N·Do, and the
// filter [C, O/g, kd, kh, kw] becomes [kd·C, O/g, kh, kw] in the same order: one 2-D
// transposed convolution over (H, W) then sums exactly the 3-D products.
Status Importer::conv_transpose_3d(const onnx::NodeProto& node, const Attrs& a) {
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  QRT_ASSIGN_OR_RETURN(const Type tw, input_type(node, 1));
  const Type tx = type(x);
  if (tw.rank() != 5 || !tw.has_static_shape()) {
    return error(node, "a 3-D filter must be a 5-D tensor of static shape, got " + tw.to_string(), ErrorCode::kVerify);
  }
  for (size_t i = 1; i < 5; ++i) {
    if (tx.dims[i] < 0) return error(node, "3-D transposed convolution needs static C, D, H and W, got " + tx.to_string());
  }
  QRT_RETURN_IF_ERROR(check_depth_input(node, tx));
  const int64_t c = tw.dims[0], og = tw.dims[1], kd = tw.dims[2], kh = tw.dims[3], kw = tw.dims[4];
  QRT_ASSIGN_OR_RETURN(int64_t group, attr_int(node, a, "group", 1));
  if (c != tx.dims[1] || group < 1 || c % group != 0) {
    return error(node, "group " + std::to_string(group) + " does not fit input channels " + std::to_string(tx.dims[1]) +
                           " and filter " + tw.to_string(), ErrorCode::kVerify);
  }
  QRT_ASSIGN_OR_RETURN(auto strides, attr_ints(node, a, "strides", {1, 1, 1}));
  QRT_ASSIGN_OR_RETURN(auto dilations, attr_ints(node, a, "dilations", {1, 1, 1}));
  QRT_ASSIGN_OR_RETURN(auto pads, attr_ints(node, a, "pads", {0, 0, 0, 0, 0, 0}));
  QRT_ASSIGN_OR_RETURN(auto out_pad, attr_ints(node, a, "output_padding", {0, 0, 0}));
  QRT_ASSIGN_OR_RETURN(auto out_shape, attr_ints(node, a, "output_shape", {}));
  QRT_ASSIGN_OR_RETURN(auto kernel, attr_ints(node, a, "kernel_shape", {kd, kh, kw}));
  QRT_ASSIGN_OR_RETURN(std::string auto_pad, attr_string(node, a, "auto_pad", "NOTSET"));
  if (out_shape.size() == 5) out_shape = {out_shape[2], out_shape[3], out_shape[4]};
  if (strides.size() != 3 || dilations.size() != 3 || pads.size() != 6 || out_pad.size() != 3 ||
      (!out_shape.empty() && out_shape.size() != 3)) {
    return error(node, "strides, dilations, pads, output_padding and output_shape must describe 3 spatial dimensions",
                 ErrorCode::kParse);
  }
  if (kernel != std::vector<int64_t>{kd, kh, kw}) return error(node, "kernel_shape disagrees with the filter", ErrorCode::kVerify);
  for (size_t i = 0; i < 3; ++i) {
    if (strides[i] < 1 || strides[i] > kMaxWindowParam || dilations[i] < 1 || dilations[i] > kMaxWindowParam ||
        out_pad[i] < 0 || out_pad[i] > kMaxWindowParam || std::abs(pads[i]) > kMaxWindowParam ||
        std::abs(pads[i + 3]) > kMaxWindowParam) {
      return error(node, "strides and dilations must be in [1, " + std::to_string(kMaxWindowParam) +
                             "], output_padding in [0, " + std::to_string(kMaxWindowParam) + "]", ErrorCode::kVerify);
    }
  }
  // The depth axis, as the 2-D importer resolves H and W (output_shape, then auto_pad).
  const int64_t d = tx.dims[2], sd = strides[0], dd = dilations[0];
  const Wide natural = Wide(sd) * (d - 1) + out_pad[0] + Wide(kd - 1) * dd + 1;
  if (natural > kMaxTensorElements) return error(node, "the depth output exceeds qrt's limit of 2^48", ErrorCode::kVerify);
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  int64_t pd0 = pads[0], pd1 = pads[3];
  if (auto_pad == "VALID") pd0 = pd1 = 0;
  if (!out_shape.empty() || same) {
    const int64_t target = !out_shape.empty() ? out_shape[0] : d * sd;
    if (target < 0 || target > kMaxTensorElements) return error(node, "output_shape has a size outside [0, 2^48]", ErrorCode::kVerify);
    const int64_t total = int64_t(natural) - target;
    const bool upper = auto_pad == "SAME_UPPER";
    pd0 = upper ? floor_div2(total) : total - floor_div2(total);
    pd1 = total - pd0;
  }
  const int64_t out_d = int64_t(natural) - pd0 - pd1;
  if (out_d < 1) return error(node, "a depth output of " + std::to_string(out_d) + " (pads past the output)", ErrorCode::kVerify);
  QRT_RETURN_IF_ERROR(check_depth_stacking(node, tx.dims[0], c, out_d, kd));
  std::vector<int64_t> index;
  for (int64_t od = 0; od < out_d; ++od) {
    for (int64_t t = 0; t < kd; ++t) {
      const int64_t num = od + pd0 - t * dd;
      index.push_back(num >= 0 && num % sd == 0 && num / sd < d ? num / sd : d);  // d: the zero slice
    }
  }
  const int x2 = through_dcast(x, [&](int v) { return stack_depth_taps(gather_depth(pad_depth(v, 0, 1, 0.0), index, out_d, kd), group); });
  const std::string base = node.output(0) + "::";
  values_[base + "x2d"] = OnnxValue{x2, false, {}};
  const int64_t cg = c / group, plane = kh * kw;
  const std::vector<int64_t> w2_dims = {kd * c, og, kh, kw};
  QRT_ASSIGN_OR_RETURN(
      OnnxValue w2, filter_2d(node, 1, w2_dims,
                              [&](int64_t i) {
                                const int64_t e = i % plane, rest = i / plane, o = rest % og, r = rest / og;
                                const int64_t ci = r % cg, t = r / cg % kd, g = r / cg / kd;
                                return (((g * cg + ci) * og + o) * kd + t) * plane + e;
                              },
                              [&](int w) {
                                const ElementType we = type(w).element;
                                const int w6 = emit(OpKind::kReshape, {w}, Type::tensor({group, cg, og, kd, kh, kw}, we));
                                const int t6 = emit(OpKind::kTranspose, {w6}, Type::tensor({group, kd, cg, og, kh, kw}, we),
                                                    {{"perm", Attribute::make_int_array({0, 3, 1, 2, 4, 5})}});
                                return emit(OpKind::kReshape, {t6}, Type::tensor(w2_dims, we));
                              }));
  values_[base + "w2d"] = std::move(w2);
  onnx::NodeProto part = part_of(node);
  part.set_input(0, base + "x2d");
  part.set_input(1, base + "w2d");
  set_ints(part, "strides", {strides[1], strides[2]});
  set_ints(part, "dilations", {dilations[1], dilations[2]});
  set_ints(part, "pads", {pads[1], pads[2], pads[4], pads[5]});
  set_ints(part, "output_padding", {out_pad[1], out_pad[2]});
  if (!out_shape.empty()) set_ints(part, "output_shape", {out_shape[1], out_shape[2]});
  auto* g = part.add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(group);
  auto* ap = part.add_attribute();
  ap->set_name("auto_pad");
  ap->set_type(onnx::AttributeProto::STRING);
  ap->set_s(auto_pad);
  QRT_ASSIGN_OR_RETURN(int y, import_part(part));  // [N·Do, O, Ho, Wo]
  bind(node, 0, unstack_depth(y, tx.dims[0], out_d));
  return Status::ok();
}

}  // namespace qrt::importers::onnx_detail
