// Small graph edits the simplification and fusion passes share
// (remove_dead_code, fold_constants, lower_batch_norm, fold_scale_shift,
// fuse_pointwise_depthwise, fuse_strided_batch_dot), so each pass file holds
// only its own algorithm.
//
//   const std::string scale = fresh_name(g, bn.name + "_scale");  // "bn0_scale", or "bn0_scale_1" when taken
//   if (has_constant_data(g, "bn0_gamma")) ...
//   erase_unread_constants(g, {"bn0_gamma", "bn0_beta"});
//   const int lowest = replace_nodes(g, {conv, relu, dw}, dw, fused_node);
//   bool changed = rewrite_each_node(g, fuse_at);  // fuse_at(g, index, i): lowest index touched, or nullopt
//   RewriteIndex index(g);                          // the same questions, kept current through many rewrites
#pragma once

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace hybgen {

// `base` when no node, graph input, constant or node output is called that
// yet, else the first free one of `base_1`, `base_2`, ... Deterministic, so
// the same graph always gets the same names.
std::string fresh_name(const Graph& graph, const std::string& base);

// True when `value` is a float32 constant whose data is loaded: the only
// weights a pass may compute with (a model.json read without its weights has
// types but no data).
bool has_constant_data(const Graph& graph, const std::string& value);

// Erases the constants among `candidates` that no node reads and that are
// not graph outputs (weights a rewrite left behind), with their types.
// Candidates that are not constants are ignored. Returns whether any went.
bool erase_unread_constants(Graph& graph, const std::vector<std::string>& candidates);

// Puts `replacement` at index `place` (one of `nodes`) and erases the other
// nodes listed (duplicates allowed), with the types of their output values
// except those `replacement` takes over. Returns the lowest index listed:
// nodes before it kept their indices.
int replace_nodes(Graph& graph, std::vector<int> nodes, int place, Node replacement);

// The value index of a graph, made when first asked for (a walk over the
// nodes) and again after reset(): a pass that asks only at the few nodes
// that may match does not pay for it at every node.
class LazyValueIndex {
 public:
  explicit LazyValueIndex(const Graph& graph) : graph_(graph) {}
  const ValueIndex& get() const {
    if (!index_) index_.emplace(graph_);
    return *index_;
  }
  void reset() { index_.reset(); }

 private:
  const Graph& graph_;
  mutable std::optional<ValueIndex> index_;
};

// Calls fuse_at(graph, index, i) for each node index i in order, `index`
// describing the graph as it is. When it rewrites the graph it returns the
// lowest index it touched, and the walk goes on from there (nodes before it
// kept their indices and whether they match); a rewrite must remove nodes,
// so the walk ends. Returns whether any did.
bool rewrite_each_node(Graph& graph, std::optional<int> (*fuse_at)(Graph&, const LazyValueIndex&, int));

// What node-by-node rewrites ask again and again, kept current as they
// rewrite: the nodes reading each value and the names nodes take. Asking the
// graph itself walks every node each time (Graph::consumers, fresh_name,
// erase_unread_constants), which makes a pass with a rewrite per node
// quadratic. The pass reports each node it adds, removes or edits, under an
// id of its choosing (its index in graph.nodes, say); answers are what the
// functions above would give on the graph as it stands.
//
//   RewriteIndex index(graph);                 // graph.nodes[i] as id i
//   index.remove(graph.nodes[i], i); graph.nodes[i].inputs[2] = bias; index.add(graph.nodes[i], i);
//   index.readers("conv0").size();             // Graph::consumers("conv0").size()
//   index.fresh_name(graph, "bn0_scale");      // fresh_name(graph, "bn0_scale")
class RewriteIndex {
 public:
  explicit RewriteIndex(const Graph& graph);
  void add(const Node& node, int id);
  void remove(const Node& node, int id);
  // The ids of the nodes reading `value`, each once.
  const std::set<int>& readers(const std::string& value) const;
  // As fresh_name(graph, base).
  std::string fresh_name(const Graph& graph, const std::string& base) const;
  // As erase_unread_constants(graph, candidates).
  bool erase_unread_constants(Graph& graph, const std::vector<std::string>& candidates) const;

 private:
  std::unordered_map<std::string, std::set<int>> readers_;
  std::unordered_map<std::string, int> node_names_;  // node names and outputs -> how many times nodes hold them
  std::unordered_set<std::string> inputs_;
};

}  // namespace hybgen
