// dequantize_graph: a quantized graph as the float graph it approximates, for
// a backend without int8 kernels (Target::int8_through_float: CUDA, for now).
// Every quantized constant becomes float32 holding the real numbers it stands
// for (scale * (q - zero_point), computed by the dequantize op's reference,
// per tensor or per axis), so an int8 weight and its int32 bias become a
// float weight and bias. quantize and dequantize nodes become _copy
// (identities, which remove_identities then drops, keeping graph output
// names), and the output-quantization attributes (out_scale,
// out_zero_point) are dropped, so each int8 layer computes its float op.
// Activations are no longer rounded to int8: the result approximates the int8
// model by its quantization error, computed on dequantized weights.
#include "ops/evaluate.h"
#include "ops/op.h"
#include "passes/passes.h"

namespace hybgen {

bool dequantize_graph(Graph& graph) {
  bool changed = false;
  for (auto& [name, constant] : graph.constants) {
    if (constant.type.quantization.empty()) continue;
    const TensorType real{constant.type.shape};
    if (constant.has_data()) {
      const Node dequantize{name, "dequantize", {}, {name}, {name}};
      constant = evaluate_node(dequantize, {&constant}, {real})[0];
    } else {
      constant.type = real;  // a model read without its weights: types only
    }
    graph.types[name] = real;
    changed = true;
  }
  for (Node& node : graph.nodes) {
    const std::string op = find_op(node.op).name;
    if (op == "quantize" || op == "dequantize") {
      node.op = "_copy";
      node.attrs = Attrs{};
      changed = true;
    } else if (node.attrs.has("out_scale") || node.attrs.has("out_zero_point")) {
      node.attrs.erase("out_scale");
      node.attrs.erase("out_zero_point");
      changed = true;
    }
  }
  return changed;
}

}  // namespace hybgen
