// Small graph edits the simplification passes share (remove_dead_code,
// fold_constants, lower_batch_norm, fold_scale_shift), so each pass file
// holds only its own algorithm.
//
//   const std::string scale = fresh_name(g, bn.name + "_scale");  // "bn0_scale", or "bn0_scale_1" when taken
//   if (has_constant_data(g, "bn0_gamma")) ...
//   erase_unread_constants(g, {"bn0_gamma", "bn0_beta"});
#pragma once

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

}  // namespace hybgen
