// qrt — internal: the ONNX importer's state and node handlers, shared by onnx_importer.cpp
// (float and structural ops) and onnx_quant_ops.cpp (quantization ops).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ir/graph.h"

namespace qrt::importers::onnx_detail {

/// One ONNX value: a qrt value, and for constants the data itself (materialized as a
// qrt.constant only when an op consumes it as a tensor).
struct OnnxValue {
  int value = -1;
  bool is_const = false;
  DenseElements dense;
};

/// Imports one ModelProto into a Graph.
class Importer {
 public:
  Importer(std::string name, const std::map<std::string, DenseElements>& frozen)
      : name_(std::move(name)), frozen_(frozen) {}
  Result<Graph> run(const onnx::ModelProto& model);

 private:
  using Attrs = std::map<std::string, const onnx::AttributeProto*>;

  Status error(const onnx::NodeProto& node, const std::string& message, ErrorCode code = ErrorCode::kUnsupported) const {
    const std::string who = node.name().empty() ? "#" + std::to_string(node_index_) : "'" + node.name() + "'";
    return Status::error("node " + who + " (" + node.op_type() + "): " + message).with_code(code);
  }
  /// Zeros of `type` for a constant the importer builds from sizes declared in the file (an
  /// identity, a mask, an index grid), refused naming the node before anything is allocated
  /// when it would take more than kMaxBuiltConstantBytes (docs/importers.md).
  Result<DenseElements> built_constant(const onnx::NodeProto& node, const Type& type, const std::string& what) const {
    // Declared types hold at most 2^48 elements of at most 8 bytes: the product fits.
    const int64_t bytes = type.num_elements() * int64_t(element_byte_size(type.element));
    if (bytes > kMaxBuiltConstantBytes) {
      return error(node, what + " would be a constant " + type.to_string() + " of " + std::to_string(bytes) +
                             " bytes, over qrt's limit of 256 MiB for constants the importer builds");
    }
    return DenseElements::zeros(type);
  }
  static constexpr int64_t kMaxBuiltConstantBytes = int64_t(1) << 28;
  std::string ssa_name(const std::string& onnx_name);
  Result<int> value(const onnx::NodeProto& node, int input);
  const DenseElements* constant(const onnx::NodeProto& node, int input) const;
  const Type& type(int value) const { return g_.values[size_t(value)].type; }
  int emit(OpKind kind, std::vector<int> operands, const Type& result,
           std::vector<std::pair<std::string, Attribute>> attrs = {});
  void bind(const onnx::NodeProto& node, int output, int value);

  Result<int64_t> attr_int(const onnx::NodeProto& node, const Attrs& a, const char* name, int64_t fallback);
  Result<float> attr_float(const onnx::NodeProto& node, const Attrs& a, const char* name, float fallback);
  Result<std::vector<int64_t>> attr_ints(const onnx::NodeProto& node, const Attrs& a, const char* name,
                                         std::vector<int64_t> fallback);
  Result<std::string> attr_string(const onnx::NodeProto& node, const Attrs& a, const char* name,
                                  std::string fallback);

  Status import_node(const onnx::NodeProto& node);
  Result<ElementType> make_quant_type(const onnx::NodeProto& node, const ElementType& storage,
                                      const Type& data_type, const DenseElements* scale,
                                      const DenseElements* zp, int64_t axis);
  /// Constant quantization parameters of a QLinear* / *Integer node (absent ones null).
  struct QLinearParams {
    const DenseElements *x_scale = nullptr, *x_zp = nullptr, *w_scale = nullptr, *w_zp = nullptr;
    const DenseElements *y_scale = nullptr, *y_zp = nullptr, *bias = nullptr;
  };
  /// make_quant_type, or make_block_quant_type when `block_size` > 0 (opset 21).
  Result<ElementType> quant_type(const onnx::NodeProto& node, const ElementType& storage, const Type& data_type,
                                 const DenseElements* scale, const DenseElements* zp, int64_t axis, int64_t block_size);
  /// The sub-channel type of QuantizeLinear/DequantizeLinear with `block_size` (opset 21):
  /// blocks of `block_size` along `axis`, one scale (and zero point) per index elsewhere.
  Result<ElementType> make_block_quant_type(const onnx::NodeProto& node, const ElementType& storage,
                                            const Type& data_type, const DenseElements* scale,
                                            const DenseElements* zp, int64_t axis, int64_t block_size);
  /// com.microsoft MatMulNBits: a hybrid matmul with block-quantized packed weights.
  Status matmul_nbits(const onnx::NodeProto& node, const Attrs& a);
  Result<QLinearParams> qlinear_params(const onnx::NodeProto& node, bool integer_only);
  Result<const DenseElements*> param(const onnx::NodeProto& node, int i, const char* what);
  Result<Type> input_type(const onnx::NodeProto& node, int input);
  Result<ElementType> storage_of(const onnx::NodeProto& node, int input);
  Result<int> quantized_value(const onnx::NodeProto& node, int input, const ElementType& q);
  int to_storage_int(int quantized);
  Status qlinear_matmul(const onnx::NodeProto& node, const Attrs& a, bool integer_only);
  Status qlinear_conv(const onnx::NodeProto& node, const Attrs& a, bool integer_only);
  /// The com.microsoft QOperator ops, as DequantizeLinear -> float op -> QuantizeLinear.
  Status qoperator(const onnx::NodeProto& node, const Attrs& a);
  Status quantize_linear(const onnx::NodeProto& node, const Attrs& a);
  Status dequantize_linear(const onnx::NodeProto& node, const Attrs& a);
  Status conv(const onnx::NodeProto& node, const Attrs& a);
  /// ConvTranspose (onnx_conv_transpose.cpp).
  Status conv_transpose(const onnx::NodeProto& node, const Attrs& a);
  Result<std::vector<std::pair<std::string, Attribute>>> conv_attrs(const onnx::NodeProto& node, const Attrs& a,
                                                                    const Type& x, const Type& w);
  Status pool(const onnx::NodeProto& node, const Attrs& a, OpKind kind, bool global);
  /// Adds to `pads`' ends the rows and columns ceil_mode = 1 adds to the output.
  Status ceil_mode_pads(const onnx::NodeProto& node, OpKind kind, bool include_pad, const Type& tx,
                        const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides, std::vector<int64_t>& pads);
  /// 1-D and 3-D Conv, ConvInteger, QLinearConv, ConvTranspose (1-D), MaxPool, AveragePool and
  /// the global pools, as qrt's 2-D ops (onnx_spatial_ops.cpp); false for other ops and ranks.
  Result<bool> spatial_op(const onnx::NodeProto& node, const Attrs& a);
  /// A 1-D op on [N, C, L] as its 2-D form on [N, C, 1, L]; `weight` is the filter's input index
  /// (-1: none).
  Status lift_1d(const onnx::NodeProto& node, const Attrs& a, int weight);
  /// A 3-D Conv, ConvInteger or QLinearConv as one 2-D convolution over gathered depth windows.
  Status conv_3d(const onnx::NodeProto& node, const Attrs& a);
  /// A 3-D MaxPool or AveragePool: the 2-D pool over (H, W), then the depth windows reduced.
  Status pool_3d(const onnx::NodeProto& node, const Attrs& a);
  /// Refuses a 3-D op's input that pad_depth cannot move: integers other than 8, 16 or 32 bits.
  Status check_depth_input(const onnx::NodeProto& node, const Type& t);
  /// Pads axis 2 of `x` by `before` and `after` elements of real value `fill` (float, quantized,
  /// or 8/16/32-bit integers, which move as a quantized type of scale 1).
  int pad_depth(int x, int64_t before, int64_t after, double fill);
  /// Gathers the depth windows of `x` [N, C, D, ...]: [N, C, out, k, ...], window o's tap t
  /// reading slice o·stride + t·dilation.
  int gather_depth_windows(int x, int64_t out, int64_t k, int64_t stride, int64_t dilation);
  /// Gathers [N, C, out, k, ...] from `x` [N, C, D, ...]: window o's tap t reads slice
  /// index[o·k + t].
  int gather_depth(int x, const std::vector<int64_t>& index, int64_t out, int64_t k);
  /// [N, C, Do, kd, H, W] as [N·Do, kd·C, H, W], channels ordered [group, tap, C/group].
  int stack_depth_taps(int gathered, int64_t group);
  /// An error unless out_d·kd taps fit the gather's index table (kMaxDepthTaps) and N·Do and
  /// kd·C fit a dimension.
  Status check_depth_stacking(const onnx::NodeProto& node, int64_t n, int64_t c, int64_t out_d, int64_t kd);
  /// A 2-D result [N·Do, O, Ho, Wo] as the 3-D [N, O, Do, Ho, Wo].
  int unstack_depth(int y, int64_t n, int64_t out_d);
  /// A 3-D ConvTranspose: the depth taps gathered (zero slices where no input reaches) and
  /// stacked as channels of one 2-D ConvTranspose (onnx_conv_transpose.cpp).
  Status conv_transpose_3d(const onnx::NodeProto& node, const Attrs& a);
  /// f(v), or, when v = dcast(x_q) of a per-tensor x_q, dcast(f(x_q)): data movement on stored
  /// values, so that fold-qdq sees the dcast next to the op that reads it.
  int through_dcast(int v, const std::function<int(int)>& f);
  /// The filter of `node`'s input `input` as a 2-D one of `dims`, element i taken from element
  /// src_of(i): an initializer, a constant or the dcast of one is rearranged into a constant;
  /// another value gets `ops` (the same rearrangement as transposes and reshapes).
  Result<OnnxValue> filter_2d(const onnx::NodeProto& node, int input, const std::vector<int64_t>& dims,
                              const std::function<int64_t(int64_t)>& src_of, const std::function<int(int)>& ops);
  /// Imports `part` (a 2-D node this importer built) and returns the value of its first output.
  Result<int> import_part(const onnx::NodeProto& part);
  Status gemm(const onnx::NodeProto& node, const Attrs& a);
  Status reshape_like(const onnx::NodeProto& node, std::vector<int64_t> target);
  /// Folds a shape sub-graph node whose inputs are constants (or a static shape) into a
  /// constant (onnx_fold.cpp); false when it does not apply.
  Result<bool> fold_node(const onnx::NodeProto& node, const Attrs& a);
  /// LayerNormalization's Mean and InvStdDev outputs (onnx_math_ops.cpp).
  Status layer_norm_statistics(const onnx::NodeProto& node, const Attrs& a, int x, int64_t axis, float eps,
                               bool want_mean, bool want_inv_std);
  /// The math and data-movement ops of onnx_math_ops.cpp; false for other ops.
  Result<bool> math_op(const onnx::NodeProto& node, const Attrs& a);
  /// The activations and normalizations of onnx_activation_ops.cpp; false for other ops.
  Result<bool> activation_op(const onnx::NodeProto& node, const Attrs& a);
  /// The data-movement and logic compositions of onnx_layout_ops.cpp (Pad, DepthToSpace,
  /// SpaceToDepth, Dropout, And, Or, Xor, CastLike); false for other ops.
  Result<bool> layout_op(const onnx::NodeProto& node, const Attrs& a);
  /// The compositions of onnx_composite_ops.cpp (PRelu, Softplus, Softsign, Shrink, Sinh, Cosh,
  /// Tan, IsNaN, IsInf, Hardmax, OneHot, Tile, InstanceNormalization, LRN, EyeLike, TopK, CumSum,
  /// Mod, ScatterND, ScatterElements, GatherND, Einsum); false for other ops.
  Result<bool> composite_op(const onnx::NodeProto& node, const Attrs& a);
  /// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as gathers, selects and reductions
  /// (onnx_loss_ops.cpp); false for other ops.
  Result<bool> loss_op(const onnx::NodeProto& node, const Attrs& a);
  /// Einsum as reduce_sums, transposes, reshapes and batched matmuls (onnx_einsum.cpp).
  Status einsum(const onnx::NodeProto& node, const Attrs& a);
  /// ONNX Pad (every mode) as qrt.pad, or slices, broadcasts and concats (onnx_layout_ops.cpp).
  Status pad(const onnx::NodeProto& node, const Attrs& a);
  /// A qrt.slice of `x` along `axis` only (ONNX Slice's start, end and step rules).
  int slice_axis(int x, size_t axis, int64_t start, int64_t end, int64_t step);
  /// A qrt.concat of `parts` along `axis`.
  int concat_axis(const std::vector<int>& parts, size_t axis);
  /// A rank-0 constant `v` of float element type `e`.
  int float_scalar(double v, const ElementType& e);
  /// LeakyRelu of float value `x`: relu(x) + alpha · min(x, 0).
  int leaky_relu(int x, float alpha);
  /// The integers of constant input `i`, `fallback` when absent, else an error naming `what`.
  Result<std::vector<int64_t>> const_ints(const onnx::NodeProto& node, int i, const char* what,
                                          std::vector<int64_t> fallback);
  /// MatMulInteger whose A zero point is a run-time value (DynamicQuantizeLinear's).
  Status matmul_integer_runtime_zp(const onnx::NodeProto& node);
  /// ConvInteger with the input's zero point computed at run time (DynamicQuantizeLinear).
  Status conv_integer_runtime_zp(const onnx::NodeProto& node, const Attrs& a);
  /// Binds the node's output to acc - cast<i32>(zp) · sums: the run-time zero point's
  /// correction of an integer product `acc` (shaped `dims`) by the constant i32 `sums`.
  void bind_zero_point_correction(const onnx::NodeProto& node, int acc, const std::vector<int64_t>& dims, int zp,
                                  const DenseElements& sums);

  std::string name_;
  Graph g_;
  std::map<std::string, OnnxValue> values_;
  std::set<std::string> used_names_;
  int64_t opset_ = 0;
  int node_index_ = 0;  // position of the node being imported, for unnamed nodes
  const std::map<std::string, DenseElements>& frozen_;
};

/// Appends the INTS attribute `name` = `v` to `n`.
inline void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* attr = n.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) attr->add_ints(x);
}

/// `node` with its attributes and outputs cleared and its output renamed "<output>::2d": the
/// 2-D node the 1-D and 3-D forms build and import.
inline onnx::NodeProto part_of(const onnx::NodeProto& node) {
  onnx::NodeProto part = node;
  part.clear_attribute();
  part.clear_output();
  part.add_output(node.output(0) + "::2d");
  return part;
}

/// The most depth taps (output depths x taps) a 1-D gather index table of the 3-D forms holds.
constexpr int64_t kMaxDepthTaps = int64_t(1) << 24;

/// Resolves ONNX auto_pad (SAME_UPPER / SAME_LOWER / VALID / NOTSET) into explicit pads, all
/// begins then all ends, for in_hw.size() spatial dimensions ([top, left, bottom, right] in 2-D).
Result<std::vector<int64_t>> resolve_pads(const std::string& auto_pad, std::vector<int64_t> pads,
                                          const std::vector<int64_t>& in_hw, const std::vector<int64_t>& k,
                                          const std::vector<int64_t>& s, const std::vector<int64_t>& d);

}  // namespace qrt::importers::onnx_detail
