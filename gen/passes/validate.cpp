// validate: structural checks before anything else runs, so later passes may
// assume a well-formed graph. Every op is registered (all unknown ops are
// reported in one error), names are unique, every value has exactly one
// definition, node arity and attributes match the op schema (attributes are
// replaced by their normalized form with defaults filled in), outputs exist,
// and the graph is acyclic.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/error.h"
#include "ops/op.h"
#include "passes/passes.h"

namespace hybgen {
namespace {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

// Depth-first search over producers; returns the nodes on a cycle, or empty.
std::vector<std::string> find_cycle(const Graph& g, const std::map<std::string, int>& producer) {
  std::vector<int> state(g.nodes.size(), 0);  // 0 new, 1 on stack, 2 done
  std::vector<int> stack;
  std::vector<std::string> cycle;
  std::function<bool(int)> visit = [&](int n) {
    state[n] = 1;
    stack.push_back(n);
    for (const auto& in : g.nodes[n].inputs) {
      auto it = producer.find(in);
      if (it == producer.end()) continue;
      if (state[it->second] == 1) {
        for (auto s = std::find(stack.begin(), stack.end(), it->second); s != stack.end(); ++s)
          cycle.push_back(g.nodes[*s].name);
        return true;
      }
      if (state[it->second] == 0 && visit(it->second)) return true;
    }
    stack.pop_back();
    state[n] = 2;
    return false;
  };
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (state[i] == 0 && visit(static_cast<int>(i))) break;
  return cycle;
}

}  // namespace

bool validate(Graph& graph) {
  std::vector<std::string> unknown;
  for (const auto& node : graph.nodes)
    if (!lookup_op(node.op)) unknown.push_back(node_label(node.name, node.op));
  if (!unknown.empty())
    throw Error((unknown.size() == 1 ? "unknown op: " : "unknown ops: ") + join(unknown, ", ") +
                "; `hybgen ops` lists the supported ones");

  // Where each value comes from.
  std::map<std::string, std::string> defined_by;
  auto define = [&](const std::string& value, const std::string& by) {
    auto [it, fresh] = defined_by.emplace(value, by);
    if (!fresh) throw Error("value '" + value + "' is defined twice: by " + it->second + " and by " + by);
  };
  for (const auto& in : graph.inputs) define(in, "graph input '" + in + "'");
  for (const auto& [name, c] : graph.constants) define(name, "weight '" + name + "'");
  std::set<std::string> node_names;
  std::map<std::string, int> producer;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (!node_names.insert(node.name).second) throw Error("two nodes are named '" + node.name + "'");
    for (const auto& out : node.outputs) {
      define(out, node_label(node.name, node.op));
      producer[out] = static_cast<int>(i);
    }
  }

  bool changed = false;
  for (Node& node : graph.nodes) {
    const OpDef& def = find_op(node.op);
    const std::string label = node_label(node.name, node.op);
    try {
      Attrs normalized = normalize_attrs(def, node.attrs);
      if (!(normalized == node.attrs)) {
        node.attrs = std::move(normalized);
        changed = true;
      }
    } catch (const Error& e) {
      throw Error(label + ": " + e.what());
    }
    const auto [lo, hi] = expected_inputs(def, node.attrs);
    const int n = static_cast<int>(node.inputs.size());
    if (n < lo || (hi >= 0 && n > hi))
      throw Error(label + ": has " + std::to_string(n) + " inputs, expected " +
                  (lo == hi ? std::to_string(lo) : std::to_string(lo) + (hi < 0 ? " or more" : " to " + std::to_string(hi))));
    const int outputs = output_count(def, node.attrs);
    if (static_cast<int>(node.outputs.size()) != outputs)
      throw Error(label + ": has " + std::to_string(node.outputs.size()) + " outputs, expected " +
                  std::to_string(outputs));
    for (const auto& in : node.inputs)
      if (!defined_by.count(in))
        throw Error(label + ": input '" + in + "' is not defined (not a graph input, weight or node output)");
  }
  if (graph.outputs.empty()) throw Error("the graph has no outputs");
  for (const auto& out : graph.outputs)
    if (!defined_by.count(out)) throw Error("graph output '" + out + "' is not defined");
  const auto cycle = find_cycle(graph, producer);
  if (!cycle.empty()) throw Error("the graph has a cycle through nodes " + join(cycle, " -> "));
  return changed;
}

}  // namespace hybgen
