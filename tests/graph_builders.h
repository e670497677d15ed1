// Small graphs the pass tests share, built with the C++ API.
#pragma once

#include <random>

#include "ir/graph.h"

namespace hybgen::testing {

inline std::vector<float> seeded_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.1f, 0.1f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

inline Node make_node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                      Attrs attrs = {}) {
  return Node{name, op, std::move(attrs), std::move(inputs), {name}};
}

inline Attrs attrs_of(std::initializer_list<std::pair<const char*, AttrValue>> items) {
  Attrs a;
  for (const auto& [k, v] : items) a.set(k, v);
  return a;
}

// data(1x512) -> Dense(256) -> relu -> Dense(128) -> relu -> Dense(2)
inline Graph seed_mlp(int64_t batch = 1) {
  Graph g;
  g.name = "mlp";
  g.add_input("data", {{batch, 512}});
  const int64_t sizes[] = {512, 256, 128, 2};
  std::string x = "data";
  for (int layer = 0; layer < 3; ++layer) {
    const std::string p = "dense" + std::to_string(layer);
    g.add_constant(p + "_weight", Constant::f32({sizes[layer + 1], sizes[layer]},
                                                seeded_values(sizes[layer + 1] * sizes[layer], 10 + layer)));
    g.add_constant(p + "_bias", Constant::f32({sizes[layer + 1]}, seeded_values(sizes[layer + 1], 20 + layer)));
    g.nodes.push_back(make_node(p + "_fwd", "FullyConnected", {x, p + "_weight", p + "_bias"},
                                attrs_of({{"num_hidden", sizes[layer + 1]}})));
    x = p + "_fwd";
    if (layer < 2) {
      g.nodes.push_back(make_node(p + "_relu", "Activation", {x}, attrs_of({{"act_type", std::string("relu")}})));
      x = p + "_relu";
    }
  }
  g.outputs = {x};
  return g;
}

// data(1x2x6x6) -> Convolution(4, 3x3) -> relu -> Dense(3): the layers int8
// quantization rewrites, with an activation between them.
inline Graph conv_relu_dense() {
  Graph g;
  g.name = "conv_relu_dense";
  g.add_input("data", {{1, 2, 6, 6}});
  g.add_constant("conv_weight", Constant::f32({4, 2, 3, 3}, seeded_values(4 * 2 * 9, 31)));
  g.add_constant("conv_bias", Constant::f32({4}, seeded_values(4, 32)));
  g.add_constant("dense_weight", Constant::f32({3, 64}, seeded_values(3 * 64, 33)));
  g.add_constant("dense_bias", Constant::f32({3}, seeded_values(3, 34)));
  g.nodes.push_back(make_node("conv", "Convolution", {"data", "conv_weight", "conv_bias"},
                              attrs_of({{"kernel", std::vector<int64_t>{3, 3}}, {"num_filter", int64_t{4}}})));
  g.nodes.push_back(make_node("relu", "Activation", {"conv"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("dense", "FullyConnected", {"relu", "dense_weight", "dense_bias"},
                              attrs_of({{"num_hidden", int64_t{3}}})));
  g.outputs = {"dense"};
  return g;
}

// The hybridize tutorial's memory example: c = b * a; d = c + 1 on 10 elements.
inline Graph tutorial_memory() {
  Graph g;
  g.name = "memory";
  g.add_input("a", {{10}});
  g.add_input("b", {{10}});
  g.nodes.push_back(make_node("c", "broadcast_mul", {"b", "a"}));
  g.nodes.push_back(make_node("d", "_plus_scalar", {"c"}, attrs_of({{"scalar", 1.0}})));
  g.outputs = {"d"};
  return g;
}

// (1, tokens, heads * size) -> (heads, tokens, size), as Gluon's attention
// cells split heads.
inline std::string split_heads(Graph& g, const std::string& x, int64_t heads) {
  g.nodes.push_back(make_node(x + "_r0", "Reshape", {x}, attrs_of({{"shape", std::vector<int64_t>{0, 0, heads, -1}}})));
  g.nodes.push_back(
      make_node(x + "_t", "transpose", {x + "_r0"}, attrs_of({{"axes", std::vector<int64_t>{0, 2, 1, 3}}})));
  g.nodes.push_back(make_node(x + "_r1", "Reshape", {x + "_t"}, attrs_of({{"shape", std::vector<int64_t>{-3, -2}}})));
  return x + "_r1";
}

// q, k, v (1, tokens, heads * size) -> softmax(q k^T [* scale]) v with heads
// merged back: (1, tokens, heads * size), as the zoo transformer's attention
// (scale 0: no _mul_scalar between the product and the softmax). Unprepared.
inline Graph attention_graph(int64_t tokens, int64_t heads, int64_t size, double scale = 0) {
  Graph g;
  for (const char* x : {"q", "k", "v"}) g.add_input(x, {{1, tokens, heads * size}});
  const std::string q = split_heads(g, "q", heads), k = split_heads(g, "k", heads), v = split_heads(g, "v", heads);
  g.nodes.push_back(make_node("scores", "batch_dot", {q, k}, attrs_of({{"transpose_b", true}})));
  std::string scores = "scores";
  if (scale != 0) {
    g.nodes.push_back(make_node("scaled", "_mul_scalar", {"scores"}, attrs_of({{"scalar", scale}})));
    scores = "scaled";
  }
  g.nodes.push_back(make_node("weights", "softmax", {scores}, attrs_of({{"axis", int64_t{-1}}})));
  g.nodes.push_back(make_node("context", "batch_dot", {"weights", v}));
  g.nodes.push_back(
      make_node("c_r0", "Reshape", {"context"}, attrs_of({{"shape", std::vector<int64_t>{-4, -1, heads, -2}}})));
  g.nodes.push_back(make_node("c_t", "transpose", {"c_r0"}, attrs_of({{"axes", std::vector<int64_t>{0, 2, 1, 3}}})));
  g.nodes.push_back(make_node("y", "Reshape", {"c_t"}, attrs_of({{"shape", std::vector<int64_t>{0, 0, -3}}})));
  g.outputs = {"y"};
  return g;
}

}  // namespace hybgen::testing
