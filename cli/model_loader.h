// Loads whatever model file the user names: hybgen's model.json (+ its
// .safetensors), an MXNet export (NAME-symbol.json + NAME-XXXX.params), an
// ONNX model (.onnx) or a TFLite model (.tflite), told apart by content, not
// by name.
//
//   ModelSource src{"resnet-symbol.json", std::nullopt, {{"data", {1, 3, 224, 224}}}};
//   Graph g = load_any_model(src);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ir/graph.h"

namespace hybgen {

struct ModelSource {
  std::string path;
  std::optional<std::string> weights;          // default: found beside the model
  std::map<std::string, Shape> input_shapes;   // MXNet inputs, ONNX symbolic dims (--shape)
  std::map<std::string, Shape> shape_hints;    // MXNet/ONNX inputs without --shape (from --input arrays)
  bool weights_optional = false;               // inspect works on the graph alone
  std::optional<uint64_t> random_weights_seed; // MXNet symbol without .params: seeded random weights
  // --shape NAME=MIN..MAX,...: a run-time batch; its inputs are loaded at one
  // item (input_shapes holds 1 there) and the graph gets this range.
  BatchRange batch;
};

Graph load_any_model(const ModelSource& source);

// "data=1,3,224,224" -> {"data", {1, 3, 224, 224}}; Error naming the flag otherwise.
// A first dimension MIN..MAX ("data=1..64,3,224,224") is a run-time batch:
// the shape holds one item (1) there and `batch_range` gets {MIN, MAX}.
std::pair<std::string, Shape> parse_shape_flag(const std::string& text,
                                               std::optional<std::pair<int64_t, int64_t>>* batch_range = nullptr);
// Every --shape flag into `source` (input_shapes, batch); Error for ranges
// that differ between inputs.
void add_shape_flags(const std::vector<std::string>& flags, ModelSource& source);
// "NAME=path" -> {"NAME", "path"}.
std::pair<std::string, std::string> parse_named_path(const std::string& text, const std::string& flag);

// The default C name for generated files: the model file's stem as an identifier.
std::string default_model_name(const std::string& path);

}  // namespace hybgen
