// Latency of zoo models without a C++ compiler: eager (one reference kernel
// per op call), the plain interpreter (the traced graph, one reference kernel
// per node: what hybridize() once ran) and the optimized
// interpreter (compile_graph(optimize, host_target()) run with reference and
// interpreter kernels: what a hybridized block runs when no compiler is
// found). The target: optimized at least 1.5x faster than eager on
// resnet18_v1 and transformer_encoder.
//
//   bench_interpreter [--runs N] [--models resnet18_v1,transformer_encoder|all] [--profile]
//
// Single thread (OpenBLAS pinned to one), medians of runs taken in turn (eager,
// plain, optimized, eager, ...); ratios from this one run.
// --profile prints where the plain and the optimized interpreter spend their
// time, per op (per fused kernel's ops), summed over the timed runs. The
// last column: the optimized interpreter's largest error against eager,
// relative to the largest eager output (verify's measure).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "pipeline.h"
#include "runtime-lite/interpreter.h"
#include "zoo.h"

namespace {

using namespace hybgen;

// Medians of the functions timed in turn, one call each per round, so that
// load from other processes on a shared machine falls on all of them alike.
double relative_error(const Tensor& got, const Tensor& want) {
  const std::vector<float> a = got.to_vector(), b = want.to_vector();
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return worst / std::max(scale, 1e-30);
}

std::vector<double> interleaved_medians_ms(const std::vector<std::function<void()>>& fs, int runs) {
  for (const auto& f : fs) f();  // warm-up
  std::vector<std::vector<double>> t(fs.size());
  for (int i = 0; i < runs; ++i)
    for (std::size_t j = 0; j < fs.size(); ++j) {
      const auto t0 = std::chrono::steady_clock::now();
      fs[j]();
      t[j].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  std::vector<double> medians;
  for (auto& times : t) {
    std::sort(times.begin(), times.end());
    medians.push_back(times[times.size() / 2]);
  }
  return medians;
}

void print_profile(const char* what, const std::map<std::string, double>& profile, int runs) {
  std::vector<std::pair<double, std::string>> rows;
  double total = 0;
  for (const auto& [op, ms] : profile) {
    rows.emplace_back(ms / runs, op);
    total += ms / runs;
  }
  std::sort(rows.rbegin(), rows.rend());
  std::printf("  %s, ms per run (total %.2f):\n", what, total);
  for (const auto& [ms, op] : rows) std::printf("    %8.3f  %s\n", ms, op.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 11;
  bool profile = false;
  std::string only = ",resnet18_v1,transformer_encoder,";
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--profile") profile = true;
    if (i + 1 < argc && flag == "--runs") runs = std::atoi(argv[++i]);
    if (i + 1 < argc && flag == "--models") only = "," + std::string(argv[++i]) + ",";
  }
  openblas_set_num_threads(1);

  std::printf("single thread, median of %d runs; optimized: compile_graph for %s run by the interpreter\n\n", runs,
              host_target().name.c_str());
  std::printf("%-20s %9s %9s %9s %11s %11s %10s\n", "model", "eager ms", "plain ms", "opt ms", "eager/opt", "plain/opt",
              "opt error");
  for (const auto& m : zoo::models()) {
    if (only != ",all," && only.find("," + m.name + ",") == std::string::npos) continue;
    auto net = m.build();
    net->initialize(init::Xavier(), 42);
    const Tensor x = Tensor::random_normal(m.input, 0.0f, 1.0f, 7);
    const Graph graph = net->trace({m.input}, m.name, true);
    Interpreter plain(graph);
    Interpreter optimized(compile_graph(graph, CompileOptions::for_target(host_target())));
    const std::map<std::string, Tensor> named{{graph.inputs.at(0), x}};
    const std::vector<double> ms = interleaved_medians_ms(
        {[&] { (*net)(x); }, [&] { plain.run(named); }, [&] { optimized.run(named); }}, runs);
    const double eager = ms[0], plain_ms = ms[1], opt_ms = ms[2];
    const double error = relative_error(optimized.run(named).at(0), (*net)(x));
    std::printf("%-20s %9.2f %9.2f %9.2f %10.2fx %10.2fx %10.1e\n", m.name.c_str(), eager, plain_ms, opt_ms,
                eager / opt_ms, plain_ms / opt_ms, error);
    if (profile) {
      plain.set_profiling(true);
      optimized.set_profiling(true);
      for (int i = 0; i < runs; ++i) plain.run(named), optimized.run(named);
      print_profile("plain interpreter", plain.profile(), runs);
      print_profile("optimized interpreter", optimized.profile(), runs);
    }
    std::fflush(stdout);
  }
  return 0;
}
