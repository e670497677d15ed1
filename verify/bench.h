// Latency of generated code: compiled with optimisation for this machine,
// run on seeded inputs (on the calling thread, or a pool of `threads`),
// timed per run after warm-up.
//
//   BenchResult r = bench_generated(load_model("mlp.json"), {});
//   r.median_us;  r.arena_bytes;
//   options.profile = true: r.kernel_times[i].median_us per kernel as well.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "pipeline.h"

namespace hybgen {

struct BenchOptions {
  std::string cxx;  // empty: $CXX, else c++
  // After the target's -march. Empty: -O3 -march=native for this machine's
  // own target (and the portable one), -O3 -mtune=native for another
  // (x86-64-v3 on an AVX-512 machine), so that the target's -march applies
  // and the code is timed as a machine with only those instructions runs it
  // (-march=native would lend AVX2 code AVX-512's 32 registers).
  std::string cxx_flags;
  int warmup = 5;
  int runs = 50;
  // How the graph compiles; the target defaults to this machine's (host_target()).
  CompileOptions compile = CompileOptions::for_target(host_target());
  int threads = 1;       // > 1: run on a spinning pool of that many threads (hg_spin_pool.h)
  bool profile = false;  // time each kernel too (a clock read after each: the whole-run times include them)
  bool keep_build = false;  // keep the build folder (BenchResult::build_dir)
  bool external_weights = false;  // CppEmitOptions::external_weights; the driver loads the file
  // A model with a run-time batch (Graph::batch): the items each run takes; 0: the largest.
  int64_t batch = 0;
};

// One kernel's share of a run, with what a roofline needs.
struct KernelTime {
  int index = 0;
  std::string kind;   // kernel_kind_name()
  std::string nodes;  // "conv0_fwd (Convolution) + relu0 (Activation)"
  double flops = 0, bytes = 0;  // kernel_flops(), kernel_bytes()
  double median_us = 0;
};

struct BenchResult {
  double min_us = 0, median_us = 0, max_us = 0;
  // CUDA: the run captured as a CUDA Graph and replayed (min_us... time run()).
  double replay_min_us = 0, replay_median_us = 0, replay_max_us = 0;
  bool device = false;  // timed on a GPU by CUDA events
  std::size_t arena_bytes = 0, lower_bound_bytes = 0, naive_bytes = 0;
  std::size_t weight_bytes = 0;        // the generated code's (packed, transformed)
  std::size_t model_weight_bytes = 0;  // the model's own
  std::size_t nodes = 0, kernels = 0;  // after the passes
  double compile_seconds = 0;
  std::string cxx_flags;               // what the generated code was compiled with, the target's -march first
  std::vector<KernelTime> kernel_times;  // with BenchOptions::profile, in run order (views left out)
  std::string build_dir;                 // kept only with keep_build
};

BenchResult bench_generated(const Graph& graph, const BenchOptions& options);

}  // namespace hybgen
