// remove_identities: drops nodes that forward input 0 unchanged at inference
// (OpDef::is_identity: Dropout, _copy). Readers of the identity's output read
// its input instead. Graph output names are part of the generated API, so
// when the identity produces a graph output, the node feeding it is renamed
// to produce that name; if the input is itself a graph input, weight or
// output, the identity stays (it becomes a copy).
#include <algorithm>

#include "ops/op.h"
#include "passes/passes.h"

namespace hybgen {
namespace {

void rename_value(Graph& g, const std::string& from, const std::string& to) {
  for (Node& n : g.nodes) {
    std::replace(n.inputs.begin(), n.inputs.end(), from, to);
    std::replace(n.outputs.begin(), n.outputs.end(), from, to);
  }
  std::replace(g.outputs.begin(), g.outputs.end(), from, to);
  auto it = g.types.find(from);
  if (it != g.types.end()) {
    g.types[to] = it->second;
    g.types.erase(from);
  }
}

}  // namespace

bool remove_identities(Graph& graph) {
  bool changed = false;
  for (std::size_t i = 0; i < graph.nodes.size();) {
    const Node node = graph.nodes[i];
    const OpDef& def = find_op(node.op);
    if (!def.is_identity || !def.is_identity(node.attrs) || node.inputs.empty() || node.outputs.size() != 1) {
      ++i;
      continue;
    }
    const std::string in = node.inputs[0], out = node.outputs[0];
    if (graph.is_output(out)) {
      if (graph.is_input(in) || graph.is_constant(in) || graph.is_output(in)) {
        ++i;
        continue;
      }
      graph.nodes.erase(graph.nodes.begin() + static_cast<long>(i));
      graph.types.erase(out);
      rename_value(graph, in, out);
    } else {
      graph.nodes.erase(graph.nodes.begin() + static_cast<long>(i));
      graph.types.erase(out);
      rename_value(graph, out, in);
    }
    changed = true;
  }
  return changed;
}

}  // namespace hybgen
