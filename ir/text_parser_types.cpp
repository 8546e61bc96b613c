// qrt — text-form parser: literals and types (see text_parser_impl.h).
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "ir/text_format.h"
#include "ir/text_parser_impl.h"

namespace qrt::text_detail {

// string-literal ::= '"' (char | '\' escape)* '"'
Result<std::string> Parser::parse_string_lit() {
  skip_ws();
  if (cur() != '"') return error("expected string literal, found " + describe_here());
  const SourceLoc start = loc();
  advance();
  std::string out;
  for (;;) {
    const char c = cur();
    if (c == '\0' || c == '\n') return error_at(start, "unterminated string literal");
    advance();
    if (c == '"') return out;
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    const char e = cur();
    advance();
    if (e == 'n') {
      out.push_back('\n');
    } else if (e == 't') {
      out.push_back('\t');
    } else if (e == '"' || e == '\\') {
      out.push_back(e);
    } else if (std::isxdigit(static_cast<unsigned char>(e)) &&
               std::isxdigit(static_cast<unsigned char>(cur()))) {
      const char hex[3] = {e, cur(), 0};
      advance();
      out.push_back(char(std::strtol(hex, nullptr, 16)));
    } else {
      return error(std::string("unknown escape '\\") + e + "' in string literal");
    }
  }
}

// number ::= '-'? (digit+ ('.' digit* ([eE] [-+]? digit+)?)? | '0x' hexdigit+)
Result<NumberLit> Parser::parse_number() {
  skip_ws();
  NumberLit n;
  n.loc = loc();
  const size_t start = pos_;
  if (cur() == '-' || cur() == '+') advance();
  if (cur() == '0' && (peek_at(1) == 'x' || peek_at(1) == 'X')) {
    advance(2);
    if (!std::isxdigit(static_cast<unsigned char>(cur()))) return error("expected hexadecimal digits");
    while (std::isxdigit(static_cast<unsigned char>(cur()))) advance();
    n.is_hex = true;
  } else {
    if (!is_digit(cur())) return error_at(n.loc, "expected a number, found " + describe_here());
    while (is_digit(cur())) advance();
    if (cur() == '.') {
      n.is_float = true;
      advance();
      while (is_digit(cur())) advance();
      if ((cur() == 'e' || cur() == 'E') &&
          (is_digit(peek_at(1)) || ((peek_at(1) == '-' || peek_at(1) == '+') && is_digit(peek_at(2))))) {
        advance(2);
        while (is_digit(cur())) advance();
      }
    }
  }
  n.text = std::string(text_.substr(start, pos_ - start));
  return n;
}

Result<int64_t> integer_value(const NumberLit& n, const char* what) {
  if (n.is_float) {
    return Status::error_at(n.loc, std::string("expected an integer ") + what + ", got " + n.text);
  }
  errno = 0;
  char* end = nullptr;
  const bool neg = n.text[0] == '-';
  const char* digits = n.text.c_str() + ((n.text[0] == '-' || n.text[0] == '+') ? 1 : 0);
  const unsigned long long mag = std::strtoull(digits, &end, n.is_hex ? 16 : 10);
  if (errno == ERANGE || mag > (neg ? (1ull << 63) : (1ull << 63) - 1 + (1ull << 63))) {
    return Status::error_at(n.loc, std::string("integer ") + what + " " + n.text + " is too large");
  }
  if (!neg && mag > uint64_t(INT64_MAX) && !n.is_hex) {
    return Status::error_at(n.loc, std::string("integer ") + what + " " + n.text + " is too large");
  }
  return neg ? int64_t(0 - mag) : int64_t(mag);
}

Result<int64_t> Parser::parse_int(const char* what) {
  QRT_ASSIGN_OR_RETURN(NumberLit n, parse_number());
  return integer_value(n, what);
}

// float ::= decimal with '.', or '0x' hex bit pattern of the float kind
Result<double> float_value(const NumberLit& n, FloatKind kind, const char* what) {
  if (n.is_hex) {
    const uint64_t bits = std::strtoull(n.text.c_str() + (n.text[0] == '-' ? 3 : 2), nullptr, 16);
    if (n.text[0] == '-') {
      return Status::error_at(n.loc, "hexadecimal float literal must not be negative");
    }
    return float_kind_from_bits(bits, kind);
  }
  if (!n.is_float) {
    return Status::error_at(n.loc, std::string("unexpected decimal integer literal for a "
                                               "floating point value (") + what + " " + n.text +
                                               "; add a trailing '.0')");
  }
  if (kind == FloatKind::kF32) return double(std::strtof(n.text.c_str(), nullptr));
  return round_to_float_kind(std::strtod(n.text.c_str(), nullptr), kind);
}

Result<double> Parser::parse_float(const char* what, FloatKind kind) {
  QRT_ASSIGN_OR_RETURN(NumberLit n, parse_number());
  return float_value(n, kind, what);
}

// ssa-name ::= '%' [a-zA-Z0-9_$.-]+
Result<std::string> Parser::parse_ssa_name() {
  skip_ws();
  if (cur() != '%') return error("expected SSA value name ('%name'), found " + describe_here());
  advance();
  const size_t start = pos_;
  while (is_ident_char(cur()) || cur() == '-') advance();
  if (pos_ == start) return error("expected SSA value name after '%'");
  return std::string(text_.substr(start, pos_ - start));
}

// float-kind ::= 'f16' | 'bf16' | 'f32' | 'f64' | 'tf32' | 'f8E5M2' | 'f8E4M3FN' | ...
Result<FloatKind> Parser::parse_float_kind(const char* what) {
  skip_ws();
  const SourceLoc l = loc();
  const std::string id = parse_ident();
  FloatKind kind;
  if (float_kind_from_name(id, &kind)) return kind;
  if (id.empty()) return error_at(l, std::string("expected ") + what + ", found " + describe_here());
  return error_at(l, std::string("unsupported ") + what + " '" + id +
                         "' (qrt supports f16, bf16, f32, f64, tf32 and MLIR 19's f8 types: f8E5M2, f8E4M3FN, "
                         "f8E5M2FNUZ, f8E4M3FNUZ, f8E4M3B11FNUZ, f8E4M3)");
}

// storage ::= ('i' | 'si' | 'u' | 'ui') width ('<' int ':' int '>')?
Result<QuantStorage> Parser::parse_storage() {
  skip_ws();
  const SourceLoc l = loc();
  const std::string id = parse_ident();
  QuantStorage s;
  size_t digits = 0;
  if (id.rfind("si", 0) == 0 || id.rfind("ui", 0) == 0) {
    s.is_signed = id[0] == 's';
    digits = 2;
  } else if (!id.empty() && (id[0] == 'i' || id[0] == 'u')) {
    s.is_signed = id[0] == 'i';
    digits = 1;
  } else {
    return error_at(l, "expected storage type (i8, u8, si8, ui8, ...), found " +
                           (id.empty() ? describe_here() : "'" + id + "'"));
  }
  if (id.size() == digits || id.find_first_not_of("0123456789", digits) != std::string::npos ||
      id.size() - digits > 4) {
    return error_at(l, "invalid storage type '" + id + "'");
  }
  s.width = unsigned(std::stoul(id.substr(digits)));
  if (s.width < 2 || s.width > 32) {
    return error_at(l, "illegal storage type size: " + std::to_string(s.width) +
                           " (quantized storage must be 2 to 32 bits)");
  }
  s.min = s.full_min();
  s.max = s.full_max();
  if (consume('<')) {
    QRT_ASSIGN_OR_RETURN(s.min, parse_int("storage min"));
    QRT_RETURN_IF_ERROR(expect(':', "between storage min and max"));
    QRT_ASSIGN_OR_RETURN(s.max, parse_int("storage max"));
    QRT_RETURN_IF_ERROR(expect('>', "after storage bounds"));
  }
  return s;
}

// uniform    ::= '!quant.uniform' '<' storage ':' expressed
//                  (',' scale (':' zp)? | ':' axis ',' '{' scale (':' zp)? (',' ...)* '}'
//                   | ':' '{' (axis ':' block (',' ...)*)? '}' ',' params) '>'
// params     ::= '{' (params | scale (':' zp)?) (',' ...)* '}'   (upstream MLIR's sub-channel form)
Result<ElementType> Parser::parse_sub_channel_rest(const QuantStorage& storage, FloatKind expressed) {
  std::vector<int32_t> axes;
  std::vector<int64_t> blocks;
  if (!consume('}')) {
    do {
      const SourceLoc l = loc();
      QRT_ASSIGN_OR_RETURN(int64_t axis, parse_int("quantized dimension"));
      if (axis < 0 || axis > INT32_MAX) {
        return error_at(l, "illegal quantized dimension " + std::to_string(axis) + " (must be >= 0)");
      }
      QRT_RETURN_IF_ERROR(expect(':', "between the quantized dimension and its block size"));
      QRT_ASSIGN_OR_RETURN(int64_t block, parse_int("block size"));
      axes.push_back(int32_t(axis));
      blocks.push_back(block);
    } while (consume(','));
    QRT_RETURN_IF_ERROR(expect('}', "to close the block sizes"));
  }
  QRT_RETURN_IF_ERROR(expect(',', "after the block sizes"));
  QRT_RETURN_IF_ERROR(expect('{', "to open the sub-channel scale tensor"));
  std::vector<double> scales;
  std::vector<int64_t> zps;
  std::vector<int64_t> dims;
  QRT_RETURN_IF_ERROR(parse_quant_param_list(scales, zps, dims, 0));
  return ElementType::make_sub_channel(storage, expressed, std::move(axes), std::move(blocks), std::move(dims),
                                       std::move(scales), std::move(zps));
}

// One brace level of a sub-channel scale tensor, its '{' consumed: `dims` gets this level's
// extent followed by the (equal) shape of its elements.
Status Parser::parse_scale_zero_point(std::vector<double>& scales, std::vector<int64_t>& zps) {
  QRT_ASSIGN_OR_RETURN(double scale, parse_float("scale", FloatKind::kF64));
  int64_t zp = 0;
  if (consume(':')) {
    QRT_ASSIGN_OR_RETURN(zp, parse_int("zero point"));
  }
  scales.push_back(scale);
  zps.push_back(zp);
  return Status::ok();
}

Status Parser::parse_quant_param_list(std::vector<double>& scales, std::vector<int64_t>& zps,
                                      std::vector<int64_t>& dims, int depth) {
  if (depth > 32) return error_at(loc(), "sub-channel scale tensor nests deeper than 32 levels");
  int64_t count = 0;
  std::vector<int64_t> inner;
  bool first = true;
  do {
    std::vector<int64_t> this_dims;
    const SourceLoc l = loc();
    if (consume('{')) {
      QRT_RETURN_IF_ERROR(parse_quant_param_list(scales, zps, this_dims, depth + 1));
    } else {
      QRT_RETURN_IF_ERROR(parse_scale_zero_point(scales, zps));
    }
    if (!first && this_dims != inner) {
      return error_at(l, "sub-channel scale tensor is invalid; ranks or sizes are not consistent between elements");
    }
    inner = std::move(this_dims);
    first = false;
    ++count;
  } while (consume(','));
  QRT_RETURN_IF_ERROR(expect('}', "to close a level of the sub-channel scale tensor"));
  dims.clear();
  dims.push_back(count);
  dims.insert(dims.end(), inner.begin(), inner.end());
  return Status::ok();
}

// uniform (per-layer and per-axis forms) and the other quant types:
// any        ::= '!quant.any' '<' storage (':' expressed)? '>'
// calibrated ::= '!quant.calibrated' '<' expressed '<' float ':' float '>' '>'
Result<ElementType> Parser::parse_quant_type() {
  const SourceLoc start = loc();
  advance();  // '!'
  const std::string name = parse_ident();
  ElementType t;
  if (name == "quant.uniform") {
    QRT_RETURN_IF_ERROR(expect('<', "after '!quant.uniform'"));
    QRT_ASSIGN_OR_RETURN(QuantStorage storage, parse_storage());
    QRT_RETURN_IF_ERROR(expect(':', "after the storage type"));
    QRT_ASSIGN_OR_RETURN(FloatKind expressed, parse_float_kind("expressed type"));
    const bool has_axis_spec = consume(':');
    if (has_axis_spec && consume('{')) {
      QRT_ASSIGN_OR_RETURN(t, parse_sub_channel_rest(storage, expressed));
    } else if (has_axis_spec) {
      QRT_ASSIGN_OR_RETURN(int64_t axis, parse_int("channel axis"));
      if (axis < 0 || axis > INT32_MAX) {
        return error_at(start, "illegal channel axis " + std::to_string(axis) + " (must be >= 0)");
      }
      QRT_RETURN_IF_ERROR(expect(',', "after the channel axis"));
      QRT_RETURN_IF_ERROR(expect('{', "to open the per-axis scale list"));
      std::vector<double> scales;
      std::vector<int64_t> zps;
      do {
        QRT_RETURN_IF_ERROR(parse_scale_zero_point(scales, zps));
      } while (consume(','));
      QRT_RETURN_IF_ERROR(expect('}', "to close the per-axis scale list"));
      t = ElementType::make_per_axis(storage, expressed, int32_t(axis), std::move(scales),
                                     std::move(zps));
    } else {
      QRT_RETURN_IF_ERROR(expect(',', "before the scale"));
      QRT_ASSIGN_OR_RETURN(double scale, parse_float("scale", FloatKind::kF64));
      int64_t zp = 0;
      if (consume(':')) {
        QRT_ASSIGN_OR_RETURN(zp, parse_int("zero point"));
      }
      t = ElementType::make_uniform(storage, expressed, scale, zp);
    }
  } else if (name == "quant.any") {
    QRT_RETURN_IF_ERROR(expect('<', "after '!quant.any'"));
    QRT_ASSIGN_OR_RETURN(QuantStorage storage, parse_storage());
    bool has_expressed = false;
    FloatKind expressed = FloatKind::kF32;
    if (consume(':')) {
      QRT_ASSIGN_OR_RETURN(expressed, parse_float_kind("expressed type"));
      has_expressed = true;
    }
    t = ElementType::make_any(storage, has_expressed, expressed);
  } else if (name == "quant.calibrated") {
    QRT_RETURN_IF_ERROR(expect('<', "after '!quant.calibrated'"));
    QRT_ASSIGN_OR_RETURN(FloatKind expressed, parse_float_kind("expressed type"));
    QRT_RETURN_IF_ERROR(expect('<', "before the calibrated range"));
    QRT_ASSIGN_OR_RETURN(double lo, parse_float("calibrated min", FloatKind::kF64));
    QRT_RETURN_IF_ERROR(expect(':', "between calibrated min and max"));
    QRT_ASSIGN_OR_RETURN(double hi, parse_float("calibrated max", FloatKind::kF64));
    QRT_RETURN_IF_ERROR(expect('>', "after the calibrated range"));
    t = ElementType::make_calibrated(expressed, lo, hi);
  } else if (name.rfind("quant.", 0) == 0) {
    return error_at(start, "unknown quant type '!" + name + "' (expected uniform, any or calibrated)");
  } else {
    return error_at(start, "unsupported type '!" + name + "'");
  }
  QRT_RETURN_IF_ERROR(expect('>', "to close the quantized type"));
  Status s = t.verify();
  if (!s.is_ok()) return s.with_loc(start);
  return t;
}

// element-type ::= float-kind | ('i'|'si'|'ui') width | quant-type
Result<ElementType> Parser::parse_element_type() {
  skip_ws();
  if (cur() == '!') return parse_quant_type();
  const SourceLoc l = loc();
  const std::string id = parse_ident();
  if (FloatKind kind; float_kind_from_name(id, &kind)) return ElementType::make_float(kind);
  for (const auto& [prefix, sign] : {std::pair<const char*, Signedness>{"si", Signedness::kSigned},
                                     {"ui", Signedness::kUnsigned},
                                     {"i", Signedness::kSignless}}) {
    const size_t p = std::string(prefix).size();
    if (id.rfind(prefix, 0) == 0 && id.size() > p && id.size() - p <= 4 &&
        id.find_first_not_of("0123456789", p) == std::string::npos) {
      const unsigned width = unsigned(std::stoul(id.substr(p)));
      if (width < 1 || width > 64) {
        return error_at(l, "integer width " + std::to_string(width) +
                               " is not supported (1 to 64 bits)");
      }
      return ElementType::make_int(width, sign);
    }
  }
  if (id.empty()) return error_at(l, "expected a type, found " + describe_here());
  return error_at(l, "unsupported element type '" + id +
                         "' (qrt supports f16, bf16, f32, f64, tf32, the f8 types, integers and !quant types)");
}

// type ::= 'tensor' '<' (dim 'x')* element-type '>' | element-type ;  dim ::= int | '?'
Result<Type> Parser::parse_type() {
  skip_ws();
  const SourceLoc l = loc();
  Type t;
  if (consume_keyword("tensor")) {
    QRT_RETURN_IF_ERROR(expect('<', "after 'tensor'"));
    skip_ws();
    if (cur() == '*') return error_at(l, "unranked tensors are not supported");
    for (;;) {
      skip_ws();
      if (cur() == '?') {
        advance();
        t.dims.push_back(-1);
      } else if (is_digit(cur())) {
        const size_t start = pos_;
        while (is_digit(cur())) advance();
        const std::string digits(text_.substr(start, pos_ - start));
        if (digits.size() > 15) return error_at(l, "dimension " + digits + " is too large");
        t.dims.push_back(std::stoll(digits));
      } else {
        break;
      }
      skip_ws();
      if (cur() != 'x') return error("expected 'x' after a dimension, found " + describe_here());
      advance();
    }
    QRT_ASSIGN_OR_RETURN(t.element, parse_element_type());
    QRT_RETURN_IF_ERROR(expect('>', "to close the tensor type"));
    t.is_tensor = true;
  } else {
    QRT_ASSIGN_OR_RETURN(t.element, parse_element_type());
    t.is_tensor = false;
  }
  Status s = t.verify();
  if (!s.is_ok()) return s.with_loc(l);
  return t;
}

// type-list-parens ::= '(' (type (',' type)*)? ')'
Result<std::vector<Type>> Parser::parse_type_list_parens() {
  std::vector<Type> types;
  QRT_RETURN_IF_ERROR(expect('(', "to open a type list"));
  if (consume(')')) return types;
  do {
    QRT_ASSIGN_OR_RETURN(Type t, parse_type());
    types.push_back(std::move(t));
  } while (consume(','));
  QRT_RETURN_IF_ERROR(expect(')', "to close a type list"));
  return types;
}

Result<Type> Parser::parse_type_only() {
  QRT_ASSIGN_OR_RETURN(Type t, parse_type());
  skip_ws();
  if (pos_ != text_.size()) return error("unexpected trailing text " + describe_here());
  return t;
}

}  // namespace qrt::text_detail

namespace qrt {

Result<Type> parse_type(const std::string& text) {
  return text_detail::Parser(text, "").parse_type_only();
}

}  // namespace qrt
