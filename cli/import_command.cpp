#include <cstdio>

#include "cli/commands.h"
#include "io/model_json.h"
#include "ir/error.h"
#include "pipeline.h"

namespace hybgen {

int run_import(const ImportFlags& flags) {
  const Graph graph = load_any_model(flags.model.source());
  try {
    compile_graph(graph);  // refuse to write a model hybgen cannot compile
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  save_model(graph, flags.out_prefix);
  std::printf("wrote %s.json and %s.safetensors (%zu nodes, %lld parameters)\n", flags.out_prefix.c_str(),
              flags.out_prefix.c_str(), graph.nodes.size(), static_cast<long long>(graph.parameter_count()));
  return 0;
}

}  // namespace hybgen
