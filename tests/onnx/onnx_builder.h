// Builds ONNX ModelProtos in C++ for tests (no binary files needed), imports
// them and runs them with the reference interpreter.
//
//   OnnxBuilder b(13);                                   // default-domain opset
//   b.input("x", {1, 3, 8, 8});                          // -1: symbolic dim "N"
//   b.initializer("w", {4, 3, 3, 3}, weights);           // float32, raw_data
//   auto& conv = b.node("Conv", {"x", "w"}, {"y"});
//   b.attr(conv, "pads", {1, 1, 1, 1});
//   b.output("y");
//   Graph g = b.import();                                // import_onnx_bytes
//   std::vector<Tensor> out = run_graph(g, {{"x", Tensor::random_uniform({1, 3, 8, 8}, -1, 1, 7)}});
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1)

#include <map>
#include <random>
#include <string>
#include <vector>

#include "error_matchers.h"
#include "io/onnx/onnx_model.h"
#include "ir/graph.h"
#include "runtime-lite/interpreter.h"
#include "runtime-lite/tensor.h"

namespace hybgen::testing_onnx {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 13, int64_t ir_version = 8) {
    model.set_ir_version(ir_version);
    model.set_producer_name("hybgen-test");
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model.mutable_graph()->set_name("test_graph");
  }

  onnx::GraphProto& graph() { return *model.mutable_graph(); }

  // A graph input; a negative dim is symbolic ("N"); `shape_known` false
  // leaves out the shape altogether.
  onnx::ValueInfoProto& input(const std::string& name, const Shape& shape, int32_t elem_type = 1,
                              bool shape_known = true) {
    auto* in = graph().add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    if (shape_known) {
      auto* s = tt->mutable_shape();
      for (int64_t d : shape) {
        auto* dim = s->add_dim();
        if (d < 0) dim->set_dim_param("N");
        else dim->set_dim_value(d);
      }
    }
    return *in;
  }

  void output(const std::string& name) {
    auto* o = graph().add_output();
    o->set_name(name);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  }

  // A float32 initializer in raw_data (raw = false: in float_data).
  onnx::TensorProto& initializer(const std::string& name, const Shape& shape, const std::vector<float>& values,
                                 bool raw = true) {
    auto* t = graph().add_initializer();
    fill(*t, name, shape, values, raw);
    return *t;
  }
  // An int64 initializer in raw_data (raw = false: in int64_data).
  onnx::TensorProto& initializer_i64(const std::string& name, const Shape& shape, const std::vector<int64_t>& values,
                                     bool raw = true) {
    auto* t = graph().add_initializer();
    fill_i64(*t, name, shape, values, raw);
    return *t;
  }

  static void fill(onnx::TensorProto& t, const std::string& name, const Shape& shape, const std::vector<float>& values,
                   bool raw = true) {
    t.set_name(name);
    t.set_data_type(1);
    for (int64_t d : shape) t.add_dims(d);
    if (raw) t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
    else
      for (float v : values) t.add_float_data(v);
  }
  static void fill_i64(onnx::TensorProto& t, const std::string& name, const Shape& shape,
                       const std::vector<int64_t>& values, bool raw = true) {
    t.set_name(name);
    t.set_data_type(7);
    for (int64_t d : shape) t.add_dims(d);
    if (raw) t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 8));
    else
      for (int64_t v : values) t.add_int64_data(v);
  }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph().node_size() - 1) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  // Attributes.
  static void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, int v) { attr(n, name, static_cast<int64_t>(v)); }
  static void attr(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const char* v) { attr(n, name, std::string(v)); }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
  }
  static onnx::TensorProto& attr_tensor(onnx::NodeProto& n, const std::string& name) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::TENSOR);
    return *a->mutable_t();
  }

  // A Constant node holding an int64 tensor (as torch.onnx.export writes them).
  void constant_i64(const std::string& output, const Shape& shape, const std::vector<int64_t>& values) {
    auto& n = node("Constant", {}, {output});
    fill_i64(attr_tensor(n, "value"), "", shape, values);
  }
  void constant_f32(const std::string& output, const Shape& shape, const std::vector<float>& values) {
    auto& n = node("Constant", {}, {output});
    fill(attr_tensor(n, "value"), "", shape, values);
  }

  std::string bytes() const { return model.SerializeAsString(); }

  Graph import(const OnnxImportOptions& options = {}, const std::string& dir = "") const {
    return import_onnx_bytes(bytes(), "test.onnx", dir, options);
  }

  onnx::ModelProto model;
};

// n values drawn uniformly from [-1, 1) with `seed`.
inline std::vector<float> seeded(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.size()); }

inline void expect_near(const std::vector<float>& a, const std::vector<float>& b, float tol = 1e-5f) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "element " << i;
}

// Runs a graph with the reference interpreter.
inline std::vector<Tensor> run_graph(const Graph& graph, const std::map<std::string, Tensor>& inputs) {
  Interpreter interp(graph);
  return interp.run(inputs);
}

// The message of the Error the import throws, or "(no error)".
inline std::string import_error(const OnnxBuilder& b, const OnnxImportOptions& options = {},
                                const std::string& dir = "") {
  return hybgen::testing::error_of([&] { b.import(options, dir); });
}

}  // namespace hybgen::testing_onnx
