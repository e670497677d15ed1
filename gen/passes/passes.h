// Graph passes. Each is a free function in its own file (passes/NAME.cpp)
// that opens with a comment on its algorithm; transforming passes return
// whether they changed the graph. compile_graph() (pipeline.h) runs them in
// order.
//
//   validate(g);            // throws Error naming the node
//   infer_shapes(g);
//   if (target.int8_through_float) dequantize_graph(g);
//   remove_identities(g);
//   remove_dead_code(g); fold_qdq(g); if (quantized edges) quantized_io(g); lower_batch_norm(g); fold_scale_shift(g);
//   fold_constants(g); fuse_pointwise_depthwise(g); fuse_strided_batch_dot(g); fuse_attention(g, target);
//   half_storage(g, target);
//   check_kernels(g, target); schedule(g);
//   std::vector<Kernel> kernels = schedule_kernels(g, fuse(g), target);
//   MemoryPlan plan = plan_memory(g, kernels, target);
#pragma once

#include <set>
#include <string>

#include "ir/graph.h"
#include "passes/kernels.h"
#include "passes/memory_plan.h"
#include "targets/target.h"

namespace hybgen {

// Checks structure and fills attribute defaults: every op is registered
// (all unknown ops listed in one Error), every input is defined (input,
// constant or a node output), every value has one producer, node and value
// names are unique, input counts match the schema, attributes match it, no
// cycle exists, outputs are defined. Returns whether attributes changed.
bool validate(Graph& graph);

// Computes the type of every node output from the op's shape rule; Error
// names the node whose rule failed and why.
bool infer_shapes(Graph& graph);

// A graph with a run-time batch (Graph::batch): Error naming the first node
// whose output at n items is not its outputs at one item stacked (shapes
// inferred again at 2, 3 and the most items, OpDef::mixes_first_axis). Nothing to check
// for a fixed batch. On the graph as loaded, shapes inferred.
void check_batch_separable(const Graph& graph);
// The values that hold batch items: Graph::batch's inputs and everything
// computed from them (empty for a fixed batch).
std::set<std::string> batch_values(const Graph& graph);

// For a backend without int8 kernels (Target::int8_through_float): every
// quantized constant becomes the float32 values it stands for, quantize and
// dequantize nodes become _copy (identities), and out_scale/out_zero_point
// are dropped, so the graph computes in float on dequantized weights. Returns
// whether it changed anything.
bool dequantize_graph(Graph& graph);

// Removes nodes that forward their input unchanged at inference (Dropout,
// _copy). Graph output names are kept: when an identity's output is a graph
// output, its producer takes over that name.
bool remove_identities(Graph& graph);

// --precision fp16/bf16 (CUDA): every node whose kernel computes the half
// type stores its float values as float16 / bfloat16; weights are converted
// at generation time and _storage_cast nodes convert where a value crosses
// between half and float32 nodes, so the graph's inputs and outputs stay
// float32, or with `half_edges` (--io-precision half) take the half type
// too. Does nothing at other precisions. Returns whether it changed the graph.
bool half_storage(Graph& graph, const Target& target, bool half_edges = false);

// Throws Error naming every node that has no kernel on `target`'s backend,
// or whose inputs or outputs are of a dtype that kernel does not compute.
void check_kernels(const Graph& graph, const Target& target);

// Removes nodes none of whose outputs reach a graph output, then constants no
// remaining node reads that are not outputs. Graph inputs always stay.
bool remove_dead_code(Graph& graph);

// Rewrites dequantize -> Convolution/FullyConnected -> quantize (a QDQ
// model's layers) into the quantized layer, with an int32 bias, and removes
// quantize(dequantize(x)) pairs that give x back.
bool fold_qdq(Graph& graph);

// --io-precision quantized: each graph input read only by quantize nodes of
// one quantization takes their output's integer type and they go; each
// output made by a dequantize takes its input's value and type (keeping the
// output's name) and the dequantize goes. Error naming every other float
// edge. Returns whether it changed the graph.
bool quantized_io(Graph& graph);

// Rewrites an inference BatchNorm with constant statistics as
// broadcast_mul(x, scale) then broadcast_add(., shift); the add keeps the
// BatchNorm's name and output value.
bool lower_batch_norm(Graph& graph);

// Folds per-output-channel mul/div/add/sub (broadcast or scalar) by constants
// into the weights and bias of the Convolution or FullyConnected producing
// their input, when it has no other reader; shared weights are copied first.
bool fold_scale_shift(Graph& graph);

// Evaluates nodes whose inputs are all constants with data, in topological
// order, with the reference kernels; their outputs become constants.
bool fold_constants(Graph& graph);

// Replaces a 1x1 convolution, at most a relu or clip, and the depthwise
// convolution that alone reads its result with one _pointwise_depthwise_conv
// node, whose kernel computes the intermediate a block of channels at a time.
bool fuse_pointwise_depthwise(Graph& graph);

// Replaces a batch_dot whose operands come through, or whose result goes
// through, reshapes and transposes (attention heads) with one
// _strided_batch_dot node that reads and writes the tensors beyond those
// views in place.
bool fuse_strided_batch_dot(Graph& graph);

// Replaces attention's q k^T -> scale -> softmax (last axis) -> p v, each
// product a _strided_batch_dot or batch_dot, with one _attention node, where
// the target's backend has a kernel for it that takes the node's sizes.
bool fuse_attention(Graph& graph, const Target& target);

// Orders nodes topologically, keeping the existing order where it is already
// valid, so the order is deterministic.
bool schedule(Graph& graph);
// The stable topological order schedule() applies, as node indices; Error on a cycle.
std::vector<int> topological_order(const Graph& graph);

// Groups the scheduled nodes into kernels by fusion class: epilogues into
// GEMM/convolution, elementwise chains and DAGs into one loop, views as no
// code (passes/kernels.h). Ordered by their last node, so still topological.
std::vector<Kernel> fuse(const Graph& graph);

// Records in each op kernel the algorithm its backend kernel chooses for
// `target` (OpKernel::choose_algorithm; Kernel::algorithm), which the memory
// plan, the packing of weights and the printers then read.
std::vector<Kernel> choose_algorithms(const Graph& graph, std::vector<Kernel> kernels, const Target& target);

// Reorders kernels, among valid orders, to the one whose memory plan for
// `target` (with small_arena, as plan_memory) needs the smallest arena.
std::vector<Kernel> schedule_kernels(const Graph& graph, std::vector<Kernel> kernels, const Target& target,
                                     bool small_arena = false);

// Liveness over the kernel order, then offsets in one arena, with the
// scratch the kernels need on `target`; with share_buffers, views, Concat
// inputs and in-place results share bytes; with small_arena, scratch that
// would set the arena shrinks (smaller im2col tiles) into the room the
// other buffers leave (MemoryPlan::small_arena_bound tells what it gives).
MemoryPlan plan_memory(const Graph& graph, const std::vector<Kernel>& kernels, const Target& target,
                       bool share_buffers = true, bool small_arena = false);

}  // namespace hybgen
