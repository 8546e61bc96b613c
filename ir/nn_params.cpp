// qrt — conv/pool window geometry (see nn_params.h).
#include "ir/nn_params.h"

#include <cmath>
#include <cstdint>

#include "ir/op_verify.h"
#include "ir/ops.h"

namespace qrt {

namespace {

// Window attributes come from untrusted graphs; the geometry is computed in 128 bits and
// clamped so that hostile values give a size the verifier rejects, never an overflow.
using Wide = __int128;

int64_t clamp_to_int64(Wide v) {
  if (v > Wide(INT64_MAX)) return INT64_MAX;
  if (v < Wide(INT64_MIN)) return INT64_MIN;
  return int64_t(v);
}

}  // namespace

int64_t window_output_size(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                           int64_t pad_begin, int64_t pad_end) {
  if (in < 0 || k < 0) return -1;
  const Wide span = Wide(dilation) * (Wide(k) - 1) + 1;
  const Wide padded = Wide(in) + pad_begin + pad_end;
  if (padded < span) return 0;
  return clamp_to_int64((padded - span) / (stride < 1 ? 1 : stride) + 1);
}

Status check_window_limit(const Op& op, const char* name, const std::vector<int64_t>& values) {
  for (int64_t v : values) {
    if (v > kMaxWindowParam) {
      return op_verify::op_error(op, std::string(name) + " value " + std::to_string(v) + " exceeds qrt's limit of " +
                              std::to_string(kMaxWindowParam));
    }
  }
  return Status::ok();
}

namespace {

Status read_common(const Op& op, Window2d& w) {
  using namespace op_verify;
  QRT_ASSIGN_OR_RETURN(std::string layout, string_attr(op, "layout", {"NHWC", "NCHW"}, "NHWC"));
  w.nchw = layout == "NCHW";
  QRT_ASSIGN_OR_RETURN(auto strides, int_array_attr(op, "strides", 2, {1, 1}));
  QRT_ASSIGN_OR_RETURN(auto pads, int_array_attr(op, "pads", 4, {0, 0, 0, 0}));
  if (strides[0] < 1 || strides[1] < 1) {
    return op_error(op, "strides must be >= 1, got [" + std::to_string(strides[0]) + ", " +
                            std::to_string(strides[1]) + "]");
  }
  for (int64_t p : pads) {
    if (p < 0) return op_error(op, "pads must be >= 0, got " + std::to_string(p));
  }
  QRT_RETURN_IF_ERROR(check_window_limit(op, "strides", strides));
  QRT_RETURN_IF_ERROR(check_window_limit(op, "pads", pads));
  w.sh = strides[0];
  w.sw = strides[1];
  w.pad_top = pads[0];
  w.pad_left = pads[1];
  w.pad_bottom = pads[2];
  w.pad_right = pads[3];
  return Status::ok();
}

}  // namespace

Result<Window2d> conv2d_window(const Op& op, const std::vector<int64_t>& filter_dims) {
  using namespace op_verify;
  Window2d w;
  QRT_RETURN_IF_ERROR(read_common(op, w));
  QRT_ASSIGN_OR_RETURN(auto dilations, int_array_attr(op, "dilations", 2, {1, 1}));
  if (dilations[0] < 1 || dilations[1] < 1) return op_error(op, "dilations must be >= 1");
  QRT_RETURN_IF_ERROR(check_window_limit(op, "dilations", dilations));
  w.dh = dilations[0];
  w.dw = dilations[1];
  QRT_ASSIGN_OR_RETURN(w.groups, int_attr(op, "groups", 1));
  if (w.groups < 1) return op_error(op, "groups must be >= 1, got " + std::to_string(w.groups));
  QRT_RETURN_IF_ERROR(check_window_limit(op, "groups", {w.groups}));
  QRT_ASSIGN_OR_RETURN(w.batch_groups, int_attr(op, "batch_groups", 1));
  if (w.batch_groups < 1) return op_error(op, "batch_groups must be >= 1, got " + std::to_string(w.batch_groups));
  QRT_RETURN_IF_ERROR(check_window_limit(op, "batch_groups", {w.batch_groups}));
  if (w.batch_groups > 1 && w.groups > 1) {
    return op_error(op, "groups " + std::to_string(w.groups) + " and batch_groups " + std::to_string(w.batch_groups) +
                            ": at most one of them may exceed 1 (StableHLO's convolution rule)");
  }
  if (filter_dims.size() == 4) {
    w.kh = w.nchw ? filter_dims[2] : filter_dims[1];
    w.kw = w.nchw ? filter_dims[3] : filter_dims[2];
  }
  return w;
}

Result<Window2d> conv_transpose2d_window(const Op& op, const std::vector<int64_t>& filter_dims) {
  using namespace op_verify;
  QRT_ASSIGN_OR_RETURN(Window2d w, conv2d_window(op, filter_dims));
  QRT_ASSIGN_OR_RETURN(auto out_pad, int_array_attr(op, "output_padding", 2, {0, 0}));
  if (out_pad[0] < 0 || out_pad[1] < 0) return op_error(op, "output_padding must be >= 0");
  // ONNX's rule: the extra rows are positions a larger input would have reached.
  if ((out_pad[0] >= w.sh && out_pad[0] >= w.dh) || (out_pad[1] >= w.sw && out_pad[1] >= w.dw)) {
    return op_error(op, "output_padding " + op.attr("output_padding")->to_string() +
                            " must be smaller than the stride or the dilation of its dimension");
  }
  w.out_pad_h = out_pad[0];
  w.out_pad_w = out_pad[1];
  return w;
}

Result<Window2d> pool2d_window(const Op& op) {
  using namespace op_verify;
  Window2d w;
  QRT_RETURN_IF_ERROR(read_common(op, w));
  if (!op.attr("kernel")) return op_error(op, "requires attribute 'kernel' = [kh, kw]");
  QRT_ASSIGN_OR_RETURN(auto kernel, int_array_attr(op, "kernel", 2, {1, 1}));
  if (kernel[0] < 1 || kernel[1] < 1) return op_error(op, "kernel sizes must be >= 1");
  QRT_RETURN_IF_ERROR(check_window_limit(op, "kernel", kernel));
  w.kh = kernel[0];
  w.kw = kernel[1];
  QRT_ASSIGN_OR_RETURN(int64_t include, int_attr(op, "count_include_pad", 0));
  w.count_include_pad = include != 0;
  return w;
}

std::vector<int64_t> window_output_dims(const std::vector<int64_t>& in, const Window2d& w,
                                        int64_t out_channels) {
  std::vector<int64_t> out(4);
  // Batch groups split the batch (the verifier checks that they divide it).
  out[0] = in[0] < 0 ? in[0] : in[0] / w.batch_groups;
  out[w.channel_dim()] = out_channels;
  out[w.height_dim()] = window_output_size(in[w.height_dim()], w.kh, w.sh, w.dh, w.pad_top, w.pad_bottom);
  out[w.width_dim()] = window_output_size(in[w.width_dim()], w.kw, w.sw, w.dw, w.pad_left, w.pad_right);
  return out;
}

namespace {

// The source coordinate of output index `i` in double under ONNX Resize's `mode`, for an
// output `width` wide (align_corners and pytorch_half_pixel map a width of 1 to 0); false for
// an unknown mode.
bool resize_source(int64_t i, int64_t in, double width, double scale, const std::string& mode, double* src) {
  const double x = double(i);
  if (mode == "half_pixel") {
    *src = (x + 0.5) / scale - 0.5;
  } else if (mode == "asymmetric") {
    *src = x / scale;
  } else if (mode == "align_corners") {
    *src = width == 1.0 ? 0.0 : x * double(in - 1) / (width - 1.0);
  } else if (mode == "pytorch_half_pixel") {
    *src = width > 1.0 ? (x + 0.5) / scale - 0.5 : 0.0;  // the specification's 0 for one output
  } else if (mode == "tf_half_pixel_for_nn") {
    *src = (x + 0.5) / scale;
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::vector<int64_t> resize_nearest_indices(int64_t in, int64_t out, double scale, const std::string& coordinate_mode,
                                            const std::string& nearest_mode) {
  std::vector<int64_t> map;
  for (int64_t i = 0; i < out; ++i) {
    double src;
    if (!resize_source(i, in, double(out), scale, coordinate_mode, &src)) return {};
    const double lower = std::floor(src);
    const bool half = src - lower == 0.5;
    double pick;
    if (nearest_mode == "round_prefer_floor") {
      pick = half ? lower : std::round(src);
    } else if (nearest_mode == "round_prefer_ceil") {
      pick = half ? lower + 1.0 : std::round(src);
    } else if (nearest_mode == "floor") {
      pick = lower;
    } else if (nearest_mode == "ceil") {
      pick = std::ceil(src);
    } else {
      return {};
    }
    map.push_back(pick < 0.0 ? 0 : pick > double(in - 1) ? in - 1 : int64_t(pick));
  }
  return map;
}

ResizeAxisTaps resize_axis_taps(int64_t in, int64_t out, double scale, const std::string& coordinate_mode,
                                const std::string& mode, double cubic_a, bool exclude_outside) {
  ResizeAxisTaps t;
  if (mode != "linear" && mode != "cubic") return t;
  t.taps = mode == "linear" ? 2 : 4;
  const double width = scale * double(in);  // ONNX's output width, a float (at least 1 where i exists)
  for (int64_t i = 0; i < out; ++i) {
    double src;
    if (!resize_source(i, in, width, scale, coordinate_mode, &src)) return ResizeAxisTaps{};
    auto clamped = [&](double v) { return v < 0.0 ? int64_t(0) : v > double(in - 1) ? in - 1 : int64_t(v); };
    const double lower = std::floor(src);
    if (src == lower) {  // weight 1 on the element itself, 0 on the rest
      t.copy.push_back(clamped(src));
      for (int k = 0; k < t.taps; ++k) t.index.push_back(0), t.weight.push_back(0.0);
      continue;
    }
    t.copy.push_back(-1);
    const double r = src - lower;
    double w[4];
    if (t.taps == 2) {
      w[0] = 1 - r;
      w[1] = r;
    } else {
      const double a = cubic_a, s = 1 - r;
      w[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
      w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
      w[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
      w[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
    }
    const double first = lower - double(t.taps / 2 - 1);  // the leftmost neighbour, unclamped
    if (exclude_outside) {
      double sum = 0.0;
      for (int k = 0; k < t.taps; ++k) {
        const double at = first + k;
        if (at < 0.0 || at > double(in - 1)) w[k] = 0.0;
        sum += w[k];
      }
      for (int k = 0; k < t.taps; ++k) w[k] /= sum;
    }
    for (int k = 0; k < t.taps; ++k) {
      t.index.push_back(clamped(first + k));
      t.weight.push_back(w[k]);
    }
  }
  return t;
}

std::vector<int64_t> resize_output_dims(const Op& op, const std::vector<int64_t>& in, const std::vector<int64_t>& declared,
                                        std::vector<double>* scales) {
  const Attribute* given = op.attr("scales");
  std::vector<int64_t> out(in.size());
  scales->assign(in.size(), 1.0);
  for (size_t d = 0; d < in.size(); ++d) {
    const double s = given && d < given->array.size() ? given->array[d].f : 0.0;
    int64_t from_scale = in[d];
    if (s > 0.0 && in[d] >= 0) {
      // Clamped before the conversion: an input dynamic when verified times a huge scale
      // becomes 2^49, which Type::verify (the reference checks the shape with it) refuses.
      const double scaled = std::floor(double(in[d]) * s);
      from_scale = scaled < double(int64_t(1) << 49) ? int64_t(scaled) : int64_t(1) << 49;
    }
    out[d] = d < declared.size() && declared[d] >= 0 ? declared[d] : from_scale;
    (*scales)[d] = s > 0.0 ? s : double(out[d]) / double(in[d]);
  }
  return out;
}

std::vector<int64_t> transposed_output_dims(const std::vector<int64_t>& in, const Window2d& w,
                                            int64_t out_channels) {
  auto size = [](int64_t n, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, int64_t extra) -> int64_t {
    if (n < 0 || k < 0) return -1;
    return clamp_to_int64((Wide(n) - 1) * s - pb - pe + Wide(d) * (Wide(k) - 1) + 1 + extra);
  };
  return {in[0], size(in[1], w.kh, w.sh, w.dh, w.pad_top, w.pad_bottom, w.out_pad_h),
          size(in[2], w.kw, w.sw, w.dw, w.pad_left, w.pad_right, w.out_pad_w), out_channels};
}

}  // namespace qrt
