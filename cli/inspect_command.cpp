#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/pass_dump.h"
#include "emit/dot.h"
#include "emit/html_report.h"
#include "io/file_util.h"
#include "ir/error.h"
#include "ir/names.h"
#include "ops/gemm_pack.h"
#include "ops/op.h"
#include "pipeline.h"
#include "verify/board_report.h"

namespace hybgen {
namespace {

// --report, --dot and --dump-after, once compilation succeeded. The texts are
// all made before the first is written. Returns the paths written.
std::vector<std::string> write_requested_files(const InspectFlags& flags, const CompiledGraph& compiled,
                                               const PassDumps& dumps) {
  std::vector<OutputFile> files;
  if (!flags.report.empty()) files.push_back({flags.report, html_report(compiled, flags.model.model)});
  if (!flags.dot.empty()) files.push_back({flags.dot, graph_to_dot(compiled)});
  write_files_atomic(files);  // both or neither
  std::vector<std::string> written;
  for (const auto& f : files) written.push_back(f.path);
  for (const auto& path : dumps.write()) written.push_back(path);
  return written;
}

}  // namespace

int run_inspect(const InspectFlags& flags) {
  CompileOptions compile = flags.compile.options();
  PassDumps dumps(flags.dump.passes, flags.dump.dir, compile);  // a wrong pass name fails before any work
  compile.observer = dumps.observer();
  Graph loaded = load_any_model(flags.model.source(/*weights_optional=*/true));
  // Microcontroller targets: the model measured on the emulated board.
  std::string not_measured;
  std::optional<BoardReport> board;
  try {
    board = measure_on_board_if_possible(loaded, compile, &not_measured);
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  CompiledGraph c;
  try {
    c = compile_graph(std::move(loaded), compile);
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  const std::vector<std::string> written = write_requested_files(flags, c, dumps);
  const Graph& g = c.graph;
  nlohmann::ordered_json j;
  j["name"] = g.name;
  auto io = [&](const std::vector<std::string>& values) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& v : values) list.push_back({{"name", v}, {"shape", g.type(v).shape}});
    return list;
  };
  j["inputs"] = io(g.inputs);
  j["outputs"] = io(g.outputs);
  double total_flops = 0;
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const Node& n : g.nodes) {
    const OpDef& def = find_op(n.op);
    std::vector<TensorType> in, out;
    for (const auto& v : n.inputs) in.push_back(g.type(v));
    for (const auto& v : n.outputs) out.push_back(g.type(v));
    const double flops = op_flops(def, n.attrs, in, out);
    total_flops += flops;
    nodes.push_back({{"name", n.name}, {"op", def.name}, {"output_shape", out.empty() ? Shape{} : out[0].shape}, {"flops", flops}});
  }
  const std::size_t weight_bytes = g.weight_bytes();
  j["nodes"] = nodes;
  j["parameters"] = g.parameter_count();
  j["weight_bytes"] = weight_bytes;
  j["flops"] = total_flops;
  j["kernels"] = kernels_to_json(g, c.kernels);
  j["target"] = c.target.name;
  j["memory_plan"] = nlohmann::ordered_json::parse(c.plan.to_json().dump());
  if (board) j["memory"] = board_report_json(*board);
  if (flags.json) {  // stdout stays one JSON document: no "wrote" lines
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  // Names print escaped (ir/names.h): a name cannot forge a line of the report.
  std::printf("model %s\n", printable_name(g.name).c_str());
  for (const auto& in : g.inputs)
    std::printf("  input  %-24s %s\n", printable_name(in).c_str(), shape_str(g.type(in).shape).c_str());
  for (const auto& out : g.outputs)
    std::printf("  output %-24s %s\n", printable_name(out).c_str(), shape_str(g.type(out).shape).c_str());
  std::printf("\n%-4s %-32s %-18s %-20s %14s\n", "#", "node", "op", "output", "FLOPs");
  for (std::size_t i = 0; i < nodes.size(); ++i)
    std::printf("%-4zu %-32s %-18s %-20s %14.0f\n", i, printable_name(nodes[i]["name"].get<std::string>()).c_str(),
                nodes[i]["op"].get<std::string>().c_str(),
                shape_str(nodes[i]["output_shape"].get<Shape>()).c_str(), nodes[i]["flops"].get<double>());
  std::printf("\n%zu kernels from %zu nodes, in execution order (step = kernel):\n", c.kernels.size(), g.nodes.size());
  std::printf("%-4s %-12s %14s %14s  %s\n", "step", "kind", "FLOPs", "bytes", "nodes");
  for (std::size_t i = 0; i < c.kernels.size(); ++i) {
    const Kernel& k = c.kernels[i];
    std::string names;
    for (int n : k.nodes) names += (names.empty() ? "" : " + ") + printable_name(g.nodes[n].name);
    std::printf("%-4zu %-12s %14.0f %14.0f  %s\n", i, kernel_kind_name(k.kind).c_str(), kernel_flops(g, k),
                kernel_bytes(g, k), names.c_str());
  }
  std::printf("\nparameters %lld (%zu bytes), %.4g FLOPs per run\n", static_cast<long long>(g.parameter_count()),
              weight_bytes, total_flops);
  const MemoryPlan& p = c.plan;
  std::printf("memory plan (%s) for --target %s: arena %zu bytes, lower bound %zu, without reuse %zu\n",
              p.strategy.c_str(), c.target.name.c_str(), p.arena_bytes, p.lower_bound_bytes, p.naive_bytes);
  std::printf("%s", small_arena_note(p, flags.compile.small_arena).c_str());
  std::printf("  %-32s %10s %10s %8s\n", "buffer", "offset", "bytes", "steps");
  for (const auto& b : p.buffers)
    std::printf("  %-32s %10zu %10zu %4d-%-3d\n", printable_name(b.value).c_str(), b.offset, b.bytes, b.first_step, b.last_step);
  if (board) std::printf("\n%s", board_report_text(*board).c_str());
  if (!not_measured.empty()) std::printf("\nnot measured on %s: %s\n", c.target.board.c_str(), not_measured.c_str());
  if (!written.empty()) std::printf("\n");
  for (const auto& path : written) std::printf("wrote %s\n", path.c_str());
  return 0;
}

}  // namespace hybgen
