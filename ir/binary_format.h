// qrt — the .qrt binary graph container: FlatBuffers metadata plus 64-byte aligned weight
// blobs that a mapped file serves in place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ir/graph.h"

namespace qrt {

/// The newest format version this build reads and writes. Version 2 added sub-channel
/// quantized types and packs integers of 2-4 bits two per byte in weight blobs; version 3
/// records a numerics profile other than the default. A graph with the default profile is
/// written as version 2, so older readers still read it.
inline constexpr uint32_t kBinaryFormatVersion = 3;
/// The oldest format version this build reads (version 1 blobs hold one byte per 4-bit value).
inline constexpr uint32_t kOldestReadableBinaryFormatVersion = 1;

/// Serializes a verified graph into the .qrt layout (the returned bytes are the whole file).
Result<std::string> write_binary_graph(const Graph& graph, const std::string& producer);

/// True when `data` carries the .qrt file identifier "QRTB" at byte offset 4.
bool looks_like_binary_graph(const void* data, size_t size);

/// Reads a .qrt file held in `data` (`size` bytes). Weight constants become views into
/// `data` (no copy) kept alive by `owner`. Every offset and size is checked first (the
/// FlatBuffers verifier, then each blob's bounds and alignment), and the graph is verified, so
/// a truncated, corrupted, wrong-version or hostile file is refused with a message naming
/// the problem. `name` is used in diagnostics.
Result<Graph> read_binary_graph(std::shared_ptr<const void> owner, const uint8_t* data, size_t size,
                                const std::string& name);

}  // namespace qrt
