#include "runtime-lite/quantize.h"

#include <map>

#include "ir/names.h"
#include "passes/quantize_graph.h"
#include "runtime-lite/symbol.h"

namespace hybgen {
namespace {

// The name HybridBlock::trace gives call argument `index` of `count`.
std::string traced_input_name(std::size_t index, std::size_t count) {
  return count == 1 ? "data" : "data" + std::to_string(index);
}

std::string shapes_str(const std::vector<Shape>& shapes) {
  std::string out;
  for (const Shape& s : shapes) out += (out.empty() ? "" : ", ") + shape_str(s);
  return out;
}

std::vector<Shape> shapes_of(const std::vector<Tensor>& batch, std::size_t index) {
  std::vector<Shape> shapes;
  for (std::size_t k = 0; k < batch.size(); ++k) {
    if (!batch[k].defined() || batch[k].is_symbolic())
      throw Error("calibration batch " + std::to_string(index + 1) + ": input " + std::to_string(k) +
                  " is not a concrete tensor");
    shapes.push_back(batch[k].shape());
  }
  return shapes;
}

}  // namespace

QuantizedBlock::QuantizedBlock(PostTrainingQuantization quantization, std::vector<Shape> input_shapes,
                               std::vector<std::size_t> input_positions)
    : HybridBlock("quantized"),
      quantization_(std::move(quantization)),
      input_shapes_(std::move(input_shapes)),
      input_positions_(std::move(input_positions)),
      reference_(std::make_unique<Interpreter>(quantization_.quantized.graph)) {
  if (input_positions_.size() != graph().inputs.size())
    throw Error(prefix() + ": " + std::to_string(input_positions_.size()) + " input positions for a graph of " +
                std::to_string(graph().inputs.size()) + " inputs");
  for (std::size_t p : input_positions_)
    if (p >= input_shapes_.size()) throw Error(prefix() + ": input position " + std::to_string(p) + " out of range");
}

std::string QuantizedBlock::report() const { return post_training_report(quantization_); }

void QuantizedBlock::check_call(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != input_shapes_.size())
    throw Error(prefix() + ": takes " + std::to_string(input_shapes_.size()) + " inputs (as it was quantized), given " +
                std::to_string(inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) throw Error(prefix() + ": input " + std::to_string(i) + " is an undefined tensor");
    if (inputs[i].has_shape() && inputs[i].shape() != input_shapes_[i])
      throw Error(prefix() + ": input " + std::to_string(i) + " has shape " + shape_str(inputs[i].shape()) +
                  "; the block was quantized for " + shape_str(input_shapes_[i]) +
                  " (the shape of its calibration batches: quantize with batches of the shape it will run)");
  }
}

std::vector<Tensor> QuantizedBlock::hybrid_forward(const Ops&, const std::vector<Tensor>& inputs) {
  check_call(inputs);
  bool symbolic = false;
  for (const auto& t : inputs) symbolic = symbolic || t.is_symbolic();
  if (symbolic) return splice(inputs);
  std::map<std::string, Tensor> named;
  for (std::size_t i = 0; i < input_positions_.size(); ++i) named[graph().inputs[i]] = inputs[input_positions_[i]];
  return reference_->run(named);
}

std::vector<Tensor> QuantizedBlock::splice(const std::vector<Tensor>& inputs) const {
  const Graph& g = graph();
  std::map<std::string, SymEntry> entry;  // graph value -> where the trace has it
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const Tensor& t = inputs[input_positions_[i]];
    if (t.is_symbolic()) {
      entry[g.inputs[i]] = {t.sym_node(), t.sym_index()};
      continue;
    }
    // A concrete tensor beside symbolic ones is a constant of the trace, as an op call makes it.
    auto constant = std::make_shared<SymNode>();
    constant->op = "null";
    constant->name = prefix() + g.inputs[i] + "_const";
    constant->is_parameter = true;
    constant->inline_constant = true;
    constant->bound = t;
    constant->parameter_shape = t.shape();
    constant->out_types = {t.type()};
    entry[g.inputs[i]] = {constant, 0};
  }
  for (const auto& [name, c] : g.constants) {
    auto node = std::make_shared<SymNode>();
    node->op = "null";
    node->name = name;
    node->is_parameter = true;
    // Inline: two quantized blocks' weights of one name stay apart, and a
    // float block's parameter of that name in the same trace keeps it.
    node->inline_constant = true;
    node->parameter_shape = c.type.shape;
    node->constant = std::make_shared<const Constant>(c);
    node->out_types = {c.type};
    entry[name] = {node, 0};
  }
  for (const Node& n : g.nodes) {  // scheduled: producers first
    auto node = std::make_shared<SymNode>();
    node->op = n.op;
    node->name = n.name;
    node->attrs = n.attrs;
    for (const auto& in : n.inputs) node->inputs.push_back(entry.at(in));
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      node->out_types.push_back(g.type(n.outputs[k]));
      entry[n.outputs[k]] = {node, static_cast<int>(k)};
    }
  }
  std::vector<Tensor> outputs;
  for (const auto& out : g.outputs) {
    const SymEntry& e = entry.at(out);
    outputs.push_back(Tensor::symbolic(e.node, e.index));
  }
  return outputs;
}

std::shared_ptr<QuantizedBlock> quantize(HybridBlock& block, const std::vector<std::vector<Tensor>>& batches,
                                         const PostTrainingOptions& options) {
  const std::string name = block.prefix().substr(0, block.prefix().size() - 1);
  try {
    if (batches.empty())
      throw Error(
          "no calibration batches: give at least one batch of sample inputs, shaped as the block will be called");
    const std::vector<Shape> shapes = shapes_of(batches[0], 0);
    if (shapes.empty()) throw Error("calibration batch 1 has no input tensors");
    for (std::size_t i = 1; i < batches.size(); ++i) {
      const std::vector<Shape> other = shapes_of(batches[i], i);
      if (other != shapes)
        throw Error("calibration batch " + std::to_string(i + 1) + " has shapes " + shapes_str(other) + ", batch 1 " +
                    shapes_str(shapes) + ": every batch has the shapes the quantized block will be called with");
    }
    Graph traced = block.trace(shapes, name, /*copy_weights=*/true);
    for (const auto& [value, c] : traced.constants)
      if (!c.has_data())
        throw Error("parameter " + quoted_name(value) +
                    " has no values: initialize() the block (and run it once where a layer defers its shape) first");
    const Graph prepared = prepare_for_quantization(std::move(traced));

    // Per graph input, the call argument that feeds it (an argument the
    // result does not read is not an input of the graph).
    std::vector<std::size_t> positions;
    for (const auto& in : prepared.inputs)
      for (std::size_t k = 0; k < shapes.size(); ++k)
        if (in == traced_input_name(k, shapes.size())) positions.push_back(k);
    std::vector<std::map<std::string, Tensor>> named(batches.size());
    for (std::size_t i = 0; i < batches.size(); ++i)
      for (std::size_t k = 0; k < positions.size(); ++k) named[i][prepared.inputs[k]] = batches[i][positions[k]];

    PostTrainingQuantization q = quantize_post_training(prepared, named, options);
    return std::make_shared<QuantizedBlock>(std::move(q), shapes, positions);
  } catch (const Error& e) {
    throw Error("quantize(" + name + "): " + e.what());
  }
}

std::shared_ptr<QuantizedBlock> quantize(HybridBlock& block, const std::vector<Tensor>& batches,
                                         const PostTrainingOptions& options) {
  std::vector<std::vector<Tensor>> calls;
  calls.reserve(batches.size());
  for (const Tensor& t : batches) calls.push_back({t});
  return quantize(block, calls, options);
}

}  // namespace hybgen
