// half_storage (--precision fp16 / bf16, CUDA): weights and activations are
// stored as float16 or bfloat16, which halves the bytes every kernel moves
// and feeds the tensor cores their half-precision operands; kernels compute
// in float (FP32 sums, FP32 softmax and normalisation statistics) and round
// only what they store. The model's inputs and outputs stay float32.
//
// Walking the nodes in topological order, a node runs in half when its
// kernel on the target (OpKernel::dtypes) computes the half type for every
// float value it reads and writes, with the types the op's shape rule gives
// for half inputs; its float inputs are then read as halves and its float
// outputs are halves. Any other node (argmax's indices, a kernel with no
// half form yet) keeps float32. Where a value is wanted in the other type:
// a weight gets a converted copy at generation time, any other value a
// _storage_cast node (one per value and type, before its first reader). An
// output made in half keeps its name through a _storage_cast to float32.
// With half edges (--io-precision half) the inputs take the half type and
// each output the type its node makes (the half type but where the node
// keeps float32), so a caller holding halves passes them without conversions.
//
// So which nodes run in half follows from the kernels' declared dtypes
// alone, and check_kernels, which runs next, holds every node to them.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/half.h"
#include "ops/op.h"
#include "ops/op_kernel.h"
#include "passes/passes.h"
#include "passes/rewrite_util.h"

namespace hybgen {
namespace {

bool is_float32(const TensorType& t) { return t.quantization.empty() && t.dtype == DType::kFloat32; }

bool computes(const OpKernel& kernel, DType dtype) {
  return std::find(kernel.dtypes.begin(), kernel.dtypes.end(), dtype) != kernel.dtypes.end();
}

Constant converted_constant(const Constant& from, DType to) {
  Constant c;
  c.type = TensorType{from.type.shape, to};
  if (!from.has_data()) return c;
  const auto n = static_cast<std::size_t>(from.type.num_elements());
  const auto* bits = reinterpret_cast<const uint16_t*>(from.data.data());
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i)
    values[i] = is_half_dtype(from.type.dtype) ? half_bits_to_float(from.type.dtype, bits[i]) : from.f32_data()[i];
  if (to == DType::kFloat32) return Constant::f32(c.type.shape, values);
  c.data.resize(n * 2);
  auto* out = reinterpret_cast<uint16_t*>(c.data.data());
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_half_bits(to, values[i]);
  return c;
}

}  // namespace

bool half_storage(Graph& graph, const Target& target, bool half_edges) {
  if (target.precision != Precision::kFP16 && target.precision != Precision::kBF16) return false;
  const DType half = target.precision == Precision::kFP16 ? DType::kFloat16 : DType::kBFloat16;

  std::set<std::string> taken(graph.inputs.begin(), graph.inputs.end());
  for (const auto& [name, c] : graph.constants) taken.insert(name);
  for (const Node& node : graph.nodes) {
    taken.insert(node.name);
    taken.insert(node.outputs.begin(), node.outputs.end());
  }
  auto fresh = [&](const std::string& base) {
    std::string name = base;
    for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
    taken.insert(name);
    return name;
  };

  const std::map<std::string, TensorType> original = graph.types;  // the values found float32 are the pass's
  auto was_float32 = [&](const std::string& value) {
    auto it = original.find(value);
    return it != original.end() && is_float32(it->second);
  };
  std::vector<Node> nodes;
  std::map<std::pair<std::string, DType>, std::string> converted;
  std::vector<std::string> replaced_constants;
  // `value` as a value of `dtype`: itself, a converted weight or a _storage_cast's output.
  auto as = [&](const std::string& value, DType dtype) {
    const TensorType type = graph.type(value);
    if (type.dtype == dtype) return value;
    auto [it, added] = converted.emplace(std::make_pair(value, dtype), "");
    if (!added) return it->second;
    const std::string name = fresh(value + "_" + dtype_name(dtype));
    if (graph.is_constant(value)) {
      graph.add_constant(name, converted_constant(graph.constants.at(value), dtype));
      replaced_constants.push_back(value);
    } else {
      Attrs attrs;
      attrs.set("dtype", dtype_name(dtype));
      nodes.push_back(Node{fresh(value + "_to_" + dtype_name(dtype)), "_storage_cast", attrs, {value}, {name}});
      graph.types[name] = TensorType{type.shape, dtype};
    }
    return it->second = name;
  };

  bool changed = false;
  if (half_edges)
    for (const std::string& in : graph.inputs)
      if (was_float32(in)) graph.types[in].dtype = half, changed = true;
  for (int n : topological_order(graph)) {
    Node node = graph.nodes[static_cast<std::size_t>(n)];
    const OpDef& def = find_op(node.op);
    const OpKernel* kernel = find_kernel(target.backend, def.name);
    std::vector<TensorType> in_types;
    bool reads_floats = false;
    for (const auto& in : node.inputs) {
      TensorType t = graph.type(in);
      if (was_float32(in)) t.dtype = half, reads_floats = true;
      in_types.push_back(t);
    }
    bool in_half = false;
    std::vector<TensorType> out_types;
    if (kernel && reads_floats) {
      try {
        out_types = def.infer(node.attrs, in_types);
        in_half = out_types.size() == node.outputs.size();
        for (const auto& t : in_types) in_half = in_half && computes(*kernel, t.dtype);
        for (const auto& t : out_types) in_half = in_half && computes(*kernel, t.dtype);
      } catch (const Error&) {
        in_half = false;  // the op's rule refuses half inputs: it stays float32
      }
    }
    for (auto& in : node.inputs)
      if (was_float32(in)) in = as(in, in_half ? half : DType::kFloat32);
    // Outputs take the type the node makes; a graph output keeps its name,
    // and float32 unless half_edges, through a _storage_cast from the value
    // the node makes. With half_edges it is what the node makes (an argmax's
    // indices stay float32, which holds them exactly).
    std::vector<Node> output_casts;
    for (std::size_t o = 0; o < node.outputs.size(); ++o) {
      const std::string value = node.outputs[o];
      const TensorType made = in_half ? out_types[o] : graph.type(value);
      TensorType edge = made;
      if (graph.is_output(value) && was_float32(value) && !half_edges) edge.dtype = DType::kFloat32;
      graph.types[value] = edge;
      if (made.dtype == edge.dtype) continue;
      node.outputs[o] = fresh(value + "_" + dtype_name(made.dtype));
      graph.types[node.outputs[o]] = made;
      converted[{value, made.dtype}] = node.outputs[o];  // readers of the made type read it directly
      Attrs attrs;
      attrs.set("dtype", dtype_name(edge.dtype));
      output_casts.push_back(
          Node{fresh(value + "_to_" + dtype_name(edge.dtype)), "_storage_cast", attrs, {node.outputs[o]}, {value}});
    }
    changed = changed || in_half || !output_casts.empty();
    nodes.push_back(std::move(node));
    for (Node& cast : output_casts) nodes.push_back(std::move(cast));
  }
  if (!changed) return false;
  graph.nodes = std::move(nodes);
  erase_unread_constants(graph, replaced_constants);
  return true;
}

}  // namespace hybgen
