// Ids are positions (n12, input0, output0), never names, so any name is safe;
// names only appear inside quoted labels, escaped for DOT.
#include "emit/dot.h"

#include <vector>

#include "ir/names.h"

namespace hybgen {
namespace {

// A DOT double-quoted string. Backslashes are doubled so Graphviz's own
// escapes (\N, \l, ...) in a model's names print as written.
std::string dot_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string node_id(int index) { return "n" + std::to_string(index); }

std::string input_id(const Graph& graph, const std::string& value) {
  for (std::size_t i = 0; i < graph.inputs.size(); ++i)
    if (graph.inputs[i] == value) return "input" + std::to_string(i);
  return "";
}

std::string kernel_title(const Kernel& kernel, std::size_t step) {
  return "kernel " + std::to_string(step) + ": " + kernel_kind_name(kernel.kind);
}

// Views are dashed: they run no code, their output shares their input's bytes.
std::string node_line(const Graph& graph, int index, const std::string& indent, const std::string& tooltip,
                      bool view) {
  const Node& node = graph.nodes[index];
  return indent + node_id(index) + " [label=" + dot_string(node.name + "\n" + node.op) + ", tooltip=" + dot_string(tooltip) +
         (view ? ", style=\"rounded,dashed\"" : "") + "];\n";
}

// The edge from whatever makes `value` (a node or a graph input) to `to`;
// constants make none.
std::string edge_from_value(const Graph& graph, const std::string& value, const std::string& to) {
  const int producer = graph.producer(value);
  const std::string from = producer >= 0 ? node_id(producer) : input_id(graph, value);
  if (from.empty()) return "";
  return "  " + from + " -> " + to + " [tooltip=" + dot_string(value + " " + shape_str(graph.type(value).shape)) + "];\n";
}

}  // namespace

std::string graph_to_dot(const CompiledGraph& compiled) {
  const Graph& graph = compiled.graph;
  std::string dot = "// " + comment_text(graph.name) + ": " + std::to_string(graph.nodes.size()) + " nodes in " +
                    std::to_string(compiled.kernels.size()) + " kernels, written by hybgen inspect --dot.\n";
  dot += "digraph " + dot_string(graph.name) + " {\n";
  dot += "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=10];\n";
  dot += "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#f4f4f4\", fontname=\"Helvetica\", fontsize=10];\n";
  dot += "  edge [color=\"#555555\", arrowsize=0.6];\n\n";

  for (std::size_t i = 0; i < graph.inputs.size(); ++i) {
    const std::string& v = graph.inputs[i];
    dot += "  input" + std::to_string(i) + " [label=" + dot_string(v + "\n" + shape_str(graph.type(v).shape)) +
           ", shape=invhouse, fillcolor=\"#d8ecff\"];\n";
  }
  for (std::size_t i = 0; i < graph.outputs.size(); ++i) {
    const std::string& v = graph.outputs[i];
    dot += "  output" + std::to_string(i) + " [label=" + dot_string(v + "\n" + shape_str(graph.type(v).shape)) +
           ", shape=house, fillcolor=\"#ffe3c4\"];\n";
  }
  dot += "\n";

  // Nodes in kernel order: a fused kernel's nodes inside its cluster.
  std::vector<bool> drawn(graph.nodes.size(), false);
  for (std::size_t step = 0; step < compiled.kernels.size(); ++step) {
    const Kernel& kernel = compiled.kernels[step];
    const std::string title = kernel_title(kernel, step);
    const bool view = kernel.kind == KernelKind::kView;
    if (kernel.nodes.size() > 1) {
      dot += "  subgraph cluster_" + std::to_string(step) + " {\n    label=" + dot_string(title) +
             ";\n    style=\"rounded,filled\";\n    fillcolor=\"#fff6dc\";\n    color=\"#c9a13b\";\n";
      for (int index : kernel.nodes) dot += node_line(graph, index, "    ", title, view);
      dot += "  }\n";
    } else {
      for (int index : kernel.nodes) dot += node_line(graph, index, "  ", title, view);
    }
    for (int index : kernel.nodes) drawn[index] = true;
  }
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)  // a node no kernel holds (none today)
    if (!drawn[i]) dot += node_line(graph, static_cast<int>(i), "  ", "in no kernel", false);
  dot += "\n";

  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    for (const auto& value : graph.nodes[i].inputs) dot += edge_from_value(graph, value, node_id(static_cast<int>(i)));
  for (std::size_t i = 0; i < graph.outputs.size(); ++i)
    dot += edge_from_value(graph, graph.outputs[i], "output" + std::to_string(i));
  return dot + "}\n";
}

}  // namespace hybgen
