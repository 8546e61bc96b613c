// qrt — aligned byte buffers (see aligned_bytes.h).
#include "jit/core/aligned_bytes.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace qrt::jit {

AlignedBytes::AlignedBytes(size_t size) : size_(size) {
  const size_t rounded = (std::max<size_t>(size, 1) + 63) / 64 * 64;
  data_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, rounded)));
  if (!data_) throw std::bad_alloc();
  std::memset(data_.get(), 0, rounded);
}

void AlignedBytes::Free::operator()(uint8_t* p) const { std::free(p); }

}  // namespace qrt::jit
