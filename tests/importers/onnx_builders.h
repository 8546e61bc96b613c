// Tests: helpers that build small ONNX models in memory (nodes, initializers, value infos)
// and import or run them, shared by the ONNX importer tests.
#pragma once

#include <doctest/doctest.h>

#include <qrt.h>

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "importers/onnx_importer.h"
#include "tests/host_levels.h"

namespace onnx_builders {

/// Imports `model` (serialized first) as "t.onnx".
inline qrt::Result<qrt::Graph> import(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return qrt::importers::import_onnx(bytes.data(), bytes.size(), "t.onnx");
}

/// Appends a tensor value info `name` of ONNX element type `elem_type` and shape `dims`.
inline onnx::ValueInfoProto* add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                                       const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* v = list->Add();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  return v;
}

/// An INT64 initializer (a 1-D tensor, or a scalar).
inline void add_int64s(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values, bool scalar = false) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(int64_t(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

/// An initializer of ONNX type `data_type` and shape `dims` whose raw_data is `bytes`.
inline void add_raw(onnx::GraphProto* g, const std::string& name, int data_type, const std::vector<int64_t>& dims,
                    const void* bytes, size_t size) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(data_type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(static_cast<const char*>(bytes), size));
}

/// A FLOAT initializer.
inline void add_floats(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  add_raw(g, name, onnx::TensorProto::FLOAT, dims, v.data(), v.size() * sizeof(float));
}

/// Appends a node `op` named "<op>_node" with the given inputs and outputs.
inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                                 const std::vector<std::string>& out) {
  onnx::NodeProto* n = g->add_node();
  n->set_name(op + "_node");
  n->set_op_type(op);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}

/// Sets the integer attribute `name` of `n`.
inline void set_int_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

/// Sets the integer-list attribute `name` of `n`.
inline void set_ints_attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

/// The ISA levels this host has, best first (qrt_host_isas()).
using qrt_test::host_levels;
using qrt_test::tested_levels;

/// The kernel of every qrt.matmul of `plan`, in plan order.
inline std::vector<std::string> matmul_kernels(const qrt_plan_t* plan) {
  std::vector<std::string> kernels;
  size_t ops = 0;
  qrt_plan_num_ops(plan, &ops);
  for (size_t i = 0; i < ops; ++i) {
    qrt_op_info info;
    qrt_plan_op_info(plan, i, &info);
    if (std::string(info.op) == "qrt.matmul") kernels.push_back(info.kernel);
  }
  return kernels;
}

/// A model of IR version 8 importing the default domain at `opset`.
inline onnx::ModelProto empty_model(int opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(opset);
  return model;
}

/// A model of one node `op` over input "x" (ONNX element type `elem`, shape `dims`), output
/// "y"; extra initializers and attributes are added by the caller through `g` and `node`.
struct OneNode {
  onnx::ModelProto model = empty_model(13);
  onnx::GraphProto* g = model.mutable_graph();
  onnx::NodeProto* node = nullptr;
  OneNode(const std::string& op, const std::vector<int64_t>& dims, const std::vector<std::string>& more_inputs = {},
          int elem = onnx::TensorProto::FLOAT) {
    add_value(g->mutable_input(), "x", elem, dims);
    std::vector<std::string> in = {"x"};
    in.insert(in.end(), more_inputs.begin(), more_inputs.end());
    node = add_node(g, op, in, {"y"});
    g->add_output()->set_name("y");
  }
};

/// The error message of importing `m`'s model, "" when it imports.
inline std::string import_error(const OneNode& m) {
  auto g = import(m.model);
  return g.is_ok() ? "" : g.status().message();
}

}  // namespace onnx_builders
