// validate: structural checks before anything else runs, so later passes may
// assume a well-formed graph. Every op is registered (all unknown ops are
// reported in one error), names are unique, every value has exactly one
// definition, node arity and attributes match the op schema (attributes are
// replaced by their normalized form with defaults filled in), outputs exist,
// and the graph is acyclic; quantized inputs and weights have valid
// quantization parameters.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "ir/names.h"
#include "ops/op.h"
#include "passes/passes.h"

namespace hybgen {
namespace {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

// Depth-first search over producers (`defined_by`: a node index, or negative
// for graph inputs and weights); returns the nodes on a cycle, or empty.
// Iterative (an explicit stack of nodes and the next input each looks at),
// so a graph as deep as it is long (a 100k-node chain listed last node
// first) cannot overflow the call stack.
std::vector<std::string> find_cycle(const Graph& g, const std::unordered_map<std::string, int>& defined_by) {
  std::vector<int> state(g.nodes.size(), 0);  // 0 new, 1 on stack, 2 done
  struct Frame {
    int node;
    std::size_t next_input;
  };
  std::vector<Frame> stack;
  for (std::size_t root = 0; root < g.nodes.size(); ++root) {
    if (state[root] != 0) continue;
    state[root] = 1;
    stack.push_back({static_cast<int>(root), 0});
    while (!stack.empty()) {
      Frame& top = stack.back();
      const Node& node = g.nodes[top.node];
      if (top.next_input == node.inputs.size()) {
        state[top.node] = 2;
        stack.pop_back();
        continue;
      }
      auto it = defined_by.find(node.inputs[top.next_input++]);
      if (it == defined_by.end() || it->second < 0) continue;
      const int p = it->second;
      if (state[p] == 1) {
        auto from = std::find_if(stack.begin(), stack.end(), [&](const Frame& f) { return f.node == p; });
        std::vector<std::string> cycle;
        for (; from != stack.end(); ++from) cycle.push_back(g.nodes[from->node].name);
        return cycle;
      }
      if (state[p] == 0) {
        state[p] = 1;
        stack.push_back({p, 0});  // `top` is not used after this
      }
    }
  }
  return {};
}

}  // namespace

bool validate(Graph& graph) {
  std::vector<std::string> unknown;
  for (const auto& node : graph.nodes)
    if (!lookup_op(node.op)) unknown.push_back(node_label(node.name, node.op));
  if (!unknown.empty())
    throw Error((unknown.size() == 1 ? "unknown op: " : "unknown ops: ") + join(unknown, ", ") +
                "; `hybgen ops` lists the supported ones");

  // Where each value comes from: node i, or (kInput, kWeight) the value
  // itself; put in words only for a message.
  constexpr int kInput = -1, kWeight = -2;
  auto definer = [&](const std::string& value, int by) {
    if (by == kInput) return "graph input " + quoted_name(value);
    if (by == kWeight) return "weight " + quoted_name(value);
    return node_label(graph.nodes[by].name, graph.nodes[by].op);
  };
  std::unordered_map<std::string, int> defined_by;
  defined_by.reserve(graph.inputs.size() + graph.constants.size() + graph.nodes.size());
  auto define = [&](const std::string& value, int by) {
    auto [it, fresh] = defined_by.emplace(value, by);
    if (!fresh)
      throw Error("value " + quoted_name(value) + " is defined twice: by " + definer(value, it->second) + " and by " +
                  definer(value, by));
  };
  for (const auto& in : graph.inputs) define(in, kInput);
  for (const auto& [name, c] : graph.constants) define(name, kWeight);
  // Readers check what they read; graphs built in code are checked here.
  for (const auto& in : graph.inputs)
    if (auto it = graph.types.find(in); it != graph.types.end()) check_quantization(it->second, definer(in, kInput));
  for (const auto& [name, c] : graph.constants) check_quantization(c.type, definer(name, kWeight));
  std::unordered_set<std::string> node_names;
  node_names.reserve(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (!node_names.insert(node.name).second) throw Error("two nodes are named " + quoted_name(node.name));
    for (const auto& out : node.outputs) define(out, static_cast<int>(i));
  }

  bool changed = false;
  for (Node& node : graph.nodes) {
    const OpDef& def = find_op(node.op);
    auto label = [&] { return node_label(node.name, node.op); };  // for messages only
    try {
      Attrs normalized = normalize_attrs(def, node.attrs);
      if (!(normalized == node.attrs)) {
        node.attrs = std::move(normalized);
        changed = true;
      }
    } catch (const Error& e) {
      throw Error(label() + ": " + e.what());
    }
    if (const std::string wrong = input_count_mismatch(def, node.attrs, static_cast<int>(node.inputs.size()));
        !wrong.empty())
      throw Error(label() + ": " + wrong);
    const int outputs = output_count(def, node.attrs);
    if (static_cast<int>(node.outputs.size()) != outputs)
      throw Error(label() + ": has " + std::to_string(node.outputs.size()) + " outputs, expected " +
                  std::to_string(outputs));
    for (const auto& in : node.inputs)
      if (!defined_by.count(in))
        throw Error(label() + ": input " + quoted_name(in) + " is not defined (not a graph input, weight or node output)");
  }
  if (graph.outputs.empty()) throw Error("the graph has no outputs");
  for (const auto& out : graph.outputs)
    if (!defined_by.count(out)) throw Error("graph output " + quoted_name(out) + " is not defined");
  const auto cycle = find_cycle(graph, defined_by);
  if (!cycle.empty()) throw Error("the graph has a cycle through nodes " + join(cycle, " -> "));
  return changed;
}

}  // namespace hybgen
