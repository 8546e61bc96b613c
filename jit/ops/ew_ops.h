// qrt — how graph ops become element-wise programs (jit/core/ew_program.h), shared by the
// one-op family (ew_kernels.cpp) and the fusion of element-wise regions (ew_fusion.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "jit/core/code_cache.h"
#include "jit/core/ew_program.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

/// Builds a program instruction by instruction.
struct ProgramBuilder {
  EwProgram p;
  /// Appends `e`; its register.
  uint8_t add(EwInstr e) {
    p.code.push_back(e);
    return uint8_t(p.code.size() - 1);
  }
  /// A new input of storage `s` (`scalar`: one value per row) and its load.
  uint8_t load(EwStorage s, bool scalar = false) {
    p.inputs.push_back({s, scalar});
    EwInstr e;
    e.op = EwOp::kLoad;
    e.type = ew_storage_type(s);
    e.input = uint8_t(p.inputs.size() - 1);
    return add(e);
  }
  /// An instruction on registers a, b, c.
  uint8_t op(EwOp op, EwType type, uint8_t a, uint8_t b = 0, uint8_t c = 0) {
    EwInstr e;
    e.op = op;
    e.type = type;
    e.a = a;
    e.b = b;
    e.c = c;
    return add(e);
  }
};

/// How values of element type `e` are stored in programs: f32, integers (i1 as bool), and the
/// stored integers of per-tensor quantized types; nullopt for the rest.
std::optional<EwStorage> value_storage(const ElementType& e);

/// Appends the instructions of `op` (one result), its operands in registers `in`; the result's
/// register (holding the stored value the reference would store, before wrapping integers to
/// their width), or nullopt and why not.
std::optional<uint8_t> emit_op(ProgramBuilder& b, const Graph& g, const Op& op, const std::vector<uint8_t>& in,
                               std::string* why);

/// The program of `op` alone, its operands loaded in order (all contiguous), or nullopt and why
/// not.
std::optional<EwProgram> program_for(const Graph& g, const Op& op, std::string* why);

/// The default formulas of a quantized qrt.add, qrt.mul, qrt.requantize, qrt.relu or
/// qrt.clamp of per-tensor values of 8 to 32 bits (docs/numerics.md, "Integer kernels"; the
/// fused clamp included) as a program, for the widths and mixes the element-wise kernels do not
/// take (16-bit activations); nullopt and why not. Not part of program_for: regions fuse the
/// dcast/qcast forms, and 8-bit ops keep their kernels.
std::optional<EwProgram> quantized_program_for(const Graph& g, const Op& op, std::string* why);

/// The loops of a broadcast: collapsed dimensions, outermost first, where every operand is
/// either contiguous (its extent equals the result's) or repeated (extent 1).
struct BroadcastLoops {
  std::vector<int64_t> sizes;                 ///< collapsed result dimensions (at least one)
  std::vector<std::vector<bool>> full;        ///< [operand][dimension]: contiguous along it
  std::vector<std::vector<int64_t>> strides;  ///< [operand][dimension] in elements (0: repeated)
  std::vector<int64_t> out_strides;           ///< the result's, in elements
};

/// The loops of operands shaped `operands` broadcast to `result`.
BroadcastLoops broadcast_loops(const std::vector<std::vector<int64_t>>& operands, const std::vector<int64_t>& result);

/// The kernel running compiled `program` for op `root` of `graph` on the values `inputs` (the
/// program's inputs, in order) with `loops` planned for their declared shapes; `fused` lists
/// the other ops the program computes (for describe()).
/// make_table_kernel's answer for programs that are not one byte's function.
inline constexpr const char* kNotByteProgram = "not a program of one 8-bit input and an 8-bit result";

/// When `program` maps one 8-bit input (not repeated) to an 8-bit result, a kernel that looks
/// the result up in a 256-entry table (a kLut8 micro-kernel of `generator` at `isa`), built
/// here from the program's scalar twin, which every compiled program equals. Null with
/// `*why_not` otherwise (kNotByteProgram, or why the level has no table kernel). `root` is the
/// op whose result the kernel computes; its one operand (or a fused region's one input) must
/// have the result's shape.
Result<std::unique_ptr<OpKernel>> make_table_kernel(const Graph& graph, const Op& root, const EwProgram& program,
                                                    const std::string& fused, Isa isa, Generator generator,
                                                    std::string* why_not);

/// The same kernel for a given `table` (table[b] = the result byte of input byte b; bytes read
/// and stored as s8 where `in_signed` / `out_signed`) named `name`: a kLut8 micro-kernel, or
/// the byte clamp where the table is one.
Result<std::unique_ptr<OpKernel>> make_byte_table_kernel(const Graph& graph, const Op& root, std::vector<uint8_t> table,
                                                         bool in_signed, bool out_signed, const std::string& name,
                                                         const std::string& fused, Isa isa, Generator generator,
                                                         std::string* why_not);

std::unique_ptr<OpKernel> make_ew_kernel(const Graph& graph, const Op& root, std::vector<int> inputs, EwProgram program,
                                         BroadcastLoops loops, std::string level, std::shared_ptr<const CompiledKernel> code,
                                         std::string fused = "");

}  // namespace qrt::jit
