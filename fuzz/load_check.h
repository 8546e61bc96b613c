// The loader fuzz targets' oracle, shared with the test that replays their findings: a model
// either fails to load with a message, or prints as MLIR text that loads again and prints
// identically (the printer and the parser agree on every graph a loader accepts). Loads run
// under a 16 MiB memory budget (qrt_load_options.max_memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace qrt_fuzz {

/// Loads `data` through the C API as a file called `name` (its extension picks the format;
/// the .qrt container is recognised by its magic). Returns "" when the contract holds, else
/// what broke it (with the printed text).
std::string check_load(const uint8_t* data, size_t size, const char* name);

}  // namespace qrt_fuzz
