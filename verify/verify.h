// Checks generated code against the eager reference: generate C++ for a
// graph, compile it with the system compiler next to a small driver, run it
// on seeded random (or given) inputs, and compare every output with the
// graph interpreter — and with expected arrays computed elsewhere, if given.
//
//   VerifyOptions opt;
//   opt.inputs["data"] = read_npy("x.npy");
//   VerifyReport r = verify_model(load_model("mlp.json"), opt);
//   r.ok;   r.checks[0].max_rel_error;
//
// Relative error is the largest absolute difference divided by the largest
// magnitude of the reference output (so outputs near zero do not blow it up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/npy.h"
#include "ir/graph.h"
#include "pipeline.h"
#include "targets/target.h"
#include "verify/bisect.h"

namespace hybgen {

// When verify also compares the generated code kernel by kernel
// (verify/bisect.h): never, after outputs that fail (a second build, with
// the kernel hooks), or always (the one build has them).
enum class BisectMode { kOff, kOnFailure, kAlways };

struct VerifyOptions {
  std::map<std::string, NpyArray> inputs;    // by input name; others are drawn from N(0, 1)
  std::map<std::string, NpyArray> expected;  // by output name; compared besides the reference
  uint64_t seed = 0;
  double tolerance = 1e-5;
  std::string cxx;  // empty: $CXX, else c++
  std::string cxx_flags = "-std=c++11 -O2 -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti";
  bool keep_build = false;
  // How the graph compiles: optimizer on or off, the target (its compiler
  // flags are added), the arena's scratch.
  CompileOptions compile;
  int threads = 1;  // > 1: run on a spinning pool of that many threads (hg_spin_pool.h)
  bool external_weights = false;  // CppEmitOptions::external_weights; the driver loads the file
  // Microcontroller targets: also measure the flash the model's code takes
  // (one more compile, of the model alone).
  bool measure_code = false;
  // kAlways on a target whose program cannot dump its kernels (CUDA, a
  // microcontroller) is an error; kOnFailure there notes why it did not run.
  BisectMode bisect = BisectMode::kOff;
};

struct OutputCheck {
  std::string name;
  Shape shape;
  std::string against;  // "reference" (the interpreter) or "expected" (VerifyOptions::expected)
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool ok = false;
  int64_t batch = 0;  // a run-time batch: the items this run took; 0 for a fixed batch
};

struct VerifyReport {
  std::vector<OutputCheck> checks;
  bool ok = false;
  std::string build_dir;  // kept only with keep_build
  double compile_seconds = 0;
  std::string compiler;  // what compiled the code
  std::string runner;    // the emulator it ran under (verify/toolchain.h); empty: this machine
  // Microcontroller targets: what one inference took on the emulated board.
  // The peak stack is measured by painting the stack beforehand, the
  // instructions by the board's SysTick under qemu's -icount.
  bool board_measured = false;
  unsigned long stack_bytes = 0;
  unsigned long instructions = 0;
  std::size_t code_bytes = 0;    // with measure_code: the model's code in flash
  std::size_t weight_bytes = 0;  // the weights in flash
  std::size_t arena_bytes = 0;   // the arena in RAM
  // VerifyOptions::bisect: the first kernel whose stored value diverges from
  // the reference. A divergence makes `ok` false even where the outputs pass.
  BisectReport bisect;
  // Set when the reference is not the model as given, and why.
  std::string reference_note;
};

// Throws Error for inputs or expected arrays that name nothing in the graph
// or have the wrong shape, for compiler failures (with the compiler's
// output), and for a driver that fails to run.
VerifyReport verify_model(const Graph& graph, const VerifyOptions& options);

// Microcontroller targets: why the program verify_model builds for
// `compiled`, whose emitted weights take `weight_bytes`, does not fit the
// emulated board (board_fit_problem with the program's stack and its input
// and output buffers); empty where it fits, and for other targets. Compiles
// nothing: `hybgen` (generate) asks before measuring on the board.
std::string verify_board_fit_problem(const CompiledGraph& compiled, std::size_t weight_bytes);

// max |a - b| and that divided by max |reference|.
std::pair<double, double> compare_outputs(const std::vector<float>& actual, const std::vector<float>& reference);

}  // namespace hybgen
