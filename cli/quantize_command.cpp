// hybgen quantize: calibrate a float model on sample inputs and write its
// int8 form (passes/quantize_graph.h) as PREFIX.json + PREFIX.safetensors.
// Everything is checked and computed before anything is written, and the two
// files are written all or none.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "cli/calibration_data.h"
#include "cli/commands.h"
#include "io/file_util.h"
#include "io/model_json.h"
#include "ir/error.h"
#include "ir/names.h"
#include "passes/quantize_graph.h"
#include "pipeline.h"
#include "runtime-lite/calibration.h"

namespace hybgen {

int run_quantize(const QuantizeFlags& flags) {
  const CalibrationMethod method = parse_calibration_method(flags.method);
  if (!(flags.percentile > 0.0 && flags.percentile <= 100.0))
    throw Error("--percentile must lie in (0, 100], got " + std::to_string(flags.percentile));
  if (flags.calibration.empty()) throw Error("--calibration X.npy is required (one or more files)");
  if (flags.out_prefix.empty()) throw Error("-o PREFIX is required");
  Graph graph;
  try {
    graph = prepare_for_quantization(load_any_model(flags.model.source()));
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  // A misspelt node is reported before calibration, which may take long.
  for (const auto& name : flags.keep_float)
    if (std::none_of(graph.nodes.begin(), graph.nodes.end(), [&](const Node& n) { return n.name == name; }))
      throw Error("--keep-float: the graph has no node " + quoted_name(name));
  const CalibrationData data = read_calibration(graph, flags.input, flags.calibration);
  const std::vector<std::map<std::string, Tensor>>& batches = data.batches;  // kept to measure the int8 model on
  Calibrator calibrator(graph);
  for (const auto& batch : batches) calibrator.add_batch(batch);
  const int64_t samples = data.samples;

  QuantizeOptions options;
  options.keep_float.insert(flags.keep_float.begin(), flags.keep_float.end());
  const std::map<std::string, ValueRange> ranges = calibrator.ranges(method, flags.percentile);
  QuantizedGraph q = quantize_graph(graph, ranges, options);
  std::vector<NodeSqnr> sqnr = quantization_sqnr(graph, q.graph, q.int8_nodes, batches);
  // Keeping one layer float changes the error of every layer after it, so
  // the worst goes first and the rest are measured again.
  std::vector<NodeSqnr> kept;  // by --min-sqnr, in the order kept
  bool bounded = false;
  if (flags.min_sqnr) {
    while (!sqnr.empty() && sqnr.front().db < *flags.min_sqnr) {
      if (static_cast<int>(kept.size()) == flags.max_sqnr_rounds) {
        bounded = true;
        break;
      }
      kept.push_back(sqnr.front());
      options.keep_float.insert(sqnr.front().node);
      q = quantize_graph(graph, ranges, options);
      sqnr = quantization_sqnr(graph, q.graph, q.int8_nodes, batches);
    }
  }
  try {
    compile_graph(q.graph);  // refuse to write a model hybgen cannot compile
  } catch (const Error& e) {
    throw Error("the quantized model does not compile: " + std::string(e.what()));
  }
  for (FloatNode& f : q.float_nodes)
    for (const NodeSqnr& k : kept)
      if (f.node == k.node) {
        char db[32];
        std::snprintf(db, sizeof db, "%.1f", k.db);
        f.reason = std::string("--min-sqnr: ") + db + " dB in int8";
      }
  const std::string table = sqnr_table(sqnr);
  if (flags.report.empty()) {
    save_model(q.graph, flags.out_prefix);
  } else {
    // The report with the model, all or none.
    std::vector<OutputFile> files = model_files(q.graph, flags.out_prefix);
    files.push_back({flags.report, table});
    write_files_atomic(files);
  }

  std::printf("calibrated on %lld samples (%d runs), method %s\n", static_cast<long long>(samples),
              calibrator.batches(), flags.method.c_str());
  std::printf("int8 (%zu):", q.int8_nodes.size());
  for (const auto& n : q.int8_nodes) std::printf(" %s", quoted_name(n).c_str());
  std::printf("\nfloat (%zu):\n", q.float_nodes.size());
  for (const auto& f : q.float_nodes) std::printf("  %s: %s\n", quoted_name(f.node).c_str(), f.reason.c_str());
  if (!kept.empty()) {
    std::printf("kept float by --min-sqnr %g dB (%zu):", *flags.min_sqnr, kept.size());
    for (const auto& k : kept) std::printf(" %s (%.1f dB)", quoted_name(k.node).c_str(), k.db);
    std::printf("\n");
  }
  if (bounded)
    std::printf("stopped after %d layers kept float: %zu int8 layers remain below %g dB\n", flags.max_sqnr_rounds,
                static_cast<std::size_t>(
                    std::count_if(sqnr.begin(), sqnr.end(), [&](const NodeSqnr& n) { return n.db < *flags.min_sqnr; })),
                *flags.min_sqnr);
  std::fputs(table.c_str(), stdout);
  std::printf("wrote %s.json and %s.safetensors (weights %zu bytes, float model %zu)\n", flags.out_prefix.c_str(),
              flags.out_prefix.c_str(), q.graph.weight_bytes(), graph.weight_bytes());
  return 0;
}

}  // namespace hybgen
