// Small graph edits the simplification and fusion passes share
// (remove_dead_code, fold_constants, lower_batch_norm, fold_scale_shift,
// fuse_pointwise_depthwise, fuse_strided_batch_dot), so each pass file holds
// only its own algorithm.
//
//   const std::string scale = fresh_name(g, bn.name + "_scale");  // "bn0_scale", or "bn0_scale_1" when taken
//   if (has_constant_data(g, "bn0_gamma")) ...
//   erase_unread_constants(g, {"bn0_gamma", "bn0_beta"});
//   const int lowest = replace_nodes(g, {conv, relu, dw}, dw, fused_node);
//   bool changed = rewrite_each_node(g, fuse_at);  // fuse_at(g, i): lowest index touched, or nullopt
#pragma once

#include <optional>
#include <string>
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

// Calls fuse_at(graph, i) for each node index i in order. When it rewrites
// the graph it returns the lowest index it touched, and the walk goes on
// from there (nodes before it kept their indices and whether they match);
// a rewrite must remove nodes, so the walk ends. Returns whether any did.
bool rewrite_each_node(Graph& graph, std::optional<int> (*fuse_at)(Graph&, int));

}  // namespace hybgen
