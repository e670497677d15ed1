#include "runtime-lite/block.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "emit/templates.h"
#include "io/model_json.h"
#include "io/safetensors.h"
#include "passes/passes.h"
#include "pipeline.h"
#include "runtime-lite/invoke.h"
#include "runtime-lite/symbol.h"
#include "targets/target.h"

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

double elapsed_ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Renames every value and node of a traced graph by its place: values "v0",
// "v1", ... and constants "w0", "w1", ... in the order the nodes first name
// them, nodes "n0", "n1", ..., the graph "hybridized"; the inputs keep their
// names. Traced names carry the blocks' prefixes, which count instances
// ("dense3_weight"): renamed, two instances of one network give one graph
// text, hence one generated source and one cache entry. Returns each
// constant's new name by its old one.
std::map<std::string, std::string> rename_canonically(Graph& g) {
  std::map<std::string, std::string> to;
  for (const auto& in : g.inputs) to[in] = in;
  int values = 0, weights = 0;
  const auto rename = [&](std::string& v) {
    auto it = to.find(v);
    if (it == to.end())
      it = to.emplace(v, g.is_constant(v) ? "w" + std::to_string(weights++) : "v" + std::to_string(values++)).first;
    v = it->second;
  };
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    n.name = "n" + std::to_string(i);
    for (auto& v : n.inputs)
      if (!v.empty()) rename(v);  // "": an optional input left out
    for (auto& v : n.outputs)
      if (!v.empty()) rename(v);
  }
  for (auto& v : g.outputs) rename(v);
  std::map<std::string, std::string> constant_names;
  std::map<std::string, Constant> constants;
  for (auto& [name, c] : g.constants) {
    std::string renamed = name;
    rename(renamed);
    constant_names[name] = renamed;
    constants.emplace(renamed, std::move(c));
  }
  std::map<std::string, TensorType> types;
  for (auto& [name, t] : g.types) {
    const auto it = to.find(name);
    types.emplace(it == to.end() ? name : it->second, std::move(t));
  }
  g.constants = std::move(constants);
  g.types = std::move(types);
  g.name = "hybridized";
  return constant_names;
}

}  // namespace

// One optimized graph compiled and loaded on a thread of its own. Its owner
// polls done(); the destructor cancels a compile still running (the
// compiler is killed, its private build folder removed: the cache never
// holds half an entry) and joins. Compiles still running when the process
// exits are cancelled and waited for at exit, before the statics they use
// are destroyed.
class BackgroundCompile {
 public:
  BackgroundCompile(CompiledGraph optimized, const HybridizeOptions& options, uint64_t generation,
                    std::chrono::steady_clock::time_point since)
      : generation(generation), optimized_(std::move(optimized)), options_(options), since_(since) {
    in_flight_add(this);
    try {
      thread_ = std::thread([this] { run(); });
    } catch (...) {
      in_flight_remove(this);
      throw;
    }
  }
  ~BackgroundCompile() {
    cancel_ = true;
    if (thread_.joinable()) thread_.join();
  }
  BackgroundCompile(const BackgroundCompile&) = delete;
  BackgroundCompile& operator=(const BackgroundCompile&) = delete;

  bool done() const { return done_.load(std::memory_order_acquire); }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [this] { return done(); });
  }

  // Read once done(): the library, or why there is none.
  const uint64_t generation;  // the prepare() whose parameter values it compiled
  std::unique_ptr<NativeGraph> native;
  std::string error;
  JitTimings timings;   // generate, compile, load; cache_hit, library
  double ready_ms = 0;  // since the call that started it began

 private:
  void run() {
    try {
      native = NativeGraph::load(optimized_, options_, timings, &cancel_);
    } catch (const std::exception& e) {
      error = e.what();
    }
    ready_ms = elapsed_ms(since_);
    optimized_ = CompiledGraph{};  // its weights, no longer needed
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.store(true, std::memory_order_release);
    }
    done_cv_.notify_all();
    in_flight_remove(this);
  }

  // Every compile running in this process. Never destroyed: a compile of a
  // block that is itself never destroyed may end after static destructors ran.
  struct InFlight {
    std::mutex mutex;
    std::condition_variable none_left;
    std::set<BackgroundCompile*> running;
  };
  // At exit, handlers and static destructors run in the reverse order of
  // their registration, so a static first made by a compile after the
  // handler was registered would be destroyed before the handler stops that
  // compile. The statics a compile reads that no earlier step (tracing,
  // compile_graph) made are therefore made here first: the embedded
  // templates and ValueIndex's empty list.
  static InFlight& in_flight() {
    static InFlight* all = [] {
      auto* created = new InFlight;
      (void)template_text("jit_entry.cpp");
      (void)ValueIndex(Graph{}).consumers("");
      std::atexit(cancel_all_at_exit);
      return created;
    }();
    return *all;
  }
  static void in_flight_add(BackgroundCompile* c) {
    InFlight& all = in_flight();
    std::lock_guard<std::mutex> lock(all.mutex);
    all.running.insert(c);
  }
  static void in_flight_remove(BackgroundCompile* c) {
    InFlight& all = in_flight();
    std::lock_guard<std::mutex> lock(all.mutex);
    all.running.erase(c);
    all.none_left.notify_all();
  }
  static void cancel_all_at_exit() {
    InFlight& all = in_flight();
    std::unique_lock<std::mutex> lock(all.mutex);
    for (BackgroundCompile* c : all.running) c->cancel_ = true;
    all.none_left.wait(lock, [&] { return all.running.empty(); });
  }

  std::atomic<bool> cancel_{false}, done_{false};
  std::mutex mutex_;
  std::condition_variable done_cv_;
  CompiledGraph optimized_;
  const HybridizeOptions options_;
  const std::chrono::steady_clock::time_point since_;
  std::thread thread_;  // last: starts once the members it reads are made
};

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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    hybridized_ = active;
    options_ = options;
    cached_graphs_.clear();  // cancels compiles in flight
    item_graphs_.clear();
    per_shape_only_.clear();
    last_graph_ = nullptr;
  }
  Block::hybridize(active, options);
}

const JitTimings* HybridBlock::first_call_cost() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_graph_ ? &last_graph_->timings : nullptr;
}

bool HybridBlock::compiled(bool wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  // The graph the last call ran (null after hybridize() dropped it).
  const auto current = [this]() -> CachedGraph* { return last_graph_; };
  CachedGraph* cached = current();
  if (cached && cached->compile && !cached->compile->done() && wait) {
    // Waits without the lock, so that calls go on meanwhile on the interpreter.
    const std::shared_ptr<BackgroundCompile> compile = cached->compile;
    lock.unlock();
    compile->wait();
    lock.lock();
    cached = current();  // hybridize() may have dropped it meanwhile
  }
  if (!cached) return false;
  if (cached->compile && cached->compile->done()) switch_tier(*cached);
  return cached->native != nullptr;
}

std::vector<Tensor> HybridBlock::forward(const std::vector<Tensor>& inputs) {
  bool symbolic = false;
  for (const auto& t : inputs) symbolic = symbolic || t.is_symbolic();
  if (symbolic) return hybrid_forward(Ops(true), inputs);

  const auto call_start = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
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

  bool first_call = false;
  while (!last_graph_) {
    // HybridizeOptions::max_batch: a first input whose first dimension (the
    // batch) is in 1..max_batch runs the graph of one item; the inputs with
    // that first dimension hold the items.
    std::vector<Shape> key = *last_shapes_;
    int64_t batch = 0;
    if (options_.max_batch > 0 && !key.empty() && !key[0].empty() && key[0][0] >= 1 &&
        key[0][0] <= options_.max_batch) {
      batch = key[0][0];
      for (Shape& shape : key)
        if (!shape.empty() && shape[0] == batch) shape[0] = 1;
      if (per_shape_only_.count(key)) {
        batch = 0;
        key = *last_shapes_;
      }
    }
    auto& graphs = batch ? item_graphs_ : cached_graphs_;
    auto it = graphs.find(key);
    if (it == graphs.end()) {
      // First call with these shapes: trace, then optimize with the live parameters.
      CachedGraph cached;
      cached.graph = trace(key, prefix().substr(0, prefix().size() - 1), false);
      if (batch) {
        std::vector<std::string> items;
        for (std::size_t i = 0; i < inputs.size(); ++i)
          if (!(*last_shapes_)[i].empty() && (*last_shapes_)[i][0] == batch &&
              cached.graph.is_input(input_name(i, inputs.size())))
            items.push_back(input_name(i, inputs.size()));
        cached.graph.batch = BatchRange{1, options_.max_batch, items};
        if (items.empty()) cached.graph.batch = BatchRange{};  // the items are never read: a fixed graph
      }
      cached.constant_names = rename_canonically(cached.graph);
      cached.item_values = batch_values(cached.graph);
      cached.timings.trace_ms = elapsed_ms(call_start);
      for (const auto& in : cached.graph.inputs)  // inputs the result does not read are not in the graph
        for (std::size_t i = 0; i < inputs.size(); ++i)
          if (in == input_name(i, inputs.size())) cached.input_positions.push_back(i);
      it = graphs.emplace(key, std::move(cached)).first;
      try {
        prepare(it->second, call_start);
      } catch (const Error& e) {
        graphs.erase(it);  // the next call tries again
        // A block that computes across its items: a graph per shape, as without max_batch.
        if (batch && std::string(e.what()).find("cannot take a run-time batch") != std::string::npos) {
          per_shape_only_.insert(key);
          continue;
        }
        throw;
      }
      first_call = true;
    }
    last_graph_ = &it->second;
    last_batch_ = it->second.graph.batch.variable() ? batch : 0;
  }
  CachedGraph& cached = *last_graph_;
  if (cached.compile && cached.compile->done()) switch_tier(cached);
  if (bindings_stale(cached)) prepare(cached, call_start);
  std::vector<Tensor> out;
  if (cached.native) {
    std::vector<const Tensor*> ordered;
    ordered.reserve(cached.input_positions.size());
    for (std::size_t position : cached.input_positions) ordered.push_back(&inputs[position]);
    out = cached.native->run(ordered);
  } else if (last_batch_) {
    out = run_items(*cached.interpreter, cached, inputs, last_batch_);
  } else {
    std::map<std::string, Tensor> named;
    for (std::size_t i = 0; i < cached.input_positions.size(); ++i)
      named[cached.graph.inputs[i]] = inputs[cached.input_positions[i]];
    out = cached.interpreter->run(named);
  }
  if (first_call) cached.timings.first_call_ms = elapsed_ms(call_start);
  return out;
}

std::vector<Tensor> HybridBlock::run_items(Interpreter& interpreter, const CachedGraph& cached,
                                           const std::vector<Tensor>& inputs, int64_t batch) {
  // The graph is one item's: each item's slice of the inputs holding items,
  // run in turn, its outputs stacked (outputs that hold no item: the first run's).
  const Graph& g = cached.graph;
  std::vector<Tensor> out;
  for (int64_t item = 0; item < batch; ++item) {
    std::map<std::string, Tensor> named;
    for (std::size_t i = 0; i < cached.input_positions.size(); ++i) {
      const std::string& name = g.inputs[i];
      const Tensor& given = inputs[cached.input_positions[i]];
      if (!cached.item_values.count(name)) {
        named[name] = given;
        continue;
      }
      Tensor slice(g.type(name).shape);
      std::memcpy(slice.data(), given.data() + item * slice.size(),
                  static_cast<std::size_t>(slice.size()) * sizeof(float));
      named[name] = slice;
    }
    const std::vector<Tensor> results = interpreter.run(named);
    if (item == 0)
      for (std::size_t o = 0; o < results.size(); ++o) {
        Shape shape = results[o].shape();
        if (cached.item_values.count(g.outputs[o])) shape[0] *= batch;
        out.emplace_back(cached.item_values.count(g.outputs[o]) ? Tensor(shape) : results[o]);
      }
    for (std::size_t o = 0; o < results.size(); ++o)
      if (cached.item_values.count(g.outputs[o]))
        std::memcpy(out[o].data() + item * results[o].size(), results[o].data(),
                    static_cast<std::size_t>(results[o].size()) * sizeof(float));
  }
  return out;
}

void HybridBlock::prepare(CachedGraph& cached, Clock::time_point since) {
  const auto t0 = Clock::now();
  Graph valued = cached.graph;
  cached.bindings.clear();
  for (Parameter* p : collect_params()) {
    const auto name = cached.constant_names.find(p->name());
    if (name == cached.constant_names.end()) continue;
    const Tensor& data = p->data();
    Constant& c = valued.constants.at(name->second);
    c.data.resize(static_cast<std::size_t>(data.size()) * sizeof(float));
    if (!c.data.empty()) std::memcpy(c.data.data(), data.data(), c.data.size());
    cached.bindings.push_back({p, data.data(), data.write_count()});
  }
  CompiledGraph optimized = compile_graph(std::move(valued), CompileOptions::for_target(host_target()));
  cached.timings.optimize_ms = elapsed_ms(t0);
  ++cached.generation;

  // Once compiling failed for this graph, new parameter values do not try
  // again: the compiler would fail the same way, seconds each time.
  if (options_.compile && cached.timings.why_not_compiled.empty()) {
    if (cached.native && cached.native->replace_weights(optimized)) return;
    cached.native.reset();
    if (options_.tiered) {
      // A compile in flight goes on; if it compiled older parameter values,
      // switch_tier() prepares again once it is done.
      const auto t1 = Clock::now();
      cached.interpreter = std::make_unique<Interpreter>(optimized);
      cached.timings.interpreter_ms = elapsed_ms(t1);
      cached.timings.compiled = false;
      if (!cached.compile) {
        cached.compile = std::make_shared<BackgroundCompile>(std::move(optimized), options_, cached.generation, since);
        cached.timings.compiling = true;
      }
      return;
    }
    try {
      cached.native = NativeGraph::load(optimized, options_, cached.timings);
      cached.timings.compiled_after_ms = elapsed_ms(since);
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
  const auto t1 = Clock::now();
  cached.interpreter = std::make_unique<Interpreter>(optimized);
  cached.timings.interpreter_ms = elapsed_ms(t1);
}

void HybridBlock::switch_tier(CachedGraph& cached) {
  const std::shared_ptr<BackgroundCompile> done = std::move(cached.compile);
  done->wait();
  JitTimings& t = cached.timings;
  t.compiling = false;
  t.generate_ms = done->timings.generate_ms;
  t.compile_ms = done->timings.compile_ms;
  t.load_ms = done->timings.load_ms;
  if (!done->native) {
    t.why_not_compiled = done->error;
    note_once("hybgen: " + prefix() + " runs its optimized graph on the interpreter, not compiled: " + done->error);
    return;
  }
  t.compiled = true;
  t.cache_hit = done->timings.cache_hit;
  t.library = done->timings.library;
  t.compiled_after_ms = done->ready_ms;
  cached.native = std::move(done->native);
  cached.interpreter.reset();
  // Parameter values changed while it compiled: the new ones, into this
  // library where the code is the same, else a compile of their own.
  if (done->generation != cached.generation) prepare(cached, Clock::now());
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
