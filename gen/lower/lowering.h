// The lowering every backend prints: what a compiled graph becomes as code,
// decided once. It names every value (unique C identifiers), lays the weights
// out in one blob (re-laid out for the kernels where the target packs them),
// gives each op kernel its operands (packed, placed, scratch), and makes the
// manifest. The C++ and CUDA printers (gen/emit/) turn it into text and
// derive nothing of this themselves.
//
//   LoweredModel model = lower(compile_graph(g), {"mlp"});
//   model.weights[0].offset;              // where the first weight lies in model.blob
//   EmitContext ctx = model.op_context(model.kernels[0]);
//   model.pointer("dense0_fwd");          // its variable; marks it read by the code
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "ops/op.h"
#include "passes/passes.h"
#include "pipeline.h"

namespace hybgen {

struct LowerOptions {
  std::string name = "model";  // file stem and C symbol prefix
  std::string ns;              // C++ namespace; empty: same as name
  std::string source;          // model file name, for comments
  bool external_weights = false;
};

// One entry of the weights blob: a weight as stored, or re-laid out
// (OpKernel::pack_constant) for one node's kernel.
struct WeightEntry {
  std::string key;       // the value's name, or "VALUE packed for NODE"
  std::string variable;  // the pointer variable generated code names it by
  std::string what;      // for comments: "float32(64, 32)"
  std::size_t offset = 0;
  std::size_t bytes = 0;
  DType dtype = DType::kFloat32;  // of its elements
};

// A graph input or output: a parameter of run().
struct ModelParam {
  std::string value;
  std::string variable;
  TensorType type;
  bool is_output = false;
};

// The operands of a kOp or kEpilogue kernel's anchor node.
struct OpOperands {
  std::vector<std::string> in;  // per input: a value, or a packed blob entry's key
  std::vector<bool> in_packed;
  std::vector<bool> in_placed;
  std::vector<std::string> out;  // per output: the value its pointer writes
  std::string scratch;           // the scratch buffer's value ("" for none)
  int64_t scratch_bytes = 0;
};

struct LoweredKernel {
  int step = 0;
  const Kernel* kernel = nullptr;
  std::string heading;  // "kernel 3 (epilogue): conv1 (Convolution) + relu1 (Activation) -> (1, 8, 4, 4)"
  OpOperands op;        // kOp and kEpilogue kernels
  // A kOp kernel with OpDef::input_placement whose every input its producer
  // already wrote in place (a Concat): it needs no code at all.
  bool already_in_place = false;
};

class LoweredModel {
 public:
  const CompiledGraph& compiled;
  const Graph& graph;
  const Target& target;
  std::string name, ns, source;
  bool external_weights = false;
  std::vector<ModelParam> params;  // inputs, then outputs that are not also inputs
  std::vector<uint8_t> blob;       // every weight, 64-byte aligned, in the order kernels read them
  std::vector<WeightEntry> weights;
  std::vector<LoweredKernel> kernels;
  // Graph outputs that are weights, copied from the blob: (output, its blob entry's key).
  std::vector<std::pair<std::string, std::string>> constant_outputs;

  LoweredModel(const CompiledGraph& compiled, const LowerOptions& options);

  // The C identifier of a value (a parameter, an arena buffer, a view).
  const std::string& variable(const std::string& value);
  // The pointer expression code uses for a value or a blob entry's key, and
  // a note that the code reads it, so that its declaration is printed.
  // Within an item loop, a value holding batch items is offset to item
  // `hg_item` (its first element there).
  std::string pointer(const std::string& value);
  // A run-time batch (Graph::batch): the values holding batch items
  // (batch_values); empty for a fixed batch.
  const std::set<std::string>& batched() const { return batched_; }
  // Whether kernel `k` reads or writes batch items, so runs once per item.
  bool runs_per_item(const LoweredKernel& k) const;
  // Between these, pointer() gives item hg_item's pointers (emit/kernel_walk.cpp):
  // a variable hg_item_NAME for each value holding items, whose declarations
  // ("auto* const hg_item_x = x + hg_item * 512;") end_item_loop() returns
  // by variable.
  void begin_item_loop();
  std::map<std::string, std::string> end_item_loop();
  // What an op's printer gets for the kernel's anchor node; marks its operands
  // read (not inputs already in place).
  EmitContext op_context(const LoweredKernel& kernel);

  // Declarations the printed code needs: blob entries and arena buffers it read.
  std::vector<const WeightEntry*> read_weights() const;
  struct ArenaPointer {
    std::string variable, what;
    std::size_t offset = 0;
    // The byte offset as code: `offset`, or with a run-time batch for a
    // buffer of batch items "FIXED + OFFSET * batch" (MemoryPlan::fixed_bytes).
    std::string offset_code;
    DType dtype = DType::kFloat32;  // of its elements (a scratch block: its kernel's output's)
  };
  std::vector<ArenaPointer> read_buffers() const;
  // Graph inputs the code never reads (a graph that ignores one).
  std::vector<std::string> unread_inputs() const;

  uint64_t weights_fnv1a64() const;
  // The manifest (docs/generated-code.md), for these weights' file name.
  nlohmann::ordered_json manifest(const std::string& weights_file) const;

 private:
  std::string weight_variable(const std::string& key) const;
  void add_weight(const std::string& key, const std::string& variable, DType dtype, const uint8_t* bytes,
                  std::size_t size, const std::string& what);

  std::map<std::string, std::string> names_;       // value -> C identifier
  std::set<std::string> taken_;                    // identifiers given out
  std::map<std::string, int> next_suffix_;         // keeps many alike names linear
  std::map<std::string, DType> scratch_dtype_;     // scratch value -> its kernel's output dtype
  std::map<std::string, std::size_t> weight_of_;   // blob key -> index in weights
  std::set<std::string> read_;                     // values and keys the printed code reads
  std::set<std::string> batched_;
  bool in_item_loop_ = false;
  std::map<std::string, std::string> item_pointers_;  // in an item loop: variable -> its declaration
};

LoweredModel lower(const CompiledGraph& compiled, const LowerOptions& options);

// "dense0_fwd" -> "dense0_fwd"; "conv-1/out" -> "conv_1_out"; leading digit gets "v_".
std::string c_identifier(const std::string& name);
// Whether generated code reserves the name (keywords, its own locals).
bool is_reserved_name(const std::string& name);
// "0x" and 16 hex digits.
std::string hex64(uint64_t v);
// "{2, 3}" (a rank-0 shape prints as {1}).
std::string shape_initializer(const Shape& s);

}  // namespace hybgen
