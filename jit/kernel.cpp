// qrt — kernel descriptions (see kernel.h).
#include "jit/kernel.h"

#include <cstring>
#include <functional>

namespace qrt::jit {

bool KernelDesc::operator==(const KernelDesc& o) const {
  return op == o.op && isa == o.isa && storage_signed == o.storage_signed &&
         std::memcmp(&scale, &o.scale, sizeof scale) == 0 && zero_point == o.zero_point && qmin == o.qmin &&
         qmax == o.qmax;
}

size_t KernelDesc::hash() const {
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &scale, 4);
  size_t h = std::hash<uint64_t>()((uint64_t(uint8_t(op)) << 56) | (uint64_t(uint8_t(isa)) << 48) |
                                   (uint64_t(storage_signed) << 40) | scale_bits);
  h ^= std::hash<uint64_t>()((uint64_t(uint32_t(zero_point)) << 32) | uint32_t(qmin)) + 0x9e3779b97f4a7c15ull + (h << 6);
  h ^= std::hash<uint32_t>()(uint32_t(qmax)) + 0x9e3779b97f4a7c15ull + (h << 6);
  return h;
}

std::string KernelDesc::name() const {
  const std::string q = storage_signed ? "qs8" : "qu8";
  const std::string body = op == KernelOp::kQuantize ? "f32_" + q + "_quantize" : q + "_f32_dequantize";
  return body + "__avx2";
}

}  // namespace qrt::jit
