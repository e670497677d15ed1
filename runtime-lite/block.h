// Blocks, as in Gluon: a Block runs imperatively; a HybridBlock writes its
// computation once in hybrid_forward(F, x) and, after hybridize(), is traced
// on its first call into a graph that later calls run instead.
//
//   class Net : public HybridBlock {
//    public:
//     Net() : HybridBlock("net") { fc = register_child(std::make_shared<nn::Dense>(2)); }
//     Tensor hybrid_forward(const Ops& F, const Tensor& x) override { return F.relu((*fc)(x)); }
//     std::shared_ptr<nn::Dense> fc;
//   };
//   auto net = std::make_shared<Net>();
//   net->initialize(init::Xavier(), 42);
//   net->hybridize();
//   Tensor y = (*net)(x);          // traced once, run on the interpreter while it compiles
//   net->compiled(true);           // waits for the compile; later calls run native code
//   net->export_model("net");      // net.json + net.safetensors
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime-lite/interpreter.h"
#include "runtime-lite/jit.h"
#include "runtime-lite/ops.h"
#include "runtime-lite/parameter.h"

namespace hybgen {

class Block {
 public:
  // `prefix_hint` names the block: "dense" gives "dense0_", "dense1_", ...
  explicit Block(const std::string& prefix_hint = "block");
  virtual ~Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  const std::string& prefix() const { return prefix_; }

  // Runs the block: eagerly on concrete tensors, or adds its nodes to a graph
  // when an input is symbolic (a user's symbolic call starts fresh names).
  Tensor operator()(const Tensor& x);
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  template <typename B>
  std::shared_ptr<B> register_child(std::shared_ptr<B> child) {
    children_.push_back(child);
    return child;
  }
  const std::vector<std::shared_ptr<Block>>& children() const { return children_; }

  // This block's parameters and its children's, depth first, own first.
  std::vector<Parameter*> collect_params();
  // Seeds each parameter from `seed` and its position in collect_params().
  void initialize(const Initializer& init = init::Xavier(), uint64_t seed = 0);

  // Parameter values as a safetensors file, named by their place in the tree
  // ("weight" of this block, "0.bias" of its first child, ...) so another
  // instance of the same network (other prefixes) loads them, as Gluon's
  // save_parameters/load_parameters. Loading checks every name and shape
  // before changing any parameter; Error naming the file and the parameter.
  void save_parameters(const std::string& path);
  void load_parameters(const std::string& path, bool allow_missing = false, bool ignore_extra = false);
  // Hybridizes every HybridBlock in the tree (runtime-lite/jit.h: options).
  virtual void hybridize(bool active = true, const HybridizeOptions& options = {});

 protected:
  Parameter& add_param(const std::string& name, const Shape& shape);
  // Imperative computation; HybridBlock implements it with hybrid_forward.
  virtual std::vector<Tensor> forward(const std::vector<Tensor>& inputs) = 0;

 private:
  // Each parameter with its name relative to this block ("0.weight").
  void structural_params(const std::string& path, std::vector<std::pair<std::string, Parameter*>>& out);

  std::string prefix_;
  std::vector<std::shared_ptr<Block>> children_;
  std::vector<std::unique_ptr<Parameter>> params_;
};

class BackgroundCompile;  // block.cpp: one graph compiling on a thread of its own

class HybridBlock : public Block {
 public:
  explicit HybridBlock(const std::string& prefix_hint = "hybridblock") : Block(prefix_hint) {}

  // Override one of the two; the single-input form serves one-input blocks.
  virtual Tensor hybrid_forward(const Ops& F, const Tensor& x);
  virtual std::vector<Tensor> hybrid_forward(const Ops& F, const std::vector<Tensor>& inputs);

  // Active, the first call with new input shapes traces the block and
  // optimizes the graph. With options.compile (the default where a compiler
  // is found) it is compiled to native code and loaded: tiered (the
  // default), a background thread compiles while calls run the optimized
  // graph on the interpreter, and the first call after the library is loaded
  // switches to it; with options.tiered off, the first call waits for it.
  // Without compiling, the interpreter runs it. A parameter given new values
  // (set_data, initialize, load_parameters) is picked up without recompiling.
  // One block may be called from several threads: its calls take turns (a
  // lock per block); different blocks run at once.
  void hybridize(bool active = true, const HybridizeOptions& options = {}) override;
  bool hybridized() const { return hybridized_; }
  // Whether the graph for the last call's input shapes runs native code (the
  // next call does, when the library is loaded). `wait`: first waits for its
  // background compile to end; false then means it runs on the interpreter
  // (first_call_cost()->why_not_compiled says why).
  bool compiled(bool wait = false);
  // What the first call with the last input shapes cost, per tier, and how
  // the block runs them; null before a hybridized call.
  const JitTimings* first_call_cost() const;
  // The graph of the block for these input shapes (symbolic inputs "data",
  // or "data0", "data1", ... in call order), traced now; weights copied when
  // initialized.
  Graph trace(const std::vector<Shape>& input_shapes, const std::string& name, bool copy_weights = true);
  // PREFIX.json + PREFIX.safetensors of the graph traced with the input
  // shapes of the last forward pass (Error before any forward pass, as Gluon).
  void export_model(const std::string& prefix);

 protected:
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;

 private:
  // The graph traced for one set of input shapes (without weight values,
  // values renamed canonically), optimized with the parameters' values and
  // run as native code or on the interpreter; prepared again (not retraced)
  // when a parameter gets new storage (initialize() again, set_data()) or is
  // written through data().
  struct CachedGraph {
    Graph graph;
    std::map<std::string, std::string> constant_names;  // parameter name -> its constant's name in `graph`
    struct Binding {
      Parameter* param;
      const float* storage;
      uint64_t writes;  // the storage's write_count() when its values were taken
    };
    std::vector<Binding> bindings;
    std::vector<std::size_t> input_positions;  // per graph input: its position in the call
    std::unique_ptr<NativeGraph> native;
    std::unique_ptr<Interpreter> interpreter;
    std::shared_ptr<BackgroundCompile> compile;  // in flight or done, not yet switched to
    uint64_t generation = 0;                     // counts prepare()s: tells a compile of older parameter values
    JitTimings timings;
    // HybridizeOptions::max_batch: the graph is one item's, run at any batch
    // (graph.batch); the values that hold items, which the interpreter tier
    // runs item by item.
    std::set<std::string> item_values;
  };
  using Clock = std::chrono::steady_clock;
  // `since`: when the call that asked began (the background compile's clock).
  void prepare(CachedGraph& cached, Clock::time_point since);
  // Takes the ended background compile's library (or its failure) into `cached`.
  void switch_tier(CachedGraph& cached);
  static bool bindings_stale(const CachedGraph& cached);
  // An item graph on the interpreter tier: `batch` items, one run each.
  static std::vector<Tensor> run_items(Interpreter& interpreter, const CachedGraph& cached,
                                       const std::vector<Tensor>& inputs, int64_t batch);

  // Held by a concrete call, hybridize() and compiled(): calls of one block take turns.
  mutable std::mutex mutex_;
  bool hybridized_ = false;
  HybridizeOptions options_;
  std::optional<std::vector<Shape>> last_shapes_;
  std::map<std::vector<Shape>, CachedGraph> cached_graphs_;
  // HybridizeOptions::max_batch: graphs of one item (by the items' shapes),
  // and the item shapes of blocks that turned out to compute across items.
  std::map<std::vector<Shape>, CachedGraph> item_graphs_;
  std::set<std::vector<Shape>> per_shape_only_;
  CachedGraph* last_graph_ = nullptr;  // the one for last_shapes_, once looked up
  int64_t last_batch_ = 0;             // with an item graph: the items of the last call
};

// Runs children in order, imperatively.
class Sequential : public Block {
 public:
  Sequential() : Block("sequential") {}
  void add(std::shared_ptr<Block> block) { register_child(std::move(block)); }

 protected:
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
};

namespace nn {

// Runs children in order; hybridizable as a whole.
class HybridSequential : public HybridBlock {
 public:
  HybridSequential() : HybridBlock("hybridsequential") {}
  void add(std::shared_ptr<Block> block) { register_child(std::move(block)); }
  std::vector<Tensor> hybrid_forward(const Ops& F, const std::vector<Tensor>& inputs) override;
  using HybridBlock::hybrid_forward;
};

}  // namespace nn

using nn::HybridSequential;

}  // namespace hybgen
