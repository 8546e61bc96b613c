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

/// Bytes of weights a GEMV-like row (M <= 8) streams per call (K * N int8 weights), else 0.
/// With M this small every weight byte is used M times at most, so these rows are bound by
/// how fast the weights arrive (compare BM_read_bandwidth at the same size), not by the ALUs.
inline int64_t weight_stream_bytes(int64_t m, int64_t k, int64_t n) { return m <= 8 ? k * n : 0; }

/// A batch-1 NHWC convolution: square kernel, symmetric padding, equal strides.
struct ConvShape {
  int64_t h, w, c, o, k, pad;
  bool depthwise;
  int64_t stride = 1;
  /// Output rows: floor((H + 2 pad - k) / stride) + 1.
  int64_t out_h() const { return (h + 2 * pad - k) / stride + 1; }
  /// Output columns: floor((W + 2 pad - k) / stride) + 1.
  int64_t out_w() const { return (w + 2 * pad - k) / stride + 1; }
};

/// The convolution rows, by index (the `shape:` argument of the conv rows):
/// 0: 1x1 56x56x64->64; 1: 3x3 56x56x64->64 pad 1; 2: depthwise 3x3 112x112x32 pad 1;
/// 3: 3x3 stride 2 56x56x64->128 pad 1 (a ResNet stage's downsampling conv, 28x28 out);
/// 4: 7x7 stride 2 224x224x3->64 pad 3 (ResNet's stem, 112x112 out: K = 147, few channels);
/// 5: 3x3 stride 2 224x224x3->32 pad 1 (MobileNet's stem, 112x112 out: K = 27);
/// 6: 1x1 112x112x16->96 (MobileNetV2's first expansion: K = 16);
/// 7: 1x1 7x7x160->960 (MobileNetV2's last expansion: 49 pixels, so two threads split the
///    weight panels rather than the rows);
/// 8: depthwise 3x3 56x56x144 pad 1 (MobileNetV2's widest stride-1 depthwise rows);
/// 9: depthwise 3x3 stride 2 112x112x96 pad 1 (its first downsampling depthwise, 56x56 out).
inline const std::vector<ConvShape>& conv_shapes() {
  static const std::vector<ConvShape> shapes = {
      {56, 56, 64, 64, 1, 0, false},
      {56, 56, 64, 64, 3, 1, false},
      {112, 112, 32, 32, 3, 1, true},
      {56, 56, 64, 128, 3, 1, false, 2},
      {224, 224, 3, 64, 7, 3, false, 2},
      {224, 224, 3, 32, 3, 1, false, 2},
      {112, 112, 16, 96, 1, 0, false},
      {7, 7, 160, 960, 1, 0, false},
      {56, 56, 144, 144, 3, 1, true},
      {112, 112, 96, 96, 3, 1, true, 2},
  };
  return shapes;
}

}  // namespace bench
