// remove_identities: drops nodes that forward input 0 unchanged at inference
// (OpDef::is_identity: Dropout, _copy; OpDef::is_identity_on: a quantized
// relu whose zero point is its dtype's lowest value). Readers of the identity's output read
// its input instead. Graph output names are part of the generated API, so
// when the identity produces a graph output, the node feeding it is renamed
// to produce that name; if the input is itself a graph input, weight or
// output, the identity stays (it becomes a copy).
//
// One walk over the nodes: each rename is recorded (old name -> new name) and
// applied to the nodes that remain once, at the end, rather than to every
// node per identity, so many identities cost no more than one. It gives the
// same graph as renaming at once: graph inputs, constants and graph outputs
// are never renamed, and a name renamed away never comes back, so a value's
// current name is its recorded renames followed to the end.
#include <string>
#include <unordered_map>

#include "ops/op.h"
#include "passes/passes.h"

namespace hybgen {

bool remove_identities(Graph& graph) {
  std::unordered_map<std::string, std::string> renamed;  // a name renamed away -> the name it took
  auto current = [&](const std::string& value) {
    auto head = renamed.find(value);
    if (head == renamed.end()) return value;
    std::string name = head->second;
    for (auto it = renamed.find(name); it != renamed.end(); it = renamed.find(name)) name = it->second;
    head->second = name;  // the next lookup of `value` takes one step
    return name;
  };
  std::vector<bool> removed(graph.nodes.size(), false);
  bool changed = false;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    const OpDef& def = find_op(node.op);
    if (node.inputs.empty() || node.outputs.size() != 1) continue;
    const std::string in = current(node.inputs[0]), out = current(node.outputs[0]);
    auto tin = graph.types.find(in), tout = graph.types.find(out);
    const bool identity =
        (def.is_identity && def.is_identity(node.attrs)) ||
        (def.is_identity_on && tin != graph.types.end() && def.is_identity_on(node.attrs, tin->second));
    if (!identity) continue;
    // A Cast between dtypes changes the values' type, whatever its attributes say.
    if (tin != graph.types.end() && tout != graph.types.end() && tin->second.dtype != tout->second.dtype) continue;
    if (graph.is_output(out)) {
      if (graph.is_input(in) || graph.is_constant(in) || graph.is_output(in)) continue;
      graph.types.erase(out);
      renamed[in] = out;  // the node feeding the identity now makes the graph output
      auto it = graph.types.find(in);
      if (it != graph.types.end()) {
        const TensorType type = it->second;
        graph.types.erase(it);
        graph.types[out] = type;
      }
    } else {
      graph.types.erase(out);
      renamed[out] = in;  // readers of the identity read its input
    }
    removed[i] = true;
    changed = true;
  }
  if (!changed) return false;
  std::vector<Node> kept;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (removed[i]) continue;
    Node& node = graph.nodes[i];
    for (auto& v : node.inputs) v = current(v);
    for (auto& v : node.outputs) v = current(v);
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
  return true;
}

}  // namespace hybgen
