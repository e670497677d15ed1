#include "runtime-lite/interpreter.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include "emit/backends.h"
#include "ops/evaluate.h"
#include "passes/passes.h"
#include "runtime-lite/interpreter_kernels.h"

namespace hybgen {
namespace {

// Throws Error naming every node whose op's reference does not compute its
// dtypes, and every graph input or output that is not float32 (Tensors hold
// float32).
void check_runnable(const Graph& graph) {
  std::string problems;
  for (const auto* values : {&graph.inputs, &graph.outputs})
    for (const auto& value : *values)
      if (graph.type(value).dtype != DType::kFloat32)
        problems += "\n  " + std::string(values == &graph.inputs ? "input " : "output ") + quoted_name(value) + " is " +
                    dtype_name(graph.type(value).dtype) + " (inputs and outputs are float32 Tensors)";
  for (const Node& node : graph.nodes) {
    std::vector<TensorType> in, out;
    for (const auto& v : node.inputs) in.push_back(graph.type(v));
    for (const auto& v : node.outputs) out.push_back(graph.type(v));
    const OpDef& def = find_op(node.op);
    if (reference_computes(def, in, out)) continue;
    std::vector<DType> has;
    for (const auto* types : {&in, &out})
      for (const TensorType& t : *types)
        if (std::find(has.begin(), has.end(), t.dtype) == has.end()) has.push_back(t.dtype);
    problems += "\n  " + node_label(node.name, node.op) + ": its values are " + dtype_names(has) +
                "; its reference computes " + dtype_names(def.reference_dtypes);
  }
  if (!problems.empty()) throw Error("the interpreter cannot run this graph:" + problems);
}

// The graph as written, checked and typed: the reference runs no pass that
// changes what it computes (no folding, no fusion), only the analyses that
// any run needs, so it depends on no part of the optimizing pipeline.
Graph checked(Graph graph) {
  validate(graph);
  infer_shapes(graph);
  check_runnable(graph);
  if (remove_identities(graph)) infer_shapes(graph);  // Dropout at inference
  schedule(graph);
  return graph;
}

std::size_t lines_for(std::size_t bytes) { return (bytes + 63) / 64; }

}  // namespace

void* Interpreter::Frame::pointer(const Slot& s) const {
  switch (s.kind) {
    case Slot::kInput: return const_cast<float*>(inputs[s.index]);
    case Slot::kConstant:
      return const_cast<void*>(s.constant);
    case Slot::kOutput: return outputs[s.index].data();
    case Slot::kArena: return arena + s.offset;
    case Slot::kTemp: return temp + s.offset;
  }
  return nullptr;
}

Interpreter::Interpreter(const Graph& graph, std::map<std::string, Tensor> bound_constants)
    : graph_(checked(graph)),
      plan_(plan_memory(graph_, unfused_kernels(graph_), default_target(), /*share_buffers=*/false)) {
  const Graph& g = graph_;
  for (const auto& [name, c] : g.constants) {
    auto it = bound_constants.find(name);
    if (c.type.dtype != DType::kFloat32) {  // read from the graph's own bytes
      if (it != bound_constants.end())
        throw Error("constant " + quoted_name(name) + " is " + dtype_name(c.type.dtype) +
                    ": a float32 Tensor cannot be bound to it");
      if (c.data.size() != c.type.bytes())
        throw Error("constant " + quoted_name(name) + " has no data (load the weights, or initialize the parameters)");
    } else if (it != bound_constants.end()) {
      if (!it->second.defined() || it->second.is_symbolic() || it->second.shape() != c.type.shape)
        throw Error("constant " + quoted_name(name) + ": the bound tensor does not have shape " + shape_str(c.type.shape));
      constants_[name] = it->second;
    } else if (c.has_data()) {
      constants_[name] = Tensor::from_vector(c.type.shape, std::vector<float>(c.f32_data(), c.f32_data() + c.type.num_elements()));
    } else {
      throw Error("constant " + quoted_name(name) + " has no data (load the weights, or initialize the parameters)");
    }
  }
  arena_.resize(lines_for(plan_.arena_bytes));
  for (const Node& node : g.nodes) {
    Step step;
    step.def = &find_op(node.op);
    step.node = &node;
    step.label = node.op;
    for (const auto& in : node.inputs) {
      step.in.push_back(slot_for(in));
      step.in_types.push_back(g.type(in));
    }
    for (const auto& out : node.outputs) {
      step.out.push_back(slot_for(out));
      step.out_types.push_back(g.type(out));
    }
    steps_.push_back(std::move(step));
  }
}

Interpreter::Interpreter(const CompiledGraph& optimized)
    : graph_(optimized.graph), plan_(optimized.plan), optimized_(true) {
  const Graph& g = graph_;
  if (backend_traits(optimized.target.backend).device_buffers)
    throw Error("the interpreter runs graphs compiled for host memory, not for " + optimized.target.name);
  check_runnable(g);
  for (const auto& [name, c] : g.constants)
    if (!c.has_data() || c.data.size() != c.type.bytes())
      throw Error("constant " + quoted_name(name) + " has no data (compile the graph with its weights)");
  arena_.resize(lines_for(plan_.arena_bytes));
  for (const Kernel& kernel : optimized.kernels) add_optimized_kernel(kernel);
}

Interpreter::Slot Interpreter::slot_for(const std::string& value) const {
  const Graph& g = graph_;
  Slot s;
  const auto out = std::find(g.outputs.begin(), g.outputs.end(), value);
  const auto in = std::find(g.inputs.begin(), g.inputs.end(), value);
  if (out != g.outputs.end()) {
    s.kind = Slot::kOutput;
    s.index = static_cast<int>(out - g.outputs.begin());
  } else if (in != g.inputs.end()) {
    s.kind = Slot::kInput;
    s.index = static_cast<int>(in - g.inputs.begin());
  } else if (g.is_constant(value)) {
    s.kind = Slot::kConstant;
    auto c = constants_.find(value);
    s.constant = c != constants_.end() ? static_cast<const void*>(c->second.data()) : g.constants.at(value).data.data();
  } else if (auto alias = aliases_.find(value); alias != aliases_.end()) {
    s = alias->second;
  } else {
    const BufferPlacement* b = plan_.find(value);
    if (!b) throw Error("value " + quoted_name(value) + " has no place in the memory plan");
    s.offset = b->offset;
  }
  return s;
}

// Arena ranges that overlap, or the same input, output, weight or temp buffer.
bool Interpreter::may_overlap(const Slot& a, std::size_t a_bytes, const Slot& b, std::size_t b_bytes) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Slot::kArena:
    case Slot::kTemp:
      return a.offset < b.offset + b_bytes && b.offset < a.offset + a_bytes;
    case Slot::kConstant: return a.constant == b.constant;
    default: return a.index == b.index;
  }
}

// One kernel of the optimized graph as steps. Values the kernel stores have
// their planned place; values that live only inside a fused kernel (in
// registers, in generated code) get bytes here: the stored output's where
// they can have them, so an epilogue runs in place on its producer's output,
// else temp buffers. Each step reads whole inputs and writes a whole output,
// so two values may share bytes only when one is last read at or before the
// step that writes the other: steps inside a fused kernel are elementwise
// over full-size kernel values, and read element i before writing it.
void Interpreter::add_optimized_kernel(const Kernel& kernel) {
  const Graph& g = graph_;
  const Node& first = g.nodes[kernel.nodes.front()];
  const OpDef& first_def = find_op(first.op);
  if (kernel.kind == KernelKind::kView) {
    const std::string& out = kernel.outputs.front();
    const Slot source = slot_for(first.inputs[0]);
    if (!plan_.find(out) && !g.is_output(out)) {
      aliases_[out] = source;  // a view of an input or a weight: that pointer
      return;
    }
    const Slot target = slot_for(out);
    if (target.kind == Slot::kArena && source.kind == Slot::kArena && target.offset == source.offset) return;
    // Else (a graph output) the reference copies it.
  }
  // A Concat whose producers all wrote in place: nothing left to do.
  if (kernel.kind == KernelKind::kOp && first_def.input_placement && first.outputs.size() == 1) {
    std::vector<TensorType> in_types;
    for (const auto& in : first.inputs) in_types.push_back(g.type(in));
    const auto offsets = first_def.input_placement(first.attrs, in_types, g.type(first.outputs[0]));
    const BufferPlacement* out = plan_.find(first.outputs[0]);
    bool all_placed = out && !offsets.empty();
    for (std::size_t i = 0; i < offsets.size() && all_placed; ++i) {
      const BufferPlacement* in = plan_.find(first.inputs[i]);
      all_placed = in && in->offset == out->offset + offsets[i];
    }
    if (all_placed) return;
  }

  // Where each value of the kernel lives. Stored values: their slots.
  // Intermediates: a stored output's bytes or a temp buffer, free over the
  // steps from the one that writes it to the last that reads it.
  const int count = static_cast<int>(kernel.nodes.size());
  std::map<std::string, int> made, last_read;  // step within the kernel
  for (int i = 0; i < count; ++i) {
    const Node& node = g.nodes[kernel.nodes[i]];
    for (const auto& in : node.inputs) last_read[in] = i;
    for (const auto& out : node.outputs) made.emplace(out, i);
  }
  const std::set<std::string> stored(kernel.outputs.begin(), kernel.outputs.end());
  struct Occupied {
    int from, to;  // [from, to]: written at `from`, last read at `to`
  };
  struct Place {
    Slot slot;
    std::size_t bytes;
    std::vector<Occupied> busy;
    bool free(int from, int to) const {
      for (const auto& o : busy)
        if (from < o.to && o.from < to) return false;  // touching at one step is fine: elementwise
      return true;
    }
  };
  std::vector<Place> places;
  std::map<std::string, Slot> where;
  for (const auto& out : kernel.outputs) {
    where[out] = slot_for(out);
    Place p{where[out], g.type(out).bytes(), {{made.at(out), count}}};
    // Kernel inputs that share these bytes (the plan wrote the result over an input that dies here).
    for (const auto& in : kernel.inputs)
      if (may_overlap(slot_for(in), g.type(in).bytes(), p.slot, p.bytes)) p.busy.push_back({-1, last_read.at(in)});
    places.push_back(std::move(p));
  }
  std::size_t temp_bytes = 0;
  for (int i = 0; i < count; ++i) {
    const Node& node = g.nodes[kernel.nodes[i]];
    for (const auto& out : node.outputs) {
      if (stored.count(out)) continue;
      const std::size_t bytes = g.type(out).bytes();
      const int to = last_read.count(out) ? last_read.at(out) : i;
      Place* chosen = nullptr;
      for (auto& p : places)
        if (p.bytes == bytes && p.free(i, to)) {
          chosen = &p;
          break;
        }
      if (!chosen) {
        places.push_back({Slot{Slot::kTemp, 0, temp_bytes, nullptr}, bytes, {}});
        temp_bytes += lines_for(bytes) * sizeof(Line);
        chosen = &places.back();
      }
      chosen->busy.push_back({i, to});
      where[out] = chosen->slot;
    }
  }
  temp_.resize(std::max(temp_.size(), lines_for(temp_bytes)));

  std::string label = first.op;
  for (int i = 1; i < count; ++i) label += "+" + g.nodes[kernel.nodes[i]].op;
  for (int i = 0; i < count; ++i) {
    const Node& node = g.nodes[kernel.nodes[i]];
    Step step;
    step.def = &find_op(node.op);
    step.node = &node;
    step.label = label;
    for (const auto& in : node.inputs) {
      auto w = where.find(in);
      step.in.push_back(w != where.end() ? w->second : slot_for(in));
      step.in_types.push_back(g.type(in));
    }
    for (const auto& out : node.outputs) {
      step.out.push_back(where.at(out));
      step.out_types.push_back(g.type(out));
    }
    if (kernel.kind != KernelKind::kView) {
      std::vector<const float*> constants;
      for (const auto& s : step.in)
        constants.push_back(s.kind == Slot::kConstant ? static_cast<const float*>(s.constant) : nullptr);
      if (auto fast = fast_kernel(node, step.in_types, step.out_types, constants)) {
        scratch_.resize(std::max(scratch_.size(), fast->scratch_floats));
        step.custom = [this, run = std::move(fast->run), in = step.in, out = step.out](const Frame& frame) {
          std::vector<const float*> inputs;
          std::vector<float*> outputs;
          for (const auto& s : in) inputs.push_back(static_cast<const float*>(frame.pointer(s)));
          for (const auto& s : out) outputs.push_back(static_cast<float*>(frame.pointer(s)));
          run(inputs, outputs, scratch_.data());
        };
      }
    }
    steps_.push_back(std::move(step));
  }
}

void Interpreter::set_profiling(bool on) {
  profiling_ = on;
  profile_ms_.clear();
}

void Interpreter::set_value_observer(ValueObserver observer) {
  if (optimized_ && observer)
    throw Error("an optimized interpreter keeps no value per node to observe; observe a graph interpreter");
  observer_ = std::move(observer);
}

std::vector<Tensor> Interpreter::run(const std::map<std::string, Tensor>& inputs) {
  const Graph& g = graph_;
  std::vector<const float*> in(g.inputs.size());
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    auto it = inputs.find(g.inputs[i]);
    if (it == inputs.end() || !it->second.defined())
      throw Error("input " + quoted_name(g.inputs[i]) + " " + (it == inputs.end() ? "is missing" : "is an undefined tensor") +
                  ", the graph expects shape " + shape_str(g.type(g.inputs[i]).shape));
    if (it->second.shape() != g.type(g.inputs[i]).shape)
      throw Error("input " + quoted_name(g.inputs[i]) + " has shape " + shape_str(it->second.shape()) + ", the graph expects " +
                  shape_str(g.type(g.inputs[i]).shape));
    in[i] = it->second.data();
  }
  for (const auto& [name, t] : inputs)
    if (!g.is_input(name)) throw Error(quoted_name(name) + " is not an input of the graph");

  std::vector<Tensor> outputs;
  for (const auto& out : g.outputs) outputs.emplace_back(g.type(out).shape);
  const Frame frame{in, outputs, bytes_of(arena_), bytes_of(temp_)};
  for (const Step& step : steps_) {
    const auto t0 = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    if (step.custom) {
      step.custom(frame);
    } else {
      KernelIO io{step.node->attrs, {}, step.in_types, {}, step.out_types};
      for (const auto& s : step.in) io.in.push_back(frame.pointer(s));
      for (const auto& s : step.out) io.out.push_back(frame.pointer(s));
      step.def->reference(io);
    }
    if (observer_)
      for (std::size_t k = 0; k < step.out.size(); ++k)
        observer_(step.node->outputs[k], step.out_types[k], frame.pointer(step.out[k]));
    if (profiling_)
      profile_ms_[step.label] +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  // Outputs that are graph inputs or weights themselves.
  for (std::size_t i = 0; i < g.outputs.size(); ++i)
    if (g.producer(g.outputs[i]) < 0) {
      const std::string& value = g.outputs[i];
      const float* src = nullptr;
      if (g.is_input(value)) {
        src = in[std::find(g.inputs.begin(), g.inputs.end(), value) - g.inputs.begin()];
      } else {
        auto c = constants_.find(value);
        src = c != constants_.end() ? c->second.data() : g.constants.at(value).f32_data();  // float32: check_runnable
      }
      std::memcpy(outputs[i].data(), src, static_cast<std::size_t>(outputs[i].size()) * sizeof(float));
    }
  return outputs;
}

}  // namespace hybgen
