// qrt — import-time constant folding of ONNX shape sub-graphs: Shape, Size, ConstantOfShape,
// Range, and Gather / Concat / Unsqueeze / Squeeze / Reshape / Slice / Cast / integer
// arithmetic / comparisons / Not / Where on constants. Exporters compute reshape targets this
// way (Shape -> Gather -> Unsqueeze -> Concat -> Reshape); folding them gives qrt the static
// shapes its types carry. Results are integer (or i1) tensors, or small float casts.
#include <algorithm>
#include <cstring>
#include <limits>

#include <onnx/onnx_pb.h>

#include "importers/onnx_importer_impl.h"
#include "importers/onnx_tensors.h"
#include "ir/float_format.h"
#include "ir/ops.h"

namespace qrt::importers::onnx_detail {

namespace {

// The most elements a folded result may have: folding is for shape arithmetic and small
// masks, and the sizes come from the file, so each result's count is checked before anything
// is allocated for it.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 20;

// The element count of `dims` when every extent lies in [0, 2^48] (a qrt type's) and the
// count is at most kMaxFoldedElements; -1 otherwise (also when the count overflows).
int64_t foldable_count(const std::vector<int64_t>& dims) {
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0 || d > kMaxTensorElements; })) return -1;
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d == 0; })) return 0;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (n > kMaxFoldedElements / d) return -1;
    n *= d;
  }
  return n;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

DenseElements zeros(const Type& t) {
  DenseElements d;
  d.type = t;
  d.bytes.assign(dense_byte_size(t), 0);
  return d;
}

void put_int(DenseElements& d, size_t i, int64_t v) { d.set_int(i, v); }  // packs 2-4-bit elements

void put_float(DenseElements& d, size_t i, double v) {
  const unsigned n = element_byte_size(d.type.element);
  const uint64_t raw = float_kind_bits(v, d.type.element.float_kind);
  std::memcpy(d.bytes.data() + i * n, &raw, n);
}

DenseElements i64_vector(const std::vector<int64_t>& v) {
  DenseElements d = zeros(Type::tensor({int64_t(v.size())}, ElementType::make_int(64)));
  for (size_t i = 0; i < v.size(); ++i) put_int(d, i, v[i]);
  return d;
}

std::vector<int64_t> ints(const DenseElements& d) {
  std::vector<int64_t> v;
  for (size_t i = 0; i < size_t(d.type.num_elements()); ++i) v.push_back(d.int_at(i));
  return v;
}

// Element `i` of `d` at the broadcast position `at` of an output of shape `out`.
size_t broadcast_index(const std::vector<int64_t>& in, const std::vector<int64_t>& out, size_t flat) {
  size_t index = 0, stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    const size_t coord = flat % size_t(out[k]);
    flat /= size_t(out[k]);
    const size_t ik = k + in.size();
    if (ik < out.size()) continue;
    const size_t d = ik - out.size();
    if (in[d] != 1) index += coord * stride;
    stride *= size_t(in[d]);
  }
  return index;
}

}  // namespace

Result<bool> Importer::fold_node(const onnx::NodeProto& node, const Attrs& a) {
  const std::string& op = node.op_type();
  static const char* kFoldable[] = {"Shape", "Size", "ConstantOfShape", "Range", "Gather", "Concat", "Unsqueeze",
                                    "Squeeze", "Reshape", "Slice", "Cast", "Add", "Sub", "Mul", "Div", "Equal",
                                    "Less", "Greater", "Not", "Where", "Neg"};
  if (std::none_of(std::begin(kFoldable), std::end(kFoldable), [&](const char* f) { return op == f; })) return false;
  if (node.output_size() != 1) return false;
  // Shape and Size need only a static shape; everything else needs constant inputs.
  std::vector<const DenseElements*> in;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) {
      in.push_back(nullptr);
      continue;
    }
    const DenseElements* c = constant(node, i);
    if (!c && !(i == 0 && (op == "Shape" || op == "Size"))) return false;
    in.push_back(c);
  }
  if (in.empty()) return false;
  // The inputs read below by position must exist: a node may list fewer (a Reshape with no
  // shape read past `in`, found by fuzz_load_onnx -seed=51). The op's own import names what
  // is missing.
  size_t needed = 1;
  if (op == "Range" || op == "Where" || op == "Slice") {
    needed = 3;
  } else if (op == "Reshape" || op == "Gather" || op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
             op == "Equal" || op == "Less" || op == "Greater") {
    needed = 2;
  }
  if (in.size() < needed) return false;
  auto done = [&](DenseElements d) -> Result<bool> {
    OnnxValue v;
    v.is_const = true;
    v.dense = std::move(d);
    values_[node.output(0)] = std::move(v);
    return true;
  };
  if (op == "Shape" || op == "Size") {
    Type t;
    if (in[0]) {
      t = in[0]->type;
    } else {
      QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
      t = type(x);
    }
    if (!t.has_static_shape()) return false;  // becomes qrt.shape at run time
    if (op == "Size") {
      DenseElements d = zeros(Type::tensor({}, ElementType::make_int(64)));
      put_int(d, 0, t.num_elements());
      return done(std::move(d));
    }
    const int64_t rank = int64_t(t.rank());
    QRT_ASSIGN_OR_RETURN(int64_t start, attr_int(node, a, "start", 0));
    QRT_ASSIGN_OR_RETURN(int64_t end, attr_int(node, a, "end", rank));
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    return done(i64_vector(std::vector<int64_t>(t.dims.begin() + start, t.dims.begin() + std::max(start, end))));
  }
  const DenseElements& x = *in[0];
  const bool int_result_ops = op == "Shape" || op == "Cast" || op == "ConstantOfShape" || op == "Range" ||
                              op == "Equal" || op == "Less" || op == "Greater" || op == "Not";
  // Data-moving and arithmetic ops fold integer tensors only (float math stays a qrt op, so the
  // reference defines its rounding); the comparison and creation ops fold any input.
  if (!int_result_ops && !x.type.element.is_integer()) return false;
  if (op == "ConstantOfShape") {
    if (x.type.rank() != 1) return error(node, "its shape input has rank " + std::to_string(x.type.rank()) + ", not 1", ErrorCode::kVerify);
    const std::vector<int64_t> dims = ints(x);
    const int64_t count = foldable_count(dims);
    if (count < 0) {
      const bool negative = std::any_of(dims.begin(), dims.end(), [](int64_t e) { return e < 0; });
      const bool huge = std::any_of(dims.begin(), dims.end(), [](int64_t e) { return e > kMaxTensorElements; });
      return error(node, "shape " + dims_text(dims) +
                             (negative ? " has a negative extent"
                              : huge   ? " has an extent over qrt's limit of 2^48"
                                       : " has more than the " + std::to_string(kMaxFoldedElements) + " elements qrt folds at import"),
                   ErrorCode::kVerify);
    }
    DenseElements d = zeros(Type::tensor(dims, ElementType::make_float(FloatKind::kF32)));
    auto it = a.find("value");
    if (it != a.end()) {
      QRT_ASSIGN_OR_RETURN(DenseElements v, dense_of(it->second->t(), node.name() + " value"));
      if (v.type.num_elements() != 1) {
        return error(node, "value has " + std::to_string(v.type.num_elements()) + " elements, not 1", ErrorCode::kVerify);
      }
      d = zeros(Type::tensor(dims, v.type.element));
      if (is_nibble_packed(v.type.element)) {  // two elements per byte: no byte-wise copies
        for (size_t i = 0; i < size_t(count); ++i) d.set_int(i, v.int_at(0));
      } else {
        for (size_t i = 0; i < size_t(count); ++i) std::memcpy(d.bytes.data() + i * v.size(), v.data(), v.size());
      }
    }
    return done(std::move(d));
  }
  if (op == "Range") {
    if (!in[1] || !in[2] || !x.type.element.is_integer()) return false;
    for (size_t i = 0; i < 3; ++i) {
      if (in[i]->type.num_elements() != 1) {
        return error(node, "input " + std::to_string(i) + " has " + std::to_string(in[i]->type.num_elements()) +
                               " elements, not 1", ErrorCode::kVerify);
      }
    }
    const int64_t start = x.int_at(0), limit = in[1]->int_at(0), delta = in[2]->int_at(0);
    if (delta == 0) return error(node, "delta is 0", ErrorCode::kVerify);
    // ceil((limit - start) / delta) elements, in 128 bits: the operands come from the file.
    const __int128 span = __int128(limit) - __int128(start);
    const __int128 count = span == 0 || (span > 0) != (delta > 0) ? 0 : (span + delta + (delta > 0 ? -1 : 1)) / delta;
    if (count > kMaxFoldedElements) {
      return error(node, "Range(" + std::to_string(start) + ", " + std::to_string(limit) + ", " + std::to_string(delta) +
                             ") has more than the " + std::to_string(kMaxFoldedElements) + " elements qrt folds at import",
                   ErrorCode::kVerify);
    }
    std::vector<int64_t> v(static_cast<size_t>(count));
    for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(__int128(start) + __int128(i) * delta);
    DenseElements d = i64_vector(v);
    d.type.element = x.type.element;
    DenseElements typed = zeros(d.type);
    for (size_t i = 0; i < v.size(); ++i) put_int(typed, i, v[i]);
    return done(std::move(typed));
  }
  if (x.type.num_elements() > kMaxFoldedElements) return false;
  if (op == "Cast") {
    QRT_ASSIGN_OR_RETURN(int64_t to, attr_int(node, a, "to", 0));
    QRT_ASSIGN_OR_RETURN(ElementType e, element_type_of(int(to)));
    if (e.is_float() && !x.type.element.is_integer()) return false;
    DenseElements d = zeros(Type::tensor(x.type.dims, e));
    for (size_t i = 0; i < size_t(x.type.num_elements()); ++i) {
      if (e.is_float()) {
        put_float(d, i, double(x.int_at(i)));
      } else if (x.type.element.is_float()) {
        const double v = x.float_at(i);
        put_int(d, i, e.int_width == 1 ? int64_t(v != 0.0) : int64_t(v));
      } else {
        put_int(d, i, e.int_width == 1 ? int64_t(x.int_at(i) != 0) : x.int_at(i));
      }
    }
    return done(std::move(d));
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape") {
    std::vector<int64_t> dims;
    if (op == "Reshape") {
      if (!in[1]) return false;
      const std::vector<int64_t> shape = ints(*in[1]);
      int64_t known = 1;
      for (size_t i = 0; i < shape.size(); ++i) {
        dims.push_back(shape[i] == 0 && i < x.type.rank() ? x.type.dims[i] : shape[i]);
        // A product past the input's count cannot match it: the op's own import reports it.
        if (dims.back() >= 0 && __builtin_mul_overflow(known, dims.back(), &known)) return false;
      }
      for (int64_t& d : dims) {
        if (d < 0) d = known == 0 ? 0 : x.type.num_elements() / known;
      }
    } else {
      std::vector<int64_t> axes;
      if (opset_ >= 13) {
        if (in.size() > 1 && in[1]) axes = ints(*in[1]);
      } else {
        QRT_ASSIGN_OR_RETURN(axes, attr_ints(node, a, "axes", {}));
      }
      const int64_t out_rank = int64_t(x.type.rank()) + (op == "Unsqueeze" ? int64_t(axes.size()) : 0);
      std::vector<bool> marked(size_t(op == "Unsqueeze" ? out_rank : int64_t(x.type.rank())), false);
      for (int64_t ax : axes) {
        ax = ax < 0 ? ax + int64_t(marked.size()) : ax;
        if (ax < 0 || ax >= int64_t(marked.size())) return error(node, "axis out of range", ErrorCode::kVerify);
        // (Unsqueeze would otherwise take more dimensions from the input than it has.)
        if (marked[size_t(ax)]) return error(node, "axis " + std::to_string(ax) + " is listed twice", ErrorCode::kVerify);
        marked[size_t(ax)] = true;
      }
      size_t next = 0;
      for (size_t d = 0; d < marked.size(); ++d) {
        if (op == "Unsqueeze") {
          dims.push_back(marked[d] ? 1 : x.type.dims[next++]);
        } else if (!(axes.empty() ? x.type.dims[d] == 1 : bool(marked[d]))) {
          dims.push_back(x.type.dims[d]);
        }
      }
    }
    if (foldable_count(dims) != x.type.num_elements()) return false;  // the op's own import reports the error
    DenseElements d = x;
    d.type.dims = dims;
    return done(std::move(d));
  }
  if (op == "Gather") {
    // Slices move as bytes: 2-4-bit elements, packed two per byte, are left to the qrt op.
    if (!in[1] || !in[1]->type.element.is_integer() || is_nibble_packed(x.type.element)) return false;
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 0));
    const auto& dd = x.type.dims;
    if (axis < 0) axis += int64_t(dd.size());
    if (axis < 0 || axis >= int64_t(dd.size())) return error(node, "axis out of range", ErrorCode::kVerify);
    std::vector<int64_t> dims(dd.begin(), dd.begin() + axis);
    dims.insert(dims.end(), in[1]->type.dims.begin(), in[1]->type.dims.end());
    dims.insert(dims.end(), dd.begin() + axis + 1, dd.end());
    if (foldable_count(dims) < 0) return false;  // a qrt op then, not a constant
    DenseElements d = zeros(Type::tensor(dims, x.type.element));
    size_t outer = 1, inner = element_byte_size(x.type.element);
    for (int64_t k = 0; k < axis; ++k) outer *= size_t(dd[size_t(k)]);
    for (size_t k = size_t(axis) + 1; k < dd.size(); ++k) inner *= size_t(dd[k]);
    const std::vector<int64_t> idx = ints(*in[1]);
    for (size_t j = 0; j < idx.size(); ++j) {
      int64_t k = idx[j];
      if (k < -dd[size_t(axis)] || k >= dd[size_t(axis)]) {
        return error(node, "index " + std::to_string(k) + " is out of range", ErrorCode::kVerify);
      }
      if (k < 0) k += dd[size_t(axis)];
      for (size_t o = 0; o < outer; ++o) {
        std::memcpy(d.bytes.data() + (o * idx.size() + j) * inner,
                    x.data() + (o * size_t(dd[size_t(axis)]) + size_t(k)) * inner, inner);
      }
    }
    return done(std::move(d));
  }
  if (op == "Concat") {
    QRT_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, a, "axis", 0));
    if (axis < 0) axis += int64_t(x.type.rank());
    if (axis != 0 || x.type.rank() != 1) return false;  // shape vectors only
    std::vector<int64_t> all;
    for (const DenseElements* c : in) {
      if (!c || c->type.rank() != 1 || !(c->type.element == x.type.element)) return false;
      const std::vector<int64_t> part = ints(*c);
      all.insert(all.end(), part.begin(), part.end());
    }
    DenseElements d = zeros(Type::tensor({int64_t(all.size())}, x.type.element));
    for (size_t i = 0; i < all.size(); ++i) put_int(d, i, all[i]);
    return done(std::move(d));
  }
  if (op == "Slice") {
    if (x.type.rank() != 1 || !in[1] || !in[2]) return false;
    // One start, end (and step) for the one axis; the op's own import reports other counts.
    for (size_t i : {size_t(1), size_t(2), size_t(4)}) {
      if (i < in.size() && in[i] && in[i]->type.num_elements() != 1) return false;
    }
    const int64_t start = in[1]->int_at(0), end = in[2]->int_at(0);
    const int64_t step = in.size() > 4 && in[4] ? in[4]->int_at(0) : 1;
    if (step == 0) return error(node, "step is 0", ErrorCode::kVerify);
    const int64_t n = slice_extent(x.type.dims[0], start, end, step);
    const int64_t first = slice_start(x.type.dims[0], start, step);
    DenseElements d = zeros(Type::tensor({n}, x.type.element));
    for (int64_t i = 0; i < n; ++i) put_int(d, size_t(i), x.int_at(size_t(first + i * step)));
    return done(std::move(d));
  }
  // Element-wise: Add Sub Mul Div Neg Equal Less Greater Not Where with broadcasting.
  const bool compare = op == "Equal" || op == "Less" || op == "Greater";
  if (!x.type.element.is_integer()) {
    if (!compare) return false;
  }
  std::vector<int64_t> dims = x.type.dims;
  for (size_t i = 1; i < in.size(); ++i) {
    if (!in[i]) return false;
    auto b = broadcast_shapes(dims, in[i]->type.dims);
    if (!b.is_ok()) return error(node, b.status().message(), ErrorCode::kVerify);
    dims = *b;
  }
  const ElementType bool_type = ElementType::make_int(1);
  const ElementType out_e = compare ? bool_type : op == "Where" ? in[1]->type.element : x.type.element;
  if (op == "Where" && !out_e.is_integer()) return false;
  if (foldable_count(dims) < 0) return false;  // a qrt op then, not a constant
  DenseElements d = zeros(Type::tensor(dims, out_e));
  for (size_t i = 0; i < size_t(d.type.num_elements()); ++i) {
    auto at = [&](size_t k) { return broadcast_index(in[k]->type.dims, dims, i); };
    int64_t v = 0;
    if (op == "Neg") {
      v = -x.int_at(at(0));
    } else if (op == "Not") {
      v = x.int_at(at(0)) == 0;
    } else if (op == "Where") {
      v = x.int_at(at(0)) != 0 ? in[1]->int_at(at(1)) : in[2]->int_at(at(2));
    } else if (compare && x.type.element.is_float()) {
      const double p = x.float_at(at(0)), q = in[1]->float_at(at(1));
      v = op == "Equal" ? p == q : op == "Less" ? p < q : p > q;
    } else {
      const int64_t p = x.int_at(at(0)), q = in[1]->int_at(at(1));
      if (op == "Add") v = p + q;
      if (op == "Sub") v = p - q;
      if (op == "Mul") v = p * q;
      if (op == "Div") {
        if (q == 0) return error(node, "integer division by zero", ErrorCode::kVerify);
        v = p / q;
      }
      if (compare) v = op == "Equal" ? p == q : op == "Less" ? p < q : p > q;
    }
    put_int(d, i, v);
  }
  return done(std::move(d));
}

}  // namespace qrt::importers::onnx_detail
