// qrt — ONNX importer: ConvTranspose as qrt.conv_transpose2d.
//
// ONNX holds activations in NCHW and the filter as [C_in, C_out / group, kH, kW]; the qrt op
// is NHWC with an OHWI filter [C_out, kH, kW, C_in / group]. The importer transposes the
// input and the result, and rearranges the filter with reshapes and a transpose (so a
// DequantizeLinear'd or computed filter works as well as a constant one). Padding follows the
// operator's definition: explicit `pads`, or `output_shape` / `auto_pad` SAME_* resolved into
// pads, with rows past the natural output size becoming qrt's `output_padding`.
#include "importers/onnx_importer_impl.h"
#include "ir/nn_params.h"
#include "ir/ops.h"

namespace qrt::importers::onnx_detail {

namespace {

using Wide = __int128;
constexpr int64_t kMaxDim = int64_t(1) << 48;  // Type::verify's bound on a dimension

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
  if (tw.dims[1] > 0 && group > kMaxDim / tw.dims[1]) {
    return error(node, "group " + std::to_string(group) + " x " + std::to_string(tw.dims[1]) +
                           " output channels per group exceeds qrt's limit of 2^48", ErrorCode::kVerify);
  }
  if (out_shape.size() == 4) out_shape = {out_shape[2], out_shape[3]};
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  if (same && out_shape.empty()) {
    for (size_t i = 0; i < 2; ++i) {
      if (tx.dims[2 + i] < 0) return error(node, "output_shape and auto_pad need static spatial sizes");
      if (Wide(tx.dims[2 + i]) * strides[i] > kMaxDim) {
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
      if (out_shape[i] < 0 || out_shape[i] > kMaxDim) {
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

}  // namespace qrt::importers::onnx_detail
