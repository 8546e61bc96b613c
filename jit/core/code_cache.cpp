// qrt — JIT code cache and executable pages (see code_cache.h).
#include "jit/core/code_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace qrt::jit {

Result<std::shared_ptr<ExecutableCode>> ExecutableCode::create(
    size_t size, const std::function<Status(void* dst, uint64_t base)>& emit) {
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
  return code;
}

ExecutableCode::~ExecutableCode() {
  if (pages_) munmap(pages_, mapped_);
}

}  // namespace qrt::jit
