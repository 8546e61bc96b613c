// qrt — GEMM exactness analysis and weight packing for a backend's traits (see gemm_pack.h).
#include "jit/ops/gemm_pack.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "jit/core/microkernel.h"

namespace qrt::jit {

void PackedGemm::pack_a_rows(const uint8_t* src, int64_t src_stride, int64_t rows, uint8_t* dst, int32_t* sums) const {
  if (!row_correction && src_stride == k && k_padded == k) {
    // Rows back to back on both sides and no sums wanted: one long row, whole vectors of
    // several short rows at a time (1x1 convolutions over 16 or 24 channels; on the widened
    // path every row: its per-row steps and tails were more than half of the pack's time,
    // 7.9% of mobilenet_v2's samples at avx2 before and 3.4% after, AMD Zen 3).
    PackRowsArgs whole{src, dst, k * rows, k * rows, nullptr, 1, k * rows, a_row_bytes() * rows};
    call_microkernel(pack_kernel->entry(), whole, pack_desc);
    return;
  }
  PackRowsArgs args{src, dst, k, k_padded, row_correction ? sums : nullptr, rows, src_stride, a_row_bytes()};
  call_microkernel(pack_kernel->entry(), args, pack_desc);
}

namespace {

// The s16 range of a'·w0 + a'·w1 over a' in [lo, hi] (independent activations).
bool pair_fits_s16(int32_t w0, int32_t w1, int32_t lo, int32_t hi) {
  const int64_t max = std::max<int64_t>(int64_t(w0) * lo, int64_t(w0) * hi) +
                      std::max<int64_t>(int64_t(w1) * lo, int64_t(w1) * hi);
  const int64_t min = std::min<int64_t>(int64_t(w0) * lo, int64_t(w0) * hi) +
                      std::min<int64_t>(int64_t(w1) * lo, int64_t(w1) * hi);
  return max <= 32767 && min >= -32768;
}

// The weights after the u8 -> s8 flip: w'[k][n] (0 outside the matrix).
struct FlippedWeights {
  const GemmSpec& s;
  int32_t shift;
  int32_t operator()(int64_t k, int64_t n) const { return k < s.k && n < s.n ? s.w[size_t(k * s.n + n)] - shift : 0; }
};

}  // namespace

GemmAnalysis analyze_gemm(const GemmSpec& s) {
  GemmAnalysis a;
  const int32_t a_shift = s.a_signed ? 128 : 0;
  const FlippedWeights w_at{s, s.w_signed ? 0 : 128};
  const int32_t a_lo = s.a_min + a_shift, a_hi = s.a_max + a_shift;
  // Exactness of the pair-sum path: every (k, k+1) pair of every column, for every activation.
  a.pair_sum_exact = true;
  a.path_reason = "no weight pair can saturate s16 for activations in [" + std::to_string(s.a_min) + ", " +
                  std::to_string(s.a_max) + "]";
  for (int64_t k = 0; k < s.k && a.pair_sum_exact; k += 2) {
    for (int64_t n = 0; n < s.n; ++n) {
      if (!pair_fits_s16(w_at(k, n), w_at(k + 1, n), a_lo, a_hi)) {
        a.pair_sum_exact = false;
        a.path_reason = "weights (" + std::to_string(w_at(k, n) + w_at.shift) + ", " +
                        std::to_string(w_at(k + 1, n) + w_at.shift) + ") at k = " + std::to_string(k) + ", n = " +
                        std::to_string(n) + " could saturate vpmaddubsw's s16 pair sum";
        break;
      }
    }
  }
  // Every result must fit int32 (then wrapping int32 arithmetic is exact).
  const int64_t a_dev = activation_deviation(s);
  const bool byte_out = s.out == OutKind::kU8 || s.out == OutKind::kS8;
  const int32_t storage_lo = s.out == OutKind::kS8 ? -128 : 0, storage_hi = s.out == OutKind::kS8 ? 127 : 255;
  // The saturating narrowing's proof is the f32 epilogue's; the Q31 epilogue clamps.
  a.saturate = byte_out && !s.q31 ? kSatLower | kSatUpper : 0;
  for (int64_t n = 0; n < s.n; ++n) {
    const int32_t zw = s.w_zero_point[size_t(n)] - w_at.shift;
    int64_t bound = s.bias.empty() ? 0 : std::llabs(s.bias[size_t(n)]);
    for (int64_t k = 0; k < s.k; ++k) bound += a_dev * std::llabs(int64_t(w_at(k, n)) - zw);
    a.why_not = int32_bound_why_not(n, bound);
    if (!a.why_not.empty()) return a;
    if (zw != 0) a.row_correction = true;
    // |f32(acc)| <= bound (f32 rounding is monotonic and bound < 2^31), and the product is
    // one more rounding: 2^30 leaves room for both and for the zero point.
    if (a.saturate) {
      if (!(double(bound) * std::fabs(double(s.multiplier[size_t(n)])) <= double(1 << 30))) a.saturate = 0;
      if (s.out_lo[size_t(n)] != storage_lo) a.saturate &= uint8_t(~kSatLower);
      if (s.out_hi[size_t(n)] != storage_hi) a.saturate &= uint8_t(~kSatUpper);
    }
  }
  a.why_not = multipliers_why_not(s);
  a.q31 = s.q31;
  a.a_signed = s.a_signed;
  return a;
}

namespace {

std::optional<GemmPath> preferred_gemm_path(const GemmAnalysis& a, const Backend& backend) {
  // The exact quad dot product is the fast path where a level has it (AArch64: the 2 x 8
  // matrix multiply, then sdot); then the pair-sum path where it is proven exact; then the
  // widened paths, exact for every input. A level with both quad paths (AMX: tdpbusd and
  // tdpbssd) takes each activation storage on the path that reads it as it is.
  const GemmPath first = a.a_signed ? GemmPath::kSdot4 : GemmPath::kDot4;
  const GemmPath second = a.a_signed ? GemmPath::kDot4 : GemmPath::kSdot4;
  for (GemmPath exact : {GemmPath::kUsmmla8, first, second}) {
    if (backend.gemm_traits(exact)) return exact;
  }
  if (a.pair_sum_exact && backend.gemm_traits(GemmPath::kMaddubs)) return GemmPath::kMaddubs;
  if (backend.gemm_traits(GemmPath::kMaddwd)) return GemmPath::kMaddwd;
  if (backend.gemm_traits(GemmPath::kMlal)) return GemmPath::kMlal;
  return std::nullopt;
}

}  // namespace

std::optional<GemmPath> choose_gemm_path(const GemmAnalysis& a, const Backend& backend, std::string* why_not) {
  const std::optional<GemmPath> path = preferred_gemm_path(a, backend);
  if (!path) {
    if (why_not) *why_not = a.pair_sum_exact ? "no GEMM path at this level" : "no exact GEMM path at this level (" + a.path_reason + ")";
    return std::nullopt;
  }
  if (a.q31 && !backend.gemm_traits(*path)->q31_epilogue) {
    if (why_not) *why_not = "no tflite (Q31) requantization epilogue in this level's GEMM tiles";
    return std::nullopt;
  }
  return path;
}

Result<std::unique_ptr<PackedGemm>> pack_gemm(const GemmSpec& s, const GemmAnalysis& a, const Backend& backend) {
  if (!a.why_not.empty()) return Status::error(a.why_not).with_code(ErrorCode::kUnsupported);
  std::string why;
  const std::optional<GemmPath> path = choose_gemm_path(a, backend, &why);
  if (!path) return Status::error(why).with_code(ErrorCode::kUnsupported);
  const GemmTraits traits = *backend.gemm_traits(*path);
  // Tiles with a wide k step need one whole step (their tail step overlaps the one before).
  const int64_t min_k = std::max<int64_t>(traits.min_k, traits.k_step);
  if (s.k < min_k) {
    return Status::error("k = " + std::to_string(s.k) + " is below the " + std::to_string(min_k) +
                         " this level's GEMM tiles take (the level below is faster there)")
        .with_code(ErrorCode::kUnsupported);
  }
  auto p = std::make_unique<PackedGemm>();
  p->path = *path;
  p->traits = traits;
  p->isa = backend.isa();
  p->generator = backend.generator();
  switch (*path) {
    case GemmPath::kDot4: p->path_reason = "u8 x s8 quads summed into int32: exact for every input"; break;
    case GemmPath::kSdot4: p->path_reason = "s8 x s8 quads summed into int32 (sdot), 128 x column sums in the bias: exact for every input"; break;
    case GemmPath::kUsmmla8: p->path_reason = "u8 x s8 2x8 blocks summed into int32 (usmmla): exact for every input"; break;
    case GemmPath::kMlal: p->path_reason = "u8 x s8 widened to s16, multiply-accumulated into int32 (smlal): exact for every input"; break;
    default: p->path_reason = a.path_reason; break;
  }
  p->row_correction = a.row_correction;
  p->saturate = a.saturate;
  p->q31 = s.q31;
  const int64_t group = p->traits.k_group, panel = p->traits.panel;
  p->k = s.k;
  p->n = s.n;
  p->k_padded = (s.k + group - 1) / group * group;
  p->panels = (s.n + panel - 1) / panel;
  p->a_flip = s.a_signed;
  p->out = s.out;
  const int32_t za = s.a_zero_point + (s.a_signed ? 128 : 0);  // za'
  const FlippedWeights w_at{s, s.w_signed ? 0 : 128};

  // Panel-major weights: per k group step, per column, `group` consecutive k values (s8).
  // Tiles that step k_step bytes at a time (AMX) take the tail as one more whole step over the
  // last k_step bytes of the row, overlapping the previous step: after each panel's steps, a
  // window block holds that step's weights with the overlapped groups zero (counted already).
  const int64_t steps = p->k_padded / group, window = p->window_steps();
  const int64_t tail_groups = window ? (p->k_padded % traits.k_step) / group : 0;
  p->weights = AlignedBytes(size_t(p->panels * p->panel_bytes()));
  int8_t* packed = reinterpret_cast<int8_t*>(p->weights.data());
  // Row by row of the weights (contiguous reads; weights packed at run time too): k value g of
  // group step `step` of column c is at panel c / panel, (step · panel + c % panel) · group + g.
  const int64_t panel_bytes = p->panel_bytes();
  // The column sums of the flipped weights (for the bias) on the way.
  std::vector<int64_t> colsums(size_t(s.n), 0);
  auto put_row = [&](int64_t k, int64_t step, bool sum) {
    const int32_t* row = s.w.data() + k * s.n;
    const int32_t shift = w_at.shift;
    for (int64_t pn = 0; pn < p->panels; ++pn) {
      int8_t* dst = packed + pn * panel_bytes + step * panel * group + k % group;
      const int32_t* src = row + pn * panel;
      int64_t* sums = colsums.data() + pn * panel;
      const int64_t cols = std::min(panel, s.n - pn * panel);
      for (int64_t c = 0; c < cols; ++c) {
        const int32_t v = src[c] - shift;
        dst[c * group] = int8_t(v);
        if (sum) sums[c] += v;
      }
    }
  };
  for (int64_t k = 0; k < s.k; ++k) put_row(k, k / group, true);  // k padding stays zero
  // Window step i repeats group step steps - window + i; its groups before the tail stay zero.
  for (int64_t i = window - tail_groups; i < window; ++i) {
    const int64_t source = steps - window + i;
    for (int64_t k = source * group; k < std::min(s.k, (source + 1) * group); ++k) put_row(k, steps + i, false);
  }

  // Epilogue blocks; padded columns stay zero and are never stored.
  p->epilogue = AlignedBytes(size_t(p->panels * kEpFields * panel * 4));
  for (int64_t n = 0; n < s.n; ++n) {
    const int32_t zw = s.w_zero_point[size_t(n)] - w_at.shift;
    const int64_t colsum = colsums[size_t(n)];
    int64_t bias = (s.bias.empty() ? 0 : s.bias[size_t(n)]) - int64_t(za) * colsum + s.k * int64_t(za) * zw;
    // sdot4 multiplies a' - 128: Σ a'·w = Σ (a' - 128)·w + 128·Σ w.
    if (p->path == GemmPath::kSdot4) bias += 128 * colsum;
    uint8_t* block = p->epilogue.data() + (n / panel) * kEpFields * panel * 4;
    // modulo 2^32: the total fits
    put_epilogue_lane(block, unsigned(panel), unsigned(n % panel), s, size_t(n), int32_t(uint32_t(uint64_t(bias))), zw);
  }

  // The backend's activation-row packing kernel.
  p->pack_desc.op = KernelOp::kPackRows;
  p->pack_desc.isa = backend.isa();
  p->pack_desc.generator = backend.generator();
  p->pack_desc.path = p->path;
  p->pack_desc.storage_signed = s.a_signed;
  QRT_ASSIGN_OR_RETURN(p->pack_kernel, code_cache().get(p->pack_desc));
  return p;
}

}  // namespace qrt::jit
