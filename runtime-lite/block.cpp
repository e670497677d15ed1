#include "runtime-lite/block.h"

#include <filesystem>

#include "io/model_json.h"
#include "runtime-lite/invoke.h"
#include "runtime-lite/symbol.h"

namespace hybgen {
namespace {

// The names of a traced block's symbolic inputs, as Gluon's export names them.
std::string input_name(std::size_t index, std::size_t count) {
  return count == 1 ? "data" : "data" + std::to_string(index);
}

}  // namespace

Block::Block(const std::string& prefix_hint) : prefix_(unique_block_prefix(prefix_hint)) {}

Tensor Block::operator()(const Tensor& x) {
  auto out = (*this)(std::vector<Tensor>{x});
  if (out.size() != 1) throw Error(prefix_ + ": returns " + std::to_string(out.size()) + " outputs, not 1");
  return out[0];
}

std::vector<Tensor> Block::operator()(const std::vector<Tensor>& inputs) {
  bool symbolic = false;
  for (const auto& t : inputs) symbolic = symbolic || t.is_symbolic();
  // Calling a block on a symbol twice prints the same names both times;
  // sym::to_graph tells the copies apart if they meet in one graph.
  std::optional<TraceNames> fresh_names;
  if (symbolic && !in_name_scope()) fresh_names.emplace();
  NameScope scope(prefix_);
  return forward(inputs);
}

std::vector<Parameter*> Block::collect_params() {
  std::vector<Parameter*> out;
  for (auto& p : params_) out.push_back(p.get());
  for (auto& c : children_)
    for (Parameter* p : c->collect_params()) out.push_back(p);
  return out;
}

void Block::initialize(const Initializer& init, uint64_t seed) {
  const auto params = collect_params();
  for (std::size_t i = 0; i < params.size(); ++i)
    params[i]->set_initializer(init, seed * 1000003u + i);  // distinct, reproducible streams
}

void Block::hybridize(bool active) {
  for (auto& c : children_) c->hybridize(active);
}

Parameter& Block::add_param(const std::string& name, const Shape& shape) {
  params_.push_back(std::make_unique<Parameter>(prefix_ + name, shape));
  return *params_.back();
}

Tensor HybridBlock::hybrid_forward(const Ops&, const Tensor&) {
  throw Error(prefix() + ": override hybrid_forward(F, x) or hybrid_forward(F, inputs)");
}

std::vector<Tensor> HybridBlock::hybrid_forward(const Ops& F, const std::vector<Tensor>& inputs) {
  if (inputs.size() != 1)
    throw Error(prefix() + ": takes one input, given " + std::to_string(inputs.size()) +
                " (override the multi-input hybrid_forward)");
  return {hybrid_forward(F, inputs[0])};
}

void HybridBlock::hybridize(bool active) {
  hybridized_ = active;
  cached_graphs_.clear();
  Block::hybridize(active);
}

std::vector<Tensor> HybridBlock::forward(const std::vector<Tensor>& inputs) {
  bool symbolic = false;
  for (const auto& t : inputs) symbolic = symbolic || t.is_symbolic();
  if (symbolic) return hybrid_forward(Ops(true), inputs);

  std::vector<Shape> shapes;
  for (const auto& t : inputs) shapes.push_back(t.shape());
  last_shapes_ = shapes;
  if (!hybridized_) return hybrid_forward(Ops(false), inputs);

  auto it = cached_graphs_.find(shapes);
  if (it == cached_graphs_.end()) {
    // First call with these shapes: trace, then bind the live parameters.
    CachedGraph cached;
    cached.graph = trace(shapes, prefix().substr(0, prefix().size() - 1), false);
    bind_parameters(cached);
    it = cached_graphs_.emplace(shapes, std::move(cached)).first;
  } else if (bindings_stale(it->second)) {
    bind_parameters(it->second);
  }
  const Graph& traced = it->second.graph;
  std::map<std::string, Tensor> named;  // inputs the result does not read are not in the graph
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (traced.is_input(input_name(i, inputs.size()))) named[input_name(i, inputs.size())] = inputs[i];
  return it->second.interpreter->run(named);
}

void HybridBlock::bind_parameters(CachedGraph& cached) {
  std::map<std::string, Tensor> bound;
  cached.bindings.clear();
  for (Parameter* p : collect_params()) {
    if (!cached.graph.is_constant(p->name())) continue;
    bound[p->name()] = p->data();
    cached.bindings.emplace_back(p, p->data().data());
  }
  cached.interpreter = std::make_unique<Interpreter>(cached.graph, bound);
}

bool HybridBlock::bindings_stale(const CachedGraph& cached) {
  for (const auto& [param, storage] : cached.bindings)
    if (!param->initialized() || param->data().data() != storage) return true;
  return false;
}

Graph HybridBlock::trace(const std::vector<Shape>& input_shapes, const std::string& name, bool copy_weights) {
  TraceNames fresh_names;
  std::vector<Tensor> vars;
  for (std::size_t i = 0; i < input_shapes.size(); ++i)
    vars.push_back(sym::var(input_name(i, input_shapes.size()), input_shapes[i]));
  const std::vector<Tensor> outputs = (*this)(vars);
  Graph g = sym::to_graph(outputs, name, copy_weights);
  // Call order (data0, data1, ...), not the order the graph first reads them.
  std::vector<std::string> ordered;
  for (std::size_t i = 0; i < input_shapes.size(); ++i)
    if (g.is_input(input_name(i, input_shapes.size()))) ordered.push_back(input_name(i, input_shapes.size()));
  if (ordered.size() != g.inputs.size())
    throw Error(this->prefix() + ": hybrid_forward reads a symbol that is not one of its inputs (" +
                "create tensors inside with F.* ops or make them parameters)");
  g.inputs = ordered;
  return g;
}

void HybridBlock::export_model(const std::string& prefix) {
  if (!last_shapes_)
    throw Error(this->prefix() + ": run the block on data once before export_model(), so input shapes are known");
  std::string name = std::filesystem::path(prefix).filename().string();
  save_model(trace(*last_shapes_, name.empty() ? "model" : name, true), prefix);
}

std::vector<Tensor> Sequential::forward(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> x = inputs;
  for (const auto& child : children()) x = (*child)(x);
  return x;
}

std::vector<Tensor> nn::HybridSequential::hybrid_forward(const Ops&, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> x = inputs;
  for (const auto& child : children()) x = (*child)(x);
  return x;
}

}  // namespace hybgen
