#include "cli/model_loader.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "emit/cpp_emitter.h"
#include "io/file_util.h"
#include "io/json_util.h"
#include "io/model_json.h"
#include "io/mxnet/mxnet_params.h"
#include "io/mxnet/mxnet_symbol.h"
#include "io/onnx/onnx_model.h"
#include "io/tflite/tflite_model.h"
#include "ir/error.h"
#include "ir/limits.h"
#include "ir/names.h"

namespace hybgen {

namespace {

// A hybgen model stores its shapes: a run-time batch's --shape must agree
// with them past the first dimension, which becomes one item.
void take_batch_items(Graph& graph, const ModelSource& source) {
  for (const auto& [name, shape] : source.input_shapes) {
    if (std::find(source.batch.inputs.begin(), source.batch.inputs.end(), name) == source.batch.inputs.end())
      throw Error(source.path +
                  ": --shape is for MXNet and ONNX files; a hybgen model stores its input shapes (a "
                  "run-time batch, NAME=MIN..MAX,..., is the exception)");
    if (!graph.is_input(name))
      throw Error(source.path + ": --shape names " + quoted_name(name) + ", which is not an input");
    Shape& stored = graph.types.at(name).shape;
    if (stored.size() != shape.size() ||
        !std::equal(stored.begin() + (stored.empty() ? 0 : 1), stored.end(), shape.begin() + (shape.empty() ? 0 : 1)))
      throw Error(source.path + ": input " + quoted_name(name) + " is " + shape_str(stored) +
                  " in the model; --shape gives " + shape_str(shape) + " past its batch");
    stored[0] = 1;
  }
}

Graph load_model_file(const ModelSource& source);

}  // namespace

Graph load_any_model(const ModelSource& source) {
  Graph graph = load_model_file(source);
  if (source.batch.variable()) {
    for (const auto& name : source.batch.inputs)
      if (!graph.is_input(name))
        throw Error(source.path + ": --shape names " + quoted_name(name) + ", which is not an input");
    graph.batch = source.batch;
  }
  return graph;
}

namespace {

Graph load_model_file(const ModelSource& source) {
  if (looks_like_onnx(source.path)) {
    if (source.weights)
      throw Error(source.path + ": --weights is not for ONNX files: their weights are inside them (or in external data "
                  "files next to them)");
    if (source.random_weights_seed) throw Error(source.path + ": --random-weights is for MXNet symbol files, not ONNX");
    OnnxImportOptions options;
    options.input_shapes = source.input_shapes;
    // Shapes of --input arrays fill symbolic dims only where --shape says nothing.
    for (const auto& [name, shape] : source.shape_hints) options.input_shapes.emplace(name, shape);
    if (source.batch.variable()) return import_onnx_with_batch(source.path, options, source.batch.inputs);
    return import_onnx(source.path, options);
  }
  if (looks_like_tflite(source.path)) {
    if (source.weights) throw Error(source.path + ": --weights is not for TFLite files: their weights are inside them");
    if (source.random_weights_seed)
      throw Error(source.path + ": --random-weights is for MXNet symbol files, not TFLite");
    if (!source.input_shapes.empty())
      throw Error(source.path + ": --shape is not for TFLite files: their input shapes are fixed in them");
    return import_tflite(source.path, {});
  }
  const nlohmann::json json = read_json_file(source.path);
  if (looks_like_mxnet_symbol(json)) {
    check_mxnet_symbol_fields(json, source.path);  // a broken symbol file is told so before its .params is sought
    MxnetImportOptions options;
    options.random_weights_seed = source.random_weights_seed;
    std::optional<std::string> params;
    if (!source.random_weights_seed) {
      params = source.weights ? source.weights : find_mxnet_params(source.path);
      if (!params)
        throw Error(source.path + ": no NAME-XXXX.params beside this MXNet symbol file (use --weights to name it, or "
                    "--random-weights SEED to test with made-up weights)");
    }
    options.input_shapes = source.input_shapes;
    options.input_shapes.insert(source.shape_hints.begin(), source.shape_hints.end());
    std::map<std::string, Constant> weights;
    if (params) weights = read_mxnet_params(*params);
    return import_mxnet_symbol(json, source.path, params ? &weights : nullptr, params ? *params : "", options);
  }
  Graph graph;
  std::error_code ec;
  if (source.weights_optional && !source.weights &&
      !std::filesystem::exists(replace_extension(source.path, ".safetensors"), ec))
    graph = graph_from_json(json, source.path);
  else
    graph = load_model(source.path, source.weights);
  take_batch_items(graph, source);
  return graph;
}

}  // namespace

std::pair<std::string, Shape> parse_shape_flag(const std::string& text,
                                               std::optional<std::pair<int64_t, int64_t>>* batch_range) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error("--shape " + quoted_name(text) +
                " must look like NAME=D1,D2,... (e.g. data=1,3,224,224, or "
                "data=1..64,3,224,224 for a run-time batch)");
  auto positive = [&](const std::string& item) {
    std::size_t used = 0;
    long long d = -1;
    try {
      d = std::stoll(item, &used);
    } catch (const std::exception&) {
    }
    if (used != item.size() || d <= 0)
      throw Error("--shape " + quoted_name(text) + ": " + quoted_name(item) + " is not a positive integer");
    return static_cast<int64_t>(d);
  };
  Shape shape;
  std::size_t start = eq + 1;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t dots = item.find("..");
    if (dots != std::string::npos) {
      if (!shape.empty() || !batch_range)
        throw Error("--shape " + quoted_name(text) + ": only the first dimension may be a range MIN..MAX (the batch)");
      const int64_t lo = positive(item.substr(0, dots)), hi = positive(item.substr(dots + 2));
      if (lo > hi) throw Error("--shape " + quoted_name(text) + ": the batch range " + item + " is empty");
      *batch_range = std::make_pair(lo, hi);
      shape.push_back(1);
    } else {
      shape.push_back(positive(item));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  Shape largest = shape;
  if (batch_range && *batch_range) largest[0] = (*batch_range)->second;
  checked_tensor_bytes(largest, sizeof(float), "--shape " + quoted_name(text));
  return {text.substr(0, eq), shape};
}

void add_shape_flags(const std::vector<std::string>& flags, ModelSource& source) {
  for (const auto& flag : flags) {
    std::optional<std::pair<int64_t, int64_t>> range;
    auto [name, shape] = parse_shape_flag(flag, &range);
    source.input_shapes[name] = shape;
    if (!range) continue;
    if (source.batch.variable() && (source.batch.min != range->first || source.batch.max != range->second))
      throw Error("--shape " + quoted_name(flag) + ": every input's batch range must be the same (another says " +
                  std::to_string(source.batch.min) + ".." + std::to_string(source.batch.max) + ")");
    source.batch.min = range->first;
    source.batch.max = range->second;
    source.batch.inputs.push_back(name);
  }
}

std::pair<std::string, std::string> parse_named_path(const std::string& text, const std::string& flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error(flag + " " + quoted_name(text) + " must look like NAME=file.npy");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::string default_model_name(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  for (const std::string suffix : {"-symbol.json", ".json", ".onnx", ".tflite"})
    if (stem.size() > suffix.size() && stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0) {
      stem.resize(stem.size() - suffix.size());
      break;
    }
  return c_identifier(stem);
}

}  // namespace hybgen
