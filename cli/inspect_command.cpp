#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/calibration_data.h"
#include "cli/commands.h"
#include "cli/pass_dump.h"
#include "emit/dot.h"
#include "emit/html_report.h"
#include "io/file_util.h"
#include "ir/error.h"
#include "ir/names.h"
#include "ir/quantization_json.h"
#include "lower/lowering.h"
#include "ops/gemm_pack.h"
#include "ops/op.h"
#include "passes/passes.h"
#include "passes/quantize_graph.h"
#include "pipeline.h"
#include "runtime-lite/calibration.h"
#include "verify/board_report.h"

namespace hybgen {
namespace {

// --report, --dot and --dump-after, once compilation succeeded. The texts are
// all made before the first is written. Returns the paths written.
std::vector<std::string> write_requested_files(const InspectFlags& flags, const CompiledGraph& compiled,
                                               const PassDumps& dumps, const SqnrSection* sqnr) {
  std::vector<OutputFile> files;
  if (!flags.report.empty()) files.push_back({flags.report, html_report(compiled, flags.model.model, sqnr)});
  if (!flags.dot.empty()) files.push_back({flags.dot, graph_to_dot(compiled)});
  write_files_atomic(files);  // both or neither
  std::vector<std::string> written;
  for (const auto& f : files) written.push_back(f.path);
  for (const auto& path : dumps.write()) written.push_back(path);
  return written;
}

// --float-model M --calibration X.npy: the SQNR of each int8 layer of the
// model (as `hybgen quantize` wrote it) against M, which it was quantized
// from, measured as `hybgen quantize` measures it.
std::optional<SqnrSection> measure_sqnr(const InspectFlags& flags, const Graph& model) {
  if (flags.float_model.empty() && flags.calibration.empty()) return std::nullopt;
  if (flags.float_model.empty())
    throw Error("--calibration needs --float-model M: the float model the quantized one was made from");
  if (flags.calibration.empty()) throw Error("--float-model needs --calibration X.npy: the samples to measure on");
  // The float model takes the quantized one's input shapes (an MXNet
  // symbol file has none of its own).
  ModelSource float_source;
  float_source.path = flags.float_model;
  for (const auto& in : model.inputs) float_source.shape_hints[in] = model.type(in).shape;
  Graph float_graph;
  try {
    float_graph = prepare_for_quantization(load_any_model(float_source));
  } catch (const Error& e) {
    throw with_context(flags.float_model, e);
  }
  Graph quantized = model;
  try {
    validate(quantized);
    infer_shapes(quantized);
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  const std::vector<std::string> layers = int8_nodes_of(float_graph, quantized);
  if (layers.empty())
    throw Error(flags.model.model + " has no int8 node that the float model " + flags.float_model +
                " has: give the model `hybgen quantize` wrote and the float model it read");
  if (quantized.inputs != float_graph.inputs)
    throw Error(flags.model.model + " and the float model " + flags.float_model + " have other inputs");
  for (const auto& in : quantized.inputs)
    if (quantized.type(in) != float_graph.type(in))
      throw Error("input " + quoted_name(in) + " is " + quantized.type(in).str() + " in " + flags.model.model +
                  " but " + float_graph.type(in).str() + " in the float model " + flags.float_model);
  const CalibrationData data = read_calibration(float_graph, "", flags.calibration);
  SqnrSection section;
  section.layers = quantization_sqnr(float_graph, quantized, layers, data.batches);
  std::string files;
  for (const auto& path : flags.calibration) files += (files.empty() ? "" : ", ") + path;
  section.measured_on =
      "the float model " + flags.float_model + " on " + std::to_string(data.samples) + " samples of " + files;
  return section;
}

}  // namespace

int run_inspect(const InspectFlags& flags) {
  CompileOptions compile = flags.compile.options();
  PassDumps dumps(flags.dump.passes, flags.dump.dir, compile);  // a wrong pass name fails before any work
  compile.observer = dumps.observer();
  Graph loaded = load_any_model(flags.model.source(/*weights_optional=*/true));
  const std::optional<SqnrSection> sqnr = measure_sqnr(flags, loaded);  // before compiling: its errors first
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
  const std::vector<std::string> written = write_requested_files(flags, c, dumps, sqnr ? &*sqnr : nullptr);
  const Graph& g = c.graph;
  nlohmann::ordered_json j;
  j["name"] = g.name;
  auto io = [&](const std::vector<std::string>& values) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& v : values) {
      const TensorType& t = g.type(v);
      nlohmann::ordered_json edge = {{"name", v}, {"shape", t.shape}, {"dtype", dtype_name(t.dtype)}};
      if (!t.quantization.empty()) edge["quantization"] = quantization_to_json(t.quantization);  // as the manifest's
      list.push_back(edge);
    }
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
  // The weights as the kernels keep them (packed panels, Winograd's
  // transformed filters), where the model gives their values.
  std::optional<std::size_t> generated_weight_bytes;
  if (std::all_of(g.constants.begin(), g.constants.end(), [](const auto& c) { return c.second.has_data(); }))
    generated_weight_bytes = lower(c, LowerOptions{}).blob.size();
  const double growth = generated_weight_bytes && weight_bytes
                            ? static_cast<double>(*generated_weight_bytes) / static_cast<double>(weight_bytes)
                            : 0.0;
  j["generated_weight_bytes"] = generated_weight_bytes ? nlohmann::ordered_json(*generated_weight_bytes) : nullptr;
  j["weight_growth"] = growth > 0 ? nlohmann::ordered_json(growth) : nullptr;
  j["max_weight_growth"] =
      c.target.max_weight_growth > 0 ? nlohmann::ordered_json(c.target.max_weight_growth) : nullptr;
  j["flops"] = total_flops;
  j["kernels"] = kernels_to_json(g, c.kernels);
  j["target"] = c.target.name;
  j["precision"] = precision_name(c.target.precision);
  // --precision fp16/bf16: which nodes store halves and which kept float32 (their kernel has no half form).
  const bool half_precision = c.target.precision == Precision::kFP16 || c.target.precision == Precision::kBF16;
  std::vector<std::string> half_nodes, float32_nodes;
  for (const Node& n : g.nodes) {
    if (n.op == "_storage_cast" || n.outputs.empty()) continue;
    const TensorType& t = g.type(n.outputs[0]);
    if (is_half_dtype(t.dtype))
      half_nodes.push_back(n.name);
    else if (t.dtype == DType::kFloat32 && t.quantization.empty()) float32_nodes.push_back(n.name);
  }
  if (half_precision) j["half_storage"] = {{"half_nodes", half_nodes.size()}, {"float32_nodes", float32_nodes}};
  j["memory_plan"] = nlohmann::ordered_json::parse(c.plan.to_json().dump());
  if (g.batch.variable())
    j["batch"] = {{"min", g.batch.min},
                  {"max", g.batch.max},
                  {"inputs", g.batch.inputs},
                  {"arena_bytes_at_min", c.plan.arena_bytes_at(g.batch.min)},
                  {"arena_bytes_at_max", c.plan.arena_bytes_at(g.batch.max)}};
  if (board) j["memory"] = board_report_json(*board);
  if (sqnr) {
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const NodeSqnr& s : sqnr->layers)  // an exact layer (infinite dB) as null
      layers.push_back({{"node", s.node}, {"db", std::isfinite(s.db) ? nlohmann::ordered_json(s.db) : nullptr}});
    j["sqnr"] = {{"measured_on", sqnr->measured_on}, {"layers", layers}};
  }
  if (flags.json) {  // stdout stays one JSON document: no "wrote" lines
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  // Names print escaped (ir/names.h): a name cannot forge a line of the report.
  std::printf("model %s\n", printable_name(g.name).c_str());
  // An edge that is not float32 (--io-precision quantized) shows its type and quantization.
  auto edge_text = [&](const std::string& v) {
    const TensorType& t = g.type(v);
    return t.dtype == DType::kFloat32 ? shape_str(t.shape) : t.str();
  };
  for (const auto& in : g.inputs) std::printf("  input  %-24s %s\n", printable_name(in).c_str(), edge_text(in).c_str());
  for (const auto& out : g.outputs)
    std::printf("  output %-24s %s\n", printable_name(out).c_str(), edge_text(out).c_str());
  if (g.batch.variable()) {
    std::string inputs;
    for (const auto& in : g.batch.inputs) inputs += (inputs.empty() ? "" : ", ") + printable_name(in);
    std::printf("  run-time batch %lld..%lld (%s): shapes are one item's; arena %zu bytes at %lld, %zu at %lld\n",
                static_cast<long long>(g.batch.min), static_cast<long long>(g.batch.max), inputs.c_str(),
                c.plan.arena_bytes_at(g.batch.min), static_cast<long long>(g.batch.min),
                c.plan.arena_bytes_at(g.batch.max), static_cast<long long>(g.batch.max));
  }
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
  if (half_precision) {
    std::string kept;
    for (std::size_t i = 0; i < float32_nodes.size() && i < 8; ++i)
      kept += (kept.empty() ? "" : ", ") + printable_name(float32_nodes[i]);
    if (float32_nodes.size() > 8) kept += ", ... (" + std::to_string(float32_nodes.size() - 8) + " more)";
    std::printf("\nprecision %s: %zu nodes store %s, %zu keep float32%s%s\n", precision_name(c.target.precision).c_str(),
                half_nodes.size(), c.target.precision == Precision::kFP16 ? "float16" : "bfloat16",
                float32_nodes.size(), kept.empty() ? "" : ": ", kept.c_str());
  }
  std::printf("\nparameters %lld (%zu bytes), %.4g FLOPs per run\n", static_cast<long long>(g.parameter_count()),
              weight_bytes, total_flops);
  char bound[64] = "no --max-weight-growth";
  if (c.target.max_weight_growth > 0)
    std::snprintf(bound, sizeof bound, "--max-weight-growth %g", c.target.max_weight_growth);
  if (generated_weight_bytes)
    std::printf("weights as generated %zu bytes, %.2fx the model's (%s)\n", *generated_weight_bytes, growth, bound);
  else
    std::printf("weights as generated: not known without the weights' values (%s)\n", bound);
  const MemoryPlan& p = c.plan;
  std::printf("memory plan (%s) for --target %s: arena %zu bytes, lower bound %zu, without reuse %zu\n",
              p.strategy.c_str(), c.target.name.c_str(), p.arena_bytes, p.lower_bound_bytes, p.naive_bytes);
  std::printf("%s", small_arena_note(p, flags.compile.small_arena).c_str());
  if (p.item_bytes)
    std::printf(
        "  a fixed region of %zu bytes, then %zu bytes per batch item (offsets and bytes marked * are per item)\n",
        p.fixed_bytes, p.item_bytes);
  std::printf("  %-32s %10s %10s %8s\n", "buffer", "offset", "bytes", "steps");
  for (const auto& b : p.buffers) {
    const char* mark = !p.item_bytes ? "" : b.per_item ? "*" : " ";
    std::printf("  %-32s %10zu%s %10zu%s %4d-%-3d\n", printable_name(b.value).c_str(), b.offset, mark, b.bytes, mark,
                b.first_step, b.last_step);
  }
  if (board) std::printf("\n%s", board_report_text(*board).c_str());
  if (!not_measured.empty()) std::printf("\nnot measured on %s: %s\n", c.target.board.c_str(), not_measured.c_str());
  if (sqnr) std::printf("\n%s", sqnr_table(sqnr->layers).c_str());
  if (!written.empty()) std::printf("\n");
  for (const auto& path : written) std::printf("wrote %s\n", path.c_str());
  return 0;
}

}  // namespace hybgen
