// qrt — fused element-wise regions (see ew_fusion.h). Regions grow in program order: an op
// that some backend can express as a program joins the regions of its single-reader operands
// of its own shape (merging them when several feed it), so a region is a tree whose root is
// its last op. Its program loads every outside value once, computes each op as its one-op
// program would (the same instructions, emit_op), wraps integer results to their width where
// the reference stores them, and stores only the root's result.
#include "jit/ops/ew_fusion.h"

#include <algorithm>
#include <map>

#include "jit/kernel_list.h"
#include "jit/ops/ew_ops.h"

namespace qrt::jit {

namespace {

// Whether `op` alone makes a valid program on static shapes (the test every member passes).
bool expressible(const Graph& g, const Op& op) {
  if (op.results.size() != 1 || !g.values[size_t(op.results[0])].type.has_static_shape()) return false;
  for (int v : op.operands) {
    if (!g.values[size_t(v)].type.has_static_shape()) return false;
  }
  std::string why;
  return program_for(g, op, &why).has_value();
}

// The instruction of `v` when it is a one-element constant op (the value every element meets),
// or nullopt: the program holds it as an immediate instead of loading it.
std::optional<EwInstr> immediate(const Graph& g, int v) {
  const int producer = g.values[size_t(v)].producer;
  if (producer < 0 || g.ops[size_t(producer)].kind != OpKind::kConstant) return std::nullopt;
  const Attribute* value = g.ops[size_t(producer)].attr("value");
  const Type& t = g.values[size_t(v)].type;
  const std::optional<EwStorage> s = value_storage(t.element);
  if (!value || value->kind != Attribute::Kind::kDense || t.num_elements() != 1 || !s) return std::nullopt;
  const DenseElements& d = value->dense;
  if (d.type.num_elements() != 1) return std::nullopt;
  EwInstr e;
  e.op = EwOp::kConst;
  e.type = ew_storage_type(*s);
  if (e.type == EwType::kF32) {
    if (!t.element.is_float()) return std::nullopt;
    e.f = float(d.float_at(0));  // f16, bf16 and f32 values are all f32 values
  } else if (t.element.is_integer()) {
    e.i = d.int_at(0);
    if (e.type == EwType::kBool) e.i = e.i != 0;
  } else {
    return std::nullopt;
  }
  return e;
}

// The program of a region (ops ascending) and the values it loads, or nullopt.
std::optional<EwProgram> region_program(const Graph& g, const std::vector<size_t>& ops, std::vector<int>* inputs) {
  ProgramBuilder b;
  std::map<int, uint8_t> reg;  // value -> register
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = g.ops[ops[i]];
    std::vector<uint8_t> in;
    for (int v : op.operands) {
      auto it = reg.find(v);
      if (it == reg.end()) {
        if (std::optional<EwInstr> k = immediate(g, v)) it = reg.emplace(v, b.add(*k)).first;
      }
      if (it == reg.end()) {
        if (inputs->size() == kEwMaxInputs) return std::nullopt;
        it = reg.emplace(v, b.load(*value_storage(g.values[size_t(v)].type.element))).first;
        inputs->push_back(v);
      }
      in.push_back(it->second);
    }
    std::string why;
    std::optional<uint8_t> r = emit_op(b, g, op, in, &why);
    if (!r || b.p.code.size() > 250) return std::nullopt;
    const ElementType& e = g.values[size_t(op.results[0])].type.element;
    const EwStorage s = *value_storage(e);
    const unsigned bits = s == EwStorage::kBool ? 64 : 8 * ew_storage_bytes(s);
    if (i + 1 < ops.size() && ew_storage_type(s) == EwType::kI64 && bits < 64) {
      // The reference stores the value at its width before the next op reads it.
      EwInstr wrap;
      wrap.op = EwOp::kWrap;
      wrap.type = EwType::kI64;
      wrap.a = *r;
      wrap.i = bits;
      wrap.flag = s == EwStorage::kU8 || s == EwStorage::kU16 || s == EwStorage::kU32;
      r = b.add(wrap);
    }
    reg[op.results[0]] = *r;
    b.p.result = *r;
  }
  b.p.out = *value_storage(g.values[size_t(g.ops[ops.back()].results[0])].type.element);
  if (!b.p.validate().empty()) return std::nullopt;
  return b.p;
}

}  // namespace

Result<std::vector<FusedRegion>> fuse_elementwise_regions(const Graph& g, const IsaSet& allowed, Generator generator) {
  std::vector<int> readers(g.values.size(), 0);
  std::vector<std::vector<size_t>> reader_ops(g.values.size());
  for (size_t o = 0; o < g.ops.size(); ++o) {
    for (int v : g.ops[o].operands) {
      ++readers[size_t(v)];
      if (reader_ops[size_t(v)].empty() || reader_ops[size_t(v)].back() != o) reader_ops[size_t(v)].push_back(o);
    }
  }
  for (int v : g.outputs) ++readers[size_t(v)];
  // Grow regions: region_of[op] is the index of its region in `groups`, or -1.
  std::vector<int> region_of(g.ops.size(), -1);
  std::vector<std::vector<size_t>> groups;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    if (!expressible(g, op)) continue;
    const std::vector<int64_t>& dims = g.values[size_t(op.results[0])].type.dims;
    std::vector<int> joined;
    for (int v : op.operands) {
      const int producer = g.values[size_t(v)].producer;
      if (producer < 0 || region_of[size_t(producer)] < 0 || readers[size_t(v)] != 1) continue;
      if (g.values[size_t(v)].type.dims != dims) continue;
      if (std::find(joined.begin(), joined.end(), region_of[size_t(producer)]) == joined.end()) {
        joined.push_back(region_of[size_t(producer)]);
      }
    }
    std::vector<size_t> members;
    for (int r : joined) members.insert(members.end(), groups[size_t(r)].begin(), groups[size_t(r)].end());
    members.push_back(o);
    // A value several members read (x in relu(x) + alpha · min(x, 0)) joins too, with its
    // producer's region, when no op outside reads it and it is not a graph output.
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t i = 0; i < members.size() && !grew; ++i) {
        for (int v : g.ops[members[i]].operands) {
          const int producer = g.values[size_t(v)].producer;
          if (producer < 0 || region_of[size_t(producer)] < 0 || readers[size_t(v)] < 2) continue;
          const int r = region_of[size_t(producer)];
          if (std::find(joined.begin(), joined.end(), r) != joined.end() || g.values[size_t(v)].type.dims != dims) continue;
          const std::vector<size_t>& ops_reading = reader_ops[size_t(v)];
          const bool inside = std::all_of(ops_reading.begin(), ops_reading.end(), [&](size_t reader) {
            return std::find(members.begin(), members.end(), reader) != members.end();
          });
          // Every read is an operand of a member (a graph output counts as a read from outside).
          int reads = 0;
          for (size_t reader : ops_reading) reads += int(std::count(g.ops[reader].operands.begin(), g.ops[reader].operands.end(), v));
          if (!inside || reads != readers[size_t(v)]) continue;
          joined.push_back(r);
          members.insert(members.end(), groups[size_t(r)].begin(), groups[size_t(r)].end());
          grew = true;
          break;
        }
      }
    }
    for (int r : joined) groups[size_t(r)].clear();
    std::sort(members.begin(), members.end());
    std::vector<int> inputs;
    if (members.size() > 1 && !region_program(g, members, &inputs)) {
      // Too many inputs or instructions together: the op starts a region of its own and the
      // operands' regions stay as they were.
      for (int r : joined) {
        for (size_t m : members) {
          if (m != o && region_of[m] == r) groups[size_t(r)].push_back(m);
        }
      }
      members = {o};
    }
    region_of[o] = int(groups.size());
    for (size_t m : members) region_of[m] = int(groups.size());
    groups.push_back(std::move(members));
  }
  std::vector<FusedRegion> regions;
  for (const std::vector<size_t>& ops : groups) {
    if (ops.size() < 2) continue;
    FusedRegion region;
    region.ops = ops;
    std::optional<EwProgram> program = region_program(g, ops, &region.inputs);
    // A region over constants alone (exp(c) - 1 that the importer left unfolded) has no input
    // to run over: its ops run one by one.
    if (!program || region.inputs.empty()) continue;
    const Op& root = g.ops[ops.back()];
    std::vector<std::vector<int64_t>> dims;
    for (int v : region.inputs) dims.push_back(g.values[size_t(v)].type.dims);
    BroadcastLoops loops = broadcast_loops(dims, g.values[size_t(root.results[0])].type.dims);
    for (size_t k = 0; k < dims.size(); ++k) program->inputs[k].scalar = !loops.full[k].back();
    std::string fused;
    for (size_t i = 0; i + 1 < ops.size(); ++i) fused += (i ? ", " : "ops ") + std::to_string(ops[i]);
    const Op& root_op = g.ops[ops.back()];
    if (g.values[size_t(region.inputs[0])].type.dims == g.values[size_t(root_op.results[0])].type.dims) {
      // A function of one byte: a table at the first level that has a table kernel.
      for (Isa isa : allowed.by_preference()) {
        std::string why;
        QRT_ASSIGN_OR_RETURN(region.kernel, make_table_kernel(g, root_op, *program, fused, isa, generator, &why));
        if (why == kNotByteProgram) break;
        region.chain += (region.chain.empty() ? "" : "; ") + std::string(isa_name(isa)) + ": " +
                        (region.kernel ? "chosen (a fused region as a 256-entry table)" : why);
        if (region.kernel) {
          region.isa = isa;
          break;
        }
      }
      if (region.kernel) {
        regions.push_back(std::move(region));
        continue;
      }
    }
    for (Isa isa : allowed.by_preference()) {
      const Backend* b = kernel_list_backend(KernelOp::kEwProgram, isa);
      auto say = [&](const std::string& what) {
        region.chain += (region.chain.empty() ? "" : "; ") + std::string(isa_name(isa)) + ": " + what;
      };
      if (!b || !b->available()) {
        say(b ? "the " + std::string(b->name()) + " backend cannot run here" : "no program compiler at this level");
        continue;
      }
      if (std::string why = b->program_why_not(*program); !why.empty()) {
        say(why);
        continue;
      }
      QRT_ASSIGN_OR_RETURN(auto code, program_cache().get(ProgramKey{isa, *program, program->key()}));
      const std::string level = std::string(b->name()) + "_" + isa_suffix(isa);
      region.kernel = make_ew_kernel(g, root, region.inputs, *program, loops, level, std::move(code), fused);
      region.isa = isa;
      say("chosen (a fused region)");
      break;
    }
    if (region.kernel) regions.push_back(std::move(region));
  }
  return regions;
}

}  // namespace qrt::jit
