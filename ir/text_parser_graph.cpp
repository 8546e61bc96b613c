// qrt — text-form parser: attributes, ops and the function (see text_parser_impl.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/ops.h"
#include "ir/text_format.h"
#include "ir/text_parser_impl.h"

namespace qrt::text_detail {

namespace {

uint8_t hex_nibble(char c) {
  if (c >= '0' && c <= '9') return uint8_t(c - '0');
  if (c >= 'a' && c <= 'f') return uint8_t(c - 'a' + 10);
  return uint8_t(c - 'A' + 10);
}

// Appends `v` as `nbytes` little-endian bytes.
void append_le(std::vector<uint8_t>& out, uint64_t v, unsigned nbytes) {
  for (unsigned b = 0; b < nbytes; ++b) out.push_back(uint8_t(v >> (8 * b)));
}

// Collects the shape of a nested literal and its scalars in row-major order.
Status flatten_dense(const DenseLit& lit, size_t depth, std::vector<int64_t>& shape,
                     std::vector<const DenseLit*>& scalars) {
  if (!lit.is_list) {
    if (depth != shape.size()) {
      return Status::error_at(lit.loc, "dense literal nesting is inconsistent");
    }
    scalars.push_back(&lit);
    return Status::ok();
  }
  if (depth == shape.size()) {
    shape.push_back(int64_t(lit.items.size()));
  } else if (shape[depth] != int64_t(lit.items.size())) {
    return Status::error_at(lit.loc, "dense literal has ragged dimension " + std::to_string(depth) +
                                         ": expected " + std::to_string(shape[depth]) +
                                         " elements, found " + std::to_string(lit.items.size()));
  }
  for (const DenseLit& item : lit.items) {
    QRT_RETURN_IF_ERROR(flatten_dense(item, depth + 1, shape, scalars));
  }
  return Status::ok();
}

}  // namespace

// dense-lit ::= '[' (dense-lit (',' dense-lit)*)? ']' | number | 'true' | 'false'
Result<DenseLit> Parser::parse_dense_lit() {
  skip_ws();
  DenseLit lit;
  lit.loc = loc();
  if (consume('[')) {
    lit.is_list = true;
    QRT_ASSIGN_OR_RETURN(NestingScope nested, enter_nesting(lit.loc, "dense literal"));
    if (consume(']')) return lit;
    do {
      QRT_ASSIGN_OR_RETURN(DenseLit item, parse_dense_lit());
      lit.items.push_back(std::move(item));
    } while (consume(','));
    QRT_RETURN_IF_ERROR(expect(']', "to close a dense literal list"));
    return lit;
  }
  if (consume_keyword("true")) {
    lit.scalar = "true";
  } else if (consume_keyword("false")) {
    lit.scalar = "false";
  } else {
    QRT_ASSIGN_OR_RETURN(NumberLit n, parse_number());
    lit.scalar = n.text;
  }
  return lit;
}

DenseElements pack_if_nibbles(DenseElements d);

Result<DenseElements> Parser::build_dense(const DenseLit& lit, const std::string& hex,
                                          const Type& type, const SourceLoc& l) {
  if (!type.is_tensor || !type.has_static_shape()) {
    return error_at(l, "dense elements need a statically shaped tensor type, got " +
                           type.to_string());
  }
  const ElementType& e = type.element;
  if (!e.is_float() && !e.is_integer()) {
    return error_at(l, "dense elements must have float or integer elements, got " +
                           e.to_string() + " (quantized constants hold storage integers)");
  }
  DenseElements d;
  d.type = type;
  const unsigned nbytes = element_byte_size(e);
  const size_t n = size_t(type.num_elements());
  // Literals are stored expanded; refuse sizes no real constant needs before allocating.
  constexpr size_t kMaxDenseBytes = size_t(1) << 32;
  if (n * nbytes > kMaxDenseBytes) {
    return error_at(l, "dense attribute of type " + type.to_string() + " would hold " +
                           std::to_string(n * nbytes) + " bytes (the limit is 4 GiB)");
  }
  if (n * nbytes > constant_budget_) {
    return error_at(l, "dense attribute of type " + type.to_string() + " would hold " + std::to_string(n * nbytes) +
                           " bytes, more than the " + std::to_string(constant_budget_) +
                           " bytes left of the memory budget for the graph's constants")
        .with_code(ErrorCode::kOutOfMemory);
  }
  constant_budget_ -= n * nbytes;
  if (!hex.empty()) {
    const size_t digits = hex.size() - 2;
    if (digits % 2 != 0) return error_at(l, "hex dense literal has an odd number of digits");
    if (e.is_integer() && e.int_width == 1) return error_at(l, "hex dense literals of i1 are not supported");
    std::vector<uint8_t> raw;
    for (size_t i = 2; i < hex.size(); i += 2) {
      if (!std::isxdigit(static_cast<unsigned char>(hex[i])) ||
          !std::isxdigit(static_cast<unsigned char>(hex[i + 1]))) {
        return error_at(l, "hex dense literal has a non-hex character at offset " + std::to_string(i));
      }
      raw.push_back(uint8_t(hex_nibble(hex[i]) << 4 | hex_nibble(hex[i + 1])));
    }
    if (raw.size() == size_t(nbytes) * n) {
      d.bytes = std::move(raw);
    } else if (raw.size() == nbytes) {
      for (size_t i = 0; i < n; ++i) d.bytes.insert(d.bytes.end(), raw.begin(), raw.end());
    } else {
      return error_at(l, "hex dense literal has " + std::to_string(raw.size()) + " bytes, but " +
                             type.to_string() + " needs " + std::to_string(size_t(nbytes) * n) +
                             " (or " + std::to_string(nbytes) + " for a splat)");
    }
    if (const int64_t i = d.first_element_with_stray_bits(); i >= 0) {
      return error_at(l, "hex dense literal: element " + std::to_string(i) + " sets bits above the low " +
                             std::to_string(float_kind_width(e.float_kind)) + " that " +
                             float_kind_name(e.float_kind) + " stores");
    }
    return pack_if_nibbles(std::move(d));
  }
  std::vector<int64_t> shape;
  std::vector<const DenseLit*> scalars;
  const bool empty_literal = lit.is_list && lit.items.empty() && lit.loc.line == 0;
  if (!empty_literal) QRT_RETURN_IF_ERROR(flatten_dense(lit, 0, shape, scalars));
  const bool splat = !lit.is_list;
  if (empty_literal) {
    if (n != 0) return error_at(l, "empty dense literal for non-empty type " + type.to_string());
  } else if (!splat && shape != type.dims) {
    return error_at(l, "dense literal shape [" + dims_to_string(shape) +
                           "] does not match type " + type.to_string());
  }
  std::vector<uint8_t> one;
  for (size_t i = 0; i < (splat ? 1 : scalars.size()); ++i) {
    const DenseLit& s = *scalars[i];
    one.clear();
    if (e.is_float()) {
      if (s.scalar == "true" || s.scalar == "false") {
        return error_at(s.loc, "expected a float element, got " + s.scalar);
      }
      NumberLit num;
      num.text = s.scalar;
      num.loc = s.loc;
      num.is_hex = s.scalar.find('x') != std::string::npos;
      num.is_float = s.scalar.find('.') != std::string::npos;
      double v;
      if (!num.is_float && !num.is_hex) {
        v = round_to_float_kind(double(std::strtoll(s.scalar.c_str(), nullptr, 10)), e.float_kind);
      } else {
        QRT_ASSIGN_OR_RETURN(v, float_value(num, e.float_kind, "element"));
      }
      // A hex literal is the element's bit pattern and is kept as written, NaN signs and
      // payloads included (through a double, f8E5M2's 0xFE came back as 0x7E).
      const uint64_t bits = num.is_hex ? std::strtoull(s.scalar.c_str() + 2, nullptr, 16) : float_kind_bits(v, e.float_kind);
      if (nbytes < 8 && (bits >> (8 * nbytes)) != 0) {
        return error_at(s.loc, "hexadecimal element " + s.scalar + " does not fit " + std::to_string(nbytes) + " byte(s)");
      }
      if (const unsigned width = float_kind_width(e.float_kind); width < 64 && (bits >> width) != 0) {
        return error_at(s.loc, "hexadecimal element " + s.scalar + " sets bits above the low " + std::to_string(width) +
                                   " that " + float_kind_name(e.float_kind) + " stores");
      }
      append_le(one, bits, nbytes);
    } else {
      int64_t v;
      if (s.scalar == "true" || s.scalar == "false") {
        if (e.int_width != 1) return error_at(s.loc, "boolean element needs an i1 type");
        v = s.scalar == "true";
      } else {
        NumberLit num;
        num.text = s.scalar;
        num.loc = s.loc;
        num.is_float = s.scalar.find('.') != std::string::npos;
        num.is_hex = s.scalar.find('x') != std::string::npos;
        QRT_ASSIGN_OR_RETURN(v, integer_value(num, "element"));
      }
      const unsigned w = e.int_width;
      const int64_t lo = e.int_sign == Signedness::kUnsigned ? 0
                         : w >= 64                        ? INT64_MIN
                                                          : -(int64_t(1) << (w - 1));
      // In uint64: a 63-bit unsigned or signless maximum is 2^63 - 1 (the fuzzer's i63).
      const int64_t hi = w >= 64 ? INT64_MAX
                         : e.int_sign == Signedness::kSigned ? (int64_t(1) << (w - 1)) - 1
                                                             : int64_t((uint64_t(1) << w) - 1);
      if (e.int_sign == Signedness::kUnsigned && v < 0) {
        return error_at(s.loc, "expected unsigned integer elements, but parsed negative value " +
                                   s.scalar);
      }
      if (v < lo || v > hi) {
        return error_at(s.loc, "integer element " + s.scalar + " does not fit in " + e.to_string());
      }
      append_le(one, uint64_t(v), nbytes);
    }
    d.bytes.insert(d.bytes.end(), one.begin(), one.end());
  }
  if (splat) {
    for (size_t i = 1; i < n; ++i) d.bytes.insert(d.bytes.end(), one.begin(), one.end());
    if (n == 0) d.bytes.clear();
  }
  return pack_if_nibbles(std::move(d));
}

// The text form (like MLIR's hex) has one byte per element; integers of 2-4 bits are held
// two per byte (is_nibble_packed).
DenseElements pack_if_nibbles(DenseElements d) {
  if (!is_nibble_packed(d.type.element)) return d;
  DenseElements packed = DenseElements::zeros(d.type);
  for (size_t i = 0; i < d.bytes.size(); ++i) packed.set_int(i, d.bytes[i]);
  return packed;
}

// attribute ::= 'true' | 'false' | 'unit' | string | number (':' type)?
//             | '[' (attribute (',' attribute)*)? ']' | 'dense' '<' (dense-lit | hex)? '>' ':' type
Result<Attribute> Parser::parse_attribute() {
  skip_ws();
  const SourceLoc l = loc();
  Attribute a;
  if (consume_keyword("true") || consume_keyword("false")) {
    a.kind = Attribute::Kind::kBool;
    a.b = text_.substr(pos_ - 4, 4) == "true";
    return a;
  }
  if (consume_keyword("unit")) return a;
  if (cur() == '"') {
    a.kind = Attribute::Kind::kString;
    QRT_ASSIGN_OR_RETURN(a.s, parse_string_lit());
    return a;
  }
  if (consume('[')) {
    a.kind = Attribute::Kind::kArray;
    QRT_ASSIGN_OR_RETURN(NestingScope nested, enter_nesting(l, "array attribute"));
    if (consume(']')) return a;
    do {
      QRT_ASSIGN_OR_RETURN(Attribute e, parse_attribute());
      a.array.push_back(std::move(e));
    } while (consume(','));
    QRT_RETURN_IF_ERROR(expect(']', "to close an array attribute"));
    return a;
  }
  if (consume_keyword("dense")) {
    QRT_RETURN_IF_ERROR(expect('<', "after 'dense'"));
    DenseLit lit;
    std::string hex;
    skip_ws();
    if (cur() == '"') {
      QRT_ASSIGN_OR_RETURN(hex, parse_string_lit());
      if (hex.size() < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X')) {
        return error_at(l, "dense string literal must be hexadecimal data starting with 0x");
      }
    } else if (cur() == '>') {
      lit.is_list = true;  // `dense<>`: no elements
    } else {
      QRT_ASSIGN_OR_RETURN(lit, parse_dense_lit());
    }
    QRT_RETURN_IF_ERROR(expect('>', "to close the dense literal"));
    QRT_RETURN_IF_ERROR(expect(':', "before the type of a dense attribute"));
    QRT_ASSIGN_OR_RETURN(Type type, parse_type());
    QRT_ASSIGN_OR_RETURN(a.dense, build_dense(lit, hex, type, l));
    a.kind = Attribute::Kind::kDense;
    return a;
  }
  if (cur() == '-' || cur() == '+' || is_digit(cur())) {
    QRT_ASSIGN_OR_RETURN(NumberLit n, parse_number());
    ElementType type = n.is_float ? ElementType::make_float(FloatKind::kF64)
                                  : ElementType::make_int(64);
    if (consume(':')) {
      QRT_ASSIGN_OR_RETURN(Type t, parse_type());
      if (t.is_tensor || (!t.element.is_float() && !t.element.is_integer())) {
        return error_at(l, "number attribute needs a float or integer type, got " + t.to_string());
      }
      type = t.element;
    }
    a.scalar_type = type;
    if (type.is_float()) {
      a.kind = Attribute::Kind::kFloat;
      if (!n.is_float && !n.is_hex) {
        a.f = round_to_float_kind(double(std::strtoll(n.text.c_str(), nullptr, 10)), type.float_kind);
      } else {
        QRT_ASSIGN_OR_RETURN(a.f, float_value(n, type.float_kind, "attribute"));
      }
    } else {
      a.kind = Attribute::Kind::kInt;
      QRT_ASSIGN_OR_RETURN(a.i, integer_value(n, "attribute"));
    }
    return a;
  }
  return error("expected an attribute value, found " + describe_here());
}

// attr-dict ::= '{' (name ('=' attribute)? (',' name ('=' attribute)?)*)? '}'
Status Parser::parse_attr_dict(std::vector<std::pair<std::string, Attribute>>& out) {
  QRT_RETURN_IF_ERROR(expect('{', "to open an attribute dictionary"));
  if (consume('}')) return Status::ok();
  do {
    skip_ws();
    const SourceLoc l = loc();
    std::string name;
    if (cur() == '"') {
      QRT_ASSIGN_OR_RETURN(name, parse_string_lit());
    } else {
      name = parse_ident();
    }
    if (name.empty()) return error("expected attribute name, found " + describe_here());
    for (const auto& kv : out) {
      if (kv.first == name) return error_at(l, "duplicate attribute '" + name + "'");
    }
    Attribute value;  // unit when no '='
    if (consume('=')) {
      QRT_ASSIGN_OR_RETURN(value, parse_attribute());
    }
    out.emplace_back(name, std::move(value));
  } while (consume(','));
  return expect('}', "to close an attribute dictionary");
}

Result<int> Parser::lookup_value(const std::string& name, const SourceLoc& l) const {
  auto it = names_.find(name);
  if (it == names_.end()) return error_at(l, "use of undeclared SSA value name '%" + name + "'");
  return it->second;
}

Status Parser::define_value(Graph& g, int value, const std::string& name, const SourceLoc& l) {
  if (!names_.emplace(name, value).second) {
    return error_at(l, "redefinition of SSA value '%" + name + "'");
  }
  g.values[size_t(value)].name = name;
  g.values[size_t(value)].loc = l;
  return Status::ok();
}

// return ::= ('return' | 'func.return') (ssa-name (',' ssa-name)* ':' type (',' type)*)?
//          | '"func.return"' '(' ssa-names ')' ':' '(' types ')' '->' '(' ')'
Status Parser::parse_return(Graph& g, const SourceLoc& op_loc, bool generic) {
  std::vector<std::pair<std::string, SourceLoc>> names;
  std::vector<Type> types;
  if (generic) {
    QRT_RETURN_IF_ERROR(expect('(', "after '\"func.return\"'"));
    if (!at(')')) {
      do {
        skip_ws();
        const SourceLoc l = loc();
        QRT_ASSIGN_OR_RETURN(std::string n, parse_ssa_name());
        names.emplace_back(n, l);
      } while (consume(','));
    }
    QRT_RETURN_IF_ERROR(expect(')', "to close the operand list"));
    QRT_RETURN_IF_ERROR(expect(':', "before the function type"));
    QRT_ASSIGN_OR_RETURN(types, parse_type_list_parens());
    QRT_RETURN_IF_ERROR(expect_str("->", "in the function type"));
    QRT_ASSIGN_OR_RETURN(std::vector<Type> none, parse_type_list_parens());
    if (!none.empty()) return error_at(op_loc, "'func.return' op produces no results");
  } else if (at('%')) {
    do {
      skip_ws();
      const SourceLoc l = loc();
      QRT_ASSIGN_OR_RETURN(std::string n, parse_ssa_name());
      names.emplace_back(n, l);
    } while (consume(','));
    QRT_RETURN_IF_ERROR(expect(':', "before the returned types"));
    do {
      QRT_ASSIGN_OR_RETURN(Type t, parse_type());
      types.push_back(std::move(t));
    } while (consume(','));
  }
  if (names.size() != types.size()) {
    return error_at(op_loc, "'func.return' op has " + std::to_string(names.size()) +
                                " operands but " + std::to_string(types.size()) + " types");
  }
  if (names.size() != func_results_.size()) {
    return error_at(op_loc, "'func.return' op has " + std::to_string(names.size()) +
                                " operands, but enclosing function (@" + g.name + ") returns " +
                                std::to_string(func_results_.size()));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    QRT_ASSIGN_OR_RETURN(int v, lookup_value(names[i].first, names[i].second));
    const Type& actual = g.values[size_t(v)].type;
    if (!(actual == types[i])) {
      return error_at(names[i].second, "use of value '%" + names[i].first +
                                           "' expects different type than prior uses: '" +
                                           types[i].to_string() + "' vs '" + actual.to_string() + "'");
    }
    if (!(actual == func_results_[i])) {
      return error_at(op_loc, "type of return operand " + std::to_string(i) + " (" +
                                  actual.to_string() + ") doesn't match function result type (" +
                                  func_results_[i].to_string() + ") in function @" + g.name);
    }
    g.outputs.push_back(v);
  }
  g.return_loc = op_loc;
  returned_ = true;
  return Status::ok();
}

// op ::= (ssa-name (',' ssa-name)* '=')? (generic-op | custom-cast | return)
// generic-op ::= string '(' ssa-names? ')' attr-dict? ':' '(' types ')' '->' (type | '(' types ')')
// custom-cast ::= ('quant.qcast' | 'quant.dcast' | 'quant.scast') ssa-name ':' type 'to' type
Status Parser::parse_op(Graph& g) {
  skip_ws();
  const SourceLoc op_loc = loc();
  std::vector<std::pair<std::string, SourceLoc>> result_names;
  if (cur() == '%') {
    do {
      skip_ws();
      const SourceLoc l = loc();
      QRT_ASSIGN_OR_RETURN(std::string n, parse_ssa_name());
      result_names.emplace_back(n, l);
    } while (consume(','));
    QRT_RETURN_IF_ERROR(expect('=', "after the result names"));
  }
  skip_ws();
  const SourceLoc name_loc = loc();
  std::string op_name;
  const bool generic = cur() == '"';
  if (generic) {
    QRT_ASSIGN_OR_RETURN(op_name, parse_string_lit());
  } else {
    op_name = parse_ident();
    if (op_name.empty()) return error("expected an operation, found " + describe_here());
  }
  if (op_name == "func.return" || (!generic && op_name == "return")) {
    if (!result_names.empty()) return error_at(op_loc, "'func.return' op produces no results");
    return parse_return(g, name_loc, generic);
  }
  const OpInfo* info = find_op(op_name);
  if (!info) {
    return error_at(name_loc, "unknown op '" + op_name + "' (see docs/ops.md for the ops qrt supports)");
  }
  std::vector<std::pair<std::string, SourceLoc>> operand_names;
  std::vector<std::pair<std::string, Attribute>> attrs;
  std::vector<Type> operand_types, result_types;
  if (generic) {
    QRT_RETURN_IF_ERROR(expect('(', "to open the operand list"));
    if (!at(')')) {
      do {
        skip_ws();
        const SourceLoc l = loc();
        QRT_ASSIGN_OR_RETURN(std::string n, parse_ssa_name());
        operand_names.emplace_back(n, l);
      } while (consume(','));
    }
    QRT_RETURN_IF_ERROR(expect(')', "to close the operand list"));
    if (consume('<')) {
      // Properties `<{...}>` are accepted and treated as attributes.
      QRT_RETURN_IF_ERROR(parse_attr_dict(attrs));
      QRT_RETURN_IF_ERROR(expect('>', "to close the properties"));
    }
    if (at('{')) QRT_RETURN_IF_ERROR(parse_attr_dict(attrs));
    QRT_RETURN_IF_ERROR(expect(':', "before the op's function type"));
    QRT_ASSIGN_OR_RETURN(operand_types, parse_type_list_parens());
    QRT_RETURN_IF_ERROR(expect_str("->", "in the op's function type"));
    if (at('(')) {
      QRT_ASSIGN_OR_RETURN(result_types, parse_type_list_parens());
    } else {
      QRT_ASSIGN_OR_RETURN(Type t, parse_type());
      result_types.push_back(std::move(t));
    }
  } else {
    if (info->kind != OpKind::kQCast && info->kind != OpKind::kDCast && info->kind != OpKind::kSCast) {
      return error_at(name_loc, "op '" + op_name + "' must be written in generic form (\"" +
                                    op_name + "\"(...) : (...) -> ...)");
    }
    skip_ws();
    const SourceLoc l = loc();
    QRT_ASSIGN_OR_RETURN(std::string n, parse_ssa_name());
    operand_names.emplace_back(n, l);
    if (at('{')) QRT_RETURN_IF_ERROR(parse_attr_dict(attrs));
    QRT_RETURN_IF_ERROR(expect(':', "before the operand type"));
    QRT_ASSIGN_OR_RETURN(Type in, parse_type());
    if (!consume_keyword("to")) return error("expected 'to' in " + op_name + ", found " + describe_here());
    QRT_ASSIGN_OR_RETURN(Type out, parse_type());
    operand_types.push_back(std::move(in));
    result_types.push_back(std::move(out));
  }
  if (operand_types.size() != operand_names.size()) {
    return error_at(name_loc, "'" + op_name + "' op has " + std::to_string(operand_names.size()) +
                                  " operands but its type lists " +
                                  std::to_string(operand_types.size()));
  }
  if (result_types.size() != result_names.size()) {
    return error_at(op_loc, "operation defines " + std::to_string(result_types.size()) +
                                " results but was provided " + std::to_string(result_names.size()) +
                                " to bind");
  }
  std::vector<int> operands;
  for (size_t i = 0; i < operand_names.size(); ++i) {
    QRT_ASSIGN_OR_RETURN(int v, lookup_value(operand_names[i].first, operand_names[i].second));
    const Type& actual = g.values[size_t(v)].type;
    if (!(actual == operand_types[i])) {
      return error_at(operand_names[i].second,
                      "use of value '%" + operand_names[i].first +
                          "' expects different type than prior uses: '" +
                          operand_types[i].to_string() + "' vs '" + actual.to_string() + "'");
    }
    operands.push_back(v);
  }
  const int op_index = g.add_op(info->kind, std::move(operands), result_types, {}, name_loc);
  Op& op = g.ops[size_t(op_index)];
  for (auto& [k, v] : attrs) op.set_attr(k, std::move(v));
  for (size_t i = 0; i < result_names.size(); ++i) {
    QRT_RETURN_IF_ERROR(define_value(g, op.results[i], result_names[i].first, result_names[i].second));
  }
  return Status::ok();
}

// func ::= 'func.func' ('private' | 'public')? '@' name '(' (arg (',' arg)*)? ')'
//          ('->' (type | '(' types ')'))? '{' op* return '}'
// arg  ::= ssa-name ':' type
Status Parser::parse_func(Graph& g) {
  skip_ws();
  if (!consume_keyword("func.func")) {
    return error("expected 'func.func', found " + describe_here());
  }
  (void)(consume_keyword("private") || consume_keyword("public"));
  QRT_RETURN_IF_ERROR(expect('@', "before the function name"));
  g.name = parse_ident();
  if (g.name.empty()) return error("expected function name after '@'");
  QRT_RETURN_IF_ERROR(expect('(', "to open the argument list"));
  if (!at(')')) {
    do {
      skip_ws();
      const SourceLoc l = loc();
      QRT_ASSIGN_OR_RETURN(std::string n, parse_ssa_name());
      QRT_RETURN_IF_ERROR(expect(':', "after the argument name"));
      QRT_ASSIGN_OR_RETURN(Type t, parse_type());
      if (at('{')) return error("argument attributes are not supported");
      const int v = g.add_input(std::move(t));
      QRT_RETURN_IF_ERROR(define_value(g, v, n, l));
    } while (consume(','));
  }
  QRT_RETURN_IF_ERROR(expect(')', "to close the argument list"));
  if (consume_str("->")) {
    if (at('(')) {
      QRT_ASSIGN_OR_RETURN(func_results_, parse_type_list_parens());
    } else {
      QRT_ASSIGN_OR_RETURN(Type t, parse_type());
      func_results_.push_back(std::move(t));
    }
  }
  if (consume_keyword("attributes")) return error("function attributes are not supported");
  QRT_RETURN_IF_ERROR(expect('{', "to open the function body"));
  while (!at('}')) {
    if (cur() == '\0') return error("unexpected end of input inside the function body");
    if (returned_) return error("operation after 'func.return': the return must be last");
    QRT_RETURN_IF_ERROR(parse_op(g));
  }
  if (!returned_) return error("function @" + g.name + " has no 'return' before its closing '}'");
  advance();
  return Status::ok();
}

// module-attributes ::= '{' ('qrt.numerics' '=' string)? '}'
Status Parser::parse_module_attributes(Graph& g) {
  skip_ws();
  const SourceLoc at_dict = loc();
  std::vector<std::pair<std::string, Attribute>> attrs;
  QRT_RETURN_IF_ERROR(parse_attr_dict(attrs));
  for (const auto& [name, value] : attrs) {
    if (name != "qrt.numerics") {
      return error_at(at_dict, "module attribute '" + name + "' is not supported (qrt reads 'qrt.numerics' only)");
    }
    const std::optional<NumericsProfile> profile =
        value.kind == Attribute::Kind::kString ? parse_numerics_profile(value.s) : std::nullopt;
    if (!profile) {
      return error_at(at_dict, "module attribute qrt.numerics = " + value.to_string() +
                                   " names no numerics profile (profiles: " + numerics_profile_names() + ")");
    }
    g.numerics = *profile;
  }
  return Status::ok();
}

// file ::= func | 'module' ('@' name)? ('attributes' module-attributes)? '{' func '}'
Result<Graph> Parser::parse_file() {
  Graph g;
  skip_ws();
  if (pos_ >= text_.size()) return error("empty input: expected 'func.func' or 'module'");
  const bool in_module = consume_keyword("module");
  if (in_module) {
    if (consume('@')) parse_ident();
    if (consume_keyword("attributes")) QRT_RETURN_IF_ERROR(parse_module_attributes(g));
    QRT_RETURN_IF_ERROR(expect('{', "to open the module body"));
  }
  QRT_RETURN_IF_ERROR(parse_func(g));
  if (in_module) {
    skip_ws();
    if (consume_keyword("func.func")) {
      return error("a qrt graph holds exactly one function; found a second 'func.func'");
    }
    QRT_RETURN_IF_ERROR(expect('}', "to close the module"));
  }
  skip_ws();
  if (pos_ != text_.size()) {
    if (consume_keyword("func.func")) {
      return error("a qrt graph holds exactly one function; found a second 'func.func'");
    }
    return error("unexpected text after the function: " + describe_here());
  }
  Status verified = verify_graph(g);
  if (!verified.is_ok()) return verified.with_code(ErrorCode::kVerify);
  return g;
}

}  // namespace qrt::text_detail

namespace qrt {

Result<Graph> parse_graph(std::string_view text, const std::string& file) {
  return parse_graph(text, file, SIZE_MAX);
}

Result<Graph> parse_graph(std::string_view text, const std::string& file, size_t max_constant_bytes) {
  Result<Graph> g = text_detail::Parser(text, file, max_constant_bytes).parse_file();
  if (!g.is_ok() && g.status().code() == ErrorCode::kGeneric) {
    return g.status().with_code(ErrorCode::kParse);
  }
  return g;
}

bool is_bare_identifier(std::string_view name) {
  return !name.empty() && text_detail::is_ident_start(name[0]) &&
         std::all_of(name.begin(), name.end(), text_detail::is_ident_char);
}

}  // namespace qrt
