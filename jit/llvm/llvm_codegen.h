// qrt — the LLVM backend's internals (jit/llvm only): IR generation for element-wise programs.
#pragma once

#include <string>

#include <llvm/IR/Module.h>

#include "ir/status.h"
#include "jit/core/ew_program.h"

namespace qrt::jit::llvm_ir {

/// The symbol generated code calls for numerics::pow_f32 (defined by the backend as the
/// process's own function).
inline constexpr const char* kPowSymbol = "qrt_numerics_pow_f32";

/// Adds to `module` the external function `name` computing `program` with the EwFn ABI
/// (ew_program.h); errors name the program when it is malformed or the IR does not verify.
Status build_ew_function(llvm::Module& module, const std::string& name, const EwProgram& program);

}  // namespace qrt::jit::llvm_ir
