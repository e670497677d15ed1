// Kernels: what fusion makes of a scheduled graph, and what the memory
// planner and the emitters walk. A kernel is one unit of generated code: one
// op's own kernel, a GEMM/convolution with its elementwise epilogue, one loop
// over a chain or DAG of elementwise ops, or a view (no code at all).
//
//   std::vector<Kernel> kernels = fuse(graph);     // passes/passes.h
//   kernels[0].nodes;                              // graph node indices it holds
//   kernels_to_json(graph, kernels);               // for --dump-after and reports
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/graph.h"

namespace hybgen {

struct Target;  // ops/op.h

enum class KernelKind {
  kOp,           // one node through its op's emit_cpp
  kEpilogue,     // nodes[0] (OpDef::epilogue_axis) with the rest applied to its output before the store
  kElementwise,  // one loop over ops with OpDef::emit_scalar
  kView,         // OpDef::view: the output shares input 0's bytes; no code
};
std::string kernel_kind_name(KernelKind kind);

struct Kernel {
  std::string name;  // the name of its first node
  KernelKind kind = KernelKind::kOp;
  std::vector<int> nodes;            // indices into Graph::nodes, in evaluation order
  std::vector<std::string> inputs;   // values read from outside the kernel, in first-use order
  std::vector<std::string> outputs;  // values it stores: read by a later kernel, or graph outputs
  // The algorithm its first node's backend kernel chose (OpKernel::
  // choose_algorithm, recorded by choose_algorithms); empty when it has one.
  std::string algorithm;
};

// The kernels as JSON: name, kind, the names and ops of their nodes, inputs,
// outputs, FLOPs, the bytes they read and write, and the algorithm where one
// was chosen.
nlohmann::ordered_json kernels_to_json(const Graph& graph, const std::vector<Kernel>& kernels);

// How an epilogue reads one operand element for output element (channel, index).
enum class EpilogueOperand {
  kFull,     // same elements as the output: operand[index]
  kChannel,  // one value per output channel: operand[channel]
  kScalar,   // one value: operand[0]
  kNone,     // another broadcast: not expressible in an epilogue
};
// `operand` is the shape the op broadcasts (numpy-style) to `output`, whose
// channel axis is `channel_axis` (already normalised).
EpilogueOperand epilogue_operand(const Shape& operand, const Shape& output, int channel_axis);

// The shape input `index` of an elementwise node broadcasts as
// (OpDef::scalar_input_shape, or the input's own shape).
Shape scalar_operand_shape(const Graph& graph, const Node& node, int index);

// The kernel of node `index` alone: kElementwise for ops with emit_scalar,
// kView for views whose output is not a graph output, else kOp.
Kernel single_node_kernel(const Graph& graph, int index);

// The name under which MemoryPlan lists a kernel's scratch memory.
std::string scratch_value(const Kernel& kernel);
// Bytes of scratch memory the kernel's anchor op asks for on `target` for
// its recorded algorithm (OpKernel::scratch_bytes); within `budget` bytes where its kernel can shrink it
// (OpKernel::fit_scratch), possibly still over the budget (its smallest tile).
std::size_t kernel_scratch_bytes(const Graph& graph, const Kernel& kernel, const Target& target,
                                 std::size_t budget = static_cast<std::size_t>(-1));

// One kernel per node, in node order, none fused and views copied: what
// the emitters get when the optimizer is off.
std::vector<Kernel> unfused_kernels(const Graph& graph);

// Floating-point operations of the kernel's nodes, and the bytes of its
// inputs and outputs (weights included): what a roofline needs.
double kernel_flops(const Graph& graph, const Kernel& kernel);
double kernel_bytes(const Graph& graph, const Kernel& kernel);

}  // namespace hybgen
