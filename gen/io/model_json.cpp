// hybgen's model.json: reading checks structure and JSON types only; op names
// and attribute schemas are checked by passes/validate, which knows the
// registry.
#include "io/model_json.h"

#include <cmath>
#include <filesystem>

#include "io/file_util.h"
#include "io/json_util.h"
#include "io/safetensors.h"
#include "ir/error.h"
#include "ir/limits.h"
#include "ir/names.h"
#include "ir/quantization_json.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

using ojson = nlohmann::ordered_json;

// JSON has no NaN or infinity; nlohmann would write null, which reads back as an error.
double finite(double v, const std::string& where) {
  if (!std::isfinite(v)) throw Error(where + " is " + std::to_string(v) + ", which model.json cannot hold");
  return v;
}

ojson attr_to_json(const AttrValue& value, const std::string& where) {
  switch (attr_kind_of(value)) {
    case AttrKind::kInt: return std::get<int64_t>(value);
    case AttrKind::kFloat: return finite(std::get<double>(value), where);
    case AttrKind::kBool: return std::get<bool>(value);
    case AttrKind::kString: return std::get<std::string>(value);
    case AttrKind::kInts: {
      ojson list = ojson::array();
      for (int64_t v : std::get<std::vector<int64_t>>(value)) list.push_back(v == kSliceNone ? ojson(nullptr) : ojson(v));
      return list;
    }
    case AttrKind::kFloats: {
      ojson list = ojson::array();
      for (double v : std::get<std::vector<double>>(value)) list.push_back(finite(v, where));
      return list;
    }
  }
  return nullptr;
}

// {name, shape, dtype[, quantization]}; "shape": null when the value's type
// is unknown (a symbol traced without shapes), which model.json readers reject.
ojson type_to_json(const std::string& name, const Graph& g) {
  ojson j;
  j["name"] = name;
  auto it = g.types.find(name);
  if (it == g.types.end()) {
    j["shape"] = nullptr;
    j["dtype"] = "float32";
  } else {
    j["shape"] = it->second.shape;
    j["dtype"] = dtype_name(it->second.dtype);
    if (!it->second.quantization.empty()) j["quantization"] = quantization_to_json(it->second.quantization);
  }
  return j;
}

// Version 2 added quantization, version 3 a run-time batch; a file without
// them stays version 1, which every earlier reader takes.
int format_version_of(const Graph& g) {
  if (g.batch.variable()) return 3;
  auto quantized = [&](const std::string& value) {
    auto it = g.types.find(value);
    return it != g.types.end() && !it->second.quantization.empty();
  };
  for (const auto& in : g.inputs)
    if (quantized(in)) return 2;
  for (const auto& [name, c] : g.constants)
    if (quantized(name)) return 2;
  return 1;
}

AttrValue attr_from_json(const nlohmann::json& v, const std::string& where) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    bool all_int = true, has_null = false;
    for (const auto& e : v) {
      has_null = has_null || e.is_null();
      if (!e.is_number() && !e.is_null())
        throw Error(where + " must be a number, string, bool or a list of numbers, got " + json_excerpt(v));
      all_int = all_int && (e.is_number_integer() || e.is_null());
    }
    if (all_int) {
      std::vector<int64_t> ints;
      for (const auto& e : v) ints.push_back(e.is_null() ? kSliceNone : e.get<int64_t>());
      return ints;
    }
    if (has_null) throw Error(where + ": null is allowed only in integer lists (as None)");
    return v.get<std::vector<double>>();
  }
  throw Error(where + " must be a number, string, bool or a list of numbers, got " + json_excerpt(v));
}

const nlohmann::json& field(const nlohmann::json& obj, const char* key, const std::string& where) {
  if (!obj.is_object()) throw Error(where + ": must be a JSON object, got " + obj.type_name());
  if (!obj.contains(key)) throw Error(where + ": missing field '" + key + "'");
  return obj[key];
}

// The "name" of an input, weight or node entry.
std::string entry_name(const nlohmann::json& entry, const std::string& where) {
  const auto& name = field(entry, "name", where);
  if (!name.is_string()) throw Error(where + ": field 'name' must be a string");
  return name.get<std::string>();
}

std::vector<std::string> string_list(const nlohmann::json& v, const std::string& where, const char* key) {
  if (!v.is_array()) throw Error(where + ": field '" + key + "' must be a list of strings");
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) throw Error(where + ": field '" + key + "' must be a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Quantization quantization_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + " must be an object {scale, zero_point[, axis]}, got " + json_excerpt(j));
  for (const auto& [key, value] : j.items()) {
    (void)value;
    if (key != "scale" && key != "zero_point" && key != "axis")
      throw Error(where + ": unknown field " + quoted_name(key) + " (expected scale, zero_point, axis)");
  }
  Quantization q;
  const auto& scale = field(j, "scale", where);
  if (!scale.is_array() || scale.empty()) throw Error(where + ": 'scale' must be a non-empty list of numbers");
  for (const auto& s : scale) {
    if (!s.is_number()) throw Error(where + ": 'scale' must be a list of numbers, got " + json_excerpt(scale));
    q.scale.push_back(static_cast<float>(s.get<double>()));
  }
  const auto& zero_point = field(j, "zero_point", where);
  if (!zero_point.is_array()) throw Error(where + ": 'zero_point' must be a list of integers");
  for (const auto& z : zero_point) {
    if (!z.is_number_integer())
      throw Error(where + ": 'zero_point' must be a list of integers, got " + json_excerpt(zero_point));
    q.zero_point.push_back(z.get<int64_t>());
  }
  if (j.contains("axis")) {
    const auto& axis = j["axis"];
    if (!axis.is_number_integer() || axis.get<int64_t>() < 0 ||
        axis.get<int64_t>() > static_cast<int64_t>(limits::kMaxRank))
      throw Error(where + ": 'axis' must be an axis of the shape, got " + json_excerpt(axis));
    q.axis = static_cast<int>(axis.get<int64_t>());
  }
  return q;
}

// `what` is "input" or "weight"; `where` is "SOURCE: input 0 ('data')".
TensorType tensor_type(const nlohmann::json& entry, const std::string& source, const std::string& where,
                       const std::string& what, const std::string& name) {
  if (!entry.contains("shape") || entry["shape"].is_null())
    throw Error(source + ": " + what + " " + quoted_name(name) + " has no shape (model.json needs a fixed shape for every " +
                what + ")");
  const auto& shape = entry["shape"];
  if (!shape.is_array()) throw Error(where + ": field 'shape' must be a list of integers, got " + json_excerpt(shape));
  TensorType t;
  for (const auto& d : shape) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      throw Error(where + ": field 'shape' must be a list of non-negative integers, got " + json_excerpt(shape));
    t.shape.push_back(d.get<int64_t>());
  }
  checked_tensor_bytes(t.shape, 1, where);
  if (entry.contains("dtype")) {
    if (!entry["dtype"].is_string()) throw Error(where + ": field 'dtype' must be a string");
    try {
      t.dtype = parse_dtype(entry["dtype"].get<std::string>());
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
  }
  if (entry.contains("quantization")) {
    t.quantization = quantization_from_json(entry["quantization"], where + ": field 'quantization'");
    check_quantization(t, where);
  }
  return t;
}

}  // namespace

nlohmann::ordered_json graph_to_json(const Graph& graph) {
  ojson j;
  j["format"] = kModelFormatName;
  j["format_version"] = format_version_of(graph);
  j["name"] = graph.name;
  j["inputs"] = ojson::array();
  for (const auto& in : graph.inputs) j["inputs"].push_back(type_to_json(in, graph));
  j["outputs"] = graph.outputs;
  if (graph.batch.variable())
    j["batch"] = {{"min", graph.batch.min}, {"max", graph.batch.max}, {"inputs", graph.batch.inputs}};
  j["weights"] = ojson::array();
  for (const auto& [name, c] : graph.constants) {  // std::map: sorted by name
    (void)c;
    j["weights"].push_back(type_to_json(name, graph));
  }
  j["nodes"] = ojson::array();
  for (const auto& node : graph.nodes) {
    ojson n;
    n["name"] = node.name;
    n["op"] = node.op;
    n["inputs"] = node.inputs;
    n["outputs"] = node.outputs;
    ojson attrs = ojson::object();
    for (const auto& [k, v] : node.attrs.values())
      attrs[k] = attr_to_json(v, node_label(node.name, node.op) + ": attribute " + quoted_name(k));
    n["attrs"] = attrs;
    j["nodes"].push_back(n);
  }
  return j;
}

std::string model_json_text(const Graph& graph) { return graph_to_json(graph).dump(2) + "\n"; }

Graph graph_from_json(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) throw Error(source + ": a model must be a JSON object");
  if (!json.contains("format"))
    throw Error(source + ": not a hybgen model (no \"format\" field, expected \"" + kModelFormatName + "\")");
  const auto& format = json["format"];
  if (!format.is_string() || format.get<std::string>() != kModelFormatName)
    throw Error(source + ": not a hybgen model (format " + json_excerpt(format) + ", expected \"" + kModelFormatName + "\")");
  const auto& version = field(json, "format_version", source);
  if (!version.is_number_integer() || version.get<int64_t>() < 1)
    throw Error(source + ": format_version must be a positive integer, got " + json_excerpt(version));
  if (version.get<int64_t>() > kModelFormatVersion)
    throw Error(source + ": written by a newer hybgen (format_version " + std::to_string(version.get<int64_t>()) +
                " > " + std::to_string(kModelFormatVersion) + ")");

  Graph g;
  if (json.contains("name")) {
    if (!json["name"].is_string()) throw Error(source + ": field 'name' must be a string");
    g.name = json["name"].get<std::string>();
  }
  const auto& inputs = field(json, "inputs", source);
  if (!inputs.is_array()) throw Error(source + ": field 'inputs' must be a list");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = entry_name(inputs[i], source + ": input " + std::to_string(i));
    const std::string where = source + ": input " + std::to_string(i) + " (" + quoted_name(name) + ")";
    g.add_input(name, tensor_type(inputs[i], source, where, "input", name));
  }
  g.outputs = string_list(field(json, "outputs", source), source, "outputs");
  if (json.contains("batch")) {  // a run-time batch: bounds and the inputs holding its items
    const auto& batch = json["batch"];
    const std::string where = source + ": field 'batch'";
    if (!batch.is_object()) throw Error(where + " must be an object");
    auto bound = [&](const char* name) {
      const auto& v = field(batch, name, where);
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<uint64_t>() > limits::kMaxTensorElements)
        throw Error(where + ": '" + name + "' must be a positive integer, got " + json_excerpt(v));
      return v.get<int64_t>();
    };
    g.batch.min = bound("min");
    g.batch.max = bound("max");
    if (g.batch.min > g.batch.max)
      throw Error(where + ": min " + std::to_string(g.batch.min) + " is above max " + std::to_string(g.batch.max));
    g.batch.inputs = string_list(field(batch, "inputs", where), where, "inputs");
    for (const auto& name : g.batch.inputs)
      if (!g.is_input(name)) throw Error(where + ": " + quoted_name(name) + " is not an input");
    if (g.batch.inputs.empty()) throw Error(where + ": 'inputs' names none");
  }
  if (json.contains("weights")) {
    const auto& weights = json["weights"];
    if (!weights.is_array()) throw Error(source + ": field 'weights' must be a list");
    for (std::size_t i = 0; i < weights.size(); ++i) {
      const std::string name = entry_name(weights[i], source + ": weight " + std::to_string(i));
      const std::string where = source + ": weight " + std::to_string(i) + " (" + quoted_name(name) + ")";
      Constant c;
      c.type = tensor_type(weights[i], source, where, "weight", name);
      g.add_constant(name, std::move(c));
    }
  }
  const auto& nodes = field(json, "nodes", source);
  if (!nodes.is_array()) throw Error(source + ": field 'nodes' must be a list");
  if (nodes.size() > limits::kMaxGraphNodes)
    throw Error(source + ": " + std::to_string(nodes.size()) + " nodes, more than the limit of " +
                std::to_string(limits::kMaxGraphNodes));
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    std::string where = source + ": node " + std::to_string(i);
    Node node;
    node.name = entry_name(n, where);
    where += " (" + quoted_name(node.name) + ")";
    const auto& op = field(n, "op", where);
    if (!op.is_string()) throw Error(where + ": field 'op' must be a string");
    node.op = op.get<std::string>();
    node.inputs = string_list(field(n, "inputs", where), where, "inputs");
    node.outputs = n.contains("outputs") ? string_list(n["outputs"], where, "outputs") : std::vector<std::string>{node.name};
    if (n.contains("attrs")) {
      if (!n["attrs"].is_object()) throw Error(where + ": field 'attrs' must be an object");
      for (const auto& [k, v] : n["attrs"].items()) node.attrs.set(k, attr_from_json(v, where + ": attribute " + quoted_name(k)));
    }
    g.nodes.push_back(std::move(node));
  }
  return g;
}

Graph read_model_json(const std::string& path) { return graph_from_json(read_json_file(path), path); }

std::string replace_extension(const std::string& path, const std::string& extension) {
  return std::filesystem::path(path).replace_extension(extension).string();
}

Graph load_model(const std::string& json_path, const std::optional<std::string>& weights_path) {
  Graph g = read_model_json(json_path);
  const std::string weights = weights_path ? *weights_path : replace_extension(json_path, ".safetensors");
  if (g.constants.empty() && !weights_path) return g;
  std::error_code ec;
  if (!std::filesystem::exists(weights, ec))
    throw Error(json_path + ": weights file " + quoted_name(weights) + " not found (use --weights to name it)");
  const auto tensors = read_safetensors(weights);
  for (auto& [name, c] : g.constants) {
    auto it = tensors.find(name);
    if (it == tensors.end()) throw Error(json_path + ": weight " + quoted_name(name) + " is missing from " + weights);
    if (it->second.type.shape != c.type.shape)
      throw Error(json_path + ": weight " + quoted_name(name) + " has shape " + shape_str(it->second.type.shape) + " in " +
                  weights + ", but the model says " + shape_str(c.type.shape));
    Constant stored = it->second;
    // Half-precision files of float32 models widen: generated code computes in float32.
    if (c.type.dtype == DType::kFloat32 && stored.type.dtype != DType::kFloat32 && is_float_dtype(stored.type.dtype))
      stored = widen_to_float32(stored);
    if (stored.type.dtype != c.type.dtype)
      throw Error(json_path + ": weight " + quoted_name(name) + " is " + dtype_name(stored.type.dtype) + " in " + weights +
                  ", but the model says " + dtype_name(c.type.dtype));
    c.data = std::move(stored.data);
  }
  return g;
}

std::vector<OutputFile> model_files(const Graph& graph, const std::string& prefix) {
  for (const auto& [name, c] : graph.constants)
    if (c.data.size() != c.type.bytes())
      throw Error("cannot save " + quoted_name(prefix) + ": weight " + quoted_name(name) +
                  " has no data (initialize the parameters first)");
  // Both files or neither: a model.json without its weights would mislead.
  const std::vector<uint8_t> weights = serialize_safetensors(graph.constants, {{"format", "hybgen"}});
  return {{prefix + ".json", model_json_text(graph)},
          {prefix + ".safetensors", std::string(weights.begin(), weights.end())}};
}

void save_model(const Graph& graph, const std::string& prefix) { write_files_atomic(model_files(graph, prefix)); }

}  // namespace hybgen
