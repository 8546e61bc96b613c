// qrt — internal: ONNX TensorProto / type conversion for the ONNX importer.
#pragma once

#include <string>

#include "ir/graph.h"

namespace onnx {
class TensorProto;
class TypeProto;
}  // namespace onnx

namespace qrt::importers::onnx_detail {

/// TensorProto.DataType UINT4 and INT4 (ONNX 1.16): packed two per byte, low nibble first.
inline constexpr int kOnnxUint4 = 21;
inline constexpr int kOnnxInt4 = 22;

/// The qrt element type of an ONNX TensorProto.DataType, or an error naming it.
Result<ElementType> element_type_of(int onnx_data_type);
/// Converts an initializer or Constant value to dense elements (raw_data or typed fields;
/// external data is refused). `what` names the tensor in errors.
Result<DenseElements> dense_of(const onnx::TensorProto& t, const std::string& what);
/// The ranked tensor type of a graph input/output (symbolic dims become dynamic).
Result<Type> type_of(const onnx::TypeProto& t, const std::string& what);

}  // namespace qrt::importers::onnx_detail
