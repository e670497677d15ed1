// The pass pipeline from a loaded graph to what the emitters print, read top
// to bottom like a recipe.
//
//   CompiledGraph c = compile_graph(load_model("mlp.json"));
//   c.kernels.size();     // 3 for the seed MLP: each dense with its relu, then the last dense
//   c.plan.arena_bytes;
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/op.h"
#include "passes/kernels.h"
#include "passes/memory_plan.h"

namespace hybgen {

enum class IoPrecision { kFloat32, kQuantized, kHalf };

// "fp32", "quantized", "half"; and back (Error naming the text and the choices).
std::string io_precision_name(IoPrecision precision);
IoPrecision parse_io_precision(const std::string& text);
// "fp32", "tf32", "fp16", "bf16"; and back.
std::string precision_name(Precision precision);
Precision parse_precision(const std::string& text);
// The relative error `hybgen verify` allows by default at this precision
// (docs/cuda.md#precision).
double default_tolerance(Precision precision);

struct CompiledGraph {
  Graph graph;                  // validated, shapes inferred, simplified, scheduled
  std::vector<Kernel> kernels;  // what the emitters print, in execution order
  MemoryPlan plan;              // over the kernel order, with the scratch its kernels take on `target`
  Target target = default_target();  // CompileOptions::target
};

// Called after each pass with its name and the state so far (kernels and
// plan stay empty until the passes that make them): --dump-after, reports.
using PassObserver = std::function<void(const std::string& pass, const CompiledGraph& state)>;

struct CompileOptions {
  // Off: no simplification, no fusion and no shared buffers: one kernel per
  // node in the graph's own order, as the reference interpreter runs it.
  bool optimize = true;
  PassObserver observer;
  // What the code is generated for (--target; targets/target.h): the
  // kernels' scratch, and so the arena, differ between targets.
  Target target = default_target();
  // Shrink scratch that would set the arena (im2col tiles) into the room the
  // activations leave: a smaller arena, slower convolutions (--small-arena).
  bool small_arena = false;
  // The inputs and outputs of run(): float32, or a quantized model's
  // integers at its edges (--io-precision quantized; the pass quantized_io),
  // or under --precision fp16/bf16 the halves the model stores: inputs in
  // the half type, outputs in the type their node makes (--io-precision
  // half; the pass half_storage).
  IoPrecision io_precision = IoPrecision::kFloat32;

  // The options for `target`, with the optimizer on or off: what every
  // caller builds its options from (CompileOptions{...} by position would
  // silently change meaning when a field is added).
  static CompileOptions for_target(const Target& target, bool optimize = true);
};

CompiledGraph compile_graph(Graph graph, const CompileOptions& options = {});

// Names of the passes compile_graph runs with these options, in order.
std::vector<std::string> pass_names(const CompileOptions& options = {});

}  // namespace hybgen
