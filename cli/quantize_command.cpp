// hybgen quantize: calibrate a float model on sample inputs and write its
// int8 form (passes/quantize_graph.h) as PREFIX.json + PREFIX.safetensors.
// Everything is checked and computed before anything is written, and the two
// files are written all or none.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "cli/commands.h"
#include "io/file_util.h"
#include "io/model_json.h"
#include "io/npy.h"
#include "ir/error.h"
#include "ir/names.h"
#include "passes/quantize_graph.h"
#include "pipeline.h"
#include "runtime-lite/calibration.h"

namespace hybgen {
namespace {

// One line per int8 node, worst first, as `hybgen quantize` prints it.
std::string sqnr_table(const std::vector<NodeSqnr>& sqnr) {
  std::string text =
      "SQNR of each int8 node's output against the float model's, on the calibration data (dB, worst "
      "first):\n";
  for (const NodeSqnr& n : sqnr) {
    char line[64];
    std::snprintf(line, sizeof line, "  %8.2f  ", n.db);
    text += line + quoted_name(n.node) + "\n";
  }
  return text;
}

}  // namespace

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
  if (graph.inputs.empty()) throw Error(flags.model.model + ": the model has no input to calibrate");
  std::string input = flags.input;
  if (input.empty()) {
    if (graph.inputs.size() != 1) {
      std::string names;
      for (const auto& n : graph.inputs) names += (names.empty() ? "" : ", ") + quoted_name(n);
      throw Error("the model has several inputs (" + names + "): calibrating one alone is not supported yet");
    }
    input = graph.inputs[0];
  } else if (!graph.is_input(input)) {
    throw Error("--input: the model has no input " + quoted_name(input));
  } else if (graph.inputs.size() != 1) {
    throw Error("the model has several inputs: calibrating one alone is not supported yet");
  }
  const TensorType& type = graph.type(input);
  if (type.dtype != DType::kFloat32) throw Error("input " + quoted_name(input) + " is " + type.str() + ", not float32");
  if (type.shape.empty() || type.shape[0] < 1)
    throw Error("input " + quoted_name(input) + " has shape " + shape_str(type.shape) + ": no batch dimension");

  // A misspelt node is reported before calibration, which may take long.
  for (const auto& name : flags.keep_float)
    if (std::none_of(graph.nodes.begin(), graph.nodes.end(), [&](const Node& n) { return n.name == name; }))
      throw Error("--keep-float: the graph has no node " + quoted_name(name));

  // Each file is a batch of samples along its first dimension, run in
  // chunks of the model's own batch.
  const int64_t batch = type.shape[0];
  const int64_t sample = type.num_elements() / batch;
  Calibrator calibrator(graph);
  std::vector<std::map<std::string, Tensor>> batches;  // kept to measure the int8 model on
  int64_t samples = 0;
  for (const std::string& path : flags.calibration) {
    const NpyArray a = read_npy(path);
    const Shape expected_tail(type.shape.begin() + 1, type.shape.end());
    if (a.shape.size() != type.shape.size() || Shape(a.shape.begin() + 1, a.shape.end()) != expected_tail ||
        a.shape[0] < 1)
      throw Error(path + ": shape " + shape_str(a.shape) + ", expected (N, " + shape_str(expected_tail).substr(1) +
                  " with N samples of input " + quoted_name(input) + " " + shape_str(type.shape));
    if (a.shape[0] % batch != 0)
      throw Error(path + ": " + std::to_string(a.shape[0]) + " samples, not a multiple of the model's batch " +
                  std::to_string(batch));
    for (std::size_t i = 0; i < a.data.size(); ++i)
      if (!std::isfinite(a.data[i]))
        throw Error(path + ": element " + std::to_string(i) + " is " + (std::isnan(a.data[i]) ? "NaN" : "infinite"));
    for (int64_t first = 0; first < a.shape[0]; first += batch) {
      const auto begin = a.data.begin() + first * sample;
      batches.push_back({{input, Tensor::from_vector(type.shape, std::vector<float>(begin, begin + batch * sample))}});
      calibrator.add_batch(batches.back());
    }
    samples += a.shape[0];
  }

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
