// fold_scale_shift: folds per-output-channel affine ops into the weights of
// the Convolution or FullyConnected that produces their input:
//   conv(x; W, b) * k = conv(x; W * k, b * k)   broadcast_mul (either side), _mul_scalar
//   conv(x; W, b) / k = conv(x; W / k, b / k)   broadcast_div (k the divisor), _div_scalar
//   conv(x; W, b) + k = conv(x; W, b + k)       broadcast_add (either side), _plus_scalar
//   conv(x; W, b) - k = conv(x; W, b - k)       broadcast_sub (k on the right), _minus_scalar
// where k[c] is one value per output channel: a scalar attribute, or a
// float32 constant with data whose axes other than the producer's channel
// axis (Convolution: axis 1 of NCHW; FullyConnected: the last) all have
// extent 1, and whose channel axis has extent C or 1. Row c of the weight
// (its first axis is the output channel for both ops) and b[c] are scaled,
// or b[c] shifted; a missing bias is created (no_bias=false). Division by a
// k holding 0 is left alone.
//
// Invariants: the producer's output must have that one reader and must not
// be a graph output, since both would see the changed values. The reader
// disappears and the producer takes over its output value name, so what read
// the reader is unchanged. A weight or bias that another node also reads, or
// that is a graph output, is first copied to a fresh name derived from the
// producer's node name (NAME_weight, NAME_bias); only the copy changes.
// Each producer folds readers until its reader no longer matches, so a
// lowered BatchNorm (mul, then add) folds entirely into the convolution.
//
// Readers, fresh names and unread constants come from a RewriteIndex kept
// current through the pass, and a folded reader is only marked gone until
// the end (node indices stay put), so a graph with a fold every few nodes is
// not rewritten in quadratic time.
#include <algorithm>
#include <optional>
#include <set>

#include "ops/op.h"
#include "ops/op_util.h"
#include "passes/passes.h"
#include "passes/rewrite_util.h"

namespace hybgen {
namespace {

enum class Affine { kMultiply, kDivide, kAdd, kSubtract };

struct ChannelAffine {
  Affine kind;
  std::vector<float> k;  // one value per output channel
  std::string constant;  // the constant operand, "" for a scalar op
};

// The output-channel axis of a Convolution or FullyConnected output, or
// nullopt for any other op.
std::optional<int> channel_axis(const Node& node, const Shape& out) {
  const std::string& op = find_op(node.op).name;
  if (op == "Convolution") return 1;
  if (op == "FullyConnected") return static_cast<int>(out.size()) - 1;
  return std::nullopt;
}

// The constant's values, one per channel, when it varies along `axis` of
// `out` only (or is a single value); nullopt otherwise.
std::optional<std::vector<float>> per_channel(const Graph& graph, const std::string& value, const Shape& out,
                                              int axis) {
  if (!has_constant_data(graph, value)) return std::nullopt;
  const Constant& c = graph.constants.at(value);
  const Shape& shape = c.type.shape;
  if (shape.size() > out.size()) return std::nullopt;
  const std::size_t lead = out.size() - shape.size();  // numpy aligns shapes on the right
  int64_t extent = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (lead + d == static_cast<std::size_t>(axis)) extent = shape[d];
    else if (shape[d] != 1) return std::nullopt;
  }
  const int64_t channels = out[axis];
  if (extent != 1 && extent != channels) return std::nullopt;
  std::vector<float> k(channels);
  for (int64_t i = 0; i < channels; ++i) k[i] = c.f32_data()[extent == 1 ? 0 : i];
  return k;
}

// How `reader` transforms the value `produced` (shape `out`, channels on
// `axis`), when that is a per-channel affine op with the data operand where
// the algebra above needs it.
std::optional<ChannelAffine> match_reader(const Graph& graph, const Node& reader, const std::string& produced,
                                          const Shape& out, int axis) {
  const OpDef& def = find_op(reader.op);
  if (reader.outputs.size() != 1 || graph.type(reader.outputs[0]).shape != out) return std::nullopt;

  static const std::pair<const char*, Affine> scalar_ops[] = {{"_mul_scalar", Affine::kMultiply},
                                                              {"_div_scalar", Affine::kDivide},
                                                              {"_plus_scalar", Affine::kAdd},
                                                              {"_minus_scalar", Affine::kSubtract}};
  for (const auto& [name, kind] : scalar_ops)
    if (def.name == name) {
      const float s = static_cast<float>(normalize_attrs(def, reader.attrs).get_float("scalar"));
      return ChannelAffine{kind, std::vector<float>(out[axis], s), ""};
    }

  // Binary ops: {name, kind, whether the data operand may be on the right}.
  struct BinaryForm {
    const char* name;
    Affine kind;
    bool commutes;
  };
  static const BinaryForm binary_ops[] = {{"broadcast_mul", Affine::kMultiply, true},
                                          {"broadcast_div", Affine::kDivide, false},
                                          {"broadcast_add", Affine::kAdd, true},
                                          {"broadcast_sub", Affine::kSubtract, false}};
  for (const BinaryForm& form : binary_ops) {
    if (def.name != form.name || reader.inputs.size() != 2) continue;
    const int data_side = reader.inputs[0] == produced ? 0 : 1;
    if (reader.inputs[data_side] != produced || (data_side == 1 && !form.commutes)) return std::nullopt;
    const std::string& constant = reader.inputs[1 - data_side];
    auto k = per_channel(graph, constant, out, axis);
    if (!k) return std::nullopt;
    return ChannelAffine{form.kind, std::move(*k), constant};
  }
  return std::nullopt;
}

// Input `slot` of node `index` as a constant this node alone reads, so it can
// change in place: itself when nothing else reads it, else a copy under a
// fresh name derived from the node's name.
float* writable_constant(Graph& graph, RewriteIndex& nodes, int index, std::size_t slot, const std::string& suffix) {
  Node& node = graph.nodes[index];
  const std::string value = node.inputs[slot];
  const bool shared = graph.is_output(value) || nodes.readers(value).size() > 1 ||
                      std::count(node.inputs.begin(), node.inputs.end(), value) > 1;
  if (shared) {
    const std::string copy = nodes.fresh_name(graph, node.name + suffix);
    graph.add_constant(copy, graph.constants.at(value));
    nodes.remove(node, index);
    node.inputs[slot] = copy;
    nodes.add(node, index);
  }
  return graph.constants.at(node.inputs[slot]).f32_data();
}

void apply(Graph& graph, RewriteIndex& nodes, int producer, const ChannelAffine& affine) {
  const int64_t channels = static_cast<int64_t>(affine.k.size());
  if (graph.nodes[producer].inputs.size() < 3) {
    Node& node = graph.nodes[producer];
    const std::string bias = nodes.fresh_name(graph, node.name + "_bias");
    graph.add_constant(bias, Constant::f32({channels}, std::vector<float>(channels, 0.0f)));
    nodes.remove(node, producer);
    node.inputs.push_back(bias);
    nodes.add(node, producer);
    node.attrs.set("no_bias", false);
  }
  float* bias = writable_constant(graph, nodes, producer, 2, "_bias");
  if (affine.kind == Affine::kAdd || affine.kind == Affine::kSubtract) {
    for (int64_t c = 0; c < channels; ++c) bias[c] += affine.kind == Affine::kAdd ? affine.k[c] : -affine.k[c];
    return;
  }
  float* weight = writable_constant(graph, nodes, producer, 1, "_weight");
  const int64_t row = graph.type(graph.nodes[producer].inputs[1]).num_elements() / channels;
  for (int64_t c = 0; c < channels; ++c) {
    const float k = affine.k[c];
    if (affine.kind == Affine::kMultiply) {
      for (int64_t i = 0; i < row; ++i) weight[c * row + i] *= k;
      bias[c] *= k;
    } else {
      for (int64_t i = 0; i < row; ++i) weight[c * row + i] /= k;
      bias[c] /= k;
    }
  }
}

// Folds the reader of node `producer`'s output into it when the rules above
// allow. `nodes` (made here when first needed) indexes the nodes not
// `removed`; the folded reader joins those.
bool fold_reader(Graph& graph, int producer, std::optional<RewriteIndex>& nodes, std::vector<bool>& removed) {
  const Node& node = graph.nodes[producer];
  if (node.outputs.size() != 1 || node.inputs.size() < 2) return false;
  const std::string produced = node.outputs[0];
  const Shape& out = graph.type(produced).shape;
  const std::optional<int> axis = channel_axis(node, out);
  if (!axis || graph.is_output(produced)) return false;
  for (std::size_t i = 1; i < node.inputs.size(); ++i)
    if (!has_constant_data(graph, node.inputs[i])) return false;
  if (!nodes) nodes.emplace(graph);
  const std::set<int>& readers = nodes->readers(produced);
  if (readers.size() != 1) return false;
  const int reader = *readers.begin();
  const std::optional<ChannelAffine> affine = match_reader(graph, graph.nodes[reader], produced, out, *axis);
  if (!affine) return false;
  if (affine->kind == Affine::kDivide && std::count(affine->k.begin(), affine->k.end(), 0.0f) > 0) return false;

  apply(graph, *nodes, producer, *affine);
  nodes->remove(graph.nodes[producer], producer);
  nodes->remove(graph.nodes[reader], reader);
  graph.nodes[producer].outputs[0] = graph.nodes[reader].outputs[0];
  nodes->add(graph.nodes[producer], producer);
  graph.types.erase(produced);
  removed[reader] = true;
  nodes->erase_unread_constants(graph, {affine->constant});
  return true;
}

}  // namespace

bool fold_scale_shift(Graph& graph) {
  std::optional<RewriteIndex> nodes;
  std::vector<bool> removed(graph.nodes.size(), false);
  bool changed = false;
  for (int producer = 0; producer < static_cast<int>(graph.nodes.size()); ++producer)
    while (!removed[producer] && fold_reader(graph, producer, nodes, removed)) changed = true;
  if (!changed) return false;
  std::vector<Node> kept;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(kept);
  return true;
}

}  // namespace hybgen
