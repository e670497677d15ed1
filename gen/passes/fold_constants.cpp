// fold_constants: evaluates now, with the op's reference kernel
// (ops/evaluate.h), every node whose inputs are all constants with data of
// dtypes that reference computes (float32; integers and bool for the ops
// that list them: shape arithmetic), and turns its outputs
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

#include "ops/evaluate.h"
#include "ops/op.h"
#include "passes/passes.h"
#include "passes/rewrite_util.h"

namespace hybgen {
namespace {

bool foldable(const Graph& graph, const Node& node) {
  if (node.inputs.empty()) return false;
  int64_t in_elements = 0, out_elements = 0;
  std::vector<TensorType> in, out;
  for (const auto& value : node.inputs) {
    auto it = graph.constants.find(value);
    if (it == graph.constants.end() || !it->second.has_data()) return false;
    in.push_back(it->second.type);
    in_elements += it->second.type.num_elements();
  }
  for (const auto& value : node.outputs) {
    out.push_back(graph.type(value));
    out_elements += out.back().num_elements();
  }
  return out_elements <= in_elements && reference_computes(find_op(node.op), in, out);
}

// Runs the node's reference kernel on its constant inputs and adds each
// output to the graph as a constant.
void evaluate(Graph& graph, const Node& node) {
  std::vector<const Constant*> in;
  for (const auto& value : node.inputs) in.push_back(&graph.constants.at(value));
  std::vector<TensorType> out_types;
  for (const auto& value : node.outputs) out_types.push_back(graph.type(value));
  std::vector<Constant> results = evaluate_node(node, in, out_types);
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
