// schedule: a stable topological order (Kahn's algorithm taking ready nodes
// in their current order), so an order that is already valid stays as it is
// and the result is deterministic.
#include <map>
#include <set>

#include "ir/error.h"
#include "passes/passes.h"

namespace hybgen {

std::vector<int> topological_order(const Graph& graph) {
  std::map<std::string, int> producer;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    for (const auto& out : graph.nodes[i].outputs) producer[out] = static_cast<int>(i);
  std::vector<int> waiting(graph.nodes.size(), 0);
  std::vector<std::vector<int>> users(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    std::set<int> deps;
    for (const auto& in : graph.nodes[i].inputs) {
      auto it = producer.find(in);
      if (it != producer.end()) deps.insert(it->second);
    }
    waiting[i] = static_cast<int>(deps.size());
    for (int d : deps) users[d].push_back(static_cast<int>(i));
  }
  std::set<int> ready;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    if (waiting[i] == 0) ready.insert(static_cast<int>(i));
  std::vector<int> order;
  while (!ready.empty()) {
    const int n = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(n);
    for (int u : users[n])
      if (--waiting[u] == 0) ready.insert(u);
  }
  if (order.size() != graph.nodes.size()) {
    std::string stuck;
    for (std::size_t i = 0; i < graph.nodes.size(); ++i)
      if (waiting[i] > 0) stuck += (stuck.empty() ? "" : ", ") + graph.nodes[i].name;
    throw Error("the graph has a cycle; these nodes wait on each other: " + stuck);
  }
  return order;
}

bool schedule(Graph& graph) {
  const std::vector<int> order = topological_order(graph);
  bool changed = false;
  std::vector<Node> nodes;
  nodes.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    changed = changed || order[i] != static_cast<int>(i);
    nodes.push_back(std::move(graph.nodes[order[i]]));
  }
  graph.nodes = std::move(nodes);
  return changed;
}

}  // namespace hybgen
