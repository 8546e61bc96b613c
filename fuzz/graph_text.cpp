// Writing qrt MLIR text for the graph generator.
#include "graph_text.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace qrt_fuzz {

Elem Elem::storage(bool is_signed, int bits) {
  Elem e;
  e.kind = kQuant;
  e.is_signed = is_signed;
  e.bits = bits;
  e.qmin = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
  e.qmax = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
  return e;
}

Elem Elem::per_tensor(Elem storage, double scale, int64_t zp) {
  storage.scales = {printed_scale(scale)};
  storage.zps = {zp};
  storage.axis = -1;
  return storage;
}

Elem Elem::f32() {
  Elem e;
  e.kind = kF32;
  return e;
}

Elem Elem::half(bool bf16) {
  Elem e;
  e.kind = bf16 ? kBF16 : kF16;
  return e;
}

int64_t num_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

static std::string scale_text(double scale) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.8e", scale);
  return buf;
}

double printed_scale(double scale) { return std::strtod(scale_text(scale).c_str(), nullptr); }

std::string elem_text(const Elem& elem) {
  if (elem.is_float()) return "f32";
  if (elem.kind == Elem::kBF16) return "bf16";
  if (elem.kind == Elem::kF16) return "f16";
  std::string storage = (elem.is_signed ? "i" : "u") + std::to_string(elem.bits);
  if (elem.narrow) storage += "<" + std::to_string(elem.qmin) + ":" + std::to_string(elem.qmax) + ">";
  if (elem.scales.empty()) return storage;  // a plain integer (biases are always quantized)
  std::string text = "!quant.uniform<" + storage + ":f32";
  if (elem.per_axis()) {
    text += ":" + std::to_string(elem.axis) + ", {";
    for (size_t i = 0; i < elem.scales.size(); ++i) {
      if (i) text += ", ";
      text += scale_text(elem.scales[i]) + ":" + std::to_string(elem.zps[i]);
    }
    return text + "}>";
  }
  return text + ", " + scale_text(elem.scales[0]) + ":" + std::to_string(elem.zps[0]) + ">";
}

std::string type_text(const Shape& shape, const Elem& elem) {
  std::string text = "tensor<";
  for (int64_t d : shape) text += std::to_string(d) + "x";
  return text + elem_text(elem) + ">";
}

std::string f32_attr(double value) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.8e : f32", static_cast<double>(static_cast<float>(value)));
  return buf;
}

std::string list_text(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

Val GraphText::add_input(const Shape& shape, const Elem& elem) {
  Val v{"%in" + std::to_string(inputs_.size()), shape, elem};
  inputs_.push_back(v);
  return v;
}

Val GraphText::emit(const std::string& op, const std::vector<Val>& operands, const std::string& attrs,
                    const Shape& shape, const Elem& elem) {
  Val result{"%v" + std::to_string(next_id_++), shape, elem};
  std::string line = "  " + result.name + " = \"" + op + "\"(";
  std::string types;
  for (size_t i = 0; i < operands.size(); ++i) {
    line += (i ? ", " : "") + operands[i].name;
    types += (i ? ", " : "") + type_text(operands[i].shape, operands[i].elem);
  }
  line += ")";
  if (!attrs.empty()) line += " {" + attrs + "}";
  line += " : (" + types + ") -> " + type_text(shape, elem) + "\n";
  body_ += line;
  return result;
}

// Raw little-endian bytes as MLIR's hex dense form.
static std::string hex_dense(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789ABCDEF";
  std::string text = "dense<\"0x";
  for (uint8_t b : bytes) {
    text += digits[b >> 4];
    text += digits[b & 15];
  }
  return text + "\">";
}

Val GraphText::constant_ints(const Shape& shape, const Elem& elem, const std::vector<int64_t>& stored) {
  const int bytes_per = elem.bits / 8;
  std::vector<uint8_t> bytes;
  bytes.reserve(stored.size() * static_cast<size_t>(bytes_per));
  for (int64_t v : stored)
    for (int b = 0; b < bytes_per; ++b) bytes.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b)));
  std::string raw = "tensor<";
  for (int64_t d : shape) raw += std::to_string(d) + "x";
  raw += (elem.is_signed ? "i" : "ui") + std::to_string(elem.bits) + ">";
  return emit("qrt.constant", {}, "value = " + hex_dense(bytes) + " : " + raw, shape, elem);
}

Val GraphText::constant_f32(const Shape& shape, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return constant_float_bytes(shape, Elem::f32(), bytes);
}

Val GraphText::constant_float_bytes(const Shape& shape, const Elem& elem, const std::vector<uint8_t>& bytes) {
  return emit("qrt.constant", {}, "value = " + hex_dense(bytes) + " : " + type_text(shape, elem), shape, elem);
}

std::string GraphText::finish(const std::vector<Val>& results) const {
  std::string text = "func.func @main(";
  for (size_t i = 0; i < inputs_.size(); ++i)
    text += (i ? ", " : "") + inputs_[i].name + ": " + type_text(inputs_[i].shape, inputs_[i].elem);
  text += ") -> (";
  std::string names, types;
  for (size_t i = 0; i < results.size(); ++i) {
    text += (i ? ", " : "") + type_text(results[i].shape, results[i].elem);
    names += (i ? ", " : "") + results[i].name;
    types += (i ? ", " : "") + type_text(results[i].shape, results[i].elem);
  }
  text += ") {\n" + body_ + "  return " + names + " : " + types + "\n}\n";
  return text;
}

}  // namespace qrt_fuzz
