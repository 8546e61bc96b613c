/* qrt — the public C API (C99). The only header a user of qrt includes.
 *
 * Lifecycle: load a qrt_model_t from a file or buffer, inspect its inputs and outputs,
 * compile it into an immutable qrt_plan_t, create one qrt_context_t per concurrent run,
 * set inputs, run, read outputs, destroy everything. Every function that can fail returns
 * a qrt_status; on failure qrt_last_error_message() (thread-local) says why and no output
 * parameter is written. No C++ exception ever crosses this boundary.
 */
#ifndef QRT_H_
#define QRT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this header; qrt_version() gives the library's. */
#define QRT_VERSION_MAJOR 0
#define QRT_VERSION_MINOR 1
#define QRT_VERSION_PATCH 0
#define QRT_VERSION_STRING "0.1.0"

/** Status codes. The values are stable and never renumbered. */
typedef enum qrt_status {
  QRT_OK = 0,                /**< success */
  QRT_INVALID_ARGUMENT = 1,  /**< null handle, bad index, wrong dtype/shape/size */
  QRT_PARSE_ERROR = 2,       /**< malformed model text or file */
  QRT_VERIFY_ERROR = 3,      /**< the model breaks an IR rule (types, shapes, ops) */
  QRT_IO_ERROR = 4,          /**< a file could not be read */
  QRT_UNSUPPORTED = 5,       /**< a valid request qrt does not support (yet) */
  QRT_RUNTIME_ERROR = 6,     /**< failure while running (e.g. accumulator overflow) */
  QRT_OUT_OF_MEMORY = 7,     /**< an allocation failed */
  QRT_INTERNAL_ERROR = 8,    /**< a bug in qrt: please report it */
  QRT_STATUS_MAX_ENUM = 0x7FFFFFFF  /**< not a status: makes every int value a valid qrt_status */
} qrt_status;

/** Element layouts of tensors in memory. Quantized tensors use their storage layout. */
typedef enum qrt_dtype {
  QRT_DTYPE_INVALID = 0,
  QRT_DTYPE_F16 = 1,
  QRT_DTYPE_BF16 = 2,
  QRT_DTYPE_F32 = 3,
  QRT_DTYPE_F64 = 4,
  QRT_DTYPE_I8 = 5,
  QRT_DTYPE_I16 = 6,
  QRT_DTYPE_I32 = 7,
  QRT_DTYPE_I64 = 8,
  QRT_DTYPE_U8 = 9,
  QRT_DTYPE_U16 = 10,
  QRT_DTYPE_U32 = 11,
  QRT_DTYPE_U64 = 12,
  QRT_DTYPE_BOOL = 13,
  QRT_DTYPE_MAX_ENUM = 0x7FFFFFFF   /**< not a dtype: makes every int value a valid qrt_dtype */
} qrt_dtype;

/** How a tensor is quantized. */
typedef enum qrt_quant_kind {
  QRT_QUANT_NONE = 0,        /**< float or plain integer */
  QRT_QUANT_PER_TENSOR = 1,  /**< one scale and zero point */
  QRT_QUANT_PER_AXIS = 2,    /**< one pair per index along quant_axis */
  QRT_QUANT_MAX_ENUM = 0x7FFFFFFF
} qrt_quant_kind;

/** Serialized model formats qrt writes. */
typedef enum qrt_format {
  QRT_FORMAT_TEXT = 0,       /**< MLIR text (.mlir) */
  QRT_FORMAT_BINARY = 1,     /**< the .qrt container: FlatBuffers metadata + aligned weights */
  QRT_FORMAT_MAX_ENUM = 0x7FFFFFFF
} qrt_format;

/** Which backend executes a plan. */
typedef enum qrt_backend {
  QRT_BACKEND_DEFAULT = 0,   /**< the best available: the JIT backend (every host) */
  QRT_BACKEND_REF = 1,       /**< the scalar reference interpreter (the numerics oracle) */
  QRT_BACKEND_JIT = 2,       /**< kernels of the best allowed ISA level where they apply
                                  (bit-exact with the reference; portable C++ micro-kernels
                                  on hosts without a code generator), the reference for every
                                  other op */
  QRT_BACKEND_MAX_ENUM = 0x7FFFFFFF /**< not a backend: makes every int value a valid qrt_backend */
} qrt_backend;

/** Opaque handles. */
typedef struct qrt_model_s qrt_model_t;
typedef struct qrt_plan_s qrt_plan_t;
typedef struct qrt_context_s qrt_context_t;

/** Describes a model input or output. Pointers stay valid while the model lives. */
typedef struct qrt_tensor_info {
  const char* name;            /**< SSA name without '%', or "output<i>" */
  const char* type;            /**< MLIR type, e.g. "tensor<1x4x!quant.uniform<i8:f32, 5.000000e-01>>" */
  qrt_dtype dtype;             /**< layout of one element in memory */
  size_t rank;                 /**< number of dimensions (0 for scalars) */
  const int64_t* dims;         /**< rank sizes; -1 marks a dynamic dimension */
  qrt_quant_kind quant;        /**< quantization kind */
  int32_t quant_axis;          /**< channel axis for QRT_QUANT_PER_AXIS, else -1 */
  size_t quant_count;          /**< number of (scale, zero point) pairs, 0 if not quantized */
  const double* scales;        /**< quant_count scales */
  const int64_t* zero_points;  /**< quant_count zero points */
  int64_t storage_min;         /**< smallest legal stored value (quantized only) */
  int64_t storage_max;         /**< largest legal stored value (quantized only) */
} qrt_tensor_info;

/** A read-only view of an output tensor owned by a context. */
typedef struct qrt_tensor_view {
  qrt_dtype dtype;             /**< element layout */
  size_t rank;                 /**< number of dimensions */
  const int64_t* dims;         /**< concrete sizes */
  const void* data;            /**< row-major elements */
  size_t bytes;                /**< total bytes at data */
} qrt_tensor_view;

/** Options for qrt_plan_create; initialise with qrt_plan_options_init(). */
typedef struct qrt_plan_options {
  size_t struct_size;          /**< sizeof(qrt_plan_options), for ABI evolution */
  qrt_backend backend;         /**< which backend runs the plan */
  size_t threads;              /**< threads per context, the calling thread included (0 or 1:
                                    run on the calling thread only) */
  const char* passes;          /**< comma-separated graph passes run before kernels are chosen,
                                    e.g. "fold-pad"; NULL: "fold-pad,fold-qdq"; "": none */
  const char* isa;             /**< the highest ISA level the JIT backend may use, e.g. "avx2";
                                    NULL: the host's best. Levels: "scalar", "avx2",
                                    "avx2-vnni", "avx512-vnni", "neon", "neon-dot",
                                    "neon-i8mm"; one the host lacks fails with
                                    QRT_UNSUPPORTED (see qrt_host_isas) */
  unsigned flags;              /**< QRT_PLAN_* bits; 0: the defaults */
} qrt_plan_options;

/** qrt_plan_options.flags. */
enum {
  /** Run every element-wise op on its own kernel instead of fusing chains of them into one
      element-wise program per region (the default; results are identical either way). */
  QRT_PLAN_NO_FUSION = 1,
};

/** Memory a plan's contexts use for intermediate tensors. */
typedef struct qrt_memory_info {
  size_t arena_bytes;          /**< bytes of each context's arena (0 for dynamic-shape plans) */
  size_t naive_bytes;          /**< the sum of every intermediate's size (no reuse) */
  size_t in_place;             /**< element-wise results written over a dying operand */
} qrt_memory_info;

/** How a plan runs one op; the strings are owned by the plan. */
typedef struct qrt_op_info {
  const char* op;              /**< op name, e.g. "qrt.conv2d" */
  const char* kernel;          /**< the generated kernel's contract name and method, or "reference" */
  const char* reason;          /**< why the reference runs the op ("" where a kernel does) */
  uint64_t ops;                /**< arithmetic operations per run (2 per multiply-accumulate of a
                                    matmul or convolution with static shapes), else 0 */
} qrt_op_info;

/** The ISA levels this host can run, most capable first, comma separated
 *  (e.g. "avx512-vnni, avx2-vnni, avx2, scalar"). */
const char* qrt_host_isas(void);
/** Library version string, e.g. "0.1.0". */
const char* qrt_version(void);
/** A multi-line, human-readable description of the build and host (CPU features, LLVM). */
const char* qrt_build_info(void);
/** Name of a status code, e.g. "QRT_PARSE_ERROR"; "QRT_UNKNOWN_STATUS" for other values. */
const char* qrt_status_string(qrt_status status);
/** The message of the last failure on this thread ("" if none). Valid until the next call. */
const char* qrt_last_error_message(void);
/** Bytes per element of dtype (0 for QRT_DTYPE_INVALID or unknown values). */
size_t qrt_dtype_size(qrt_dtype dtype);
/** Short dtype name, e.g. "f32", "i8"; "invalid" for unknown values. */
const char* qrt_dtype_name(qrt_dtype dtype);
/** Frees memory returned by qrt (e.g. by qrt_model_print). NULL is ignored. */
void qrt_free(void* p);

/** Loads a model from a file: MLIR text (.mlir), the .qrt binary container (mapped, its
 *  weights used in place), ONNX (.onnx) or TFLite (.tflite); other names are recognised by
 *  content. */
qrt_status qrt_model_load_file(const char* path, qrt_model_t** model_out);
/** Loads a model from memory; `name` is used in diagnostics (may be NULL). */
qrt_status qrt_model_load_buffer(const void* data, size_t size, const char* name,
                                 qrt_model_t** model_out);
/** Destroys a model. NULL is ignored. Plans made from it stay valid. */
void qrt_model_destroy(qrt_model_t* model);
/** Writes the model to `path` in `format` (text or the .qrt binary container). */
qrt_status qrt_model_save(const qrt_model_t* model, const char* path, qrt_format format);
/** Prints the canonical MLIR text; free *text_out with qrt_free(). */
qrt_status qrt_model_print(const qrt_model_t* model, char** text_out);
/** Rewrites the model's graph with the comma-separated passes (e.g. "fold-pad,fold-qdq";
 *  "default" for the plans' default pipeline), verifying after each, then removes dead ops.
 *  Plans made earlier keep their graph. `report_out` (may be NULL) gets one line per decision;
 *  free it with qrt_free(). Unknown pass names fail with QRT_INVALID_ARGUMENT. */
qrt_status qrt_model_apply_passes(qrt_model_t* model, const char* passes, char** report_out);
/** Flags of qrt_model_apply_passes_ex. */
enum {
  QRT_PASSES_PRINT_IR_AFTER_ALL = 1, /**< the report gets the IR after every pass */
  QRT_PASSES_TIMING = 2              /**< the report gets one "timing:" line per pass */
};
/** qrt_model_apply_passes with `flags` (QRT_PASSES_*, or 0). */
qrt_status qrt_model_apply_passes_ex(qrt_model_t* model, const char* passes, unsigned flags, char** report_out);
/** One line per graph pass a pipeline may name: "  NAME  summary\n". */
const char* qrt_passes_help(void);
/** The pipeline that quantizes a calibrated float model (see qrt_model_calibrate):
 *  "calibrate,fake-quant,propagate,fold-pad,fold-qdq,check-integer". */
const char* qrt_calibration_pipeline(void);
/** Post-training calibration: runs the float model once on `inputs` (one view per model input,
 *  in order, with any batch size the input types allow) on the reference backend and records
 *  the range of every float value in quant.stats ops, widening what earlier calls recorded.
 *  Call it once per calibration batch, then apply qrt_calibration_pipeline() (optionally with
 *  options, e.g. "calibrate,propagate{activations=i8},fold-pad,fold-qdq"). */
qrt_status qrt_model_calibrate(qrt_model_t* model, const qrt_tensor_view* inputs, size_t num_inputs);
/** Number of inputs. */
qrt_status qrt_model_num_inputs(const qrt_model_t* model, size_t* count_out);
/** Number of outputs. */
qrt_status qrt_model_num_outputs(const qrt_model_t* model, size_t* count_out);
/** Describes input `index`. */
qrt_status qrt_model_input_info(const qrt_model_t* model, size_t index, qrt_tensor_info* info_out);
/** Describes output `index`. */
qrt_status qrt_model_output_info(const qrt_model_t* model, size_t index, qrt_tensor_info* info_out);

/** Fills `options` with defaults. */
void qrt_plan_options_init(qrt_plan_options* options);
/** Compiles a model into an immutable plan (options may be NULL for defaults). */
qrt_status qrt_plan_create(const qrt_model_t* model, const qrt_plan_options* options,
                           qrt_plan_t** plan_out);
/** Number of ops the plan runs (after dead ops are removed). */
qrt_status qrt_plan_num_ops(const qrt_plan_t* plan, size_t* count_out);
/** Describes op `index` of the plan: which kernel runs it, or why the reference does. */
qrt_status qrt_plan_op_info(const qrt_plan_t* plan, size_t index, qrt_op_info* info_out);
/** How the kernel of op `index` was chosen: what each allowed ISA level said, most capable
 *  first, e.g. "avx512-vnni: no gemm kernel at this level; avx2: chosen" ("" for ops no
 *  kernel family covers). The string is owned by the plan. */
qrt_status qrt_plan_op_selection(const qrt_plan_t* plan, size_t index, const char** selection_out);
/** The plan's arena: planned bytes against the naive sum. */
qrt_status qrt_plan_memory_info(const qrt_plan_t* plan, qrt_memory_info* info_out);
/** Destroys a plan. NULL is ignored. Destroy its contexts first. */
void qrt_plan_destroy(qrt_plan_t* plan);

/** Creates an execution context for one run at a time of `plan`. */
qrt_status qrt_context_create(const qrt_plan_t* plan, qrt_context_t** context_out);
/** Destroys a context. NULL is ignored. */
void qrt_context_destroy(qrt_context_t* context);
/** Sets input `index`: dtype, shape and `bytes` must match the input (dynamic dimensions
 *  take the given sizes); quantized values must lie inside the storage bounds. The data is
 *  copied. */
qrt_status qrt_context_set_input(qrt_context_t* context, size_t index, qrt_dtype dtype,
                                 size_t rank, const int64_t* dims, const void* data, size_t bytes);
/** Like qrt_context_set_input, but keeps a pointer to the caller's buffer instead of a copy:
 *  the buffer must stay valid and unchanged while runs use it (until it is set or bound
 *  again, or the context is destroyed). */
qrt_status qrt_context_bind_input(qrt_context_t* context, size_t index, qrt_dtype dtype,
                                  size_t rank, const int64_t* dims, const void* data, size_t bytes);
/** Binds a caller buffer that every successful run fills with output `index` (`bytes` must be
 *  the output's size; the output must have a static shape). A failed run leaves it untouched.
 *  data == NULL unbinds. */
qrt_status qrt_context_bind_output(qrt_context_t* context, size_t index, void* data, size_t bytes);
/** Runs the plan on the inputs set so far (all must be set). */
qrt_status qrt_context_run(qrt_context_t* context);
/** Views output `index` of the last successful run; valid until the next run or destroy. */
qrt_status qrt_context_output(const qrt_context_t* context, size_t index, qrt_tensor_view* view_out);
/** Nanoseconds op `index` (of qrt_plan_num_ops) took in the last run (0 for ops the plan
 *  skips: constants, and ops that only feed prepacked weights). */
qrt_status qrt_context_op_time(const qrt_context_t* context, size_t index, uint64_t* ns_out);

#ifdef __cplusplus
}
#endif

#endif /* QRT_H_ */
