// qrt — the rows of an NHWC 8-bit operand, as a kernel that reads its input one image row at
// a time (the depthwise rows path) finds them: in a tensor, or computed on demand by the op
// that produces them (a 1x1 convolution fused into its depthwise consumer, row_fusion.h), so
// that the intermediate tensor is never written out: each row is made into a per-thread
// buffer that stays in L1 while the consumer reads it.
#pragma once

#include <cstdint>

#include "jit/core/tensor.h"

namespace qrt::jit {

/// Where a row-reading kernel gets row y of image n of its operand 0 (NHWC, 8-bit): W·C bytes.
/// A tensor's rows are read in place (row()); a producer's are computed a block of rows at a
/// time (compute_rows()) into the reader's per-thread scratch.
class RowSource {
 public:
  virtual ~RowSource() = default;
  /// Whether rows are computed (compute_rows) instead of read in place (row).
  virtual bool computes_rows() const = 0;
  /// In-place sources: row `y` of image `n`.
  virtual const uint8_t* row(int64_t n, int64_t y) const = 0;
  /// In-place sources: bytes that may be read from row(n, y)'s start (up to the tensor's end).
  virtual int64_t readable_bytes(int64_t n, int64_t y) const = 0;
  /// Computed sources: the rows one compute_rows call should make (a block that fills whole
  /// GEMM tiles; at least 1).
  virtual int64_t block_rows() const = 0;
  /// Computed sources: rows [y, y + count) of image `n` into `out` (count · W·C bytes), on the
  /// calling thread.
  virtual void compute_rows(int64_t n, int64_t y, int64_t count, uint8_t* out) const = 0;
};

/// The rows of a tensor, in place.
class TensorRows final : public RowSource {
 public:
  explicit TensorRows(const Tensor& x) : x_(x) {}
  bool computes_rows() const override { return false; }
  const uint8_t* row(int64_t n, int64_t y) const override { return x_.bytes() + offset(n, y); }
  int64_t readable_bytes(int64_t n, int64_t y) const override { return int64_t(x_.byte_size()) - offset(n, y); }
  int64_t block_rows() const override { return 1; }
  void compute_rows(int64_t, int64_t, int64_t, uint8_t*) const override {}

 private:
  int64_t offset(int64_t n, int64_t y) const {
    const std::vector<int64_t>& d = x_.type.dims;
    return ((n * d[1] + y) * d[2]) * d[3];
  }
  const Tensor& x_;
};

/// An op kernel that can compute its NHWC 8-bit result a few image rows at a time, on the
/// calling thread (row_fusion.h pairs it with a consumer that reads rows).
class RowProducer {
 public:
  virtual ~RowProducer() = default;
  /// Rows [y, y + count) of image `n` of the result, computed from operand 0 `x` (the op's
  /// only activation), into `out` (count · W·C bytes).
  virtual void produce_rows(const Tensor& x, int64_t n, int64_t y, int64_t count, uint8_t* out) const = 0;
  /// The rows a call should make for rows of `width` pixels (whole tiles where it can).
  virtual int64_t rows_per_call(int64_t width) const = 0;
};

/// The rows a RowProducer makes from `x`.
class ProducedRows final : public RowSource {
 public:
  ProducedRows(const RowProducer& producer, const Tensor& x) : producer_(producer), x_(x) {}
  bool computes_rows() const override { return true; }
  const uint8_t* row(int64_t, int64_t) const override { return nullptr; }
  int64_t readable_bytes(int64_t, int64_t) const override { return 0; }
  int64_t block_rows() const override { return producer_.rows_per_call(x_.type.dims[2]); }
  void compute_rows(int64_t n, int64_t y, int64_t count, uint8_t* out) const override {
    producer_.produce_rows(x_, n, y, count, out);
  }

 private:
  const RowProducer& producer_;
  const Tensor& x_;
};

}  // namespace qrt::jit
