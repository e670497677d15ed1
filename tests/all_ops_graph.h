// One graph holding every example of every registered op, each an
// independent subgraph, so the whole registry costs one compiler run: the
// generic op tests (tests/codegen/registry_ops_test.cpp, tests/cuda/).
// HYBGEN_TEST_OPS=Pooling,softmax keeps only the ops named (to debug one).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "io/npy.h"
#include "ir/graph.h"
#include "lower/lowering.h"
#include "ops/op.h"

namespace hybgen::testing {

struct ExampleOutput {
  std::string op;
  std::size_t example;
};

struct AllOpsGraph {
  Graph graph;
  std::map<std::string, NpyArray> inputs;       // seeded values of the graph's inputs
  std::map<std::string, ExampleOutput> origin;  // output value -> the op and example it came from
};

inline bool op_selected(const std::string& op) {
  const char* only = std::getenv("HYBGEN_TEST_OPS");
  if (!only || !*only) return true;
  std::istringstream names(only);
  for (std::string name; std::getline(names, name, ',');)
    if (name == op) return true;
  return false;
}

// Seeded inputs, in the op's OpDef::input_ranges.
inline NpyArray random_input(const OpDef& op, std::size_t input, const Shape& shape, std::mt19937& rng) {
  const InputRange range = test_input_range(op.input_ranges, static_cast<int>(input));
  std::uniform_real_distribution<float> dist(range.low, range.high);
  NpyArray values{shape, std::vector<float>(static_cast<std::size_t>(num_elements(shape)))};
  for (auto& v : values.data) v = dist(rng);
  return values;
}

// The name of one example in all_ops_graph's `only`: "Convolution/2".
inline std::string example_name(const std::string& op, std::size_t example) {
  return op + "/" + std::to_string(example);
}

// `only`, when not empty: just these examples (example_name; of the ops
// HYBGEN_TEST_OPS keeps).
inline AllOpsGraph all_ops_graph(unsigned seed, const std::set<std::string>& only = {}) {
  AllOpsGraph all;
  Graph& g = all.graph;
  g.name = "all_ops";
  std::mt19937 rng(seed);
  for (const OpDef* op : all_ops()) {
    if (!op_selected(op->name)) continue;
    for (std::size_t e = 0; e < op->examples.size(); ++e) {
      if (!only.empty() && !only.count(example_name(op->name, e))) continue;
      const OpExample& ex = op->examples[e];
      const std::string base = c_identifier(op->name) + "_" + std::to_string(e);
      Node node{base, op->name, ex.attrs, {}, {}};
      for (std::size_t i = 0; i < ex.inputs.size(); ++i) {
        const std::string in = base + "_in_" + std::to_string(i);
        NpyArray values = random_input(*op, i, ex.inputs[i], rng);
        // Weights are constants, as in a real model, so the kernels that
        // re-lay them out at generation time (packed GEMM panels) are covered.
        if (op->weight_shapes && i > 0) {
          g.add_constant(in, Constant::f32(ex.inputs[i], values.data));
        } else {
          g.add_input(in, {ex.inputs[i]});
          all.inputs[in] = std::move(values);
        }
        node.inputs.push_back(in);
      }
      const int outputs = output_count(*op, normalize_attrs(*op, ex.attrs));
      for (int o = 0; o < outputs; ++o) {
        const std::string out = base + (outputs == 1 ? "" : "_out" + std::to_string(o));
        node.outputs.push_back(out);
        g.outputs.push_back(out);
        all.origin[out] = {op->name, e};
      }
      g.nodes.push_back(node);
    }
  }
  return all;
}

}  // namespace hybgen::testing
