// qrt — ONNX Einsum as qrt's own ops. Each operand's labels that no other operand and not the
// output use are summed away (qrt.reduce_sum); the operands are then contracted pairwise, left
// to right, each pair as one batched qrt.matmul between transposes and reshapes
// ([batch, free, contracted] x [batch, contracted, free]); the last result's leftover labels
// are summed and its dimensions transposed to the output's order. So "bhid,bhjd->bhij" is one
// transpose and one matmul, as a hand-written attention would be.
// Ellipses stand for the same dimensions in every operand, right-aligned as numpy aligns them
// (an operand with fewer of them simply lacks the leading ones). Before the contraction each
// operand is made to have every label once: a dimension of size 1 where another operand has
// the label larger is broadcast, as numpy broadcasts it, so the operand is reshaped to lack it
// (its values do not depend on that label); a label repeated within an operand takes its
// diagonal, the repeated dimensions moved last, merged into one of n^r and sliced with step
// 1 + n + ... + n^(r-1). Refused, with the reason: sizes that differ otherwise, dynamic sizes,
// and non-float operands.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "importers/onnx_importer_impl.h"

namespace qrt::importers::onnx_detail {

namespace {

/// One operand or intermediate result of the contraction: its value and one label per dimension.
struct Term {
  int value = -1;
  std::string labels;
};

/// The equation with each ellipsis expanded to digit labels ('0' is the first of the widest
/// ellipsis' dimensions), and the output labels (numpy's implicit output when there is no "->").
struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Splits `s` at `sep`.
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep) parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

// "ab...c" with its ellipsis (if any) replaced by the last `width` of `wide` digit labels.
std::string expand(const std::string& term, size_t width, size_t wide) {
  const size_t at = term.find("...");
  if (at == std::string::npos) return term;
  std::string digits;
  for (size_t i = wide - width; i < wide; ++i) digits += char('0' + i);
  return term.substr(0, at) + digits + term.substr(at + 3);
}

// Parses `text` for operands of `ranks`; an error message on failure.
Result<Equation> parse_equation(const std::string& text, const std::vector<size_t>& ranks) {
  std::string eq;
  for (char c : text) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms = split(lhs, ',');
  if (terms.size() != ranks.size()) {
    return Status::error("equation '" + text + "' names " + std::to_string(terms.size()) + " operands, the node has " +
                         std::to_string(ranks.size()));
  }
  // Each term: letters and at most one ellipsis; the ellipsis' width is the rank left over.
  size_t wide = 0;
  std::vector<size_t> widths(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string& t = terms[i];
    const size_t dots = t.find("...");
    const std::string letters = dots == std::string::npos ? t : t.substr(0, dots) + t.substr(dots + 3);
    if (!std::all_of(letters.begin(), letters.end(), is_letter) || (dots != std::string::npos && t.find("...", dots + 3) != std::string::npos)) {
      return Status::error("equation '" + text + "': term '" + t + "' must be letters and at most one '...'");
    }
    if (letters.size() > ranks[i] || (dots == std::string::npos && letters.size() != ranks[i])) {
      return Status::error("equation '" + text + "': term '" + t + "' does not fit operand " + std::to_string(i) + " of rank " +
                           std::to_string(ranks[i]));
    }
    widths[i] = ranks[i] - letters.size();
    wide = std::max(wide, widths[i]);
  }
  if (wide > 10) return Status::error("equation '" + text + "': an ellipsis of more than 10 dimensions");
  Equation e;
  for (size_t i = 0; i < terms.size(); ++i) e.inputs.push_back(expand(terms[i], widths[i], wide));
  if (arrow == std::string::npos) {
    // numpy's implicit output: the ellipsis' dimensions, then the letters used once, sorted.
    std::map<char, int> uses;
    for (const std::string& t : e.inputs) {
      for (char c : t) ++uses[c];
    }
    for (size_t i = 0; i < wide; ++i) e.output += char('0' + i);
    for (const auto& [c, n] : uses) {
      if (is_letter(c) && n == 1) e.output += c;
    }
    return e;
  }
  const std::string rhs = eq.substr(arrow + 2);
  const size_t dots = rhs.find("...");
  const std::string letters = dots == std::string::npos ? rhs : rhs.substr(0, dots) + rhs.substr(dots + 3);
  if (!std::all_of(letters.begin(), letters.end(), is_letter) || (dots != std::string::npos && rhs.find("...", dots + 3) != std::string::npos)) {
    return Status::error("equation '" + text + "': output '" + rhs + "' must be letters and at most one '...'");
  }
  // An output without the ellipsis sums its dimensions, as numpy does.
  e.output = expand(rhs, wide, wide);
  for (size_t i = 0; i < e.output.size(); ++i) {
    const char c = e.output[i];
    if (e.output.find(c, i + 1) != std::string::npos) {
      return Status::error("equation '" + text + "': output label '" + std::string(1, c) + "' appears twice");
    }
    if (std::none_of(e.inputs.begin(), e.inputs.end(), [&](const std::string& t) { return t.find(c) != std::string::npos; })) {
      return Status::error("equation '" + text + "': output label '" + std::string(1, c) + "' names no operand's dimension");
    }
  }
  return e;
}

}  // namespace

Status Importer::einsum(const onnx::NodeProto& node, const Attrs& a) {
  QRT_ASSIGN_OR_RETURN(std::string text, attr_string(node, a, "equation", ""));
  if (node.input_size() < 1) return error(node, "needs at least one operand", ErrorCode::kVerify);
  std::vector<Term> terms;
  std::vector<size_t> ranks;
  ElementType element;
  for (int i = 0; i < node.input_size(); ++i) {
    QRT_ASSIGN_OR_RETURN(int v, value(node, i));
    const Type t = type(v);
    if (!t.element.is_float() || (i > 0 && !(t.element == element))) {
      return error(node, "operands must share one float element type, got " + t.to_string() + " as operand " + std::to_string(i));
    }
    element = t.element;
    terms.push_back({v, ""});
    ranks.push_back(t.rank());
  }
  auto parsed = parse_equation(text, ranks);
  if (!parsed.is_ok()) return error(node, parsed.status().message(), ErrorCode::kVerify);
  const Equation& eq = *parsed;

  // Every label's size: static, the same wherever the label is larger than 1, and the same
  // for the copies of a label within one operand.
  std::map<char, int64_t> size;
  auto label_name = [](char c) {
    return c >= '0' && c <= '9' ? "ellipsis dimension " + std::string(1, c) : "label '" + std::string(1, c) + "'";
  };
  for (size_t i = 0; i < terms.size(); ++i) {
    terms[i].labels = eq.inputs[i];
    const Type t = type(terms[i].value);
    for (size_t d = 0; d < t.rank(); ++d) {
      const char c = eq.inputs[i][d];
      if (t.dims[d] < 0) return error(node, "needs static sizes, got " + t.to_string() + " for operand " + std::to_string(i));
      const size_t first = eq.inputs[i].find(c);
      if (first != d && t.dims[first] != t.dims[d]) {
        return error(node, label_name(c) + " repeats in term '" + eq.inputs[i] + "' with sizes " + std::to_string(t.dims[first]) +
                               " and " + std::to_string(t.dims[d]) + ": a diagonal must be square", ErrorCode::kVerify);
      }
      auto [it, fresh] = size.emplace(c, t.dims[d]);
      if (!fresh && it->second != t.dims[d] && it->second != 1 && t.dims[d] != 1) {
        return error(node, label_name(c) + " has size " + std::to_string(it->second) + " and " + std::to_string(t.dims[d]) +
                               ", which do not broadcast", ErrorCode::kVerify);
      }
      it->second = std::max(it->second, t.dims[d]);
    }
  }
  auto dims_of = [&](const std::string& labels) {
    std::vector<int64_t> dims;
    for (char c : labels) dims.push_back(size.at(c));
    return dims;
  };
  auto product = [&](const std::string& labels) {
    int64_t n = 1;
    for (char c : labels) n *= size.at(c);
    return n;
  };
  // Sums the labels of `t` that are not in `needed`.
  auto sum_unneeded = [&](Term t, const std::string& needed) {
    std::vector<int64_t> axes;
    std::string kept;
    for (size_t d = 0; d < t.labels.size(); ++d) {
      if (needed.find(t.labels[d]) == std::string::npos) axes.push_back(int64_t(d));
      else kept += t.labels[d];
    }
    if (axes.empty()) return t;
    t.value = emit(OpKind::kReduceSum, {t.value}, Type::tensor(dims_of(kept), element),
                   {{"axes", Attribute::make_int_array(axes)}, {"keepdims", Attribute::make_int(0)}});
    t.labels = kept;
    return t;
  };
  // `t` with its dimensions in the order of `labels` (a permutation of its own).
  auto permute = [&](Term t, const std::string& labels) {
    if (t.labels == labels) return t;
    std::vector<int64_t> perm;
    for (char c : labels) perm.push_back(int64_t(t.labels.find(c)));
    t.value = emit(OpKind::kTranspose, {t.value}, Type::tensor(dims_of(labels), element), {{"perm", Attribute::make_int_array(perm)}});
    t.labels = labels;
    return t;
  };
  auto reshape = [&](int v, const std::vector<int64_t>& dims) {
    return type(v).dims == dims ? v : emit(OpKind::kReshape, {v}, Type::tensor(dims, element));
  };

  // Each operand with every label once: broadcast dimensions dropped, diagonals taken.
  for (Term& t : terms) {
    std::string kept;
    std::vector<int64_t> kept_dims;
    const std::vector<int64_t> dims = type(t.value).dims;
    for (size_t d = 0; d < t.labels.size(); ++d) {
      if (dims[d] == size.at(t.labels[d])) kept += t.labels[d], kept_dims.push_back(dims[d]);
    }
    if (kept.size() < t.labels.size()) t.value = reshape(t.value, kept_dims);
    t.labels = kept;
    const std::string labels = t.labels;
    for (char c : labels) {
      const int64_t copies = std::count(t.labels.begin(), t.labels.end(), c);
      if (copies < 2) continue;
      // The other labels in their order, then the copies of c, merged into one dimension.
      std::vector<int64_t> perm;
      std::string rest;
      for (size_t e = 0; e < t.labels.size(); ++e) {
        if (t.labels[e] != c) perm.push_back(int64_t(e)), rest += t.labels[e];
      }
      for (size_t e = 0; e < t.labels.size(); ++e) {
        if (t.labels[e] == c) perm.push_back(int64_t(e));
      }
      const int64_t n = size.at(c);
      std::vector<int64_t> moved = dims_of(rest), merged = dims_of(rest);
      int64_t span = 1, step = 0;  // n^copies, and 1 + n + ... + n^(copies-1)
      for (int64_t r = 0; r < copies; ++r) step += span, span *= n, moved.push_back(n);
      merged.push_back(span);
      int v = t.value;
      if (!std::is_sorted(perm.begin(), perm.end())) {
        v = emit(OpKind::kTranspose, {v}, Type::tensor(moved, element), {{"perm", Attribute::make_int_array(perm)}});
      }
      v = reshape(v, merged);
      t.value = n > 1 ? slice_axis(v, rest.size(), 0, span, step) : v;
      t.labels = rest + c;
    }
  }

  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    // The labels still needed after this step: the output's and the operands' to come.
    std::string later = eq.output;
    for (size_t j = i + 1; j < terms.size(); ++j) later += terms[j].labels;
    Term b = terms[i];
    acc = sum_unneeded(acc, later + b.labels);
    b = sum_unneeded(b, later + acc.labels);
    std::string batch, contracted, a_free, b_free;
    for (char c : acc.labels) {
      const bool shared = b.labels.find(c) != std::string::npos, kept = later.find(c) != std::string::npos;
      (shared ? (kept ? batch : contracted) : a_free) += c;
    }
    for (char c : b.labels) {
      if (acc.labels.find(c) == std::string::npos) b_free += c;
    }
    // [batch, m, k] x [batch, k, n], or a plain [m, k] x [k, n] without batch labels.
    const int64_t nb = product(batch), m = product(a_free), k = product(contracted), n = product(b_free);
    auto shaped = [&](int64_t r, int64_t c) { return batch.empty() ? std::vector<int64_t>{r, c} : std::vector<int64_t>{nb, r, c}; };
    const int lhs = reshape(permute(acc, batch + a_free + contracted).value, shaped(m, k));
    const int rhs = reshape(permute(b, batch + contracted + b_free).value, shaped(k, n));
    const int y = emit(OpKind::kMatmul, {lhs, rhs}, Type::tensor(shaped(m, n), element));
    acc.labels = batch + a_free + b_free;
    acc.value = reshape(y, dims_of(acc.labels));
  }
  bind(node, 0, permute(sum_unneeded(acc, eq.output), eq.output).value);
  return Status::ok();
}

}  // namespace qrt::importers::onnx_detail
