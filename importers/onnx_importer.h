// qrt — ONNX model importer (protobuf classes from Debian's libonnx-dev).
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "ir/graph.h"

namespace qrt::importers {

/// Imports an ONNX ModelProto (binary protobuf) into a verified qrt graph. QDQ models import
/// as quant.qcast / quant.dcast around float ops (the quantization passes later turn them into
/// integer kernels); see docs/importers.md for the op mapping. An unsupported op, attribute
/// value or tensor type is an error naming it and the node. `name` is used in diagnostics.
/// `frozen_inputs` turns graph inputs into constants with the given values (needed where a
/// model feeds quantization parameters, which qrt types carry statically, as inputs).
Result<Graph> import_onnx(const void* data, size_t size, const std::string& name,
                          const std::map<std::string, DenseElements>& frozen_inputs = {});

/// True when `data` looks like an ONNX protobuf rather than MLIR text (a cheap sniff used to
/// pick the loader; the importer itself validates fully).
bool looks_like_onnx(const void* data, size_t size);

}  // namespace qrt::importers
