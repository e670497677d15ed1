#include "runtime-lite/symbol.h"

#include <cstring>
#include <functional>
#include <map>
#include <set>

namespace hybgen {
namespace sym {

Tensor var(const std::string& name, std::optional<Shape> shape) {
  auto node = std::make_shared<SymNode>();
  node->op = "null";
  node->name = name;
  node->out_types = {shape ? std::optional<TensorType>(TensorType{*shape}) : std::nullopt};
  return Tensor::symbolic(node, 0);
}

Graph to_graph(const std::vector<Tensor>& heads, const std::string& name, bool copy_weights) {
  Graph g;
  g.name = name;
  std::set<const SymNode*> visited;
  auto value_name = [](const SymNode& n, int index) {
    return n.out_types.size() <= 1 ? n.name : n.name + "_output" + std::to_string(index);
  };
  // Post-order: inputs before the nodes reading them, variables in first-use order.
  std::function<void(const std::shared_ptr<SymNode>&)> visit = [&](const std::shared_ptr<SymNode>& node) {
    if (!visited.insert(node.get()).second) return;
    for (const auto& in : node->inputs) visit(in.node);
    if (node->op == "null") {
      if (node->is_parameter) {
        Constant c;
        c.type = TensorType{node->parameter_shape};
        if ((copy_weights || node->inline_constant) && node->bound.defined()) {
          const auto values = node->bound.to_vector();
          c.data.resize(values.size() * sizeof(float));
          std::memcpy(c.data.data(), values.data(), c.data.size());
        }
        g.add_constant(node->name, std::move(c));
      } else {
        g.inputs.push_back(node->name);
        if (node->out_types[0]) g.types[node->name] = *node->out_types[0];
      }
      return;
    }
    Node n;
    n.name = node->name;
    n.op = node->op;
    n.attrs = node->attrs;
    for (const auto& in : node->inputs) n.inputs.push_back(value_name(*in.node, in.index));
    for (std::size_t i = 0; i < node->out_types.size(); ++i) {
      n.outputs.push_back(value_name(*node, static_cast<int>(i)));
      if (node->out_types[i]) g.types[n.outputs.back()] = *node->out_types[i];
    }
    g.nodes.push_back(std::move(n));
  };
  for (const auto& h : heads) {
    if (!h.is_symbolic()) throw Error("sym::to_graph: a head is a concrete tensor, not a symbol");
    visit(h.sym_node());
    const std::string v = value_name(*h.sym_node(), h.sym_index());
    if (!g.is_output(v)) g.outputs.push_back(v);
  }
  return g;
}

}  // namespace sym
}  // namespace hybgen
