// `hybgen inspect --dot`: the compiled graph as Graphviz text. One box per
// node (name and op), edges along the values between them, graph inputs and
// outputs as house shapes, and each fused kernel (more than one node) as a
// `subgraph cluster_STEP` labelled with its step and kind. Weights are left
// out: they would outnumber the nodes. Render with `dot -Tsvg g.dot -o g.svg`.
//
//   CompiledGraph c = compile_graph(load_model("mlp.json"));
//   write_file_atomic("mlp.dot", graph_to_dot(c));
#pragma once

#include <string>

#include "pipeline.h"

namespace hybgen {

// Deterministic: ids come from node and kernel positions, never from pointers.
std::string graph_to_dot(const CompiledGraph& compiled);

}  // namespace hybgen
