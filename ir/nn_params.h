// qrt — window geometry of conv and pooling ops, shared by the verifier and the backends.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/graph.h"

namespace qrt {

/// Strides, dilations, explicit padding, groups and layout of a qrt.conv2d / qrt.*_pool2d.
struct Window2d {
  bool nchw = false;            ///< layout "NCHW" (filter OIHW) or "NHWC" (filter OHWI)
  int64_t kh = 1, kw = 1;       ///< kernel size (pooling: attribute; conv: from the filter)
  int64_t sh = 1, sw = 1;       ///< strides
  int64_t dh = 1, dw = 1;       ///< dilations (conv only)
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t groups = 1;           ///< conv only
  int64_t batch_groups = 1;     ///< conv2d only: StableHLO's batch_group_count (output batch = N / batch_groups)
  int64_t out_pad_h = 0, out_pad_w = 0;  ///< conv_transpose2d only: extra rows / columns at the end
  bool count_include_pad = false;  ///< avg pooling only

  /// Index of the channel dimension in the activation layout (1 or 3).
  size_t channel_dim() const { return nchw ? 1 : 3; }
  /// Index of the height dimension (2 or 1).
  size_t height_dim() const { return nchw ? 2 : 1; }
  /// Index of the width dimension (3 or 2).
  size_t width_dim() const { return nchw ? 3 : 2; }
};

/// The largest stride, dilation, pad, pooling kernel or group count qrt accepts (2^31 - 1):
/// far beyond any real window, it keeps every product of window geometry inside 64 bits.
constexpr int64_t kMaxWindowParam = INT32_MAX;

/// Refuses any of `values` above kMaxWindowParam:
/// "'<op>' op <name> value <v> exceeds qrt's limit of 2147483647".
Status check_window_limit(const Op& op, const char* name, const std::vector<int64_t>& values);

/// Output size of one spatial dimension: floor((in + pads - d*(k-1) - 1) / s) + 1, or -1 when
/// `in` or the kernel size `k` is dynamic (< 0). May be <= 0 for windows larger than the
/// padded input (the verifier rejects that).
int64_t window_output_size(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                           int64_t pad_begin, int64_t pad_end);

/// Reads the attributes of a qrt.conv2d (kh/kw are filled from `filter_dims`), `batch_groups`
/// included: at least 1, and 1 where `groups` exceeds 1 (StableHLO's rule).
Result<Window2d> conv2d_window(const Op& op, const std::vector<int64_t>& filter_dims);
/// Reads the attributes of a qrt.conv_transpose2d (NHWC; kh/kw from the OHWI `filter_dims`):
/// conv2d's, and `output_padding` = [h, w], each smaller than its stride or its dilation.
Result<Window2d> conv_transpose2d_window(const Op& op, const std::vector<int64_t>& filter_dims);
/// Reads the attributes of a qrt.max_pool2d / qrt.avg_pool2d.
Result<Window2d> pool2d_window(const Op& op);

/// The source index along one axis of every output index of a nearest-neighbour qrt.resize
/// from `in` to `out` elements with scale `scale` (out / in unless given), as ONNX Resize
/// defines it, computed in double: the coordinate transformation `coordinate_mode`
/// ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"),
/// then `nearest_mode` ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"), then
/// clamped to [0, in - 1]. Empty when a mode is unknown.
std::vector<int64_t> resize_nearest_indices(int64_t in, int64_t out, double scale, const std::string& coordinate_mode,
                                            const std::string& nearest_mode);

/// How each output index of an interpolating qrt.resize (mode linear or cubic) reads one axis,
/// as ONNX Resize's reference defines it: the source coordinate `x` (the coordinate
/// transformation in double; align_corners with the output width scale · in), then `taps`
/// neighbours (2 linear, 4 cubic) around floor(x), clamped into [0, in - 1] (ONNX pads with the
/// edge values), weighted by the mode's coefficients of r = x - floor(x) (linear 1 - r, r;
/// cubic Keys' with `cubic_a`; exclude_outside zeroes the weights of neighbours outside the
/// axis and divides by their sum). An integer `x` reads its element as it is (`copy`).
struct ResizeAxisTaps {
  int taps = 2;
  std::vector<int64_t> copy;    ///< per output index: the element read as it is, or -1
  std::vector<int64_t> index;   ///< per output index, `taps` source indices
  std::vector<double> weight;   ///< per output index, `taps` weights
};
/// The taps of one axis of `in` to `out` elements with scale `scale` under `coordinate_mode`
/// ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn")
/// and `mode` ("linear" or "cubic"). Empty `copy` when a mode is unknown.
ResizeAxisTaps resize_axis_taps(int64_t in, int64_t out, double scale, const std::string& coordinate_mode,
                                const std::string& mode, double cubic_a, bool exclude_outside);

/// The result dimensions of qrt.resize `op` for an operand shaped `in` (static dimensions of
/// `declared` as they are, dynamic ones floor(in · scale)) and each axis's scale: the op's
/// `scales`, else out / in.
std::vector<int64_t> resize_output_dims(const Op& op, const std::vector<int64_t>& in, const std::vector<int64_t>& declared,
                                        std::vector<double>* scales);

/// Output dimensions of a 4-D activation `in` under window `w` with `out_channels`.
std::vector<int64_t> window_output_dims(const std::vector<int64_t>& in, const Window2d& w,
                                        int64_t out_channels);

/// Output dims [N, OH, OW, out_channels] of a transposed convolution (NHWC): per spatial
/// dimension (in - 1)·s - pad_begin - pad_end + d·(k - 1) + 1 + output_padding, or -1 when
/// `in` or the kernel size is dynamic. May be <= 0 when the pads exceed the full output (the
/// verifier rejects it).
std::vector<int64_t> transposed_output_dims(const std::vector<int64_t>& in, const Window2d& w,
                                            int64_t out_channels);

/// qrt.topk's selection along one line of `n` values (`values[i · stride]`): the indices of
/// the `k` largest (`largest`) or smallest, best first; equal values in index order, and a
/// NaN ranks above every number (first when largest, last when smallest), as numpy sorts.
/// Writes them to `out[j · out_stride]`; `scratch` is reused across calls.
template <typename T>
void select_topk(const T* values, int64_t n, int64_t stride, int64_t k, bool largest, int64_t* out, int64_t out_stride,
                 std::vector<int64_t>& scratch) {
  auto above = [&](int64_t a, int64_t b) {  // values[a] ranks above values[b]
    const T x = values[a * stride], y = values[b * stride];
    if constexpr (std::is_floating_point_v<T>) {
      if (x != x) return y == y;
      if (y != y) return false;
    }
    return x > y;
  };
  scratch.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) scratch[size_t(i)] = i;
  std::partial_sort(scratch.begin(), scratch.begin() + k, scratch.end(), [&](int64_t a, int64_t b) {
    const bool a_first = largest ? above(a, b) : above(b, a);
    const bool b_first = largest ? above(b, a) : above(a, b);
    return a_first || (!b_first && a < b);
  });
  for (int64_t j = 0; j < k; ++j) out[j * out_stride] = scratch[size_t(j)];
}

}  // namespace qrt
