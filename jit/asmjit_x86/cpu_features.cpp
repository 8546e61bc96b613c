// qrt — host CPU detection through asmjit (the only place the x86 feature bits are read).
#include <asmjit/core.h>

#include "jit/host_info.h"

namespace qrt {

const CpuFeatures& host_cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
    const asmjit::CpuInfo& cpu = asmjit::CpuInfo::host();
    f.vendor = cpu.vendor();
    f.brand = cpu.brand();
#if ASMJIT_ARCH_X86
    const auto& x = cpu.features().x86();
    f.x86 = true;
    f.avx2 = x.hasAVX2();
    f.fma = x.hasFMA();
    f.avx512f = x.hasAVX512_F();
    f.avx512bw = x.hasAVX512_BW();
    f.avx512_vnni = x.hasAVX512_VNNI();
    f.avx_vnni = x.hasAVX_VNNI();
#elif ASMJIT_ARCH_ARM == 64
    f.aarch64 = true;
#endif
    return f;
  }();
  return features;
}

}  // namespace qrt
