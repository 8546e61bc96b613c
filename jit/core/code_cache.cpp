// qrt — JIT code cache and executable pages (see code_cache.h).
#include "jit/core/code_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace qrt::jit {

namespace {

std::mutex perf_map_mutex;

// perf's map format: one "START SIZE NAME" line per symbol, hex without 0x, the name to the
// end of the line (so it must hold no newline).
void record_in_perf_map(const void* start, size_t size, const std::string& name) {
  const std::string path = perf_map_path();
  if (path.empty()) return;
  std::string line = name.empty() ? std::string("qrt_jit_code") : name;
  for (char& ch : line) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  std::lock_guard<std::mutex> lock(perf_map_mutex);
  // Best effort, like every JIT that writes the file: a profile loses names, the run goes on.
  if (FILE* f = std::fopen(path.c_str(), "a")) {
    std::fprintf(f, "%" PRIxPTR " %zx %s\n", reinterpret_cast<uintptr_t>(start), size, line.c_str());
    std::fclose(f);
  }
}

}  // namespace

std::string perf_map_path() {
  const char* flag = std::getenv("QRT_PERF_MAP");
  if (!flag || std::strcmp(flag, "1") != 0) return "";
  return "/tmp/perf-" + std::to_string(getpid()) + ".map";
}

Result<std::shared_ptr<ExecutableCode>> ExecutableCode::create(
    size_t size, const std::function<Status(void* dst, uint64_t base)>& emit, const std::string& name) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t mapped = (size + page - 1) / page * page;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return Status::error(std::string("mmap for JIT code failed: ") + std::strerror(errno));
  std::shared_ptr<ExecutableCode> code(new ExecutableCode());
  code->pages_ = p;
  code->entry_ = p;
  code->mapped_ = mapped;
  QRT_RETURN_IF_ERROR(emit(p, reinterpret_cast<uint64_t>(p)));
  // Write permission goes before execute permission arrives.
  if (mprotect(p, mapped, PROT_READ | PROT_EXEC) != 0) {
    return Status::error(std::string("mprotect for JIT code failed: ") + std::strerror(errno));
  }
  __builtin___clear_cache(static_cast<char*>(p), static_cast<char*>(p) + size);
  record_in_perf_map(p, size, name);
  return code;
}

ExecutableCode::~ExecutableCode() {
  if (pages_) munmap(pages_, mapped_);
}

}  // namespace qrt::jit
