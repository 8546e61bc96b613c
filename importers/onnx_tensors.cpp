// qrt — ONNX tensor and type conversion (see onnx_tensors.h).
#include "importers/onnx_tensors.h"

#include <cstring>

#include <onnx/onnx_pb.h>

namespace qrt::importers::onnx_detail {

Result<ElementType> element_type_of(int dt) {
  using T = onnx::TensorProto;
  switch (dt) {
    case T::FLOAT: return ElementType::make_float(FloatKind::kF32);
    case T::DOUBLE: return ElementType::make_float(FloatKind::kF64);
    case T::FLOAT16: return ElementType::make_float(FloatKind::kF16);
    case T::BFLOAT16: return ElementType::make_float(FloatKind::kBF16);
    case T::INT8: return ElementType::make_int(8);
    case T::UINT8: return ElementType::make_int(8, Signedness::kUnsigned);
    case T::INT16: return ElementType::make_int(16);
    case T::UINT16: return ElementType::make_int(16, Signedness::kUnsigned);
    case T::INT32: return ElementType::make_int(32);
    case T::UINT32: return ElementType::make_int(32, Signedness::kUnsigned);
    case T::INT64: return ElementType::make_int(64);
    case T::UINT64: return ElementType::make_int(64, Signedness::kUnsigned);
    case T::BOOL: return ElementType::make_int(1);
    // UINT4 / INT4 (ONNX 1.16, opset 21) postdate the enum of Debian's libonnx 1.12.
    case kOnnxUint4: return ElementType::make_int(4, Signedness::kUnsigned);
    case kOnnxInt4: return ElementType::make_int(4);
    default: break;
  }
  const std::string name = dt == 23 ? "FLOAT4E2M1" : onnx::TensorProto::DataType_IsValid(dt)
                               ? onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(dt))
                               : std::to_string(dt);
  return Status::error("unsupported ONNX tensor data type " + name).with_code(ErrorCode::kUnsupported);
}

Result<DenseElements> dense_of(const onnx::TensorProto& t, const std::string& what) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    return Status::error("tensor '" + what + "' stores its data externally, which qrt does not read")
        .with_code(ErrorCode::kUnsupported);
  }
  auto element = element_type_of(t.data_type());
  if (!element.is_ok()) return element.status().with_prefix("tensor '" + what + "': ");
  DenseElements d;
  d.type.is_tensor = true;
  d.type.element = *element;
  for (int64_t dim : t.dims()) {
    if (dim < 0) return Status::error("tensor '" + what + "' has a negative dimension");
    d.type.dims.push_back(dim);
  }
  QRT_RETURN_IF_ERROR(d.type.verify().with_prefix("tensor '" + what + "': "));
  const size_t n = size_t(d.type.num_elements());
  const unsigned es = element_byte_size(d.type.element);
  // The dimensions come from the file: the values it holds are counted before anything is
  // allocated for them (a fuzzed 16-byte tensor declared 8 GB).
  const size_t bytes = dense_byte_size(d.type);
  auto wrong_count = [&](size_t got) {
    return Status::error("tensor '" + what + "' of shape [" + dims_to_string(d.type.dims) + "] holds " +
                         std::to_string(got) + " values, expected " + std::to_string(n))
        .with_code(ErrorCode::kParse);
  };
  if (t.has_raw_data()) {
    // raw_data is little-endian in the element's own width (bool: one byte each).
    // 4-bit elements are packed two per byte, the first in the low nibble: qrt's own layout.
    if (t.raw_data().size() != bytes) {
      return bytes == n * es ? wrong_count(t.raw_data().size() / (es ? es : 1))
                             : Status::error("tensor '" + what + "' of shape [" + dims_to_string(d.type.dims) + "] holds " +
                                             std::to_string(t.raw_data().size()) + " bytes of packed 4-bit values, expected " +
                                             std::to_string(bytes)).with_code(ErrorCode::kParse);
    }
    d.bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return d;
  }
  using T = onnx::TensorProto;
  // The repeated field holding the values, and how many it must hold (4-bit: one byte, two
  // elements, per entry).
  const bool packed4 = t.data_type() == kOnnxUint4 || t.data_type() == kOnnxInt4;
  const size_t held = t.data_type() == T::FLOAT                               ? size_t(t.float_data_size())
                      : t.data_type() == T::DOUBLE                            ? size_t(t.double_data_size())
                      : t.data_type() == T::INT64                             ? size_t(t.int64_data_size())
                      : t.data_type() == T::UINT32 || t.data_type() == T::UINT64 ? size_t(t.uint64_data_size())
                                                                              : size_t(t.int32_data_size());
  if (held != (packed4 ? bytes : n)) return wrong_count(packed4 ? held * 2 : held);
  d.bytes.assign(bytes, 0);
  auto store = [&](size_t i, uint64_t bits) { std::memcpy(d.bytes.data() + i * es, &bits, es); };
  switch (t.data_type()) {
    case T::FLOAT:
      for (size_t i = 0; i < n; ++i) store(i, float_kind_bits(t.float_data(int(i)), FloatKind::kF32));
      return d;
    case T::DOUBLE:
      for (size_t i = 0; i < n; ++i) store(i, float_kind_bits(t.double_data(int(i)), FloatKind::kF64));
      return d;
    case T::INT64:
      for (size_t i = 0; i < n; ++i) store(i, uint64_t(t.int64_data(int(i))));
      return d;
    case T::UINT32:
    case T::UINT64:
      for (size_t i = 0; i < n; ++i) store(i, t.uint64_data(int(i)));
      return d;
    case kOnnxUint4:
    case kOnnxInt4:
      // Packed as in raw_data, one byte (two elements) per int32_data entry.
      for (size_t i = 0; i < d.bytes.size(); ++i) d.bytes[i] = uint8_t(t.int32_data(int(i)));
      return d;
    default:
      // int8/uint8/int16/uint16/int32/bool and the 16-bit float bit patterns use int32_data.
      for (size_t i = 0; i < n; ++i) store(i, uint64_t(int64_t(t.int32_data(int(i)))));
      return d;
  }
}

Result<Type> type_of(const onnx::TypeProto& t, const std::string& what) {
  if (!t.has_tensor_type()) {
    return Status::error("'" + what + "' is not a tensor (sequences, maps and optionals are not supported)")
        .with_code(ErrorCode::kUnsupported);
  }
  const auto& tt = t.tensor_type();
  auto element = element_type_of(tt.elem_type());
  if (!element.is_ok()) return element.status().with_prefix("'" + what + "': ");
  if (!tt.has_shape()) {
    return Status::error("'" + what + "' has no shape (unranked tensors are not supported)")
        .with_code(ErrorCode::kUnsupported);
  }
  Type type;
  type.element = *element;
  for (const auto& dim : tt.shape().dim()) {
    type.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  }
  QRT_RETURN_IF_ERROR(type.verify().with_prefix("'" + what + "': "));
  return type;
}

}  // namespace qrt::importers::onnx_detail
