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
// value) or, in a loop, broadcast to the loop shape. Growth stops at the first
// node outside the kernel that reads one of its values, so every outside
// reader runs after the kernel's last node, and ordering kernels by their last
// node keeps the schedule topological (and the kernel graph acyclic).
//
// A kernel stores the values read outside it and the graph outputs among its
// values; the others live only in registers.
#include <algorithm>
#include <set>

#include "ops/op.h"
#include "ops/op_util.h"
#include "passes/passes.h"

namespace hybgen {
namespace {

// Whether `node` can join a kernel whose values are `members` and whose
// loop (output) shape is `loop`; `channel_axis` is set for epilogue kernels.
bool can_join(const Graph& graph, const Node& node, const std::set<std::string>& members, const Shape& loop,
              std::optional<int> channel_axis) {
  const OpDef& def = find_op(node.op);
  if (!def.emit_scalar || !def.inplace || node.outputs.size() != 1) return false;
  if (graph.type(node.outputs[0]).shape != loop) return false;
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    const Shape operand = scalar_operand_shape(graph, node, i);
    if (members.count(node.inputs[i])) {
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
  std::vector<bool> taken(count, false);
  std::vector<std::pair<int, Kernel>> by_last_node;
  for (int start = 0; start < count; ++start) {
    if (taken[start]) continue;
    taken[start] = true;
    Kernel kernel = single_node_kernel(graph, start);
    const Node& first = graph.nodes[start];
    const OpDef& def = find_op(first.op);
    std::optional<int> channel_axis;
    if (def.epilogue_axis && first.outputs.size() == 1)
      channel_axis = normalize_axis(*def.epilogue_axis, graph.type(first.outputs[0]).shape.size());
    const bool grows = kernel.kind == KernelKind::kElementwise || channel_axis;
    int last = start;
    if (grows) {
      const Shape loop = graph.type(first.outputs[0]).shape;
      std::set<std::string> members(first.outputs.begin(), first.outputs.end());
      for (int j = start + 1; j < count; ++j) {
        const Node& node = graph.nodes[j];
        const bool reads_kernel = std::any_of(node.inputs.begin(), node.inputs.end(),
                                              [&](const std::string& v) { return members.count(v) != 0; });
        if (!reads_kernel) continue;
        if (taken[j] || !can_join(graph, node, members, loop, channel_axis)) break;
        taken[j] = true;
        kernel.nodes.push_back(j);
        members.insert(node.outputs[0]);
        last = j;
      }
      if (channel_axis && kernel.nodes.size() > 1) kernel.kind = KernelKind::kEpilogue;
    }
    // Inputs from outside, outputs read outside (or graph outputs).
    std::set<int> inside(kernel.nodes.begin(), kernel.nodes.end());
    std::set<std::string> produced;
    kernel.inputs.clear();
    kernel.outputs.clear();
    for (int index : kernel.nodes) {
      for (const auto& in : graph.nodes[index].inputs)
        if (!produced.count(in) && std::find(kernel.inputs.begin(), kernel.inputs.end(), in) == kernel.inputs.end())
          kernel.inputs.push_back(in);
      for (const auto& out : graph.nodes[index].outputs) {
        produced.insert(out);
        bool escapes = graph.is_output(out);
        for (int reader : graph.consumers(out)) escapes = escapes || !inside.count(reader);
        if (escapes || kernel.nodes.size() == 1 || index == kernel.nodes.back()) kernel.outputs.push_back(out);
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
