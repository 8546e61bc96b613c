// qrt — ONNX importer: block-wise quantized weights. com.microsoft MatMulNBits (the 2/4/8-bit
// weight format ONNX Runtime's LLM exports use) and the `block_size` attribute of
// QuantizeLinear / DequantizeLinear (opset 21). Both become sub-channel `!quant.uniform`
// types, so the weights stay packed and reach the weight-only kernels.
#include <cmath>

#include "importers/onnx_importer_impl.h"
#include "ir/ops.h"

namespace qrt::importers::onnx_detail {

namespace {

bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Code `i` of a little-endian bit stream of `bits`-bit codes, lowest bits first (8 % bits == 0).
int64_t packed_code(const uint8_t* bytes, int64_t i, int64_t bits) {
  const int64_t per_byte = 8 / bits;
  return (bytes[i / per_byte] >> ((i % per_byte) * bits)) & ((int64_t(1) << bits) - 1);
}

}  // namespace

Result<ElementType> Importer::make_block_quant_type(const onnx::NodeProto& node, const ElementType& storage,
                                                    const Type& data_type, const DenseElements* scale,
                                                    const DenseElements* zp, int64_t axis, int64_t block_size) {
  if (!scale->type.element.is_float()) return error(node, "a scale must be a constant float tensor");
  if (!storage.is_integer() || storage.int_width > 32 || storage.int_width < 2) {
    return error(node, "quantized data must be a 4-, 8-, 16- or 32-bit integer tensor, got " + storage.to_string());
  }
  const size_t rank = data_type.rank();
  if (axis < 0) axis += int64_t(rank);
  if (axis < 0 || axis >= int64_t(rank)) {
    return error(node, "axis " + std::to_string(axis) + " is out of range for a tensor of rank " + std::to_string(rank),
                 ErrorCode::kVerify);
  }
  if (!data_type.has_static_shape()) return error(node, "block-wise quantization needs a static shape, got " + data_type.to_string());
  const std::vector<int64_t>& dims = data_type.dims;
  const std::vector<int64_t>& pdims = scale->type.dims;
  if (pdims.size() != rank) {
    return error(node, "with block_size the scale must have the data's rank " + std::to_string(rank) + ", got [" +
                           dims_to_string(pdims) + "]", ErrorCode::kVerify);
  }
  if (zp && zp->type.dims != pdims) {
    return error(node, "the zero point's shape [" + dims_to_string(zp->type.dims) + "] differs from the scale's [" +
                           dims_to_string(pdims) + "]", ErrorCode::kVerify);
  }
  std::vector<int32_t> axes;
  std::vector<int64_t> blocks;
  for (size_t d = 0; d < rank; ++d) {
    if (int64_t(d) == axis) {
      if (dims[d] % block_size != 0) {
        // qrt's sub-channel types (as MLIR's) need blocks that tile the tensor.
        return error(node, "dimension " + std::to_string(d) + " of size " + std::to_string(dims[d]) +
                               " is not a multiple of block_size " + std::to_string(block_size) +
                               "; a partial last block is not supported");
      }
      if (pdims[d] != dims[d] / block_size) {
        return error(node, "the scale's dimension " + std::to_string(d) + " is " + std::to_string(pdims[d]) + ", expected " +
                               std::to_string(dims[d] / block_size) + " blocks of " + std::to_string(block_size),
                     ErrorCode::kVerify);
      }
    } else if (pdims[d] != dims[d]) {
      return error(node, "the scale's dimension " + std::to_string(d) + " is " + std::to_string(pdims[d]) +
                             ", expected the data's " + std::to_string(dims[d]), ErrorCode::kVerify);
    }
    axes.push_back(int32_t(d));
    blocks.push_back(int64_t(d) == axis ? block_size : 1);
  }
  const size_t n = size_t(scale->type.num_elements());
  std::vector<double> scales(n);
  std::vector<int64_t> zps(n, 0);
  for (size_t i = 0; i < n; ++i) {
    scales[i] = scale->float_at(i);
    if (zp) zps[i] = zp->int_at(i);
  }
  const QuantStorage s = QuantStorage::full_range(storage.int_width, storage.int_sign != Signedness::kUnsigned);
  const ElementType e = ElementType::make_sub_channel(s, scale->type.element.float_kind, std::move(axes), std::move(blocks),
                                                     pdims, std::move(scales), std::move(zps));
  Status ok = Type::tensor(dims, e).verify();
  if (!ok.is_ok()) return error(node, ok.message(), ErrorCode::kVerify);
  return e;
}

// MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?) with attributes K, N, bits,
// block_size: Y = A · dequantize(B)ᵀ (+ bias). B is uint8 [N, k_blocks, blob] holding, per
// output column n, its K codes along K, `bits` bits each, lowest bits first; scales are
// [N, k_blocks] (or flat); zero points are packed the same way per column (uint8
// [N, ceil(k_blocks·bits/8)]) or given unpacked in A's float type, and default to 2^(bits-1).
// The import is a hybrid matmul of A and a constant [K, N] of type
// !quant.uniform<u{bits}:f32:{0:block_size, 1:1}, ...>. An f16 A (with f16 scales, zero
// points and bias) is widened to f32 (exactly), the product and the bias sum are computed in
// f32 and the result is rounded to f16 once, as ONNX Runtime's CPU kernel computes it.
Status Importer::matmul_nbits(const onnx::NodeProto& node, const Attrs& a) {
  QRT_ASSIGN_OR_RETURN(int64_t k, attr_int(node, a, "K", -1));
  QRT_ASSIGN_OR_RETURN(int64_t n, attr_int(node, a, "N", -1));
  QRT_ASSIGN_OR_RETURN(int64_t bits, attr_int(node, a, "bits", 4));
  QRT_ASSIGN_OR_RETURN(int64_t block, attr_int(node, a, "block_size", -1));
  // Bounds that keep the arithmetic below in range; B's real shape bounds the rest.
  constexpr int64_t kMaxExtent = int64_t(1) << 40, kMaxBlock = int64_t(1) << 20;
  if (k <= 0 || n <= 0 || k > kMaxExtent || n > kMaxExtent) {
    return error(node, "attributes K and N must be given, positive and at most 2^40, got K = " + std::to_string(k) +
                           ", N = " + std::to_string(n), ErrorCode::kParse);
  }
  if (bits != 2 && bits != 4 && bits != 8) return error(node, "bits = " + std::to_string(bits) + " is not supported (2, 4 or 8)");
  if (block < 16 || block > kMaxBlock || !is_power_of_two(block)) {
    return error(node, "block_size must be a power of two in [16, 2^20], got " + std::to_string(block), ErrorCode::kParse);
  }
  if (node.input_size() < 3) return error(node, "expects inputs A, B and scales", ErrorCode::kParse);
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  const Type tx = type(x);
  const bool half = tx.element.is_float() && tx.element.float_kind == FloatKind::kF16;
  if (!tx.element.is_float() || (tx.element.float_kind != FloatKind::kF32 && !half)) {
    return error(node, "A must be an f32 or f16 tensor, got " + tx.to_string());
  }
  const ElementType f32 = ElementType::make_float(FloatKind::kF32);
  // f16 operands widened to f32 (exact).
  auto widened = [&](int v) { return half ? emit(OpKind::kCast, {v}, Type::tensor(type(v).dims, f32)) : v; };
  if (tx.rank() < 2 || (tx.dims.back() >= 0 && tx.dims.back() != k)) {
    return error(node, "A " + tx.to_string() + " must have rank >= 2 and K = " + std::to_string(k) + " as its last dimension",
                 ErrorCode::kVerify);
  }
  const int64_t k_blocks = (k + block - 1) / block, blob = block * bits / 8;
  const DenseElements* b = constant(node, 1);
  if (!b) return error(node, "B '" + node.input(1) + "' must be a constant (an initializer)");
  if (!(b->type.element == ElementType::make_int(8, Signedness::kUnsigned)) || b->type.dims != std::vector<int64_t>{n, k_blocks, blob}) {
    return error(node, "B must be uint8 [N, k_blocks, blob_size] = [" + dims_to_string({n, k_blocks, blob}) + "], got " +
                           b->type.to_string(), ErrorCode::kVerify);
  }
  QRT_ASSIGN_OR_RETURN(const DenseElements* scales, param(node, 2, "scales"));
  if (!scales) return error(node, "the scales input is missing", ErrorCode::kParse);
  if (!(scales->type.element == tx.element) || scales->type.num_elements() != n * k_blocks) {
    return error(node, "scales must be " + tx.element.to_string() + " with N * k_blocks = " + std::to_string(n * k_blocks) +
                           " elements, got " + scales->type.to_string(), ErrorCode::kVerify);
  }
  QRT_ASSIGN_OR_RETURN(const DenseElements* zp, param(node, 3, "zero points"));
  const int64_t zp_row = (k_blocks * bits + 7) / 8;  // packed zero-point bytes per column
  const int64_t qmax = (int64_t(1) << bits) - 1;
  auto zero_point = [&](int64_t col, int64_t blk) -> Result<int64_t> {
    if (!zp) return int64_t(1) << (bits - 1);
    if (zp->type.element.is_integer()) return packed_code(zp->data() + col * zp_row, blk, bits);
    const double z = zp->float_at(size_t(col * k_blocks + blk));
    if (z != std::nearbyint(z) || z < 0 || z > double(qmax)) {
      return error(node, "float zero point " + std::to_string(z) + " (column " + std::to_string(col) + ", block " +
                             std::to_string(blk) + ") is not an integer in [0, " + std::to_string(qmax) +
                             "]; qrt's quantized types need integer zero points");
    }
    return int64_t(z);
  };
  if (zp) {
    const bool packed = zp->type.element == ElementType::make_int(8, Signedness::kUnsigned) && zp->type.num_elements() == n * zp_row;
    const bool unpacked = zp->type.element == tx.element && zp->type.num_elements() == n * k_blocks;
    if (!packed && !unpacked) {
      return error(node, "zero points must be uint8 with N * ceil(k_blocks * bits / 8) = " + std::to_string(n * zp_row) +
                             " elements or " + tx.element.to_string() + " with N * k_blocks = " + std::to_string(n * k_blocks) +
                             ", got " + zp->type.to_string(), ErrorCode::kVerify);
    }
  }
  // g_idx maps each k to its block (group). The trivial map is k / block_size; act-order
  // (GPTQ) exports permute it. perm lists the k of each group in turn (stable), so that
  // group g occupies rows [g · block, (g + 1) · block) of the permuted weights, and A's
  // columns are gathered in the same order: the products and their sum are the definition's,
  // taken in another k order.
  std::vector<int64_t> perm;
  if (node.input_size() > 4 && !node.input(4).empty()) {
    const DenseElements* g_idx = constant(node, 4);
    if (!g_idx || !g_idx->type.element.is_integer() || g_idx->type.num_elements() != k) {
      return error(node, "g_idx must be a constant integer tensor of K = " + std::to_string(k) + " elements", ErrorCode::kVerify);
    }
    std::vector<int64_t> members(size_t(k_blocks), 0);
    bool trivial = true;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t g = g_idx->int_at(size_t(i));
      if (g < 0 || g >= k_blocks) {
        return error(node, "g_idx[" + std::to_string(i) + "] = " + std::to_string(g) + " is not a block in [0, " +
                               std::to_string(k_blocks) + ")", ErrorCode::kVerify);
      }
      ++members[size_t(g)];
      trivial = trivial && g == i / block;
    }
    for (int64_t g = 0; g < k_blocks; ++g) {
      const int64_t want = std::min(block, k - g * block);
      if (members[size_t(g)] != want) {
        return error(node, "g_idx gives block " + std::to_string(g) + " " + std::to_string(members[size_t(g)]) +
                               " rows of K; each block needs " + std::to_string(want), ErrorCode::kVerify);
      }
    }
    if (!trivial) {
      for (int64_t g = 0; g < k_blocks; ++g) {
        for (int64_t i = 0; i < k; ++i) {
          if (g_idx->int_at(size_t(i)) == g) perm.push_back(i);
        }
      }
    }
  }
  // The weights as [Kp, N] codes, Kp = k_blocks · block_size. A partial last block is padded
  // with codes equal to its zero point (weights 0), and A with zeros along K to match.
  const int64_t kp = k_blocks * block;
  const QuantStorage storage = QuantStorage::full_range(unsigned(bits), false);
  DenseElements w = DenseElements::zeros(Type::tensor({kp, n}, ElementType::make_int(unsigned(bits), Signedness::kUnsigned)));
  std::vector<double> block_scales(size_t(k_blocks * n));
  std::vector<int64_t> block_zps(size_t(k_blocks * n));
  for (int64_t col = 0; col < n; ++col) {
    for (int64_t blk = 0; blk < k_blocks; ++blk) {
      QRT_ASSIGN_OR_RETURN(int64_t z, zero_point(col, blk));
      const size_t p = size_t(blk * n + col);
      block_scales[p] = scales->float_at(size_t(col * k_blocks + blk));
      block_zps[p] = z;
      const uint8_t* codes = b->data() + (col * k_blocks + blk) * blob;
      for (int64_t i = 0; i < block; ++i) {
        const int64_t row = blk * block + i;
        if (row >= k) {
          w.set_int(size_t(row * n + col), z);
        } else if (perm.empty()) {
          w.set_int(size_t(row * n + col), packed_code(codes, i, bits));
        } else {
          // Row `row` of the permuted weights is k = perm[row], stored in its own block's blob.
          const int64_t kk = perm[size_t(row)];
          const uint8_t* own = b->data() + (col * k_blocks + kk / block) * blob;
          w.set_int(size_t(row * n + col), packed_code(own, kk % block, bits));
        }
      }
    }
  }
  const ElementType e =
      k_blocks > 1 ? ElementType::make_sub_channel(storage, FloatKind::kF32, {0, 1}, {block, 1}, {k_blocks, n},
                                                   std::move(block_scales), std::move(block_zps))
                   : ElementType::make_per_axis(storage, FloatKind::kF32, 1, std::move(block_scales), std::move(block_zps));
  const Type wt = Type::tensor({kp, n}, e);
  if (Status ok = wt.verify(); !ok.is_ok()) return error(node, "scales or zero points: " + ok.message(), ErrorCode::kVerify);
  const int wc = emit(OpKind::kConstant, {}, wt, {{"value", Attribute::make_dense(std::move(w))}});
  g_.values[size_t(wc)].name = ssa_name(node.input(1));
  int lhs = widened(x);
  if (!perm.empty()) {
    DenseElements indices = DenseElements::zeros(Type::tensor({k}, ElementType::make_int(64)));
    for (int64_t i = 0; i < k; ++i) indices.set_int(size_t(i), perm[size_t(i)]);
    const Type it = indices.type;  // copied before the move below
    const int ic = emit(OpKind::kConstant, {}, it, {{"value", Attribute::make_dense(std::move(indices))}});
    const int64_t axis = int64_t(tx.rank()) - 1;
    lhs = emit(OpKind::kGather, {lhs, ic}, type(lhs), {{"axis", Attribute::make_int(axis)}});
  }
  if (kp != k) {
    std::vector<int64_t> pads(2 * tx.rank(), 0);
    pads.back() = kp - k;
    std::vector<int64_t> padded = tx.dims;
    padded.back() = kp;
    lhs = emit(OpKind::kPad, {lhs}, Type::tensor(padded, f32), {{"pads", Attribute::make_int_array(pads)}});
  }
  auto dims = matmul_result_dims(type(lhs).dims, wt.dims);
  if (!dims.is_ok()) return error(node, dims.status().message(), ErrorCode::kVerify);
  int y = emit(OpKind::kMatmul, {lhs, wc}, Type::tensor(*dims, f32));
  if (node.input_size() > 5 && !node.input(5).empty()) {
    QRT_ASSIGN_OR_RETURN(int bias, value(node, 5));
    if (!(type(bias).element == tx.element) || type(bias).dims != std::vector<int64_t>{n}) {
      return error(node, "bias must be " + tx.element.to_string() + " [" + std::to_string(n) + "], got " + type(bias).to_string(),
                   ErrorCode::kVerify);
    }
    y = emit(OpKind::kAdd, {y, widened(bias)}, type(y));
  }
  if (half) y = emit(OpKind::kCast, {y}, Type::tensor(type(y).dims, tx.element));  // one rounding to f16
  bind(node, 0, y);
  return Status::ok();
}

}  // namespace qrt::importers::onnx_detail
