// qrt — the GEMMs of a quantized convolution (see conv_groups.h).
#include "jit/ops/conv_groups.h"

#include <algorithm>

namespace qrt::jit {

namespace {

// v[first, first + count) where v holds one value per channel of `channels`; v itself where it
// holds none (an unused field).
template <class T>
std::vector<T> channel_slice(const std::vector<T>& v, size_t channels, size_t first, size_t count) {
  if (v.size() != channels) return v;
  return std::vector<T>(v.begin() + std::ptrdiff_t(first), v.begin() + std::ptrdiff_t(first + count));
}

// `full`'s per-channel quantization and bias of output channels [first, first + count).
GemmSpec spec_for_channels(const GemmSpec& full, size_t channels, size_t first, size_t count) {
  GemmSpec s;
  static_cast<ChannelQuant&>(s) = static_cast<const ChannelQuant&>(full);
  s.w_zero_point = channel_slice(full.w_zero_point, channels, first, count);
  s.multiplier = channel_slice(full.multiplier, channels, first, count);
  s.out_zero_point = channel_slice(full.out_zero_point, channels, first, count);
  s.out_lo = channel_slice(full.out_lo, channels, first, count);
  s.out_hi = channel_slice(full.out_hi, channels, first, count);
  s.q31_multiplier = channel_slice(full.q31_multiplier, channels, first, count);
  s.q31_shift = channel_slice(full.q31_shift, channels, first, count);
  s.bias = channel_slice(full.bias, channels, first, count);
  return s;
}

}  // namespace

int64_t merged_groups(int64_t groups, int64_t out_per_group) {
  int64_t best = 1;
  for (int64_t b = 2; b <= groups && b * out_per_group <= kMergedGroupColumns; ++b) {
    if (groups % b == 0) best = b;
  }
  return best;
}

std::string split_conv_gemms(const GemmSpec& full, const std::vector<int32_t>& filter, const Window2d& w, int64_t out_c,
                             int64_t per_group, std::vector<ConvGemmPart>& parts) {
  parts.clear();
  const int64_t groups = w.groups, taps = w.kh * w.kw;
  if (groups <= 0 || out_c % groups != 0) return "the output channels do not split into the groups";
  const int64_t out_per_group = out_c / groups, filter_k = per_group * taps;
  if (int64_t(filter.size()) != out_c * filter_k) return "the filter does not hold every group's weights";
  const int64_t merge = merged_groups(groups, out_per_group);
  const int64_t in_channels = merge * per_group, cols = merge * out_per_group;
  for (int64_t first = 0; first < groups; first += merge) {
    ConvGemmPart part;
    part.in_offset = first * per_group;
    part.in_channels = in_channels;
    part.out_offset = first * out_per_group;
    part.spec = spec_for_channels(full, size_t(out_c), size_t(part.out_offset), size_t(cols));
    GemmSpec& s = part.spec;
    s.k = in_channels * taps;
    s.n = cols;
    s.w.resize(size_t(s.k * s.n));
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t o = part.out_offset + j, local = j / out_per_group;  // its group within the part
      // Off the group's block, the column's zero point: (w - zw) = 0 adds nothing.
      const int32_t zero = s.w_zero_point.empty() ? 0 : s.w_zero_point[size_t(j)];
      for (int64_t c = 0; c < in_channels; ++c) {
        const bool own = c / per_group == local;
        const int64_t fc = c % per_group;
        for (int64_t t = 0; t < taps; ++t) {
          // im2col's k order: NHWC (ky, kx, c), NCHW (c, ky, kx); the filter's per group likewise.
          const int64_t k = w.nchw ? c * taps + t : t * in_channels + c;
          const int64_t f = w.nchw ? fc * taps + t : t * per_group + fc;
          s.w[size_t(k * s.n + j)] = own ? filter[size_t(o * filter_k + f)] : zero;
        }
      }
    }
    part.analysis = analyze_gemm(s);
    if (!part.analysis.why_not.empty()) return part.analysis.why_not;
    parts.push_back(std::move(part));
  }
  return "";
}

}  // namespace qrt::jit
