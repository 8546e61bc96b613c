// qrt — element-wise programs of one byte as 256-entry tables (see ew_ops.h). A program with
// one 8-bit input and an 8-bit result, e.g. the dcast -> logistic -> qcast that fold-qdq
// makes one op, or a fused QDQ region, has 256 possible results. They are computed once at
// plan time by the program's scalar twin, so the table equals the program bit for bit, and
// the run is a byte lookup (vpermi2b or vpshufb, docs/performance.md) at copy speed instead
// of a float quantize per element.
#include <algorithm>

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

// y[i] = table[x[i]] by a kLut8 micro-kernel, in tasks of 256 KiB.
class TableOpKernel final : public OpKernel {
 public:
  TableOpKernel(const Graph& graph, const Op& root, std::vector<uint8_t> table, std::string program_name, std::string fused,
                KernelDesc desc, std::shared_ptr<const CompiledKernel> code)
      : OpKernel(graph.values[size_t(root.results[0])].type), table_(std::move(table)), program_name_(std::move(program_name)),
        fused_(std::move(fused)), desc_(desc), code_(std::move(code)) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    return operands[0]->type.dims;  // one operand of the result's shape
  }
  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const size_t n = y.byte_size(), chunk = 256 * 1024;
    parallel.for_each((n + chunk - 1) / chunk, [&](size_t t) {
      const size_t begin = t * chunk;
      const LutArgs args{operands[0]->bytes() + begin, y.bytes() + begin, std::min(chunk, n - begin), table_.data()};
      call_microkernel(code_->entry(), args, desc_);
    });
    return Status::ok();
  }
  bool can_overwrite_operand(size_t) const override { return true; }
  std::string describe() const override {
    return desc_.name() + " (a 256-entry table of " + program_name_ + (fused_.empty() ? "" : "; fuses " + fused_) + ")";
  }

 private:
  std::vector<uint8_t> table_;
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
  KernelDesc d;
  d.op = KernelOp::kLut8;
  d.isa = isa;
  d.generator = generator;
  const Backend* b = kernel_list_backend(KernelOp::kLut8, isa, generator);
  *why_not = !b ? "no table kernel at this level" : !b->available() ? "the backend cannot run here" : b->why_not(d);
  if (!why_not->empty()) return std::unique_ptr<OpKernel>();
  QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
  return std::unique_ptr<OpKernel>(
      std::make_unique<TableOpKernel>(graph, root, byte_table(program), program.name(), fused, d, std::move(code)));
}

}  // namespace qrt::jit
