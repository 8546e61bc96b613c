// qrt — the scalar backend (see scalar_backend.h).
#include "jit/ref/scalar_backend.h"

#include <string>

#include "jit/ref/twins.h"

namespace qrt::jit {

namespace {

class ScalarBackend final : public Backend {
 public:
  const char* name() const override { return "ref"; }
  Isa isa() const override { return Isa::kScalar; }
  bool available() const override { return true; }
  std::optional<GemmTraits> gemm_traits(GemmPath path) const override {
    // The AVX2 paths and layouts, so the scalar level exercises both; the twins also compute
    // the dot4 layout of the VNNI levels (for the kernel-list tests), which this level does
    // not choose.
    if (path == GemmPath::kMaddubs) {
      // Window tiles too: the twin reads the taps, so the window driver is tested on every host.
      GemmTraits t{4, 16, 4, 1, false, true};
      t.window_taps = true;
      return t;
    }
    if (path == GemmPath::kMaddwd) return GemmTraits{6, 16, 2, 2, false, true};
    return std::nullopt;
  }
  // The twins also compute the dot4 row layout (for the kernel-list tests); this level does
  // not choose it.
  DepthwiseTraits depthwise_traits() const override { return {16, 0}; }
  StreamTraits stream_traits() const override { return {8}; }

  std::string why_not(const KernelDesc& d) const override {
    if (d.isa != Isa::kScalar) return std::string("the scalar backend does not serve ") + isa_name(d.isa);
    if (d.op == KernelOp::kCount) return "not a kernel kind";
    if (d.op == KernelOp::kEwProgram) return "element-wise programs are compiled with compile_program";
    if (d.op == KernelOp::kGemm) {
      // The twins compute every path's layout (the other levels' tiles are compared with
      // them): up to 16 rows of 16-column panels on paths this level does not choose.
      const auto own = gemm_traits(d.path);
      GemmTraits any{16, 16, gemm_path_k_group(d.path), 1, false, true};
      any.window_taps = true;
      return gemm_tile_why_not(d, own ? own : any);
    }
    if (d.op == KernelOp::kDwInterleave || d.op == KernelOp::kDwRows) return dw_rows_why_not(d, 32, true, false, true);
    return window_kernel_why_not(d, depthwise_traits().block);
  }

  std::string program_why_not(const EwProgram& program) const override { return program.validate(); }
  Result<std::shared_ptr<const CompiledKernel>> compile_program(const EwProgram& program) const override {
    if (std::string why = program.validate(); !why.empty()) return Status::error(program.name() + ": " + why);
    return std::shared_ptr<const CompiledKernel>(std::make_shared<StaticKernel>(twin_entry(KernelOp::kEwProgram)));
  }

  Result<std::shared_ptr<const CompiledKernel>> generate(const KernelDesc& d) const override {
    if (std::string why = why_not(d); !why.empty()) return Status::error(d.name() + ": " + why);
    return std::shared_ptr<const CompiledKernel>(std::make_shared<StaticKernel>(twin_entry(d.op)));
  }
};

}  // namespace

const Backend& scalar_backend() {
  static const ScalarBackend backend;
  return backend;
}

}  // namespace qrt::jit
