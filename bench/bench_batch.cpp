// A run-time batch against fixed shapes: for each zoo model and batch b,
// the median latency of code generated for exactly b items and of code
// generated once for 1..32 items (--shape data=1..32,...) run at b, both for
// this machine's target, single-threaded, in this one run; and the arena
// each needs at b.
//
//   bench_batch [--runs N] [--models resnet18_v1,...] [--batches 1,8,32]
//
// The goal (docs/generated-code.md#a-run-time-batch): the variable build
// within 1.1x of the fixed one at every b.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "runtime-lite/hybgen.h"
#include "verify/bench.h"
#include "zoo.h"

namespace {

using namespace hybgen;

struct Model {
  const char* name;
  std::shared_ptr<HybridBlock> (*build)();
  Shape item;
};

std::vector<int64_t> parse_list(const std::string& text) {
  std::vector<int64_t> values;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(std::stoll(item));
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 10;
  std::string only;
  std::vector<int64_t> batches = {1, 8, 32};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--runs") runs = std::atoi(argv[i + 1]);
    if (flag == "--models") only = "," + std::string(argv[i + 1]) + ",";
    if (flag == "--batches") batches = parse_list(argv[i + 1]);
  }
  const int64_t bound = 32;
  const Model models[] = {{"resnet18_v1", [] { return zoo::resnet18_v1(); }, {1, 3, 224, 224}},
                          {"mobilenet_v2", [] { return zoo::mobilenet_v2(); }, {1, 3, 224, 224}},
                          {"transformer_encoder", [] { return zoo::transformer_encoder(); }, {1, 128, 256}}};
  std::printf("target %s, single thread, %d runs each; variable: one build for 1..%lld items\n\n",
              host_target().name.c_str(), runs, static_cast<long long>(bound));
  std::printf("| model | batch | fixed ms | variable ms | variable / fixed | fixed arena MiB | variable arena MiB |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Model& m : models) {
    if (!only.empty() && only.find("," + std::string(m.name) + ",") == std::string::npos) continue;
    auto net = m.build();
    net->initialize(init::Xavier(), 42);
    (*net)(Tensor::random_normal(m.item, 0.0f, 1.0f, 7));  // resolves deferred shapes
    Graph variable = net->trace({m.item}, m.name, true);
    variable.batch = BatchRange{1, bound, {variable.inputs[0]}};
    for (int64_t b : batches) {
      Shape shape = m.item;
      shape[0] = b;
      BenchOptions options;
      options.runs = runs;
      options.warmup = 2;
      options.external_weights = true;
      const BenchResult fixed = bench_generated(net->trace({shape}, m.name, true), options);
      options.batch = b;
      const BenchResult at_b = bench_generated(variable, options);
      const CompiledGraph compiled = compile_graph(variable, options.compile);
      std::printf("| %s | %lld | %.2f | %.2f | %.3f | %.1f | %.1f |\n", m.name, static_cast<long long>(b),
                  fixed.median_us / 1000, at_b.median_us / 1000, at_b.median_us / fixed.median_us,
                  static_cast<double>(fixed.arena_bytes) / (1 << 20),
                  static_cast<double>(compiled.plan.arena_bytes_at(b)) / (1 << 20));
      std::fflush(stdout);
    }
  }
  return 0;
}
