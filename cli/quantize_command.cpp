// hybgen quantize: calibrate a float model on sample inputs and write its
// int8 form (passes/quantize_graph.h) as PREFIX.json + PREFIX.safetensors.
// Everything is checked and computed before anything is written, and the two
// files are written all or none.
#include <cmath>
#include <cstdio>

#include "cli/calibration_data.h"
#include "cli/commands.h"
#include "io/file_util.h"
#include "io/model_json.h"
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
  const CalibrationData data = read_calibration(graph, flags.input, flags.calibration);
  const std::vector<std::map<std::string, Tensor>>& batches = data.batches;
  const int64_t samples = data.samples;

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
