// Runs any graph with the reference kernels: the eager reference that
// generated code is checked against, and the engine of hybridized blocks.
//
//   Interpreter interp(load_model("mlp.json"));
//   std::vector<Tensor> out = interp.run({{"data", x}});   // graph.outputs order
//
// The constructor checks and types the graph once (no optimizing pass) and
// resolves every buffer; run()
// keeps intermediates in one arena sized by the memory plan.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ops/op.h"
#include "passes/kernels.h"
#include "passes/memory_plan.h"
#include "runtime-lite/tensor.h"

namespace hybgen {

class Interpreter {
 public:
  // Constants come from `bound_constants` (shared storage: later changes to
  // those tensors are seen) or else from the graph's weight data.
  explicit Interpreter(const Graph& graph, std::map<std::string, Tensor> bound_constants = {});
  Interpreter(const Interpreter&) = delete;  // steps point into the compiled graph
  Interpreter& operator=(const Interpreter&) = delete;

  const Graph& graph() const { return graph_; }
  const MemoryPlan& plan() const { return plan_; }

  // Every graph input by name, with the graph's shape; Error naming the input otherwise.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);

 private:
  // Where a node reads or writes a value.
  struct Slot {
    enum Kind { kInput, kConstant, kArena, kOutput } kind;
    int index = 0;           // input or output position
    std::size_t offset = 0;  // arena float offset
    const Tensor* constant = nullptr;
  };
  struct Step {
    const OpDef* def;
    const Node* node;
    std::vector<Slot> in, out;
    std::vector<TensorType> in_types, out_types;
  };
  Slot slot_for(const std::string& value) const;

  Graph graph_;      // validated, typed, scheduled; nothing rewritten but Dropout
  MemoryPlan plan_;  // one buffer per value, no sharing
  std::map<std::string, Tensor> constants_;
  std::vector<Step> steps_;
  std::vector<float> arena_;
};

}  // namespace hybgen
