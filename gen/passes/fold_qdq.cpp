// fold_qdq: the QDQ form of a quantized model (ONNX Runtime's quantize_static,
// PyTorch: dequantize -> float layer -> quantize) into int8 kernels.
//
// At each `quantize` node Q whose input is read by Q alone:
//   * quantize(dequantize(x)) with Q's output quantization and dtype equal to
//     x's: Q's readers read x instead (the pair is gone);
//   * quantize(add|mul(dequantize(a), dequantize(b))), per-tensor operands
//     of Q's dtype: the quantized add or mul (TFLite's);
//   * quantize(view(dequantize(x))), a Reshape-like view at x's parameters:
//     the view of x;
//   * quantize(Convolution|FullyConnected(dequantize(x), dequantize(w), b)):
//     the layer computes on x (int8/uint8 per tensor, Q's dtype) and the int8
//     weight w (zero points 0, per tensor or per output channel), with
//     out_scale/out_zero_point from Q and Q's output value; a bias (float, or
//     a dequantized constant) becomes int32 at scale x_scale * w_scale[c],
//     rounded half away from zero; a relu between the layer and Q computes
//     on the integers (max(q, zero point)). A layer that does not fit (asymmetric
//     weights, a bias past int32, ...) stays float.
// The dequantize nodes left unread, and their constants, are removed. It runs
// before fold_constants, which would otherwise fold the weights' dequantize.
#include <cmath>
#include <cstring>

#include "passes/passes.h"
#include "passes/rewrite_util.h"

namespace hybgen {
namespace {

// The dequantize node producing `value`, or -1.
// After a rewrite: the dequantize nodes that produced `inputs` and that
// nothing reads now go, with the integer constants only they read (and,
// with `with_inputs`, the inputs themselves where unread). Returns the
// lowest node index touched, `lowest` or below.
int remove_unread_dequantizes(Graph& g, const std::vector<std::string>& inputs, int lowest, bool with_inputs) {
  std::vector<std::string> constants;
  for (const std::string& v : inputs) {
    const int d = g.producer(v);
    if (d < 0 || g.nodes[static_cast<std::size_t>(d)].op != "dequantize" || !g.consumers(v).empty() || g.is_output(v))
      continue;
    constants.push_back(g.nodes[static_cast<std::size_t>(d)].inputs[0]);
    g.types.erase(v);
    g.nodes.erase(g.nodes.begin() + d);
    lowest = std::min(lowest, d);
  }
  if (with_inputs) constants.insert(constants.end(), inputs.begin(), inputs.end());
  erase_unread_constants(g, constants);
  return lowest;
}

int dequantize_of(const Graph& g, const ValueIndex& index, const std::string& value) {
  const int p = index.producer(value);
  return p >= 0 && g.nodes[static_cast<std::size_t>(p)].op == "dequantize" ? p : -1;
}

// `value`'s constant as real numbers: a float32 constant's values, or a
// dequantized integer constant's; nothing otherwise.
std::optional<std::vector<double>> real_values(const Graph& g, const ValueIndex& index, const std::string& value) {
  if (has_constant_data(g, value)) {
    const Constant& c = g.constants.at(value);
    const int64_t n = c.type.num_elements();
    return std::vector<double>(c.f32_data(), c.f32_data() + n);
  }
  const int d = dequantize_of(g, index, value);
  if (d < 0) return std::nullopt;
  const std::string& q = g.nodes[static_cast<std::size_t>(d)].inputs[0];
  auto it = g.constants.find(q);
  if (it == g.constants.end() || !it->second.has_data()) return std::nullopt;
  const Constant& c = it->second;
  if (c.type.dtype != DType::kInt32 || c.type.shape.size() != 1)
    return std::nullopt;  // a bias: per tensor or per axis 0
  const int64_t n = c.type.num_elements();
  std::vector<double> out(static_cast<std::size_t>(n));
  const auto* ints = reinterpret_cast<const int32_t*>(c.data.data());
  const Quantization& qz = c.type.quantization;
  for (int64_t i = 0; i < n; ++i) {
    const std::size_t k = qz.axis ? static_cast<std::size_t>(i) : 0;
    out[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<float>(ints[i] - qz.zero_point[k]) * qz.scale[k]);
  }
  return out;
}

// `relu`: the index of a relu between the layer and the quantize, or -1.
std::optional<int> fold_layer(Graph& g, const ValueIndex& index, int qi, int li, int relu) {
  const Node& q = g.nodes[static_cast<std::size_t>(qi)];
  const Node& layer = g.nodes[static_cast<std::size_t>(li)];
  if (layer.attrs.has("out_scale") || layer.inputs.size() < 2) return std::nullopt;
  const int dx = dequantize_of(g, index, layer.inputs[0]), dw = dequantize_of(g, index, layer.inputs[1]);
  if (dx < 0 || dw < 0) return std::nullopt;
  const std::string x = g.nodes[static_cast<std::size_t>(dx)].inputs[0];
  const std::string w = g.nodes[static_cast<std::size_t>(dw)].inputs[0];
  const TensorType& xt = g.type(x);
  const TensorType& out = g.type(q.outputs[0]);
  if (xt.quantization.axis || xt.dtype != out.dtype || !g.is_constant(w)) return std::nullopt;
  const TensorType& wt = g.type(w);
  if (wt.dtype != DType::kInt8 || (wt.quantization.axis && *wt.quantization.axis != 0)) return std::nullopt;
  for (int64_t z : wt.quantization.zero_point)
    if (z != 0) return std::nullopt;
  Node folded = layer;
  folded.inputs[0] = x;
  folded.inputs[1] = w;
  std::string bias;
  if (layer.inputs.size() > 2) {
    const auto real = real_values(g, index, layer.inputs[2]);
    const int64_t channels = wt.shape.at(0);
    if (!real || static_cast<int64_t>(real->size()) != channels) return std::nullopt;
    std::vector<float> scales(static_cast<std::size_t>(channels));
    std::vector<int32_t> ints(static_cast<std::size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      const float ws = wt.quantization.scale[wt.quantization.axis ? static_cast<std::size_t>(c) : 0];
      const float s = xt.quantization.scale[0] * ws;  // float32, as ONNX Runtime computes a bias scale
      const double v = std::round((*real)[static_cast<std::size_t>(c)] / s);
      if (!(std::fabs(v) <= 2147483647.0)) return std::nullopt;
      scales[static_cast<std::size_t>(c)] = s;
      ints[static_cast<std::size_t>(c)] = static_cast<int32_t>(v);
    }
    Constant b;
    b.type = TensorType{
        {channels}, DType::kInt32, Quantization::per_axis(0, scales, std::vector<int64_t>(scales.size(), 0))};
    b.data.resize(ints.size() * 4);
    std::memcpy(b.data.data(), ints.data(), b.data.size());
    bias = fresh_name(g, layer.name + "/bias_int32");
    g.add_constant(bias, std::move(b));
    folded.inputs[2] = bias;
  }
  folded.attrs.set("out_scale", static_cast<double>(out.quantization.scale[0]));
  folded.attrs.set("out_zero_point", out.quantization.zero_point[0]);
  const std::vector<std::string> old_inputs = layer.inputs;
  int lowest;
  if (relu >= 0) {  // the relu computes on the integers: max(q, zero point)
    const std::string q_out = q.outputs[0], relu_out = g.nodes[static_cast<std::size_t>(relu)].outputs[0];
    g.nodes[static_cast<std::size_t>(li)] = std::move(folded);
    g.nodes[static_cast<std::size_t>(relu)].outputs[0] = q_out;
    g.types.erase(relu_out);
    g.nodes.erase(g.nodes.begin() + qi);
    lowest = std::min({li, relu, qi});
  } else {
    folded.outputs = q.outputs;
    g.types.erase(layer.outputs[0]);
    lowest = replace_nodes(g, {li, qi}, li, std::move(folded));
  }
  return remove_unread_dequantizes(g, old_inputs, lowest, true);
}

std::optional<int> fold_at(Graph& g, const LazyValueIndex& lazy, int i) {
  if (g.nodes[static_cast<std::size_t>(i)].op != "quantize") return std::nullopt;
  const ValueIndex& index = lazy.get();
  const Node& q = g.nodes[static_cast<std::size_t>(i)];
  const std::string& src = q.inputs[0];
  const int p = index.producer(src);
  if (p < 0 || index.consumers(src).size() != 1 || g.is_output(src) || g.is_output(q.outputs[0])) return std::nullopt;
  const Node& prev = g.nodes[static_cast<std::size_t>(p)];
  if (prev.op == "Convolution" || prev.op == "FullyConnected") return fold_layer(g, index, i, p, -1);
  if (prev.op == "Activation" && prev.attrs.get_string("act_type") == "relu") {
    const int l = index.producer(prev.inputs[0]);
    if (l >= 0 && index.consumers(prev.inputs[0]).size() == 1 && !g.is_output(prev.inputs[0]) &&
        (g.nodes[static_cast<std::size_t>(l)].op == "Convolution" ||
         g.nodes[static_cast<std::size_t>(l)].op == "FullyConnected"))
      return fold_layer(g, index, i, l, p);
  }
  if (prev.op == "broadcast_add" || prev.op == "broadcast_mul" || prev.op == "elemwise_add" ||
      prev.op == "elemwise_mul") {  // TFLite's quantized ADD and MUL, on per-tensor operands of Q's dtype
    Node folded = prev;
    const TensorType& qt = g.type(q.outputs[0]);
    for (std::string& in : folded.inputs) {
      const int d = dequantize_of(g, index, in);
      if (d < 0) return std::nullopt;
      in = g.nodes[static_cast<std::size_t>(d)].inputs[0];
      const TensorType& t = g.type(in);
      if (t.dtype != qt.dtype || t.quantization.axis) return std::nullopt;
    }
    folded.attrs.set("out_scale", static_cast<double>(qt.quantization.scale[0]));
    folded.attrs.set("out_zero_point", qt.quantization.zero_point[0]);
    folded.outputs = q.outputs;
    const std::vector<std::string> old_inputs = prev.inputs;
    g.types.erase(prev.outputs[0]);
    const int lowest = replace_nodes(g, {p, i}, p, std::move(folded));
    return remove_unread_dequantizes(g, old_inputs, lowest, false);
  }
  const bool moves = prev.op == "Reshape" || prev.op == "Flatten" || prev.op == "expand_dims" || prev.op == "squeeze";
  if (moves) {  // dequantize -> view -> quantize at the same parameters: the view of the integers
    const int d = dequantize_of(g, index, prev.inputs[0]);
    if (d < 0 || prev.inputs.size() != 1) return std::nullopt;
    const std::string x = g.nodes[static_cast<std::size_t>(d)].inputs[0];
    const TensorType &xt = g.type(x), &qt = g.type(q.outputs[0]);
    if (xt.dtype != qt.dtype || xt.quantization != qt.quantization) return std::nullopt;
    Node view = prev;
    view.inputs[0] = x;
    view.outputs = q.outputs;
    g.types.erase(prev.outputs[0]);
    const std::string dq_out = prev.inputs[0];
    int lowest = replace_nodes(g, {p, i}, p, std::move(view));
    const int dd = g.producer(dq_out);
    if (dd >= 0 && g.consumers(dq_out).empty() && !g.is_output(dq_out)) {
      g.types.erase(dq_out);
      g.nodes.erase(g.nodes.begin() + dd);
      lowest = std::min(lowest, dd);
    }
    return lowest;
  }
  if (prev.op != "dequantize") return std::nullopt;
  const std::string x = prev.inputs[0];
  const TensorType &xt = g.type(x), &qt = g.type(q.outputs[0]);
  if (xt.dtype != qt.dtype || xt.quantization != qt.quantization) return std::nullopt;
  const std::string y = q.outputs[0];
  for (Node& n : g.nodes)
    for (std::string& in : n.inputs)
      if (in == y) in = x;
  g.types.erase(y);
  g.types.erase(src);
  const int lo = std::min(i, p), hi = std::max(i, p);
  g.nodes.erase(g.nodes.begin() + hi);
  g.nodes.erase(g.nodes.begin() + lo);
  return lo;
}

}  // namespace

bool fold_qdq(Graph& graph) { return rewrite_each_node(graph, fold_at); }

}  // namespace hybgen
