// What `hybgen quantize` and `hybgen inspect --calibration` share: calibration
// .npy files read into batches of a model's input (runtime-lite/calibration.h
// measures the SQNR both print, with sqnr_table).
//
//   CalibrationData data = read_calibration(graph, "", {"x.npy"});   // Error naming the file for bad data
//   std::vector<NodeSqnr> s = quantization_sqnr(graph, int8, int8_nodes_of(graph, int8), data.batches);
//   std::fputs(sqnr_table(s).c_str(), stdout);
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/quantize_graph.h"
#include "runtime-lite/calibration.h"
#include "runtime-lite/tensor.h"

namespace hybgen {

struct CalibrationData {
  std::string input;                                   // the graph input the samples feed
  std::vector<std::map<std::string, Tensor>> batches;  // one per run, of the input's shape
  int64_t samples = 0;
};

// Each file is a float32 .npy of N samples of `graph`'s input (first
// dimension N, the others the input's), cut into chunks of the model's batch
// (the input's first dimension). `input` names the input; empty: the graph's
// only one. Error naming the file for a wrong shape, a sample count that is
// not a multiple of the batch, NaN or infinity; naming the input for a model
// with several inputs or a non-float32 one. Every file is checked before any
// batch is returned.
CalibrationData read_calibration(const Graph& graph, const std::string& input, const std::vector<std::string>& paths);

}  // namespace hybgen
