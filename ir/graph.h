// qrt — the graph IR: values, ops with attributes, one function `@main`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/numerics_profile.h"
#include "ir/status.h"
#include "ir/types.h"

namespace qrt {

/// Bytes one element of `element` occupies in memory: integers and quantized storage use
/// the smallest of 1/2/4/8 bytes that holds the width; floats their natural size.
/// Returns 0 for element kinds without a memory layout (`!quant.calibrated`, `!quant.any`).
unsigned element_byte_size(const ElementType& element);

/// True for builtin integers of 2 to 4 bits (the storage of i4/u4 weights): dense elements of
/// them are packed two per byte, element 2j in the low nibble of byte j and element 2j + 1 in
/// its high nibble (ONNX's and TFLite's int4 order); an odd count leaves the last high nibble 0.
bool is_nibble_packed(const ElementType& element);

/// Bytes of a dense tensor of `type` (static shape) as DenseElements hold it: two elements per
/// byte where is_nibble_packed(), else num_elements × element_byte_size.
size_t dense_byte_size(const Type& type);

/// A dense elements attribute: `dense<[1, 2]> : tensor<2xi8>`, `dense<"0x0102"> : ...`.
/// Elements are stored expanded (never as a splat), little-endian, in the layout given by
/// element_byte_size(); integer elements are sign- or zero-extended by their signedness,
/// except integers of 2 to 4 bits, packed two per byte (is_nibble_packed).
/// The bytes are either owned (`bytes`) or a read-only view into memory kept alive by
/// `view_owner` (weights of a mapped .qrt file, loaded without copying).
struct DenseElements {
  Type type;                   ///< a static tensor of float or builtin integer elements
  std::vector<uint8_t> bytes;  ///< owned data: dense_byte_size(type) bytes
  std::shared_ptr<const void> view_owner;  ///< keeps a view's memory alive (null: owned)
  const uint8_t* view_data = nullptr;      ///< the view's first byte
  size_t view_size = 0;                    ///< the view's size in bytes

  /// The element bytes, owned or viewed.
  const uint8_t* data() const { return view_owner ? view_data : bytes.data(); }
  /// Number of element bytes.
  size_t size() const { return view_owner ? view_size : bytes.size(); }
  /// True when the bytes are a view into memory owned elsewhere.
  bool is_view() const { return view_owner != nullptr; }

  /// Element `i` as an integer (integer element types).
  int64_t int_at(size_t i) const;
  /// Stores the integer `v` at `i` in the owned bytes (integer element types; truncated to
  /// the width).
  void set_int(size_t i, int64_t v);
  /// Owned, zero-filled elements of `type` (static shape).
  static DenseElements zeros(const Type& type);
  /// Element `i` as a double (float element types; exact).
  double float_at(size_t i) const;
  /// True when every element equals the first (printed as a splat).
  bool is_splat() const;
  /// The first float element with a set bit above float_kind_width() (tf32 keeps 19 of
  /// its 32 bits), or -1. Such bits print as nothing, so loaders refuse them.
  int64_t first_element_with_stray_bits() const;
};

/// An attribute value, the subset of MLIR's builtin attributes qrt uses.
struct Attribute {
  /// Which alternative is held.
  enum class Kind : uint8_t { kUnit, kBool, kInt, kFloat, kString, kArray, kDense };
  Kind kind = Kind::kUnit;
  bool b = false;                  ///< kBool
  int64_t i = 0;                   ///< kInt
  double f = 0.0;                  ///< kFloat
  ElementType scalar_type;         ///< kInt / kFloat: the `: i64` / `: f32` suffix type
  std::string s;                   ///< kString
  std::vector<Attribute> array;    ///< kArray
  DenseElements dense;             ///< kDense

  /// An integer attribute `v : i64`.
  static Attribute make_int(int64_t v);
  /// A float attribute `v : f64` (or of `kind`).
  static Attribute make_float(double v, FloatKind kind = FloatKind::kF64);
  /// A string attribute.
  static Attribute make_string(std::string v);
  /// An array of integers `[1, 2]`.
  static Attribute make_int_array(const std::vector<int64_t>& v);
  /// A dense elements attribute.
  static Attribute make_dense(DenseElements v);
  /// MLIR text form of the attribute.
  std::string to_string() const;
  /// Short name of the kind for diagnostics ("integer", "float", ...).
  const char* kind_name() const;
};

/// The ops qrt knows; see docs/ops.md.
enum class OpKind : uint8_t {
  kQCast, kDCast, kSCast, kConstant, kAdd, kMul, kMatmul, kRelu, kClamp, kReshape, kRequantize,
  kConv2d, kMaxPool2d, kAvgPool2d, kTranspose, kConcat, kPad, kSoftmax, kLogistic, kMean,
  kDynamicQuantize, kStats, kFakeQuant,
  // Float/integer math of transformer graphs (ops_math.cpp).
  kSub, kDiv, kPow, kMax, kMin, kEqual, kLess, kGreater, kNot, kWhere, kSqrt, kReciprocal, kExp, kTanh,
  kErf, kNeg, kGelu, kCast, kLayerNorm, kReduceSum, kReduceMax, kGather, kSlice, kBroadcastTo, kShape,
  kResize,
  // Rounding and sign functions of StableHLO / TFLite / ONNX graphs (ops_math.cpp).
  kAbs, kSign, kFloor, kCeil, kRoundEven, kRoundAway, kRsqrt,
  // Logarithms, expm1, trigonometric functions and cube root (ops_math.cpp).
  kLog, kLog1p, kExpm1, kSin, kCos, kCbrt,
  // Transposed convolution (ops_nn.cpp).
  kConvTranspose2d,
  // The index of the largest / smallest element along an axis (ops_math.cpp).
  kArgMax, kArgMin,
  // Elements of data at indices along one axis, the other coordinates the index's (ops_math.cpp).
  kGatherElements,
  // The smallest element and the product over axes (ops_math.cpp; ONNX ReduceMin / ReduceProd).
  kReduceMin, kReduceProd,
  // Running sums along an axis, and the remainder of a division (ops_math.cpp; ONNX CumSum, Mod).
  kCumSum, kMod,
  // The indices of the k largest or smallest elements along an axis (ops_math.cpp; ONNX TopK).
  kTopK,
  // Slices of updates written at index tuples into a copy of data (ops_math.cpp; ONNX ScatterND).
  kScatterNd,
  // Slices of data at index tuples, after batch_dims shared leading dimensions (ops_math.cpp;
  // ONNX GatherND).
  kGatherNd,
  // Inverse trigonometric and hyperbolic functions (ops_math.cpp; ONNX Asin ... Atanh).
  kAsin, kAcos, kAtan, kAsinh, kAcosh, kAtanh,
  // Sampling at normalized grid positions (ops_nn.cpp; ONNX GridSample).
  kGridSample,
};

/// An SSA value: a function argument or an op result.
struct Value {
  Type type;             ///< its type
  std::string name;      ///< SSA name without `%` (may be empty: printer numbers it)
  int producer = -1;     ///< index of the defining op, -1 for function arguments
  SourceLoc loc;         ///< where it was defined
};

/// One operation.
struct Op {
  OpKind kind = OpKind::kConstant;
  std::vector<int> operands;  ///< value indices
  std::vector<int> results;   ///< value indices
  std::vector<std::pair<std::string, Attribute>> attrs;  ///< sorted by name on insert
  SourceLoc loc;              ///< where the op starts

  /// The attribute called `name`, or nullptr.
  const Attribute* attr(const std::string& name) const;
  /// Sets (or replaces) attribute `name`, keeping the list sorted like MLIR's dictionary.
  void set_attr(const std::string& name, Attribute value);
};

/// A graph: one function `@name` with arguments, ops in order, and returned values.
struct Graph {
  std::string name = "main";  ///< function symbol name (without `@`)
  std::vector<Value> values;  ///< all values
  std::vector<Op> ops;        ///< ops in program order (operands defined before use)
  std::vector<int> inputs;    ///< value indices of the arguments
  std::vector<int> outputs;   ///< value indices returned
  SourceLoc return_loc;       ///< location of the return op
  /// Whose formulas evaluate it (ir/numerics_profile.h); recorded in the text form as the
  /// module attribute `qrt.numerics` and in .qrt files.
  NumericsProfile numerics = NumericsProfile::kDefault;

  /// Adds a function argument and returns its value index.
  int add_input(Type type, std::string name = "");
  /// Appends an op whose results have `result_types`; returns the op index. Nothing is
  /// verified here: call verify_graph() when the graph is complete.
  int add_op(OpKind kind, std::vector<int> operands, const std::vector<Type>& result_types,
             std::vector<std::pair<std::string, Attribute>> attrs = {}, SourceLoc loc = {});
  /// The first result value of op `op_index`.
  int result(int op_index) const { return ops[size_t(op_index)].results.at(0); }
  /// Index of the input named `name`, or -1.
  int find_input(const std::string& name) const;
};

/// Moves the owned bytes of every dense attribute of at least `min_bytes` into shared,
/// immutable storage (the attribute becomes a view of it), so that copies of the graph, which
/// every pass makes, share the weights instead of copying them. The values do not change.
void share_dense_attributes(Graph& graph, size_t min_bytes = 1024);

/// Checks the whole graph: every value's type (including per-axis integrity), SSA order,
/// and each op's own rules (operand/result counts and types, attributes, shapes).
/// The error is located at the offending op and names it, e.g. `'quant.qcast' op ...`.
Status verify_graph(const Graph& graph);

}  // namespace qrt
