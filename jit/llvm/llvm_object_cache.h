// qrt — the LLVM backend's object cache on disk (QRT_CACHE_DIR): compiled programs stored as
// object files keyed by everything that decides their code, so a second process links them
// instead of compiling. A missing, unreadable or foreign file is a miss, never an error.
#pragma once

#include <optional>
#include <string>

namespace qrt::jit::llvm_ir {

/// The cache directory from QRT_CACHE_DIR (created when missing), or "" when caching is off.
std::string object_cache_dir();

/// The object stored under `key` in `dir`, or nullopt (absent, unreadable, or another key
/// with the same hash).
std::optional<std::string> read_cached_object(const std::string& dir, const std::string& key);

/// Stores `object` under `key` in `dir` (written to a temporary file and renamed, so readers
/// never see half a file); failures are ignored.
void write_cached_object(const std::string& dir, const std::string& key, const std::string& object);

}  // namespace qrt::jit::llvm_ir
