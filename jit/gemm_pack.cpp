// qrt — GEMM weight packing and the vpmaddubsw exactness analysis (see gemm_pack.h).
#include "jit/gemm_pack.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace qrt::jit {

AlignedBytes::AlignedBytes(size_t size) : size_(size) {
  const size_t rounded = (std::max<size_t>(size, 1) + 63) / 64 * 64;
  data_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, rounded)));
  if (!data_) throw std::bad_alloc();
  std::memset(data_.get(), 0, rounded);
}

void AlignedBytes::Free::operator()(uint8_t* p) const { std::free(p); }

namespace {

// AVX2 packing of one activation row: 32 activations per step, the row sum by vpsadbw. Only
// called where the CPU has AVX2 (the generated kernels need it anyway).
__attribute__((target("avx2"))) int32_t pack_row_avx2(const uint8_t* src, uint8_t* dst, int64_t k, bool widen,
                                                      uint8_t flip, int64_t* done) {
  const __m256i flip_v = _mm256_set1_epi8(char(flip)), zero = _mm256_setzero_si256();
  __m256i sums = zero;
  int64_t i = 0;
  for (; i + 32 <= k; i += 32) {
    const __m256i v = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)), flip_v);
    sums = _mm256_add_epi64(sums, _mm256_sad_epu8(v, zero));
    if (widen) {
      auto* d = reinterpret_cast<__m256i*>(dst + 2 * i);
      _mm256_storeu_si256(d, _mm256_cvtepu8_epi16(_mm256_castsi256_si128(v)));
      _mm256_storeu_si256(d + 1, _mm256_cvtepu8_epi16(_mm256_extracti128_si256(v, 1)));
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), v);
    }
  }
  *done = i;
  alignas(32) int64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sums);
  return int32_t(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
}

bool host_has_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}

}  // namespace

int32_t PackedGemm::pack_a_row(const uint8_t* src, uint8_t* dst) const {
  const uint8_t flip = a_flip ? 0x80 : 0;
  int32_t sum = 0;
  int64_t start = 0;
  if (host_has_avx2()) sum = pack_row_avx2(src, dst, this->k, path == GemmPath::kMaddwd, flip, &start);
  if (path == GemmPath::kMaddubs) {
    for (int64_t k = start; k < this->k; ++k) {
      dst[k] = uint8_t(src[k] ^ flip);
      sum += dst[k];
    }
    std::memset(dst + this->k, 0, size_t(k_padded - this->k));
  } else {
    auto* d16 = reinterpret_cast<uint16_t*>(dst);
    for (int64_t k = start; k < this->k; ++k) {
      d16[k] = uint8_t(src[k] ^ flip);
      sum += d16[k];
    }
    std::memset(d16 + this->k, 0, size_t(k_padded - this->k) * 2);
  }
  return sum;
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

}  // namespace

Result<std::unique_ptr<PackedGemm>> pack_gemm(const GemmSpec& s) {
  auto p = std::make_unique<PackedGemm>();
  p->k = s.k;
  p->n = s.n;
  p->k_padded = (s.k + kGemmKStep - 1) / kGemmKStep * kGemmKStep;
  p->panels = (s.n + kGemmPanel - 1) / kGemmPanel;
  p->a_flip = s.a_signed;
  p->out = s.out;
  const int32_t a_shift = s.a_signed ? 128 : 0, w_shift = s.w_signed ? 0 : 128;
  const int32_t za = s.a_zero_point + a_shift;  // za'
  const int32_t a_lo = s.a_min + a_shift, a_hi = s.a_max + a_shift;
  auto w_at = [&](int64_t k, int64_t n) { return k < s.k && n < s.n ? s.w[size_t(k * s.n + n)] - w_shift : 0; };

  // Exactness of vpmaddubsw: every (k, k+1) pair of every column, for every activation.
  p->path = GemmPath::kMaddubs;
  p->path_reason = "no weight pair can saturate s16 for activations in [" + std::to_string(s.a_min) + ", " +
                   std::to_string(s.a_max) + "]";
  for (int64_t k = 0; k < s.k && p->path == GemmPath::kMaddubs; k += 2) {
    for (int64_t n = 0; n < s.n; ++n) {
      if (!pair_fits_s16(w_at(k, n), w_at(k + 1, n), a_lo, a_hi)) {
        p->path = GemmPath::kMaddwd;
        p->path_reason = "weights (" + std::to_string(w_at(k, n) + w_shift) + ", " +
                         std::to_string(w_at(k + 1, n) + w_shift) + ") at k = " + std::to_string(k) + ", n = " +
                         std::to_string(n) + " could saturate vpmaddubsw's s16 pair sum";
        break;
      }
    }
  }

  // Every result must fit int32 (then wrapping int32 arithmetic is exact).
  const int64_t a_dev = std::max<int64_t>(std::abs(a_lo - za), std::abs(a_hi - za));
  for (int64_t n = 0; n < s.n; ++n) {
    const int32_t zw = s.w_zero_point[size_t(n)] - w_shift;
    int64_t bound = s.bias.empty() ? 0 : std::abs(s.bias[size_t(n)]);
    for (int64_t k = 0; k < s.k; ++k) bound += a_dev * std::abs(int64_t(w_at(k, n)) - zw);
    if (bound > std::numeric_limits<int32_t>::max()) {
      return Status::error("column " + std::to_string(n) + " could leave int32 (bound " + std::to_string(bound) +
                           "); the reference checks it at run time")
          .with_code(ErrorCode::kUnsupported);
    }
    if (zw != 0) p->row_correction = true;
  }
  for (float m : s.multiplier) {
    if (!std::isfinite(m)) {
      return Status::error("a requantization multiplier is not finite").with_code(ErrorCode::kUnsupported);
    }
  }

  // Panel-major weights. maddubs: per k quad, per 8-column half, per column 4 bytes (k..k+3);
  // maddwd: per k pair, per half, per column 2 bytes (k, k+1) — sign-extended when loaded.
  const bool maddubs = p->path == GemmPath::kMaddubs;
  const int64_t group = maddubs ? 4 : 2;
  const int64_t steps = p->k_padded / group;
  p->weights = AlignedBytes(size_t(p->panels * steps * kGemmPanel * group));
  int8_t* w = reinterpret_cast<int8_t*>(p->weights.data());
  for (int64_t panel = 0; panel < p->panels; ++panel) {
    for (int64_t step = 0; step < steps; ++step) {
      for (int64_t col = 0; col < kGemmPanel; ++col) {
        for (int64_t g = 0; g < group; ++g) *w++ = int8_t(w_at(step * group + g, panel * kGemmPanel + col));
      }
    }
  }

  // Epilogue blocks; padded columns stay zero and are never stored.
  p->epilogue = AlignedBytes(size_t(p->panels * kEpFields * kGemmPanel * 4));
  for (int64_t n = 0; n < s.n; ++n) {
    uint8_t* block = p->epilogue.data() + (n / kGemmPanel) * kEpFields * kGemmPanel * 4;
    auto put_i = [&](size_t field, int32_t v) { std::memcpy(block + (field * kGemmPanel + n % kGemmPanel) * 4, &v, 4); };
    auto put_f = [&](size_t field, float v) { std::memcpy(block + (field * kGemmPanel + n % kGemmPanel) * 4, &v, 4); };
    const int32_t zw = s.w_zero_point[size_t(n)] - w_shift;
    int64_t colsum = 0;
    for (int64_t k = 0; k < s.k; ++k) colsum += w_at(k, n);
    const int64_t bias = (s.bias.empty() ? 0 : s.bias[size_t(n)]) - int64_t(za) * colsum + s.k * int64_t(za) * zw;
    put_i(kEpBias, int32_t(uint32_t(uint64_t(bias))));  // modulo 2^32: the total fits
    put_i(kEpWeightZeroPoint, zw);
    if (s.out != OutKind::kS32) put_f(kEpMultiplier, s.multiplier[size_t(n)]);
    if (s.out == OutKind::kU8 || s.out == OutKind::kS8) {
      const int32_t zo = s.out_zero_point[size_t(n)];
      put_f(kEpLowerBound, float(s.out_min - zo));
      put_f(kEpUpperBound, float(s.out_max - zo));
      put_i(kEpOutputZeroPoint, zo);
    }
  }
  return p;
}

}  // namespace qrt::jit
