// qrt — the LLVM backend's internals (jit/llvm only): IR generation for element-wise programs
// and micro-kernels from the kernel templates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <llvm/IR/Module.h>

#include "ir/status.h"
#include "jit/core/ew_program.h"
#include "jit/core/kernel.h"

namespace qrt::jit::llvm_ir {

/// The symbol generated code calls for numerics::pow_f32 (defined by the backend as the
/// process's own function).
inline constexpr const char* kPowSymbol = "qrt_numerics_pow_f32";

/// The symbol generated code calls for an f32 function it computes through the process's own
/// numerics function (log, log1p, expm1, sin, cos, cbrt: exact by construction, scalar), or
/// nullptr when `op` is generated inline.
const char* scalar_call_symbol(EwOp op);

/// Adds to `module` the external function `name` computing `program` with the EwFn ABI
/// (ew_program.h); errors name the program when it is malformed or the IR does not verify.
Status build_ew_function(llvm::Module& module, const std::string& name, const EwProgram& program);

/// Whether the kernel templates' bitcode is embedded in this build.
bool kernel_templates_built();
/// "" when kernels can be built from the templates (embedded, readable, compiled with the
/// library's struct layouts), else why not.
std::string kernel_templates_why_not();
/// A hash of the templates' bitcode (part of every kernel's object-cache key).
uint64_t kernel_templates_hash();
/// Every field of `desc` and the templates' hash: what decides a kernel's code besides LLVM
/// and the target.
std::string kernel_key(const KernelDesc& desc);

/// A module holding the templates with `desc` baked in and the external function `name` with
/// the micro-kernel ABI of desc.op (microkernel.h); errors name the kernel.
Result<std::unique_ptr<llvm::Module>> build_kernel_module(llvm::LLVMContext& ctx, const std::string& name,
                                                          const KernelDesc& desc);

}  // namespace qrt::jit::llvm_ir
