// qrt — GEMM driver: cache blocking over rows, one call per tile (see gemm_kernels.h).
#include "jit/gemm_kernels.h"

#include <algorithm>
#include <vector>

#include "jit/convert_kernels.h"

namespace qrt::jit {

namespace {

using TileFn = void (*)(const GemmTileArgs*);

// Activation rows per block: a block of packed rows stays in L2 while every weight panel
// streams past it.
constexpr int64_t kL2BlockBytes = 192 * 1024;

}  // namespace

Result<std::unique_ptr<GemmKernel>> GemmKernel::create(const GemmSpec& spec) {
  auto g = std::unique_ptr<GemmKernel>(new GemmKernel());
  QRT_ASSIGN_OR_RETURN(g->packed_, pack_gemm(spec));
  const PackedGemm& p = *g->packed_;
  KernelDesc d;
  d.op = KernelOp::kGemm;
  d.path = p.path;
  d.out = p.out;
  d.row_correction = p.row_correction;
  const unsigned tail = unsigned(p.n % kGemmPanel);
  for (unsigned mr = 1; mr <= p.tile_rows(); ++mr) {
    d.mr = uint8_t(mr);
    if (p.n >= kGemmPanel) {
      d.nr = uint8_t(kGemmPanel);
      QRT_ASSIGN_OR_RETURN(g->tiles_[mr - 1][0], code_cache().get(d));
    }
    if (tail != 0) {
      d.nr = uint8_t(tail);
      QRT_ASSIGN_OR_RETURN(g->tiles_[mr - 1][1], code_cache().get(d));
    }
  }
  g->main_desc_ = d;
  g->main_desc_.mr = uint8_t(p.tile_rows());
  g->main_desc_.nr = uint8_t(p.n >= kGemmPanel ? kGemmPanel : tail);
  return g;
}

std::string GemmKernel::name() const { return main_desc_.name(); }

void GemmKernel::run(const uint8_t* a, int64_t rows, int64_t lda, void* c, int64_t ldc) const {
  thread_local std::vector<uint8_t> packed_a;
  thread_local std::vector<int32_t> row_sums;
  const PackedGemm& p = *packed_;
  const int64_t row_bytes = p.a_row_bytes();
  // Pack and multiply one L2 block of rows at a time.
  const int64_t tile = p.tile_rows();
  const int64_t block = std::max<int64_t>(tile, kL2BlockBytes / std::max<int64_t>(row_bytes, 1) / tile * tile);
  packed_a.resize(size_t(std::min(block, rows) * row_bytes));
  row_sums.resize(size_t(std::min(block, rows)));
  for (int64_t m0 = 0; m0 < rows; m0 += block) {
    const int64_t mc = std::min(block, rows - m0);
    for (int64_t m = 0; m < mc; ++m) {
      row_sums[size_t(m)] = p.pack_a_row(a + (m0 + m) * lda, packed_a.data() + m * row_bytes);
    }
    run_packed(packed_a.data(), row_sums.data(), mc, static_cast<uint8_t*>(c) + m0 * ldc, ldc);
  }
}

void GemmKernel::run_packed(const uint8_t* packed_a, const int32_t* row_sums, int64_t rows, void* c,
                            int64_t ldc) const {
  const PackedGemm& p = *packed_;
  const int64_t row_bytes = p.a_row_bytes();
  const bool maddubs = p.path == GemmPath::kMaddubs;
  const int64_t k_steps = maddubs ? p.k_padded / 4 : p.k_padded / 2;
  const int64_t panel_bytes = k_steps * kGemmPanel * (maddubs ? 4 : 2);
  const int64_t ep_bytes = int64_t(kEpFields * kGemmPanel * 4);
  const unsigned ob = out_bytes();
  GemmTileArgs args;
  args.a_stride = row_bytes;
  args.k_steps = k_steps;
  args.c_stride = ldc;
  for (int64_t panel = 0; panel < p.panels; ++panel) {
    const bool narrow = (panel + 1) * kGemmPanel > p.n;
    args.w = p.weights.data() + panel * panel_bytes;
    args.epilogue = p.epilogue.data() + panel * ep_bytes;
    for (int64_t m = 0; m < rows; m += p.tile_rows()) {
      const int64_t mr = std::min<int64_t>(p.tile_rows(), rows - m);
      args.a = packed_a + m * row_bytes;
      args.c = static_cast<uint8_t*>(c) + m * ldc + panel * kGemmPanel * ob;
      args.row_sums = row_sums + m;
      reinterpret_cast<TileFn>(const_cast<void*>(tiles_[mr - 1][narrow ? 1 : 0]->entry()))(&args);
    }
  }
}

}  // namespace qrt::jit
