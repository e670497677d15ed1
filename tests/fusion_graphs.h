// Small graphs that exercise fusion and buffer sharing, shared by the pass
// tests (kernel counts, plans) and the codegen tests (numerics).
#pragma once

#include <cmath>

#include "graph_builders.h"

namespace hybgen::testing {

inline Attrs conv_attrs(int64_t filters, int64_t kernel, int64_t pad, bool no_bias) {
  return attrs_of({{"kernel", std::vector<int64_t>{kernel, kernel}},
                   {"num_filter", filters},
                   {"pad", std::vector<int64_t>{pad, pad}},
                   {"no_bias", no_bias}});
}

// BatchNorm node reading constants NAME_gamma/beta/mean/var (away from 0/1).
inline Node batch_norm(Graph& g, const std::string& name, const std::string& x, int64_t channels, uint32_t seed) {
  std::vector<float> var = seeded_values(channels, seed);
  for (float& v : var) v = 0.5f + 5.0f * std::fabs(v);
  std::vector<float> gamma = seeded_values(channels, seed + 1);
  for (float& v : gamma) v += 1.0f;
  g.add_constant(name + "_gamma", Constant::f32({channels}, gamma));
  g.add_constant(name + "_beta", Constant::f32({channels}, seeded_values(channels, seed + 2)));
  g.add_constant(name + "_mean", Constant::f32({channels}, seeded_values(channels, seed + 3)));
  g.add_constant(name + "_var", Constant::f32({channels}, var));
  return make_node(name, "BatchNorm", {x, name + "_gamma", name + "_beta", name + "_mean", name + "_var"},
                   attrs_of({{"fix_gamma", false}, {"eps", 1e-5}}));
}

// Gluon's BasicBlockV1 without downsampling on data (1, 8, 6, 6):
// conv-BN-relu-conv-BN, + data, relu -> out.
inline Graph resnet_basic_block() {
  Graph g;
  g.name = "basic_block";
  g.add_input("data", {{1, 8, 6, 6}});
  g.add_constant("conv1_weight", Constant::f32({8, 8, 3, 3}, seeded_values(8 * 8 * 9, 31)));
  g.add_constant("conv2_weight", Constant::f32({8, 8, 3, 3}, seeded_values(8 * 8 * 9, 32)));
  g.nodes.push_back(make_node("conv1", "Convolution", {"data", "conv1_weight"}, conv_attrs(8, 3, 1, true)));
  g.nodes.push_back(batch_norm(g, "bn1", "conv1", 8, 40));
  g.nodes.push_back(make_node("relu1", "Activation", {"bn1"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("conv2", "Convolution", {"relu1", "conv2_weight"}, conv_attrs(8, 3, 1, true)));
  g.nodes.push_back(batch_norm(g, "bn2", "conv2", 8, 50));
  g.nodes.push_back(make_node("add", "broadcast_add", {"bn2", "data"}));
  g.nodes.push_back(make_node("out", "Activation", {"add"}, attrs_of({{"act_type", std::string("relu")}})));
  g.outputs = {"out"};
  return g;
}

// conv (1, 6, 5, 5) + a per-channel input + a same-shape input, then a
// multiply by a per-row (H) constant and a relu. (A per-channel constant
// would fold into the bias.)
inline Graph conv_with_operands() {
  Graph g;
  g.name = "conv_operands";
  g.add_input("data", {{1, 4, 5, 5}});
  g.add_input("residual", {{1, 6, 5, 5}});
  g.add_input("channel", {{6, 1, 1}});
  g.add_constant("conv_weight", Constant::f32({6, 4, 3, 3}, seeded_values(6 * 4 * 9, 61)));
  g.add_constant("conv_bias", Constant::f32({6}, seeded_values(6, 62)));
  g.add_constant("rows", Constant::f32({5, 1}, seeded_values(5, 64)));
  g.nodes.push_back(make_node("conv", "Convolution", {"data", "conv_weight", "conv_bias"}, conv_attrs(6, 3, 1, false)));
  g.nodes.push_back(make_node("add_channel", "broadcast_add", {"conv", "channel"}));
  g.nodes.push_back(make_node("add_residual", "broadcast_add", {"add_channel", "residual"}));
  g.nodes.push_back(make_node("mul_rows", "broadcast_mul", {"add_residual", "rows"}));
  g.nodes.push_back(make_node("relu", "Activation", {"mul_rows"}, attrs_of({{"act_type", std::string("relu")}})));
  g.outputs = {"relu"};
  return g;
}

// Two 4x4 convolutions (im2col + GEMM on every target) whose columns outweigh
// the one activation in the arena: 2 -> 4 channels on 10x11 (56 output
// pixels, 32 values each), relu, 4 -> 3 padded (42 pixels, 64 values).
// Full columns: 1792 and 2688 floats beside the 224 of the first output;
// shrunk to 16-pixel tiles: 512 and 1024, the last tile partial in both.
inline Graph im2col_convolutions() {
  Graph g;
  g.name = "im2col_convs";
  g.add_input("data", {{1, 2, 10, 11}});
  g.add_constant("a_weight", Constant::f32({4, 2, 4, 4}, seeded_values(4 * 2 * 16, 81)));
  g.add_constant("a_bias", Constant::f32({4}, seeded_values(4, 82)));
  g.add_constant("b_weight", Constant::f32({3, 4, 4, 4}, seeded_values(3 * 4 * 16, 83)));
  g.nodes.push_back(make_node("a", "Convolution", {"data", "a_weight", "a_bias"}, conv_attrs(4, 4, 0, false)));
  g.nodes.push_back(make_node("a_relu", "Activation", {"a"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("b", "Convolution", {"a_relu", "b_weight"}, conv_attrs(3, 4, 1, true)));
  g.outputs = {"b"};
  return g;
}

// Two 1x1 convolutions of data concatenated on channels, flattened, and a
// dense layer: the concat's inputs are written in place, the flatten is a view.
inline Graph concat_of_branches() {
  Graph g;
  g.name = "branches";
  g.add_input("data", {{1, 4, 6, 6}});
  g.add_constant("left_weight", Constant::f32({3, 4, 1, 1}, seeded_values(12, 71)));
  g.add_constant("right_weight", Constant::f32({5, 4, 1, 1}, seeded_values(20, 72)));
  g.add_constant("fc_weight", Constant::f32({7, 8 * 36}, seeded_values(7 * 8 * 36, 73)));
  g.nodes.push_back(make_node("left", "Convolution", {"data", "left_weight"}, conv_attrs(3, 1, 0, true)));
  g.nodes.push_back(make_node("right", "Convolution", {"data", "right_weight"}, conv_attrs(5, 1, 0, true)));
  g.nodes.push_back(make_node("cat", "Concat", {"left", "right"}, attrs_of({{"dim", int64_t{1}}})));
  g.nodes.push_back(make_node("flat", "Flatten", {"cat"}));
  g.nodes.push_back(make_node("out", "FullyConnected", {"flat", "fc_weight"},
                              attrs_of({{"num_hidden", int64_t{7}}, {"no_bias", true}})));
  g.outputs = {"out"};
  return g;
}

// Convolutions and dense layers each followed by one clip or relu, which
// SIMD kernels apply to whole vectors (OpKernel::vector_epilogue): a 1x1
// convolution (GEMM) with a depthwise one after it (fused into one kernel,
// the clip between them its activation), depthwise 3x3 on 20x20 (rows,
// stride 1 and 2) and on
// 8x8 (the flat kernel), a dense 3x3, two dense layers. Weights in (-1, 1)
// and bounds inside each layer's range, so every clamp bites on both sides.
inline Graph clamped_layers() {
  Graph g;
  g.name = "clamped";
  auto scaled = [](int64_t n, uint32_t seed) {
    std::vector<float> v = seeded_values(n, seed);
    for (float& x : v) x *= 10.0f;
    return v;
  };
  auto clip = [](double lo, double hi) { return attrs_of({{"a_min", lo}, {"a_max", hi}}); };
  auto depthwise = [](int64_t stride) {
    return attrs_of({{"kernel", std::vector<int64_t>{3, 3}},
                     {"num_filter", int64_t{16}},
                     {"num_group", int64_t{16}},
                     {"stride", std::vector<int64_t>{stride, stride}},
                     {"pad", std::vector<int64_t>{1, 1}}});
  };
  const Attrs relu = attrs_of({{"act_type", std::string("relu")}});
  g.add_input("data", {{1, 8, 20, 20}});
  g.add_constant("expand_weight", Constant::f32({16, 8, 1, 1}, scaled(16 * 8, 81)));
  g.add_constant("expand_bias", Constant::f32({16}, scaled(16, 82)));
  g.add_constant("dw1_weight", Constant::f32({16, 1, 3, 3}, scaled(16 * 9, 83)));
  g.add_constant("dw1_bias", Constant::f32({16}, seeded_values(16, 84)));
  g.add_constant("dw2_weight", Constant::f32({16, 1, 3, 3}, scaled(16 * 9, 85)));
  g.add_constant("dw2_bias", Constant::f32({16}, seeded_values(16, 86)));
  g.add_constant("conv3_weight", Constant::f32({16, 16, 3, 3}, seeded_values(16 * 16 * 9, 87)));
  g.add_constant("dw4_weight", Constant::f32({16, 1, 3, 3}, scaled(16 * 9, 88)));
  g.add_constant("dw4_bias", Constant::f32({16}, seeded_values(16, 89)));
  g.add_constant("fc1_weight", Constant::f32({40, 16 * 64}, seeded_values(40 * 16 * 64, 90)));
  g.add_constant("fc1_bias", Constant::f32({40}, seeded_values(40, 91)));
  g.add_constant("fc2_weight", Constant::f32({10, 40}, scaled(10 * 40, 92)));
  g.nodes.push_back(make_node("expand", "Convolution", {"data", "expand_weight", "expand_bias"},
                              conv_attrs(16, 1, 0, false)));
  g.nodes.push_back(make_node("expand_clip", "clip", {"expand"}, clip(-0.25, 0.5)));
  g.nodes.push_back(make_node("dw1", "Convolution", {"expand_clip", "dw1_weight", "dw1_bias"}, depthwise(1)));
  g.nodes.push_back(make_node("dw1_clip", "clip", {"dw1"}, clip(-0.1, 0.3)));
  g.nodes.push_back(make_node("dw2", "Convolution", {"dw1_clip", "dw2_weight", "dw2_bias"}, depthwise(2)));
  g.nodes.push_back(make_node("dw2_relu", "Activation", {"dw2"}, relu));
  g.nodes.push_back(make_node("conv3", "Convolution", {"dw2_relu", "conv3_weight"}, conv_attrs(16, 3, 0, true)));
  g.nodes.push_back(make_node("conv3_relu", "Activation", {"conv3"}, relu));
  g.nodes.push_back(make_node("dw4", "Convolution", {"conv3_relu", "dw4_weight", "dw4_bias"}, depthwise(1)));
  g.nodes.push_back(make_node("dw4_clip", "clip", {"dw4"}, clip(0.05, 0.2)));
  g.nodes.push_back(make_node("flat", "Flatten", {"dw4_clip"}));
  g.nodes.push_back(make_node("fc1", "FullyConnected", {"flat", "fc1_weight", "fc1_bias"},
                              attrs_of({{"num_hidden", int64_t{40}}})));
  g.nodes.push_back(make_node("fc1_relu", "Activation", {"fc1"}, relu));
  g.nodes.push_back(make_node("fc2", "FullyConnected", {"fc1_relu", "fc2_weight"},
                              attrs_of({{"num_hidden", int64_t{10}}, {"no_bias", true}})));
  g.nodes.push_back(make_node("fc2_clip", "clip", {"fc2"}, clip(-0.05, 0.05)));
  g.outputs = {"fc2_clip"};
  return g;
}

// Two branches of two softmaxes each over x (64, 64), each reduced to (64,),
// then added; listed interleaved, so the given order keeps three big
// buffers alive where two suffice.
inline Graph unbalanced_branches() {
  Graph g;
  g.name = "branches2";
  g.add_input("x", {{64, 64}});
  const Attrs rows = attrs_of({{"axis", std::vector<int64_t>{1}}});
  g.nodes.push_back(make_node("a1", "softmax", {"x"}));
  g.nodes.push_back(make_node("b1", "softmax", {"x"}));
  g.nodes.push_back(make_node("a2", "softmax", {"a1"}));
  g.nodes.push_back(make_node("b2", "softmax", {"b1"}));
  g.nodes.push_back(make_node("a3", "sum", {"a2"}, rows));
  g.nodes.push_back(make_node("b3", "sum", {"b2"}, rows));
  g.nodes.push_back(make_node("out", "broadcast_add", {"a3", "b3"}));
  g.outputs = {"out"};
  return g;
}

}  // namespace hybgen::testing
