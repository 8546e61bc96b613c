// qrt — element-wise programs of one byte as 256-entry tables (see ew_ops.h). A program with
// one 8-bit input and an 8-bit result, e.g. the dcast -> logistic -> qcast that fold-qdq
// makes one op, or a fused QDQ region, has 256 possible results. They are computed once at
// plan time by the program's scalar twin, so the table equals the program bit for bit, and
// the run is a byte lookup (vpermi2b or vpshufb, docs/performance.md) at copy speed instead
// of a float quantize per element. When the table turns out to be a clamp of the stored values
// (a dcast -> clamp -> qcast with the same parameters on both sides, relu6 between QDQ pairs),
// the region runs as the byte clamp kernel instead: min/max at copy speed on every level.
#include <algorithm>
#include <optional>
#include <utility>

#include "jit/core/isa.h"
#include "jit/core/microkernel.h"
#include "jit/kernel_list.h"
#include "jit/ops/ew_ops.h"
#include "jit/ref/twins.h"

namespace qrt::jit {

namespace {

bool is_byte(EwStorage s) { return s == EwStorage::kU8 || s == EwStorage::kI8; }

// The 256 results of `program`, one per input byte, by its scalar twin.
std::vector<uint8_t> byte_table(const EwProgram& program) {
  std::vector<uint8_t> x(256), table(256);
  for (size_t i = 0; i < 256; ++i) x[i] = uint8_t(i);
  EwArgs args{};
  args.in[0] = x.data();
  args.out = table.data();
  args.n = 256;
  args.rows = 1;
  reinterpret_cast<EwFn>(const_cast<void*>(twin_entry(KernelOp::kEwProgram)))(&args, &program);
  return table;
}

// The stored bounds [lo, hi] when table[i] == clamp(value(i), lo, hi) for every byte i, where
// value(i) reads i as s8 (`signed_bytes`) or u8 and the result is stored the same way.
std::optional<std::pair<int32_t, int32_t>> table_as_clamp(const std::vector<uint8_t>& table, bool signed_bytes) {
  auto value = [signed_bytes](uint8_t b) { return signed_bytes ? int32_t(int8_t(b)) : int32_t(b); };
  int32_t lo = 255, hi = -128;
  for (size_t i = 0; i < 256; ++i) {
    lo = std::min(lo, value(table[i]));
    hi = std::max(hi, value(table[i]));
  }
  for (size_t i = 0; i < 256; ++i) {
    if (value(table[i]) != std::clamp(value(uint8_t(i)), lo, hi)) return std::nullopt;
  }
  return std::make_pair(lo, hi);
}

// y[i] = table[x[i]] by a kLut8 micro-kernel, or clamp(x[i], lo, hi) by a kClamp one where the
// table is that clamp, in tasks of 256 KiB.
class TableOpKernel final : public OpKernel {
 public:
  TableOpKernel(const Graph& graph, const Op& root, std::vector<uint8_t> table, std::optional<std::pair<int32_t, int32_t>> clamp,
                std::string program_name, std::string fused, KernelDesc desc, std::shared_ptr<const CompiledKernel> code)
      : OpKernel(graph.values[size_t(root.results[0])].type), table_(std::move(table)), clamp_(clamp),
        program_name_(std::move(program_name)), fused_(std::move(fused)), desc_(desc), code_(std::move(code)) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;  // one operand of the result's shape
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const size_t n = y.byte_size(), chunk = 256 * 1024;
    parallel.for_each((n + chunk - 1) / chunk, [&](size_t t) {
      const size_t begin = t * chunk, count = std::min(chunk, n - begin);
      if (clamp_) {
        const ClampArgs args{operands[0]->bytes() + begin, y.bytes() + begin, count, clamp_->first, clamp_->second};
        call_microkernel(code_->entry(), args, desc_);
        return;
      }
      const LutArgs args{operands[0]->bytes() + begin, y.bytes() + begin, count, table_.data()};
      call_microkernel(code_->entry(), args, desc_);
    });
    return Status::ok();
  }
  bool can_overwrite_operand(size_t) const override { return true; }
  size_t owned_bytes() const override { return table_.size(); }
  std::string describe() const override {
    const std::string what = clamp_ ? "its 256-entry table is clamp(x, " + std::to_string(clamp_->first) + ", " +
                                          std::to_string(clamp_->second) + ") on stored values: " + program_name_
                                    : "a 256-entry table of " + program_name_;
    return desc_.name() + " (" + what + (fused_.empty() ? "" : "; fuses " + fused_) + ")";
  }

 private:
  std::vector<uint8_t> table_;
  std::optional<std::pair<int32_t, int32_t>> clamp_;
  std::string program_name_, fused_;
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
};

}  // namespace

Result<std::unique_ptr<OpKernel>> make_table_kernel(const Graph& graph, const Op& root, const EwProgram& program,
                                                    const std::string& fused, Isa isa, Generator generator,
                                                    std::string* why_not) {
  if (program.inputs.size() != 1 || program.inputs[0].scalar || !is_byte(program.inputs[0].storage) ||
      !is_byte(program.out)) {
    *why_not = kNotByteProgram;
    return std::unique_ptr<OpKernel>();
  }
  return make_byte_table_kernel(graph, root, byte_table(program), program.inputs[0].storage == EwStorage::kI8,
                                program.out == EwStorage::kI8, program.name(), fused, isa, generator, why_not);
}

Result<std::unique_ptr<OpKernel>> make_byte_table_kernel(const Graph& graph, const Op& root, std::vector<uint8_t> table,
                                                         bool in_signed, bool out_signed, const std::string& name,
                                                         const std::string& fused, Isa isa, Generator generator,
                                                         std::string* why_not) {
  // A clamp of the stored values where input and result store bytes the same way.
  std::optional<std::pair<int32_t, int32_t>> clamp;
  if (in_signed == out_signed) clamp = table_as_clamp(table, out_signed);
  KernelDesc d;
  d.op = clamp ? KernelOp::kClamp : KernelOp::kLut8;
  d.isa = isa;
  d.generator = generator;
  d.storage_signed = out_signed;
  const Backend* b = kernel_list_backend(d.op, isa, generator);
  // A byte clamp may live at a lower SIMD level only (the x86 levels above AVX2 run AVX2's):
  // the host's levels that `isa` includes, best first; a scalar clamp would lose to the table.
  for (Isa lower : host_isas().by_preference()) {
    if (!clamp || (b && b->why_not(d).empty()) || lower == Isa::kScalar) break;
    if (lower == isa || !isa_includes(isa, lower)) continue;
    d.isa = lower;
    b = kernel_list_backend(d.op, lower, generator);
  }
  if (clamp && (!b || !b->why_not(d).empty())) {  // no clamp kernel here: the table serves
    clamp.reset();
    d.op = KernelOp::kLut8;
    d.isa = isa;
    b = kernel_list_backend(d.op, isa, generator);
  }
  // A level without a table kernel on this CPU (AVX-512 without VBMI's vpermi2b) runs the best
  // lower SIMD level's table, which beats computing the program per element.
  if (d.op == KernelOp::kLut8 && (!b || !b->available() || !b->why_not(d).empty())) {
    for (Isa lower : host_isas().by_preference()) {
      if (lower == Isa::kScalar) break;
      if (lower == isa || !isa_includes(isa, lower)) continue;
      KernelDesc ld = d;
      ld.isa = lower;
      const Backend* lb = kernel_list_backend(KernelOp::kLut8, lower, generator);
      if (lb && lb->available() && lb->why_not(ld).empty()) {
        d = ld;
        b = lb;
        break;
      }
    }
  }
  *why_not = !b ? "no table kernel at this level" : !b->available() ? "the backend cannot run here" : b->why_not(d);
  if (!why_not->empty()) return std::unique_ptr<OpKernel>();
  QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
  return std::unique_ptr<OpKernel>(
      std::make_unique<TableOpKernel>(graph, root, std::move(table), clamp, name, fused, d, std::move(code)));
}

}  // namespace qrt::jit
