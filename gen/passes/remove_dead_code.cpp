// remove_dead_code: marks what the graph outputs depend on by walking back
// from them (a node is live when any of its outputs is live; its inputs are
// then live too), erases the nodes that are not live with the types of their
// outputs, then the constants no remaining node reads. Graph inputs stay
// even when nothing reads them: they are the generated function's signature.
// The order of the remaining nodes is kept. A multi-output node stays whole
// when any one of its outputs is used.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "passes/passes.h"
#include "passes/rewrite_util.h"

namespace hybgen {

bool remove_dead_code(Graph& graph) {
  std::unordered_map<std::string, int> producer;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    for (const auto& out : graph.nodes[i].outputs) producer[out] = static_cast<int>(i);

  std::vector<bool> live(graph.nodes.size(), false);
  std::unordered_set<std::string> needed(graph.outputs.begin(), graph.outputs.end());
  std::vector<std::string> work(graph.outputs.begin(), graph.outputs.end());
  while (!work.empty()) {
    const std::string value = work.back();
    work.pop_back();
    auto it = producer.find(value);
    if (it == producer.end() || live[it->second]) continue;
    live[it->second] = true;
    for (const auto& in : graph.nodes[it->second].inputs)
      if (needed.insert(in).second) work.push_back(in);
  }

  const bool changed = std::find(live.begin(), live.end(), false) != live.end();
  if (changed) {
    std::vector<Node> kept;
    for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
      if (live[i]) {
        kept.push_back(std::move(graph.nodes[i]));
        continue;
      }
      for (const auto& out : graph.nodes[i].outputs) graph.types.erase(out);
    }
    graph.nodes = std::move(kept);
  }

  std::vector<std::string> constants;
  for (const auto& [name, constant] : graph.constants) constants.push_back(name);
  return erase_unread_constants(graph, constants) || changed;
}

}  // namespace hybgen
