#include "runtime-lite/block.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "io/model_json.h"
#include "io/safetensors.h"
#include "pipeline.h"
#include "targets/target.h"
#include "runtime-lite/invoke.h"
#include "runtime-lite/symbol.h"

namespace hybgen {
namespace {

// The names of a traced block's symbolic inputs, as Gluon's export names them.
std::string input_name(std::size_t index, std::size_t count) {
  return count == 1 ? "data" : "data" + std::to_string(index);
}

// Says `message` on stderr the first time this process meets it.
void note_once(const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(message).second) std::fprintf(stderr, "%s\n", message.c_str());
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

void Block::structural_params(const std::string& path, std::vector<std::pair<std::string, Parameter*>>& out) {
  for (auto& p : params_) {
    const std::string& name = p->name();
    const bool prefixed = name.compare(0, prefix_.size(), prefix_) == 0;
    out.emplace_back(path + (prefixed ? name.substr(prefix_.size()) : name), p.get());
  }
  for (std::size_t i = 0; i < children_.size(); ++i) children_[i]->structural_params(path + std::to_string(i) + ".", out);
}

void Block::save_parameters(const std::string& path) {
  std::vector<std::pair<std::string, Parameter*>> params;
  structural_params("", params);
  std::map<std::string, Constant> tensors;
  for (const auto& [name, p] : params) {
    const Tensor& data = p->data();  // Error naming a parameter not initialized yet
    tensors[name] = Constant::f32(data.shape(), data.to_vector());
  }
  write_safetensors(path, tensors, {{"format", "hybgen-parameters"}, {"block", prefix_}});
}

void Block::load_parameters(const std::string& path, bool allow_missing, bool ignore_extra) {
  std::map<std::string, Constant> tensors = read_safetensors(path);
  for (auto& [name, c] : tensors)  // half-precision files load into float32 parameters
    if (c.type.dtype == DType::kFloat16 || c.type.dtype == DType::kBFloat16) c = widen_to_float32(c);
  std::vector<std::pair<std::string, Parameter*>> params;
  structural_params("", params);
  std::set<std::string> known;
  for (const auto& [name, p] : params) {
    known.insert(name);
    const auto it = tensors.find(name);
    if (it == tensors.end()) {
      if (allow_missing) continue;
      throw Error(path + ": has no parameter '" + name + "' (" + p->name() + " of " + prefix_ +
                  "); load_parameters(path, allow_missing=true) leaves it as it is");
    }
    if (it->second.type.dtype != DType::kFloat32)
      throw Error(path + ": parameter '" + name + "' is " + dtype_name(it->second.type.dtype) + ", not float32");
    if (p->shape_known() ? it->second.type.shape != p->shape() : it->second.type.shape.size() != p->shape().size())
      throw Error(path + ": parameter '" + name + "' has shape " + shape_str(it->second.type.shape) + ", " +
                  p->name() + " has " + shape_str(p->shape()));
  }
  if (!ignore_extra)
    for (const auto& [name, tensor] : tensors)
      if (!known.count(name))
        throw Error(path + ": parameter '" + name + "' belongs to no parameter of " + prefix_ +
                    "; load_parameters(path, false, ignore_extra=true) skips it");
  for (const auto& [name, p] : params) {
    const auto it = tensors.find(name);
    if (it == tensors.end()) continue;
    const Constant& c = it->second;
    std::vector<float> values(static_cast<std::size_t>(num_elements(c.type.shape)));
    if (!values.empty()) std::memcpy(values.data(), c.data.data(), values.size() * sizeof(float));
    p->set_data(Tensor::from_vector(c.type.shape, std::move(values)));
  }
}

void Block::hybridize(bool active, const HybridizeOptions& options) {
  for (auto& c : children_) c->hybridize(active, options);
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

void HybridBlock::hybridize(bool active, const HybridizeOptions& options) {
  hybridized_ = active;
  options_ = options;
  cached_graphs_.clear();
  last_graph_ = nullptr;
  Block::hybridize(active, options);
}

const JitTimings* HybridBlock::first_call_cost() const {
  if (!last_shapes_) return nullptr;
  const auto it = cached_graphs_.find(*last_shapes_);
  return it == cached_graphs_.end() ? nullptr : &it->second.timings;
}

std::vector<Tensor> HybridBlock::forward(const std::vector<Tensor>& inputs) {
  bool symbolic = false;
  for (const auto& t : inputs) symbolic = symbolic || t.is_symbolic();
  if (symbolic) return hybrid_forward(Ops(true), inputs);

  // The shapes of the last call again (the common case): no lookup.
  bool same_shapes = last_shapes_ && last_shapes_->size() == inputs.size();
  for (std::size_t i = 0; same_shapes && i < inputs.size(); ++i) same_shapes = (*last_shapes_)[i] == inputs[i].shape();
  if (!same_shapes) {
    std::vector<Shape> shapes;
    for (const auto& t : inputs) shapes.push_back(t.shape());
    last_shapes_ = std::move(shapes);
    last_graph_ = nullptr;
  }
  if (!hybridized_) return hybrid_forward(Ops(false), inputs);

  if (!last_graph_) {
    auto it = cached_graphs_.find(*last_shapes_);
    if (it == cached_graphs_.end()) {
      // First call with these shapes: trace, then optimize with the live parameters.
      CachedGraph cached;
      const auto t0 = std::chrono::steady_clock::now();
      cached.graph = trace(*last_shapes_, prefix().substr(0, prefix().size() - 1), false);
      cached.timings.trace_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      for (const auto& in : cached.graph.inputs)  // inputs the result does not read are not in the graph
        for (std::size_t i = 0; i < inputs.size(); ++i)
          if (in == input_name(i, inputs.size())) cached.input_positions.push_back(i);
      it = cached_graphs_.emplace(*last_shapes_, std::move(cached)).first;
      try {
        prepare(it->second);
      } catch (...) {
        cached_graphs_.erase(it);  // the next call tries again
        throw;
      }
    }
    last_graph_ = &it->second;
  }
  CachedGraph& cached = *last_graph_;
  if (bindings_stale(cached)) prepare(cached);
  if (cached.native) {
    std::vector<const Tensor*> ordered;
    ordered.reserve(cached.input_positions.size());
    for (std::size_t position : cached.input_positions) ordered.push_back(&inputs[position]);
    return cached.native->run(ordered);
  }
  std::map<std::string, Tensor> named;
  for (std::size_t i = 0; i < cached.input_positions.size(); ++i)
    named[cached.graph.inputs[i]] = inputs[cached.input_positions[i]];
  return cached.interpreter->run(named);
}

void HybridBlock::prepare(CachedGraph& cached) {
  const auto t0 = std::chrono::steady_clock::now();
  Graph valued = cached.graph;
  cached.bindings.clear();
  for (Parameter* p : collect_params()) {
    if (!valued.is_constant(p->name())) continue;
    const Tensor& data = p->data();
    Constant& c = valued.constants.at(p->name());
    c.data.resize(static_cast<std::size_t>(data.size()) * sizeof(float));
    if (!c.data.empty()) std::memcpy(c.data.data(), data.data(), c.data.size());
    cached.bindings.push_back({p, data.data(), data.write_count()});
  }
  CompiledGraph optimized = compile_graph(std::move(valued), CompileOptions::for_target(host_target()));
  cached.timings.optimize_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  // Once compiling failed for this graph, new parameter values do not try
  // again: the compiler would fail the same way, seconds each time.
  if (options_.compile && cached.timings.why_not_compiled.empty()) {
    if (cached.native && cached.native->replace_weights(optimized)) return;
    try {
      cached.native = NativeGraph::load(optimized, options_, cached.timings);
      cached.interpreter.reset();
      return;
    } catch (const Error& e) {
      cached.timings.why_not_compiled = e.what();
      note_once("hybgen: " + prefix() + " runs its optimized graph on the interpreter, not compiled: " + e.what());
    }
  } else if (!options_.compile) {
    cached.timings.why_not_compiled = "compiling is off (HybridizeOptions::compile, HYBGEN_JIT=0)";
  }
  cached.native.reset();
  cached.timings.compiled = false;
  cached.interpreter = std::make_unique<Interpreter>(optimized);
}

bool HybridBlock::bindings_stale(const CachedGraph& cached) {
  for (const auto& b : cached.bindings) {
    if (!b.param->initialized()) return true;
    const Tensor& values = b.param->data();
    if (values.data() != b.storage || values.write_count() != b.writes) return true;
  }
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
