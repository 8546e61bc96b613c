// qrt — internal: SSA names for imported values.
#pragma once

#include <set>
#include <string>

namespace qrt::importers {

/// A valid, unique MLIR SSA name for a value a model calls `raw`: characters outside
/// [A-Za-z0-9_.$-] become '_', a leading digit or an empty name gets `prefix`, and a name
/// already in `used` gets a "_N" suffix. The result is added to `used`.
std::string unique_ssa_name(const std::string& raw, const char* prefix, std::set<std::string>& used);

}  // namespace qrt::importers
