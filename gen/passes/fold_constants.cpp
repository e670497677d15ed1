// fold_constants: evaluates now, with the op's reference kernel, every node
// whose inputs are all float32 constants with data, and turns its outputs
// into constants of the same names; the node goes. Nodes are visited in
// topological order and a folded output is a constant before its readers are
// looked at, so a chain of constant nodes folds in one call (the tutorial's
// (1 + 2) + (3 + 4) becomes one constant holding 10). Value names do not
// change, so readers and graph outputs need no rewiring: a graph output may
// be a constant (the emitter copies it out). Constants that end up unread
// are erased.
//
// Left alone: constants without data (a model.json inspected without its
// weights), nodes with no inputs, and nodes whose outputs hold more elements
// than their inputs together (a broadcast or tile): folding those would trade
// a cheap kernel for weight bytes in the binary.
#include <algorithm>

#include "ops/op.h"
#include "passes/passes.h"
#include "passes/rewrite_util.h"

namespace hybgen {
namespace {

bool foldable(const Graph& graph, const Node& node) {
  if (node.inputs.empty()) return false;
  int64_t in_elements = 0, out_elements = 0;
  for (const auto& in : node.inputs) {
    if (!has_constant_data(graph, in)) return false;
    in_elements += graph.constants.at(in).type.num_elements();
  }
  for (const auto& out : node.outputs) {
    const TensorType& type = graph.type(out);
    if (type.dtype != DType::kFloat32) return false;
    out_elements += type.num_elements();
  }
  return out_elements <= in_elements;
}

// Runs the node's reference kernel on its constant inputs and adds each
// output to the graph as a constant.
void evaluate(Graph& graph, const Node& node) {
  const OpDef& def = find_op(node.op);
  const Attrs attrs = normalize_attrs(def, node.attrs);
  std::vector<Constant> results(node.outputs.size());
  KernelIO io{attrs, {}, {}, {}, {}};
  for (const auto& in : node.inputs) {
    const Constant& c = graph.constants.at(in);
    io.in.push_back(c.f32_data());
    io.in_types.push_back(c.type);
  }
  for (std::size_t i = 0; i < node.outputs.size(); ++i) {
    results[i].type = graph.type(node.outputs[i]);
    results[i].data.resize(results[i].type.bytes());
    io.out.push_back(results[i].f32_data());
    io.out_types.push_back(results[i].type);
  }
  def.reference(io);
  for (std::size_t i = 0; i < node.outputs.size(); ++i) graph.add_constant(node.outputs[i], std::move(results[i]));
}

}  // namespace

bool fold_constants(Graph& graph) {
  // A node becomes foldable only once another folded, so when none is now,
  // nothing will be (and the order need not be worked out).
  if (std::none_of(graph.nodes.begin(), graph.nodes.end(), [&](const Node& n) { return foldable(graph, n); }))
    return false;
  std::vector<bool> folded(graph.nodes.size(), false);
  std::vector<std::string> touched;  // constants that may be unread afterwards
  for (int index : topological_order(graph)) {
    const Node& node = graph.nodes[index];
    if (!foldable(graph, node)) continue;
    evaluate(graph, node);
    folded[index] = true;
    touched.insert(touched.end(), node.inputs.begin(), node.inputs.end());
    touched.insert(touched.end(), node.outputs.begin(), node.outputs.end());
  }
  if (std::none_of(folded.begin(), folded.end(), [](bool f) { return f; })) return false;

  std::vector<Node> kept;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    if (!folded[i]) kept.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(kept);
  erase_unread_constants(graph, touched);
  return true;
}

}  // namespace hybgen
