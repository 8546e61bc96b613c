// qrt — TensorFlow Lite model importer (flatbuffers, with qrt's own schema subset).
#pragma once

#include <cstddef>
#include <string>

#include "ir/graph.h"

namespace qrt::importers {

/// Imports subgraph 0 of a TFLite flatbuffer into a verified qrt graph. The buffer is checked
/// with the flatbuffers verifier first, so truncated or hostile files are refused before any
/// field is read. Quantized tensors become !quant.uniform (per-tensor or per-axis); fused
/// activations become qrt.clamp. See docs/importers.md for the op mapping.
Result<Graph> import_tflite(const void* data, size_t size, const std::string& name);

/// True when `data` carries the TFLite file identifier "TFL3" at offset 4.
bool looks_like_tflite(const void* data, size_t size);

}  // namespace qrt::importers
