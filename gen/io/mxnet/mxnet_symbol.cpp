// MXNet symbol JSON -> Graph. Variables become graph inputs or constants
// (matched by name against the params' arg:/aux: entries); op nodes keep
// their names; attribute strings are parsed with the kinds the op schema
// declares, as MXNet's own parser would. `node_row_ptr` is ignored: it counts
// hidden outputs differently between builds.
#include "io/mxnet/mxnet_symbol.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "io/file_util.h"
#include "io/json_util.h"
#include "io/mxnet/mxnet_params.h"
#include "ir/error.h"
#include "ir/limits.h"
#include "ir/names.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/rnn.h"

namespace hybgen {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Attributes that tune MXNet's own execution and never change inference results.
const std::set<std::string> kIgnoredAttrs = {"workspace", "cudnn_tune", "cudnn_off"};

// Keys MXNet itself ignores when it runs a graph: training hints (lr_mult,
// wd_mult, weight_lr_mult, ...), device placement (ctx_group), memory
// mirroring, and every hidden `__x__` key. They are skipped with a note.
bool mxnet_ignores(const std::string& key) {
  if (key.rfind("__", 0) == 0) return true;
  static const std::set<std::string> kKeys = {"lr_mult", "wd_mult", "ctx_group", "force_mirroring", "mirror_stage"};
  return kKeys.count(key) || ends_with(key, "_lr_mult") || ends_with(key, "_wd_mult");
}

// The activations MXNet also registers as ops of their own (F.relu(x) in a
// Gluon block exports op "relu"): imported as Activation with that act_type.
bool standalone_activation(const std::string& op) {
  return op == "relu" || op == "sigmoid" || op == "tanh" || op == "softsign";
}

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int64_t parse_int(const std::string& raw) {
  std::string t = trim(raw);
  if (!t.empty() && (t.back() == 'L' || t.back() == 'l')) t.pop_back();  // Python 2 longs
  std::size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size()) throw Error(quoted_name(raw) + " is not an integer");
  return v;
}

double parse_float(const std::string& raw) {
  const std::string t = trim(raw);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size()) throw Error(quoted_name(raw) + " is not a number");
  return v;
}

// "(3, 3)", "[3,3]", "(64,)", "()", or a bare scalar meaning a 1-tuple.
std::vector<std::string> tuple_items(const std::string& raw) {
  std::string t = trim(raw);
  if (!t.empty() && (t.front() == '(' || t.front() == '[')) {
    const char close = t.front() == '(' ? ')' : ']';
    if (t.back() != close) throw Error(quoted_name(raw) + " is not a tuple");
    t = t.substr(1, t.size() - 2);
  }
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= t.size()) {
    const std::size_t comma = t.find(',', start);
    const std::string item = trim(t.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!item.empty()) items.push_back(item);
    else if (comma != std::string::npos && comma + 1 < t.size() && !trim(t.substr(comma + 1)).empty())
      throw Error(quoted_name(raw) + " has an empty tuple element");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

struct Entry {
  std::size_t node;
  std::size_t output;
};

Entry parse_entry(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array() || j.size() < 2 || j.size() > 3 || !j[0].is_number_unsigned() || !j[1].is_number_unsigned())
    throw Error(where + ": an entry must be [node_id, output_index] or [node_id, output_index, version], got " +
                json_excerpt(j));
  return {j[0].get<std::size_t>(), j[1].get<std::size_t>()};
}

std::map<std::string, std::string> node_attrs(const nlohmann::json& node, const std::string& where) {
  std::map<std::string, std::string> attrs;
  for (const char* key : {"param", "attr", "attrs"}) {
    if (!node.contains(key)) continue;
    const auto& obj = node[key];
    if (!obj.is_object()) throw Error(where + ": '" + key + "' must be an object of strings");
    for (const auto& [k, v] : obj.items()) {
      if (!v.is_string()) throw Error(where + ": attribute " + quoted_name(k) + " must be a string, got " + json_excerpt(v));
      attrs[k] = v.get<std::string>();
    }
  }
  return attrs;
}

// Node names, made unique: MXNet allows two nodes of one name (the 0.11
// MobileNetV2 file has a Convolution and a Flatten both called "fc7"); the
// later op node gets a suffix. Variables keep theirs, the params match them.
std::vector<std::string> unique_node_names(const nlohmann::json& nodes) {
  std::vector<std::string> names(nodes.size());
  std::set<std::string> taken;
  std::map<std::string, int> next_suffix;  // so many nodes of one name stay linear
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i]["op"] == "null") taken.insert(names[i] = nodes[i]["name"].get<std::string>());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]["op"] == "null") continue;
    const std::string base = nodes[i]["name"].get<std::string>();
    std::string name = base;
    for (int& k = next_suffix.emplace(base, 2).first->second; taken.count(name); ++k)
      name = base + "_" + std::to_string(k);
    taken.insert(names[i] = name);
  }
  return names;
}

// Value names: a single-output node's value is the node's name.
std::string value_name(const std::vector<std::string>& names, const std::vector<int>& outputs, const Entry& e) {
  if (outputs[e.node] == 1) return names[e.node];
  return names[e.node] + "_output" + std::to_string(e.output);
}

// A variable Gluon created for a Parameter (it carries training attributes),
// or named like one; a runtime input carries neither.
bool looks_like_parameter(const std::string& name, const std::map<std::string, std::string>& attrs) {
  if (attrs.count("__init__") || attrs.count("__lr_mult__") || attrs.count("__wd_mult__")) return true;
  for (const std::string suffix : {"_weight", "_bias", "_gamma", "_beta", "_running_mean", "_running_var",
                                   "_moving_mean", "_moving_var"})
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  return false;
}

// Made-up weights, reproducible outside hybgen: value i of weight NAME is
// lo + (hi - lo) * u, u = ((i * 2654435761 + fnv1a(NAME) + seed * 40503) mod 2^32) / 2^32.
// scripts/mxnet_zoo_reference.py fills MXNet's parameters with the same
// numbers, so hybgen's outputs can be compared with MXNet's own.
uint32_t fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

// Scales and variances near 1, shifts and means near 0, other weights scaled
// by fan-in so activations stay finite through deep networks.
std::pair<double, double> weight_range(const std::string& name, const Shape& shape) {
  for (const std::string s : {"_var", "_gamma"})
    if (ends_with(name, s)) return {0.5, 1.5};
  for (const std::string s : {"_beta", "_mean", "_bias"})
    if (ends_with(name, s)) return {-0.1, 0.1};
  const int64_t fan_in = shape.size() > 1 ? num_elements(Shape(shape.begin() + 1, shape.end())) : 1;
  const double scale = std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(fan_in, 1)));
  return {-scale, scale};
}

Constant random_weight(const std::string& name, const Shape& shape, uint64_t seed) {
  const auto [lo, hi] = weight_range(name, shape);
  const uint64_t offset = fnv1a(name) + seed * 40503u;
  std::vector<float> v(static_cast<std::size_t>(num_elements(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double u = static_cast<double>((i * 2654435761u + offset) & 0xffffffffu) / 4294967296.0;
    v[i] = static_cast<float>(lo + (hi - lo) * u);
  }
  return Constant::f32(shape, v);
}

// Gives every weight variable of `graph` (listed in `weights`, without
// values) the shape its consumer expects and seeded random values, inferring
// shapes forward from the inputs in node order.
void make_random_weights(Graph& graph, const std::set<std::string>& weights, uint64_t seed,
                         const std::string& source) {
  std::map<std::string, TensorType> known = graph.types;
  uint64_t total_bytes = 0;
  for (const Node& node : graph.nodes) {
    try {
      const OpDef& def = find_op(node.op);
      const Attrs attrs = normalize_attrs(def, node.attrs);
      // Shapes are inferred here before validate runs: the rule needs its inputs.
      if (const std::string wrong = input_count_mismatch(def, attrs, static_cast<int>(node.inputs.size()));
          !wrong.empty())
        throw Error(wrong);
      bool needs_weights = false;
      for (std::size_t i = 1; i < node.inputs.size(); ++i)
        needs_weights = needs_weights || (weights.count(node.inputs[i]) && !known.count(node.inputs[i]));
      if (needs_weights) {
        if (!def.weight_shapes || !known.count(node.inputs[0]))
          throw Error("cannot tell the shapes of its weights without a .params file");
        const std::vector<Shape> shapes = def.weight_shapes(attrs, known.at(node.inputs[0]).shape);
        for (std::size_t i = 1; i < node.inputs.size() && i - 1 < shapes.size(); ++i) {
          const std::string& w = node.inputs[i];
          if (!weights.count(w) || known.count(w)) continue;
          // Counted before any is made: attributes alone must not exhaust the machine.
          total_bytes += checked_tensor_bytes(shapes[i - 1], sizeof(float), "weight " + quoted_name(w));
          if (total_bytes > limits::kMaxRandomWeightBytes)
            throw Error("weight " + quoted_name(w) + " of shape " + shape_str(shapes[i - 1]) +
                        " takes the made-up weights past " + std::to_string(limits::kMaxRandomWeightBytes) +
                        " bytes, the limit of --random-weights (give the model's .params instead)");
          graph.add_constant(w, random_weight(w, shapes[i - 1], seed));
          known[w] = graph.type(w);
        }
      }
      std::vector<TensorType> in;
      for (const auto& v : node.inputs) {
        auto it = known.find(v);
        if (it == known.end()) throw Error("input " + quoted_name(v) + " has no known shape");
        in.push_back(it->second);
      }
      const std::vector<TensorType> out = def.infer(attrs, in);
      for (std::size_t i = 0; i < out.size() && i < node.outputs.size(); ++i) {
        checked_tensor_bytes(out[i].shape, sizeof(float), "output " + quoted_name(node.outputs[i]));
        known[node.outputs[i]] = out[i];
      }
    } catch (const Error& e) {
      throw Error(source + ": " + node_label(node.name, node.op) + ": " + e.what());
    }
  }
}

// Gluon's recurrent layers concatenate their flattened weights with this
// op before the RNN: a Concat on axis 0.
bool rnn_param_concat(const std::string& op) { return op == "_rnn_param_concat"; }

// `_zeros` nodes (Gluon's begin_state in a hybridized block) become constants
// of zeros. A 0 in the shape is MXNet's "filled in by shape inference": the
// state input of the RNN that reads it, (L*D, N, H), gives those sizes.
struct PendingZeros {
  std::string value, where;
  Shape shape;
};

bool zeros_op(const std::string& op) { return op == "_zeros" || op == "zeros"; }

PendingZeros parse_zeros(const std::string& value, const std::string& where,
                         const std::map<std::string, std::string>& attrs) {
  PendingZeros z{value, where, {}};
  for (const auto& [key, text] : attrs) {
    if (key == "shape") {
      std::vector<int64_t> dims;
      try {
        dims = std::get<std::vector<int64_t>>(parse_mxnet_attr(text, AttrKind::kInts));
      } catch (const Error& e) {
        throw Error(where + ": attribute 'shape': " + e.what());
      }
      for (int64_t d : dims)
        if (d < 0) throw Error(where + ": shape " + text + " has a negative size");
      z.shape.assign(dims.begin(), dims.end());
    } else if (key == "dtype") {
      if (text != "float32" && text != "None")
        throw Error(where + ": dtype " + quoted_name(text) + " is not supported (float32 only)");
    } else if (key != "ctx" && !mxnet_ignores(key)) {
      throw Error(where + ": attribute " + quoted_name(key) + " is not supported by _zeros");
    }
  }
  if (z.shape.size() > limits::kMaxRank) throw Error(where + ": shape has too many axes");
  return z;
}

void add_zeros(Graph& graph, const PendingZeros& z) {
  checked_tensor_bytes(z.shape, sizeof(float), z.where);
  const std::size_t count = static_cast<std::size_t>(num_elements(z.shape));
  graph.add_constant(z.value, Constant::f32(z.shape, std::vector<float>(count, 0.0f)));
}

// Gives every pending `_zeros` its constant, the 0 sizes taken from the
// state shape of the RNN reading it (shapes inferred forward from the inputs).
void resolve_zeros(Graph& graph, std::vector<PendingZeros> pending) {
  std::map<std::string, std::size_t> open;  // value -> pending index, while it has a 0
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (std::count(pending[i].shape.begin(), pending[i].shape.end(), 0) == 0) add_zeros(graph, pending[i]);
    else open[pending[i].value] = i;
  }
  if (open.empty()) return;
  std::map<std::string, TensorType> known = graph.types;
  for (const Node& node : graph.nodes) {
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      auto it = open.find(node.inputs[k]);
      if (it == open.end()) continue;
      PendingZeros& z = pending[it->second];
      if (node.op != "RNN" || k < 2 || !known.count(node.inputs[0]))
        throw Error(z.where + ": its shape " + shape_str(z.shape) + " has a 0 size, which hybgen fills only for the state "
                    "input of an RNN whose data shape is known; " + node_label(node.name, node.op) + " reads it");
      const OpDef& def = find_op("RNN");
      Shape state;
      try {
        const RnnDims d = rnn_dims(normalize_attrs(def, node.attrs), known.at(node.inputs[0]).shape);
        state = {d.layers * d.dirs, d.batch, d.hidden};
      } catch (const Error& e) {
        throw Error(node_label(node.name, node.op) + ": " + e.what());
      }
      if (z.shape.size() != state.size())
        throw Error(z.where + ": shape " + shape_str(z.shape) + " cannot be the state " + shape_str(state) + " of " +
                    node_label(node.name, node.op));
      for (std::size_t a = 0; a < state.size(); ++a)
        if (z.shape[a] == 0) z.shape[a] = state[a];
      add_zeros(graph, z);
      known[z.value] = graph.type(z.value);
      open.erase(it);
    }
    try {
      std::vector<TensorType> in;
      for (const auto& v : node.inputs) in.push_back(known.at(v));
      const OpDef& def = find_op(node.op);
      const std::vector<TensorType> out = def.infer(normalize_attrs(def, node.attrs), in);
      for (std::size_t o = 0; o < out.size() && o < node.outputs.size(); ++o) known[node.outputs[o]] = out[o];
    } catch (const std::exception&) {
      // An input not known yet or a node validate will reject: its readers cannot resolve a 0 through it.
    }
  }
  if (!open.empty()) {
    const PendingZeros& z = pending[open.begin()->second];
    throw Error(z.where + ": its shape " + shape_str(z.shape) + " has a 0 size and no RNN reads it as a state");
  }
}

}  // namespace

AttrValue parse_mxnet_attr(const std::string& text, AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return parse_int(text);
    case AttrKind::kFloat: return parse_float(text);
    case AttrKind::kBool: {
      const std::string t = lower(trim(text));
      if (t == "true" || t == "1") return true;
      if (t == "false" || t == "0") return false;
      throw Error(quoted_name(text) + " is not a boolean (True/False/1/0)");
    }
    case AttrKind::kString: return trim(text);
    case AttrKind::kInts: {
      std::vector<int64_t> v;
      for (const auto& item : tuple_items(text)) v.push_back(item == "None" ? kSliceNone : parse_int(item));
      return v;
    }
    case AttrKind::kFloats: {
      std::vector<double> v;
      for (const auto& item : tuple_items(text)) v.push_back(parse_float(item));
      return v;
    }
  }
  throw Error("unknown attribute kind");
}

bool looks_like_mxnet_symbol(const nlohmann::json& json) {
  // Any of MXNet's own fields is enough to say which reader should explain
  // what is missing; hybgen's model.json names its format.
  return json.is_object() && !json.contains("format") && json.contains("nodes") &&
         (json.contains("heads") || json.contains("arg_nodes"));
}

std::optional<std::string> find_mxnet_params(const std::string& symbol_path) {
  namespace fs = std::filesystem;
  const fs::path p(symbol_path);
  std::string stem = p.filename().string();
  const std::string suffix = "-symbol.json";
  if (stem.size() <= suffix.size() || stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  stem.resize(stem.size() - suffix.size());
  std::optional<std::string> best;
  std::error_code ec;
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string f = entry.path().filename().string();
    if (f.size() == stem.size() + 12 && f.compare(0, stem.size() + 1, stem + "-") == 0 &&
        f.compare(f.size() - 7, 7, ".params") == 0 &&
        std::all_of(f.begin() + static_cast<long>(stem.size()) + 1, f.end() - 7, ::isdigit)) {
      const std::string path = entry.path().string();
      if (!best || path > *best) best = path;  // highest epoch
    }
  }
  return best;
}

void check_mxnet_symbol_fields(const nlohmann::json& json, const std::string& symbol_path) {
  if (!json.is_object()) throw Error(symbol_path + ": not an MXNet symbol file (not a JSON object)");
  for (const char* field : {"nodes", "arg_nodes", "heads"})
    if (!json.contains(field))
      throw Error(symbol_path + ": not a complete MXNet symbol file: field '" + field +
                  "' is missing (a symbol file has 'nodes', 'arg_nodes' and 'heads')");
  if (!json["nodes"].is_array()) throw Error(symbol_path + ": 'nodes' must be a list");
}

Graph import_mxnet(const std::string& symbol_path, const std::optional<std::string>& params_path,
                   const MxnetImportOptions& options) {
  const nlohmann::json json = read_json_file(symbol_path);
  check_mxnet_symbol_fields(json, symbol_path);  // before reading the params: the symbol's faults come first
  std::map<std::string, Constant> params;
  if (params_path) params = read_mxnet_params(*params_path);
  return import_mxnet_symbol(json, symbol_path, params_path ? &params : nullptr,
                             params_path ? *params_path : std::string(), options);
}

Graph import_mxnet_symbol(const nlohmann::json& json, const std::string& symbol_path,
                          const std::map<std::string, Constant>* params_read, const std::string& params_source,
                          const MxnetImportOptions& options) {
  check_mxnet_symbol_fields(json, symbol_path);
  const auto& nodes = json["nodes"];
  if (nodes.size() > limits::kMaxGraphNodes)
    throw Error(symbol_path + ": " + std::to_string(nodes.size()) + " nodes, more than the limit of " +
                std::to_string(limits::kMaxGraphNodes));
  const std::optional<std::string> params_path =
      params_read ? std::optional<std::string>(params_source) : std::nullopt;
  static const std::map<std::string, Constant> kNoParams;
  const std::map<std::string, Constant>& params = params_read ? *params_read : kNoParams;
  auto find_param = [&](const std::string& name) -> const Constant* {
    for (const std::string& key : {"arg:" + name, "aux:" + name, name}) {
      auto it = params.find(key);
      if (it != params.end()) return &it->second;
    }
    return nullptr;
  };

  Graph graph;
  graph.name = options.name;
  if (graph.name.empty()) {
    graph.name = std::filesystem::path(symbol_path).filename().string();
    for (const std::string suffix : {"-symbol.json", ".json"})
      if (graph.name.size() > suffix.size() &&
          graph.name.compare(graph.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        graph.name.resize(graph.name.size() - suffix.size());
        break;
      }
  }

  // First pass: which nodes are ops, what they are, and unknown ops (all reported at once).
  std::vector<const OpDef*> defs(nodes.size(), nullptr);
  std::vector<std::string> unknown;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    const std::string where = symbol_path + ": node " + std::to_string(i);
    if (!n.is_object() || !n.contains("op") || !n["op"].is_string() || !n.contains("name") || !n["name"].is_string())
      throw Error(where + ": needs string fields 'op' and 'name'");
    const std::string op = n["op"].get<std::string>();
    if (op == "null" || zeros_op(op)) continue;
    defs[i] = rnn_param_concat(op) ? &find_op("Concat") : lookup_op(op);
    if (!defs[i] && standalone_activation(op)) defs[i] = &find_op("Activation");
    if (!defs[i]) unknown.push_back(node_label(n["name"].get<std::string>(), op));
  }
  if (!unknown.empty()) {
    std::string list;
    for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + u;
    throw Error(symbol_path + ": unsupported ops: " + list + " (`hybgen ops` lists the supported ones)");
  }

  const std::vector<std::string> names = unique_node_names(nodes);
  std::vector<int> output_counts(nodes.size(), 1);  // known for a node once it is parsed

  // Second pass: op nodes in file order (post-order, so inputs come first).
  std::set<std::size_t> used_vars;
  std::map<std::string, std::pair<std::string, int>> ignored_keys;  // key -> first node, how many nodes
  std::vector<std::pair<std::string, std::string>> legacy_stats;    // MXNet 0.8 BatchNorm: statistic, its node
  std::vector<PendingZeros> zeros;
  auto is_zeros = [&](std::size_t i) { return i < nodes.size() && zeros_op(nodes[i]["op"].get<std::string>()); };
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (is_zeros(i)) {
      if (nodes[i].contains("inputs") && nodes[i]["inputs"].is_array() && !nodes[i]["inputs"].empty())
        throw Error(symbol_path + ": " + node_label(names[i], "_zeros") + ": takes no inputs");
      const std::string where = symbol_path + ": " + node_label(names[i], nodes[i]["op"].get<std::string>());
      zeros.push_back(parse_zeros(names[i], where, node_attrs(nodes[i], where)));
      continue;
    }
    if (!defs[i]) continue;
    const auto& n = nodes[i];
    const std::string& name = names[i];
    const std::string where = symbol_path + ": " + node_label(name, n["op"].get<std::string>());
    Node node;
    node.name = name;
    node.op = defs[i]->name;
    for (const auto& [key, text] : node_attrs(n, where)) {
      if (kIgnoredAttrs.count(key)) continue;
      if (mxnet_ignores(key)) {
        auto& seen = ignored_keys.emplace(key, std::make_pair(node_label(name, node.op), 0)).first->second;
        ++seen.second;
        continue;
      }
      auto spec = std::find_if(defs[i]->attrs.begin(), defs[i]->attrs.end(),
                               [&key = key](const AttrSpec& s) { return s.name == key; });
      if (spec == defs[i]->attrs.end()) {
        if (key == "layout" && (text == "NCHW" || text == "NCW" || text == "NCDHW" || text == "None")) continue;
        throw Error(where + ": attribute " + quoted_name(key) + " = " + quoted_name(text) + " is not supported by hybgen's " +
                    node.op);
      }
      if (text == "None" && spec->kind != AttrKind::kString) {
        // An unset optional: the default applies, except an int axis, where
        // None means the flattened input even when the default is an axis
        // (topk, pick); ops that cannot do that refuse it by name.
        if (key == "axis" && spec->kind == AttrKind::kInt) node.attrs.set(key, AttrValue(kSliceNone));
        continue;
      }
      try {
        node.attrs.set(key, parse_mxnet_attr(text, spec->kind));
      } catch (const Error& e) {
        throw Error(where + ": attribute " + quoted_name(key) + ": " + e.what());
      }
    }
    if (defs[i]->name != n["op"].get<std::string>() && standalone_activation(n["op"].get<std::string>()))
      node.attrs.set("act_type", n["op"].get<std::string>());
    const auto& inputs = n.contains("inputs") ? n["inputs"] : nlohmann::json::array();
    if (!inputs.is_array()) throw Error(where + ": 'inputs' must be a list");
    std::size_t input_index = 0;
    for (const auto& in : inputs) {
      const Entry e = parse_entry(in, where);
      // Training-only trailing inputs (SoftmaxOutput's label) are variables
      // without stored values; inference drops them.
      if (defs[i]->max_inputs >= 0 && input_index++ >= static_cast<std::size_t>(defs[i]->max_inputs)) {
        if (e.node < nodes.size() && !defs[e.node] && !find_param(nodes[e.node]["name"].get<std::string>())) continue;
        throw Error(where + ": has more inputs than " + node.op + " takes (" + std::to_string(defs[i]->max_inputs) +
                    ")");
      }
      if (e.node >= i) throw Error(where + ": input refers to node " + std::to_string(e.node) + ", not an earlier node");
      const OpDef* producer = defs[e.node];
      if (producer && e.output >= static_cast<std::size_t>(output_counts[e.node]))
        throw Error(where + ": reads output " + std::to_string(e.output) + " of node " +
                    quoted_name(nodes[e.node]["name"].get<std::string>()) + ", which has " +
                    std::to_string(output_counts[e.node]) + " at inference");
      if (!producer && !is_zeros(e.node)) used_vars.insert(e.node);
      if (is_zeros(e.node) && e.output != 0)
        throw Error(where + ": reads output " + std::to_string(e.output) + " of _zeros node " + quoted_name(names[e.node]));
      node.inputs.push_back(value_name(names, output_counts, e));
    }
    // MXNet 0.8 wrote BatchNorm with 3 inputs; its moving statistics were
    // auxiliary states kept only in the .params, named after the node as
    // MXNet's upgrader names them (legacy_json_util.cc).
    if (node.op == "BatchNorm" && node.inputs.size() == 3) {
      const std::string base = n["name"].get<std::string>();
      for (const char* stat : {"_moving_mean", "_moving_var"}) {
        node.inputs.push_back(base + stat);
        legacy_stats.emplace_back(base + stat, where);
      }
    }
    try {
      output_counts[i] = output_count(*defs[i], normalize_attrs(*defs[i], node.attrs));
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
    for (int o = 0; o < output_counts[i]; ++o)
      node.outputs.push_back(output_counts[i] == 1 ? name : name + "_output" + std::to_string(o));
    graph.nodes.push_back(std::move(node));
  }

  const auto& heads = json["heads"];
  if (!heads.is_array() || heads.empty()) throw Error(symbol_path + ": 'heads' must be a non-empty list");
  for (const auto& h : heads) {
    const Entry e = parse_entry(h, symbol_path + ": heads");
    if (e.node >= nodes.size()) throw Error(symbol_path + ": a head refers to node " + std::to_string(e.node));
    if (!defs[e.node] && !is_zeros(e.node)) used_vars.insert(e.node);
    if (defs[e.node] && e.output >= static_cast<std::size_t>(output_counts[e.node]))
      throw Error(symbol_path + ": a head reads output " + std::to_string(e.output) + " of node " + quoted_name(names[e.node]) +
                  ", which has " + std::to_string(output_counts[e.node]));
    const std::string v = value_name(names, output_counts, e);
    if (!graph.is_output(v)) graph.outputs.push_back(v);
  }

  // Without params, a variable feeding a weight position (input 1, 2, ...) of
  // an op that has weights is a weight to make up.
  std::set<std::string> random_weights;
  if (options.random_weights_seed)
    for (const Node& node : graph.nodes)
      if (find_op(node.op).weight_shapes)
        for (std::size_t k = 1; k < node.inputs.size(); ++k) random_weights.insert(node.inputs[k]);

  // The statistics of 0.8 BatchNorms first: a missing one is the error to report.
  std::set<std::string> used_var_names;
  for (std::size_t i : used_vars) used_var_names.insert(nodes[i]["name"].get<std::string>());
  for (const auto& [stat, where] : legacy_stats) {
    if (used_var_names.count(stat) || random_weights.count(stat)) continue;  // a variable of that name, or made up
    if (const Constant* c = find_param(stat)) {
      graph.add_constant(stat, *c);
      continue;
    }
    throw Error(where + ": has 3 inputs (the MXNet 0.8 form), and its moving statistic " + quoted_name("aux:" + stat) +
                (params_path ? " is missing from " + *params_path
                             : " needs a .params file that holds it (or --random-weights SEED to make it up)"));
  }
  // Variables: weights when the params have them, runtime inputs otherwise.
  std::set<std::string> given_shapes_used;
  for (std::size_t i : used_vars) {
    const std::string name = nodes[i]["name"].get<std::string>();
    if (const Constant* c = find_param(name)) {
      graph.add_constant(name, *c);
      continue;
    }
    if (random_weights.count(name)) continue;
    if (params_path && looks_like_parameter(name, node_attrs(nodes[i], symbol_path)))
      throw Error(symbol_path + ": weight " + quoted_name(name) + " is missing from " + *params_path);
    Shape shape;
    auto given = options.input_shapes.find(name);
    if (given != options.input_shapes.end()) {
      shape = given->second;
      given_shapes_used.insert(name);
    } else {
      const auto attrs = node_attrs(nodes[i], symbol_path);
      auto s = attrs.find("__shape__");
      bool known = s != attrs.end();
      if (known) {
        std::vector<int64_t> parsed;
        try {
          parsed = std::get<std::vector<int64_t>>(parse_mxnet_attr(s->second, AttrKind::kInts));
        } catch (const Error& e) {
          throw Error(symbol_path + ": input " + quoted_name(name) + ": attribute '__shape__': " + e.what());
        }
        shape.assign(parsed.begin(), parsed.end());
        known = !shape.empty() && std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d > 0; });
      }
      if (!known)
        throw Error(symbol_path + ": input " + quoted_name(name) + " has no shape (MXNet files carry none): pass --shape " +
                    name + "=N,C,... or --input " + name + "=x.npy");
    }
    checked_tensor_bytes(shape, sizeof(float), symbol_path + ": input " + quoted_name(name));
    graph.add_input(name, TensorType{shape});
  }
  for (const auto& [name, shape] : options.input_shapes)
    if (!given_shapes_used.count(name)) {
      std::string inputs;
      for (const auto& in : graph.inputs) inputs += (inputs.empty() ? "" : ", ") + in;
      throw Error(symbol_path + ": --shape names " + quoted_name(name) + ", which is not an input (inputs: " + inputs + ")");
    }
  resolve_zeros(graph, zeros);
  if (options.random_weights_seed) make_random_weights(graph, random_weights, *options.random_weights_seed, symbol_path);
  for (const auto& [key, seen] : ignored_keys) {
    const int more = seen.second - 1;
    const std::string message = symbol_path + ": " + seen.first + ": attribute " + quoted_name(key) +
                                " ignored, as MXNet ignores it at inference" +
                                (more == 0   ? ""
                                 : more == 1 ? " (and on 1 more node)"
                                             : " (and on " + std::to_string(more) + " more nodes)");
    if (options.note) options.note(message);
    else std::fprintf(stderr, "hybgen: note: %s\n", message.c_str());
  }
  return graph;
}

}  // namespace hybgen
