#include "passes/rewrite_util.h"

#include <algorithm>
#include <unordered_map>

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
  // Which candidates some node reads, in one walk over the nodes (asking
  // Graph::consumers per candidate would walk them once per candidate).
  std::unordered_map<std::string, bool> read;
  for (const std::string& value : candidates)
    if (graph.is_constant(value)) read.emplace(value, false);
  if (read.empty()) return false;
  for (const Node& node : graph.nodes)
    for (const std::string& in : node.inputs) {
      auto it = read.find(in);
      if (it != read.end()) it->second = true;
    }
  bool erased = false;
  for (const std::string& value : candidates) {
    auto it = read.find(value);
    if (it == read.end() || it->second || graph.is_output(value)) continue;
    read.erase(it);  // a candidate listed twice is erased once
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

bool rewrite_each_node(Graph& graph, std::optional<int> (*fuse_at)(Graph&, const LazyValueIndex&, int)) {
  bool changed = false;
  LazyValueIndex index(graph);
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i)
    if (const std::optional<int> touched = fuse_at(graph, index, i)) {
      changed = true;
      index.reset();
      i = *touched - 1;
    }
  return changed;
}

RewriteIndex::RewriteIndex(const Graph& graph) : inputs_(graph.inputs.begin(), graph.inputs.end()) {
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) add(graph.nodes[i], static_cast<int>(i));
}

void RewriteIndex::add(const Node& node, int id) {
  for (const auto& in : node.inputs) readers_[in].insert(id);
  ++node_names_[node.name];
  for (const auto& out : node.outputs) ++node_names_[out];
}

void RewriteIndex::remove(const Node& node, int id) {
  for (const auto& in : node.inputs) {
    auto it = readers_.find(in);
    if (it == readers_.end()) continue;
    it->second.erase(id);
    if (it->second.empty()) readers_.erase(it);
  }
  auto forget = [&](const std::string& name) {
    auto it = node_names_.find(name);
    if (it != node_names_.end() && --it->second == 0) node_names_.erase(it);
  };
  forget(node.name);
  for (const auto& out : node.outputs) forget(out);
}

const std::set<int>& RewriteIndex::readers(const std::string& value) const {
  static const std::set<int> none;
  auto it = readers_.find(value);
  return it == readers_.end() ? none : it->second;
}

std::string RewriteIndex::fresh_name(const Graph& graph, const std::string& base) const {
  auto taken = [&](const std::string& name) {
    return graph.types.count(name) != 0 || inputs_.count(name) != 0 || graph.is_constant(name) ||
           node_names_.count(name) != 0;
  };
  std::string name = base;
  for (int suffix = 1; taken(name); ++suffix) name = base + "_" + std::to_string(suffix);
  return name;
}

bool RewriteIndex::erase_unread_constants(Graph& graph, const std::vector<std::string>& candidates) const {
  bool erased = false;
  for (const std::string& value : candidates) {
    if (!graph.is_constant(value) || graph.is_output(value) || !readers(value).empty()) continue;
    graph.constants.erase(value);
    graph.types.erase(value);
    erased = true;
  }
  return erased;
}

}  // namespace hybgen
