// qrt — a 64-byte aligned, zero-filled byte buffer (packed weights, arenas).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace qrt::jit {

/// A 64-byte aligned byte buffer.
class AlignedBytes {
 public:
  AlignedBytes() = default;
  /// Zero-filled storage of `size` bytes.
  explicit AlignedBytes(size_t size);
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

/// Scratch of at least n elements in `v`, grown only: per-call scratch whose size changes from
/// call to call (the last, shorter row block of a GEMM) is not zero-filled again each time.
template <class T>
T* scratch(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace qrt::jit
