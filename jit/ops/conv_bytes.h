// qrt — short byte moves for gathering convolution windows (im2col rows and padded input
// bands): a window row is a few channels, so a libc call per row would cost more than the copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace qrt::jit {

// 16 bytes as one vector (SSE2 or NEON register; GCC and Clang vector extension).
typedef uint8_t Bytes16 __attribute__((vector_size(16)));
inline Bytes16 load16(const uint8_t* p) {
  Bytes16 v;
  std::memcpy(&v, p, 16);
  return v;
}

// Copies n bytes (sizeof(Word) <= n <= 2 sizeof(Word)) XORed with `flip` as two overlapping words.
template <class Word>
inline void copy_ends(uint8_t* dst, const uint8_t* src, size_t n, uint8_t flip) {
  const Word f = Word(0x0101010101010101ull) * flip;
  Word lo, hi;
  std::memcpy(&lo, src, sizeof(Word));
  std::memcpy(&hi, src + n - sizeof(Word), sizeof(Word));
  lo ^= f, hi ^= f;
  std::memcpy(dst, &lo, sizeof(Word));
  std::memcpy(dst + n - sizeof(Word), &hi, sizeof(Word));
}

// Copies n bytes, each XORed with `flip` (0x80 turns s8 into the u8 the GEMM multiplies, 0
// copies), n small (a window row of a few channels: 9 bytes for a 3x3 window over RGB): the
// tail as one overlapping move of the same size, inlined. A libc memcpy call of an unknown
// size costs more than the copy, once per window row of every output pixel.
inline void copy_bytes(uint8_t* dst, const uint8_t* src, size_t n, uint8_t flip) {
  if (flip == 0 && n > 64) {
    std::memcpy(dst, src, n);  // long rows: libc's widest moves pay for the call
  } else if (n >= 16) {
    const Bytes16 f = Bytes16{} ^ flip;  // the scalar splats across the lanes
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const Bytes16 v = load16(src + i) ^ f;
      std::memcpy(dst + i, &v, 16);
    }
    if (i < n) {
      const Bytes16 v = load16(src + n - 16) ^ f;
      std::memcpy(dst + n - 16, &v, 16);
    }
  } else if (n >= 8) {
    copy_ends<uint64_t>(dst, src, n, flip);
  } else if (n >= 4) {
    copy_ends<uint32_t>(dst, src, n, flip);
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = uint8_t(src[i] ^ flip);
  }
}

// Fills n bytes with `byte`, n small (the padding part of a window row), like copy_bytes.
inline void fill_bytes(uint8_t* dst, uint8_t byte, size_t n) {
  if (n <= 16) {
    for (size_t i = 0; i < n; ++i) dst[i] = byte;
  } else {
    std::memset(dst, byte, n);
  }
}

}  // namespace qrt::jit
