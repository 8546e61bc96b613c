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

/// The 8-bit activation storage the GEMM tiles of the most capable level in `allowed` read
/// in place (PackedGemm::reads_rows_unpacked); the other storage reaches them only through a
/// copy that flips each byte's top bit. Unsigned (true) on the x86 levels below avx512-amx
/// (vpdpbusd and vpmaddubsw multiply u8 rows; the vpmaddwd path widens either), on `neon`
/// (smlal on u8 rows widened to u16), on `neon-i8mm` (usmmla: u8 rows) and on `scalar` (the
/// pair-sum twin reads u8 rows); signed (false) on `neon-dot` (sdot: s8 quads); nullopt on
/// avx512-amx, whose tdpbusd and tdpbssd read either. With the LLVM generator, unsigned at
/// every level: its template tiles multiply u8 quads. Plans re-store internal activations to
/// it (passes::retype_activation_storage).
std::optional<bool> activations_read_unsigned(const IsaSet& allowed, Generator generator = Generator::kNative);

}  // namespace qrt::jit
