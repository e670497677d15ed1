#include "verify/bench.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "emit/backends.h"
#include "ir/error.h"
#include "passes/kernels.h"
#include "passes/passes.h"
#include "pipeline.h"
#include "verify/generated_build.h"

namespace hybgen {

namespace {

// BenchOptions::cxx_flags when given, else the default for `target`.
std::string cxx_flags_for(const BenchOptions& options, const Target& target) {
  if (!options.cxx_flags.empty()) return options.cxx_flags;
  return target.name == host_target().name || target.isa == Isa::kPortable ? "-std=c++11 -O3 -march=native"
                                                                            : "-std=c++11 -O3 -mtune=native";
}

// Code whose run() takes device pointers (CUDA), timed by CUDA events: run() and a replayed CUDA Graph.
BenchResult bench_device(const CompiledGraph& compiled, const BenchOptions& options, const Graph& model) {
  if (options.profile) throw Error("bench: --profile times the C++ backend's kernels; use Nsight Systems for CUDA");
  const Graph& g = compiled.graph;
  std::string buffers, fill, args;
  // Float32 edges, or with --io-precision half the model's half type (converted on the host).
  auto add = [&](const std::string& v, const TensorType& edge, bool input) {
    const std::string n = std::to_string(edge.num_elements()), type = storage_c_type(edge.dtype, Backend::kCuda);
    const std::string convert = edge.dtype == DType::kFloat16    ? "__float2half_rn"
                                : edge.dtype == DType::kBFloat16 ? "__float2bfloat16_rn"
                                                                 : "";
    buffers += type + "* " + v + " = nullptr;\n";
    fill += "  if (!cuda_ok(cudaMalloc(&" + v + ", " + n + " * sizeof(" + type + ")), \"cudaMalloc\")) return 6;\n";
    // A fixed, non-trivial input: denormals or zeros could flatter the timing.
    if (input)
      fill += "  {\n    std::vector<" + type + "> host(" + n + ");\n    for (long k = 0; k < " + n +
              "; ++k) host[k] = " + convert +
              "(static_cast<float>((k * 37) % 101) / 50.0f - 1.0f);\n"
              "    if (!cuda_ok(cudaMemcpy(" +
              v + ", host.data(), " + n + " * sizeof(" + type +
              "), cudaMemcpyHostToDevice), \"upload\")) return 6;\n  }\n";
    args += (args.empty() ? "" : ", ") + v;
  };
  for (std::size_t i = 0; i < g.inputs.size(); ++i) add("in_" + std::to_string(i), g.type(g.inputs[i]), true);
  for (std::size_t i = 0; i < g.outputs.size(); ++i) add("out_" + std::to_string(i), g.type(g.outputs[i]), false);
  GeneratedBuild build(compiled, backend_traits(compiled.target.backend).bench_driver,
                       {{"BUFFERS", buffers},
                        {"FILL", fill},
                        {"ARGS", args},
                        {"WARMUP", std::to_string(options.warmup)},
                        {"RUNS", std::to_string(options.runs)}},
                       BuildSettings{options.cxx, options.cxx_flags, false, options.external_weights});
  BenchResult r;
  std::istringstream out(build.run());
  if (!(out >> r.min_us >> r.median_us >> r.max_us >> r.replay_min_us >> r.replay_median_us >> r.replay_max_us))
    throw Error("bench: the timing program printed no timings");
  r.compile_seconds = build.compile_seconds();
  r.cxx_flags = build.cxx_flags();
  r.arena_bytes = compiled.plan.arena_bytes;
  r.lower_bound_bytes = compiled.plan.lower_bound_bytes;
  r.naive_bytes = compiled.plan.naive_bytes;
  r.weight_bytes = build.weight_bytes();
  r.model_weight_bytes = model.weight_bytes();
  r.nodes = g.nodes.size();
  r.kernels = compiled.kernels.size();
  r.device = true;
  return r;
}

}  // namespace

BenchResult bench_generated(const Graph& graph, const BenchOptions& options) {
  if (options.runs <= 0 || options.warmup < 0) throw Error("bench: runs must be positive and warmup non-negative");
  if (options.threads < 1) throw Error("bench: threads must be at least 1");
  const Target& target = options.compile.target;
  const CompiledGraph compiled = compile_graph(graph, options.compile);
  const Graph& g = compiled.graph;
  const BackendTraits& backend = backend_traits(target.backend);
  if (backend.device_buffers) return bench_device(compiled, options, graph);
  // A run-time batch: the edges holding items sized for `batch` of them.
  const int64_t batch = options.batch ? options.batch : g.batch.max;
  if (options.batch && !g.batch.variable())
    throw Error("bench --batch: the model's shapes are fixed (a run-time batch is --shape NAME=MIN..MAX,...)");
  if (g.batch.variable() && (batch < g.batch.min || batch > g.batch.max))
    throw Error("bench --batch " + std::to_string(batch) + ": the model takes " + std::to_string(g.batch.min) + ".." +
                std::to_string(g.batch.max) + " items");
  const std::set<std::string> batched = batch_values(g);
  auto elements = [&](const std::string& value) {
    return g.type(value).num_elements() * (batched.count(value) ? batch : 1);
  };
  std::string buffers, fill, args;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const std::string n = std::to_string(elements(g.inputs[i])), v = "in_" + std::to_string(i);
    const DType dtype = g.type(g.inputs[i]).dtype;
    buffers += dtype_c_type(dtype) + " " + v + "[" + n + "];\n";
    // A fixed, non-trivial input: denormals or zeros could flatter the timing.
    // A quantized edge (--io-precision quantized) takes its integers spread over the range.
    if (dtype == DType::kFloat32)
      fill += "  for (long k = 0; k < " + n + "; ++k) " + v + "[k] = static_cast<float>((k * 37 + " +
              std::to_string(i) + ") % 101) / 50.0f - 1.0f;\n";
    else
      fill += "  for (long k = 0; k < " + n + "; ++k) " + v + "[k] = static_cast<" + dtype_c_type(dtype) +
              ">((k * 37 + " + std::to_string(i) + ") % 101 * 2" + (dtype == DType::kInt8 ? " - 101" : "") + ");\n";
    args += (args.empty() ? "" : ", ") + v;
  }
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const std::string n = std::to_string(elements(g.outputs[i])), v = "out_" + std::to_string(i);
    buffers += dtype_c_type(g.type(g.outputs[i]).dtype) + " " + v + "[" + n + "];\n";
    args += ", " + v;
  }
  if (g.batch.variable()) args += ", static_cast<int64_t>(" + std::to_string(batch) + ")";
  GeneratedBuild build(
      compiled, backend.bench_driver,
      {{"BUFFERS", buffers},
       {"FILL", fill},
       {"ARGS", args},
       {"WARMUP", std::to_string(options.warmup)},
       {"RUNS", std::to_string(options.runs)},
       {"THREADS", std::to_string(options.threads)},
       {"PROFILE", options.profile ? "true" : "false"},
       {"KERNELS", std::to_string(compiled.kernels.size())}},
      BuildSettings{options.cxx, cxx_flags_for(options, target), options.profile, options.external_weights});
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
      // A run-time batch: a kernel on items does one item's work `batch` times.
      const bool on_items = std::any_of(kernel.outputs.begin(), kernel.outputs.end(),
                                        [&](const std::string& v) { return batched.count(v) != 0; });
      const double items = on_items ? static_cast<double>(batch) : 1.0;
      t.flops = kernel_flops(g, kernel) * items;
      t.bytes = kernel_bytes(g, kernel) * items;
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
