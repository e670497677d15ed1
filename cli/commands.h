// The hybgen CLI's commands; main.cpp wires them to CLI11. Each returns the
// process exit code and throws Error for bad input.
//
//   VerifyFlags f;  f.model.model = "mlp.json";  f.tolerance = 1e-4;
//   int exit_code = run_verify(f);  // prints one line per output, then "verify: PASS"
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/model_loader.h"
#include "passes/memory_plan.h"
#include "pipeline.h"
#include "targets/target.h"

namespace hybgen {

// Flags every command that reads a model shares.
struct ModelFlags {
  std::string model;
  std::string weights;
  std::vector<std::string> shapes;  // NAME=D1,D2,...
  std::optional<uint64_t> random_weights_seed;
  ModelSource source(bool weights_optional = false) const;
};

// --dump-after PASS (repeatable, or all) and --dump-dir DIR: see cli/pass_dump.h.
struct PassDumpFlags {
  std::vector<std::string> passes;
  std::string dir = ".";
};

// Flags that choose how a model compiles (--no-optimize, --target,
// --small-arena), shared by every command that compiles one; options() is the
// one place the CLI turns them into CompileOptions.
struct CompileFlags {
  bool no_optimize = false;
  std::string target;  // empty: the command's default (generic; bench: this machine's)
  bool small_arena = false;
  std::string io_precision = "fp32";  // or "quantized"
  std::string precision = "fp32";     // or "tf32", "fp16", "bf16"
  double max_weight_growth = 0;       // 0: no bound
  CompileOptions options(const Target& default_target = hybgen::default_target()) const;
};

struct GenerateFlags {
  ModelFlags model;
  CompileFlags compile;
  // Microcontroller targets: skip verifying on the emulated board, which
  // measures what the manifest's "memory" records.
  bool no_board_measure = false;
  PassDumpFlags dump;
  std::string out_dir;
  std::string name;
  std::string ns;
  bool external_weights = false;  // NAME.weights.bin instead of NAME_weights.cpp
};
int run_generate(const GenerateFlags& flags);

struct VerifyFlags {
  ModelFlags model;
  CompileFlags compile;
  std::vector<std::string> inputs;    // NAME=x.npy
  std::vector<std::string> expected;  // NAME=y.npy
  uint64_t seed = 0;
  double tolerance = 1e-5;
  bool tolerance_given = false;  // else, at a precision other than fp32, default_tolerance(precision)
  bool keep = false;
  int threads = 1;  // > 1: run the generated code on a pool of that many threads
  bool external_weights = false;
  bool bisect = false;     // compare kernel by kernel even when the outputs pass
  bool no_bisect = false;  // not even when an output fails
  std::string cxx_flags;   // added to verify's compiler flags
};
int run_verify(const VerifyFlags& flags);

// `hybgen run`: the generated code on whole arrays (verify/run_model.h),
// each output written as NAME's .npy, all or none.
struct RunFlags {
  ModelFlags model;
  CompileFlags compile;
  std::vector<std::string> inputs;   // NAME=x.npy
  std::vector<std::string> outputs;  // NAME=y.npy
  int threads = 1;
};
int run_run(const RunFlags& flags);

struct InspectFlags {
  ModelFlags model;
  CompileFlags compile;  // the arena holds the scratch of the target's kernels
  bool json = false;
  std::string report;  // --report: HTML page (emit/html_report.h)
  std::string dot;     // --dot: Graphviz text (emit/dot.h)
  PassDumpFlags dump;
  // A quantized model's SQNR per int8 layer against the float model it came
  // from, on these .npy samples (both or neither; cli/calibration_data.h).
  std::string float_model;
  std::vector<std::string> calibration;
};
int run_inspect(const InspectFlags& flags);

int run_ops(bool json);

struct BenchFlags {
  ModelFlags model;
  CompileFlags compile;  // target empty: this machine's
  int runs = 50;
  int warmup = 5;
  int threads = 1;
  bool profile = false;
  bool keep = false;
  std::string cxx_flags;
  bool external_weights = false;
  int64_t batch = 0;  // --batch: with a run-time batch, the items each run takes (0: the largest)
};
int run_bench(const BenchFlags& flags);

// "weights N bytes" for the generated code's weight data, and the model's
// own bytes where they differ (alignment, padded panels, Winograd filters).
std::string weights_summary(std::size_t generated_bytes, std::size_t model_bytes);

// Where --small-arena would plan a much smaller arena than this plan (made
// without it): a line saying so, else "".
std::string small_arena_note(const MemoryPlan& plan, bool small_arena);

struct ImportFlags {
  ModelFlags model;
  std::string out_prefix;
};
int run_import(const ImportFlags& flags);

// `hybgen quantize`: calibrate on .npy batches, write the int8 model
// (passes/quantize_graph.h) as PREFIX.json + PREFIX.safetensors.
struct QuantizeFlags {
  ModelFlags model;
  std::vector<std::string> calibration;  // .npy files, first dimension the samples
  std::string input;                     // the input they feed; empty: the only one
  std::string method = "minmax";         // minmax, percentile, entropy
  double percentile = 99.99;
  std::vector<std::string> keep_float;
  // Keep the worst int8 node below this SQNR (dB) float and measure again,
  // at most max_sqnr_rounds times.
  std::optional<double> min_sqnr;
  int max_sqnr_rounds = 16;
  std::string report;  // the SQNR table as text, written with the model
  std::string out_prefix;
};
int run_quantize(const QuantizeFlags& flags);

// `hybgen board`: a microcontroller target's startup.c and link.ld
// (emit/board_files.h), written into out_dir all or none.
struct BoardFlags {
  std::string target;
  std::string out_dir;
  std::size_t stack_bytes = 16 * 1024;
};
int run_board(const BoardFlags& flags);

}  // namespace hybgen
