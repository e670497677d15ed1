// fuse_attention: attention's four steps become one _attention node
// (gen/ops/attention.cpp), whose kernel keeps the scores on chip:
//
//   s = q k^T  ->  [* or / a scalar]  ->  softmax (last axis)  ->  p v
//   =>  _attention(q, k, v), scale = the scalar (or its inverse) / temperature
//
// The scalar is a _mul_scalar's or _div_scalar's, or a one-element float
// constant's that a broadcast_mul or broadcast_div (ONNX's Mul and Div)
// applies without changing the shape; such a constant goes with the node.
//
// Each product is a _strided_batch_dot (as fuse_strided_batch_dot leaves
// multi-head attention) or a batch_dot, whose transpose flags become
// strides; both float, not quantized. The first writes its (batch, m, n)
// result contiguous; softmax normalises the last axis without lengths; the
// second reads that (batch, m, n) as its contiguous left operand, with k ==
// n. Every intermediate value is read by the next step alone and is no
// graph output. The fused node keeps the second product's name, output and
// out strides, and sits where that product was.
//
// It fuses only where the target's backend has an _attention kernel
// (find_kernel) of float32 that takes the node (OpKernel::supports: the
// CUDA kernel's largest head size); elsewhere the graph stays as it is.
#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "passes/passes.h"
#include "passes/rewrite_util.h"

namespace hybgen {
namespace {

// One batched product as strides: lhs (m x k), rhs (k x n) and out (m x n)
// matrices, element (i, j) of matrix p at p * s[0] + i * s[1] + j * s[2].
struct AttentionProduct {
  int64_t batch = 0, m = 0, n = 0, k = 0;
  std::vector<int64_t> lhs, rhs, out;
  Shape out_shape;
};

bool attention_float(const Graph& graph, const std::string& value) {
  const TensorType& t = graph.type(value);
  return t.dtype == DType::kFloat32 && t.quantization.empty();
}

// `node` as a float AttentionProduct, or nullopt when it is none.
std::optional<AttentionProduct> attention_product(const Graph& graph, const Node& node) {
  const OpDef& def = find_op(node.op);
  if (def.name != "_strided_batch_dot" && def.name != "batch_dot") return std::nullopt;
  if (node.inputs.size() != 2 || node.outputs.size() != 1) return std::nullopt;
  for (const std::string& v : {node.inputs[0], node.inputs[1], node.outputs[0]})
    if (!attention_float(graph, v)) return std::nullopt;
  const Attrs a = normalize_attrs(def, node.attrs);
  if (a.has("out_scale")) return std::nullopt;
  AttentionProduct p;
  if (def.name == "_strided_batch_dot") {
    p = {a.get_int("batch"),
         a.get_int("m"),
         a.get_int("n"),
         a.get_int("k"),
         a.get_ints("lhs_strides"),
         a.get_ints("rhs_strides"),
         a.get_ints("out_strides"),
         a.get_ints("out_shape")};
    return p;
  }
  const Shape& sa = graph.type(node.inputs[0]).shape;
  const Shape& out = graph.type(node.outputs[0]).shape;
  if (sa.size() != 3 || out.size() != 3) return std::nullopt;
  const bool ta = a.get_bool("transpose_a"), tb = a.get_bool("transpose_b");
  p.batch = out[0], p.m = out[1], p.n = out[2], p.k = ta ? sa[1] : sa[2];
  p.lhs = ta ? std::vector<int64_t>{p.m * p.k, 1, p.m} : std::vector<int64_t>{p.m * p.k, p.k, 1};
  p.rhs = tb ? std::vector<int64_t>{p.k * p.n, 1, p.k} : std::vector<int64_t>{p.k * p.n, p.n, 1};
  p.out = {p.m * p.n, p.n, 1};
  p.out_shape = out;
  return p;
}

// True when `strides` lay (batch, rows, cols) matrices out contiguously;
// an axis of size 1 may have any stride.
bool attention_contiguous(const std::vector<int64_t>& strides, int64_t batch, int64_t rows, int64_t cols) {
  const int64_t sizes[] = {batch, rows, cols}, want[] = {rows * cols, cols, 1};
  for (int i = 0; i < 3; ++i)
    if (sizes[i] != 1 && strides[static_cast<std::size_t>(i)] != want[i]) return false;
  return true;
}

// The producer of `value` when `reader` alone reads it and it is no graph output; else -1.
int attention_private_producer(const Graph& graph, const ValueIndex& index, const std::string& value, int reader) {
  const std::vector<int>& readers = index.consumers(value);
  if (graph.is_output(value) || readers.size() != 1 || readers[0] != reader) return -1;
  return index.producer(value);
}

// A scaling of the scores: the factor and the scaled value (the node's
// other input a constant, if any).
struct AttentionScaling {
  double factor;
  std::string scores, constant;
};

// `node` as a scaling of a float value: _mul_scalar or _div_scalar, or
// broadcast_mul / broadcast_div by a float constant of one element (ONNX's
// Mul and Div) that leaves the shape as it is; nullopt for anything else.
std::optional<AttentionScaling> attention_scaling(const Graph& graph, const Node& node) {
  const OpDef& def = find_op(node.op);
  if (node.outputs.size() != 1) return std::nullopt;
  if (def.name == "_mul_scalar" || def.name == "_div_scalar") {
    const Attrs a = normalize_attrs(def, node.attrs);
    if (a.has("out_scale") || node.inputs.size() != 1) return std::nullopt;
    const double s = static_cast<float>(a.get_float("scalar"));  // as the kernel rounds it
    return AttentionScaling{def.name == "_mul_scalar" ? s : 1.0 / s, node.inputs[0], ""};
  }
  if ((def.name != "broadcast_mul" && def.name != "broadcast_div") || node.inputs.size() != 2) return std::nullopt;
  // x * c, c * x or x / c.
  for (std::size_t c = def.name == "broadcast_div" ? 1 : 0; c < 2; ++c) {
    const std::string& constant = node.inputs[c];
    const std::string& scores = node.inputs[1 - c];
    if (!has_constant_data(graph, constant) || graph.constants.at(constant).type.num_elements() != 1 ||
        !graph.constants.at(constant).type.quantization.empty() ||
        graph.type(node.outputs[0]).shape != graph.type(scores).shape)
      continue;
    const double s = graph.constants.at(constant).f32_data()[0];
    return AttentionScaling{def.name == "broadcast_mul" ? s : 1.0 / s, scores, constant};
  }
  return std::nullopt;
}

std::optional<int> fuse_attention_at(Graph& graph, const LazyValueIndex& values, int index, const Target& target) {
  const Node& second_node = graph.nodes[static_cast<std::size_t>(index)];
  const std::optional<AttentionProduct> second = attention_product(graph, second_node);
  if (!second) return std::nullopt;
  const ValueIndex& vi = values.get();
  // softmax over the last axis, its input the scores (perhaps scaled).
  const int softmax_at = attention_private_producer(graph, vi, second_node.inputs[0], index);
  if (softmax_at < 0) return std::nullopt;
  const Node& softmax = graph.nodes[static_cast<std::size_t>(softmax_at)];
  const OpDef& softmax_def = find_op(softmax.op);
  if (softmax_def.name != "softmax" || softmax.inputs.size() != 1 || !attention_float(graph, softmax.inputs[0]))
    return std::nullopt;
  const Attrs sa = normalize_attrs(softmax_def, softmax.attrs);
  const std::size_t rank = graph.type(softmax.inputs[0]).shape.size();
  if (sa.get_bool("use_length") || sa.has("out_scale") || rank == 0 ||
      normalize_axis(sa.get_int("axis"), rank) != static_cast<int>(rank) - 1)
    return std::nullopt;
  double scale = 1.0 / sa.get_float("temperature");
  std::vector<int> gone{index, softmax_at};
  int first_at = attention_private_producer(graph, vi, softmax.inputs[0], softmax_at);
  if (first_at < 0) return std::nullopt;
  std::string scale_constant;
  if (const std::optional<AttentionScaling> scaling =
          attention_scaling(graph, graph.nodes[static_cast<std::size_t>(first_at)])) {
    if (!attention_float(graph, scaling->scores)) return std::nullopt;
    scale *= scaling->factor;
    scale_constant = scaling->constant;
    gone.push_back(first_at);
    first_at = attention_private_producer(graph, vi, scaling->scores, first_at);
    if (first_at < 0) return std::nullopt;
  }
  if (!std::isfinite(scale)) return std::nullopt;
  const Node& first_node = graph.nodes[static_cast<std::size_t>(first_at)];
  const std::optional<AttentionProduct> first = attention_product(graph, first_node);
  if (!first) return std::nullopt;
  gone.push_back(first_at);
  // The scores (batch, m, n) contiguous in, the same read back as the second's left operand.
  if (first->out_shape != Shape{first->batch, first->m, first->n} ||
      !attention_contiguous(first->out, first->batch, first->m, first->n))
    return std::nullopt;
  if (second->batch != first->batch || second->m != first->m || second->k != first->n ||
      !attention_contiguous(second->lhs, second->batch, second->m, second->k))
    return std::nullopt;

  Attrs attrs;
  attrs.set("batch", first->batch);
  attrs.set("m", first->m);
  attrs.set("n", first->n);
  attrs.set("d", first->k);
  attrs.set("dv", second->n);
  attrs.set("q_strides", first->lhs);
  // k^T's element (kk, j) is k's (j, kk).
  attrs.set("k_strides", std::vector<int64_t>{first->rhs[0], first->rhs[2], first->rhs[1]});
  attrs.set("v_strides", second->rhs);
  attrs.set("out_strides", second->out);
  attrs.set("out_shape", second->out_shape);
  attrs.set("scale", scale);
  const OpDef& def = find_op("_attention");
  const OpKernel* kernel = find_kernel(target.backend, def.name);
  if (!kernel) return std::nullopt;
  const std::vector<std::string> inputs{first_node.inputs[0], first_node.inputs[1], second_node.inputs[1]};
  std::vector<TensorType> in;
  std::vector<bool> constant;
  for (const std::string& value : inputs) {
    in.push_back(graph.type(value));
    constant.push_back(graph.is_constant(value));
  }
  std::vector<TensorType> out;
  try {
    out = def.infer(attrs, in);
  } catch (const Error&) {
    return std::nullopt;
  }
  const KernelSite site{attrs, in, out, constant, target, ""};
  if (kernel->supports && !kernel->supports(site)) return std::nullopt;
  Node fused{second_node.name, def.name, attrs, inputs, {second_node.outputs[0]}};
  const int lowest = replace_nodes(graph, gone, index, std::move(fused));
  if (!scale_constant.empty()) erase_unread_constants(graph, {scale_constant});
  return lowest;
}

}  // namespace

bool fuse_attention(Graph& graph, const Target& target) {
  const OpKernel* kernel = find_kernel(target.backend, "_attention");
  if (!kernel || std::find(kernel->dtypes.begin(), kernel->dtypes.end(), DType::kFloat32) == kernel->dtypes.end())
    return false;
  // rewrite_each_node's walk, with the target.
  bool changed = false;
  LazyValueIndex values(graph);
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i)
    if (const std::optional<int> touched = fuse_attention_at(graph, values, i, target)) {
      changed = true;
      values.reset();
      i = *touched - 1;
    }
  return changed;
}

}  // namespace hybgen
