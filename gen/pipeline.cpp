#include "pipeline.h"

#include "passes/passes.h"

namespace hybgen {

std::vector<std::string> pass_names() {
  return {"validate", "infer_shapes", "remove_identities", "schedule", "plan_memory"};
}

CompiledGraph compile_graph(Graph graph, const PassObserver& observer) {
  auto after = [&](const char* pass, const Graph& g) {
    if (observer) observer(pass, g);
  };
  validate(graph);
  after("validate", graph);
  infer_shapes(graph);
  after("infer_shapes", graph);
  if (remove_identities(graph)) infer_shapes(graph);
  after("remove_identities", graph);
  schedule(graph);
  after("schedule", graph);
  CompiledGraph result{std::move(graph), {}};
  result.plan = plan_memory(result.graph);
  result.plan.verify();
  after("plan_memory", result.graph);
  return result;
}

}  // namespace hybgen
