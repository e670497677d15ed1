// What makes a hybridized block fast: its optimized graph compiled to native
// code in-process. The generated C++ (external-weights form, for this
// machine's best target) is built by the system compiler into a shared
// library in a cache folder, loaded with dlopen, and run with the weights
// packed once in memory; new parameter values repack the weights without
// recompiling. Where no compiler is found or compiling fails, the optimized
// graph runs on the interpreter instead. A tiered block (the default) calls
// NativeGraph::load on a thread of its own (runtime-lite/block.cpp) and runs
// the interpreter until it returns.
//
//   HybridizeOptions options;                    // compile unless HYBGEN_JIT=0
//   CompiledGraph c = compile_graph(traced, {true, nullptr, host_target()});
//   JitTimings timings;
//   std::unique_ptr<NativeGraph> native = NativeGraph::load(c, options, timings);  // Error if it cannot
//   std::vector<Tensor> out = native->run({&x});   // inputs in graph order
//
// The cache: one folder per entry, named by a hash of the generated sources
// (the graph, the target, the hybgen version), the compiler and its flags.
// A block renames its traced values by place first, so instances of one
// network share an entry.
// An entry is built in a private folder and renamed into place, so processes
// racing on one entry each end with a whole one; a damaged entry (sources,
// library or checksum not as written) is rebuilt.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline.h"
#include "runtime-lite/tensor.h"

namespace hybgen {

// Gluon's hybridize(static_alloc, static_shape) in spirit: how a hybridized
// block runs its traced graph.
struct HybridizeOptions {
  // Compile the optimized graph to native code; off (or HYBGEN_JIT=0 in the
  // environment), run it on the interpreter.
  bool compile = compile_by_default();
  // Where compiled graphs are kept; "": $HYBGEN_CACHE_DIR, else
  // $XDG_CACHE_HOME/hybgen, else $HOME/.cache/hybgen.
  std::string cache_dir;
  // The compiler; "": $CXX, else c++.
  std::string cxx;
  // Optimization flags for the compiler (the target's own come first).
  std::string cxx_flags = "-O3 -march=native";
  // Tiered: the first call with new shapes runs the optimized graph on the
  // interpreter at once while a background thread compiles it; a call after
  // the library is loaded runs it. Off, the first call waits for the compile
  // (what benchmarks of the steady state want; the behaviour before tiers).
  bool tiered = true;
  // Above 0: a batch chosen at run time. A call whose first input's first
  // dimension (the batch) is 1..max_batch runs one graph of a single item,
  // compiled once for 1..max_batch items, instead of one per batch size; the
  // inputs whose first dimension is the batch hold the items (the others
  // are fixed). A block that computes across its items (a softmax over the
  // first axis) is compiled per shape as without it (docs/hybridize.md).
  int64_t max_batch = 0;

  static bool compile_by_default();
};

// The folder the cache lives in for `options` (see HybridizeOptions::cache_dir).
std::string jit_cache_dir(const HybridizeOptions& options);

// What a hybridized block's first call with new shapes cost, per tier, and
// how it runs now.
struct JitTimings {
  // The interpreter tier: all of it on the first call.
  double trace_ms = 0, optimize_ms = 0, interpreter_ms = 0;
  double first_call_ms = 0;  // the whole first call: the above, the run and the block's own work
  // The compiled tier: in the background when tiered, else on the first call.
  double generate_ms = 0, compile_ms = 0, load_ms = 0;
  double compiled_after_ms = 0;  // from the first call's start until the library was loaded
  bool compiling = false;        // a background compile is under way; calls run on the interpreter meanwhile
  bool compiled = false;   // runs generated code; false: the optimized graph on the interpreter
  bool cache_hit = false;  // the library came from the cache
  std::string library;     // the loaded library's path
  std::string why_not_compiled;  // when !compiled and !compiling: the reason, in words

  // "trace 0.4 ms, optimize 1.2 ms, interpreter 0.2 ms, first call 2.1 ms; generate 3.0 ms,
  // compile 2100 ms, load 0.3 ms, loaded 2110 ms after the first call's start (compiled)"
  std::string str() const;
};

// The C++ a compiled graph becomes for loading in-process: the model's
// header and source, the entry point a library exports, the packed weights.
struct JitSources {
  std::string header, source, entry;
  std::vector<uint8_t> weights;
  std::string key;  // 32 hex digits: the sources, compiler and flags hashed
};
JitSources jit_sources(const CompiledGraph& compiled, const std::string& cxx, const std::string& flags);

class NativeGraph {
 public:
  // The library for `compiled` (its target must run here): from the cache,
  // else compiled into it. Throws Error saying why it could not (no
  // compiler, a compiler error, an unwritable cache). Once `cancel` is set
  // (from another thread) a running compile is killed, its private build
  // folder removed, and Error thrown; the cache is left as it was.
  static std::unique_ptr<NativeGraph> load(const CompiledGraph& compiled, const HybridizeOptions& options,
                                           JitTimings& timings, const std::atomic<bool>* cancel = nullptr);
  ~NativeGraph();
  NativeGraph(const NativeGraph&) = delete;
  NativeGraph& operator=(const NativeGraph&) = delete;

  // The same graph with new weight values: true when its code is this
  // library's (the packed weights are swapped in), false when the values
  // changed the code (constant folding can) and the caller must load anew.
  bool replace_weights(const CompiledGraph& compiled);

  // The graph's inputs in its order, with its shapes; outputs in graph order.
  // A graph with a run-time batch takes its batched inputs at any number of
  // items in its range (their first dimension that many times one item's).
  std::vector<Tensor> run(const std::vector<const Tensor*>& inputs);

  const std::string& key() const { return key_; }

 private:
  NativeGraph() = default;
  using RunFunction = int (*)(const float* const* inputs, float* const* outputs, long long batch, const void* weights,
                              void* arena);

  void* handle_ = nullptr;
  RunFunction run_ = nullptr;
  std::string key_, cxx_, flags_;
  std::vector<std::string> inputs_;
  std::vector<TensorType> input_types_;
  // Per graph output: the run() output argument that writes it, or -1 - i for
  // graph input i (an output that is an input is copied from it).
  std::vector<int> output_source_;
  std::vector<TensorType> output_types_;
  std::vector<TensorType> argument_types_;  // run()'s output arguments
  BatchRange batch_;                        // a run-time batch: Graph::batch
  std::vector<bool> input_items_, argument_items_;  // with one: which inputs and output arguments hold items
  std::shared_ptr<uint8_t> weights_, arena_;  // aligned as the code requires
  std::size_t weight_bytes_ = 0;
};

}  // namespace hybgen
