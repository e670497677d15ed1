// quantize_graph: one walk over the scheduled float graph. Each original
// value has a float form, an int8 form, or both; the form a node's producer
// made keeps the value's name (a graph output's int8 form excepted, since the
// float output keeps the name), the other is made on first demand by a
// quantize or dequantize node. A node goes int8 when its op's own shape rule
// accepts int8 inputs (ops/quantized.h), so an op that gains int8 support
// is picked up without a change here; the form keeping its input's
// quantization is tried before one with a scale of its own. Ranges are
// chosen first, from the outputs back (a producer takes the range of the
// relu or Concat that alone reads it). A weight only its int8 node reads is
// replaced under its name; a shared one gets an int8 copy. Unread float
// forms (graph inputs excepted) and float weights no node reads any more are
// left to remove_dead_code.
#include "passes/quantize_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ir/error.h"
#include "ir/names.h"
#include "ops/op.h"
#include "ops/op_kernel.h"
#include "passes/passes.h"

namespace hybgen {
namespace {

bool has_attr(const OpDef& def, const std::string& name) {
  return std::any_of(def.attrs.begin(), def.attrs.end(), [&](const AttrSpec& a) { return a.name == name; });
}

bool lists(const std::vector<DType>& dtypes, DType d) {
  return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
}

// Why `def` cannot compute int8 at all, or "".
std::string op_without_int8(const OpDef& def) {
  if (!lists(def.reference_dtypes, DType::kInt8)) return "op " + def.name + " has no int8 reference";
  const OpKernel* kernel = find_kernel(Backend::kCpp, def.name);
  if (!kernel || !lists(kernel->dtypes, DType::kInt8)) return "op " + def.name + " has no int8 C++ kernel";
  return "";
}

// `attrs` without an output quantization: the form of an op that keeps its
// input's (relu), tried before one with a scale of its own (a table).
Attrs without_output_quantization(Attrs attrs) {
  attrs.erase("out_scale");
  attrs.erase("out_zero_point");
  return attrs;
}

// True when `node` (one data input) is an op whose int8 output keeps its
// input's quantization: relu, clip, max pooling. Asked of its shape rule.
bool keeps_quantization(const Node& node, const OpDef& def, const TensorType& in) {
  if (!op_without_int8(def).empty() || node.inputs.size() != 1) return false;
  try {
    const TensorType probe{in.shape, DType::kInt8, Quantization::per_tensor(0.05f, -7)};
    const auto out = def.infer(normalize_attrs(def, without_output_quantization(node.attrs)), {probe});
    return out.size() == 1 && out[0].dtype == DType::kInt8 && out[0].quantization == probe.quantization;
  } catch (const Error&) {
    return false;
  }
}

// Ops that gather their inputs into their output with a scale of its own
// (Concat): an input at that scale is copied, any other requantized.
bool gathers_with_own_scale(const OpDef& def) { return def.input_placement && has_attr(def, "out_scale"); }

std::vector<uint8_t> bytes_of(const void* data, std::size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  return std::vector<uint8_t>(p, p + n);
}

// Symmetric int8 per output channel (axis 0): scale_c = max |w_c| / 127.
Constant quantize_weight(const Constant& w) {
  const Shape& shape = w.type.shape;
  const int64_t channels = shape.empty() ? 1 : shape[0];
  const int64_t inner = channels == 0 ? 0 : w.type.num_elements() / channels;
  std::vector<float> scales(static_cast<std::size_t>(channels));
  std::vector<int8_t> q(static_cast<std::size_t>(w.type.num_elements()));
  const float* x = w.f32_data();
  for (int64_t c = 0; c < channels; ++c) {
    float m = 0.0f;
    for (int64_t i = 0; i < inner; ++i) m = std::max(m, std::fabs(x[c * inner + i]));
    const float scale = m > 0.0f ? m / 127.0f : 1.0f;  // an all-zero channel: any positive scale
    scales[static_cast<std::size_t>(c)] = scale;
    for (int64_t i = 0; i < inner; ++i) {
      const float v = std::round(x[c * inner + i] / scale);
      q[static_cast<std::size_t>(c * inner + i)] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
  }
  Constant out;
  out.type = TensorType{shape, DType::kInt8,
                        Quantization::per_axis(0, scales, std::vector<int64_t>(static_cast<std::size_t>(channels), 0))};
  out.data = bytes_of(q.data(), q.size());
  return out;
}

// int32 at scale data_scale * weight_scale[c], so the accumulator adds it as is.
Constant quantize_bias(const Constant& b, float data_scale, const std::vector<float>& weight_scales) {
  const int64_t n = b.type.num_elements();
  std::vector<float> scales(static_cast<std::size_t>(n));
  std::vector<int32_t> q(static_cast<std::size_t>(n));
  for (int64_t c = 0; c < n; ++c) {
    const double w = weight_scales.size() == 1 ? weight_scales[0] : weight_scales.at(static_cast<std::size_t>(c));
    const double scale = static_cast<double>(data_scale) * w;
    scales[static_cast<std::size_t>(c)] = static_cast<float>(scale);
    const double v = std::round(static_cast<double>(b.f32_data()[c]) / scale);
    q[static_cast<std::size_t>(c)] =
        static_cast<int32_t>(std::clamp(v, static_cast<double>(std::numeric_limits<int32_t>::min()),
                                        static_cast<double>(std::numeric_limits<int32_t>::max())));
  }
  Constant out;
  out.type = TensorType{b.type.shape, DType::kInt32,
                        Quantization::per_axis(0, scales, std::vector<int64_t>(static_cast<std::size_t>(n), 0))};
  out.data = bytes_of(q.data(), q.size() * sizeof(int32_t));
  return out;
}

// A float constant that is not a weight (a broadcast operand), int8 per
// tensor over its own range.
Constant quantize_constant(const Constant& c) {
  ValueRange r;
  const float* x = c.f32_data();
  for (int64_t i = 0; i < c.type.num_elements(); ++i) {
    r.min = std::min(r.min, x[i]);
    r.max = std::max(r.max, x[i]);
  }
  const Quantization q = activation_quantization(r);
  std::vector<int8_t> v(static_cast<std::size_t>(c.type.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<int8_t>(
        std::clamp(std::round(x[i] / q.scale[0]) + static_cast<float>(q.zero_point[0]), -128.0f, 127.0f));
  Constant out;
  out.type = TensorType{c.type.shape, DType::kInt8, q};
  out.data = bytes_of(v.data(), v.size());
  return out;
}

class Quantizer {
 public:
  Quantizer(const Graph& graph, const std::map<std::string, ValueRange>& ranges, const QuantizeOptions& options)
      : in_(graph), index_(graph), ranges_(ranges), options_(options) {
    out_.name = in_.name;
    out_.inputs = in_.inputs;
    out_.outputs = in_.outputs;
    for (const auto& in : in_.inputs) out_.types[in] = in_.type(in);
    out_.constants = in_.constants;
    for (const auto& [name, c] : in_.constants) out_.types[name] = c.type;
    for (const auto& [name, t] : in_.types) used_.insert(name);
    for (const Node& n : in_.nodes) used_.insert(n.name);
    for (const auto& in : in_.inputs) float_form_[in] = in;
  }

  QuantizedGraph run() {
    choose_ranges();
    QuantizedGraph result;
    for (const Node& node : in_.nodes) {
      const std::string why = try_int8(node);
      if (why.empty()) {
        result.int8_nodes.push_back(node.name);
      } else {
        result.float_nodes.push_back({node.name, why});
        add_float(node);
      }
    }
    for (const auto& out : in_.outputs) {
      if (float_form_.count(out) && float_form_[out] == out) continue;
      if (in_.is_input(out) || in_.is_constant(out)) continue;
      add_node("dequantize", {}, int8_form_.at(out), out, TensorType{in_.type(out).shape}, fresh(out + "_dequantize"));
    }
    remove_dead_code(out_);
    validate(out_);
    infer_shapes(out_);
    schedule(out_);
    result.graph = std::move(out_);
    return result;
  }

 private:
  const ValueRange& range(const std::string& value) const {
    auto it = effective_.find(value);
    if (it == effective_.end()) throw Error("value " + quoted_name(value) + " has no calibration range");
    return it->second;
  }

  // The calibrated ranges, with a producer taking the range after the
  // activation that alone reads it (TFLite's fused activation), and the
  // range of the Concat that alone reads it (as TFLite's converter does, so
  // the Concat copies it instead of requantizing). Walked from the outputs
  // back, so a conv -> relu -> Concat chain takes the Concat's range.
  void choose_ranges() {
    for (const auto& [value, r] : ranges_) {
      if (!std::isfinite(r.min) || !std::isfinite(r.max) || r.min > r.max)
        throw Error("value " + quoted_name(value) + " has the range [" + std::to_string(r.min) + ", " +
                    std::to_string(r.max) + "], not a finite one");
      effective_[value] = r;
    }
    auto need = [&](const std::string& value) {
      if (in_.type(value).dtype == DType::kFloat32 && !effective_.count(value))
        throw Error("value " + quoted_name(value) + " has no calibration range");
    };
    for (const auto& in : in_.inputs) need(in);
    for (const Node& node : in_.nodes)
      for (const auto& out : node.outputs) need(out);
    // Functions whose outputs have a range of their own take it whole, as
    // TFLite fixes their output scales: a calibrated range (a percentile
    // most of all) would clip the probabilities seen rarely, such as the top
    // class's.
    for (const Node& node : in_.nodes) {
      if (node.outputs.size() != 1) continue;
      const std::string act =
          node.op == "Activation" && node.attrs.has("act_type") ? node.attrs.get_string("act_type") : "";
      if (node.op == "softmax" || node.op == "sigmoid" || act == "sigmoid")
        effective_[node.outputs[0]] = ValueRange{0.0f, 1.0f};
      else if (node.op == "tanh" || act == "tanh")
        effective_[node.outputs[0]] = ValueRange{-1.0f, 1.0f};
    }
    for (auto it = in_.nodes.rbegin(); it != in_.nodes.rend(); ++it) {
      const Node& node = *it;
      if (node.outputs.size() != 1 || in_.is_output(node.outputs[0])) continue;
      const auto& readers = index_.consumers(node.outputs[0]);
      if (readers.size() != 1) continue;
      const Node& reader = in_.nodes[static_cast<std::size_t>(readers[0])];
      if (options_.keep_float.count(reader.name) || reader.outputs.size() != 1) continue;
      const OpDef& def = find_op(reader.op);
      const bool adopt = gathers_with_own_scale(def) ? op_without_int8(def).empty()
                                                     : keeps_quantization(reader, def, in_.type(node.outputs[0]));
      if (!adopt) continue;
      auto r = effective_.find(reader.outputs[0]);
      if (r != effective_.end()) effective_[node.outputs[0]] = r->second;
    }
  }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 2; used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

  // A node named as its output unless `node_name` says otherwise.
  void add_node(const std::string& op, Attrs attrs, const std::string& in, const std::string& out,
                const TensorType& type, const std::string& node_name = "") {
    out_.nodes.push_back(Node{node_name.empty() ? out : node_name, op, std::move(attrs), {in}, {out}});
    out_.types[out] = type;
  }

  // `value` as float: its producer's output, or a dequantize of its int8 form.
  std::string float_form(const std::string& value) {
    if (in_.is_constant(value)) return value;
    auto it = float_form_.find(value);
    if (it != float_form_.end()) return it->second;
    const std::string name = fresh(value + "_dequantized");
    add_node("dequantize", {}, int8_form_.at(value), name, TensorType{in_.type(value).shape});
    return float_form_[value] = name;
  }

  // The type `value` has in int8: its int8 form's, or that of quantizing
  // its float form by its range.
  TensorType int8_type(const std::string& value) {
    auto it = int8_form_.find(value);
    if (it != int8_form_.end()) return out_.types.at(it->second);
    return TensorType{in_.type(value).shape, DType::kInt8, activation_quantization(range(value))};
  }

  std::string int8_form(const std::string& value) {
    auto it = int8_form_.find(value);
    if (it != int8_form_.end()) return it->second;
    const TensorType t = int8_type(value);
    Attrs a;
    a.set("out_scale", static_cast<double>(t.quantization.scale[0]));
    a.set("out_zero_point", t.quantization.zero_point[0]);
    a.set("out_dtype", std::string("int8"));
    const std::string name = fresh(value + "_quantized");
    add_node("quantize", std::move(a), float_form_.at(value), name, t);
    return int8_form_[value] = name;
  }

  void add_float(const Node& node) {
    Node copy = node;
    for (auto& in : copy.inputs) in = float_form(in);
    for (const auto& out : node.outputs) {
      float_form_[out] = out;
      out_.types[out] = in_.type(out);
    }
    out_.nodes.push_back(std::move(copy));
  }

  // Adds `node` in int8 and returns "", or returns why it stays float.
  std::string try_int8(const Node& node) {
    if (options_.keep_float.count(node.name)) return "--keep-float";
    const OpDef& def = find_op(node.op);
    if (std::string why = op_without_int8(def); !why.empty()) return why;
    if (node.outputs.size() != 1) return "it has several outputs";
    if (in_.type(node.outputs[0]).dtype != DType::kFloat32) return "its output is not float32";
    // A weight is input 1 of an op with weight_shapes (LeakyReLU has one only as prelu).
    const bool weighted = def.weight_shapes && node.inputs.size() > 1;
    // An op without weights is worth int8 only on int8 data.
    bool any_int8_input = false;
    std::vector<TensorType> types;
    std::map<std::size_t, Constant> constants;  // input index -> its int8 or int32 copy
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& v = node.inputs[i];
      if (in_.is_constant(v)) {
        const Constant& c = in_.constants.at(v);
        if (c.type.dtype != DType::kFloat32 || !c.type.quantization.empty()) {
          types.push_back(c.type);
          continue;
        }
        if (!c.has_data()) return "its input " + quoted_name(v) + " has no data";
        if (weighted && i == 1) {
          constants[i] = quantize_weight(c);
        } else if (weighted && i == 2 && constants.count(1)) {
          if (types.empty() || types[0].quantization.empty()) return "its data input is not quantized";
          constants[i] = quantize_bias(c, types[0].quantization.scale[0], constants[1].type.quantization.scale);
        } else {
          constants[i] = quantize_constant(c);
        }
        types.push_back(constants[i].type);
      } else {
        if (in_.type(v).dtype != DType::kFloat32) return "its input " + quoted_name(v) + " is not float32";
        if (int8_form_.count(v)) any_int8_input = true;
        if (!int8_form_.count(v) && !effective_.count(v)) return "its input " + quoted_name(v) + " has no range";
        types.push_back(int8_type(v));
      }
    }
    if (weighted && !constants.count(1)) return "its weight is not a constant";
    // The form keeping the input's quantization where the op has one (relu
    // on int8 is exact), else one with the output's own scale (a table, an
    // add), where the op takes out_scale.
    Attrs attrs = without_output_quantization(node.attrs);
    std::vector<TensorType> outs;
    bool own_scale = false;
    try {
      outs = def.infer(normalize_attrs(def, attrs), types);
    } catch (const Error& e) {
      if (!has_attr(def, "out_scale")) return std::string("int8 refused: ") + e.what();
      own_scale = true;
    }
    // Without weights to quantize, int8 would only add conversions around it.
    if (!weighted && !any_int8_input) return "its inputs are float (int8 would only add conversions)";
    if (own_scale) {
      if (!effective_.count(node.outputs[0])) return "its output has no range";
      const Quantization q = activation_quantization(range(node.outputs[0]));
      attrs.set("out_scale", static_cast<double>(q.scale[0]));
      attrs.set("out_zero_point", q.zero_point[0]);
      try {
        outs = def.infer(normalize_attrs(def, attrs), types);
      } catch (const Error& e) {
        return std::string("int8 refused: ") + e.what();
      }
    }
    if (outs.size() != 1) return "its shape rule gives several outputs";
    const TensorType out = outs[0];
    if (out.dtype != DType::kInt8 || out.quantization.empty()) return "its int8 form does not give int8";

    Node q = node;
    q.attrs = attrs;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& v = node.inputs[i];
      auto c = constants.find(i);
      if (c != constants.end()) {
        // A weight only this node reads keeps its name; a shared one is copied.
        const bool own = index_.consumers(v).size() == 1 && !in_.is_output(v);
        const std::string name = own ? v : fresh(v + (c->second.type.dtype == DType::kInt32 ? "_int32" : "_int8"));
        out_.types[name] = c->second.type;
        out_.constants[name] = std::move(c->second);
        q.inputs[i] = name;
      } else if (!in_.is_constant(v)) {
        q.inputs[i] = int8_form(v);
      }
    }
    const std::string& value = node.outputs[0];
    const std::string name = in_.is_output(value) ? fresh(value + "_quantized") : value;
    q.outputs[0] = name;
    int8_form_[value] = name;
    out_.types[name] = out;
    out_.nodes.push_back(std::move(q));
    return "";
  }

  const Graph& in_;
  const ValueIndex index_;
  const std::map<std::string, ValueRange>& ranges_;
  const QuantizeOptions& options_;
  std::map<std::string, ValueRange> effective_;
  Graph out_;
  std::set<std::string> used_;
  std::map<std::string, std::string> float_form_, int8_form_;
};

}  // namespace

Quantization activation_quantization(ValueRange range) {
  if (!std::isfinite(range.min) || !std::isfinite(range.max))
    throw Error("the range [" + std::to_string(range.min) + ", " + std::to_string(range.max) + "] is not finite");
  const float lo = std::min(range.min, 0.0f), hi = std::max(range.max, 0.0f);
  float scale = (hi - lo) / 255.0f;
  if (!std::isfinite(scale))
    throw Error("the range [" + std::to_string(range.min) + ", " + std::to_string(range.max) +
                "] is too wide for a float32 scale");
  if (!(scale > 0.0f)) scale = 1.0f;  // every value 0: any scale represents it
  const double zero = std::round(-128.0 - static_cast<double>(lo) / scale);
  return Quantization::per_tensor(scale, static_cast<int64_t>(std::clamp(zero, -128.0, 127.0)));
}

std::vector<std::string> int8_nodes_of(const Graph& float_graph, const Graph& quantized) {
  std::set<std::string> float_nodes;
  for (const Node& n : float_graph.nodes) float_nodes.insert(n.name);
  std::vector<std::string> nodes;
  for (const Node& n : quantized.nodes) {
    const std::string op = find_op(n.op).name;
    if (op == "quantize" || op == "dequantize" || n.outputs.size() != 1 || !float_nodes.count(n.name)) continue;
    const TensorType& t = quantized.type(n.outputs[0]);
    if ((t.dtype == DType::kInt8 || t.dtype == DType::kUInt8) && !t.quantization.empty()) nodes.push_back(n.name);
  }
  return nodes;
}

Graph prepare_for_quantization(Graph graph) {
  validate(graph);
  infer_shapes(graph);
  remove_identities(graph);
  remove_dead_code(graph);
  lower_batch_norm(graph);
  fold_scale_shift(graph);
  fold_constants(graph);
  remove_dead_code(graph);
  infer_shapes(graph);
  schedule(graph);
  return graph;
}

QuantizedGraph quantize_graph(const Graph& graph, const std::map<std::string, ValueRange>& ranges,
                              const QuantizeOptions& options) {
  Graph g = graph;
  validate(g);
  infer_shapes(g);
  schedule(g);
  for (const auto& name : options.keep_float)
    if (std::none_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.name == name; }))
      throw Error("--keep-float: the graph has no node " + quoted_name(name));
  return Quantizer(g, ranges, options).run();
}

}  // namespace hybgen
