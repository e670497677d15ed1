#include "runtime-lite/symbol.h"

#include <cstring>
#include <functional>
#include <map>
#include <set>

namespace hybgen {
namespace sym {
namespace {

Tensor make_var(const std::string& name, std::optional<TensorType> type) {
  auto node = std::make_shared<SymNode>();
  node->op = "null";
  node->name = name;
  node->out_types = {std::move(type)};
  return Tensor::symbolic(node, 0);
}

std::string type_text(const std::optional<TensorType>& type) {
  return type ? shape_str(type->shape) : std::string("unknown shape");
}

// Turns the DAG into a Graph, one node at a time, keeping names unique.
class GraphBuilder {
 public:
  GraphBuilder(const std::string& name, bool copy_weights) : copy_weights_(copy_weights) { graph_.name = name; }

  void add_head(const Tensor& head) {
    if (!head.is_symbolic()) throw Error("sym::to_graph: a head is a concrete tensor, not a symbol");
    visit(head.sym_node());
    const std::string value = value_name(*head.sym_node(), head.sym_index());
    if (!graph_.is_output(value)) graph_.outputs.push_back(value);
  }

  // Notes the variables `head` reads, before any name is given: an inline
  // constant (a concrete tensor in a trace, a quantized block's weight) then
  // takes a suffix rather than the name of a variable met later.
  void reserve_variable_names(const Tensor& head) {
    if (!head.is_symbolic()) return;
    std::vector<const SymNode*> stack{head.sym_node().get()};
    std::set<const SymNode*> seen;
    while (!stack.empty()) {
      const SymNode* n = stack.back();
      stack.pop_back();
      if (!seen.insert(n).second) continue;
      if (shared_variable(*n)) variable_names_.insert(n->name);
      for (const auto& in : n->inputs) stack.push_back(in.node.get());
    }
  }

  Graph take() { return std::move(graph_); }

 private:
  bool shared_variable(const SymNode& n) const { return n.op == "null" && !n.inline_constant; }

  // The graph name of `node`: its own for the first node of that name (and
  // for every variable of that name), else with a suffix.
  const std::string& assign_name(const SymNode& node) {
    if (shared_variable(node)) {
      auto it = variables_.find(node.name);
      if (it != variables_.end()) {
        check_same_variable(*it->second, node);
        return names_[&node] = node.name;
      }
      if (taken_.count(node.name))
        throw Error("sym::to_graph: variable '" + node.name + "' has the name of a node of the graph");
      variables_[node.name] = &node;
    }
    const bool inline_constant = node.op == "null" && node.inline_constant;
    const auto free = [&](const std::string& name) {
      return !taken_.count(name) && !(inline_constant && variable_names_.count(name));
    };
    std::string unique = node.name;
    for (int i = 1; !free(unique); ++i) unique = node.name + "_" + std::to_string(i);
    taken_.insert(unique);
    for (std::size_t i = 0; node.out_types.size() > 1 && i < node.out_types.size(); ++i)
      taken_.insert(unique + "_output" + std::to_string(i));
    return names_[&node] = unique;
  }

  static void check_same_variable(const SymNode& first, const SymNode& again) {
    if (first.is_parameter != again.is_parameter)
      throw Error("sym::to_graph: '" + again.name + "' is both a parameter and a graph input");
    const std::string a = first.is_parameter ? shape_str(first.parameter_shape) : type_text(first.out_types[0]);
    const std::string b = again.is_parameter ? shape_str(again.parameter_shape) : type_text(again.out_types[0]);
    if (a != b) throw Error("sym::to_graph: two variables named '" + again.name + "' disagree: " + a + " and " + b);
  }

  std::string value_name(const SymNode& n, int index) const {
    const std::string& base = names_.at(&n);
    return n.out_types.size() <= 1 ? base : base + "_output" + std::to_string(index);
  }

  // Post-order: inputs before the nodes reading them.
  void visit(const std::shared_ptr<SymNode>& node) {
    if (names_.count(node.get())) return;
    for (const auto& in : node->inputs) visit(in.node);
    const bool seen_variable = shared_variable(*node) && variables_.count(node->name);
    const std::string name = assign_name(*node);
    if (seen_variable) return;
    if (node->op == "null") {
      add_variable(*node, name);
      return;
    }
    Node n;
    n.name = name;
    n.op = node->op;
    n.attrs = node->attrs;
    for (const auto& in : node->inputs) n.inputs.push_back(value_name(*in.node, in.index));
    for (std::size_t i = 0; i < node->out_types.size(); ++i) {
      n.outputs.push_back(value_name(*node, static_cast<int>(i)));
      if (node->out_types[i]) graph_.types[n.outputs.back()] = *node->out_types[i];
    }
    graph_.nodes.push_back(std::move(n));
  }

  void add_variable(const SymNode& node, const std::string& name) {
    if (!node.is_parameter) {
      graph_.inputs.push_back(name);
      if (node.out_types[0]) graph_.types[name] = *node.out_types[0];
      return;
    }
    if (node.constant) {
      graph_.add_constant(name, *node.constant);
      return;
    }
    Constant c;
    c.type = TensorType{node.parameter_shape};
    if ((copy_weights_ || node.inline_constant) && node.bound.defined()) {
      const auto values = node.bound.to_vector();
      c.data.resize(values.size() * sizeof(float));
      if (!values.empty()) std::memcpy(c.data.data(), values.data(), c.data.size());
    }
    graph_.add_constant(name, std::move(c));
  }

  bool copy_weights_;
  Graph graph_;
  std::map<const SymNode*, std::string> names_;
  std::map<std::string, const SymNode*> variables_;
  std::set<std::string> taken_;
  std::set<std::string> variable_names_;  // of every shared variable in the DAG
};

}  // namespace

Tensor var(const std::string& name) { return make_var(name, std::nullopt); }

Tensor var(const std::string& name, const Shape& shape) { return make_var(name, TensorType{shape}); }

Graph to_graph(const std::vector<Tensor>& heads, const std::string& name, bool copy_weights) {
  GraphBuilder builder(name, copy_weights);
  for (const auto& head : heads) builder.reserve_variable_names(head);
  for (const auto& head : heads) builder.add_head(head);
  return builder.take();
}

}  // namespace sym
}  // namespace hybgen
