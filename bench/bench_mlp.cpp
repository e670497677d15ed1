// Per-forward latency of the seed MLP three ways — eager runtime, hybridized
// (cached graph), generated C++ — at batch 1 and 64, single-threaded.
//
// Each round times every way back to back (alternating, so drift hits all
// equally); the table shows the median over rounds and ratios against the
// generated code, all measured in this one run.
//   bench_mlp [--rounds N] [--min-ms M]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "timing.h"
#include "mlp_net.h"
#include "runtime-lite/hybgen.h"
#include "seed_mlp_b1.h"
#include "seed_mlp_b64.h"

namespace {

using Forward = std::function<void()>;


std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

struct Way {
  std::string name;
  Forward forward;
  std::vector<double> samples;
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = 9;
  double min_ms = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (flag == "--min-ms") min_ms = std::atof(argv[i + 1]);
  }
  openblas_set_num_threads(1);
  std::printf("machine: %s; OpenBLAS %s, 1 thread; compiler %s\n", cpu_model().c_str(), openblas_get_config(),
              __VERSION__);
  std::printf("%d rounds, each sample >= %.0f ms; median per forward over rounds\n\n", rounds, min_ms);
  std::printf("%-6s %-12s %12s %12s %12s %14s\n", "batch", "way", "median us", "min us", "max us", "vs generated");

  using namespace hybgen;
  for (int batch : {1, 64}) {
    const Tensor x = seed_mlp_input(batch);
    auto eager_net = make_seed_mlp();
    auto hybrid_net = make_seed_mlp();
    hybrid_net->hybridize();
    (*hybrid_net)(x);  // trace once
    alignas(64) static unsigned char arena1[seed_mlp_b1::kArenaBytes + 1];
    alignas(64) static unsigned char arena64[seed_mlp_b64::kArenaBytes + 1];
    std::vector<float> out(static_cast<std::size_t>(batch) * 2);
    Forward generated = batch == 1 ? Forward([&] { seed_mlp_b1_run(x.data(), out.data(), arena1); })
                                   : Forward([&] { seed_mlp_b64_run(x.data(), out.data(), arena64); });
    std::vector<Way> ways = {{"eager", [&] { (*eager_net)(x); }, {}},
                             {"hybridized", [&] { (*hybrid_net)(x); }, {}},
                             {"generated", generated, {}}};
    std::vector<int> calls;
    for (auto& w : ways) calls.push_back(bench::calibrate(w.forward, min_ms));
    for (int r = 0; r < rounds; ++r)
      for (std::size_t i = 0; i < ways.size(); ++i) ways[i].samples.push_back(bench::sample_us(ways[i].forward, calls[i]));
    const double generated_median = bench::median(ways.back().samples);
    for (const auto& w : ways) {
      const auto [lo, hi] = std::minmax_element(w.samples.begin(), w.samples.end());
      const double m = bench::median(w.samples);
      std::printf("%-6d %-12s %12.2f %12.2f %12.2f %13.2fx\n", batch, w.name.c_str(), m, *lo, *hi,
                  m / generated_median);
    }
  }
  return 0;
}
