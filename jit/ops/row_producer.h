// qrt — an op kernel that computes its NHWC 8-bit result a few image rows at a time, so that a
// kernel reading its input one row at a time (the depthwise rows path) can take the rows
// straight from it (row fusion, row_fusion.h): the intermediate tensor is never written, and
// each block of rows goes to the reader's per-thread buffer, read back while in cache.
#pragma once

#include <cstdint>

#include "jit/core/tensor.h"

namespace qrt::jit {

/// Computes rows of an NHWC 8-bit result on the calling thread (a 1x1 convolution on the GEMM).
class RowProducer {
 public:
  virtual ~RowProducer() = default;
  /// Rows [y, y + count) of image `n` of the result, computed from operand 0 `x` (the op's
  /// only activation), into `out` (count · W·C bytes).
  virtual void produce_rows(const Tensor& x, int64_t n, int64_t y, int64_t count, uint8_t* out) const = 0;
  /// The rows a call should make for rows of `width` pixels (whole tiles where it can; at least 1).
  virtual int64_t rows_per_call(int64_t width) const = 0;
};

/// A row-reading kernel's operand 0 made by `producer` from `input` (the producer's operand 0).
struct ProducedRows {
  const RowProducer& producer;
  const Tensor& input;
};

}  // namespace qrt::jit
