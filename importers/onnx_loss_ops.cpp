// qrt — ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as compositions of qrt ops,
// in the steps of ONNX's reference implementation (onnx/reference and the node tests'
// generators):
//   the log-probabilities (SoftmaxCrossEntropyLoss: log(softmax(x)) along axis 1);
//   each position's -logp[n, target, d...] (gather_elements along axis 1), 0 where the target
//   is ignore_index (the gather reads class 0 there, then `where` drops it);
//   the weights gathered by target (0 where ignored; 1 elsewhere when only ignore_index is set);
//   reduction "none", "sum" (reduce_sum), or "mean": Σ(w·loss) / Σ w with weights, else the
//   mean over every position.
#include <cstring>

#include "importers/onnx_importer_impl.h"
#include "ir/float_format.h"

namespace qrt::importers::onnx_detail {

namespace {

// A rank-0 dense constant of integer (or i1) element type `e` holding `v`.
DenseElements int_scalar_elements(int64_t v, const ElementType& e) {
  DenseElements d = DenseElements::zeros(Type::tensor({}, e));
  d.set_int(0, v);
  return d;
}

}  // namespace

Result<bool> Importer::loss_op(const onnx::NodeProto& node, const Attrs& a) {
  const std::string& op = node.op_type();
  const bool sce = op == "SoftmaxCrossEntropyLoss";
  if (!sce && op != "NegativeLogLikelihoodLoss") return false;
  QRT_ASSIGN_OR_RETURN(int x, value(node, 0));
  QRT_ASSIGN_OR_RETURN(int target, value(node, 1));
  const Type tx = type(x), tt = type(target);
  if (!tx.element.is_float() || tx.rank() < 2 || !tx.has_static_shape()) {
    return error(node, "expects a float input [N, C, d...] with a static shape, got " + tx.to_string());
  }
  if (!tt.element.is_integer() || tt.element.int_width == 1) {
    return error(node, "expects integer targets, got " + tt.to_string());
  }
  std::vector<int64_t> want(tx.dims);
  want.erase(want.begin() + 1);
  if (tt.dims != want) {
    return error(node, "targets must have shape [" + dims_to_string(want) + "] (the input's without C), got " + tt.to_string(),
                 ErrorCode::kVerify);
  }
  QRT_ASSIGN_OR_RETURN(std::string reduction, attr_string(node, a, "reduction", "mean"));
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return error(node, "unknown reduction '" + reduction + "'", ErrorCode::kVerify);
  }
  const bool has_ii = a.count("ignore_index") != 0;
  QRT_ASSIGN_OR_RETURN(int64_t ignore_index, attr_int(node, a, "ignore_index", 0));
  int weight = -1;
  if (node.input_size() > 2 && !node.input(2).empty()) {
    QRT_ASSIGN_OR_RETURN(weight, value(node, 2));
    const Type& tw = type(weight);
    if (!(tw.element == tx.element) || tw.dims != std::vector<int64_t>{tx.dims[1]}) {
      return error(node, "weights must be [" + std::to_string(tx.dims[1]) + "] of the input's type, got " + tw.to_string(),
                   ErrorCode::kVerify);
    }
  }
  const ElementType& e = tx.element;
  const Type loss_t = Type::tensor(tt.dims, e);
  const Type mask_t = Type::tensor(tt.dims, ElementType::make_int(1));

  // The log-probabilities.
  int logp = x;
  if (sce) {
    const int p = emit(OpKind::kSoftmax, {x}, tx, {{"axis", Attribute::make_int(1)}});
    logp = emit(OpKind::kLog, {p}, tx);
    if (node.output_size() > 1 && !node.output(1).empty()) bind(node, 1, logp);
  }
  // Targets that name a class: ignored positions read class 0 and are dropped below.
  int mask = -1, safe = target;
  if (has_ii) {
    const int ii = emit(OpKind::kConstant, {}, Type::tensor({}, tt.element),
                        {{"value", Attribute::make_dense(int_scalar_elements(ignore_index, tt.element))}});
    const int zero = emit(OpKind::kConstant, {}, Type::tensor({}, tt.element),
                          {{"value", Attribute::make_dense(int_scalar_elements(0, tt.element))}});
    mask = emit(OpKind::kEqual, {target, ii}, mask_t);
    safe = emit(OpKind::kWhere, {mask, zero, target}, tt);
  }
  std::vector<int64_t> index_dims = tt.dims;
  index_dims.insert(index_dims.begin() + 1, 1);
  const int index = emit(OpKind::kReshape, {safe}, Type::tensor(index_dims, tt.element));
  const int picked = emit(OpKind::kGatherElements, {logp, index}, Type::tensor(index_dims, e), {{"axis", Attribute::make_int(1)}});
  int loss = emit(OpKind::kNeg, {emit(OpKind::kReshape, {picked}, loss_t)}, loss_t);
  if (has_ii) loss = emit(OpKind::kWhere, {mask, float_scalar(0.0, e), loss}, loss_t);
  // The weights of the positions.
  int gathered = -1;
  if (weight >= 0) {
    gathered = emit(OpKind::kGather, {weight, safe}, loss_t, {{"axis", Attribute::make_int(0)}});
    if (has_ii) gathered = emit(OpKind::kWhere, {mask, float_scalar(0.0, e), gathered}, loss_t);
  } else if (has_ii) {
    gathered = emit(OpKind::kWhere, {mask, float_scalar(0.0, e), float_scalar(1.0, e)}, loss_t);
  }
  if (gathered >= 0) loss = emit(OpKind::kMul, {gathered, loss}, loss_t);
  if (reduction == "none") {
    bind(node, 0, loss);
    return true;
  }
  std::vector<int64_t> all(tt.rank());
  for (size_t d = 0; d < all.size(); ++d) all[d] = int64_t(d);
  const std::vector<std::pair<std::string, Attribute>> over_all = {{"axes", Attribute::make_int_array(all)},
                                                                   {"keepdims", Attribute::make_int(0)}};
  const Type scalar = Type::tensor({}, e);
  if (reduction == "sum") {
    bind(node, 0, emit(OpKind::kReduceSum, {loss}, scalar, over_all));
  } else if (gathered >= 0) {
    const int total = emit(OpKind::kReduceSum, {loss}, scalar, over_all);
    bind(node, 0, emit(OpKind::kDiv, {total, emit(OpKind::kReduceSum, {gathered}, scalar, over_all)}, scalar));
  } else {
    bind(node, 0, emit(OpKind::kMean, {loss}, scalar, over_all));
  }
  return true;
}

}  // namespace qrt::importers::onnx_detail
