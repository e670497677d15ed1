// Graph passes. Each is a free function in its own file (passes/NAME.cpp)
// that opens with a comment on its algorithm; transforming passes return
// whether they changed the graph. compile_graph() (pipeline.h) runs them in
// order.
//
//   validate(g);            // throws Error naming the node
//   infer_shapes(g);
//   remove_identities(g);
//   schedule(g);
//   MemoryPlan plan = plan_memory(g);
#pragma once

#include "ir/graph.h"
#include "passes/memory_plan.h"

namespace hybgen {

// Checks structure and fills attribute defaults: every op is registered
// (all unknown ops listed in one Error), every input is defined (input,
// constant or a node output), every value has one producer, node and value
// names are unique, input counts match the schema, attributes match it, no
// cycle exists, outputs are defined. Returns whether attributes changed.
bool validate(Graph& graph);

// Computes the type of every node output from the op's shape rule; Error
// names the node whose rule failed and why.
bool infer_shapes(Graph& graph);

// Removes nodes that forward their input unchanged at inference (Dropout,
// _copy). Graph output names are kept: when an identity's output is a graph
// output, its producer takes over that name.
bool remove_identities(Graph& graph);

// Orders nodes topologically, keeping the existing order where it is already
// valid, so the order is deterministic.
bool schedule(Graph& graph);
// The stable topological order schedule() applies, as node indices; Error on a cycle.
std::vector<int> topological_order(const Graph& graph);

// Liveness over the (scheduled) node order, then offsets in one arena.
MemoryPlan plan_memory(const Graph& graph);

}  // namespace hybgen
