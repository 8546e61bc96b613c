// qrt tools — reading and writing NumPy .npy files (format versions 1.0 to 3.0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <qrt.h>

namespace qrt_tools {

/// An array read from or written to a .npy file: C-order, little-endian.
struct NpyArray {
  qrt_dtype dtype = QRT_DTYPE_INVALID;  ///< element type (bf16 travels as raw '<u2' bits)
  std::vector<int64_t> shape;           ///< dimensions (empty for a 0-d array)
  std::vector<uint8_t> data;            ///< elements, row-major
};

/// Reads `path`. On failure returns false and sets `error` to one line naming the file and
/// the problem (missing file, bad magic, unsupported dtype, Fortran order, truncated data).
bool read_npy(const std::string& path, NpyArray& out, std::string& error);

/// Parses the bytes of a .npy file; `name` is used in messages. Same errors as read_npy.
bool parse_npy(const std::string& bytes, const std::string& name, NpyArray& out, std::string& error);

/// Writes `array` to `path` as a version 1.0 file. bf16 is written as '<u2' bit patterns.
bool write_npy(const std::string& path, const NpyArray& array, std::string& error);

/// The NumPy descr for a dtype, e.g. "<f4", "|i1"; empty when NumPy has none.
std::string npy_descr(qrt_dtype dtype);

}  // namespace qrt_tools
