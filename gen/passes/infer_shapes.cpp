// infer_shapes: walks the nodes in topological order and sets the type of
// every node output from its op's shape rule. Inputs and weights carry their
// types already; a rule's complaint is reported against its node.
#include "ir/error.h"
#include "ir/limits.h"
#include "ops/op.h"
#include "passes/passes.h"

namespace hybgen {

bool infer_shapes(Graph& graph) {
  bool changed = false;
  for (int index : topological_order(graph)) {
    const Node& node = graph.nodes[index];
    auto label = [&] { return node_label(node.name, node.op); };  // for messages only
    const OpDef& def = find_op(node.op);
    std::vector<TensorType> in;
    for (const auto& value : node.inputs) {
      auto it = graph.types.find(value);
      if (it == graph.types.end()) throw Error(label() + ": input " + quoted_name(value) + " has no known type");
      in.push_back(it->second);
    }
    std::vector<TensorType> out;
    try {
      out = def.infer(normalize_attrs(def, node.attrs), in);
    } catch (const Error& e) {
      std::string shapes;
      for (const auto& t : in) shapes += (shapes.empty() ? "" : ", ") + shape_str(t.shape);
      throw Error(label() + ": " + e.what() + " (input shapes: " + shapes + ")");
    }
    if (out.size() != node.outputs.size())
      throw Error(label() + ": the shape rule gave " + std::to_string(out.size()) + " outputs for " +
                  std::to_string(node.outputs.size()));
    for (std::size_t i = 0; i < out.size(); ++i) {
      try {
        checked_tensor_bytes(out[i].shape, dtype_size(out[i].dtype), "");
      } catch (const Error&) {  // the message's context is put together only for a shape it refuses
        checked_tensor_bytes(out[i].shape, dtype_size(out[i].dtype), label() + ": output " + quoted_name(node.outputs[i]));
      }
      auto [it, fresh] = graph.types.emplace(node.outputs[i], out[i]);
      if (!fresh && it->second != out[i]) it->second = out[i];
      else if (!fresh) continue;
      changed = true;
    }
  }
  return changed;
}

}  // namespace hybgen
