// hybridize()'s tiers with an empty cache, per model: the first call's
// latency (trace, optimize, then the optimized graph on the interpreter while
// the library compiles in the background), the time until calls run the
// library, and the steady state against a block that is not tiered (a
// second instance, which finds the library in the cache), the interpreter
// tier and the generated code run directly.
//
//   bench_first_call [--runs N] [--models seed_mlp,lenet,resnet18_v1,mobilenet_v2,transformer_encoder]
//
// Single-threaded (OpenBLAS pinned to one thread); one process per model is
// not needed: each model gets an empty cache folder of its own. Between the
// first call and the switch the block is called back to back, as a service
// would be, so the compiler shares the machine with those calls.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "io/file_util.h"
#include "mlp_net.h"
#include "runtime-lite/hybgen.h"
#include "verify/bench.h"
#include "zoo.h"

namespace {

using namespace hybgen;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Time per call of one sample: `f` back to back for at least 10 ms.
double sample_ms(const std::function<void()>& f) {
  const auto t0 = Clock::now();
  int calls = 0;
  double elapsed = 0;
  do {
    f();
    ++calls;
    elapsed = ms_since(t0);
  } while (elapsed < 10.0);
  return elapsed / calls;
}

// The median sample of each function, sampled in alternating rounds so that
// a busy moment of the machine falls on all of them alike.
std::vector<double> median_ms(const std::vector<std::function<void()>>& fs, int runs) {
  std::vector<std::vector<double>> t(fs.size());
  for (const auto& f : fs) f();  // warm-up
  for (int i = 0; i < runs; ++i)
    for (std::size_t j = 0; j < fs.size(); ++j) t[j].push_back(sample_ms(fs[j]));
  std::vector<double> out;
  for (auto& samples : t) {
    std::sort(samples.begin(), samples.end());
    out.push_back(samples[samples.size() / 2]);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::string only = ",seed_mlp,lenet,resnet18_v1,mobilenet_v2,transformer_encoder,";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--runs")
      runs = std::atoi(argv[i + 1]);
    else if (flag == "--models")
      only = "," + std::string(argv[i + 1]) + ",";
  }
  openblas_set_num_threads(1);

  std::vector<zoo::ZooModel> models = {{"seed_mlp", [] { return make_seed_mlp(); }, {1, 512}}};
  for (const auto& m : zoo::models()) models.push_back(m);

  std::printf("median of %d samples; generated code -O3 -march=native; an empty cache per model\n\n", runs);
  std::printf(
      "| model | eager | first call | first call - eager | calls on the interpreter | compiled after | "
      "steady | steady, not tiered | interpreter tier | generated | steady / generated |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& m : models) {
    if (only.find("," + m.name + ",") == std::string::npos) continue;
    const Tensor x = Tensor::random_normal(m.input, 0.0f, 1.0f, 7);
    auto net = m.build();
    if (m.name != "seed_mlp") net->initialize(init::Xavier(), 42);  // make_seed_mlp() initialises its own
    const double eager = median_ms({[&] { (*net)(x); }}, runs)[0];

    TempDir cache("bench-first-call-cache");
    HybridizeOptions tiered;
    tiered.compile = true;
    tiered.cache_dir = cache.path();
    net->hybridize(true, tiered);
    const auto t0 = Clock::now();
    (*net)(x);
    const double first = ms_since(t0);
    // Calls on the interpreter tier until one runs the library.
    int interpreted_calls = 0;
    double switched = 0;
    for (;;) {
      (*net)(x);
      const JitTimings* cost = net->first_call_cost();
      if (cost->compiled) {
        switched = ms_since(t0);
        break;
      }
      if (!cost->compiling) break;  // the compile failed
      ++interpreted_calls;
    }
    const JitTimings cost = *net->first_call_cost();
    if (switched == 0) {
      std::printf("(%s did not compile: %s)\n", m.name.c_str(), cost.why_not_compiled.c_str());
      continue;
    }
    // A second instance, not tiered: its first call finds the library in the
    // cache (canonical names), and both run it.
    auto untiered_net = m.build();
    if (m.name != "seed_mlp") untiered_net->initialize(init::Xavier(), 42);
    HybridizeOptions untiered = tiered;
    untiered.tiered = false;
    untiered_net->hybridize(true, untiered);
    (*untiered_net)(x);
    const bool shared = untiered_net->first_call_cost()->cache_hit;
    // The interpreter tier alone: a third instance without compiling.
    auto interpreted_net = m.build();
    if (m.name != "seed_mlp") interpreted_net->initialize(init::Xavier(), 42);
    HybridizeOptions interpreted;
    interpreted.compile = false;
    interpreted_net->hybridize(true, interpreted);
    const std::vector<double> steady =
        median_ms({[&] { (*net)(x); }, [&] { (*untiered_net)(x); }, [&] { (*interpreted_net)(x); }}, runs);

    BenchOptions options;
    options.runs = std::max(runs, 3);
    options.warmup = 1;
    const double generated = bench_generated(net->trace({m.input}, m.name), options).median_us / 1000.0;
    std::printf("| %s | %.3f ms | %.1f ms | %.1f ms | %d | %.2f s | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.2fx |\n",
                m.name.c_str(), eager, first, first - eager, interpreted_calls, switched / 1000.0, steady[0], steady[1],
                steady[2], generated, steady[0] / generated);
    std::printf("  %s%s\n", cost.str().c_str(), shared ? "; a second instance loaded it from the cache" : "");
    std::fflush(stdout);
  }
  return 0;
}
