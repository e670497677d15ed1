// Post-training int8 quantization of a float graph (TFLite's scheme,
// docs/quantization.md): from the range each value took on calibration data
// (runtime-lite/calibration.h), the same graph with every node that can
// compute in int8 doing so, and float where it cannot.
//
//   Graph g = prepare_for_quantization(load_model("m.json"));
//   std::map<std::string, ValueRange> ranges = ...;   // every input and node output of g
//   QuantizedGraph q = quantize_graph(g, ranges, {});
//   save_model(q.graph, "m_int8");
//   for (const auto& f : q.float_nodes) std::cout << f.node << ": " << f.reason << "\n";
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace hybgen {

// The smallest and largest value a graph value took (or the clipped range a
// percentile chose).
struct ValueRange {
  float min = 0.0f;
  float max = 0.0f;
};

struct QuantizeOptions {
  std::set<std::string> keep_float;  // node names that stay float
};

struct FloatNode {
  std::string node;
  std::string reason;
};

struct QuantizedGraph {
  Graph graph;
  std::vector<std::string> int8_nodes;  // nodes of the float graph now computed in int8
  std::vector<FloatNode> float_nodes;   // nodes of the float graph left in float, and why
};

// How much an int8 node's output lost: SQNR = 10 log10(sum f^2 / sum (f - q)^2)
// in dB, f the float model's value and q the quantized model's (dequantized),
// summed over all calibration batches. Infinite when they agree exactly.
// Measured by quantization_sqnr (runtime-lite/calibration.h).
struct NodeSqnr {
  std::string node;
  double db = 0;
};

// The nodes of `quantized` (quantize_graph's result, or a model it wrote)
// computed in int8 that `float_graph` (the graph it was quantized from) has
// under the same name, in `quantized`'s order: what quantization_sqnr
// measures. Both graphs typed (infer_shapes).
std::vector<std::string> int8_nodes_of(const Graph& float_graph, const Graph& quantized);

// Asymmetric int8 per tensor for values in `range` (widened to hold 0, so
// that 0 is exact): scale (max - min) / 255, zero point round(-128 - min /
// scale) clamped to [-128, 127]. Error for a range that is not finite.
Quantization activation_quantization(ValueRange range);

// The float graph as calibration and quantize_graph read it: validated,
// typed, identities removed, BatchNorm and per-channel scales folded into
// the layers before them, constant subgraphs folded, scheduled. Calibrate
// this graph, so that the ranges name its values.
Graph prepare_for_quantization(Graph graph);

// The int8 graph. `graph` is a float graph with weight data (ideally
// prepare_for_quantization's); `ranges` the range of each graph input and
// node output. Graph inputs and outputs keep their names and stay float: a
// quantize node follows each input an int8 node reads, a dequantize node
// precedes each output an int8 node makes.
//
// A node computes in int8 when its op's reference lists int8, the C++
// backend has an int8 kernel for it (or it is elementwise), and the op's
// shape rule accepts the node's inputs as int8: first without out_scale
// (the form that keeps its input's quantization: relu), else with
// out_scale and out_zero_point from its output's range where the op has
// those attributes (a table, an add, a softmax). Its weight (input 1 of an
// op with OpDef::weight_shapes) is quantized int8 symmetric per output
// channel, its bias (input 2) int32 at scale data scale x weight scale. A
// node without weights none of whose inputs is int8 yet, and any node
// that cannot, stays float, its int8 inputs dequantized. A node whose
// output alone feeds an op that keeps its input's quantization (relu,
// clip), or a Concat, takes that op's output range, as TFLite does, so the
// activation costs no precision and the Concat copies instead of
// requantizing. Error when a value lacks a range or the graph has no
// weight data.
QuantizedGraph quantize_graph(const Graph& graph, const std::map<std::string, ValueRange>& ranges,
                              const QuantizeOptions& options = {});

}  // namespace hybgen
