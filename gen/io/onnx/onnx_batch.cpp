// import_onnx_with_batch: an ONNX model with a symbolic batch taken at run
// time (--shape input=1..64,...). The importer evaluates shape arithmetic
// (Shape -> Gather -> Concat -> Reshape, PyTorch's x.view(x.size(0), -1))
// at fixed shapes, so a model imported at one item would carry the batch
// of 1 in its Reshape targets. It is imported at one item and at two
// instead; where the two graphs differ only in a Reshape target's entry
// that doubles, that entry becomes -1 (inferred from the input's size, which
// the batch scales). Any other difference is a value computed from the batch
// that no attribute can follow, and is named.
#include <algorithm>

#include "io/onnx/onnx_model.h"
#include "ir/error.h"

namespace hybgen {
namespace {

// The Reshape target of one item with the entry that follows the batch as -1.
std::vector<int64_t> batch_free_target(const Node& node, const std::vector<int64_t>& one,
                                       const std::vector<int64_t>& two) {
  const std::string where = node_label(node.name, node.op) + ": its target shape ";
  if (one.size() != two.size()) throw Error(where + "changes rank with the batch");
  int follows = -1;
  for (std::size_t d = 0; d < one.size(); ++d) {
    if (one[d] == two[d]) continue;
    if (follows >= 0 || two[d] != 2 * one[d])
      throw Error(where + attr_value_str(one) + " at one item is " + attr_value_str(two) +
                  " at two: only one entry may grow with the batch");
    follows = static_cast<int>(d);
  }
  std::vector<int64_t> out = one;
  if (std::count(out.begin(), out.end(), -1) != 0)
    throw Error(where + attr_value_str(one) +
                " already infers an entry (-1); the batch's entry cannot be inferred too");
  out[static_cast<std::size_t>(follows)] = -1;
  return out;
}

}  // namespace

Graph import_onnx_with_batch(const std::string& path, OnnxImportOptions options,
                             const std::vector<std::string>& batch_inputs) {
  for (const auto& name : batch_inputs)
    if (!options.input_shapes.count(name) || options.input_shapes.at(name).empty())
      throw Error(path + ": the batch input " + quoted_name(name) + " needs its shape (--shape " + name + "=1..N,...)");
  Graph one = import_onnx(path, options);
  for (const auto& name : batch_inputs) options.input_shapes.at(name)[0] *= 2;
  options.note = [](const std::string&) {};  // said once, by the first import
  const Graph two = import_onnx(path, options);
  const std::string differs = path + ": at two items the graph is not the one at one item";
  if (one.nodes.size() != two.nodes.size() || one.inputs != two.inputs || one.outputs != two.outputs)
    throw Error(differs + " (" + std::to_string(one.nodes.size()) + " nodes against " +
                std::to_string(two.nodes.size()) + "): its batch cannot be taken at run time");
  for (std::size_t i = 0; i < one.nodes.size(); ++i) {
    Node& a = one.nodes[i];
    const Node& b = two.nodes[i];
    if (a.name != b.name || a.op != b.op || a.inputs != b.inputs || a.outputs != b.outputs)
      throw Error(differs + " at " + node_label(a.name, a.op) + ": its batch cannot be taken at run time");
    for (const auto& [key, value] : a.attrs.values()) {
      if (!b.attrs.has(key)) throw Error(differs + " at " + node_label(a.name, a.op) + " (attribute '" + key + "')");
      if (b.attrs.get(key) == value) continue;
      if (a.op == "Reshape" && key == "shape") {
        a.attrs.set(key, batch_free_target(a, a.attrs.get_ints(key), b.attrs.get_ints(key)));
        break;  // the attributes changed: the loop's view is stale
      }
      throw Error(node_label(a.name, a.op) + ": its attribute '" + key + "' is " + attr_value_str(value) +
                  " at one item and " + attr_value_str(b.attrs.get(key)) +
                  " at two: a value computed from the batch, which the code cannot take at run time");
    }
  }
  for (const auto& [name, constant] : one.constants) {
    auto it = two.constants.find(name);
    if (it == two.constants.end() || it->second.data != constant.data || it->second.type != constant.type)
      throw Error(path + ": the constant " + quoted_name(name) +
                  " is computed from the batch (it differs at two items), which the code cannot take at run time");
  }
  return one;
}

}  // namespace hybgen
