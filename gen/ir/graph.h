// The graph IR every part of hybgen shares: frontends build it, readers load
// it, passes transform it, the interpreter runs it and emitters print it.
//
//   Graph g;
//   g.name = "mlp";
//   g.add_input("data", {{1, 512}});
//   g.add_constant("w", Constant::f32({{256, 512}}, weights));
//   g.nodes.push_back(Node{"fc", "FullyConnected", attrs, {"data", "w"}, {"fc"}});
//   g.outputs = {"fc"};
//
// Values are addressed by name (as in ONNX): a value is a graph input, a
// constant (weight), or an output of exactly one node. `types` holds the type
// of every value once shapes are inferred (passes/infer_shapes.h); inputs and
// constants carry theirs from the start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/tensor_type.h"

namespace hybgen {

struct Node {
  std::string name;
  std::string op;
  Attrs attrs;
  std::vector<std::string> inputs;   // value names
  std::vector<std::string> outputs;  // value names, one per op output
};

// A weight: its type and raw little-endian bytes. `data` is empty when the
// graph was loaded without weights (inspecting a model.json alone).
struct Constant {
  TensorType type;
  std::vector<uint8_t> data;

  static Constant f32(const Shape& shape, const std::vector<float>& values);
  bool has_data() const { return !data.empty(); }
  const float* f32_data() const { return reinterpret_cast<const float*>(data.data()); }
  float* f32_data() { return reinterpret_cast<float*>(data.data()); }
};

struct Graph {
  std::string name = "model";
  std::vector<std::string> inputs;   // runtime inputs, in call order
  std::vector<std::string> outputs;  // results, in call order
  std::vector<Node> nodes;           // topological once scheduled
  std::map<std::string, TensorType> types;
  std::map<std::string, Constant> constants;

  void add_input(const std::string& value, const TensorType& type);
  void add_constant(const std::string& value, Constant constant);

  bool is_input(const std::string& value) const;
  bool is_constant(const std::string& value) const { return constants.count(value) != 0; }
  bool is_output(const std::string& value) const;
  // Throws Error when the value's type is not known yet.
  const TensorType& type(const std::string& value) const;
  // Index of the node producing `value`, or -1 for inputs and constants.
  int producer(const std::string& value) const;
  // Indices of the nodes reading `value`, in node order.
  std::vector<int> consumers(const std::string& value) const;
  // Total number of weight elements.
  int64_t parameter_count() const;
  // Total bytes of the weights.
  std::size_t weight_bytes() const;
};

}  // namespace hybgen
