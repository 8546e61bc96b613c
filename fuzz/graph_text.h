// Writing qrt MLIR text for the graph generator: element types, tensor types, values, ops and
// constants. Only strings; the C API parses them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qrt_fuzz {

using Shape = std::vector<int64_t>;

/// An element type: f32 (or bf16 / f16 inside a float region), a plain integer (i32 for
/// biases), or a `!quant.uniform` (per tensor, or per axis with one scale and zero point per
/// index along `axis`).
struct Elem {
  enum Kind { kF32, kQuant, kBF16, kF16 } kind = kQuant;
  bool is_signed = true;
  int bits = 8;
  int64_t qmin = -128, qmax = 127;  ///< storage bounds
  bool narrow = false;              ///< print the bounds (`i8<-127:127>`)
  std::vector<double> scales;       ///< one (per tensor) or one per channel
  std::vector<int64_t> zps;         ///< as scales
  int axis = -1;                    ///< channel axis of a per-axis type, else -1

  bool per_axis() const { return axis >= 0; }
  bool is_float() const { return kind == kF32; }  ///< f32 (bf16 and f16 stay inside their regions)
  /// The storage's full range for `bits` and `is_signed`.
  static Elem storage(bool is_signed, int bits);
  /// The same quantization with a per-tensor scale and zero point.
  static Elem per_tensor(Elem storage, double scale, int64_t zp);
  /// f32.
  static Elem f32();
  /// bf16 (`bf16` true) or f16.
  static Elem half(bool bf16);
};

/// A value of the graph: its SSA name, static shape and element type.
struct Val {
  std::string name;
  Shape shape;
  Elem elem;
};

/// Elements in a shape.
int64_t num_elements(const Shape& shape);
/// A scale as printed, read back: what qrt's parser will hold.
double printed_scale(double scale);
/// `!quant.uniform<...>` or `f32`.
std::string elem_text(const Elem& elem);
/// `tensor<2x3x...>`.
std::string type_text(const Shape& shape, const Elem& elem);
/// A float attribute value, e.g. `1.500000e+00 : f32`.
std::string f32_attr(double value);
/// `[a, b, c]`.
std::string list_text(const std::vector<int64_t>& values);

/// The body of one `func.func @main` under construction.
class GraphText {
 public:
  /// Adds a function argument.
  Val add_input(const Shape& shape, const Elem& elem);
  /// Appends `%r = "op"(operands) {attrs} : (types) -> result` and returns the result.
  Val emit(const std::string& op, const std::vector<Val>& operands, const std::string& attrs,
           const Shape& shape, const Elem& elem);
  /// A constant holding `stored` (stored integers of a quant type, or an i32 tensor).
  Val constant_ints(const Shape& shape, const Elem& elem, const std::vector<int64_t>& stored);
  /// An f32 constant.
  Val constant_f32(const Shape& shape, const std::vector<float>& values);
  /// A float constant of `elem` (f32, bf16 or f16) from its little-endian element bytes.
  Val constant_float_bytes(const Shape& shape, const Elem& elem, const std::vector<uint8_t>& bytes);
  /// The whole function returning `results`.
  std::string finish(const std::vector<Val>& results) const;
  /// How many inputs were added.
  size_t num_inputs() const { return inputs_.size(); }

 private:
  std::vector<Val> inputs_;
  std::string body_;
  int next_id_ = 0;
};

}  // namespace qrt_fuzz
