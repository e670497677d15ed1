// compile_graph (what `hybgen inspect` runs) on long elementwise chains:
// input (1, 16) -> relu -> +0.5 -> relu -> ... (N nodes, each reading the one
// before), listed in order and in reverse order (the scheduler sorts them).
// The target: 100k nodes compile in under 2 s in a Release build,
// so no pass may be quadratic in the nodes (or recurse with the graph's depth).
//
//   bench_large_graph                                  # 10k, 50k, 100k nodes, both orders
//   bench_large_graph --benchmark_filter='InOrder/100000'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

#include "ir/graph.h"
#include "pipeline.h"

namespace {

using hybgen::Graph;

Graph elementwise_chain(int nodes, bool reversed) {
  Graph g;
  g.name = "chain";
  g.add_input("data", {{1, 16}});
  std::string previous = "data";
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "n" + std::to_string(i);
    hybgen::Attrs attrs;
    if (i % 2 == 0) attrs.set("act_type", std::string("relu"));
    else attrs.set("scalar", 0.5);
    g.nodes.push_back(hybgen::Node{name, i % 2 == 0 ? "Activation" : "_plus_scalar", attrs, {previous}, {name}});
    previous = name;
  }
  if (reversed) std::reverse(g.nodes.begin(), g.nodes.end());
  g.outputs = {previous};
  return g;
}

void run(benchmark::State& state, bool reversed) {
  const Graph graph = elementwise_chain(static_cast<int>(state.range(0)), reversed);
  std::size_t kernels = 0;
  for (auto _ : state) {
    hybgen::CompiledGraph compiled = hybgen::compile_graph(graph);  // copies the graph, as inspect hands it over
    kernels = compiled.kernels.size();
    benchmark::DoNotOptimize(compiled);
  }
  state.counters["nodes"] = static_cast<double>(graph.nodes.size());
  state.counters["kernels"] = static_cast<double>(kernels);
}

void BM_CompileChain_InOrder(benchmark::State& state) { run(state, false); }
void BM_CompileChain_Reversed(benchmark::State& state) { run(state, true); }

}  // namespace

BENCHMARK(BM_CompileChain_InOrder)->Arg(10000)->Arg(50000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileChain_Reversed)->Arg(10000)->Arg(50000)->Arg(100000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
