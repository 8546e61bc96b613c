// qrt — graph IR data structures (see graph.h).
#include "ir/graph.h"

#include <algorithm>
#include <cstring>

namespace qrt {

unsigned element_byte_size(const ElementType& element) {
  unsigned width = 0;
  switch (element.kind) {
    case ElementKind::kFloat: return float_kind_bytes(element.float_kind);
    case ElementKind::kInteger: width = element.int_width; break;
    case ElementKind::kUniform:
    case ElementKind::kUniformPerAxis:
    case ElementKind::kUniformSubChannel: width = element.storage.width; break;
    case ElementKind::kCalibrated:
    case ElementKind::kAny: return 0;
  }
  return width <= 8 ? 1 : width <= 16 ? 2 : width <= 32 ? 4 : 8;
}

bool is_nibble_packed(const ElementType& element) {
  return element.kind == ElementKind::kInteger && element.int_width >= 2 && element.int_width <= 4;
}

size_t dense_byte_size(const Type& type) {
  const size_t n = size_t(type.num_elements());
  return is_nibble_packed(type.element) ? (n + 1) / 2 : n * element_byte_size(type.element);
}

DenseElements DenseElements::zeros(const Type& type) {
  DenseElements d;
  d.type = type;
  d.bytes.assign(dense_byte_size(type), 0);
  return d;
}

void DenseElements::set_int(size_t i, int64_t v) {
  if (is_nibble_packed(type.element)) {
    const unsigned shift = (i & 1) ? 4 : 0;
    const uint8_t mask = (1u << type.element.int_width) - 1;
    uint8_t& b = bytes[i / 2];
    b = uint8_t((b & ~(0xF << shift)) | ((uint8_t(v) & mask) << shift));
    return;
  }
  const unsigned n = element_byte_size(type.element);
  const uint64_t raw = uint64_t(v);
  std::memcpy(bytes.data() + i * n, &raw, n);
}

int64_t DenseElements::int_at(size_t i) const {
  if (is_nibble_packed(type.element)) {
    const unsigned width = type.element.int_width;
    const int64_t raw = (data()[i / 2] >> ((i & 1) ? 4 : 0)) & ((1 << width) - 1);
    const bool is_signed = type.element.int_sign != Signedness::kUnsigned;
    return is_signed && (raw >> (width - 1)) ? raw - (int64_t(1) << width) : raw;
  }
  const unsigned n = element_byte_size(type.element);
  uint64_t raw = 0;
  std::memcpy(&raw, data() + i * n, n);
  const unsigned bits = n * 8;
  if (bits < 64 && type.element.int_sign != Signedness::kUnsigned &&
      (raw >> (bits - 1)) & 1u && type.element.int_width > 1) {
    raw |= ~uint64_t(0) << bits;  // sign-extend
  }
  return int64_t(raw);
}

namespace {

// The raw bits of float element i (little-endian, zero-extended).
uint64_t float_bits_at(const DenseElements& d, size_t i) {
  const unsigned n = element_byte_size(d.type.element);
  uint64_t raw = 0;
  std::memcpy(&raw, d.data() + i * n, n);
  return raw;
}

}  // namespace

double DenseElements::float_at(size_t i) const { return float_kind_from_bits(float_bits_at(*this, i), type.element.float_kind); }

bool DenseElements::is_splat() const {
  if (is_nibble_packed(type.element)) {
    const size_t count = size_t(type.num_elements());
    for (size_t i = 1; i < count; ++i) {
      if (int_at(i) != int_at(0)) return false;
    }
    return true;
  }
  const unsigned n = element_byte_size(type.element);
  if (n == 0 || size() <= n) return true;
  for (size_t off = n; off < size(); off += n) {
    if (std::memcmp(data(), data() + off, n) != 0) return false;
  }
  return true;
}

int64_t DenseElements::first_element_with_stray_bits() const {
  if (!type.element.is_float()) return -1;
  const unsigned width = float_kind_width(type.element.float_kind);
  if (width >= 64) return -1;
  const size_t count = size_t(type.num_elements());
  for (size_t i = 0; i < count; ++i) {
    if (float_bits_at(*this, i) >> width) return int64_t(i);
  }
  return -1;
}

Attribute Attribute::make_int(int64_t v) {
  Attribute a;
  a.kind = Kind::kInt;
  a.i = v;
  a.scalar_type = ElementType::make_int(64);
  return a;
}

Attribute Attribute::make_float(double v, FloatKind kind) {
  Attribute a;
  a.kind = Kind::kFloat;
  a.f = round_to_float_kind(v, kind);
  a.scalar_type = ElementType::make_float(kind);
  return a;
}

Attribute Attribute::make_string(std::string v) {
  Attribute a;
  a.kind = Kind::kString;
  a.s = std::move(v);
  return a;
}

Attribute Attribute::make_int_array(const std::vector<int64_t>& v) {
  Attribute a;
  a.kind = Kind::kArray;
  for (int64_t x : v) {
    Attribute e;
    e.kind = Kind::kInt;
    e.i = x;
    e.scalar_type = ElementType::make_int(64);
    a.array.push_back(e);
  }
  return a;
}

Attribute Attribute::make_dense(DenseElements v) {
  Attribute a;
  a.kind = Kind::kDense;
  a.dense = std::move(v);
  return a;
}

const char* Attribute::kind_name() const {
  switch (kind) {
    case Kind::kUnit: return "unit";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "integer";
    case Kind::kFloat: return "float";
    case Kind::kString: return "string";
    case Kind::kArray: return "array";
    case Kind::kDense: return "dense elements";
  }
  return "?";
}

namespace {

std::string escape_string(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      out += '\\';
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

// Dense elements above this count print as a hex blob, like mlir-opt's
// --mlir-print-elementsattrs-with-hex-if-larger.
constexpr int64_t kHexElementsThreshold = 64;

std::string dense_element_to_string(const DenseElements& d, size_t i) {
  // From the stored bits, so a NaN keeps its sign and payload (through a double, f8E5M2's
  // 0xFF printed as 0xFE, which then printed as 0x7E).
  if (d.type.element.is_float()) return format_mlir_float_bits(float_bits_at(d, i), d.type.element.float_kind);
  if (d.type.element.int_width == 1) return d.int_at(i) ? "true" : "false";
  return std::to_string(d.int_at(i));
}

// Prints elements [begin, begin + count) of dimension `dim` as nested lists.
void print_nested(const DenseElements& d, size_t dim, size_t& index, std::string& out) {
  const auto& dims = d.type.dims;
  if (dim == dims.size()) {
    out += dense_element_to_string(d, index++);
    return;
  }
  out += "[";
  for (int64_t k = 0; k < dims[dim]; ++k) {
    if (k) out += ", ";
    print_nested(d, dim + 1, index, out);
  }
  out += "]";
}

std::string dense_to_string(const DenseElements& d) {
  std::string body;
  const int64_t n = d.type.num_elements();
  if (n == 0) {
    body = "";
  } else if (d.is_splat()) {
    body = dense_element_to_string(d, 0);
  } else if (n > kHexElementsThreshold && d.type.element.int_width != 1) {
    static const char* hex = "0123456789ABCDEF";
    body = "\"0x";
    if (is_nibble_packed(d.type.element)) {  // one byte per element, as MLIR's hex has it
      const unsigned mask = (1u << d.type.element.int_width) - 1;
      for (size_t k = 0; k < size_t(n); ++k) {
        const uint8_t b = uint8_t(unsigned(d.int_at(k)) & mask);
        body += hex[b >> 4];
        body += hex[b & 15];
      }
    }
    for (size_t k = 0; !is_nibble_packed(d.type.element) && k < d.size(); ++k) {
      const uint8_t b = d.data()[k];
      body += hex[b >> 4];
      body += hex[b & 15];
    }
    body += "\"";
  } else {
    size_t index = 0;
    print_nested(d, 0, index, body);
  }
  return "dense<" + body + "> : " + d.type.to_string();
}

}  // namespace

std::string Attribute::to_string() const {
  switch (kind) {
    case Kind::kUnit: return "unit";
    case Kind::kBool: return b ? "true" : "false";
    case Kind::kInt: return std::to_string(i) + " : " + scalar_type.to_string();
    case Kind::kFloat:
      return format_mlir_float(f, scalar_type.float_kind) + " : " + scalar_type.to_string();
    case Kind::kString: return escape_string(s);
    case Kind::kArray: {
      std::string out = "[";
      for (size_t k = 0; k < array.size(); ++k) {
        if (k) out += ", ";
        const Attribute& e = array[k];
        // Inside arrays MLIR omits the default `: i64` / `: f64` suffixes.
        if (e.kind == Kind::kInt && e.scalar_type == ElementType::make_int(64)) {
          out += std::to_string(e.i);
        } else if (e.kind == Kind::kFloat && e.scalar_type.float_kind == FloatKind::kF64) {
          out += format_mlir_float(e.f, FloatKind::kF64);
        } else {
          out += e.to_string();
        }
      }
      return out + "]";
    }
    case Kind::kDense: return dense_to_string(dense);
  }
  return "?";
}

const Attribute* Op::attr(const std::string& name) const {
  for (const auto& [k, v] : attrs) {
    if (k == name) return &v;
  }
  return nullptr;
}

void Op::set_attr(const std::string& name, Attribute value) {
  auto it = std::lower_bound(attrs.begin(), attrs.end(), name,
                             [](const auto& kv, const std::string& n) { return kv.first < n; });
  if (it != attrs.end() && it->first == name) {
    it->second = std::move(value);
  } else {
    attrs.insert(it, {name, std::move(value)});
  }
}

int Graph::add_input(Type type, std::string name) {
  Value v;
  v.type = std::move(type);
  v.name = std::move(name);
  values.push_back(std::move(v));
  inputs.push_back(int(values.size()) - 1);
  return inputs.back();
}

int Graph::add_op(OpKind kind, std::vector<int> operands, const std::vector<Type>& result_types,
                  std::vector<std::pair<std::string, Attribute>> attrs, SourceLoc loc) {
  Op op;
  op.kind = kind;
  op.operands = std::move(operands);
  op.loc = loc;
  for (auto& [k, v] : attrs) op.set_attr(k, std::move(v));
  const int op_index = int(ops.size());
  for (const Type& t : result_types) {
    Value v;
    v.type = t;
    v.producer = op_index;
    v.loc = loc;
    values.push_back(std::move(v));
    op.results.push_back(int(values.size()) - 1);
  }
  ops.push_back(std::move(op));
  return op_index;
}

int Graph::find_input(const std::string& name) const {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (values[size_t(inputs[i])].name == name) return int(i);
  }
  return -1;
}

void share_dense_attributes(Graph& graph, size_t min_bytes) {
  for (Op& op : graph.ops) {
    for (auto& [name, attr] : op.attrs) {
      DenseElements& d = attr.dense;
      if (attr.kind != Attribute::Kind::kDense || d.is_view() || d.bytes.size() < min_bytes) continue;
      auto owner = std::make_shared<const std::vector<uint8_t>>(std::move(d.bytes));
      d.bytes = {};
      d.view_data = owner->data();
      d.view_size = owner->size();
      d.view_owner = std::move(owner);
    }
  }
}

}  // namespace qrt
