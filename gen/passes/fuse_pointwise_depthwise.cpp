// fuse_pointwise_depthwise: a 1x1 convolution whose output, after at most a
// relu or clip, only a depthwise convolution reads becomes one
// _pointwise_depthwise_conv node (gen/ops/pointwise_depthwise_conv.cpp),
// whose kernel never holds the 1x1 convolution's whole output:
//
//   conv1x1(x; W1, b1) -> [relu | clip] -> depthwise(.; W2, b2)
//     =>  _pointwise_depthwise_conv(x, W1, b1, W2, b2)
//
// The 1x1 convolution: kernel 1x1, stride 1, no padding, one group, weight a
// float32 constant with data (the kernel packs it), more output channels than
// input ones, and an input of at most kMaxInputBytes per image. The depthwise one: as
// many groups as channels and filters, reading the value as its data only,
// weight a float32 constant with data (the AVX-512 kernel packs it too, and
// the packing of both weights must agree on the kernel). Neither intermediate value may be a graph output or have
// another reader. A missing bias becomes a zero constant named after its
// node. The fused node is named after both nodes, sits where the depthwise
// node was and takes over its output value, so its readers are unchanged;
// what follows it (the next relu6) is left to fuse() as its epilogue.
#include <algorithm>
#include <optional>

#include "ops/conv_geometry.h"
#include "ops/op.h"
#include "passes/passes.h"
#include "passes/rewrite_util.h"

namespace hybgen {
namespace {

// Where the fused kernel pays: it reads the 1x1 convolution's input once per
// channel block, so that input must stay in cache between blocks (L2 here),
// and it keeps the input, a block and the output live at once, so it only
// saves arena bytes where the intermediate is wider than the input (an
// expansion). On MobileNet v2's first block (32 -> 32 channels, 1.6 MB of
// input at 112x112) fusing it was slower, 447 against 432 us, and took more
// arena.
constexpr int64_t kMaxInputBytes = int64_t{1} << 20;

bool is_convolution(const Node& node) { return find_op(node.op).name == "Convolution"; }

bool is_pointwise(const Graph& graph, const Node& node) {
  if (!is_convolution(node) || node.outputs.size() != 1 || node.inputs.size() < 2) return false;
  const Shape& data = graph.type(node.inputs[0]).shape;
  if (data.size() != 4) return false;
  const ConvGeometry g = conv_geometry(normalize_attrs(find_op(node.op), node.attrs), data);
  if (g.f <= g.c || g.c * g.h * g.w * 4 > kMaxInputBytes) return false;
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.ph_end == 0 &&
         g.pw_end == 0 && g.groups == 1 &&
         has_constant_data(graph, node.inputs[1]) && (node.inputs.size() < 3 || graph.is_constant(node.inputs[2]));
}

bool is_depthwise_of(const Graph& graph, const Node& node, const std::string& value) {
  if (!is_convolution(node) || node.inputs.size() < 2 || node.inputs[0] != value) return false;
  if (std::count(node.inputs.begin(), node.inputs.end(), value) != 1) return false;
  const ConvGeometry g = conv_geometry(normalize_attrs(find_op(node.op), node.attrs), graph.type(value).shape);
  // The fused op pads symmetrically (pad alone).
  if (g.ph_end != g.ph || g.pw_end != g.pw) return false;
  return g.groups == g.c && g.f == g.c && g.kh <= 64 && has_constant_data(graph, node.inputs[1]) &&
         (node.inputs.size() < 3 || graph.is_constant(node.inputs[2]));
}

// The node that alone reads `value`, when `value` is no graph output.
std::optional<int> only_reader(const Graph& graph, const LazyValueIndex& index, const std::string& value) {
  if (graph.is_output(value)) return std::nullopt;
  const std::vector<int>& readers = index.get().consumers(value);
  if (readers.size() != 1) return std::nullopt;
  return readers[0];
}

// The fused op's act_type, a_min and a_max for an activation node between
// the convolutions, or nullopt when it is another op.
std::optional<Attrs> activation_attrs(const Node& node) {
  const OpDef& def = find_op(node.op);
  if (node.inputs.size() != 1 || node.outputs.size() != 1) return std::nullopt;
  const Attrs a = normalize_attrs(def, node.attrs);
  Attrs out;
  if (def.name == "Activation" && a.get_string("act_type") == "relu") {
    out.set("act_type", std::string("relu"));
  } else if (def.name == "clip" && a.get_float("a_min") <= a.get_float("a_max")) {
    out.set("act_type", std::string("clip"));
    out.set("a_min", a.get_float("a_min"));
    out.set("a_max", a.get_float("a_max"));
  } else {
    return std::nullopt;
  }
  return out;
}

// Input 2 of `node` (its bias), or a new zero constant of `channels` values.
std::string bias_of(Graph& graph, const Node& node, int64_t channels) {
  if (node.inputs.size() > 2) return node.inputs[2];
  const std::string bias = fresh_name(graph, node.name + "_bias");
  graph.add_constant(bias, Constant::f32({channels}, std::vector<float>(channels, 0.0f)));
  return bias;
}

// Fuses the chain starting at pointwise node `first` when it matches;
// returns the lowest index of a node it removed or replaced, or nullopt.
std::optional<int> fuse_pointwise_depthwise_at(Graph& graph, const LazyValueIndex& index, int first) {
  const Node& pointwise = graph.nodes[first];
  if (!is_pointwise(graph, pointwise)) return std::nullopt;
  std::optional<int> next = only_reader(graph, index, pointwise.outputs[0]);
  if (!next) return std::nullopt;
  std::optional<int> activation;
  Attrs attrs;
  attrs.set("act_type", std::string("none"));
  if (std::optional<Attrs> act = activation_attrs(graph.nodes[*next])) {
    activation = next;
    attrs = *act;
    next = only_reader(graph, index, graph.nodes[*activation].outputs[0]);
    if (!next) return std::nullopt;
  }
  const std::string mid = activation ? graph.nodes[*activation].outputs[0] : pointwise.outputs[0];
  if (!is_depthwise_of(graph, graph.nodes[*next], mid)) return std::nullopt;
  const int last = *next;
  const Node depthwise = graph.nodes[last];
  const Attrs dw = normalize_attrs(find_op(depthwise.op), depthwise.attrs);
  const int64_t channels = graph.type(mid).shape[1];

  attrs.set("kernel", dw.get_ints("kernel"));
  attrs.set("num_filter", channels);
  attrs.set("stride", dw.get_ints("stride"));
  attrs.set("pad", dw.get_ints("pad"));
  attrs.set("dilate", dw.get_ints("dilate"));
  Node fused{fresh_name(graph, pointwise.name + "_" + depthwise.name), "_pointwise_depthwise_conv", attrs, {}, {}};
  fused.inputs = {pointwise.inputs[0], pointwise.inputs[1], bias_of(graph, pointwise, channels),
                  depthwise.inputs[1], bias_of(graph, depthwise, channels)};
  fused.outputs = depthwise.outputs;

  std::vector<int> gone{first, last};
  if (activation) gone.push_back(*activation);
  return replace_nodes(graph, gone, last, std::move(fused));
}

}  // namespace

bool fuse_pointwise_depthwise(Graph& graph) { return rewrite_each_node(graph, fuse_pointwise_depthwise_at); }

}  // namespace hybgen
