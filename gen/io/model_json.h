// hybgen's own model format: `NAME.json` (the graph, docs/model-format.md)
// beside `NAME.safetensors` (the weights).
//
//   save_model(graph, "out/mlp");                    // out/mlp.json + out/mlp.safetensors
//   Graph g = load_model("out/mlp.json");            // weights from the .safetensors beside it
//   Graph g = load_model("m.json", "w.safetensors");
//   nlohmann::ordered_json j = graph_to_json(g);     // what model.json holds
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "io/file_util.h"
#include "ir/graph.h"

namespace hybgen {

// The newest format_version this hybgen reads; it writes 1 unless the graph
// has quantized inputs or weights (version 2).
constexpr int kModelFormatVersion = 3;
constexpr const char* kModelFormatName = "hybgen-graph";

// The graph without weight data; weights are listed with name, shape, dtype.
// Values whose type is unknown are written with "shape": null. Ordered, so
// the keys keep the documented order (format, format_version, name, ...).
nlohmann::ordered_json graph_to_json(const Graph& graph);
// The text of model.json: graph_to_json with its documented key order, 2-space
// indent and a final newline. Deterministic.
std::string model_json_text(const Graph& graph);
// Throws Error naming `source` and the offending node or field.
Graph graph_from_json(const nlohmann::json& json, const std::string& source);

// Graph only: the weights stay without data.
Graph read_model_json(const std::string& path);
// Graph and weights. `weights_path` defaults to the json path with its
// extension replaced by `.safetensors`; a missing file, a missing tensor or a
// tensor whose shape disagrees with the graph is an Error naming both.
Graph load_model(const std::string& json_path, const std::optional<std::string>& weights_path = std::nullopt);
// Writes PREFIX.json and PREFIX.safetensors (each atomically).
void save_model(const Graph& graph, const std::string& prefix);
// The two files save_model writes, for a caller that writes more with them,
// all or none (write_files_atomic).
std::vector<OutputFile> model_files(const Graph& graph, const std::string& prefix);

// Path with its extension replaced: ("a/m.json", ".safetensors") -> "a/m.safetensors".
std::string replace_extension(const std::string& path, const std::string& extension);

}  // namespace hybgen
