// Symbols: the graph a traced hybrid_forward builds, kept as a DAG of shared
// nodes (as nnvm does) until it is turned into a Graph.
//
//   Tensor a = sym::var("a", {10}), b = sym::var("b", {10});
//   Tensor d = b * a + 1.0f;
//   Graph g = sym::to_graph({d}, "memory");   // inputs b, a; nodes broadcast_mul, _plus_scalar
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime-lite/tensor.h"

namespace hybgen {

struct SymEntry {
  std::shared_ptr<SymNode> node;
  int index = 0;
};

struct SymNode {
  std::string op;  // "null" for a variable
  std::string name;
  Attrs attrs;
  std::vector<SymEntry> inputs;
  std::vector<std::optional<TensorType>> out_types;  // unknown while input shapes are unknown
  // Variables standing for a parameter carry its data (undefined while the
  // parameter's initialisation is deferred) and its shape (0 for unknown dims).
  bool is_parameter = false;
  bool inline_constant = false;  // a concrete tensor used inside a trace: always copied into the graph
  Tensor bound;
  Shape parameter_shape;
  // A constant of any dtype, copied into the graph as it is (a quantized
  // block's int8 weights, which a float32 Tensor cannot hold); with
  // is_parameter and inline_constant set.
  std::shared_ptr<const Constant> constant;
};

namespace sym {

// A graph input, its shape unknown until a block call or an op tells it.
Tensor var(const std::string& name);
// A graph input of a known shape.
Tensor var(const std::string& name, const Shape& shape);

// The graph computing `heads` (its outputs, in order): nodes in post-order,
// variables in first-use order. Parameters become constants; with
// copy_weights their data is copied in (export), otherwise only their types
// are (a hybridized block binds the live tensors instead).
//
// Names are made unique the way a Graph needs them: variables of one name are
// one value (a parameter used twice, or `data` fed to two calls), while two
// distinct op nodes of one name (a block called twice symbolically) are told
// apart with a suffix ("dense0_fwd", "dense0_fwd_1").
Graph to_graph(const std::vector<Tensor>& heads, const std::string& name = "model", bool copy_weights = true);

}  // namespace sym
}  // namespace hybgen
