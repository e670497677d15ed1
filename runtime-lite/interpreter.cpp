#include "runtime-lite/interpreter.h"

#include <algorithm>
#include <cstring>

#include "passes/passes.h"

namespace hybgen {
namespace {

// The graph as written, checked and typed: the reference runs no pass that
// changes what it computes (no folding, no fusion), only the analyses that
// any run needs, so it depends on no part of the optimizing pipeline.
Graph checked(Graph graph) {
  validate(graph);
  infer_shapes(graph);
  if (remove_identities(graph)) infer_shapes(graph);  // Dropout at inference
  schedule(graph);
  return graph;
}

}  // namespace

Interpreter::Interpreter(const Graph& graph, std::map<std::string, Tensor> bound_constants)
    : graph_(checked(graph)),
      plan_(plan_memory(graph_, unfused_kernels(graph_), default_target(), /*share_buffers=*/false)) {
  const Graph& g = graph_;
  for (const auto& [name, c] : g.constants) {
    auto it = bound_constants.find(name);
    if (it != bound_constants.end()) {
      if (!it->second.defined() || it->second.is_symbolic() || it->second.shape() != c.type.shape)
        throw Error("constant " + quoted_name(name) + ": the bound tensor does not have shape " + shape_str(c.type.shape));
      constants_[name] = it->second;
    } else if (c.has_data()) {
      constants_[name] = Tensor::from_vector(c.type.shape, std::vector<float>(c.f32_data(), c.f32_data() + c.type.num_elements()));
    } else {
      throw Error("constant " + quoted_name(name) + " has no data (load the weights, or initialize the parameters)");
    }
  }
  arena_.resize((plan_.arena_bytes + sizeof(float) - 1) / sizeof(float));
  for (const Node& node : g.nodes) {
    Step step{&find_op(node.op), &node, {}, {}, {}, {}};
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

Interpreter::Slot Interpreter::slot_for(const std::string& value) const {
  const Graph& g = graph_;
  Slot s{Slot::kArena};
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
    s.constant = &constants_.at(value);
  } else {
    const BufferPlacement* b = plan_.find(value);
    if (!b) throw Error("value " + quoted_name(value) + " has no place in the memory plan");
    s.offset = b->offset / sizeof(float);
  }
  return s;
}

std::vector<Tensor> Interpreter::run(const std::map<std::string, Tensor>& inputs) {
  const Graph& g = graph_;
  std::vector<const Tensor*> in(g.inputs.size());
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    auto it = inputs.find(g.inputs[i]);
    if (it == inputs.end() || !it->second.defined())
      throw Error("input " + quoted_name(g.inputs[i]) + " " + (it == inputs.end() ? "is missing" : "is an undefined tensor") +
                  ", the graph expects shape " + shape_str(g.type(g.inputs[i]).shape));
    if (it->second.shape() != g.type(g.inputs[i]).shape)
      throw Error("input " + quoted_name(g.inputs[i]) + " has shape " + shape_str(it->second.shape()) + ", the graph expects " +
                  shape_str(g.type(g.inputs[i]).shape));
    in[i] = &it->second;
  }
  for (const auto& [name, t] : inputs)
    if (!g.is_input(name)) throw Error(quoted_name(name) + " is not an input of the graph");

  std::vector<Tensor> outputs;
  for (const auto& out : g.outputs) outputs.emplace_back(g.type(out).shape);
  auto pointer = [&](const Slot& s) -> float* {
    switch (s.kind) {
      case Slot::kInput: return const_cast<float*>(in[s.index]->data());
      case Slot::kConstant: return const_cast<float*>(s.constant->data());
      case Slot::kOutput: return outputs[s.index].data();
      case Slot::kArena: return arena_.data() + s.offset;
    }
    return nullptr;
  };
  for (const Step& step : steps_) {
    KernelIO io{step.node->attrs, {}, step.in_types, {}, step.out_types};
    for (const auto& s : step.in) io.in.push_back(pointer(s));
    for (const auto& s : step.out) io.out.push_back(pointer(s));
    step.def->reference(io);
  }
  // Outputs that are graph inputs or weights themselves.
  for (std::size_t i = 0; i < g.outputs.size(); ++i)
    if (g.producer(g.outputs[i]) < 0) {
      const Slot s = slot_for(g.outputs[i]);
      if (s.kind == Slot::kOutput) {
        const Tensor& src = g.is_input(g.outputs[i]) ? *in[std::find(g.inputs.begin(), g.inputs.end(), g.outputs[i]) - g.inputs.begin()]
                                                    : constants_.at(g.outputs[i]);
        std::memcpy(outputs[i].data(), src.data(), static_cast<std::size_t>(src.size()) * sizeof(float));
      }
    }
  return outputs;
}

}  // namespace hybgen
