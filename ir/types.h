// qrt — element and value types: floats, integers and the MLIR `quant` types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/float_format.h"
#include "ir/status.h"

namespace qrt {

/// Signedness of a builtin integer type: `i8` (signless), `si8`, `ui8`.
enum class Signedness : uint8_t { kSignless, kSigned, kUnsigned };

/// What an ElementType is.
enum class ElementKind : uint8_t {
  kFloat,            ///< f16 / bf16 / f32 / f64
  kInteger,          ///< builtin integer iN / siN / uiN
  kUniform,          ///< !quant.uniform per-layer
  kUniformPerAxis,   ///< !quant.uniform per-axis
  kCalibrated,       ///< !quant.calibrated<f32<min:max>>
  kAny,              ///< !quant.any<storage(:expressed)?>
  /// !quant.uniform sub-channel (block-wise): `i4:f32:{1:32}, {{s:z, ...}, ...}`. One
  /// (scale, zero point) pair per block; the blocks tile the tensor, `block_sizes[i]` elements
  /// along dimension `block_axes[i]` and the whole extent along every other dimension.
  kUniformSubChannel,
};

/// Storage of a quantized type: `i8`, `u16<0:1023>`. Bounds are inclusive.
struct QuantStorage {
  unsigned width = 8;     ///< 2..32 bits
  bool is_signed = true;  ///< `i`/`si` vs `u`/`ui`
  int64_t min = -128;     ///< storage min (defaults to the full range)
  int64_t max = 127;      ///< storage max (defaults to the full range)

  /// Full-range storage of `width` bits: [-2^(w-1), 2^(w-1) - 1] or [0, 2^w - 1].
  static QuantStorage full_range(unsigned width, bool is_signed);
  /// The full-range minimum of a `width`-bit integer of this signedness.
  int64_t full_min() const;
  /// The full-range maximum of a `width`-bit integer of this signedness.
  int64_t full_max() const;
  /// True when min/max are the full range (and so are omitted when printing).
  bool has_default_bounds() const { return min == full_min() && max == full_max(); }
  /// Compares all fields.
  bool operator==(const QuantStorage&) const = default;
};

/// The element type of a tensor (or the type of a scalar value).
///
/// Quantized element types relate expressed (real) and stored values by
///   expressed = (stored - zero_point) * scale
/// where a per-axis type holds one (scale, zero_point) pair per index along `axis`.
struct ElementType {
  ElementKind kind = ElementKind::kFloat;
  FloatKind float_kind = FloatKind::kF32;  ///< kFloat's kind; expressed type of quant types
  bool has_expressed = true;               ///< false only for `!quant.any<i8>`
  unsigned int_width = 32;                 ///< kInteger width
  Signedness int_sign = Signedness::kSignless;  ///< kInteger signedness
  QuantStorage storage;                    ///< kUniform, kUniformPerAxis, kAny
  int32_t axis = -1;                       ///< kUniformPerAxis channel axis
  std::vector<double> scales;              ///< one (per-layer) or per-channel scales
  std::vector<int64_t> zero_points;        ///< same length as scales
  std::vector<int32_t> block_axes;         ///< kUniformSubChannel: the quantized dimensions
  std::vector<int64_t> block_sizes;        ///< kUniformSubChannel: block size along each of them
  std::vector<int64_t> param_dims;         ///< kUniformSubChannel: shape of scales / zero points
  double cal_min = 0.0;                    ///< kCalibrated min
  double cal_max = 0.0;                    ///< kCalibrated max

  /// A float element type.
  static ElementType make_float(FloatKind kind);
  /// A builtin integer element type.
  static ElementType make_int(unsigned width, Signedness sign = Signedness::kSignless);
  /// A per-layer `!quant.uniform`.
  static ElementType make_uniform(QuantStorage storage, FloatKind expressed, double scale,
                                  int64_t zero_point);
  /// A per-axis `!quant.uniform`.
  static ElementType make_per_axis(QuantStorage storage, FloatKind expressed, int32_t axis,
                                   std::vector<double> scales, std::vector<int64_t> zero_points);
  /// A sub-channel `!quant.uniform`: `scales` and `zero_points` row-major over `param_dims`.
  static ElementType make_sub_channel(QuantStorage storage, FloatKind expressed, std::vector<int32_t> block_axes,
                                      std::vector<int64_t> block_sizes, std::vector<int64_t> param_dims,
                                      std::vector<double> scales, std::vector<int64_t> zero_points);
  /// A `!quant.calibrated<expressed<min:max>>`.
  static ElementType make_calibrated(FloatKind expressed, double min, double max);
  /// A `!quant.any<storage:expressed>`.
  static ElementType make_any(QuantStorage storage, bool has_expressed, FloatKind expressed);

  /// True for kFloat.
  bool is_float() const { return kind == ElementKind::kFloat; }
  /// True for kInteger.
  bool is_integer() const { return kind == ElementKind::kInteger; }
  /// True for any `!quant.*` type.
  bool is_quant() const { return kind >= ElementKind::kUniform; }
  /// True for both kinds of `!quant.uniform`.
  bool is_uniform() const {
    return kind == ElementKind::kUniform || kind == ElementKind::kUniformPerAxis;
  }
  /// True for a sub-channel (block-wise) `!quant.uniform`.
  bool is_sub_channel() const { return kind == ElementKind::kUniformSubChannel; }
  /// True for every `!quant.uniform` form: per-layer, per-axis and sub-channel.
  bool is_any_uniform() const { return is_uniform() || is_sub_channel(); }
  /// The block size along dimension `dim` of a sub-channel type (0: not a quantized dimension).
  int64_t block_size_along(size_t dim) const;
  /// The element type of this type's tensor transposed by `perm` (result dimension i is
  /// operand dimension perm[i]): a per-axis channel axis and sub-channel block axes move with
  /// their dimensions, and a sub-channel parameter tensor is transposed with them.
  ElementType permuted(const std::vector<int64_t>& perm) const;
  /// Number of (scale, zero point) pairs: 1 for per-layer.
  size_t num_channels() const { return scales.size(); }

  /// Checks every rule that applies to the element type on its own (storage width 2..32,
  /// bounds inside the storage range and min < max, zero points inside the bounds, scales
  /// finite and > 0 in the expressed type, calibrated min < max). The parser and the
  /// builder both call it. The message names the rule and the value.
  Status verify() const;

  /// The canonical MLIR spelling (what `mlir-opt` prints).
  std::string to_string() const;

  /// Compares all fields.
  bool operator==(const ElementType&) const = default;
};

/// The largest element count (and so dimension) a tensor type may have (Type::verify's bound):
/// it keeps every size computation free of overflow.
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 48;

/// A ranked tensor type or a scalar. Dimensions of -1 are dynamic (`?`).
struct Type {
  bool is_tensor = true;        ///< false: a scalar of `element`
  std::vector<int64_t> dims;    ///< empty for rank-0 tensors and scalars
  ElementType element;          ///< the element type

  /// A ranked tensor type.
  static Type tensor(std::vector<int64_t> dims, ElementType element);
  /// A scalar type.
  static Type scalar(ElementType element);

  /// Rank (0 for scalars).
  size_t rank() const { return dims.size(); }
  /// True when no dimension is dynamic.
  bool has_static_shape() const;
  /// Number of elements, or -1 when some dimension is dynamic.
  int64_t num_elements() const;

  /// element.verify() plus the per-axis integrity rules of the seed: per-axis only inside
  /// a tensor, rank > axis, and a static axis dimension equal to the number of scales; and
  /// upstream MLIR's sub-channel rules: only inside a tensor, no zero-sized dimension, the
  /// scales' rank equal to the tensor's, every quantized dimension below the rank and a
  /// multiple of its block size, and the scales' extent along every dimension equal to
  /// (dimension / block size), or 1 along a dimension that is not quantized.
  Status verify() const;

  /// The sub-channel half of verify(): the container rules of upstream MLIR.
  Status verify_sub_channel_container() const;

  /// The canonical MLIR spelling, e.g. `tensor<2x?x!quant.uniform<i8:f32, 5.000000e-01>>`.
  std::string to_string() const;

  /// Compares all fields.
  bool operator==(const Type&) const = default;
};

/// `i8`, `u16<0:1023>` — the storage part as MLIR prints it inside a quant type.
std::string storage_to_string(const QuantStorage& storage);
/// Formats a list of dimensions as `2x?x4` (no trailing `x`).
std::string dims_to_string(const std::vector<int64_t>& dims);

/// Parses one type (`tensor<...>`, `f32`, `!quant.uniform<...>`, ...) from `text`; the whole
/// text must be consumed. Errors carry 1-based columns relative to `text`.
Result<Type> parse_type(const std::string& text);

}  // namespace qrt
