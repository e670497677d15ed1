// Kernel-by-kernel comparison for `hybgen verify --bisect`: the generated
// code, emitted with CppEmitOptions::kernel_hooks, writes every value each
// kernel stores to DIR/kernels.bin; the reference interpreter runs the same
// optimized graph with every one of those values as an output; the first
// kernel, in schedule order, whose value differs by more than the tolerance
// is the one reported (the kernels after it read its output, so their
// errors say nothing of their own).
//
//   BisectReport b = bisect_kernels(compiled, inputs, dir + "/kernels.bin", 1e-5);
//   if (b.first) std::cout << b.first->kernel << " " << b.first->nodes[0];
//   std::cout << bisect_text(b);
//
// The dump holds, per hook call: int64 kernel index, int64 output index,
// int64 float count, then the floats (this machine's byte order). Indices
// only: the names come from the graph here, never from the program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "pipeline.h"
#include "runtime-lite/tensor.h"

namespace hybgen {

struct KernelDivergence {
  int kernel = -1;                 // index in CompiledGraph::kernels (the generated code's "kernel K")
  std::string kind;                // kernel_kind_name
  std::vector<std::string> nodes;  // the nodes fused into it, in evaluation order
  std::vector<std::string> ops;    // their ops
  std::string value;               // the value that diverges (one the kernel stores)
  Shape shape;
  double max_abs_error = 0;
  double max_rel_error = 0;        // to the largest reference magnitude of the value
  int64_t worst_index = 0;         // flat (row-major) index of the largest difference
  Shape worst_position;            // the same as one index per axis
  float actual = 0;                // the generated code's value there
  float expected = 0;              // the reference's
};

struct BisectReport {
  bool ran = false;
  std::string skipped;          // when not run: why (a target whose program cannot dump its kernels, a failed build)
  int kernels = 0;              // kernels in the schedule
  int values_checked = 0;       // values compared up to and including the first divergence
  double tolerance = 0;
  std::optional<KernelDivergence> first;  // nullopt: no kernel diverges
  std::string build_dir;  // with VerifyOptions::keep_build: the kept build that wrote kernels.bin
};

// The largest |actual - reference|, where it is (the first such index; a NaN
// difference counts as infinite) and that divided by max |reference|.
struct ValueComparison {
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t worst_index = 0;
};
ValueComparison compare_values(const float* actual, const float* reference, int64_t count);

// Row-major flat index -> one index per axis of `shape`.
Shape unflatten_index(int64_t index, const Shape& shape);

// The reference values of every kernel output of `compiled` (its graph, run
// by the reference kernels node by node), by value name.
std::map<std::string, std::vector<float>> reference_kernel_values(const CompiledGraph& compiled,
                                                                  const std::map<std::string, Tensor>& inputs);

// Reads the dump the hooked program wrote and compares it, kernel by kernel,
// with `reference` (reference_kernel_values). Throws Error when the dump is
// missing, cut short or does not follow the kernels of `compiled`.
BisectReport bisect_dump(const CompiledGraph& compiled, const std::map<std::string, std::vector<float>>& reference,
                         const std::string& dump_path, double tolerance);

// Both of the above.
BisectReport bisect_kernels(const CompiledGraph& compiled, const std::map<std::string, Tensor>& inputs,
                            const std::string& dump_path, double tolerance);

// Why the program for this compiled graph cannot dump its kernels (CUDA and
// microcontroller targets), or "" when it can.
std::string bisect_unsupported(const CompiledGraph& compiled);

// What the verify driver template (verify_main.cpp.in) takes to define the
// hook and write DIR/kernels.bin: KERNEL_HOOK, KERNEL_HOOK_OPEN and
// KERNEL_HOOK_CLOSE; all empty when `hooks` is off.
std::map<std::string, std::string> bisect_driver_values(const std::string& ns, bool hooks);

// The report as the CLI prints it (lines ending in '\n').
std::string bisect_text(const BisectReport& report);

}  // namespace hybgen
