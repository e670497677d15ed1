// quantized_io (--io-precision quantized): a quantized model's inputs and
// outputs carry its integers, as TensorFlow Lite Micro's do, instead of
// float32. A graph input read only by `quantize` nodes of one quantization
// takes that quantization's type (int8 or uint8) and the quantize nodes go:
// the caller passes what they would have computed. A graph output made by a
// `dequantize` keeps its name, which its producer's value takes over with
// its integer type, and the dequantize goes. So a microcontroller's
// inference has no float instruction from its first byte to its last, and
// no conversions at its edges.
//
// Every edge that is not quantized there is named in one Error: a float
// input or output would leave the caller guessing which parameters take
// integers. An edge that is already an integer stays as it is.
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/error.h"
#include "ir/names.h"
#include "passes/passes.h"

namespace hybgen {
namespace {

std::string node_text(const Node& node) { return quoted_name(node.name) + " (" + node.op + ")"; }

}  // namespace

bool quantized_io(Graph& graph) {
  const ValueIndex index(graph);
  std::vector<std::string> problems;
  std::unordered_map<std::string, std::string> renamed;  // a removed node's output -> the value now in its place
  std::vector<bool> removed(graph.nodes.size(), false);
  // Types change only once every edge passed: a refused graph stays as it was.
  std::map<std::string, TensorType> retyped;
  std::vector<std::string> untyped;

  for (const std::string& in : graph.inputs) {
    if (graph.type(in).dtype != DType::kFloat32) continue;
    const std::vector<int>& readers = index.consumers(in);
    if (readers.empty()) continue;  // not read: its values do not matter
    const Node* quantize = nullptr;
    std::string problem;
    for (int r : readers) {
      const Node& reader = graph.nodes[static_cast<std::size_t>(r)];
      if (reader.op != "quantize") {
        problem = "input " + quoted_name(in) + " is read by " + node_text(reader) + ", not only by a quantize";
        break;
      }
      if (quantize && graph.type(reader.outputs[0]) != graph.type(quantize->outputs[0])) {
        problem = "input " + quoted_name(in) + " is quantized two ways (" + node_text(*quantize) + " and " +
                  node_text(reader) + ")";
        break;
      }
      if (graph.is_output(reader.outputs[0])) {
        problem = "output " + quoted_name(reader.outputs[0]) + " is input " + quoted_name(in) + " quantized";
        break;
      }
      quantize = &reader;
    }
    if (graph.is_output(in)) problem = "input " + quoted_name(in) + " is also an output";
    if (!problem.empty()) {
      problems.push_back(problem);
      continue;
    }
    retyped[in] = graph.type(quantize->outputs[0]);
    for (int r : readers) {
      const std::string& out = graph.nodes[static_cast<std::size_t>(r)].outputs[0];
      untyped.push_back(out);
      renamed[out] = in;
      removed[static_cast<std::size_t>(r)] = true;
    }
  }

  for (const std::string& out : graph.outputs) {
    if (graph.types.count(out) && graph.type(out).dtype != DType::kFloat32) continue;
    const int p = index.producer(out);
    if (p < 0) {
      problems.push_back("output " + quoted_name(out) + " is " +
                         (graph.is_input(out) ? std::string("an input") : std::string("a weight")) +
                         ", not a dequantized value");
      continue;
    }
    const Node& node = graph.nodes[static_cast<std::size_t>(p)];
    if (node.op != "dequantize") {
      problems.push_back("output " + quoted_name(out) + " is made by " + node_text(node) + ", not a dequantize");
      continue;
    }
    const std::string& value = node.inputs[0];
    // renamed: a quantize's output taken by its input, or a value another output took already.
    if (graph.is_input(value) || graph.is_constant(value) || graph.is_output(value) || renamed.count(value)) {
      problems.push_back("output " + quoted_name(out) + " dequantizes " + quoted_name(value) +
                         ", which is an input, a weight, another output or quantized input");
      continue;
    }
    retyped[out] = graph.type(value);
    untyped.push_back(value);
    renamed[value] = out;
    removed[static_cast<std::size_t>(p)] = true;
  }

  if (!problems.empty()) {
    std::string text;
    for (const std::string& p : problems) text += "\n  " + p;
    throw Error(
        "--io-precision quantized takes each input through a quantize and each output from a dequantize, "
        "and this graph has other edges:" +
        text);
  }
  for (const std::string& v : untyped) graph.types.erase(v);
  for (auto& [v, type] : retyped) graph.types[v] = type;
  bool changed = false;
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (removed[i]) {
      changed = true;
      continue;
    }
    Node& node = graph.nodes[i];
    for (auto& v : node.inputs) {
      auto it = renamed.find(v);
      if (it != renamed.end()) v = it->second;
    }
    for (auto& v : node.outputs) {
      auto it = renamed.find(v);
      if (it != renamed.end()) v = it->second;
    }
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
  return changed;
}

}  // namespace hybgen
