// fuse_strided_batch_dot: a batch_dot whose operands come through, or whose
// result goes through, reshapes and transposes becomes one
// _strided_batch_dot (gen/ops/matmul.cpp) that reads the tensors before
// those views and writes the tensor after them in place, through strides.
// Multi-head attention is the case: per head, q, k and v are slices of
// (tokens, heads * size) projections, and the heads' results go back into
// one (tokens, heads * size) tensor:
//
//   dense -> Reshape (0, 0, H, -1) -> transpose (0, 2, 1, 3) -> Reshape (-3,
//   -2)
//     -> batch_dot -> Reshape (-4, -1, H, -2) -> transpose (0, 2, 1, 3) ->
//     Reshape (0, 0, -3)
//   =>  dense -> _strided_batch_dot
//
// so the four transposed copies of a layer, and their arena, are gone.
//
// A chain is the Reshape-like views (OpDef::view) and transposes between a
// tensor and the batch_dot, each of whose intermediate values only the next
// step reads and none is a graph output. Its steps are followed as strided
// views of the tensor (numpy's no-copy reshape: merged axes must be
// contiguous with each other); a chain folds when it has a transpose, its
// view is a batch of matrices with rows or columns of unit stride, and, on
// the output side, each result row lies within one run of the last axis
// (the epilogue's channel). Where the whole chain does not fold, the longest
// part next to the batch_dot that does is taken. The fused node keeps the
// batch_dot's name and sits where the last node it replaces was.
#include <algorithm>
#include <optional>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/transpose.h"
#include "passes/passes.h"
#include "passes/rewrite_util.h"

namespace hybgen {
namespace {

// A tensor's elements seen through reshapes and transposes: element index
// (i0, i1, ...) of the view is at sum(i_d * strides[d]) in the tensor.
struct View {
  Shape shape;
  std::vector<int64_t> strides;
};

View contiguous(const Shape& shape) {
  View v{shape, std::vector<int64_t>(shape.size(), 1)};
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) v.strides[d] = v.strides[d + 1] * shape[d + 1];
  return v;
}

View permuted(const View& v, const std::vector<int64_t>& axes) {
  View out;
  for (int64_t a : axes) {
    out.shape.push_back(v.shape[a]);
    out.strides.push_back(v.strides[a]);
  }
  return out;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& axes) {
  std::vector<int64_t> inv(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) inv[axes[i]] = static_cast<int64_t>(i);
  return inv;
}

// `v` under shape `to` without moving elements, or nullopt when a group of
// axes that `to` merges or splits is not contiguous within itself. Axes of
// size 1 carry no position; they get stride 1.
std::optional<View> reshaped(const View& v, const Shape& to) {
  Shape from_dims, to_dims;
  std::vector<int64_t> from_strides;
  std::vector<std::size_t> to_axes;
  for (std::size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] != 1) from_dims.push_back(v.shape[d]), from_strides.push_back(v.strides[d]);
  for (std::size_t d = 0; d < to.size(); ++d)
    if (to[d] != 1) to_dims.push_back(to[d]), to_axes.push_back(d);
  std::vector<int64_t> to_strides(to_dims.size());
  std::size_t fi = 0, ti = 0;
  while (fi < from_dims.size() && ti < to_dims.size()) {
    // The smallest groups [fi, fj) and [ti, tj) with equal products.
    std::size_t fj = fi + 1, tj = ti + 1;
    int64_t from_size = from_dims[fi], to_size = to_dims[ti];
    while (from_size != to_size) {
      if (from_size < to_size) {
        if (fj == from_dims.size()) return std::nullopt;
        from_size *= from_dims[fj++];
      } else {
        if (tj == to_dims.size()) return std::nullopt;
        to_size *= to_dims[tj++];
      }
    }
    for (std::size_t d = fi; d + 1 < fj; ++d)
      if (from_strides[d] != from_dims[d + 1] * from_strides[d + 1]) return std::nullopt;
    to_strides[tj - 1] = from_strides[fj - 1];
    for (std::size_t d = tj - 1; d > ti; --d) to_strides[d - 1] = to_strides[d] * to_dims[d];
    fi = fj;
    ti = tj;
  }
  if (fi != from_dims.size() || ti != to_dims.size()) return std::nullopt;
  View out{to, std::vector<int64_t>(to.size(), 1)};
  for (std::size_t i = 0; i < to_axes.size(); ++i) out.strides[to_axes[i]] = to_strides[i];
  return out;
}

bool is_transpose(const Node& node) { return find_op(node.op).name == "transpose"; }

// A step a chain may hold: one value in, one out, and either a transpose or
// a view that keeps the element order.
bool is_view_step(const Node& node) {
  const OpDef& def = find_op(node.op);
  return node.inputs.size() == 1 && node.outputs.size() == 1 && (def.view || def.name == "transpose");
}

bool only_read_by(const Graph& graph, const ValueIndex& index, const std::string& value, int reader) {
  const std::vector<int>& readers = index.consumers(value);
  return !graph.is_output(value) && readers.size() == 1 && readers[0] == reader;
}

// `view` after `step` (from its input to its output), or, with `backward`,
// from its output to its input.
std::optional<View> through(const Graph& graph, const Node& step, const View& view, bool backward) {
  if (is_transpose(step)) {
    const std::vector<int64_t> axes = transpose_axes(step.attrs, graph.type(step.inputs[0]).shape.size());
    return permuted(view, backward ? inverse(axes) : axes);
  }
  return reshaped(view, graph.type(backward ? step.inputs[0] : step.outputs[0]).shape);
}

// (batch, row, column) strides of a 3-D view read as matrices (i, j), the
// axes swapped when `transposed`; axes of size 1 get stride 1.
std::vector<int64_t> matrix_strides(const View& v, bool transposed) {
  std::vector<int64_t> s = v.strides;
  for (std::size_t d = 0; d < 3; ++d)
    if (v.shape[d] == 1) s[d] = 1;
  if (transposed) std::swap(s[1], s[2]);
  return s;
}

// Nodes (indices) from a source tensor to `value` through view steps,
// nearest first, each read by nothing else.
std::vector<int> chain_into(const Graph& graph, const ValueIndex& index, std::string value, int reader) {
  std::vector<int> chain;
  for (int p = index.producer(value); p >= 0 && is_view_step(graph.nodes[p]) && only_read_by(graph, index, value, reader);
       p = index.producer(value)) {
    chain.push_back(p);
    reader = p;
    value = graph.nodes[p].inputs[0];
  }
  return chain;
}

// Nodes from `value` on through view steps, nearest first, while each value
// has that step alone as reader.
std::vector<int> chain_out_of(const Graph& graph, const ValueIndex& index, std::string value) {
  std::vector<int> chain;
  for (;;) {
    const std::vector<int>& readers = index.consumers(value);
    if (graph.is_output(value) || readers.size() != 1 || !is_view_step(graph.nodes[readers[0]])) break;
    chain.push_back(readers[0]);
    value = graph.nodes[readers[0]].outputs[0];
  }
  return chain;
}

bool has_transpose(const Graph& graph, const std::vector<int>& chain, std::size_t length) {
  for (std::size_t i = 0; i < length; ++i)
    if (is_transpose(graph.nodes[chain[i]])) return true;
  return false;
}

// What one side of the batch_dot folds: the first `length` nodes of its
// chain, the tensor it then reads or writes, and its matrix strides.
struct Side {
  std::size_t length = 0;
  std::string tensor;
  std::vector<int64_t> strides;
};

// Each foldable part of `chain` (nearest the batch_dot first) as a Side,
// longest first, then `value` itself (the batch_dot's operand or result,
// no chain). An operand's part starts at a tensor and is followed forwards;
// the result's ends in one and is followed backwards from it, which gives
// where the batch_dot's (B, M, N) output lies in that tensor.
std::vector<Side> sides_of(const Graph& graph, const std::vector<int>& chain, const std::string& value, bool result,
                           bool transposed) {
  std::vector<Side> sides;
  for (std::size_t length = chain.size(); length > 0 && has_transpose(graph, chain, length); --length) {
    const Node& far = graph.nodes[chain[length - 1]];
    const std::string tensor = result ? far.outputs[0] : far.inputs[0];
    std::optional<View> view = contiguous(graph.type(tensor).shape);
    for (std::size_t i = length; i-- > 0 && view;) view = through(graph, graph.nodes[chain[i]], *view, result);
    if (view) sides.push_back({length, tensor, matrix_strides(*view, transposed)});
  }
  sides.push_back({0, value, matrix_strides(contiguous(graph.type(value).shape), transposed)});
  return sides;
}

// The _strided_batch_dot node for these sides, or nullopt when its op
// rejects them (OpDef::infer checks strides, bounds and channels). `dims`:
// batch, m, n, k.
std::optional<Node> strided_node(const Graph& graph, const Node& dot, const std::vector<int64_t>& dims, const Side& a,
                                 const Side& b, const Side& y) {
  Attrs attrs;
  // A quantized product keeps its output's scale.
  for (const char* q : {"out_scale", "out_zero_point"})
    if (dot.attrs.has(q)) attrs.set(q, dot.attrs.get(q));
  attrs.set("batch", dims[0]);
  attrs.set("m", dims[1]);
  attrs.set("n", dims[2]);
  attrs.set("k", dims[3]);
  attrs.set("lhs_strides", a.strides);
  attrs.set("rhs_strides", b.strides);
  attrs.set("out_strides", y.strides);
  attrs.set("out_shape", graph.type(y.tensor).shape);
  const OpDef& def = find_op("_strided_batch_dot");
  try {
    def.infer(attrs, {graph.type(a.tensor), graph.type(b.tensor)});
  } catch (const Error&) {
    return std::nullopt;
  }
  return Node{dot.name, def.name, attrs, {a.tensor, b.tensor}, {y.tensor}};
}

// Fuses batch_dot `index` when a chain folds: the first combination of sides
// the op accepts, the longest chains first. Returns the lowest index of a
// node it removed or replaced, or nullopt.
std::optional<int> fuse_strided_batch_dot_at(Graph& graph, const LazyValueIndex& values, int index) {
  const Node& dot = graph.nodes[index];
  if (find_op(dot.op).name != "batch_dot" || graph.type(dot.outputs[0]).shape.size() != 3) return std::nullopt;
  const Attrs attrs = normalize_attrs(find_op(dot.op), dot.attrs);
  const bool ta = attrs.get_bool("transpose_a"), tb = attrs.get_bool("transpose_b");
  const Shape& result = graph.type(dot.outputs[0]).shape;
  const std::vector<int64_t> dims{result[0], result[1], result[2], graph.type(dot.inputs[0]).shape[ta ? 1 : 2]};
  const std::vector<int> in_a = chain_into(graph, values.get(), dot.inputs[0], index),
                         in_b = chain_into(graph, values.get(), dot.inputs[1], index);
  const std::vector<int> out = chain_out_of(graph, values.get(), dot.outputs[0]);
  for (const Side& a : sides_of(graph, in_a, dot.inputs[0], false, ta))
    for (const Side& b : sides_of(graph, in_b, dot.inputs[1], false, tb))
      for (const Side& y : sides_of(graph, out, dot.outputs[0], true, false)) {
        if (a.length + b.length + y.length == 0) continue;
        std::optional<Node> fused = strided_node(graph, dot, dims, a, b, y);
        if (!fused) continue;
        std::vector<int> gone{index};
        gone.insert(gone.end(), in_a.begin(), in_a.begin() + a.length);
        gone.insert(gone.end(), in_b.begin(), in_b.begin() + b.length);
        gone.insert(gone.end(), out.begin(), out.begin() + y.length);
        return replace_nodes(graph, gone, y.length ? out[y.length - 1] : index, std::move(*fused));
      }
  return std::nullopt;
}

}  // namespace

bool fuse_strided_batch_dot(Graph& graph) { return rewrite_each_node(graph, fuse_strided_batch_dot_at); }

}  // namespace hybgen
