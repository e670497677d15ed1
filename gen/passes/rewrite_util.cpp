#include "passes/rewrite_util.h"

#include <algorithm>

namespace hybgen {

std::string fresh_name(const Graph& graph, const std::string& base) {
  auto taken = [&](const std::string& name) {
    return graph.types.count(name) != 0 || graph.is_input(name) || graph.is_constant(name) ||
           graph.producer(name) >= 0 ||
           std::any_of(graph.nodes.begin(), graph.nodes.end(), [&](const Node& n) { return n.name == name; });
  };
  std::string name = base;
  for (int suffix = 1; taken(name); ++suffix) name = base + "_" + std::to_string(suffix);
  return name;
}

bool has_constant_data(const Graph& graph, const std::string& value) {
  auto it = graph.constants.find(value);
  return it != graph.constants.end() && it->second.has_data() && it->second.type.dtype == DType::kFloat32;
}

bool erase_unread_constants(Graph& graph, const std::vector<std::string>& candidates) {
  bool erased = false;
  for (const std::string& value : candidates) {
    if (!graph.is_constant(value) || graph.is_output(value) || !graph.consumers(value).empty()) continue;
    graph.constants.erase(value);
    graph.types.erase(value);
    erased = true;
  }
  return erased;
}

int replace_nodes(Graph& graph, std::vector<int> nodes, int place, Node replacement) {
  std::sort(nodes.rbegin(), nodes.rend());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  const auto& kept = replacement.outputs;
  for (int index : nodes)
    for (const std::string& value : graph.nodes[index].outputs)
      if (std::find(kept.begin(), kept.end(), value) == kept.end()) graph.types.erase(value);
  graph.nodes[place] = std::move(replacement);
  for (int index : nodes)
    if (index != place) graph.nodes.erase(graph.nodes.begin() + index);
  return nodes.back();
}

bool rewrite_each_node(Graph& graph, std::optional<int> (*fuse_at)(Graph&, int)) {
  bool changed = false;
  for (int index = 0; index < static_cast<int>(graph.nodes.size()); ++index)
    if (const std::optional<int> touched = fuse_at(graph, index)) {
      changed = true;
      index = *touched - 1;
    }
  return changed;
}

}  // namespace hybgen
