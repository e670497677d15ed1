#include "verify/bench.h"

#include <sstream>

#include "ir/error.h"
#include "ops/gemm_pack.h"
#include "passes/kernels.h"
#include "pipeline.h"
#include "verify/generated_build.h"

namespace hybgen {

namespace {

// BenchOptions::cxx_flags when given, else the default for `target`.
std::string cxx_flags_for(const BenchOptions& options, const std::string& target) {
  if (!options.cxx_flags.empty()) return options.cxx_flags;
  return target == host_target() || target == "generic" ? "-std=c++11 -O3 -march=native"
                                                        : "-std=c++11 -O3 -mtune=native";
}

}  // namespace

BenchResult bench_generated(const Graph& graph, const BenchOptions& options) {
  if (options.runs <= 0 || options.warmup < 0) throw Error("bench: runs must be positive and warmup non-negative");
  if (options.threads < 1) throw Error("bench: threads must be at least 1");
  const std::string target = options.target.empty() ? host_target() : options.target;
  const CompiledGraph compiled = compile_graph(graph, CompileOptions{options.optimize, nullptr, cpp_target(target), options.small_arena});
  const Graph& g = compiled.graph;
  std::string buffers, fill, args;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const std::string n = std::to_string(g.type(g.inputs[i]).num_elements()), v = "in_" + std::to_string(i);
    buffers += "float " + v + "[" + n + "];\n";
    // A fixed, non-trivial input: denormals or zeros could flatter the timing.
    fill += "  for (long k = 0; k < " + n + "; ++k) " + v + "[k] = static_cast<float>((k * 37 + " +
            std::to_string(i) + ") % 101) / 50.0f - 1.0f;\n";
    args += (args.empty() ? "" : ", ") + v;
  }
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const std::string n = std::to_string(g.type(g.outputs[i]).num_elements()), v = "out_" + std::to_string(i);
    buffers += "float " + v + "[" + n + "];\n";
    args += ", " + v;
  }
  GeneratedBuild build(compiled, "bench_main.cpp",
                       {{"BUFFERS", buffers},
                        {"FILL", fill},
                        {"ARGS", args},
                        {"WARMUP", std::to_string(options.warmup)},
                        {"RUNS", std::to_string(options.runs)},
                        {"THREADS", std::to_string(options.threads)},
                        {"PROFILE", options.profile ? "true" : "false"},
                        {"KERNELS", std::to_string(compiled.kernels.size())}},
                       BuildSettings{options.cxx, cxx_flags_for(options, target), options.profile,
                                     options.external_weights});
  BenchResult r;
  std::istringstream out(build.run());
  if (!(out >> r.min_us >> r.median_us >> r.max_us)) throw Error("bench: the timing program printed no timings");
  if (options.profile) {
    for (std::size_t k = 0; k < compiled.kernels.size(); ++k) {
      int index = -1;
      double median = 0;
      if (!(out >> index >> median) || index != static_cast<int>(k))
        throw Error("bench: the profiling program printed no time for kernel " + std::to_string(k));
      const Kernel& kernel = compiled.kernels[k];
      if (kernel.kind == KernelKind::kView) continue;
      KernelTime t;
      t.index = index;
      t.kind = kernel_kind_name(kernel.kind);
      for (int node : kernel.nodes)
        t.nodes += (t.nodes.empty() ? "" : " + ") + g.nodes[node].name + " (" + g.nodes[node].op + ")";
      t.flops = kernel_flops(g, kernel);
      t.bytes = kernel_bytes(g, kernel);
      t.median_us = median;
      r.kernel_times.push_back(t);
    }
  }
  r.compile_seconds = build.compile_seconds();
  r.cxx_flags = build.cxx_flags();
  r.arena_bytes = compiled.plan.arena_bytes;
  r.lower_bound_bytes = compiled.plan.lower_bound_bytes;
  r.naive_bytes = compiled.plan.naive_bytes;
  r.nodes = g.nodes.size();
  r.kernels = compiled.kernels.size();
  r.weight_bytes = build.weight_bytes();
  r.model_weight_bytes = g.weight_bytes();
  if (options.keep_build) {
    r.build_dir = build.dir();
    build.keep();
  }
  return r;
}

}  // namespace hybgen
