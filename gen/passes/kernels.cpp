#include "passes/kernels.h"

#include <algorithm>

#include "ops/op.h"
#include "ops/op_util.h"
#include "passes/passes.h"

namespace hybgen {

std::string kernel_kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::kOp: return "op";
    case KernelKind::kEpilogue: return "epilogue";
    case KernelKind::kElementwise: return "elementwise";
    case KernelKind::kView: return "view";
  }
  return "?";
}

EpilogueOperand epilogue_operand(const Shape& operand, const Shape& output, int channel_axis) {
  if (num_elements(operand) == 1) return EpilogueOperand::kScalar;
  if (operand.size() > output.size()) return EpilogueOperand::kNone;
  const std::vector<int64_t> strides = broadcast_strides(operand, output);
  bool full = true, channel = true;
  int64_t contiguous = 1;
  for (int d = static_cast<int>(output.size()) - 1; d >= 0; --d) {
    if (output[d] != 1) {
      full = full && strides[d] == contiguous;
      channel = channel && (d == channel_axis ? strides[d] == 1 : strides[d] == 0);
    }
    contiguous *= output[d];
  }
  if (full) return EpilogueOperand::kFull;
  return channel ? EpilogueOperand::kChannel : EpilogueOperand::kNone;
}

Shape scalar_operand_shape(const Graph& graph, const Node& node, int index) {
  const OpDef& def = find_op(node.op);
  const Shape& shape = graph.type(node.inputs[index]).shape;
  if (!def.scalar_input_shape) return shape;
  return def.scalar_input_shape(node.attrs, index, shape, graph.type(node.outputs[0]).shape);
}

Kernel single_node_kernel(const Graph& graph, int index) {
  const Node& node = graph.nodes[index];
  const OpDef& def = find_op(node.op);
  Kernel k;
  k.name = node.name;
  k.nodes = {index};
  for (const auto& in : node.inputs)
    if (std::find(k.inputs.begin(), k.inputs.end(), in) == k.inputs.end()) k.inputs.push_back(in);
  k.outputs = node.outputs;
  if (def.emit_scalar) {
    k.kind = KernelKind::kElementwise;
  } else if (def.view && !graph.is_output(node.outputs[0])) {
    k.kind = KernelKind::kView;
  } else {
    k.kind = KernelKind::kOp;
  }
  return k;
}

std::string scratch_value(const Kernel& kernel) { return kernel.name + "#scratch"; }

std::size_t kernel_scratch_bytes(const Graph& graph, const Kernel& kernel, const Target& target,
                                 std::size_t budget) {
  if (kernel.kind != KernelKind::kOp && kernel.kind != KernelKind::kEpilogue) return 0;
  const Node& node = graph.nodes[kernel.nodes.front()];
  const OpKernel* op_kernel = find_kernel(target.backend, find_op(node.op).name);
  if (!op_kernel || !op_kernel->scratch_bytes) return 0;
  const KernelSite site = kernel_site(graph, node, target, kernel.algorithm);
  const int64_t full = op_kernel->scratch_bytes(site);
  if (!op_kernel->fit_scratch || budget >= static_cast<std::size_t>(full)) return static_cast<std::size_t>(full);
  const int64_t fitted = op_kernel->fit_scratch(site, static_cast<int64_t>(std::min<std::size_t>(budget, INT64_MAX)));
  return static_cast<std::size_t>(std::min(fitted, full));
}

std::vector<Kernel> unfused_kernels(const Graph& graph) {
  std::vector<Kernel> kernels;
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    kernels.push_back(single_node_kernel(graph, i));
    if (kernels.back().kind == KernelKind::kView) kernels.back().kind = KernelKind::kOp;  // copies, shares nothing
  }
  return kernels;
}

double kernel_flops(const Graph& graph, const Kernel& kernel) {
  double flops = 0;
  for (int index : kernel.nodes) {
    const Node& node = graph.nodes[index];
    std::vector<TensorType> in, out;
    for (const auto& v : node.inputs) in.push_back(graph.type(v));
    for (const auto& v : node.outputs) out.push_back(graph.type(v));
    flops += op_flops(find_op(node.op), node.attrs, in, out);
  }
  return flops;
}

double kernel_bytes(const Graph& graph, const Kernel& kernel) {
  if (kernel.kind == KernelKind::kView) return 0;
  double bytes = 0;
  for (const auto& v : kernel.inputs) bytes += static_cast<double>(graph.type(v).bytes());
  for (const auto& v : kernel.outputs) bytes += static_cast<double>(graph.type(v).bytes());
  return bytes;
}

nlohmann::ordered_json kernels_to_json(const Graph& graph, const std::vector<Kernel>& kernels) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Kernel& k : kernels) {
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array(), ops = nlohmann::ordered_json::array();
    for (int index : k.nodes) {
      nodes.push_back(graph.nodes[index].name);
      ops.push_back(graph.nodes[index].op);
    }
    list.push_back({{"name", k.name},
                    {"kind", kernel_kind_name(k.kind)},
                    {"nodes", nodes},
                    {"ops", ops},
                    {"inputs", k.inputs},
                    {"outputs", k.outputs},
                    {"flops", kernel_flops(graph, k)},
                    {"bytes", kernel_bytes(graph, k)}});
    if (!k.algorithm.empty()) list.back()["algorithm"] = k.algorithm;
  }
  return list;
}

}  // namespace hybgen
