#include "cli/model_loader.h"

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

Graph load_any_model(const ModelSource& source) {
  if (looks_like_onnx(source.path)) {
    if (source.weights)
      throw Error(source.path + ": --weights is not for ONNX files: their weights are inside them (or in external data "
                  "files next to them)");
    if (source.random_weights_seed) throw Error(source.path + ": --random-weights is for MXNet symbol files, not ONNX");
    OnnxImportOptions options;
    options.input_shapes = source.input_shapes;
    // Shapes of --input arrays fill symbolic dims only where --shape says nothing.
    for (const auto& [name, shape] : source.shape_hints) options.input_shapes.emplace(name, shape);
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
  if (!source.input_shapes.empty())
    throw Error(source.path + ": --shape is for MXNet and ONNX files; a hybgen model stores its input shapes");
  if (source.weights_optional && !source.weights) {
    std::error_code ec;
    if (!std::filesystem::exists(replace_extension(source.path, ".safetensors"), ec))
      return graph_from_json(json, source.path);
  }
  return load_model(source.path, source.weights);
}

std::pair<std::string, Shape> parse_shape_flag(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error("--shape " + quoted_name(text) + " must look like NAME=D1,D2,... (e.g. data=1,3,224,224)");
  Shape shape;
  std::size_t start = eq + 1;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::size_t used = 0;
    long long d = -1;
    try {
      d = std::stoll(item, &used);
    } catch (const std::exception&) {
    }
    if (used != item.size() || d <= 0) throw Error("--shape " + quoted_name(text) + ": " + quoted_name(item) + " is not a positive integer");
    shape.push_back(d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  checked_tensor_bytes(shape, sizeof(float), "--shape " + quoted_name(text));
  return {text.substr(0, eq), shape};
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
