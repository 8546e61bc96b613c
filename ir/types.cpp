// qrt — element and value types (see types.h).
#include "ir/types.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace qrt {

QuantStorage QuantStorage::full_range(unsigned width, bool is_signed) {
  QuantStorage s;
  s.width = width;
  s.is_signed = is_signed;
  s.min = s.full_min();
  s.max = s.full_max();
  return s;
}

// Defined for every width, so that a type the verifier will refuse (storage must have 2 to 32
// bits) can still be built and described: 0 bits hold only 0, and 64 or more saturate int64.
int64_t QuantStorage::full_min() const {
  if (!is_signed || width == 0) return 0;
  return width >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (width - 1));
}

int64_t QuantStorage::full_max() const {
  if (width == 0) return 0;
  if (is_signed) return width >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (width - 1)) - 1;
  return width >= 63 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << width) - 1;
}

ElementType ElementType::make_float(FloatKind kind) {
  ElementType t;
  t.kind = ElementKind::kFloat;
  t.float_kind = kind;
  return t;
}

ElementType ElementType::make_int(unsigned width, Signedness sign) {
  ElementType t;
  t.kind = ElementKind::kInteger;
  t.int_width = width;
  t.int_sign = sign;
  return t;
}

ElementType ElementType::make_uniform(QuantStorage storage, FloatKind expressed, double scale,
                                      int64_t zero_point) {
  ElementType t;
  t.kind = ElementKind::kUniform;
  t.storage = storage;
  t.float_kind = expressed;
  t.scales = {scale};
  t.zero_points = {zero_point};
  return t;
}

ElementType ElementType::make_per_axis(QuantStorage storage, FloatKind expressed, int32_t axis,
                                       std::vector<double> scales,
                                       std::vector<int64_t> zero_points) {
  ElementType t;
  t.kind = ElementKind::kUniformPerAxis;
  t.storage = storage;
  t.float_kind = expressed;
  t.axis = axis;
  t.scales = std::move(scales);
  t.zero_points = std::move(zero_points);
  return t;
}

ElementType ElementType::make_sub_channel(QuantStorage storage, FloatKind expressed, std::vector<int32_t> block_axes,
                                          std::vector<int64_t> block_sizes, std::vector<int64_t> param_dims,
                                          std::vector<double> scales, std::vector<int64_t> zero_points) {
  ElementType t;
  t.kind = ElementKind::kUniformSubChannel;
  t.storage = storage;
  t.float_kind = expressed;
  t.block_axes = std::move(block_axes);
  t.block_sizes = std::move(block_sizes);
  t.param_dims = std::move(param_dims);
  t.scales = std::move(scales);
  t.zero_points = std::move(zero_points);
  return t;
}

int64_t ElementType::block_size_along(size_t dim) const {
  for (size_t i = 0; i < block_axes.size(); ++i) {
    if (size_t(block_axes[i]) == dim) return block_sizes[i];
  }
  return 0;
}

ElementType ElementType::permuted(const std::vector<int64_t>& perm) const {
  auto position_of = [&](int64_t dim) { return int32_t(std::find(perm.begin(), perm.end(), dim) - perm.begin()); };
  ElementType t = *this;
  if (kind == ElementKind::kUniformPerAxis) t.axis = position_of(axis);
  if (kind != ElementKind::kUniformSubChannel || perm.size() != param_dims.size()) return t;
  for (int32_t& a : t.block_axes) a = position_of(a);
  const size_t rank = perm.size();
  for (size_t i = 0; i < rank; ++i) t.param_dims[i] = param_dims[size_t(perm[i])];
  // Row-major strides of the source parameters, then a walk over the result's index space.
  std::vector<size_t> stride(rank, 1);
  for (size_t d = rank - 1; d > 0; --d) stride[d - 1] = stride[d] * size_t(param_dims[d]);
  std::vector<int64_t> idx(rank, 0);
  for (size_t i = 0; i < scales.size(); ++i) {
    size_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += size_t(idx[d]) * stride[size_t(perm[d])];
    t.scales[i] = scales[src];
    t.zero_points[i] = zero_points[src];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < t.param_dims[d]) break;
      idx[d] = 0;
    }
  }
  return t;
}

ElementType ElementType::make_calibrated(FloatKind expressed, double min, double max) {
  ElementType t;
  t.kind = ElementKind::kCalibrated;
  t.float_kind = expressed;
  t.cal_min = min;
  t.cal_max = max;
  return t;
}

ElementType ElementType::make_any(QuantStorage storage, bool has_expressed, FloatKind expressed) {
  ElementType t;
  t.kind = ElementKind::kAny;
  t.storage = storage;
  t.has_expressed = has_expressed;
  t.float_kind = expressed;
  return t;
}

namespace {

std::string fmt_double(double v) { return format_mlir_float(v, FloatKind::kF64); }

Status verify_storage(const QuantStorage& s) {
  if (s.width < 2 || s.width > 32) {
    return Status::error("illegal storage type size: " + std::to_string(s.width) +
                         " (quantized storage must be 2 to 32 bits)");
  }
  const std::string range = std::string(s.is_signed ? "i" : "u") + std::to_string(s.width) +
                            " [" + std::to_string(s.full_min()) + ", " +
                            std::to_string(s.full_max()) + "]";
  if (s.min < s.full_min() || s.min > s.full_max()) {
    return Status::error("storage min " + std::to_string(s.min) + " is outside the range of " +
                         range);
  }
  if (s.max < s.full_min() || s.max > s.full_max()) {
    return Status::error("storage max " + std::to_string(s.max) + " is outside the range of " +
                         range);
  }
  if (s.min >= s.max) {
    return Status::error("storage min " + std::to_string(s.min) +
                         " must be less than storage max " + std::to_string(s.max));
  }
  return Status::ok();
}

Status verify_scale(double scale, FloatKind expressed, const std::string& where) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    return Status::error("illegal scale" + where + ": " + fmt_double(scale) +
                         " (scale must be finite and > 0)");
  }
  const double rounded = round_to_float_kind(scale, expressed);
  if (!std::isfinite(rounded) || rounded == 0.0) {
    return Status::error("illegal scale" + where + ": " + fmt_double(scale) + " is " +
                         (rounded == 0.0 ? "zero" : "not finite") + " in expressed type " +
                         float_kind_name(expressed));
  }
  return Status::ok();
}

// The block list and the parameters' shape, on their own (the element type's half of the rules).
Status verify_sub_channel_shape(const ElementType& t) {
  QRT_ASSERT(t.block_axes.size() == t.block_sizes.size());
  for (size_t i = 0; i < t.block_axes.size(); ++i) {
    if (t.block_axes[i] < 0) {
      return Status::error("illegal quantized dimension " + std::to_string(t.block_axes[i]) + " (must be >= 0)");
    }
    if (t.block_sizes[i] <= 0) {
      return Status::error("illegal block size " + std::to_string(t.block_sizes[i]) + " for quantized dimension " +
                           std::to_string(t.block_axes[i]) + " (must be > 0)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (t.block_axes[j] == t.block_axes[i]) {
        return Status::error("duplicate quantized dimension " + std::to_string(t.block_axes[i]) + " in the block sizes");
      }
    }
    if (size_t(t.block_axes[i]) >= t.param_dims.size()) {
      return Status::error("quantized dimension " + std::to_string(t.block_axes[i]) +
                           " is out of range for scales of rank " + std::to_string(t.param_dims.size()));
    }
  }
  if (t.param_dims.empty()) return Status::error("sub-channel quantized type needs a scale tensor of rank >= 1");
  size_t count = 1;
  for (int64_t d : t.param_dims) {
    if (d <= 0) return Status::error("sub-channel scale tensor has an empty dimension");
    if (count > (size_t(1) << 40) / size_t(d)) return Status::error("sub-channel scale tensor is too large");
    count *= size_t(d);
  }
  if (count != t.scales.size() || count != t.zero_points.size()) {
    return Status::error("sub-channel scale tensor of shape [" + dims_to_string(t.param_dims) + "] needs " +
                         std::to_string(count) + " scales, got " + std::to_string(t.scales.size()));
  }
  return Status::ok();
}

std::string quant_params_to_string(double scale, int64_t zero_point) {
  std::string s = fmt_double(scale);
  if (zero_point != 0) s += ":" + std::to_string(zero_point);
  return s;
}

}  // namespace

Status ElementType::verify() const {
  switch (kind) {
    case ElementKind::kFloat:
      return Status::ok();
    case ElementKind::kInteger:
      if (int_width < 1 || int_width > 64) {
        return Status::error("integer width " + std::to_string(int_width) +
                             " is not supported (1 to 64 bits)");
      }
      return Status::ok();
    case ElementKind::kAny:
      return verify_storage(storage);
    case ElementKind::kCalibrated:
      if (!std::isfinite(cal_min) || !std::isfinite(cal_max)) {
        return Status::error("illegal calibrated range: (" + fmt_double(cal_min) + ":" +
                             fmt_double(cal_max) + ") must be finite");
      }
      if (cal_min >= cal_max) {
        return Status::error("illegal calibrated range: min " + fmt_double(cal_min) +
                             " must be less than max " + fmt_double(cal_max));
      }
      return Status::ok();
    case ElementKind::kUniform:
    case ElementKind::kUniformPerAxis:
      break;
    case ElementKind::kUniformSubChannel:
      QRT_RETURN_IF_ERROR(verify_sub_channel_shape(*this));
      break;
  }
  QRT_RETURN_IF_ERROR(verify_storage(storage));
  if (scales.empty()) return Status::error("per-axis quantized type needs at least one scale");
  QRT_ASSERT(scales.size() == zero_points.size());
  if (kind == ElementKind::kUniformPerAxis && axis < 0) {
    return Status::error("illegal channel axis " + std::to_string(axis) + " (must be >= 0)");
  }
  for (size_t c = 0; c < scales.size(); ++c) {
    const std::string where = kind == ElementKind::kUniformPerAxis    ? " of channel " + std::to_string(c)
                              : kind == ElementKind::kUniformSubChannel ? " of block " + std::to_string(c)
                                                                        : "";
    QRT_RETURN_IF_ERROR(verify_scale(scales[c], float_kind, where));
    if (zero_points[c] < storage.min || zero_points[c] > storage.max) {
      return Status::error("zero point " + std::to_string(zero_points[c]) + where +
                           " is outside the storage bounds [" + std::to_string(storage.min) +
                           ", " + std::to_string(storage.max) + "]");
    }
  }
  return Status::ok();
}

std::string storage_to_string(const QuantStorage& s) {
  std::string out = (s.is_signed ? "i" : "u") + std::to_string(s.width);
  if (!s.has_default_bounds()) {
    out += "<" + std::to_string(s.min) + ":" + std::to_string(s.max) + ">";
  }
  return out;
}

std::string ElementType::to_string() const {
  switch (kind) {
    case ElementKind::kFloat:
      return float_kind_name(float_kind);
    case ElementKind::kInteger: {
      const char* prefix = int_sign == Signedness::kSigned     ? "si"
                           : int_sign == Signedness::kUnsigned ? "ui"
                                                               : "i";
      return prefix + std::to_string(int_width);
    }
    case ElementKind::kAny: {
      std::string s = "!quant.any<" + storage_to_string(storage);
      if (has_expressed) s += std::string(":") + float_kind_name(float_kind);
      return s + ">";
    }
    case ElementKind::kCalibrated:
      return std::string("!quant.calibrated<") + float_kind_name(float_kind) + "<" +
             fmt_double(cal_min) + ":" + fmt_double(cal_max) + ">>";
    case ElementKind::kUniform:
      return "!quant.uniform<" + storage_to_string(storage) + ":" + float_kind_name(float_kind) +
             ", " + quant_params_to_string(scales[0], zero_points[0]) + ">";
    case ElementKind::kUniformPerAxis: {
      std::string s = "!quant.uniform<" + storage_to_string(storage) + ":" +
                      float_kind_name(float_kind) + ":" + std::to_string(axis) + ", {";
      for (size_t c = 0; c < scales.size(); ++c) {
        if (c) s += ",";
        s += quant_params_to_string(scales[c], zero_points[c]);
      }
      return s + "}>";
    }
    case ElementKind::kUniformSubChannel: {
      // As upstream MLIR prints it: `{axis:block, ...}` then the nested parameter tensor,
      // elements separated by ", ".
      std::string s = "!quant.uniform<" + storage_to_string(storage) + ":" + float_kind_name(float_kind) + ":{";
      for (size_t i = 0; i < block_axes.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(block_axes[i]) + ":" + std::to_string(block_sizes[i]);
      }
      s += "}, ";
      const size_t rank = param_dims.size();
      std::vector<int64_t> counter(rank, 0);
      size_t open = 0;
      for (size_t i = 0; i < scales.size(); ++i) {
        if (i) s += ", ";
        while (open < rank) {
          s += "{";
          ++open;
        }
        s += quant_params_to_string(scales[i], zero_points[i]);
        ++counter[rank - 1];
        for (size_t d = rank - 1; d > 0 && counter[d] >= param_dims[d]; --d) {
          counter[d] = 0;
          ++counter[d - 1];
          --open;
          s += "}";
        }
      }
      while (open-- > 0) s += "}";
      return s + ">";
    }
  }
  return "?";
}

Type Type::tensor(std::vector<int64_t> dims, ElementType element) {
  Type t;
  t.is_tensor = true;
  t.dims = std::move(dims);
  t.element = std::move(element);
  return t;
}

Type Type::scalar(ElementType element) {
  Type t;
  t.is_tensor = false;
  t.element = std::move(element);
  return t;
}

bool Type::has_static_shape() const {
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

int64_t Type::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

Status Type::verify() const {
  if (!is_tensor && !dims.empty()) {
    return Status::error("the scalar type " + element.to_string() + " has " + std::to_string(dims.size()) +
                         " dimension(s) [" + dims_to_string(dims) + "]; only tensor types have dimensions");
  }
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < -1) return Status::error("illegal dimension size " + std::to_string(d));
    // Each dimension on its own too: after a 0 the element count no longer bounds the rest.
    if (d > kMaxTensorElements) {
      return Status::error(to_string() + ": dimension size " + std::to_string(d) + " exceeds qrt's limit of 2^48");
    }
    if (d > 0 && count > kMaxTensorElements / d) {
      return Status::error(to_string() + " has more elements than qrt supports (2^48)");
    }
    if (d >= 0) count *= d;
  }
  QRT_RETURN_IF_ERROR(element.verify());
  if (element.kind == ElementKind::kUniformSubChannel) return verify_sub_channel_container();
  if (element.kind != ElementKind::kUniformPerAxis) return Status::ok();
  if (!is_tensor) {
    return Status::error("per-axis quantized type " + element.to_string() +
                         " must be the element type of a tensor, not a scalar");
  }
  if (size_t(element.axis) >= dims.size()) {
    return Status::error("channel axis " + std::to_string(element.axis) +
                         " is out of range for a tensor of rank " + std::to_string(dims.size()) +
                         " (the rank must be greater than the channel axis)");
  }
  const int64_t axis_dim = dims[size_t(element.axis)];
  if (axis_dim >= 0 && size_t(axis_dim) != element.scales.size()) {
    return Status::error("channel axis " + std::to_string(element.axis) + " has size " +
                         std::to_string(axis_dim) + " but the quantized type has " +
                         std::to_string(element.scales.size()) + " scales");
  }
  return Status::ok();
}

Status Type::verify_sub_channel_container() const {
  const ElementType& e = element;
  if (!is_tensor) return Status::error("scalar types may not use sub-channel quantization (" + e.to_string() + ")");
  for (int64_t d : dims) {
    if (d == 0) return Status::error(to_string() + ": a dimension of size zero is not allowed with sub-channel quantization");
  }
  if (e.param_dims.size() != dims.size()) {
    return Status::error("the scales of " + e.to_string() + " have rank " + std::to_string(e.param_dims.size()) +
                         ", which must match the rank of the tensor " + std::to_string(dims.size()));
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t block = e.block_size_along(d);
    if (block == 0) {
      if (e.param_dims[d] != 1) {
        return Status::error("dimension " + std::to_string(d) + " is not quantized, so the scales' extent along it must be 1, got " +
                             std::to_string(e.param_dims[d]));
      }
      continue;
    }
    if (dims[d] < 0) continue;
    if (dims[d] % block != 0) {
      return Status::error("tensor dimension size " + std::to_string(dims[d]) + " at axis " + std::to_string(d) +
                           " must be divisible by the corresponding block size " + std::to_string(block));
    }
    if (dims[d] / block != e.param_dims[d]) {
      return Status::error("dimension size " + std::to_string(e.param_dims[d]) + " of the scales at axis " +
                           std::to_string(d) + " should match (tensor dimension / block size) = " +
                           std::to_string(dims[d] / block));
    }
  }
  return Status::ok();
}

std::string dims_to_string(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += "x";
    s += dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return s;
}

std::string Type::to_string() const {
  if (!is_tensor) return element.to_string();
  std::string s = "tensor<" + dims_to_string(dims);
  if (!dims.empty()) s += "x";
  return s + element.to_string() + ">";
}

void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "qrt internal error: assertion '%s' failed at %s:%d\n", expr, file, line);
  std::abort();
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  std::string prefix;
  if (loc_.line > 0) {
    prefix = (loc_.file.empty() ? std::string("<input>") : loc_.file) + ":" +
             std::to_string(loc_.line) + ":" + std::to_string(loc_.col) + ": ";
  } else if (!loc_.file.empty()) {
    prefix = loc_.file + ": ";
  }
  return prefix + "error: " + message_;
}

}  // namespace qrt
