// Per-model latency of the zoo architectures five ways — eager runtime,
// hybridized (compiled in-process), hybridized without a compiler (the
// optimized graph on the interpreter), generated C++ without the optimizer
// (--no-optimize: one kernel per node, no shared buffers) and with it — with
// the first hybridized call's compile time, with kernel counts before and after fusion and the generated code's
// memory: arena vs the lower bound vs no reuse, and the unoptimized arena.
//
//   bench_zoo [--runs N] [--models resnet18_v1,mobilenet_v2,...]
//
// Single-threaded (OpenBLAS pinned to one thread for the eager paths);
// medians, ratios from this one run.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "io/file_util.h"
#include "runtime-lite/hybgen.h"
#include "verify/bench.h"
#include "zoo.h"

namespace {

using namespace hybgen;

// Each sample runs `f` back to back for at least 10 ms (once for the large
// models), so that a small model's calls are timed warm, as generated code's are.
double median_ms(const std::function<void()>& f, int runs) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    int calls = 0;
    double elapsed = 0;
    do {
      f();
      ++calls;
      elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    } while (elapsed < 10.0);
    t.push_back(elapsed / calls);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--runs") runs = std::atoi(argv[i + 1]);
    if (flag == "--models") only = "," + std::string(argv[i + 1]) + ",";
  }
  openblas_set_num_threads(1);

  std::printf("single thread, median of %d runs; generated code: -O3 -march=native; plain = generated with "
              "--no-optimize\n\n",
              runs);
  std::printf("%-20s %9s %9s %9s %9s %9s %10s %11s %11s %9s %9s %11s %10s %10s %10s %10s\n", "model", "eager ms",
              "hybrid ms", "no-cxx ms", "plain ms", "gen ms", "hybrid/gen", "eager/hybrid", "eager/no-cxx",
              "compile s", "gen/eager", "kernels", "arena KiB", "bound KiB", "naive KiB", "plain KiB");
  for (const auto& m : zoo::models()) {
    if (only.empty() ? m.name == "vgg11_bn" : only.find("," + m.name + ",") == std::string::npos) continue;
    auto net = m.build();
    net->initialize(init::Xavier(), 42);
    const Tensor x = Tensor::random_normal(m.input, 0.0f, 1.0f, 7);
    const double eager = median_ms([&] { (*net)(x); }, runs);
    // Hybridized: compiled in-process (a fresh cache, so the first call
    // compiles), then without a compiler (the optimized graph on the interpreter).
    TempDir cache("bench-zoo-cache");
    HybridizeOptions compiled;
    compiled.compile = true;
    compiled.cache_dir = cache.path();
    compiled.tiered = false;  // the compile's cost on the first call (bench_first_call: tiered)
    net->hybridize(true, compiled);
    (*net)(x);
    const JitTimings first_call = *net->first_call_cost();
    if (!first_call.compiled) std::printf("(%s did not compile: %s)\n", m.name.c_str(), first_call.why_not_compiled.c_str());
    const double hybrid = median_ms([&] { (*net)(x); }, runs);
    HybridizeOptions interpreted;
    interpreted.compile = false;
    net->hybridize(true, interpreted);
    const double no_cxx = median_ms([&] { (*net)(x); }, runs);
    const Graph graph = net->trace({m.input}, m.name);
    BenchOptions options;
    options.runs = std::max(runs, 3);
    options.warmup = 1;
    options.compile.optimize = false;
    const BenchResult plain = bench_generated(graph, options);
    options.compile.optimize = true;
    const BenchResult g = bench_generated(graph, options);
    const double gen = g.median_us / 1000.0;
    const std::string kernels = std::to_string(plain.kernels) + "->" + std::to_string(g.kernels);
    std::printf("%-20s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2fx %10.2fx %10.2fx %9.1f %8.2fx %11s %10.1f %10.1f %10.1f "
                "%10.1f\n",
                m.name.c_str(), eager, hybrid, no_cxx, plain.median_us / 1000.0, gen, hybrid / gen, eager / hybrid,
                eager / no_cxx, first_call.compile_ms / 1000.0, eager / gen, kernels.c_str(), g.arena_bytes / 1024.0,
                g.lower_bound_bytes / 1024.0, g.naive_bytes / 1024.0, plain.arena_bytes / 1024.0);
    std::fflush(stdout);
  }
  return 0;
}
