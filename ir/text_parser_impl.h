// qrt — internal: the text-form parser class shared by text_parser_*.cpp.
//
// The parser works on characters rather than a token stream because MLIR's type syntax is
// context sensitive (`tensor<4x8xf32>` lexes differently from an expression).
#pragma once

#include <cstdint>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace qrt::text_detail {

inline bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool is_ident_char(char c) {
  return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$' || c == '.';
}
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A literal number as written: integer or float, with its original spelling.
struct NumberLit {
  bool is_float = false;
  bool is_hex = false;
  std::string text;
  SourceLoc loc;
};

// A parsed (possibly nested) dense literal element list.
struct DenseLit {
  bool is_list = false;
  std::vector<DenseLit> items;   // is_list
  std::string scalar;            // !is_list: number text, "true" or "false"
  SourceLoc loc;
};

class Parser {
 public:
  Parser(std::string_view text, std::string file, size_t max_constant_bytes = SIZE_MAX)
      : text_(text), file_(std::move(file)), constant_budget_(max_constant_bytes) {}

  Result<Graph> parse_file();
  Result<Type> parse_type_only();

 private:
  // ---- cursor -------------------------------------------------------------------------
  char cur() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  char peek_at(size_t k) const { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; }
  void advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i) {
      if (text_[pos_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
      ++pos_;
    }
  }
  SourceLoc loc() const { return SourceLoc{file_, line_, col_}; }
  Status error(const std::string& message) const { return Status::error_at(loc(), message); }
  static Status error_at(const SourceLoc& l, const std::string& message) {
    return Status::error_at(l, message);
  }
  std::string describe_here() const {
    if (pos_ >= text_.size()) return "end of input";
    size_t end = pos_;
    while (end < text_.size() && end - pos_ < 20 && text_[end] != '\n' && text_[end] != ' ') ++end;
    return "'" + std::string(text_.substr(pos_, std::max<size_t>(1, end - pos_))) + "'";
  }

  void skip_ws() {
    for (;;) {
      const char c = cur();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && peek_at(1) == '/') {
        while (cur() != '\n' && cur() != '\0') advance();
      } else {
        return;
      }
    }
  }
  bool at(char c) {
    skip_ws();
    return cur() == c;
  }
  bool consume(char c) {
    if (!at(c)) return false;
    advance();
    return true;
  }
  bool consume_str(std::string_view s) {
    skip_ws();
    if (text_.substr(pos_, s.size()) != s) return false;
    advance(s.size());
    return true;
  }
  Status expect(char c, const char* context) {
    if (consume(c)) return Status::ok();
    return error(std::string("expected '") + c + "' " + context + ", found " + describe_here());
  }
  Status expect_str(std::string_view s, const char* context) {
    if (consume_str(s)) return Status::ok();
    return error("expected '" + std::string(s) + "' " + context + ", found " + describe_here());
  }
  // A bare identifier ([a-zA-Z_][a-zA-Z0-9_$.]*), or "" when none starts here.
  std::string parse_ident() {
    skip_ws();
    if (!is_ident_start(cur())) return "";
    const size_t start = pos_;
    while (is_ident_char(cur())) advance();
    return std::string(text_.substr(start, pos_ - start));
  }
  bool consume_keyword(std::string_view kw) {
    skip_ws();
    if (text_.substr(pos_, kw.size()) != kw || is_ident_char(peek_at(kw.size()))) return false;
    advance(kw.size());
    return true;
  }

  Result<std::string> parse_string_lit();
  Result<NumberLit> parse_number();
  Result<int64_t> parse_int(const char* what);
  Result<double> parse_float(const char* what, FloatKind kind);
  Result<std::string> parse_ssa_name();

  // ---- types --------------------------------------------------------------------------
  Result<Type> parse_type();
  Result<ElementType> parse_element_type();
  Result<ElementType> parse_quant_type();
  /// The sub-channel form after `:{`: block sizes, then the nested scale tensor.
  Result<ElementType> parse_sub_channel_rest(const QuantStorage& storage, FloatKind expressed);
  /// One `scale[:zero_point]` of a per-axis or sub-channel list, appended to both (zero point 0
  /// when absent).
  Status parse_scale_zero_point(std::vector<double>& scales, std::vector<int64_t>& zps);
  /// One brace level of a sub-channel scale tensor (its '{' consumed).
  Status parse_quant_param_list(std::vector<double>& scales, std::vector<int64_t>& zps, std::vector<int64_t>& dims,
                                int depth);
  Result<QuantStorage> parse_storage();
  Result<FloatKind> parse_float_kind(const char* what);
  Result<std::vector<Type>> parse_type_list_parens();

  // ---- attributes ---------------------------------------------------------------------
  Result<Attribute> parse_attribute();
  Result<DenseLit> parse_dense_lit();
  Result<DenseElements> build_dense(const DenseLit& lit, const std::string& hex,
                                    const Type& type, const SourceLoc& loc);
  Status parse_attr_dict(std::vector<std::pair<std::string, Attribute>>& out);
  /// The module's attribute dictionary: `qrt.numerics` sets g.numerics; anything else is refused.
  Status parse_module_attributes(Graph& g);

  // ---- graph --------------------------------------------------------------------------
  Status parse_func(Graph& g);
  Status parse_op(Graph& g);
  Status parse_return(Graph& g, const SourceLoc& op_loc, bool generic);
  Result<int> lookup_value(const std::string& name, const SourceLoc& l) const;
  Status define_value(Graph& g, int value, const std::string& name, const SourceLoc& l);

  // ---- nesting ---------------------------------------------------------------------------
  /// Levels of brackets a dense literal or an array attribute may nest: deeper text is refused
  /// instead of recursed into, so hostile input cannot exhaust the stack.
  static constexpr int kMaxNesting = 64;
  /// Holds one level of nesting for its scope (see enter_nesting).
  class NestingScope {
   public:
    explicit NestingScope(int* depth) : depth_(depth) {}
    NestingScope(NestingScope&& other) noexcept : depth_(std::exchange(other.depth_, nullptr)) {}
    NestingScope(const NestingScope&) = delete;
    NestingScope& operator=(const NestingScope&) = delete;
    NestingScope& operator=(NestingScope&&) = delete;
    ~NestingScope() {
      if (depth_) --*depth_;
    }

   private:
    int* depth_;
  };
  /// One level deeper at `l` for `what`, or an error naming the limit.
  Result<NestingScope> enter_nesting(const SourceLoc& l, const char* what) {
    if (nesting_ >= kMaxNesting) {
      return error_at(l, std::string(what) + " nests deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    ++nesting_;
    return NestingScope(&nesting_);
  }

  std::string_view text_;
  std::string file_;
  int nesting_ = 0;
  size_t constant_budget_;      // bytes the dense constants may still claim
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  std::map<std::string, int> names_;
  std::vector<Type> func_results_;
  bool returned_ = false;
};

Result<int64_t> integer_value(const NumberLit& n, const char* what);
Result<double> float_value(const NumberLit& n, FloatKind kind, const char* what);

}  // namespace qrt::text_detail
