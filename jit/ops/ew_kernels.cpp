// qrt — float and integer element-wise ops as element-wise programs (jit/core/ew_program.h):
// arithmetic, comparisons, where, not, the f32 functions (sqrt … gelu, logistic), relu/clamp
// and cast, with NumPy broadcasting. prepare() turns the op into a program and its broadcast
// into loops: the operands' static shapes collapse to an inner run (each operand contiguous
// along it, or one repeated value), a row dimension stepped by the program itself, and outer
// dimensions walked here. The level's program backend compiles the program (LLVM), or the
// scalar twin interprets it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <tuple>

#include "ir/numerics.h"
#include "ir/ops.h"
#include "ir/quant_params.h"
#include "jit/core/code_cache.h"
#include "jit/ops/ew_ops.h"
#include "jit/ops/op_kernel.h"
#include "jit/ref/reference.h"
#include "jit/ref/reference_profiles.h"

namespace qrt::jit {

std::optional<EwStorage> value_storage(const ElementType& e) {
  if (e.is_float()) {
    switch (e.float_kind) {
      case FloatKind::kF32: return EwStorage::kF32;
      case FloatKind::kBF16: return EwStorage::kBf16;
      case FloatKind::kF16: return EwStorage::kF16;
      default: return std::nullopt;
    }
  }
  unsigned width = e.int_width;
  bool u = e.int_sign == Signedness::kUnsigned;
  if (e.kind == ElementKind::kUniform) {
    width = e.storage.width;
    u = !e.storage.is_signed;
  } else if (!e.is_integer()) {
    return std::nullopt;
  }
  switch (width) {
    case 1: return e.is_integer() ? std::optional(EwStorage::kBool) : std::nullopt;
    case 8: return u ? EwStorage::kU8 : EwStorage::kI8;
    case 16: return u ? EwStorage::kU16 : EwStorage::kI16;
    case 32: return u ? EwStorage::kU32 : EwStorage::kI32;
    case 64: return u || !e.is_integer() ? std::nullopt : std::optional(EwStorage::kI64);
    default: return std::nullopt;
  }
}

namespace {

// The dcast formula of a per-tensor quantized value in register `q`.
uint8_t dequantize(ProgramBuilder& b, const ElementType& e, uint8_t q) {
  EwInstr dq;
  dq.op = EwOp::kDequant;
  dq.a = q;
  dq.i = e.zero_points[0];
  dq.f = numerics::compute_scale_f32(e.scales[0], e.float_kind);
  return b.add(dq);
}

// The qcast formula into per-tensor quantized `e` of the f32 register `x` (nullopt when the
// compute scale is not a positive finite f32).
std::optional<uint8_t> quantize(ProgramBuilder& b, const ElementType& e, uint8_t x) {
  EwInstr q;
  q.op = EwOp::kQuant;
  q.type = EwType::kI64;
  q.a = x;
  q.f = numerics::compute_scale_f32(e.scales[0], e.float_kind);
  q.i = e.zero_points[0];
  q.j = e.storage.min;
  q.k = e.storage.max;
  if (!(q.f > 0.0f) || !std::isfinite(q.f)) return std::nullopt;
  return b.add(q);
}

// Register `x` rounded to bf16/f16 storage `s`: the value the reference stores (the store
// would round too, but a fused region's next op reads the register).
uint8_t round_half(ProgramBuilder& b, uint8_t x, EwStorage s) {
  const uint8_t r = b.op(EwOp::kRoundHalf, EwType::kF32, x);
  b.p.code[r].flag = s == EwStorage::kF16 ? 1 : 0;
  return r;
}

bool per_tensor_f32(const ElementType& e) { return e.kind == ElementKind::kUniform && e.float_kind == FloatKind::kF32; }

}  // namespace

std::optional<uint8_t> emit_op(ProgramBuilder& b, const Graph& g, const Op& op, const std::vector<uint8_t>& in,
                               std::string* why) {
  if (op.operands.empty() || op.results.size() != 1) {
    *why = "not an element-wise op";
    return std::nullopt;
  }
  const ElementType& re = g.values[size_t(op.results[0])].type.element;
  auto elem = [&](size_t i) -> const ElementType& { return g.values[size_t(op.operands[i])].type.element; };
  auto fail = [&](std::string w) {
    *why = std::move(w);
    return std::nullopt;
  };
  const std::optional<EwStorage> result_storage = value_storage(re);
  if (!result_storage) return fail("element type " + re.to_string() + " has no element-wise program (f32, bf16, f16, i1..i64 do)");
  // bf16/f16 results compute in f32 and round once to the type, as the reference does.
  const bool half = result_storage == EwStorage::kBf16 || result_storage == EwStorage::kF16;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (!value_storage(elem(i))) return fail("operand element type " + elem(i).to_string() + " has no element-wise program");
  }
  // Quantized values enter programs as qcast/dcast and as logistic's operand and result
  // (value_f32 in, store_f32 out); everything else computes on plain numbers.
  if (op.kind == OpKind::kDCast || op.kind == OpKind::kQCast || op.kind == OpKind::kLogistic) {
    const ElementType &ei = elem(0), &eo = re;
    if ((ei.is_quant() && !per_tensor_f32(ei)) || (eo.is_quant() && !per_tensor_f32(eo))) {
      return fail("only per-tensor quantization with f32 expressed type has an element-wise program");
    }
    uint8_t x = ei.is_quant() ? dequantize(b, ei, in[0]) : in[0];
    if (op.kind == OpKind::kLogistic) x = b.op(EwOp::kLogistic, EwType::kF32, x);
    if (!eo.is_quant()) return half ? round_half(b, x, *result_storage) : x;
    const std::optional<uint8_t> q = quantize(b, eo, x);
    if (!q) return fail("the result's scale is not a positive f32");
    return q;
  }
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (elem(i).is_quant()) return fail("quantized operands of this op run on its integer kernel or the reference");
  }
  if (re.is_quant()) return fail("quantized results of this op run on its integer kernel or the reference");
  const EwType t = ew_storage_type(*value_storage(re));
  const bool f = t == EwType::kF32;
  uint8_t r = in[0];
  switch (op.kind) {
    case OpKind::kAdd: r = b.op(EwOp::kAdd, t, in[0], in[1]); break;
    case OpKind::kSub: r = b.op(EwOp::kSub, t, in[0], in[1]); break;
    case OpKind::kMul: r = b.op(EwOp::kMul, t, in[0], in[1]); break;
    case OpKind::kMax: r = b.op(EwOp::kMax, t, in[0], in[1]); break;
    case OpKind::kMin: r = b.op(EwOp::kMin, t, in[0], in[1]); break;
    case OpKind::kDiv:
    case OpKind::kPow:
      if (!f) return fail("integer division and power run on the reference (division by zero is an error there)");
      r = b.op(op.kind == OpKind::kDiv ? EwOp::kDiv : EwOp::kPow, t, in[0], in[1]);
      break;
    case OpKind::kEqual: r = b.op(EwOp::kEqual, EwType::kBool, in[0], in[1]); break;
    case OpKind::kLess: r = b.op(EwOp::kLess, EwType::kBool, in[0], in[1]); break;
    case OpKind::kGreater: r = b.op(EwOp::kGreater, EwType::kBool, in[0], in[1]); break;
    case OpKind::kNot: r = b.op(EwOp::kNot, EwType::kBool, in[0]); break;
    case OpKind::kWhere: r = b.op(EwOp::kSelect, t, in[0], in[1], in[2]); break;
    case OpKind::kNeg: r = b.op(EwOp::kNeg, t, in[0]); break;
    case OpKind::kClamp: {
      if (!f) return fail("only f32 clamps have an element-wise program");
      r = b.op(EwOp::kClamp, t, in[0]);
      b.p.code[r].f = float(op.attr("min")->f);
      b.p.code[r].g = float(op.attr("max")->f);
      break;
    }
    case OpKind::kCast: {
      const EwType from = b.p.code[in[0]].type;
      if (from == t) break;  // same register type: the store wraps integers to the width
      if (t == EwType::kBool) {
        r = b.op(EwOp::kToBool, t, in[0]);
      } else if (from == EwType::kBool) {
        r = b.op(EwOp::kBoolTo, t, in[0]);
      } else if (f) {
        // The reference rounds the integer once to the type; through f32 it is exact only up to 24 bits.
        if (half && elem(0).int_width > 16) {
          return fail("casts from integers wider than 16 bits to " + re.to_string() + " run on the reference");
        }
        r = b.op(EwOp::kToF32, t, in[0]);
      } else {
        if (re.int_width > 32) return fail("casts from float to 64-bit integers run on the reference");
        r = b.op(EwOp::kToInt, t, in[0]);
        const bool u = re.int_sign == Signedness::kUnsigned;
        b.p.code[r].i = u ? 0 : -(int64_t(1) << (re.int_width - 1));
        b.p.code[r].j = u ? (int64_t(1) << re.int_width) - 1 : (int64_t(1) << (re.int_width - 1)) - 1;
      }
      break;
    }
    default:
      if (!is_float_unary_function(op.kind)) return fail("no element-wise program for this op");
      [[fallthrough]];
    case OpKind::kRelu: {
      if (!f) return fail("only f32 has this function");
      static const std::pair<OpKind, EwOp> fns[] = {
          {OpKind::kSqrt, EwOp::kSqrt},   {OpKind::kReciprocal, EwOp::kRecip}, {OpKind::kExp, EwOp::kExp},
          {OpKind::kTanh, EwOp::kTanh},   {OpKind::kErf, EwOp::kErf},          {OpKind::kGelu, EwOp::kGelu},
          {OpKind::kRelu, EwOp::kRelu},   {OpKind::kAbs, EwOp::kAbs},          {OpKind::kSign, EwOp::kSign},
          {OpKind::kFloor, EwOp::kFloor}, {OpKind::kCeil, EwOp::kCeil},        {OpKind::kRoundEven, EwOp::kRoundEven},
          {OpKind::kRoundAway, EwOp::kRoundAway}, {OpKind::kRsqrt, EwOp::kRsqrt},
          {OpKind::kLog, EwOp::kLog},     {OpKind::kLog1p, EwOp::kLog1p},      {OpKind::kExpm1, EwOp::kExpm1},
          {OpKind::kSin, EwOp::kSin},     {OpKind::kCos, EwOp::kCos},          {OpKind::kCbrt, EwOp::kCbrt},
          {OpKind::kAsin, EwOp::kAsin},   {OpKind::kAcos, EwOp::kAcos},        {OpKind::kAtan, EwOp::kAtan},
          {OpKind::kAsinh, EwOp::kAsinh}, {OpKind::kAcosh, EwOp::kAcosh},      {OpKind::kAtanh, EwOp::kAtanh}};
      const EwOp fn = std::find_if(std::begin(fns), std::end(fns), [&](auto& p) { return p.first == op.kind; })->second;
      r = b.op(fn, t, in[0]);
      if (op.kind == OpKind::kGelu) {
        const Attribute* approx = op.attr("approximate");
        b.p.code[r].flag = approx && approx->s == "tanh" ? 1 : 0;
      }
      break;
    }
  }
  if (const std::optional<FusedClamp> c = fused_clamp(op)) {
    if (!f) return fail("a fused clamp on integers runs on the reference");
    const uint8_t clamped = b.op(EwOp::kClamp, t, r);
    b.p.code[clamped].f = float(c->min);  // as the reference: the bounds rounded to f32
    b.p.code[clamped].g = float(c->max);
    r = clamped;
  }
  return half ? round_half(b, r, *result_storage) : r;
}

std::optional<EwProgram> program_for(const Graph& g, const Op& op, std::string* why) {
  // Programs compute the default formulas; ops a numerics profile redefines stay out.
  if (std::string formula = profile_formula(g, op); !formula.empty()) {
    *why = "numerics profile " + formula + " (programs compute the default formulas)";
    return std::nullopt;
  }
  ProgramBuilder b;
  std::vector<uint8_t> in;
  for (int v : op.operands) {
    const std::optional<EwStorage> s = value_storage(g.values[size_t(v)].type.element);
    if (!s) {
      *why = "operand element type " + g.values[size_t(v)].type.element.to_string() + " has no element-wise program";
      return std::nullopt;
    }
    in.push_back(b.load(*s));
  }
  const std::optional<uint8_t> r = emit_op(b, g, op, in, why);
  if (!r) return std::nullopt;
  b.p.result = *r;
  b.p.out = *value_storage(g.values[size_t(op.results[0])].type.element);
  if (std::string w = b.p.validate(); !w.empty()) {
    *why = "internal: " + w;
    return std::nullopt;
  }
  return b.p;
}

std::optional<EwProgram> quantized_program_for(const Graph& g, const Op& op, std::string* why) {
  auto fail = [&](std::string w) {
    *why = std::move(w);
    return std::nullopt;
  };
  const bool binary = op.kind == OpKind::kAdd || op.kind == OpKind::kMul;
  if (!binary && op.kind != OpKind::kRequantize && op.kind != OpKind::kRelu && op.kind != OpKind::kClamp) {
    return fail("no integer program for this op");
  }
  if (op.results.size() != 1 || op.operands.size() != (binary ? 2u : 1u)) return fail("not an element-wise op");
  if (std::string formula = profile_formula(g, op); !formula.empty()) {
    return fail("numerics profile " + formula + " (programs compute the default formulas)");
  }
  const ElementType& eo = g.values[size_t(op.results[0])].type.element;
  auto elem = [&](size_t i) -> const ElementType& { return g.values[size_t(op.operands[i])].type.element; };
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (elem(i).kind != ElementKind::kUniform || !value_storage(elem(i))) {
      return fail("only per-tensor quantized operands of 8 to 32 bits have an integer program");
    }
  }
  if (eo.kind != ElementKind::kUniform || !value_storage(eo)) {
    return fail("only per-tensor quantized results of 8 to 32 bits have an integer program");
  }
  ProgramBuilder b;
  std::vector<uint8_t> in;
  for (size_t i = 0; i < op.operands.size(); ++i) in.push_back(b.load(*value_storage(elem(i))));
  auto constant_i64 = [&](int64_t v) {
    EwInstr c;
    c.op = EwOp::kConst;
    c.type = EwType::kI64;
    c.i = v;
    return b.add(c);
  };
  // The requantization's last step, clamp(rne(t) + zo, lo, hi), is kQuant with scale 1 (t / 1
  // is t): the bounds narrowed by a fused clamp, as the reference's qrt.clamp on the result.
  int64_t lo = eo.storage.min, hi = eo.storage.max;
  if (const std::optional<FusedClamp> c = fused_clamp(op)) std::tie(lo, hi) = clamp_stored_bounds(eo, 0, c->min, c->max);
  auto finish = [&](uint8_t t) {
    EwInstr q;
    q.op = EwOp::kQuant;
    q.type = EwType::kI64;
    q.a = t;
    q.f = 1.0f;
    q.i = eo.zero_points[0];
    q.j = lo;
    q.k = hi;
    return b.add(q);
  };
  // f32(q - z) · M with one f32 rounding each: kDequant with M as its scale.
  auto scaled = [&](uint8_t q, int64_t z, float m) {
    EwInstr d;
    d.op = EwOp::kDequant;
    d.a = q;
    d.i = z;
    d.f = m;
    return b.add(d);
  };
  const double so = eo.scales[0];
  uint8_t r = 0;
  switch (op.kind) {
    case OpKind::kRequantize:  // rne(f32(q - z_in) · M) + z_out
      r = finish(scaled(in[0], elem(0).zero_points[0], numerics::multiplier(elem(0).scales[0], so)));
      break;
    case OpKind::kAdd: {  // rne(f32(a - za) · M_a + f32(b - zb) · M_b) + zo
      const uint8_t ta = scaled(in[0], elem(0).zero_points[0], numerics::multiplier(elem(0).scales[0], so));
      const uint8_t tb = scaled(in[1], elem(1).zero_points[0], numerics::multiplier(elem(1).scales[0], so));
      r = finish(b.op(EwOp::kAdd, EwType::kF32, ta, tb));
      break;
    }
    case OpKind::kMul: {  // rne(f32((a - za)(b - zb)) · M) + zo, the product exact in i64
      const uint8_t da = b.op(EwOp::kSub, EwType::kI64, in[0], constant_i64(elem(0).zero_points[0]));
      const uint8_t db = b.op(EwOp::kSub, EwType::kI64, in[1], constant_i64(elem(1).zero_points[0]));
      const uint8_t product = b.op(EwOp::kToF32, EwType::kF32, b.op(EwOp::kMul, EwType::kI64, da, db));
      EwInstr m;
      m.op = EwOp::kConst;
      m.type = EwType::kF32;
      m.f = numerics::multiplier(elem(0).scales[0] * elem(1).scales[0], so);
      r = finish(b.op(EwOp::kMul, EwType::kF32, product, b.add(m)));
      break;
    }
    default: {  // relu: max(q, zp); clamp: the stored bounds of [min, max]; same type in and out
      if (!(elem(0) == eo)) return fail("a quantized clamp keeps its type");
      const auto [ql, qh] = op.kind == OpKind::kRelu
                                ? std::pair<int64_t, int64_t>(eo.zero_points[0], eo.storage.max)
                                : clamp_stored_bounds(eo, 0, op.attr("min")->f, op.attr("max")->f);
      r = b.op(EwOp::kMin, EwType::kI64, b.op(EwOp::kMax, EwType::kI64, in[0], constant_i64(ql)), constant_i64(qh));
      break;
    }
  }
  b.p.result = r;
  b.p.out = *value_storage(eo);
  if (std::string w = b.p.validate(); !w.empty()) return fail("internal: " + w);
  return b.p;
}

BroadcastLoops broadcast_loops(const std::vector<std::vector<int64_t>>& operands, const std::vector<int64_t>& result) {
  BroadcastLoops l;
  const size_t rank = result.size(), count = operands.size();
  l.full.resize(count);
  for (size_t d = 0; d < rank; ++d) {
    if (result[d] == 1) continue;  // neutral: every operand has extent 1 there
    std::vector<bool> full(count);
    for (size_t k = 0; k < count; ++k) {
      const auto& dims = operands[k];
      const size_t pad = rank - dims.size();
      full[k] = d >= pad && dims[d - pad] == result[d];
    }
    bool same = !l.sizes.empty();
    for (size_t k = 0; same && k < count; ++k) same = l.full[k].back() == full[k];
    if (same) {
      l.sizes.back() *= result[d];
    } else {
      l.sizes.push_back(result[d]);
      for (size_t k = 0; k < count; ++k) l.full[k].push_back(full[k]);
    }
  }
  if (l.sizes.empty()) {  // a single element
    l.sizes.push_back(1);
    for (size_t k = 0; k < count; ++k) l.full[k].push_back(true);
  }
  const size_t dims = l.sizes.size();
  l.strides.assign(count, std::vector<int64_t>(dims, 0));
  l.out_strides.assign(dims, 0);
  for (size_t k = 0; k < count; ++k) {
    int64_t s = 1;
    for (size_t d = dims; d-- > 0;) {
      l.strides[k][d] = l.full[k][d] ? s : 0;
      if (l.full[k][d]) s *= l.sizes[d];
    }
  }
  int64_t s = 1;
  for (size_t d = dims; d-- > 0;) {
    l.out_strides[d] = s;
    s *= l.sizes[d];
  }
  return l;
}

namespace {

class EwOpKernel final : public OpKernel {
 public:
  EwOpKernel(const Graph& graph, const Op& op, const std::vector<int>& inputs, EwProgram program, BroadcastLoops loops,
             std::string level, std::shared_ptr<const CompiledKernel> code, std::string fused)
      : OpKernel(graph.values[size_t(op.results[0])].type), graph_(&graph), op_(op), program_(std::move(program)),
        planned_loops_(std::move(loops)), level_(std::move(level)), code_(std::move(code)), fused_(std::move(fused)) {
    for (int v : inputs) operand_dims_.push_back(graph.values[size_t(v)].type.dims);
  }

  Result<std::vector<int64_t>> result_dims(const std::vector<const Tensor*>& operands) const override {
    std::vector<int64_t> dims = operands[0]->type.dims;
    for (size_t k = 1; k < operands.size(); ++k) {
      auto b = broadcast_shapes(dims, operands[k]->type.dims);
      if (!b.is_ok()) return Status::error_at(op_.loc, std::string("'") + op_info(op_.kind).name + "' op " + b.status().message());
      dims = std::move(b).value();
    }
    return checked_result_dims(op_, std::move(dims));
  }

  Status run_into(const std::vector<const Tensor*>& operands, Tensor& y, Parallel& parallel) const override {
    bool planned = true;
    for (size_t k = 0; k < operands.size() && planned; ++k) planned = operands[k]->type.dims == operand_dims_[k];
    if (planned) return run_loops(planned_loops_, operands, y, parallel);
    // Dynamic dimensions: the loops of this call's shapes, when the program's repeated
    // operands are still the repeated ones (else the reference runs this call).
    std::vector<std::vector<int64_t>> dims;
    for (const Tensor* t : operands) dims.push_back(t->type.dims);
    const BroadcastLoops loops = broadcast_loops(dims, y.type.dims);
    for (size_t k = 0; k < operands.size(); ++k) {
      if (program_.inputs[k].scalar == loops.full[k].back()) {
        QRT_ASSIGN_OR_RETURN(Tensor r, evaluate_op_reference(*graph_, op_, operands));
        std::memcpy(y.bytes(), r.bytes(), r.byte_size());
        return Status::ok();
      }
    }
    return run_loops(loops, operands, y, parallel);
  }

  std::string describe() const override {
    std::string how;
    for (size_t k = 0; k < program_.inputs.size(); ++k) {
      if (program_.inputs[k].scalar) how += (how.empty() ? "" : ", ") + std::string("operand ") + std::to_string(k) + " repeated";
    }
    if (!fused_.empty()) how = "fuses " + fused_ + (how.empty() ? "" : "; " + how);
    return program_.name() + "__" + level_ + (how.empty() ? "" : " (" + how + ")");
  }

 private:
  Status run_loops(const BroadcastLoops& loops, const std::vector<const Tensor*>& operands, Tensor& y,
                   Parallel& parallel) const {
    // An empty dimension: nothing to compute (and no piece size to divide by).
    if (std::find(loops.sizes.begin(), loops.sizes.end(), int64_t(0)) != loops.sizes.end()) return Status::ok();
    const size_t dims = loops.sizes.size(), count = operands.size();
    const int64_t n = loops.sizes[dims - 1];
    const int64_t rows = dims >= 2 ? loops.sizes[dims - 2] : 1;
    int64_t outer = 1;
    for (size_t d = 0; d + 2 < dims; ++d) outer *= loops.sizes[d];
    // Tasks of whole rows (long rows: pieces of one row), each worth a hand-off.
    const bool small = parallel.split_small_work();
    const int64_t target = small ? 7 : 16384;
    const int64_t piece = rows == 1 ? std::max<int64_t>(target, 1) : n;  // elements per call along the run
    const int64_t pieces = (n + piece - 1) / piece;
    const int64_t rows_per_task = std::max<int64_t>(1, small ? 1 : target / std::max<int64_t>(n, 1));
    const int64_t row_tasks = (rows + rows_per_task - 1) / rows_per_task;
    const int64_t tasks = outer * row_tasks * pieces;
    const unsigned out_bytes = ew_storage_bytes(program_.out);
    parallel.for_each(size_t(tasks), [&](size_t t) {
      const int64_t p = int64_t(t) % pieces, rt = int64_t(t) / pieces % row_tasks, o = int64_t(t) / pieces / row_tasks;
      const int64_t r0 = rt * rows_per_task, e0 = p * piece;
      EwArgs args{};
      // Element offsets of the outer index o, row r0 and element e0 per operand.
      std::vector<int64_t> idx(dims, 0);
      int64_t rest = o;
      for (size_t d = dims >= 2 ? dims - 2 : 0; d-- > 0;) {
        idx[d] = rest % loops.sizes[d];
        rest /= loops.sizes[d];
      }
      if (dims >= 2) idx[dims - 2] = r0;
      idx[dims - 1] = e0;
      for (size_t k = 0; k < count; ++k) {
        int64_t off = 0;
        for (size_t d = 0; d < dims; ++d) off += idx[d] * loops.strides[k][d];
        const unsigned bytes = ew_storage_bytes(program_.inputs[k].storage);
        args.in[k] = operands[k]->bytes() + off * bytes;
        args.in_step[k] = dims >= 2 ? loops.strides[k][dims - 2] * bytes : 0;
      }
      int64_t off = 0;
      for (size_t d = 0; d < dims; ++d) off += idx[d] * loops.out_strides[d];
      args.out = y.bytes() + off * out_bytes;
      args.out_step = dims >= 2 ? loops.out_strides[dims - 2] * out_bytes : 0;
      args.n = std::min(piece, n - e0);
      args.rows = std::min(rows_per_task, rows - r0);
      reinterpret_cast<EwFn>(const_cast<void*>(code_->entry()))(&args, &program_);
    });
    return Status::ok();
  }

  const Graph* graph_;  // owned by the plan that owns this kernel
  Op op_;
  EwProgram program_;
  BroadcastLoops planned_loops_;  // for the operands' declared shapes
  std::string level_;
  std::shared_ptr<const CompiledKernel> code_;
  std::string fused_;
  std::vector<std::vector<int64_t>> operand_dims_;
};

struct PreparedEw final : PreparedOp {
  const Graph* graph = nullptr;
  const Op* op = nullptr;
  EwProgram program;
  BroadcastLoops loops;
};

class EwFamily final : public OpFamily {
 public:
  const char* name() const override { return "ewprogram"; }
  KernelOp kind() const override { return KernelOp::kEwProgram; }

  Result<std::unique_ptr<PreparedOp>> prepare(const Graph& graph, const Op& op, std::string* why_not) const override {
    if (op.results.size() != 1 || op.operands.size() > kEwMaxInputs) return refuse(why_not, "not an element-wise op");
    std::string why;
    std::optional<EwProgram> program = program_for(graph, op, &why);
    // Quantized add, mul, requantize, relu and clamp the element-wise kernels do not take (16-bit
    // storage, mixed widths): their integer formulas as a program.
    std::string integer_why;
    if (!program) program = quantized_program_for(graph, op, &integer_why);
    // A float op's reason is the float programs' (the integer ones never take it).
    const bool quantized_result = graph.values[size_t(op.results[0])].type.element.is_any_uniform();
    if (!program) {
      return refuse(why_not, !quantized_result || integer_why.empty() || integer_why == "no integer program for this op"
                                 ? why
                                 : integer_why);
    }
    // Dynamic dimensions only where an operand has the result's own dimensions (a batch
    // dimension running through): the loops are planned as if they were 2 and checked per call.
    const Type& result = graph.values[size_t(op.results[0])].type;
    std::vector<std::vector<int64_t>> dims;
    for (int v : op.operands) {
      const Type& t = graph.values[size_t(v)].type;
      if (!t.has_static_shape() && t.dims != result.dims) {
        return refuse(why_not, "dynamic shapes that broadcast differently per call run on the reference");
      }
      dims.push_back(t.dims);
      for (int64_t& d : dims.back()) d = d < 0 ? 2 : d;
    }
    std::vector<int64_t> planned = result.dims;
    for (int64_t& d : planned) d = d < 0 ? 2 : d;
    auto p = std::make_unique<PreparedEw>();
    p->loops = broadcast_loops(dims, planned);
    for (size_t k = 0; k < dims.size(); ++k) program->inputs[k].scalar = !p->loops.full[k].back();
    p->graph = &graph;
    p->op = &op;
    p->program = std::move(*program);
    return std::unique_ptr<PreparedOp>(std::move(p));
  }

  std::string check(const PreparedOp& prepared, const Backend* backend) const override {
    return backend->program_why_not(static_cast<const PreparedEw&>(prepared).program);
  }

  Result<std::unique_ptr<OpKernel>> create(const PreparedOp& prepared, const Backend* backend) const override {
    const auto& p = static_cast<const PreparedEw&>(prepared);
    QRT_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> code,
                         program_cache().get(ProgramKey{backend->isa(), p.program, p.program.key()}));
    const std::string level = std::string(backend->name()) + "_" + isa_suffix(backend->isa());
    return make_ew_kernel(*p.graph, *p.op, p.op->operands, p.program, p.loops, level, std::move(code));
  }

  Result<std::unique_ptr<OpKernel>> create_in_plan(const PreparedOp& prepared, const Backend* backend,
                                                   Generator generator) const override {
    const auto& p = static_cast<const PreparedEw&>(prepared);
    std::string why;
    QRT_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> table,
                         make_table_kernel(*p.graph, *p.op, p.program, "", backend->isa(), generator, &why));
    if (table) return table;
    return create(prepared, backend);
  }
};

}  // namespace

std::unique_ptr<OpKernel> make_ew_kernel(const Graph& graph, const Op& root, std::vector<int> inputs, EwProgram program,
                                         BroadcastLoops loops, std::string level, std::shared_ptr<const CompiledKernel> code,
                                         std::string fused) {
  return std::make_unique<EwOpKernel>(graph, root, inputs, std::move(program), std::move(loops), std::move(level),
                                      std::move(code), std::move(fused));
}

const OpFamily& ew_program_family() {
  static const EwFamily family;
  return family;
}

}  // namespace qrt::jit
