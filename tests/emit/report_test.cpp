// The inspect outputs as text: the HTML report (numbers, kernel table, one
// rectangle per arena block, escaping, no external resources) and the
// Graphviz graph (one cluster per fused kernel, escaping, determinism).
#include <gtest/gtest.h>

#include "emit/dot.h"
#include "emit/html_report.h"
#include "emit/report_text.h"
#include "fusion_graphs.h"
#include "graph_builders.h"
#include "pipeline.h"

namespace hybgen {
namespace {

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

std::size_t fused_kernel_count(const CompiledGraph& c) {
  std::size_t count = 0;
  for (const Kernel& k : c.kernels) count += k.nodes.size() > 1;
  return count;
}

// relu(data): the result is the graph output, so nothing lives in the arena.
Graph single_relu() {
  Graph g;
  g.name = "relu_only";
  g.add_input("data", {{4}});
  g.nodes.push_back(testing::make_node("relu", "Activation", {"data"}, testing::attrs_of({{"act_type", std::string("relu")}})));
  g.outputs = {"relu"};
  return g;
}

TEST(ReportText, NumbersForPeopleAndEscapedNames) {
  EXPECT_EQ(grouped_count(0), "0");
  EXPECT_EQ(grouped_count(999), "999");
  EXPECT_EQ(grouped_count(1000), "1,000");
  EXPECT_EQ(grouped_count(4014080), "4,014,080");
  EXPECT_EQ(grouped_count(-1234567), "-1,234,567");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(4014080), "3.83 MiB");
  EXPECT_EQ(human_bytes(112001024), "107 MiB");
  EXPECT_EQ(human_count(640), "640");
  EXPECT_EQ(human_count(3633038848.0), "3.63 G");
  EXPECT_EQ(html_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
}

TEST(HtmlReport, ShowsTheNumbersTheKernelsAndOneRectanglePerBlock) {
  for (const Graph& graph : {testing::resnet_basic_block(), testing::concat_of_branches(), testing::seed_mlp()}) {
    const CompiledGraph c = compile_graph(graph);
    const std::string html = html_report(c, "models/" + graph.name + ".json");
    SCOPED_TRACE(graph.name);
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("<h1>" + graph.name + "</h1>"), std::string::npos);
    EXPECT_NE(html.find("models/" + graph.name + ".json"), std::string::npos);
    EXPECT_EQ(count_of(html, "<svg"), 1u);
    ASSERT_FALSE(c.plan.blocks.empty());
    EXPECT_EQ(count_of(html, "<rect"), c.plan.blocks.size());
    for (const ArenaBlock& b : c.plan.blocks) EXPECT_NE(html.find("<title>block " + b.name + "\n"), std::string::npos);
    EXPECT_EQ(count_of(html, "class=\"lower-bound\""), 1u);
    // One table row per kernel, naming every node and op it holds.
    EXPECT_EQ(count_of(html, "<tr id=\"step-"), c.kernels.size());
    for (const Kernel& k : c.kernels)
      for (int n : k.nodes)
        EXPECT_NE(html.find(c.graph.nodes[n].name + " <span class=\"op\">" + c.graph.nodes[n].op), std::string::npos);
    // The plan's numbers, and every strategy the planner tried.
    for (std::size_t bytes : {c.plan.arena_bytes, c.plan.lower_bound_bytes, c.plan.naive_bytes})
      EXPECT_NE(html.find(grouped_count(static_cast<double>(bytes)) + " bytes"), std::string::npos) << bytes;
    ASSERT_FALSE(c.plan.arena_by_strategy.empty());
    for (const auto& [strategy, arena] : c.plan.arena_by_strategy)
      EXPECT_NE(html.find("<td>" + strategy + "</td><td class=\"num\">" + grouped_count(static_cast<double>(arena))),
                std::string::npos);
    EXPECT_NE(html.find("<tr class=\"winner\"><td>" + c.plan.strategy + "</td>"), std::string::npos);
    // Self-contained: nothing to fetch, nothing to run.
    for (const char* external : {"<script", "<link", "src=", "url(", "@import"})
      EXPECT_EQ(html.find(external), std::string::npos) << external;
    EXPECT_EQ(html, html_report(compile_graph(graph), "models/" + graph.name + ".json"));
  }
}

TEST(HtmlReport, KnownNumbersOfTheSeedMlp) {
  const std::string html = html_report(compile_graph(testing::seed_mlp()), "mlp.json");
  // dense0+relu (1024 bytes) and dense1+relu (512) live at once: 1536 bytes.
  EXPECT_NE(html.find("1,536 bytes"), std::string::npos);
  // The first kernel: 512x256 multiply-adds, bias and relu.
  EXPECT_NE(html.find("<span class=\"kind kind-epilogue\">epilogue</span></td><td>dense0_fwd <span class=\"op\">"
                      "FullyConnected</span><br>dense0_relu <span class=\"op\">Activation</span></td><td>"
                      "<span title=\"dense0_relu\">(1, 256)</span>"),
            std::string::npos)
      << html;
}

TEST(HtmlReport, EscapesEveryName) {
  Graph g = testing::tutorial_memory();
  g.name = "<script>alert(1)</script>";
  g.nodes[0].name = "c<evil>&\"q\"";
  const CompiledGraph c = compile_graph(g);
  const std::string html = html_report(c, "dir/<x>.json");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<evil>"), std::string::npos);
  EXPECT_EQ(html.find("<x>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("c&lt;evil&gt;&amp;&quot;q&quot;"), std::string::npos);
  EXPECT_NE(html.find("dir/&lt;x&gt;.json"), std::string::npos);
}

TEST(HtmlReport, AnEmptyArenaIsSaidNotDrawn) {
  const CompiledGraph c = compile_graph(single_relu());
  ASSERT_TRUE(c.plan.blocks.empty());
  const std::string html = html_report(c, "relu.json");
  EXPECT_EQ(count_of(html, "<rect"), 0u);
  EXPECT_NE(html.find("the arena is empty"), std::string::npos);
}

TEST(Dot, OneClusterPerFusedKernelAroundItsNodes) {
  const CompiledGraph c = compile_graph(testing::resnet_basic_block());
  const std::string dot = graph_to_dot(c);
  ASSERT_GT(fused_kernel_count(c), 0u);
  EXPECT_EQ(count_of(dot, "subgraph cluster_"), fused_kernel_count(c));
  for (std::size_t step = 0; step < c.kernels.size(); ++step) {
    const Kernel& k = c.kernels[step];
    const std::string title = "kernel " + std::to_string(step) + ": " + kernel_kind_name(k.kind);
    if (k.nodes.size() > 1) {
      const std::size_t cluster = dot.find("subgraph cluster_" + std::to_string(step) + " {\n    label=\"" + title);
      ASSERT_NE(cluster, std::string::npos) << title << "\n" << dot;
      const std::size_t end = dot.find("  }\n", cluster);
      for (int n : k.nodes) {  // each node inside its cluster, labelled with name and op
        const std::size_t at = dot.find("n" + std::to_string(n) + " [label=\"" + c.graph.nodes[n].name + "\\n" +
                                        c.graph.nodes[n].op + "\"");
        EXPECT_TRUE(at > cluster && at < end) << c.graph.nodes[n].name;
      }
    }
  }
  // Inputs and outputs as their own shapes; an edge per non-constant input
  // of a node, and one into each output.
  EXPECT_EQ(count_of(dot, "shape=invhouse"), c.graph.inputs.size());
  EXPECT_EQ(count_of(dot, "shape=house"), c.graph.outputs.size());
  std::size_t edges = c.graph.outputs.size();
  for (const Node& n : c.graph.nodes)
    for (const auto& v : n.inputs) edges += !c.graph.is_constant(v);
  EXPECT_EQ(count_of(dot, " -> "), edges);
  EXPECT_NE(dot.find("input0 -> "), std::string::npos);
  EXPECT_EQ(dot.find("_weight"), std::string::npos) << "weights are left out";
  EXPECT_EQ(dot, graph_to_dot(compile_graph(testing::resnet_basic_block())));
}

TEST(Dot, ViewsAreDashedAndUnfusedGraphsHaveNoClusters) {
  const std::string branches = graph_to_dot(compile_graph(testing::concat_of_branches()));
  const std::size_t flatten = branches.find("[label=\"flat\\nFlatten\"");
  ASSERT_NE(flatten, std::string::npos) << branches;
  const std::string flatten_line = branches.substr(flatten, branches.find('\n', flatten) - flatten);
  EXPECT_NE(flatten_line.find(": view\", style=\"rounded,dashed\"]"), std::string::npos) << flatten_line;
  CompileOptions unoptimized;
  unoptimized.optimize = false;
  const std::string dot = graph_to_dot(compile_graph(testing::resnet_basic_block(), unoptimized));
  EXPECT_EQ(count_of(dot, "subgraph cluster_"), 0u);
  EXPECT_EQ(count_of(dot, "[label=\""), testing::resnet_basic_block().nodes.size() + 2);  // + input, output
}

TEST(Dot, QuotesAndBackslashesInNamesAreEscaped) {
  Graph g = single_relu();
  g.name = "a \"quoted\" net";
  g.nodes[0].name = "re\\lu\"1";
  g.outputs = {"re\\lu\"1"};
  g.nodes[0].outputs = {"re\\lu\"1"};
  const std::string dot = graph_to_dot(compile_graph(g));
  EXPECT_NE(dot.find("digraph \"a \\\"quoted\\\" net\" {"), std::string::npos) << dot;
  EXPECT_NE(dot.find("[label=\"re\\\\lu\\\"1\\nActivation\""), std::string::npos) << dot;
}

}  // namespace
}  // namespace hybgen
