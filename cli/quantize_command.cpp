// hybgen quantize: calibrate a float model on sample inputs and write its
// int8 form (passes/quantize_graph.h) as PREFIX.json + PREFIX.safetensors.
// Everything is checked and computed before anything is written, and the two
// files are written all or none.
#include <cmath>
#include <cstdio>

#include "cli/commands.h"
#include "io/file_util.h"
#include "io/model_json.h"
#include "io/npy.h"
#include "ir/error.h"
#include "ir/names.h"
#include "passes/quantize_graph.h"
#include "runtime-lite/calibration.h"

namespace hybgen {

int run_quantize(const QuantizeFlags& flags) {
  PostTrainingOptions options;
  options.method = parse_calibration_method(flags.method);
  options.percentile = flags.percentile;
  options.keep_float = flags.keep_float;
  options.min_sqnr = flags.min_sqnr;
  options.max_sqnr_rounds = flags.max_sqnr_rounds;
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

  // Each file is a batch of samples along its first dimension, run in
  // chunks of the model's own batch.
  const int64_t batch = type.shape[0];
  const int64_t sample = type.num_elements() / batch;
  std::vector<std::map<std::string, Tensor>> batches;
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
    }
    samples += a.shape[0];
  }

  const PostTrainingQuantization q = quantize_post_training(graph, batches, options);
  if (flags.report.empty()) {
    save_model(q.quantized.graph, flags.out_prefix);
  } else {
    // The report with the model, all or none.
    std::vector<OutputFile> files = model_files(q.quantized.graph, flags.out_prefix);
    files.push_back({flags.report, sqnr_table(q.sqnr)});
    write_files_atomic(files);
  }

  std::printf("calibrated on %lld samples (%d runs), method %s\n", static_cast<long long>(samples), q.batches,
              calibration_method_name(options.method));
  std::fputs(post_training_report(q).c_str(), stdout);
  std::printf("wrote %s.json and %s.safetensors (weights %zu bytes, float model %zu)\n", flags.out_prefix.c_str(),
              flags.out_prefix.c_str(), q.quantized.graph.weight_bytes(), graph.weight_bytes());
  return 0;
}

}  // namespace hybgen
