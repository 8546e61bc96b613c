// qrt — row fusion (see row_fusion.h).
#include "jit/ops/row_fusion.h"

#include <utility>

namespace qrt::jit {

namespace {

/// The consumer's kernel, its operand 0's rows made by the producer's kernel. Operands: the
/// producer's operand 0, the consumer's operands 1.., the producer's operands 1.. (constants
/// both kernels prepacked: listed so that the plan sees who holds copies of them).
class RowFusedKernel final : public OpKernel {
 public:
  RowFusedKernel(std::unique_ptr<OpKernel> producer, size_t producer_operands, std::unique_ptr<OpKernel> consumer,
                 size_t consumer_operands)
      : OpKernel(consumer->result_type()), producer_(std::move(producer)), consumer_(std::move(consumer)),
        producer_operands_(producer_operands), consumer_operands_(consumer_operands) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    Staged staged;
    QRT_RETURN_IF_ERROR(stage(operands, staged));
    return consumer_->result_dims(staged.consumer);
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& out, Parallel& parallel) const override {
    thread_local Staged staged;  // the executor calls once per op; no allocation per run
    QRT_RETURN_IF_ERROR(stage(operands, staged));
    return consumer_->run_reading_rows(staged.consumer, ProducedRows{*producer_->row_producer(), *operands[0]}, out,
                                       parallel);
  }

  bool reads_operand(size_t index) const override { return index == 0; }
  bool holds_operand_copy(size_t index) const override {
    if (index == 0) return false;
    if (index < consumer_operands_) return consumer_->holds_operand_copy(index);
    return producer_->holds_operand_copy(index - consumer_operands_ + 1);
  }
  size_t owned_bytes() const override { return producer_->owned_bytes() + consumer_->owned_bytes(); }
  std::string describe() const override {
    return consumer_->describe() + "; its input rows from " + producer_->describe() +
           " (row fusion: the intermediate is never written)";
  }

 private:
  // The intermediate's type and dims (no bytes) and the operand lists of both kernels.
  struct Staged {
    Tensor mid;
    std::vector<const Tensor*> producer, consumer;
  };

  Status stage(const std::vector<const Tensor*>& operands, Staged& s) const {
    if (operands.size() != producer_operands_ + consumer_operands_ - 1) {
      return Status::error(describe() + ": expects " + std::to_string(producer_operands_ + consumer_operands_ - 1) +
                           " operands, got " + std::to_string(operands.size()));
    }
    s.producer.assign(1, operands[0]);
    for (size_t i = 1; i < producer_operands_; ++i) s.producer.push_back(operands[consumer_operands_ + i - 1]);
    QRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, producer_->result_dims(s.producer));
    s.mid.type.is_tensor = true;
    s.mid.type.dims = std::move(dims);
    s.mid.type.element = producer_->result_type().element;
    s.mid.storage.clear();
    s.mid.view = nullptr;
    s.consumer.assign(operands.begin(), operands.begin() + std::ptrdiff_t(consumer_operands_));
    s.consumer[0] = &s.mid;
    return Status::ok();
  }

  std::unique_ptr<OpKernel> producer_, consumer_;
  size_t producer_operands_, consumer_operands_;
};

}  // namespace

std::vector<RowFusion> fuse_row_producers(const Graph& graph, std::vector<std::unique_ptr<OpKernel>>& kernels,
                                          const std::vector<std::vector<int>>& operands,
                                          const std::vector<int>& fused_into) {
  const size_t values = graph.values.size();
  std::vector<int> producer_of(values, -1), readers(values, 0);
  std::vector<bool> is_output(values, false);
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    for (int r : graph.ops[o].results) producer_of[size_t(r)] = int(o);
    if (fused_into[o] >= 0) continue;  // never runs: its region's root reads the inputs
    for (int v : operands[o]) ++readers[size_t(v)];
  }
  for (int v : graph.outputs) is_output[size_t(v)] = true;
  std::vector<RowFusion> fusions;
  for (size_t c = 0; c < graph.ops.size(); ++c) {
    if (!kernels[c] || fused_into[c] >= 0 || operands[c].empty() || !kernels[c]->reads_operand_rows()) continue;
    const int v = operands[c][0];
    const int p = producer_of[size_t(v)];
    if (p < 0 || !kernels[size_t(p)] || fused_into[size_t(p)] >= 0 || graph.ops[size_t(p)].results.size() != 1) continue;
    if (!kernels[size_t(p)]->row_producer() || operands[size_t(p)].empty()) continue;
    if (readers[size_t(v)] != 1 || is_output[size_t(v)]) continue;
    RowFusion f;
    f.producer = size_t(p);
    f.consumer = c;
    const std::vector<int>& po = operands[size_t(p)];
    const std::vector<int>& co = operands[c];
    f.operands.push_back(po[0]);
    f.operands.insert(f.operands.end(), co.begin() + 1, co.end());
    f.operands.insert(f.operands.end(), po.begin() + 1, po.end());
    f.kernel = std::make_unique<RowFusedKernel>(std::move(kernels[size_t(p)]), po.size(), std::move(kernels[c]), co.size());
    fusions.push_back(std::move(f));
  }
  return fusions;
}

}  // namespace qrt::jit
