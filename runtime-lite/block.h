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
//   Tensor y = (*net)(x);          // traced once, then the graph runs
//   net->export_model("net");      // net.json + net.safetensors
#pragma once

#include <map>
#include <memory>
#include <optional>
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

class HybridBlock : public Block {
 public:
  explicit HybridBlock(const std::string& prefix_hint = "hybridblock") : Block(prefix_hint) {}

  // Override one of the two; the single-input form serves one-input blocks.
  virtual Tensor hybrid_forward(const Ops& F, const Tensor& x);
  virtual std::vector<Tensor> hybrid_forward(const Ops& F, const std::vector<Tensor>& inputs);

  // Active, the first call with new input shapes traces the block and
  // optimizes the graph; with options.compile (the default where a compiler
  // is found) it is compiled to native code and loaded, else it runs on the
  // interpreter. Later calls run it; a parameter given new values
  // (set_data, initialize, load_parameters) is picked up without recompiling.
  void hybridize(bool active = true, const HybridizeOptions& options = {}) override;
  bool hybridized() const { return hybridized_; }
  // What the first call with the last input shapes cost and how the block
  // runs them; null before a hybridized call.
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
  // The graph traced for one set of input shapes (without weight values),
  // optimized with the parameters' values and run as native code or on the
  // interpreter; prepared again (not retraced) when a parameter gets new
  // storage (initialize() again, set_data()) or is written through data().
  struct CachedGraph {
    Graph graph;
    struct Binding {
      Parameter* param;
      const float* storage;
      uint64_t writes;  // the storage's write_count() when its values were taken
    };
    std::vector<Binding> bindings;
    std::vector<std::size_t> input_positions;  // per graph input: its position in the call
    std::unique_ptr<NativeGraph> native;
    std::unique_ptr<Interpreter> interpreter;
    JitTimings timings;
  };
  void prepare(CachedGraph& cached);
  static bool bindings_stale(const CachedGraph& cached);

  bool hybridized_ = false;
  HybridizeOptions options_;
  std::optional<std::vector<Shape>> last_shapes_;
  std::map<std::vector<Shape>, CachedGraph> cached_graphs_;
  CachedGraph* last_graph_ = nullptr;  // the one for last_shapes_, once looked up
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
