// qrt — builds without the LLVM backend (meson -Dllvm=disabled): llvm_info() says so and
// there are no LLVM backends.
#include "jit/core/host_info.h"
#include "jit/llvm/llvm_backend.h"

namespace qrt {

const LlvmInfo& llvm_info() {
  static const LlvmInfo info = [] {
    LlvmInfo i;
    i.version = "not built";
    i.error = "qrt was built without LLVM (meson option llvm=disabled)";
    return i;
  }();
  return info;
}

namespace jit {

const Backend* llvm_backend(Isa) { return nullptr; }

bool llvm_kernel_templates_built() { return false; }

LlvmCacheStats llvm_cache_stats() { return {}; }

}  // namespace jit

}  // namespace qrt
