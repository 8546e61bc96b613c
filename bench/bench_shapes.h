// Benchmark shapes shared by qrt's rows and the peers' rows (docs/performance.md).
#pragma once

#include <cstdint>
#include <vector>

namespace bench {

/// An M x K x N int8 GEMM.
struct GemmShape {
  int64_t m, k, n;
};

/// The GEMM rows of the x86 JIT issue.
inline const std::vector<GemmShape>& gemm_shapes() {
  static const std::vector<GemmShape> shapes = {
      {256, 256, 256},  {512, 512, 512},   {1024, 1024, 1024}, {2048, 2048, 2048},
      {1, 4096, 4096},  {8, 4096, 4096},   {128, 768, 3072},   {128, 3072, 768},
  };
  return shapes;
}

/// A batch-1 NHWC convolution, stride 1, square kernel and symmetric padding.
struct ConvShape {
  int64_t h, w, c, o, k, pad;
  bool depthwise;
};

/// 1x1 56x56x64->64, 3x3 56x56x64->64 pad 1, depthwise 3x3 112x112x32 pad 1.
inline const std::vector<ConvShape>& conv_shapes() {
  static const std::vector<ConvShape> shapes = {
      {56, 56, 64, 64, 1, 0, false},
      {56, 56, 64, 64, 3, 1, false},
      {112, 112, 32, 32, 3, 1, true},
  };
  return shapes;
}

}  // namespace bench
