// qrt — the layout transpose of an image input, NCHW -> NHWC over 1 to 4 planes of bytes
// (perm [0, 2, 3, 1]), on the kInterleavePlanes micro-kernel: models exported from PyTorch
// take NCHW images, and the importers put this transpose before the first convolution so that
// every later op runs NHWC. It reads every input byte once and writes it once, so it is worth
// a vector kernel: the portable C++ loop of the layout family ran mobilenet_v2's 224² x 3
// input at about 11 cycles per 4 pixels (55 µs, more than most of its convolutions).
//
// Pixels split into equal parts across the threads, in multiples of 64 (whole vector steps
// of every level).
#include <algorithm>

#include "jit/core/code_cache.h"
#include "jit/core/microkernel.h"
#include "jit/ops/op_kernel.h"

namespace qrt::jit {

namespace {

// Bytes a task should move at least: a few microseconds on the vector kernels, above a hand-off.
constexpr int64_t kMinPlanesTaskBytes = 32 * 1024;

class PlanesOpKernel final : public OpKernel {
 public:
  PlanesOpKernel(const Graph& graph, const Op& op, KernelDesc desc, std::shared_ptr<const CompiledKernel> code)
      : OpKernel(graph.values[size_t(op.results[0])].type), op_(op), desc_(desc), code_(std::move(code)) {}

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    const std::vector<int64_t>& in = operands[0]->type.dims;
    if (in.size() != 4) {
      return Status::error_at(op_.loc, "'qrt.transpose' op operand has rank " + std::to_string(in.size()) +
                                           ", perm has 4 entries");
    }
    if (in[1] != int64_t(desc_.channels)) {
      return Status::error_at(op_.loc, "'qrt.transpose' op operand has " + std::to_string(in[1]) +
                                           " planes at run time, the plan interleaves " + std::to_string(desc_.channels));
    }
    return checked_result_dims(op_, {in[0], in[2], in[3], in[1]});
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    const Tensor& x = *operands[0];
    const int64_t c = desc_.channels, batch = x.type.dims[0], pixels = x.type.dims[2] * x.type.dims[3];
    if (batch == 0 || pixels == 0) return Status::ok();
    const int64_t parts = std::max<int64_t>(1, even_tasks(pixels * c, kMinPlanesTaskBytes, parallel) / batch);
    parallel.for_each(size_t(batch * parts), [&](size_t t) {
      const int64_t n = int64_t(t) / parts, part = int64_t(t) % parts;
      const int64_t p0 = part_start(pixels, parts, part, 64), p1 = part_start(pixels, parts, part + 1, 64);
      if (p1 <= p0) return;
      const uint8_t* image = x.bytes() + n * c * pixels;
      const PlanesArgs args{image + p0, y.bytes() + (n * pixels + p0) * c, p1 - p0, pixels};
      call_microkernel(code_->entry(), args, desc_);
    });
    return Status::ok();
  }

  std::string describe() const override { return desc_.name(); }

 private:
  Op op_;
  KernelDesc desc_;
  std::shared_ptr<const CompiledKernel> code_;
};

struct PreparedPlanes final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  unsigned planes = 0;
};

KernelDesc planes_desc(const PreparedPlanes& p, const Backend& backend) {
  KernelDesc d;
  d.op = KernelOp::kInterleavePlanes;
  d.isa = backend.isa();
  d.generator = backend.generator();
  d.channels = p.planes;
  return d;
}

class PlanesFamily final : public OpFamily {
 public:
  const char* name() const override { return "planes"; }
  KernelOp kind() const override { return KernelOp::kInterleavePlanes; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    if (!interleave_planes_applies(graph, op)) return refuse(why_not, "not an NCHW -> NHWC transpose of 1 to 4 planes of bytes");
    auto p = std::make_unique<PreparedPlanes>();
    p->graph = &graph;
    p->op = &op;
    p->planes = unsigned(graph.values[size_t(op.operands[0])].type.dims[1]);
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    return backend->why_not(planes_desc(static_cast<const PreparedPlanes&>(prepared), *backend));
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedPlanes&>(prepared);
    const KernelDesc d = planes_desc(p, *backend);
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code, code_cache().get(d));
    return std::unique_ptr<OpKernel>(std::make_unique<PlanesOpKernel>(*p.graph, *p.op, d, std::move(code)));
  }
};

}  // namespace

bool interleave_planes_applies(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::kTranspose || op.operands.size() != 1 || op.results.size() != 1) return false;
  const Attribute* perm = op.attr("perm");
  if (!perm || perm->kind != Attribute::Kind::kArray || perm->array.size() != 4) return false;
  const int64_t want[4] = {0, 2, 3, 1};
  for (size_t i = 0; i < 4; ++i) {
    if (perm->array[i].kind != Attribute::Kind::kInt || perm->array[i].i != want[i]) return false;
  }
  const Type& x = graph.values[size_t(op.operands[0])].type;
  const Type& y = graph.values[size_t(op.results[0])].type;
  if (x.rank() != 4 || y.rank() != 4 || element_byte_size(x.element) != 1 || element_byte_size(y.element) != 1) return false;
  // The planes are known at plan time (the kernel's description); the batch and the image's
  // height and width may be dynamic.
  return x.dims[1] >= 1 && x.dims[1] <= 4;
}

const OpFamily& planes_family() {
  static const PlanesFamily family;
  return family;
}

}  // namespace qrt::jit
