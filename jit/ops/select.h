// qrt — choosing the kernel of each op: the op's family prepares it once, then the kernel-list
// backends of the allowed ISA levels are tried in preference order, every refusal recorded.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "jit/core/isa.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// The outcome of choosing a kernel for an op.
struct KernelChoice {
  std::unique_ptr<OpKernel> kernel;  ///< null: the reference interpreter runs the op
  std::string why_not;               ///< set when `kernel` is null
  /// What each level said, most capable first, e.g. "avx512-vnni: no gemm kernel at this
  /// level; avx2: chosen" (empty for ops no family covers).
  std::string chain;
  Isa isa = Isa::kScalar;            ///< the level of the chosen kernel
};

/// Chooses and builds the kernel for `op` among the levels in `allowed`, from the backends of
/// `generator` (generating code through the cache). An op no kernel covers yields a null
/// kernel and the reason; errors are real failures.
Result<KernelChoice> select_kernel(const Graph& graph, const Op& op, const IsaSet& allowed = host_isas(),
                                   Generator generator = Generator::kNative);

/// The 8-bit activation storage the kernels of the most capable level in `allowed` read as it
/// is: unsigned (true) on the x86 levels below avx512-amx, whose u8 x s8 instructions
/// (vpdpbusd, vpmaddubsw) take i8 activations only through a flipping copy; nullopt where
/// either storage serves (avx512-amx: tdpbusd and tdpbssd; scalar) or none is preferred yet
/// (the AArch64 levels: sdot reads s8 and usmmla u8, not measured). Plans re-store internal
/// activations to it (passes::retype_activation_storage).
std::optional<bool> activations_read_unsigned(const IsaSet& allowed);

}  // namespace qrt::jit
