// qrt — element and value types (see types.h).
#include "ir/types.h"

#include <cmath>
#include <cstdio>

namespace qrt {

QuantStorage QuantStorage::full_range(unsigned width, bool is_signed) {
  QuantStorage s;
  s.width = width;
  s.is_signed = is_signed;
  s.min = s.full_min();
  s.max = s.full_max();
  return s;
}

int64_t QuantStorage::full_min() const {
  return is_signed ? -(int64_t(1) << (width - 1)) : 0;
}

int64_t QuantStorage::full_max() const {
  return is_signed ? (int64_t(1) << (width - 1)) - 1 : (int64_t(1) << width) - 1;
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
  }
  QRT_RETURN_IF_ERROR(verify_storage(storage));
  if (scales.empty()) return Status::error("per-axis quantized type needs at least one scale");
  QRT_ASSERT(scales.size() == zero_points.size());
  if (kind == ElementKind::kUniformPerAxis && axis < 0) {
    return Status::error("illegal channel axis " + std::to_string(axis) + " (must be >= 0)");
  }
  for (size_t c = 0; c < scales.size(); ++c) {
    const std::string where =
        kind == ElementKind::kUniformPerAxis ? " of channel " + std::to_string(c) : "";
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
  // Bounding the element count keeps every size computation free of overflow.
  constexpr int64_t kMaxElements = int64_t(1) << 48;
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < -1) return Status::error("illegal dimension size " + std::to_string(d));
    if (d > 0 && count > kMaxElements / d) {
      return Status::error(to_string() + " has more elements than qrt supports (2^48)");
    }
    if (d >= 0) count *= d;
  }
  QRT_RETURN_IF_ERROR(element.verify());
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
