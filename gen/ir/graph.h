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
#include <unordered_map>
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
  static Constant i64(const Shape& shape, const std::vector<int64_t>& values);
  bool has_data() const { return !data.empty(); }
  const float* f32_data() const { return reinterpret_cast<const float*>(data.data()); }
  float* f32_data() { return reinterpret_cast<float*>(data.data()); }
  const int64_t* i64_data() const { return reinterpret_cast<const int64_t*>(data.data()); }
};

// A batch size chosen at run time (--shape data=1..64,...): each input named
// in `inputs` holds one batch item in the graph (its first dimension is 1,
// or what one item spans), and run() takes from `min` to `max` items,
// stacked along that first dimension. Every value computed from those
// inputs grows with the batch the same way (passes/passes.h's
// check_batch_separable); the rest stay fixed. max == 0: every shape is fixed.
struct BatchRange {
  int64_t min = 0, max = 0;
  std::vector<std::string> inputs;
  bool variable() const { return max > 0; }
};

struct Graph {
  std::string name = "model";
  std::vector<std::string> inputs;   // runtime inputs, in call order
  std::vector<std::string> outputs;  // results, in call order
  std::vector<Node> nodes;           // topological once scheduled
  std::map<std::string, TensorType> types;
  std::map<std::string, Constant> constants;
  BatchRange batch;

  void add_input(const std::string& value, const TensorType& type);
  void add_constant(const std::string& value, Constant constant);

  bool is_input(const std::string& value) const;
  bool is_constant(const std::string& value) const { return constants.count(value) != 0; }
  bool is_output(const std::string& value) const;
  // Throws Error when the value's type is not known yet.
  const TensorType& type(const std::string& value) const;
  // Index of the node producing `value`, or -1 for inputs and constants.
  // Scans every node: a pass asking per node uses a ValueIndex instead.
  int producer(const std::string& value) const;
  // Indices of the nodes reading `value`, in node order. Scans every node.
  std::vector<int> consumers(const std::string& value) const;
  // Total number of weight elements.
  int64_t parameter_count() const;
  // Total bytes of the weights.
  std::size_t weight_bytes() const;
};

// Graph::producer and Graph::consumers for every value at once, built in one
// walk over the nodes: a pass that asks per node stays linear in the graph
// (asking the Graph itself per node is quadratic). A snapshot of
// graph.nodes: build it again after nodes, their inputs or outputs change.
//
//   const ValueIndex index(graph);
//   for (int reader : index.consumers(value)) ...
//   if (index.producer(value) < 0) ...   // a graph input or constant
class ValueIndex {
 public:
  explicit ValueIndex(const Graph& graph);
  // As Graph::producer: the first node producing `value`, or -1.
  int producer(const std::string& value) const;
  // As Graph::consumers: the nodes reading `value`, each once, in node order.
  const std::vector<int>& consumers(const std::string& value) const;

 private:
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
};

}  // namespace hybgen
