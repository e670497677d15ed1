// fuse: groups the scheduled nodes into kernels by fusion class, never by op
// name (TVM's rule).
//
// Walking the schedule, each node not yet taken starts a kernel:
//  - an op that takes an epilogue (OpDef::epilogue_axis: convolution, dense)
//    anchors an epilogue kernel;
//  - an elementwise or broadcast op (OpDef::emit_scalar) starts a loop;
//  - anything else is a kernel of its own (a view when OpDef::view).
// A started kernel then takes, in schedule order, every later node that reads
// one of its values and can join: an elementwise op whose output has the
// kernel's loop shape, whose inputs from the kernel are full-size, and whose
// other inputs an epilogue can index (same size, one per channel, or one
// value) or, in a loop, broadcast to the loop shape. An epilogue after a
// float anchor stays of its dtype (the float kernels store their own type;
// the quantized ones store whatever their epilogue returns), so a quantize
// after a float layer is a loop of its own. Growth stops at the first
// node outside the kernel that reads one of its values, so every outside
// reader runs after the kernel's last node, and ordering kernels by their last
// node keeps the schedule topological (and the kernel graph acyclic).
//
// A kernel stores the values read outside it and the graph outputs among its
// values; the others live only in registers.
//
// Cost: who makes and who reads each value is looked up once (ValueIndex)
// into node-to-node edges, and a growing kernel looks only at the readers of
// its own values, in schedule order, so fusing takes O(n log n) in the nodes
// and edges, not a scan of the rest of the schedule per kernel.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "ops/op.h"
#include "ops/op_util.h"
#include "passes/passes.h"

namespace hybgen {
namespace {

// Whether `node` can join a kernel whose loop (output) shape is `loop`;
// `from_kernel[i]`: whether input i is one of the kernel's values;
// `channel_axis` is set for epilogue kernels.
bool can_join(const Graph& graph, const Node& node, const std::vector<bool>& from_kernel, const Shape& loop,
              std::optional<int> channel_axis, std::optional<DType> epilogue_dtype) {
  const OpDef& def = find_op(node.op);
  if (!def.emit_scalar || !def.inplace || node.outputs.size() != 1) return false;
  if (graph.type(node.outputs[0]).shape != loop) return false;
  if (epilogue_dtype && graph.type(node.outputs[0]).dtype != *epilogue_dtype) return false;
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    const Shape operand = scalar_operand_shape(graph, node, i);
    if (from_kernel[i]) {
      if (operand != loop) return false;
    } else if (channel_axis) {
      if (epilogue_operand(operand, loop, *channel_axis) == EpilogueOperand::kNone) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<Kernel> fuse(const Graph& graph) {
  const int count = static_cast<int>(graph.nodes.size());
  // The edges between nodes: per node, the node making each input (-1 for
  // graph inputs and weights), and the nodes reading each value.
  const ValueIndex index(graph);
  std::vector<std::size_t> first_input(count + 1, 0);  // node n's inputs: makers[first_input[n] ...]
  std::vector<int> makers;
  for (int n = 0; n < count; ++n) {
    for (const auto& in : graph.nodes[n].inputs) makers.push_back(index.producer(in));
    first_input[n + 1] = makers.size();
  }
  auto maker = [&](int n, std::size_t i) { return makers[first_input[n] + i]; };
  const std::unordered_set<std::string> graph_outputs(graph.outputs.begin(), graph.outputs.end());
  std::vector<bool> taken(count, false);
  std::vector<int> kernel_of(count, -1);  // the first node of the kernel a node joined
  std::vector<std::pair<int, Kernel>> by_last_node;
  for (int start = 0; start < count; ++start) {
    if (taken[start]) continue;
    taken[start] = true;
    kernel_of[start] = start;
    Kernel kernel = single_node_kernel(graph, start);
    const Node& first = graph.nodes[start];
    const OpDef& def = find_op(first.op);
    std::optional<int> channel_axis;
    std::optional<DType> epilogue_dtype;  // the dtype an epilogue's values keep (see can_join)
    if (def.epilogue_axis && first.outputs.size() == 1) {
      const TensorType& anchor = graph.type(first.outputs[0]);
      channel_axis = normalize_axis(*def.epilogue_axis, anchor.shape.size());
      if (anchor.quantization.empty()) epilogue_dtype = anchor.dtype;
    }
    const bool grows = kernel.kind == KernelKind::kElementwise || channel_axis;
    int last = start;
    if (grows) {
      const Shape loop = graph.type(first.outputs[0]).shape;
      // The later nodes reading one of the kernel's values, in schedule order
      // (earlier readers were passed already).
      std::set<int> candidates;
      std::vector<bool> from_kernel;
      auto add_readers = [&](int node) {
        for (const auto& out : graph.nodes[node].outputs)
          for (int reader : index.consumers(out))
            if (reader > node) candidates.insert(reader);
      };
      add_readers(start);
      while (!candidates.empty()) {
        const int j = *candidates.begin();
        candidates.erase(candidates.begin());
        const Node& node = graph.nodes[j];
        from_kernel.assign(node.inputs.size(), false);
        for (std::size_t i = 0; i < from_kernel.size(); ++i)
          from_kernel[i] = maker(j, i) >= 0 && kernel_of[maker(j, i)] == start;
        if (taken[j] || !can_join(graph, node, from_kernel, loop, channel_axis, epilogue_dtype)) break;
        taken[j] = true;
        kernel_of[j] = start;
        kernel.nodes.push_back(j);
        add_readers(j);
        last = j;
      }
      if (channel_axis && kernel.nodes.size() > 1) kernel.kind = KernelKind::kEpilogue;
    }
    // Inputs from outside, outputs read outside (or graph outputs). The
    // kernel's nodes are in schedule order, so a value made inside is made
    // before any node of the kernel reads it.
    std::unordered_set<std::string> listed;
    kernel.inputs.clear();
    kernel.outputs.clear();
    for (int n : kernel.nodes) {
      const Node& node = graph.nodes[n];
      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
        const int m = maker(n, i);
        const bool made_inside = m >= 0 && m < n && kernel_of[m] == start;
        if (!made_inside && listed.insert(node.inputs[i]).second) kernel.inputs.push_back(node.inputs[i]);
      }
      for (const auto& out : node.outputs) {
        bool escapes = graph_outputs.count(out) != 0;
        for (int reader : index.consumers(out)) escapes = escapes || kernel_of[reader] != start;
        if (escapes || kernel.nodes.size() == 1 || n == kernel.nodes.back()) kernel.outputs.push_back(out);
      }
    }
    by_last_node.emplace_back(last, std::move(kernel));
  }
  std::stable_sort(by_last_node.begin(), by_last_node.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Kernel> kernels;
  for (auto& [last, kernel] : by_last_node) kernels.push_back(std::move(kernel));
  return kernels;
}

}  // namespace hybgen
