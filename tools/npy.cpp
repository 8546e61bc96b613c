// qrt tools — .npy reader and writer (see npy.h). The format: magic "\x93NUMPY", major and
// minor version bytes, a little-endian header length (2 bytes in 1.0, 4 in 2.0/3.0), and a
// Python dict literal with 'descr', 'fortran_order' and 'shape', padded with spaces and '\n'.
#include "npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace qrt_tools {

namespace {

struct DescrEntry {
  const char* descr;
  const char* alt;  // an equivalent spelling NumPy also writes
  qrt_dtype dtype;
};

const DescrEntry kDescrs[] = {
    {"<f2", "<f2", QRT_DTYPE_F16}, {"<f4", "<f4", QRT_DTYPE_F32}, {"<f8", "<f8", QRT_DTYPE_F64},
    {"|i1", "<i1", QRT_DTYPE_I8},  {"<i2", "<i2", QRT_DTYPE_I16}, {"<i4", "<i4", QRT_DTYPE_I32},
    {"<i8", "<i8", QRT_DTYPE_I64}, {"|u1", "<u1", QRT_DTYPE_U8},  {"<u2", "<u2", QRT_DTYPE_U16},
    {"<u4", "<u4", QRT_DTYPE_U32}, {"<u8", "<u8", QRT_DTYPE_U64}, {"|b1", "<b1", QRT_DTYPE_BOOL},
};

// Finds `'key':` in the header dict and returns the position after the colon.
size_t find_key(const std::string& header, const char* key) {
  const std::string quoted1 = std::string("'") + key + "'";
  const std::string quoted2 = std::string("\"") + key + "\"";
  size_t p = header.find(quoted1);
  size_t len = quoted1.size();
  if (p == std::string::npos) {
    p = header.find(quoted2);
    len = quoted2.size();
  }
  if (p == std::string::npos) return std::string::npos;
  p = header.find(':', p + len);
  return p == std::string::npos ? p : p + 1;
}

}  // namespace

std::string npy_descr(qrt_dtype dtype) {
  if (dtype == QRT_DTYPE_BF16) return "<u2";
  for (const auto& d : kDescrs) {
    if (d.dtype == dtype) return d.descr;
  }
  return "";
}

bool read_npy(const std::string& path, NpyArray& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open file: " + std::strerror(errno);
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_npy(buf.str(), path, out, error);
}

bool parse_npy(const std::string& bytes, const std::string& path, NpyArray& out, std::string& error) {
  auto bad = [&](const std::string& why) {
    error = path + ": not a valid .npy file: " + why;
    return false;
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return bad("missing \\x93NUMPY magic");
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) return bad("unsupported format version " + std::to_string(major));
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = size_t(static_cast<unsigned char>(bytes[8])) |
                 size_t(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else {
    if (bytes.size() < 12) return bad("truncated header");
    for (int i = 0; i < 4; ++i) header_len |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  }
  if (offset + header_len > bytes.size()) return bad("header length " + std::to_string(header_len) + " exceeds the file size");
  const std::string header = bytes.substr(offset, header_len);
  offset += header_len;

  size_t p = find_key(header, "descr");
  if (p == std::string::npos) return bad("header has no 'descr'");
  const size_t q1 = header.find_first_of("'\"", p);
  const size_t q2 = q1 == std::string::npos ? q1 : header.find(header[q1], q1 + 1);
  if (q2 == std::string::npos) return bad("malformed 'descr'");
  const std::string descr = header.substr(q1 + 1, q2 - q1 - 1);
  out.dtype = QRT_DTYPE_INVALID;
  for (const auto& d : kDescrs) {
    if (descr == d.descr || descr == d.alt) out.dtype = d.dtype;
  }
  if (out.dtype == QRT_DTYPE_INVALID) {
    error = path + ": unsupported dtype '" + descr + "'" +
            (descr.size() > 0 && descr[0] == '>' ? " (big-endian arrays are not supported)" : "");
    return false;
  }
  p = find_key(header, "fortran_order");
  if (p == std::string::npos) return bad("header has no 'fortran_order'");
  const size_t value_at = header.find_first_not_of(' ', p);
  if (value_at != std::string::npos && header.compare(value_at, 4, "True") == 0) {
    error = path + ": Fortran-order arrays are not supported (save with numpy.ascontiguousarray)";
    return false;
  }
  p = find_key(header, "shape");
  if (p == std::string::npos) return bad("header has no 'shape'");
  const size_t open = header.find('(', p), close = header.find(')', p);
  if (open == std::string::npos || close == std::string::npos || close < open) return bad("malformed 'shape'");
  out.shape.clear();
  std::string dims = header.substr(open + 1, close - open - 1);
  size_t count = 1;
  for (size_t i = 0; i < dims.size();) {
    while (i < dims.size() && (dims[i] == ' ' || dims[i] == ',')) ++i;
    if (i >= dims.size()) break;
    size_t j = i;
    while (j < dims.size() && dims[j] >= '0' && dims[j] <= '9') ++j;
    if (j == i || j - i > 12) return bad("malformed 'shape' entry in (" + dims + ")");
    const int64_t d = std::stoll(dims.substr(i, j - i));
    out.shape.push_back(d);
    // A product past 2^48 bytes cannot be a real file; stopping there keeps it from wrapping.
    if (d != 0 && count > (size_t{1} << 48) / size_t(d)) return bad("shape (" + dims + ") is too large");
    count *= size_t(d);
    i = j;
  }
  const size_t need = count * qrt_dtype_size(out.dtype);
  if (bytes.size() - offset < need) {
    return bad("data is truncated: the shape needs " + std::to_string(need) + " bytes, the file has " +
               std::to_string(bytes.size() - offset));
  }
  out.data.assign(bytes.begin() + long(offset), bytes.begin() + long(offset + need));
  return true;
}

bool write_npy(const std::string& path, const NpyArray& array, std::string& error) {
  const std::string descr = npy_descr(array.dtype);
  if (descr.empty()) {
    error = path + ": dtype " + qrt_dtype_name(array.dtype) + " has no .npy representation";
    return false;
  }
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i) {
    shape += std::to_string(array.shape[i]);
    if (i + 1 < array.shape.size() || array.shape.size() == 1) shape += ",";
    if (i + 1 < array.shape.size()) shape += " ";
  }
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts at a multiple of 64 bytes, as NumPy does.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = path + ": cannot create file: " + std::strerror(errno);
    return false;
  }
  const char preamble[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             char(header.size() & 0xff), char(header.size() >> 8)};
  out.write(preamble, 10);
  out.write(header.data(), std::streamsize(header.size()));
  out.write(reinterpret_cast<const char*>(array.data.data()), std::streamsize(array.data.size()));
  if (!out) {
    error = path + ": write failed";
    return false;
  }
  return true;
}

}  // namespace qrt_tools
