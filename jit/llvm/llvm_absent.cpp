// qrt — llvm_info() in builds without the LLVM backend (meson -Dllvm=disabled).
#include "jit/core/host_info.h"

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

}  // namespace qrt
