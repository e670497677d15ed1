// lower_batch_norm: rewrites an inference BatchNorm whose gamma, beta,
// moving_mean and moving_var are float32 constants with data as
//   y = broadcast_add(broadcast_mul(x, scale), shift)
// with, per channel c, computed in double as the BatchNorm reference kernel
// does and rounded to float once:
//   scale[c] = gamma[c] / sqrt(moving_var[c] + eps)   (gamma = 1 with fix_gamma)
//   shift[c] = beta[c] - moving_mean[c] * scale[c]
// Both constants have shape (C, 1, ..., 1), one 1 per axis after the
// BatchNorm's `axis`, so numpy broadcasting applies them along that axis.
// The add keeps the BatchNorm's node name and output value, so readers and
// graph outputs see no change; the mul and the constants get fresh names
// derived from it (NAME_mul, NAME_scale, NAME_shift). The mul and add take
// the BatchNorm's place in the node order, which stays topological.
// Statistics nothing else reads are erased.
//
// Why: fold_scale_shift then moves both ops into the weights of a preceding
// convolution or dense layer; elsewhere they are two elementwise ops that
// fusion can merge with their neighbours.
//
// The new node list is built in one walk, and fresh names and unread
// statistics come from a RewriteIndex kept current through it, so a graph
// with a BatchNorm every few nodes is not rewritten in quadratic time.
#include <cmath>
#include <optional>

#include "ops/op.h"
#include "ops/op_util.h"
#include "passes/passes.h"
#include "passes/rewrite_util.h"

namespace hybgen {
namespace {

bool lowerable(const Graph& graph, const Node& node) {
  if (find_op(node.op).name != "BatchNorm" || node.inputs.size() != 5 || node.outputs.size() != 1) return false;
  for (std::size_t i = 1; i < 5; ++i)
    if (!has_constant_data(graph, node.inputs[i])) return false;
  return true;
}

// The mul and add replacing `bn`, with their new constants added to the graph.
std::vector<Node> lower(Graph& graph, const RewriteIndex& index, const Node& bn) {
  const Attrs attrs = normalize_attrs(find_op(bn.op), bn.attrs);
  const Shape& data = graph.type(bn.inputs[0]).shape;
  const int axis = normalize_axis(attrs.get_int("axis"), data.size());
  const int64_t channels = data[axis];
  const bool fix_gamma = attrs.get_bool("fix_gamma");
  const double eps = attrs.get_float("eps");
  const float* gamma = graph.constants.at(bn.inputs[1]).f32_data();
  const float* beta = graph.constants.at(bn.inputs[2]).f32_data();
  const float* mean = graph.constants.at(bn.inputs[3]).f32_data();
  const float* var = graph.constants.at(bn.inputs[4]).f32_data();

  std::vector<float> scale(channels), shift(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double s = (fix_gamma ? 1.0 : gamma[c]) / std::sqrt(static_cast<double>(var[c]) + eps);
    scale[c] = static_cast<float>(s);
    shift[c] = static_cast<float>(beta[c] - mean[c] * s);
  }
  Shape along_axis{channels};
  along_axis.resize(data.size() - axis, 1);

  const std::string scale_name = index.fresh_name(graph, bn.name + "_scale");
  graph.add_constant(scale_name, Constant::f32(along_axis, scale));
  const std::string shift_name = index.fresh_name(graph, bn.name + "_shift");
  graph.add_constant(shift_name, Constant::f32(along_axis, shift));
  const std::string mul_name = index.fresh_name(graph, bn.name + "_mul");
  graph.types[mul_name] = graph.type(bn.inputs[0]);
  return {Node{mul_name, "broadcast_mul", {}, {bn.inputs[0], scale_name}, {mul_name}},
          Node{bn.name, "broadcast_add", {}, {mul_name, shift_name}, bn.outputs}};
}

}  // namespace

bool lower_batch_norm(Graph& graph) {
  const int count = static_cast<int>(graph.nodes.size());
  std::optional<RewriteIndex> index;  // made at the first BatchNorm that lowers
  std::vector<Node> nodes;            // the new list, once one does
  for (int i = 0; i < count; ++i) {
    if (!lowerable(graph, graph.nodes[i])) {
      if (index) nodes.push_back(std::move(graph.nodes[i]));
      continue;
    }
    if (!index) {
      index.emplace(graph);
      nodes.reserve(graph.nodes.size() + 1);
      for (int j = 0; j < i; ++j) nodes.push_back(std::move(graph.nodes[j]));
    }
    const Node bn = std::move(graph.nodes[i]);
    std::vector<Node> replacement = lower(graph, *index, bn);
    index->remove(bn, i);
    index->add(replacement[0], i);
    index->add(replacement[1], count + i);  // any id no other node has
    nodes.push_back(std::move(replacement[0]));
    nodes.push_back(std::move(replacement[1]));
    index->erase_unread_constants(graph, {bn.inputs.begin() + 1, bn.inputs.end()});
  }
  if (!index) return false;
  graph.nodes = std::move(nodes);
  return true;
}

}  // namespace hybgen
