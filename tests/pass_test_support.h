// What the pass tests share: a graph prepared as compile_graph() prepares it
// before its passes, the ops of its nodes, and runs of small graphs node by
// node with the ops' reference kernels, so a test can check that a rewrite
// keeps a graph's results (the interpreter would run the very passes under
// test on both graphs).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "graph_builders.h"
#include "ops/op.h"
#include "passes/passes.h"
#include "passes/quantize_graph.h"

namespace hybgen::testing {

// Validates and infers shapes, as compile_graph does before the passes.
inline Graph prepared(Graph g) {
  validate(g);
  infer_shapes(g);
  return g;
}

// conv_relu_dense quantized on hand-given ranges: quantize at the input,
// int8 convolution, relu and dense layer, dequantize at the output.
inline Graph int8_conv_relu_dense() {
  const std::map<std::string, ValueRange> ranges = {
      {"data", {-1.0f, 3.0f}}, {"conv", {-0.8f, 0.6f}}, {"relu", {0.0f, 0.6f}}, {"dense", {-0.2f, 0.3f}}};
  return quantize_graph(prepared(conv_relu_dense()), ranges).graph;
}

inline std::vector<std::string> op_names(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.push_back(n.op);
  return ops;
}

inline std::vector<float> values_of(const Graph& g, const std::string& constant) {
  const Constant& c = g.constants.at(constant);
  return std::vector<float>(c.f32_data(), c.f32_data() + c.type.num_elements());
}

// The graph's outputs, computed node by node with the reference kernels.
inline std::vector<std::vector<float>> run_reference(const Graph& graph, const std::map<std::string, std::vector<float>>& inputs) {
  // Each value's bytes held in floats' room, so values of any dtype (int8 weights, int32 biases) fit.
  auto room = [](std::size_t bytes) { return std::vector<float>((bytes + sizeof(float) - 1) / sizeof(float)); };
  std::map<std::string, std::vector<float>> values = inputs;
  for (const auto& [name, c] : graph.constants) {
    values[name] = room(c.data.size());
    std::memcpy(values[name].data(), c.data.data(), c.data.size());
  }
  for (int index : topological_order(graph)) {
    const Node& node = graph.nodes[index];
    const OpDef& def = find_op(node.op);
    const Attrs attrs = normalize_attrs(def, node.attrs);
    for (const auto& out : node.outputs) values[out] = room(graph.type(out).bytes());
    KernelIO io{attrs, {}, {}, {}, {}};
    for (const auto& in : node.inputs) {
      io.in.push_back(values.at(in).data());
      io.in_types.push_back(graph.type(in));
    }
    for (const auto& out : node.outputs) {
      io.out.push_back(values.at(out).data());
      io.out_types.push_back(graph.type(out));
    }
    def.reference(io);
  }
  std::vector<std::vector<float>> outputs;
  for (const auto& out : graph.outputs) outputs.push_back(values.at(out));
  return outputs;
}

// Runs `before` and `after` on the same seeded inputs and expects every
// output to agree within `tolerance` relative to the output's largest value.
inline void expect_same_results(const Graph& before, const Graph& after, double tolerance = 1e-5) {
  ASSERT_EQ(before.outputs, after.outputs);
  std::map<std::string, std::vector<float>> inputs;
  uint32_t seed = 100;
  for (const auto& in : before.inputs) {
    inputs[in] = seeded_values(before.type(in).num_elements(), seed++);
    for (float& v : inputs[in]) v *= 10.0f;  // roughly N(0, 1)-sized data
  }
  const auto want = run_reference(before, inputs), got = run_reference(after, inputs);
  for (std::size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size()) << before.outputs[o];
    double largest = 0, worst = 0;
    for (std::size_t i = 0; i < want[o].size(); ++i) {
      largest = std::max(largest, std::fabs(static_cast<double>(want[o][i])));
      worst = std::max(worst, std::fabs(static_cast<double>(got[o][i]) - want[o][i]));
    }
    EXPECT_LE(worst, tolerance * largest) << before.outputs[o];
  }
}

}  // namespace hybgen::testing
