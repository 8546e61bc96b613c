// qrt — quantize/dequantize kernels: applicability, generation through the cache, and the
// tail handled by the scalar twin (see convert_kernels.h).
#include "jit/convert_kernels.h"

#include "jit/host_info.h"
#include "ir/numerics.h"

namespace qrt::jit {

std::string ConvertKernel::why_not(const Graph& graph, const Op& op) {
  if (op.kind != OpKind::kQCast && op.kind != OpKind::kDCast) return "not a quantize or dequantize op";
  if (!host_cpu_features().avx2) return "the CPU has no AVX2";
  const Type& in = graph.values[size_t(op.operands[0])].type;
  const Type& out = graph.values[size_t(op.results[0])].type;
  const ElementType& q = op.kind == OpKind::kQCast ? out.element : in.element;
  if (q.kind != ElementKind::kUniform) return "per-axis types are not supported by this kernel";
  if (q.float_kind != FloatKind::kF32) return "only f32 expressed types are supported by this kernel";
  if (q.storage.width != 8) return "only 8-bit storage is supported by this kernel";
  return "";
}

Result<ConvertKernel> ConvertKernel::create(const Graph& graph, const Op& op) {
  const Type& in = graph.values[size_t(op.operands[0])].type;
  const Type& out = graph.values[size_t(op.results[0])].type;
  const ElementType& q = op.kind == OpKind::kQCast ? out.element : in.element;
  ConvertKernel k;
  k.desc_.op = op.kind == OpKind::kQCast ? KernelOp::kQuantize : KernelOp::kDequantize;
  k.desc_.storage_signed = q.storage.is_signed;
  k.desc_.scale = numerics::compute_scale_f32(q.scales[0], q.float_kind);
  k.desc_.zero_point = int32_t(q.zero_points[0]);
  k.desc_.qmin = int32_t(q.storage.min);
  k.desc_.qmax = int32_t(q.storage.max);
  QRT_ASSIGN_OR_RETURN(k.code_, code_cache().get(k.desc_));
  return k;
}

void ConvertKernel::run(const Tensor& in, Tensor& out, size_t begin, size_t end) const {
  using Body = void (*)(const void*, void*, size_t);
  const auto body = reinterpret_cast<Body>(const_cast<void*>(code_->entry()));
  const size_t in_size = in.element_size(), out_size = out.element_size();
  const size_t main = begin + (end - begin) / 8 * 8;
  body(in.bytes() + begin * in_size, out.bytes() + begin * out_size, (main - begin) / 8);
  // The tail goes through the scalar formulas the kernel body implements lane by lane.
  for (size_t i = main; i < end; ++i) {
    if (desc_.op == KernelOp::kQuantize) {
      out.set_int(i, numerics::quantize_f32(float(in.float_at(i)), desc_.scale, desc_.zero_point, desc_.qmin, desc_.qmax));
    } else {
      out.set_float(i, numerics::dequantize_f32(in.int_at(i), desc_.zero_point, desc_.scale));
    }
  }
}

}  // namespace qrt::jit
