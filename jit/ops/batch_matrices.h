// qrt — the matrices of a batched matmul with broadcast batch dimensions (numpy's rules):
// which left- and right-hand matrix each entry of the result's batch multiplies.
#pragma once

#include <cstdint>
#include <vector>

namespace qrt::jit {

/// Row-major strides (in matrices) of batch dims `in` against the broadcast batch `out`: 0
/// along a dimension `in` broadcasts (size 1, or absent).
inline std::vector<int64_t> batch_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = in.size(); k-- > 0;) {
    strides[k + (out.size() - in.size())] = in[k] == 1 ? 0 : stride;
    stride *= in[k];
  }
  return strides;
}

/// Per entry of the broadcast batch `batch` (row-major), the index of the left-hand matrix
/// (of batch dims `a_batch`) and of the right-hand one (`b_batch`) it multiplies.
struct BatchMatrices {
  std::vector<int64_t> a, b;
};
inline BatchMatrices batch_matrices(const std::vector<int64_t>& a_batch, const std::vector<int64_t>& b_batch,
                                    const std::vector<int64_t>& batch) {
  const std::vector<int64_t> sa = batch_strides(a_batch, batch), sb = batch_strides(b_batch, batch);
  int64_t entries = 1;
  for (int64_t d : batch) entries *= d;
  BatchMatrices m;
  m.a.assign(static_cast<size_t>(entries), 0);
  m.b.assign(static_cast<size_t>(entries), 0);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t e = 0; e < entries; ++e) {
    for (size_t d = 0; d < batch.size(); ++d) {
      m.a[size_t(e)] += idx[d] * sa[d];
      m.b[size_t(e)] += idx[d] * sb[d];
    }
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return m;
}

}  // namespace qrt::jit
