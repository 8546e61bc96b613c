// qrt — the .qrt binary container (see binary_format.h and docs/formats.md).
#include "ir/binary_format.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "ir/float_format.h"
#include "ir/ops.h"
#include "ir/text_format.h"
#include "ir/qrt_format_generated.h"

namespace qrt {

namespace {

constexpr size_t kAlign = 64;

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// The FlatBuffers verifier checks a vector's length prefix, not the alignment of 8-byte
// elements; a damaged offset could leave them misaligned, so the reader checks before reading.
template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* v) {
  return !v || v->size() == 0 || reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) == 0;
}

// ---- writing -----------------------------------------------------------------------------

class Writer {
 public:
  explicit Writer(const std::vector<uint64_t>& blob_offsets) : blob_offsets_(blob_offsets) {}

  std::string build(const Graph& g, const std::string& producer, std::vector<const DenseElements*>& blobs) {
    blobs_ = &blobs;
    blobs.clear();
    std::vector<flatbuffers::Offset<fb::Value>> values;
    for (const Value& v : g.values) values.push_back(fb::CreateValue(b_, tensor_type(v.type), b_.CreateString(v.name)));
    std::vector<flatbuffers::Offset<fb::Op>> ops;
    for (const Op& op : g.ops) {
      std::vector<flatbuffers::Offset<fb::Attribute>> attrs;
      for (const auto& [name, a] : op.attrs) attrs.push_back(attribute(name, a));
      ops.push_back(fb::CreateOp(b_, b_.CreateString(op_info(op.kind).name), indices(op.operands), indices(op.results),
                                 b_.CreateVector(attrs)));
    }
    std::vector<fb::Blob> blob_structs;
    for (size_t i = 0; i < blobs.size(); ++i) {
      blob_structs.emplace_back(i < blob_offsets_.size() ? blob_offsets_[i] : 0, blobs[i]->size());
    }
    // Version 3 only where it says more than version 2 can (a profile other than the default).
    const bool profiled = g.numerics != NumericsProfile::kDefault;
    auto root = fb::CreateGraph(b_, profiled ? kBinaryFormatVersion : 2, b_.CreateString(producer),
                                b_.CreateString(g.name), b_.CreateVector(values), b_.CreateVector(ops),
                                indices(g.inputs), indices(g.outputs), b_.CreateVectorOfStructs(blob_structs),
                                profiled ? b_.CreateString(numerics_profile_name(g.numerics)) : 0);
    fb::FinishGraphBuffer(b_, root);
    return std::string(reinterpret_cast<const char*>(b_.GetBufferPointer()), b_.GetSize());
  }

 private:
  flatbuffers::Offset<flatbuffers::Vector<uint32_t>> indices(const std::vector<int>& v) {
    std::vector<uint32_t> u(v.begin(), v.end());
    return b_.CreateVector(u);
  }
  flatbuffers::Offset<fb::ElementType> element(const ElementType& e) {
    return fb::CreateElementType(b_, uint8_t(e.kind), uint8_t(e.float_kind), e.has_expressed, e.int_width,
                                 uint8_t(e.int_sign), e.storage.width, e.storage.is_signed, e.storage.min,
                                 e.storage.max, e.axis, b_.CreateVector(e.scales), b_.CreateVector(e.zero_points),
                                 e.cal_min, e.cal_max, e.is_sub_channel() ? b_.CreateVector(e.block_axes) : 0,
                                 e.is_sub_channel() ? b_.CreateVector(e.block_sizes) : 0,
                                 e.is_sub_channel() ? b_.CreateVector(e.param_dims) : 0);
  }
  flatbuffers::Offset<fb::TensorType> tensor_type(const Type& t) {
    return fb::CreateTensorType(b_, t.is_tensor, b_.CreateVector(t.dims), element(t.element));
  }
  flatbuffers::Offset<fb::Attribute> attribute(const std::string& name, const Attribute& a) {
    std::vector<flatbuffers::Offset<fb::Attribute>> array;
    for (const Attribute& e : a.array) array.push_back(attribute("", e));
    flatbuffers::Offset<fb::TensorType> dense_type = 0;
    uint32_t blob = 0;
    if (a.kind == Attribute::Kind::kDense) {
      dense_type = tensor_type(a.dense.type);
      blob = uint32_t(blobs_->size());
      blobs_->push_back(&a.dense);
    }
    const bool scalar = a.kind == Attribute::Kind::kInt || a.kind == Attribute::Kind::kFloat;
    return fb::CreateAttribute(b_, name.empty() ? 0 : b_.CreateString(name), uint8_t(a.kind), a.b, a.i, a.f,
                               scalar ? element(a.scalar_type) : 0, a.s.empty() ? 0 : b_.CreateString(a.s),
                               array.empty() ? 0 : b_.CreateVector(array), dense_type, blob);
  }

  flatbuffers::FlatBufferBuilder b_;
  const std::vector<uint64_t>& blob_offsets_;
  std::vector<const DenseElements*>* blobs_ = nullptr;
};

// ---- reading -----------------------------------------------------------------------------

class Reader {
 public:
  Reader(std::shared_ptr<const void> owner, const uint8_t* data, size_t size)
      : owner_(std::move(owner)), data_(data), size_(size) {}

  Result<Graph> read(const fb::Graph* root) {
    root_ = root;
    version_ = root->format_version();
    Graph g;
    if (root->name()) g.name = root->name()->str();
    if (g.name.empty()) g.name = "main";
    // The text form prints the name as a bare identifier.
    if (!is_bare_identifier(g.name) || g.name.size() > 256) {
      std::string shown;
      for (char c : g.name.substr(0, 64)) shown += std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : "?";
      return bad("the function name '" + shown + "' is not an identifier ([A-Za-z_][A-Za-z0-9_$.]*, at most 256 characters)");
    }
    if (root->numerics()) {
      const std::optional<NumericsProfile> profile = parse_numerics_profile(root->numerics()->string_view());
      if (!profile || version_ < 3) {
        std::string shown;
        for (char c : root->numerics()->str().substr(0, 64)) {
          shown += std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : "?";
        }
        return bad(!profile ? "the numerics profile '" + shown + "' is unknown (profiles: " +
                                  numerics_profile_names() + ")"
                            : "a numerics profile in a version " + std::to_string(version_) +
                                  " file (profiles came with version 3)");
      }
      g.numerics = *profile;
    }
    const size_t n_values = root->values() ? root->values()->size() : 0;
    for (size_t i = 0; i < n_values; ++i) {
      const fb::Value* v = root->values()->Get(flatbuffers::uoffset_t(i));
      if (!v->type()) return bad("value " + std::to_string(i) + " has no type");
      Value value;
      QRT_ASSIGN_OR_RETURN(value.type, tensor_type(v->type(), "value " + std::to_string(i)));
      if (v->name()) value.name = v->name()->str();
      g.values.push_back(std::move(value));
    }
    auto index = [&](uint32_t i, const std::string& what) -> Result<int> {
      if (i >= n_values) return bad(what + " refers to value " + std::to_string(i) + " of " + std::to_string(n_values));
      return int(i);
    };
    for (size_t k = 0; root->ops() && k < root->ops()->size(); ++k) {
      const fb::Op* o = root->ops()->Get(flatbuffers::uoffset_t(k));
      const std::string where = "op " + std::to_string(k);
      const OpInfo* info = o->name() ? find_op(o->name()->string_view()) : nullptr;
      if (!info) {
        return Status::error(where + " is '" + (o->name() ? o->name()->str() : std::string()) +
                             "', which this qrt does not know (a newer producer?)").with_code(ErrorCode::kUnsupported);
      }
      Op op;
      op.kind = info->kind;
      for (size_t i = 0; o->operands() && i < o->operands()->size(); ++i) {
        QRT_ASSIGN_OR_RETURN(int v, index(o->operands()->Get(flatbuffers::uoffset_t(i)), where));
        op.operands.push_back(v);
      }
      for (size_t i = 0; o->results() && i < o->results()->size(); ++i) {
        QRT_ASSIGN_OR_RETURN(int v, index(o->results()->Get(flatbuffers::uoffset_t(i)), where));
        if (g.values[size_t(v)].producer >= 0) return bad("value " + std::to_string(v) + " is produced twice");
        g.values[size_t(v)].producer = int(k);
        op.results.push_back(v);
      }
      for (size_t i = 0; o->attributes() && i < o->attributes()->size(); ++i) {
        const fb::Attribute* a = o->attributes()->Get(flatbuffers::uoffset_t(i));
        if (!a->name()) return bad(where + " has an attribute without a name");
        QRT_ASSIGN_OR_RETURN(Attribute attr, attribute(a, where));
        op.set_attr(a->name()->str(), std::move(attr));
      }
      g.ops.push_back(std::move(op));
    }
    for (size_t i = 0; root->inputs() && i < root->inputs()->size(); ++i) {
      QRT_ASSIGN_OR_RETURN(int v, index(root->inputs()->Get(flatbuffers::uoffset_t(i)), "input list"));
      if (g.values[size_t(v)].producer >= 0) return bad("input " + std::to_string(i) + " is also an op result");
      // One value, two arguments: the text form would define its name twice.
      if (const auto at = std::find(g.inputs.begin(), g.inputs.end(), v); at != g.inputs.end()) {
        return bad("input " + std::to_string(i) + " repeats value " + std::to_string(v) + " (input " +
                   std::to_string(at - g.inputs.begin()) + ")");
      }
      g.inputs.push_back(v);
    }
    for (size_t i = 0; root->outputs() && i < root->outputs()->size(); ++i) {
      QRT_ASSIGN_OR_RETURN(int v, index(root->outputs()->Get(flatbuffers::uoffset_t(i)), "output list"));
      g.outputs.push_back(v);
    }
    std::vector<bool> is_input(n_values, false);
    for (int v : g.inputs) is_input[size_t(v)] = true;
    for (size_t v = 0; v < n_values; ++v) {
      if (g.values[v].producer < 0 && !is_input[v]) {
        return bad("value " + std::to_string(v) + " is neither an input nor an op result");
      }
    }
    Status verified = verify_graph(g);
    if (!verified.is_ok()) return bad("the graph does not verify: " + verified.message());
    return g;
  }

 private:
  static Status bad(const std::string& message) { return Status::error(message).with_code(ErrorCode::kParse); }

  Result<ElementType> element(const fb::ElementType* e, const std::string& what) {
    if (!e) return bad(what + " has no element type");
    if (!elements_aligned(e->scales()) || !elements_aligned(e->zero_points()) || !elements_aligned(e->block_axes()) ||
        !elements_aligned(e->block_sizes()) || !elements_aligned(e->param_dims())) {
      return bad(what + " has misaligned scale or zero-point data");
    }
    if (e->kind() > uint8_t(ElementKind::kUniformSubChannel) || e->float_kind() > uint8_t(kLastFloatKind) ||
        e->int_sign() > uint8_t(Signedness::kUnsigned)) {
      return bad(what + " has an invalid element type code");
    }
    ElementType t;
    t.kind = ElementKind(e->kind());
    t.float_kind = FloatKind(e->float_kind());
    t.has_expressed = e->has_expressed();
    t.int_width = e->int_width();
    t.int_sign = Signedness(e->int_sign());
    t.storage.width = e->storage_width();
    t.storage.is_signed = e->storage_signed();
    t.storage.min = e->storage_min();
    t.storage.max = e->storage_max();
    t.axis = e->axis();
    t.cal_min = e->cal_min();
    t.cal_max = e->cal_max();
    if (e->scales()) t.scales.assign(e->scales()->begin(), e->scales()->end());
    if (e->zero_points()) t.zero_points.assign(e->zero_points()->begin(), e->zero_points()->end());
    if (e->block_axes()) t.block_axes.assign(e->block_axes()->begin(), e->block_axes()->end());
    if (e->block_sizes()) t.block_sizes.assign(e->block_sizes()->begin(), e->block_sizes()->end());
    if (e->param_dims()) t.param_dims.assign(e->param_dims()->begin(), e->param_dims()->end());
    if (t.is_sub_channel() && (t.block_axes.size() != t.block_sizes.size() || t.scales.size() != t.zero_points.size())) {
      return bad(what + " has " + std::to_string(t.block_axes.size()) + " quantized dimensions but " +
                 std::to_string(t.block_sizes.size()) + " block sizes, or " + std::to_string(t.scales.size()) +
                 " scales but " + std::to_string(t.zero_points.size()) + " zero points");
    }
    if (t.is_uniform() && (t.scales.size() != t.zero_points.size() ||
                           (t.kind == ElementKind::kUniform && t.scales.size() != 1))) {
      return bad(what + " has " + std::to_string(t.scales.size()) + " scales but " +
                 std::to_string(t.zero_points.size()) + " zero points");
    }
    if (t.is_any_uniform() || t.kind == ElementKind::kAny) {
      if (t.storage.width < 2 || t.storage.width > 32) {
        return bad(what + ": illegal storage type size " + std::to_string(t.storage.width));
      }
    }
    Status ok = t.verify();
    if (!ok.is_ok()) return bad(what + ": " + ok.message());
    // Only the fields of its kind survive: a file may carry others (the writer leaves them at
    // their defaults), and they would make two types that print alike compare unequal.
    switch (t.kind) {
      case ElementKind::kFloat: return ElementType::make_float(t.float_kind);
      case ElementKind::kInteger: return ElementType::make_int(t.int_width, t.int_sign);
      case ElementKind::kUniform:
        return ElementType::make_uniform(t.storage, t.float_kind, t.scales[0], t.zero_points[0]);
      case ElementKind::kUniformPerAxis:
        return ElementType::make_per_axis(t.storage, t.float_kind, t.axis, t.scales, t.zero_points);
      case ElementKind::kCalibrated: return ElementType::make_calibrated(t.float_kind, t.cal_min, t.cal_max);
      case ElementKind::kUniformSubChannel:
        return ElementType::make_sub_channel(t.storage, t.float_kind, t.block_axes, t.block_sizes, t.param_dims,
                                             t.scales, t.zero_points);
      case ElementKind::kAny:
        return ElementType::make_any(t.storage, t.has_expressed, t.has_expressed ? t.float_kind : ElementType{}.float_kind);
    }
    return t;
  }

  Result<Type> tensor_type(const fb::TensorType* t, const std::string& what) {
    Type type;
    if (!elements_aligned(t->dims())) return bad(what + " has misaligned dimensions");
    type.is_tensor = t->is_tensor();
    if (t->dims()) type.dims.assign(t->dims()->begin(), t->dims()->end());
    QRT_ASSIGN_OR_RETURN(type.element, element(t->element(), what));
    Status ok = type.verify();
    if (!ok.is_ok()) return bad(what + ": " + ok.message());
    return type;
  }

  Result<Attribute> attribute(const fb::Attribute* a, const std::string& where) {
    if (a->kind() > uint8_t(Attribute::Kind::kDense)) return bad(where + " has an attribute of unknown kind");
    Attribute attr;
    attr.kind = Attribute::Kind(a->kind());
    attr.b = a->b();
    attr.i = a->i();
    attr.f = a->f();
    if (a->s()) attr.s = a->s()->str();
    if (attr.kind == Attribute::Kind::kInt || attr.kind == Attribute::Kind::kFloat) {
      QRT_ASSIGN_OR_RETURN(attr.scalar_type, element(a->scalar_type(), where));
      // The text form can only say `1 : i64` and `1.5 : f32`: an integer typed as a float (or
      // the reverse) would print as the other kind and reload differently.
      const bool is_int = attr.kind == Attribute::Kind::kInt;
      if (is_int ? !attr.scalar_type.is_integer() : !attr.scalar_type.is_float()) {
        return bad(where + " has " + (is_int ? "an integer" : "a float") + " attribute of type " +
                   attr.scalar_type.to_string());
      }
      // A float attribute holds a value of its type, as the text parser makes it: a stored
      // double the type cannot represent (an f32 attribute of 1.5e-323) is rounded to it.
      if (!is_int) attr.f = round_to_float_kind(attr.f, attr.scalar_type.float_kind);
    }
    // Only the fields of its kind survive (as for element types).
    if (attr.kind != Attribute::Kind::kBool) attr.b = false;
    if (attr.kind != Attribute::Kind::kInt) attr.i = 0;
    if (attr.kind != Attribute::Kind::kFloat) attr.f = 0.0;
    if (attr.kind != Attribute::Kind::kString) attr.s.clear();
    for (size_t i = 0; attr.kind == Attribute::Kind::kArray && a->array() && i < a->array()->size(); ++i) {
      QRT_ASSIGN_OR_RETURN(Attribute e, attribute(a->array()->Get(flatbuffers::uoffset_t(i)), where));
      attr.array.push_back(std::move(e));
    }
    if (attr.kind == Attribute::Kind::kDense) {
      if (!a->dense_type()) return bad(where + " has a dense attribute without a type");
      QRT_ASSIGN_OR_RETURN(attr.dense.type, tensor_type(a->dense_type(), where));
      if (!attr.dense.type.has_static_shape()) return bad(where + " has a dense attribute of dynamic shape");
      const auto* blobs = root_->blobs();
      if (!blobs || a->dense_blob() >= blobs->size()) {
        return bad(where + " refers to weight blob " + std::to_string(a->dense_blob()) + ", which does not exist");
      }
      const fb::Blob* blob = blobs->Get(a->dense_blob());
      // Version 1 held integers of 2-4 bits one per byte; they are repacked below.
      const bool unpacked_nibbles = version_ < 2 && is_nibble_packed(attr.dense.type.element);
      const size_t need = unpacked_nibbles ? size_t(attr.dense.type.num_elements()) : dense_byte_size(attr.dense.type);
      if (blob->offset() % kAlign != 0 || blob->offset() > size_ || blob->size() > size_ - blob->offset()) {
        return bad("weight blob " + std::to_string(a->dense_blob()) + " at byte offset " +
                   std::to_string(blob->offset()) + " (" + std::to_string(blob->size()) +
                   " bytes) lies outside the " + std::to_string(size_) + "-byte file or is not 64-byte aligned");
      }
      if (blob->size() != need) {
        return bad("weight blob " + std::to_string(a->dense_blob()) + " has " + std::to_string(blob->size()) +
                   " bytes, its type " + attr.dense.type.to_string() + " needs " + std::to_string(need));
      }
      if (unpacked_nibbles) {
        DenseElements packed = DenseElements::zeros(attr.dense.type);
        for (size_t i = 0; i < need; ++i) packed.set_int(i, data_[blob->offset() + i]);
        attr.dense = std::move(packed);
        return attr;
      }
      attr.dense.view_owner = owner_;
      attr.dense.view_data = data_ + blob->offset();
      attr.dense.view_size = size_t(blob->size());
      if (const int64_t i = attr.dense.first_element_with_stray_bits(); i >= 0) {
        return bad("weight blob " + std::to_string(a->dense_blob()) + " (" + attr.dense.type.to_string() +
                   "): element " + std::to_string(i) + " at byte offset " +
                   std::to_string(blob->offset() + uint64_t(i) * element_byte_size(attr.dense.type.element)) +
                   " sets bits above the low " + std::to_string(float_kind_width(attr.dense.type.element.float_kind)) +
                   " that " + float_kind_name(attr.dense.type.element.float_kind) + " stores");
      }
    }
    return attr;
  }

  std::shared_ptr<const void> owner_;
  const uint8_t* data_;
  size_t size_;
  const fb::Graph* root_ = nullptr;
  uint32_t version_ = kBinaryFormatVersion;
};

}  // namespace

Result<std::string> write_binary_graph(const Graph& graph, const std::string& producer) {
  QRT_RETURN_IF_ERROR(verify_graph(graph));
  // Pass 1 learns the metadata size and the blob list; pass 2 writes the real offsets (the
  // flatbuffer's layout does not depend on the struct values, so its size is unchanged).
  std::vector<const DenseElements*> blobs;
  std::vector<uint64_t> offsets;
  const std::string first = Writer(offsets).build(graph, producer, blobs);
  size_t at = align_up(first.size());
  for (const DenseElements* d : blobs) {
    offsets.push_back(at);
    at = align_up(at + d->size());
  }
  std::string meta = Writer(offsets).build(graph, producer, blobs);
  QRT_ASSERT(meta.size() == first.size());
  std::string file = meta;
  for (size_t i = 0; i < blobs.size(); ++i) {
    file.resize(size_t(offsets[i]), '\0');
    file.append(reinterpret_cast<const char*>(blobs[i]->data()), blobs[i]->size());
  }
  file.resize(align_up(file.size()), '\0');
  return file;
}

bool looks_like_binary_graph(const void* data, size_t size) {
  return size >= 8 && std::memcmp(static_cast<const char*>(data) + 4, "QRTB", 4) == 0;
}

Result<Graph> read_binary_graph(std::shared_ptr<const void> owner, const uint8_t* data, size_t size,
                                const std::string& name) {
  const SourceLoc file{name, 0, 0};
  auto fail = [&](const Status& s) { return s.with_loc(file); };
  if (!looks_like_binary_graph(data, size)) {
    return fail(Status::error("not a .qrt file (no \"QRTB\" identifier at byte offset 4)").with_code(ErrorCode::kParse));
  }
  flatbuffers::Verifier verifier(data, size, 64, 10000000);
  if (!fb::VerifyGraphBuffer(verifier)) {
    return fail(Status::error("corrupted .qrt file: the FlatBuffers verifier rejected its metadata (truncated or "
                              "damaged)").with_code(ErrorCode::kParse));
  }
  const fb::Graph* root = fb::GetGraph(data);
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0 || !elements_aligned(root->blobs())) {
    return fail(Status::error("corrupted .qrt file: misaligned metadata").with_code(ErrorCode::kParse));
  }
  if (root->format_version() < kOldestReadableBinaryFormatVersion || root->format_version() > kBinaryFormatVersion) {
    return fail(Status::error(".qrt format version " + std::to_string(root->format_version()) + " (written by " +
                              (root->producer() ? root->producer()->str() : std::string("an unknown producer")) +
                              ") is not readable by this qrt, which reads versions " +
                              std::to_string(kOldestReadableBinaryFormatVersion) + " to " +
                              std::to_string(kBinaryFormatVersion)).with_code(ErrorCode::kUnsupported));
  }
  Result<Graph> g = Reader(std::move(owner), data, size).read(root);
  if (!g.is_ok()) return fail(g.status());
  return g;
}

}  // namespace qrt
