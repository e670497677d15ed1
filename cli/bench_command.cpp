#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "ir/error.h"
#include "ir/names.h"
#include "verify/bench.h"

namespace hybgen {
namespace {

std::string one_decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// Per kernel: median us, share of the kernels' sum, GFLOP/s and GB/s (of
// the bytes it reads and writes, weights included), slowest first.
void print_kernel_times(std::vector<KernelTime> times) {
  double total = 0;
  for (const auto& t : times) total += t.median_us;
  std::stable_sort(times.begin(), times.end(),
                   [](const KernelTime& a, const KernelTime& b) { return a.median_us > b.median_us; });
  std::printf("\nper kernel (medians over the runs; sum %.2f us), slowest first:\n", total);
  std::printf("%6s %11s %6s %8s %8s  %s\n", "kernel", "median us", "share", "GFLOP/s", "GB/s", "nodes");
  for (const auto& t : times) {
    const double seconds = t.median_us * 1e-6;
    const std::string gflops = t.flops > 0 && seconds > 0 ? one_decimal(t.flops / seconds * 1e-9) : "-";
    const std::string gbytes = seconds > 0 ? one_decimal(t.bytes / seconds * 1e-9) : "-";
    std::printf("%6d %11.2f %5.1f%% %8s %8s  %s\n", t.index, t.median_us, total > 0 ? 100 * t.median_us / total : 0.0,
                gflops.c_str(), gbytes.c_str(), printable_name(t.nodes).c_str());
  }
}

}  // namespace

int run_bench(const BenchFlags& flags) {
  const Graph graph = load_any_model(flags.model.source());
  BenchOptions options;
  options.runs = flags.runs;
  options.warmup = flags.warmup;
  options.compile = flags.compile.options(host_target());
  options.threads = flags.threads;
  options.profile = flags.profile;
  options.keep_build = flags.keep;
  options.external_weights = flags.external_weights;
  options.batch = flags.batch;
  if (!flags.cxx_flags.empty()) options.cxx_flags = flags.cxx_flags;
  BenchResult r;
  try {
    r = bench_generated(graph, options);
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  if (r.device) {
    std::printf("%s: generated CUDA built with nvcc %s (compiled in %.1f s), %d runs after %d warm-up, CUDA events\n",
                flags.model.model.c_str(), r.cxx_flags.c_str(), r.compile_seconds, flags.runs, flags.warmup);
    std::printf("latency us: min %.2f  median %.2f  max %.2f  (run())\n", r.min_us, r.median_us, r.max_us);
    std::printf("latency us: min %.2f  median %.2f  max %.2f  (replay() of the captured CUDA Graph)\n",
                r.replay_min_us, r.replay_median_us, r.replay_max_us);
  } else {
    const std::string threads = flags.threads > 1 ? std::to_string(flags.threads) + " threads" : "single thread";
    std::printf("%s: generated C++ built with %s (compiled in %.1f s), %s, %d runs after %d warm-up\n",
                flags.model.model.c_str(), r.cxx_flags.c_str(), r.compile_seconds, threads.c_str(), flags.runs,
                flags.warmup);
    std::printf("latency us: min %.2f  median %.2f  max %.2f\n", r.min_us, r.median_us, r.max_us);
  }
  std::printf("%zu kernels from %zu nodes%s\n", r.kernels, r.nodes, flags.compile.no_optimize ? " (optimizer off)" : "");
  std::printf("arena %zu bytes (lower bound %zu, without reuse %zu), %s\n", r.arena_bytes, r.lower_bound_bytes,
              r.naive_bytes, weights_summary(r.weight_bytes, r.model_weight_bytes).c_str());
  if (flags.profile) print_kernel_times(r.kernel_times);
  if (!r.build_dir.empty()) std::printf("build kept in %s\n", r.build_dir.c_str());
  return 0;
}

}  // namespace hybgen
