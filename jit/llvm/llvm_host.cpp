// qrt — LLVM facts for the portable JIT path (the only file here that includes LLVM).
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>

#include "jit/core/host_info.h"

namespace qrt {

const LlvmInfo& llvm_info() {
  static const LlvmInfo info = [] {
    LlvmInfo i;
    i.version = LLVM_VERSION_STRING;
    i.host_cpu = llvm::sys::getHostCPUName().str();
    if (llvm::InitializeNativeTarget() || llvm::InitializeNativeTargetAsmPrinter()) {
      i.error = "LLVM has no native target for this host";
      return i;
    }
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit) {
      i.error = llvm::toString(jit.takeError());  // llvm::Error becomes a qrt message here
      return i;
    }
    i.orc_jit = true;
    return i;
  }();
  return info;
}

}  // namespace qrt
