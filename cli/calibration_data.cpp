#include "cli/calibration_data.h"

#include <cmath>
#include <cstdio>

#include "io/npy.h"
#include "ir/error.h"
#include "ir/names.h"

namespace hybgen {

CalibrationData read_calibration(const Graph& graph, const std::string& input_flag,
                                 const std::vector<std::string>& paths) {
  if (graph.inputs.empty()) throw Error("the model has no input to calibrate");
  CalibrationData data;
  data.input = input_flag;
  if (data.input.empty()) {
    if (graph.inputs.size() != 1) {
      std::string names;
      for (const auto& n : graph.inputs) names += (names.empty() ? "" : ", ") + quoted_name(n);
      throw Error("the model has several inputs (" + names + "): calibrating one alone is not supported yet");
    }
    data.input = graph.inputs[0];
  } else if (!graph.is_input(data.input)) {
    throw Error("--input: the model has no input " + quoted_name(data.input));
  } else if (graph.inputs.size() != 1) {
    throw Error("the model has several inputs: calibrating one alone is not supported yet");
  }
  const std::string& input = data.input;
  const TensorType& type = graph.type(input);
  if (type.dtype != DType::kFloat32) throw Error("input " + quoted_name(input) + " is " + type.str() + ", not float32");
  if (type.shape.empty() || type.shape[0] < 1)
    throw Error("input " + quoted_name(input) + " has shape " + shape_str(type.shape) + ": no batch dimension");

  // Each file is a batch of samples along its first dimension, run in
  // chunks of the model's own batch.
  const int64_t batch = type.shape[0];
  const int64_t sample = type.num_elements() / batch;
  for (const std::string& path : paths) {
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
      data.batches.push_back(
          {{input, Tensor::from_vector(type.shape, std::vector<float>(begin, begin + batch * sample))}});
    }
    data.samples += a.shape[0];
  }
  return data;
}

}  // namespace hybgen
