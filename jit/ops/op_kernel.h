// qrt — the operator layer's unit: a kernel bound to one graph op (XNNPACK's operator), and
// the families that build them. A family decides in two steps, like oneDNN's primitive
// descriptors: prepare() does the ISA-free analysis once (constants folded, quantization
// resolved, exactness proven), check() asks cheaply whether one backend can run the prepared
// op (traits and the backend's why_not, nothing generated), and create() packs for that
// backend's traits and generates its micro-kernels.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "jit/core/backend.h"
#include "jit/core/parallel.h"
#include "jit/core/tensor.h"
#include "jit/ops/accumulator_sink.h"
#include "jit/ops/row_producer.h"

namespace qrt::jit {

/// A generated kernel bound to one op of one graph (constants prepacked). Immutable after
/// creation: any number of threads may run it at once.
class OpKernel {
 public:
  /// `result_type`: the op's declared result type (dimensions may be dynamic).
  explicit OpKernel(Type result_type) : result_type_(std::move(result_type)) {}
  virtual ~OpKernel() = default;
  /// The result's dimensions for operands shaped as at run time; errors name the op.
  virtual Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const = 0;
  /// Computes the result into `out` (of the result type with result_dims(); it may be a view
  /// into an arena), spreading the work over `parallel`. Results do not depend on the number
  /// of threads.
  virtual Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const = 0;
  /// Ops with several results (qrt.dynamic_quantize): computes each into `results` (typed and
  /// shaped as the op declares). The default serves single-result kernels.
  virtual Status run_results_into(const std::vector<const Tensor*>& operands, const std::vector<Tensor*>& results,
                                  Parallel& parallel) const {
    return run_into(operands, *results[0], parallel);
  }
  /// Whether run_into_sink serves: the kernel writes int32 accumulators with the channels
  /// innermost and can hand them over block by block.
  virtual bool takes_sink() const { return false; }
  /// As run_into, but every block of accumulators goes to `sink` instead of `out` (typed and
  /// shaped as run_into's; a kernel may still use its bytes where it cannot block, e.g. a
  /// GEMM split over weight panels). Only where takes_sink().
  virtual Status run_into_sink(const std::vector<const Tensor*>& operands, Tensor& out, const AccumulatorSink& sink,
                               Parallel& parallel) const {
    (void)operands, (void)out, (void)sink, (void)parallel;
    return Status::error(describe() + ": hands no accumulators to a sink");
  }
  /// Where the kernel can compute its result one image row at a time on the calling thread
  /// (row_producer.h; 1x1 convolutions on the GEMM with NHWC 8-bit results); null otherwise.
  virtual const RowProducer* row_producer() const { return nullptr; }
  /// Whether run_reading_rows serves: the kernel reads operand 0 (NHWC, 8-bit) one image row
  /// at a time, each row once per task (the depthwise rows path).
  virtual bool reads_operand_rows() const { return false; }
  /// As run_into, but operand 0's rows are made by `rows`; operands[0] carries only the type
  /// and dims (its bytes are not read). Only where reads_operand_rows().
  virtual Status run_reading_rows(const std::vector<const Tensor*>& operands, const ProducedRows& rows, Tensor& out,
                                  Parallel& parallel) const {
    (void)operands, (void)rows, (void)out, (void)parallel;
    return Status::error(describe() + ": does not read its input by rows");
  }
  /// Allocates the result and computes it on the calling thread.
  Result<Tensor> run(const std::vector<const Tensor*>& operands) const;
  /// The declared result type.
  const Type& result_type() const { return result_type_; }

 protected:
  /// `dims` if they agree with the declared result type's static dimensions, else an error
  /// naming `op` and both shapes.
  Result<std::vector<int64_t>> checked_result_dims(const Op& op, std::vector<int64_t> dims) const;

 public:
  /// The generated kernel's contract name and how it computes, e.g.
  /// "qu8_qs8_qu8_gemm_4x16_maddubs__avx2 (no weight pair can saturate ...)".
  virtual std::string describe() const = 0;
  /// Whether run() reads operand `index`; kernels with prepacked constants read only their
  /// activations, so the ops that compute those constants need not run at all.
  virtual bool reads_operand(size_t index) const {
    (void)index;
    return true;
  }
  /// Whether the kernel keeps its own prepared copy of operand `index` (packed, repacked,
  /// dequantized) and never reads the graph's constant again once made, so a plan may drop
  /// the constant's bytes. False where a kernel reads a constant in place (weight-only).
  virtual bool holds_operand_copy(size_t index) const {
    (void)index;
    return false;
  }
  /// Bytes this kernel allocated for what it prepared from constants (packed or dequantized
  /// weights, biases, parameters, tables); a constant it reads in place counts 0 here, since
  /// the graph holds it. Generated code is shared between kernels and not counted.
  virtual size_t owned_bytes() const { return 0; }
  /// Whether the result may share operand `index`'s bytes (element-wise kernels that read
  /// each element before writing it, with the same element size).
  virtual bool can_overwrite_operand(size_t index) const {
    (void)index;
    return false;
  }

 protected:
  Type result_type_;
};

/// A contraction kernel whose int32 results can go to an AccumulatorSink: run_into and
/// run_into_sink are one body, run_with_sink, without and with a sink.
class SinkableKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const final {
    return run_with_sink(operands, out, parallel, nullptr);
  }
  Status run_into_sink(const std::vector<const Tensor*>& operands, Tensor& out, const AccumulatorSink& sink,
                       Parallel& parallel) const final {
    if (!takes_sink()) return OpKernel::run_into_sink(operands, out, sink, parallel);
    return run_with_sink(operands, out, parallel, &sink);
  }

 protected:
  /// run_into, or with `sink` (only where takes_sink()) every block of accumulators to it.
  virtual Status run_with_sink(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel,
                               const AccumulatorSink* sink) const = 0;
};

/// A family's ISA-free analysis of one op, shared by check() and create().
class PreparedOp {
 public:
  virtual ~PreparedOp() = default;
};

/// Whether `e` is an 8-bit per-tensor quantized type.
inline bool is_8bit_per_tensor(const ElementType& e) { return e.kind == ElementKind::kUniform && e.storage.width == 8; }

/// Whether `e` is f32.
inline bool is_f32(const ElementType& e) { return e.is_float() && e.float_kind == FloatKind::kF32; }

/// What prepare() returns when no backend can run the op: no prepared op, and `why`.
inline Result<std::unique_ptr<PreparedOp>> refuse(std::string* why_not, std::string why) {
  *why_not = std::move(why);
  return std::unique_ptr<PreparedOp>();
}

/// One operator family (e.g. quantized matmul, depthwise convolution, pooling).
class OpFamily {
 public:
  virtual ~OpFamily() = default;
  /// The family's name in reports, e.g. "qgemm".
  virtual const char* name() const = 0;
  /// The micro-kernel kind whose kernel-list rows the family needs (selection looks up the
  /// backend of each ISA level by it), or KernelOp::kCount for plain C++ families that run on
  /// every host without a backend.
  virtual KernelOp kind() const = 0;
  /// The micro-kernel kind that runs `op` (selection's lookups and messages): kind() unless a
  /// family runs several kinds (quantized add, mul and requantize; max and average pooling).
  virtual KernelOp kind_of(const Op& op) const {
    (void)op;
    return kind();
  }
  /// The ISA-free analysis: a prepared op, or null and `*why_not` (no backend can run it).
  /// Errors are real failures (e.g. a malformed op).
  virtual Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const = 0;
  /// "" when `backend` can run the prepared op, else why not; generates nothing. Plain C++
  /// families get no backend (null).
  virtual std::string check(const PreparedOp& prepared, const Backend* backend) const = 0;
  /// Packs constants for the backend's traits and generates (or fetches) its micro-kernels.
  virtual Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const = 0;
  /// create() for a plan whose micro-kernels come from `generator` (selection calls this): a
  /// family may prefer a kernel of another kind there (element-wise programs of one byte run
  /// as a table kernel of the plan's generator).
  virtual Result<std::unique_ptr<OpKernel>> create_in_plan(const PreparedOp& prepared, const Backend* backend,
                                                           Generator) const {
    return create(prepared, backend);
  }
};

/// The family that can run `op` (by kind and element types), or null.
const OpFamily* family_for(const Graph& graph, const Op& op);

/// The value of `value` if it is known at plan time (a constant, or ops over constants only,
/// evaluated by the reference), else null.
std::unique_ptr<Tensor> constant_operand(const Graph& graph, int value);

/// The families (one file each).
const OpFamily& convert_family();        ///< quant.qcast / quant.dcast (8-bit, per tensor)
const OpFamily& qgemm_matmul_family();   ///< quantized qrt.matmul with constant weights
const OpFamily& f32_matmul_family();     ///< f32 and hybrid qrt.matmul (weights dequantized once)
const OpFamily& weight_only_matmul_family();  ///< hybrid qrt.matmul with 8- or 4-bit weights kept packed
const OpFamily& dynamic_matmul_family();  ///< hybrid qrt.matmul with activations = "dynamic_i8" (kDynGemm)
/// True when `op` is a hybrid matmul the weight-only family takes (f32 activations, 8- or 4-bit
/// f32-expressed weights of rank 2, static shape, not per-axis along K).
bool weight_only_matmul_applies(const Graph& graph, const Op& op);
/// Whether `op` is a matmul with activations = "dynamic_i8" (dynamic_matmul_family's ops; the
/// float families must never take them: the attribute changes the result).
bool dynamic_matmul_applies(const Graph& graph, const Op& op);
const OpFamily& f32_conv_family();       ///< f32 and hybrid qrt.conv2d (im2col on the f32 GEMM kernel)
const OpFamily& qgemm_conv_family();     ///< quantized qrt.conv2d (direct 1x1 or im2col)
const OpFamily& depthwise_family();      ///< quantized depthwise qrt.conv2d (NHWC)
const OpFamily& elementwise_family();    ///< quantized qrt.add / qrt.mul / qrt.requantize
const OpFamily& pool_family();           ///< quantized max/avg pooling, mean over H and W
const OpFamily& f32_pool_family();       ///< f32 max/avg pooling (plain C++)
const OpFamily& clamp_family();          ///< quantized qrt.relu / qrt.clamp
const OpFamily& layout_family();         ///< pad / transpose / reshape / scast / gather / slice (plain C++)
const OpFamily& planes_family();         ///< NCHW -> NHWC transposes of 1 to 4 byte planes (kInterleavePlanes)
/// Whether `op` is a transpose planes_family takes: perm [0, 2, 3, 1] of a rank-4 tensor of
/// bytes whose planes (dimension 1, static) number 1 to 4.
bool interleave_planes_applies(const Graph& graph, const Op& op);
const OpFamily& half_cast_family();      ///< qrt.cast between f32, bf16 and f16, either side 2 bytes (plain C++)
/// Whether `op` is a qrt.cast between f32, bf16 and f16 with a bf16 or f16 side
/// (half_cast_family's ops; the element-wise programs take the other casts).
bool half_float_cast_applies(const Graph& graph, const Op& op);
const OpFamily& ew_program_family();     ///< float and integer element-wise ops (programs)
const OpFamily& row_family();            ///< softmax (last axis), layer_norm, dynamic_quantize

}  // namespace qrt::jit
