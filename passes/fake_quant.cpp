// qrt — fake-quant conversion (see fake_quant.h).
#include "passes/fake_quant.h"

#include "ir/quant_params.h"
#include "passes/rewriter.h"

namespace qrt::passes {

Result<Graph> convert_fake_quant(const Graph& graph, PassLog& log) {
  Rewriter rw(graph);
  for (const Op& op : graph.ops) {
    if (op.kind != OpKind::kFakeQuant) {
      rw.copy(op);
      continue;
    }
    const Value& y = graph.values[size_t(op.results[0])];
    Type qt = y.type;
    auto element = fake_quant_element_type(op, y.type.element.float_kind);  // the verifier checked it
    if (!element.is_ok()) return Status::error_at(op.loc, "'qrt.fake_quant' op " + element.status().message());
    qt.element = *element;
    const std::string qname = fresh_name(graph, y.name + "_fq");
    const int q = rw.emit(OpKind::kQCast, {rw.at(op.operands[0])}, qt, {}, op.loc, qname);
    rw.map(op.results[0], rw.emit(OpKind::kDCast, {q}, y.type, {}, op.loc, y.name));
    log.push_back("%" + y.name + ": qcast -> dcast through " + qt.element.to_string());
  }
  return rw.finish();
}

}  // namespace qrt::passes
