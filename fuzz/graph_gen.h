// The differential fuzzer's graph generator: random, valid quantized graphs in qrt's MLIR text
// form (docs/ops.md). It sees no qrt internals; a graph is a string the C API loads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace qrt_fuzz {

/// A source of random choices. The generator draws exactly one word per choice, so two
/// sources that agree on their first n words give graphs that agree on their first choices:
/// shrinking a limit keeps the rest of a failing graph (see minimize in diff_check.h).
class Chooser {
 public:
  virtual ~Chooser() = default;
  /// The next raw 64-bit word.
  virtual uint64_t next() = 0;
  /// Uniform in [lo, hi] (inclusive); lo when hi < lo.
  int64_t range(int64_t lo, int64_t hi);
  /// True with probability num / den.
  bool chance(int num, int den);
  /// Uniform in [0, 1).
  double unit();
  /// One of the values, uniformly.
  template <typename T>
  const T& pick(const std::vector<T>& values) {
    return values[static_cast<size_t>(range(0, static_cast<int64_t>(values.size()) - 1))];
  }
};

/// Choices from a seeded 64-bit Mersenne twister: the command-line fuzzer's source.
class SeededChooser final : public Chooser {
 public:
  explicit SeededChooser(uint64_t seed) : rng_(seed) {}
  uint64_t next() override { return rng_(); }

 private:
  std::mt19937_64 rng_;
};

/// Choices read from a byte string, eight bytes a word (zeros once it runs out): the libFuzzer
/// target's source, so the fuzzer's mutations steer the graph's structure.
class ByteChooser final : public Chooser {
 public:
  ByteChooser(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t next() override;

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

/// Bounds on a generated graph. Shrinking them keeps a graph's earlier choices.
struct GenLimits {
  int max_ops = 6;        ///< compute steps (each one to four MLIR ops)
  int max_spatial = 20;   ///< largest H and W of an activation
  int max_channels = 40;  ///< largest channel count of a layer
  int max_batch = 2;      ///< largest N
};

/// One generated graph.
struct GeneratedGraph {
  std::string mlir;       ///< the whole `func.func @main` text
  int steps = 0;          ///< compute steps it holds
  std::string summary;    ///< one word per step, e.g. "conv dw add pool"
};

/// Generates a graph: one or two inputs (float ones quantized by `quant.qcast`, or stored
/// integers), up to `limits.max_ops` steps from convolutions (strided, dilated, grouped,
/// depthwise, padded, fused clamps), matmuls, pooling, add/mul (with broadcasting), relu,
/// clamp, requantize, concat, pad, transpose, reshape, softmax, logistic, mean, and QDQ
/// regions (dcast, float op, qcast) for the fold passes; storage i8/u8 (narrow bounds and zero
/// points at the bounds included), sometimes i16/u16; scales across decades, per-axis filters.
/// Every shape is static. The result is always a valid graph; a verifier error is a bug in
/// the generator or in qrt.
GeneratedGraph generate_graph(Chooser& chooser, const GenLimits& limits);

}  // namespace qrt_fuzz
