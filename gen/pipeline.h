// The pass pipeline from a loaded graph to what the emitters print, read top
// to bottom like a recipe.
//
//   CompiledGraph c = compile_graph(load_model("mlp.json"));
//   c.plan.arena_bytes;
#pragma once

#include <functional>
#include <string>

#include "ir/graph.h"
#include "passes/memory_plan.h"

namespace hybgen {

struct CompiledGraph {
  Graph graph;  // validated, shapes inferred, identities removed, scheduled
  MemoryPlan plan;
};

// Called after each pass with its name and the graph (for --dump-after).
using PassObserver = std::function<void(const std::string& pass, const Graph& graph)>;

CompiledGraph compile_graph(Graph graph, const PassObserver& observer = nullptr);

// Names of the passes compile_graph runs, in order.
std::vector<std::string> pass_names();

}  // namespace hybgen
