// qrt — shared by the asmjit backends (jit/asmjit_x86, jit/asmjit_a64): sealing what an
// assembler holds into executable code, whichever architecture it encodes.
#pragma once

#include <asmjit/core.h>

#include <memory>
#include <string>

#include "ir/status.h"
#include "jit/core/code_cache.h"

namespace qrt::jit::asmjit_common {

/// Turns what the assembler holds into sealed executable code; asmjit errors become qrt
/// errors naming `what`.
inline Result<std::shared_ptr<ExecutableCode>> finish(asmjit::CodeHolder& code, const std::string& what) {
  using namespace asmjit;
  if (Error err = code.flatten(); err != kErrorOk) {
    return Status::error(std::string("asmjit: ") + DebugUtils::errorAsString(err) + " generating " + what);
  }
  if (Error err = code.resolveUnresolvedLinks(); err != kErrorOk) {
    return Status::error(std::string("asmjit: ") + DebugUtils::errorAsString(err) + " generating " + what);
  }
  const size_t size = code.codeSize();
  return ExecutableCode::create(size, [&](void* dst, uint64_t base) -> Status {
    if (Error err = code.relocateToBase(base); err != kErrorOk) {
      return Status::error(std::string("asmjit: ") + DebugUtils::errorAsString(err) + " relocating " + what);
    }
    if (Error err = code.copyFlattenedData(dst, size); err != kErrorOk) {
      return Status::error(std::string("asmjit: ") + DebugUtils::errorAsString(err) + " copying " + what);
    }
    return Status::ok();
  }, what);
}

}  // namespace qrt::jit::asmjit_common
