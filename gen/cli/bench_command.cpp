#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "ir/error.h"
#include "verify/bench.h"

namespace hybgen {

int run_bench(const BenchFlags& flags) {
  const Graph graph = load_any_model(flags.model.source());
  BenchOptions options;
  options.runs = flags.runs;
  options.warmup = flags.warmup;
  options.optimize = !flags.no_optimize;
  options.target = flags.target;
  options.threads = flags.threads;
  if (!flags.cxx_flags.empty()) options.cxx_flags = flags.cxx_flags;
  BenchResult r;
  try {
    r = bench_generated(graph, options);
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  const std::string threads = flags.threads > 1 ? std::to_string(flags.threads) + " threads" : "single thread";
  std::printf("%s: generated C++ built with %s (compiled in %.1f s), %s, %d runs after %d warm-up\n",
              flags.model.model.c_str(), options.cxx_flags.c_str(), r.compile_seconds, threads.c_str(), flags.runs,
              flags.warmup);
  std::printf("latency us: min %.2f  median %.2f  max %.2f\n", r.min_us, r.median_us, r.max_us);
  std::printf("%zu kernels from %zu nodes%s\n", r.kernels, r.nodes, flags.no_optimize ? " (optimizer off)" : "");
  std::printf("arena %zu bytes (lower bound %zu, without reuse %zu), weights %zu bytes\n", r.arena_bytes,
              r.lower_bound_bytes, r.naive_bytes, r.weight_bytes);
  return 0;
}

}  // namespace hybgen
