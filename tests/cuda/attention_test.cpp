// Fused attention end to end on the cuda-host layer: a multi-head attention
// whose result takes a residual add and a per-channel gain becomes one
// kernel (fuse_attention, then the add and the gain as _attention's
// epilogue) and matches the reference in fp32, fp16 and bf16 (the half types
// on the tensor-core kernel, its products emulated by the cuda-host layer);
// heads over the kernel's largest stay three kernels and still match.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "graph_builders.h"
#include "pipeline.h"
#include "targets/target.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;

const int64_t kAttnTokens = 37, kAttnHeads = 2;

// y = (merge_heads(softmax(q k^T / sqrt(size)) v) + res) * gain, gain per channel.
Graph attention_block(int64_t size) {
  const int64_t width = kAttnHeads * size;
  Graph g = testing::attention_graph(kAttnTokens, kAttnHeads, size, 1.0 / std::sqrt(static_cast<double>(size)));
  g.name = "attention_block";
  g.add_input("res", {{1, kAttnTokens, width}});
  std::vector<float> gain(static_cast<std::size_t>(width));
  for (std::size_t i = 0; i < gain.size(); ++i) gain[i] = 0.5f + 0.01f * static_cast<float>(i % 50);
  g.add_constant("gain", Constant::f32({width}, gain));
  g.nodes.push_back(make_node("residual", "broadcast_add", {"y", "res"}));
  g.nodes.push_back(make_node("gained", "broadcast_mul", {"residual", "gain"}));
  g.outputs = {"gained"};
  return g;
}

CompileOptions attn_options(const std::string& target, Precision precision) {
  CompileOptions options = CompileOptions::for_target(find_target(target));
  options.target.precision = precision;
  return options;
}

double attn_error(const Graph& g, Precision precision) {
  VerifyOptions v;
  v.cxx = HYBGEN_CXX;
  v.compile = attn_options("cuda-host", precision);
  v.tolerance = 1.0;  // judged below
  const VerifyReport r = verify_model(g, v);
  EXPECT_EQ(r.checks.size(), 1u);
  return r.checks.empty() ? 1.0 : r.checks[0].max_rel_error;
}

TEST(CudaAttention, ResidualAndGainBecomeTheFusedKernelsEpilogue) {
  const Graph g = attention_block(24);
  const CompiledGraph compiled = compile_graph(g, attn_options("cuda", Precision::kFP32));
  ASSERT_EQ(compiled.kernels.size(), 1u);
  std::vector<std::string> ops;
  for (int n : compiled.kernels[0].nodes) ops.push_back(compiled.graph.nodes[static_cast<std::size_t>(n)].op);
  EXPECT_EQ(ops, (std::vector<std::string>{"_attention", "broadcast_add", "broadcast_mul"}));
  const double fp32 = attn_error(g, Precision::kFP32), fp16 = attn_error(g, Precision::kFP16),
               bf16 = attn_error(g, Precision::kBF16);
  std::printf("max rel error: fp32 %.3g, fp16 %.3g, bf16 %.3g\n", fp32, fp16, bf16);
  EXPECT_LE(fp32, 1e-5);
  // Inputs N(0, 1) rounded to the half type, the output rounded once more.
  EXPECT_LE(fp16, 4e-3);
  EXPECT_LE(bf16, 3e-2);
}

TEST(CudaAttention, HeadsOverTheKernelsLargestKeepTheUnfusedKernels) {
  const Graph g = attention_block(160);
  const CompiledGraph compiled = compile_graph(g, attn_options("cuda", Precision::kFP32));
  EXPECT_TRUE(std::none_of(compiled.graph.nodes.begin(), compiled.graph.nodes.end(),
                           [](const Node& n) { return n.op == "_attention"; }));
  EXPECT_GE(compiled.kernels.size(), 3u);
  EXPECT_LE(attn_error(g, Precision::kFP32), 1e-5);
}

}  // namespace
}  // namespace hybgen
