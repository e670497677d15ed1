// Fills templates/report.html.in: the numbers are formatted here, every name
// from the model is HTML-escaped, and the table rows and the arena chart
// (emit/arena_chart.h) are built as text and dropped into their placeholders.
#include "emit/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "emit/arena_chart.h"
#include "emit/report_text.h"
#include "emit/templates.h"
#include "version.h"

namespace hybgen {
namespace {

// "1.012x": how far a size is from the lower bound.
std::string times(double value, double reference) {
  if (reference <= 0) return "&ndash;";
  char text[48];
  std::snprintf(text, sizeof text, "%.3f&times;", value / reference);
  return text;
}

// "25.4%": how much of the sum without reuse the arena keeps.
std::string percent_of(double value, double reference) {
  if (reference <= 0) return "&ndash;";
  char text[48];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * value / reference);
  return text;
}

std::string value_with_shape(const Graph& graph, const std::string& value) {
  return "<code>" + html_escape(value) + " " + html_escape(shape_str(graph.type(value).shape)) + "</code>";
}

std::string inputs_and_outputs(const Graph& graph) {
  std::string text = "inputs";
  for (const auto& v : graph.inputs) text += " " + value_with_shape(graph, v);
  text += " &rarr; outputs";
  for (const auto& v : graph.outputs) text += " " + value_with_shape(graph, v);
  return text;
}

std::string strategy_rows(const MemoryPlan& plan) {
  std::string rows;
  for (const auto& [strategy, arena] : plan.arena_by_strategy)
    rows += std::string(strategy == plan.strategy ? "<tr class=\"winner\">" : "<tr>") + "<td>" +
            html_escape(strategy) + "</td><td class=\"num\">" + grouped_count(arena) + "</td><td class=\"num\">" +
            times(arena, plan.lower_bound_bytes) + "</td></tr>\n";
  return rows;
}

std::string kernel_row(const Graph& graph, const Kernel& kernel, std::size_t step) {
  const std::string kind = kernel_kind_name(kernel.kind);
  std::string nodes, shapes;
  for (int index : kernel.nodes) {
    const Node& node = graph.nodes[index];
    nodes += (nodes.empty() ? "" : "<br>") + html_escape(node.name) + " <span class=\"op\">" + html_escape(node.op) +
             "</span>";
  }
  for (const auto& value : kernel.outputs)
    shapes += (shapes.empty() ? "" : "<br>") + std::string("<span title=\"") + html_escape(value) + "\">" +
              html_escape(shape_str(graph.type(value).shape)) + "</span>";
  const double flops = kernel_flops(graph, kernel), bytes = kernel_bytes(graph, kernel);
  char intensity[32] = "&ndash;";
  if (bytes > 0) std::snprintf(intensity, sizeof intensity, "%.2f", flops / bytes);
  return "<tr id=\"step-" + std::to_string(step) + "\"><td class=\"num\">" + std::to_string(step) +
         "</td><td><span class=\"kind kind-" + kind + "\">" + kind + "</span></td><td>" + nodes + "</td><td>" + shapes +
         "</td><td class=\"num\">" + grouped_count(flops) + "</td><td class=\"num\">" + grouped_count(bytes) +
         "</td><td class=\"num\">" + intensity + "</td></tr>\n";
}

// The SQNR table, worst layer first, or "" without one. A bar per layer
// shows its dB on a 0-60 dB scale (int8's ideal is about 48).
std::string sqnr_section(const Graph& graph, const SqnrSection* sqnr) {
  if (!sqnr) return "";
  std::string rows;
  for (const NodeSqnr& layer : sqnr->layers) {
    std::string op = "&ndash;";
    for (const Node& n : graph.nodes)
      if (n.name == layer.node) op = html_escape(n.op);
    char db[32] = "exact";
    double width = 100;
    if (std::isfinite(layer.db)) {
      std::snprintf(db, sizeof db, "%.2f", layer.db);
      width = std::clamp(layer.db / 60.0 * 100.0, 0.0, 100.0);
    }
    char bar[96];
    std::snprintf(bar, sizeof bar, "<span class=\"bar\" style=\"width: %.0fpx\"></span>", width * 2);
    rows += "<tr><td>" + html_escape(layer.node) + "</td><td><span class=\"op\">" + op +
            "</span></td><td class=\"num\">" + db + "</td><td>" + bar + "</td></tr>\n";
  }
  return "<h2>Quantization: SQNR per int8 layer</h2>\n<p class=\"note\">Signal-to-quantization-noise ratio of each "
         "int8 "
         "layer's output against " +
         html_escape(sqnr->measured_on) +
         ": 10 log10(sum f&sup2; / sum (f &minus; q)&sup2;) in dB, worst first. Each layer's error includes what the "
         "int8 layers before it lost; keep a layer float with <code>hybgen quantize --keep-float</code> or "
         "<code>--min-sqnr</code>.</p>\n<table class=\"sqnr\">\n<thead><tr><th>layer</th><th>op</th><th "
         "class=\"num\">SQNR dB</th><th></th></tr></thead>\n<tbody>\n" +
         rows + "</tbody>\n</table>\n";
}

}  // namespace

std::string html_report(const CompiledGraph& compiled, const std::string& source_name, const SqnrSection* sqnr) {
  const Graph& graph = compiled.graph;
  const MemoryPlan& plan = compiled.plan;
  double flops = 0;
  std::string kernel_rows;
  for (std::size_t step = 0; step < compiled.kernels.size(); ++step) {
    flops += kernel_flops(graph, compiled.kernels[step]);
    kernel_rows += kernel_row(graph, compiled.kernels[step], step);
  }
  const double weight_bytes = static_cast<double>(graph.weight_bytes());

  const std::map<std::string, std::string> values = {
      {"VERSION", kVersion},
      {"TITLE", html_escape(graph.name)},
      {"SOURCE", html_escape(source_name)},
      {"IO", inputs_and_outputs(graph)},
      {"NODE_COUNT", grouped_count(static_cast<double>(graph.nodes.size()))},
      {"KERNEL_COUNT", grouped_count(static_cast<double>(compiled.kernels.size()))},
      {"FLOPS", human_count(flops)},
      {"FLOPS_EXACT", grouped_count(flops)},
      {"WEIGHT_BYTES", human_bytes(weight_bytes)},
      {"WEIGHT_BYTES_EXACT", grouped_count(weight_bytes)},
      {"ARENA_BYTES", human_bytes(plan.arena_bytes)},
      {"ARENA_BYTES_EXACT", grouped_count(plan.arena_bytes)},
      {"LOWER_BOUND_BYTES", human_bytes(plan.lower_bound_bytes)},
      {"LOWER_BOUND_BYTES_EXACT", grouped_count(plan.lower_bound_bytes)},
      {"ARENA_VS_BOUND", times(plan.arena_bytes, plan.lower_bound_bytes)},
      {"NAIVE_BYTES", human_bytes(plan.naive_bytes)},
      {"NAIVE_BYTES_EXACT", grouped_count(plan.naive_bytes)},
      {"ARENA_VS_NAIVE", percent_of(plan.arena_bytes, plan.naive_bytes)},
      {"STRATEGY", html_escape(plan.strategy)},
      {"STRATEGY_ROWS", strategy_rows(plan)},
      {"BLOCK_COUNT", std::to_string(plan.blocks.size())},
      {"ARENA_CHART", arena_chart_svg(plan, compiled.kernels.size())},
      {"KERNEL_ROWS", kernel_rows},
      {"SQNR_SECTION", sqnr_section(graph, sqnr)},
  };
  return fill_template(template_text("report.html"), values, "report.html");
}

}  // namespace hybgen
