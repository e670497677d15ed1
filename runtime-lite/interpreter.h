// Runs any graph with the reference kernels: the eager reference that
// generated code is checked against, and the engine of hybridized blocks
// when no compiler is found.
//
//   Interpreter interp(load_model("mlp.json"));
//   std::vector<Tensor> out = interp.run({{"data", x}});   // graph.outputs order
//
//   Interpreter fast(compile_graph(graph_with_weights, CompileOptions::for_target(host_target())));
//
// From a Graph, the constructor checks and types the graph once (no
// optimizing pass) and runs one reference kernel per node, every value in its
// own bytes of one arena. From a CompiledGraph (compile_graph's result with
// the weights in the graph, folded ones included) it runs the optimized
// kernels over that graph's memory plan: a fused epilogue is applied in place
// on its producer's output, an elementwise chain keeps its values in the
// output's bytes or a few temp buffers, views are pointers, a Concat whose
// producers wrote in place is nothing, and some ops run the interpreter's
// own kernels (interpreter_kernels.h: Winograd with filters transformed once,
// 1x1 convolutions without im2col, im2col into preallocated scratch, float
// softmax and GELU). Nothing is allocated per run but the output tensors.
//
// Values inside the graph may be of any dtype: each node runs where its op's
// reference computes its dtypes (OpDef::reference_dtypes), and the
// constructor names every node where it does not. Inputs and outputs are
// Tensors, which hold float32.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ops/op.h"
#include "passes/kernels.h"
#include "passes/memory_plan.h"
#include "pipeline.h"
#include "runtime-lite/tensor.h"

namespace hybgen {

class Interpreter {
 public:
  // Constants come from `bound_constants` (shared storage: later changes to
  // those tensors are seen) or else from the graph's weight data.
  explicit Interpreter(const Graph& graph, std::map<std::string, Tensor> bound_constants = {});
  // The optimized graph as compile_graph made it for a C++ target (the
  // interpreter reads its graph, kernels and plan, never code), copied with
  // its weights: every constant needs its data.
  explicit Interpreter(const CompiledGraph& optimized);
  Interpreter(const Interpreter&) = delete;  // steps point into the graph and the buffers
  Interpreter& operator=(const Interpreter&) = delete;

  const Graph& graph() const { return graph_; }
  const MemoryPlan& plan() const { return plan_; }

  // Every graph input by name, with the graph's shape; Error naming the input otherwise.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);

  // Per op ("Convolution+Activation" for a fused kernel's ops), the
  // milliseconds run() spent in it since profiling was switched on; for
  // benchmarks. Off by default (no clock reads).
  void set_profiling(bool on);
  std::map<std::string, double> profile() const { return profile_ms_; }

  // Called by run() with each node output, right after its node ran, for
  // calibration (runtime-lite/calibration.h). Only a graph interpreter has
  // every value: an optimized one fuses them away (Error). Unset by default,
  // and then costs one test per node.
  using ValueObserver = std::function<void(const std::string& value, const TensorType& type, const void* data)>;
  void set_value_observer(ValueObserver observer);

 private:
  // Where a step reads or writes a value.
  struct Slot {
    enum Kind { kInput, kConstant, kArena, kOutput, kTemp } kind = kArena;
    int index = 0;                   // input or output position
    std::size_t offset = 0;          // arena or temp byte offset
    const void* constant = nullptr;  // kConstant
  };
  // Pointers of one run: what a step's slots resolve against.
  struct Frame {
    const std::vector<const float*>& inputs;
    std::vector<Tensor>& outputs;
    uint8_t* arena;
    uint8_t* temp;
    void* pointer(const Slot& s) const;
  };
  // Storage of the arena and the temp buffers, aligned for every dtype and
  // for the float kernels' vectors.
  struct alignas(64) Line {
    uint8_t bytes[64];
  };
  static uint8_t* bytes_of(std::vector<Line>& lines) { return reinterpret_cast<uint8_t*>(lines.data()); }

  struct Step {
    const OpDef* def = nullptr;  // a reference call: def->reference on these slots
    const Node* node = nullptr;
    std::vector<Slot> in, out;
    std::vector<TensorType> in_types, out_types;
    std::function<void(const Frame&)> custom;  // else a kernel of its own (fast paths)
    std::string label;                         // profile key
  };
  Slot slot_for(const std::string& value) const;
  void add_optimized_kernel(const Kernel& kernel);
  // Whether two slots of these many bytes may share bytes.
  static bool may_overlap(const Slot& a, std::size_t a_bytes, const Slot& b, std::size_t b_bytes);

  Graph graph_;      // plain: validated, typed, scheduled; nothing rewritten but Dropout. Optimized: compile_graph's
  MemoryPlan plan_;  // plain: one buffer per value, no sharing; optimized: compile_graph's
  std::map<std::string, Tensor> constants_;  // plain: bound tensors or copies of the graph's data
  std::map<std::string, Slot> aliases_;      // optimized: views that are another value's pointer
  std::vector<Step> steps_;
  std::vector<Line> arena_, temp_;
  std::vector<float> scratch_;  // optimized: the fast kernels' (im2col columns), one step at a time
  bool profiling_ = false;
  std::map<std::string, double> profile_ms_;
  bool optimized_ = false;
  ValueObserver observer_;
};

}  // namespace hybgen
