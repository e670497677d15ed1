// schedule: a stable topological order (Kahn's algorithm taking ready nodes
// in their current order), so an order that is already valid stays as it is
// and the result is deterministic.
#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>

#include "ir/error.h"
#include "passes/passes.h"

namespace hybgen {

std::vector<int> topological_order(const Graph& graph) {
  const int count = static_cast<int>(graph.nodes.size());
  std::unordered_map<std::string, int> producer;
  producer.reserve(graph.nodes.size());
  for (int i = 0; i < count; ++i)
    for (const auto& out : graph.nodes[i].outputs) producer[out] = i;
  std::vector<int> waiting(count, 0);
  std::vector<std::vector<int>> users(count);
  std::vector<int> deps;
  for (int i = 0; i < count; ++i) {
    deps.clear();
    for (const auto& in : graph.nodes[i].inputs) {
      auto it = producer.find(in);
      if (it != producer.end()) deps.push_back(it->second);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    waiting[i] = static_cast<int>(deps.size());
    for (int d : deps) users[d].push_back(i);
  }
  // The ready nodes, lowest index first.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < count; ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(graph.nodes.size());
  while (!ready.empty()) {
    const int n = ready.top();
    ready.pop();
    order.push_back(n);
    for (int u : users[n])
      if (--waiting[u] == 0) ready.push(u);
  }
  if (order.size() != graph.nodes.size()) {
    std::string stuck;
    for (int i = 0; i < count; ++i)
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
