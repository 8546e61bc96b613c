// qrt — the object cache on disk (see llvm_object_cache.h). A file holds one line naming its
// format, the full key, and the object bytes; the file name is a 64-bit FNV-1a hash of the
// key, and the stored key is compared on every read, so a hash collision is a miss.
#include "jit/llvm/llvm_object_cache.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace qrt::jit::llvm_ir {

namespace {

constexpr const char* kMagic = "qrt-llvm-object-1\n";

std::string file_for(const std::string& dir, const std::string& key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  char name[40];
  std::snprintf(name, sizeof name, "/qrt-%016llx.o", static_cast<unsigned long long>(h));
  return dir + name;
}

}  // namespace

std::string object_cache_dir() {
  const char* dir = std::getenv("QRT_CACHE_DIR");
  if (!dir || !*dir) return std::string();
  // Created when missing (and its parents), as a cache directory is expected to be; a
  // directory that cannot be made makes every read a miss and every write a no-op.
  std::error_code ignored;
  std::filesystem::create_directories(dir, ignored);
  return std::string(dir);
}

std::optional<std::string> read_cached_object(const std::string& dir, const std::string& key) {
  std::ifstream in(file_for(dir, key), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream all;
  all << in.rdbuf();
  const std::string bytes = all.str();
  const std::string header = std::string(kMagic) + std::to_string(key.size()) + "\n" + key;
  if (bytes.size() <= header.size() || bytes.compare(0, header.size(), header) != 0) return std::nullopt;
  return bytes.substr(header.size());
}

void write_cached_object(const std::string& dir, const std::string& key, const std::string& object) {
  const std::string path = file_for(dir, key);
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out << kMagic << key.size() << "\n" << key << object;
    if (!out.good()) {
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace qrt::jit::llvm_ir
