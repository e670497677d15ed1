// check_batch_separable and batch_values: a run-time batch (Graph::batch).
//
// The graph holds one batch item; run() takes `batch` of them, stacked along
// the first axis of each batched input, and runs every kernel that reads
// them once per item (emit/kernel_walk.cpp). That computes what the graph at
// `batch` items computes exactly when each node is separable: its output at
// n items is its outputs at one item, stacked. check_batch_separable proves
// it node by node on the graph as loaded, before the optimizer bakes shapes
// into attributes (a fused batch_dot's strides):
//  - shapes: the graph is inferred again at 2, 3 and the most items; every value computed
//    from a batched input must double its first dimension and keep the
//    others (a Reshape that folds the batch into another axis does not), and
//    every other value must keep its shape;
//  - semantics: no node may compute across the first axis
//    (OpDef::mixes_first_axis: a softmax over it, a Concat along it).
// Errors name the node. batch_values then says which values of the
// optimized graph hold items: those computed from a batched input.
#include <algorithm>
#include <set>

#include "ir/error.h"
#include "ir/limits.h"
#include "ops/op.h"
#include "passes/passes.h"

namespace hybgen {

void check_batch_separable(const Graph& graph) {
  const BatchRange& batch = graph.batch;
  if (!batch.variable()) return;
  if (batch.min < 1 || batch.max < batch.min)
    throw Error("run-time batch " + std::to_string(batch.min) + ".." + std::to_string(batch.max) +
                ": the bounds must satisfy 1 <= min <= max");
  if (batch.inputs.empty()) throw Error("a run-time batch needs at least one input that takes it");
  for (const auto& input : batch.inputs) {
    if (!graph.is_input(input)) throw Error("run-time batch: " + quoted_name(input) + " is not an input of the graph");
    const TensorType& type = graph.type(input);
    if (type.shape.empty())
      throw Error("run-time batch: input " + quoted_name(input) + " is a scalar: it has no batch axis");
    Shape largest = type.shape;
    largest[0] *= batch.max;
    checked_tensor_bytes(largest, dtype_size(type.dtype),
                         "run-time batch: input " + quoted_name(input) + " at " + std::to_string(batch.max) + " items");
  }
  // At two and three items (and the most): a shape rule that follows the
  // batch at one count by coincidence (a broadcast of 2 against 2) does not at all.
  std::vector<int64_t> counts = {2, 3};
  if (batch.max > 3) counts.push_back(batch.max);
  std::vector<Graph> scaled;
  for (int64_t n : counts) {
    Graph at = graph;
    for (const auto& input : batch.inputs) at.types.at(input).shape[0] *= n;
    try {
      infer_shapes(at);
    } catch (const Error& e) {
      throw Error("the graph cannot take a run-time batch: at " + std::to_string(n) + " items, " + e.what());
    }
    scaled.push_back(std::move(at));
  }
  std::set<std::string> batched(batch.inputs.begin(), batch.inputs.end());
  for (int index : topological_order(graph)) {
    const Node& node = graph.nodes[index];
    const OpDef& def = find_op(node.op);
    std::vector<TensorType> in;
    std::vector<bool> in_batch;
    for (const auto& value : node.inputs) {
      in.push_back(graph.type(value));
      in_batch.push_back(batched.count(value) != 0);
    }
    const bool reads_items = std::find(in_batch.begin(), in_batch.end(), true) != in_batch.end();
    const std::string label = node_label(node.name, node.op);
    if (reads_items && def.mixes_first_axis && def.mixes_first_axis(normalize_attrs(def, node.attrs), in, in_batch))
      throw Error(label +
                  " cannot take a run-time batch: it computes across the first axis, where the batch items lie");
    for (const auto& out : node.outputs) {
      const Shape& one = graph.type(out).shape;
      for (std::size_t c = 0; c < counts.size(); ++c) {
        const Shape& at = scaled[c].type(out).shape;
        Shape expected = one;
        if (reads_items && !expected.empty()) expected[0] *= counts[c];
        if (at == expected && (!reads_items || !one.empty())) continue;
        throw Error(label + " cannot take a run-time batch: its output " + quoted_name(out) + " is " + shape_str(one) +
                    " at one item and " + shape_str(at) + " at " + std::to_string(counts[c]) +
                    (reads_items ? "; only its first dimension may grow with the batch" : ""));
      }
      if (!reads_items) continue;
      batched.insert(out);
      Shape largest = one;
      largest[0] *= batch.max;
      checked_tensor_bytes(largest, dtype_size(graph.type(out).dtype),
                           label + ": output " + quoted_name(out) + " at " + std::to_string(batch.max) + " items");
    }
  }
}

std::set<std::string> batch_values(const Graph& graph) {
  std::set<std::string> batched;
  if (!graph.batch.variable()) return batched;
  batched.insert(graph.batch.inputs.begin(), graph.batch.inputs.end());
  for (int index : topological_order(graph)) {
    const Node& node = graph.nodes[index];
    const bool reads_items = std::any_of(node.inputs.begin(), node.inputs.end(),
                                         [&](const std::string& v) { return batched.count(v) != 0; });
    if (reads_items) batched.insert(node.outputs.begin(), node.outputs.end());
  }
  return batched;
}

}  // namespace hybgen
