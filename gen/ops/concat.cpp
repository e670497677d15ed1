// Concat along `dim` (Gluon's HybridConcurrent). Each input is copied into its
// slice of the output viewed as [outer, total, inner].
#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

std::vector<TensorType> concat_infer(const Attrs& a, const std::vector<TensorType>& in) {
  if (a.has("num_args") && a.get_int("num_args") != static_cast<int64_t>(in.size()))
    throw Error("num_args is " + std::to_string(a.get_int("num_args")) + " but the node has " +
                std::to_string(in.size()) + " inputs");
  const int axis = normalize_axis(a.get_int("dim"), in[0].shape.size());
  Shape out = in[0].shape;
  for (std::size_t i = 1; i < in.size(); ++i) {
    const Shape& s = in[i].shape;
    if (in[i].dtype != in[0].dtype)
      throw Error("input " + std::to_string(i) + " is " + dtype_name(in[i].dtype) + ", input 0 " + dtype_name(in[0].dtype));
    bool same = s.size() == out.size();
    for (std::size_t d = 0; same && d < s.size(); ++d) same = static_cast<int>(d) == axis || s[d] == out[d];
    if (!same)
      throw Error("input " + std::to_string(i) + " has shape " + shape_str(s) + ", which does not match " +
                  shape_str(in[0].shape) + " outside axis " + std::to_string(axis));
    out[axis] += s[axis];
  }
  return {TensorType{out, in[0].dtype}};
}

void concat_reference(const KernelIO& io) {
  const Shape& out = io.out_types[0].shape;
  const int axis = normalize_axis(io.attrs.get_int("dim"), out.size());
  const int64_t outer = dims_product(out, 0, axis), inner = dims_product(out, axis + 1, out.size());
  int64_t offset = 0;
  // Bytes, so every dtype is served alike.
  const auto size = static_cast<int64_t>(dtype_size(io.out_types[0].dtype));
  auto* bytes_out = reinterpret_cast<unsigned char*>(io.output<float>(0));
  for (std::size_t i = 0; i < io.in.size(); ++i) {
    const int64_t part = io.in_types[i].shape[axis] * inner;
    const auto* bytes_in = reinterpret_cast<const unsigned char*>(io.input<float>(i));
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(bytes_out + (o * out[axis] * inner + offset) * size,
                  bytes_in + o * part * size, static_cast<std::size_t>(part * size));
    offset += part;
  }
}

KernelCall concat_emit_cpp(const EmitContext& ctx) {
  const Shape& out = ctx.out_types[0].shape;
  const int axis = normalize_axis(ctx.node.attrs.get_int("dim"), out.size());
  const int64_t outer = dims_product(out, 0, axis), inner = dims_product(out, axis + 1, out.size());
  std::string code;
  bool copies = false;
  int64_t offset = 0;
  for (std::size_t i = 0; i < ctx.in.size(); ++i) {
    const int64_t part = ctx.in_types[i].shape[axis] * inner;
    const bool placed = i < ctx.in_placed.size() && ctx.in_placed[i];
    if (!code.empty()) code += "\n";
    if (placed) {
      code += "// input " + std::to_string(i) + " was written in place by its producer";
    } else {
      code += "hg_concat_part(" + ctx.in[i] + ", " + ctx.out[0] + " + " + std::to_string(offset) + ", " +
              std::to_string(outer) + ", " + std::to_string(part) + ", " + std::to_string(out[axis] * inner) + ");";
      copies = true;
    }
    offset += part;
  }
  return {copies ? std::vector<std::string>{"concat"} : std::vector<std::string>{}, code};
}

// With nothing before the axis but size-1 dims, input i is one contiguous
// block of the output, starting after the inputs before it.
std::vector<std::size_t> input_placement(const Attrs& a, const std::vector<TensorType>& in, const TensorType& out) {
  const int axis = normalize_axis(a.get_int("dim"), out.shape.size());
  if (dims_product(out.shape, 0, axis) != 1) return {};
  std::vector<std::size_t> offsets;
  std::size_t offset = 0;
  for (const auto& t : in) {
    offsets.push_back(offset);
    offset += t.bytes();
  }
  return offsets;
}

Attrs concat(int64_t dim, int64_t n) {
  Attrs a;
  a.set("dim", dim);
  a.set("num_args", n);
  return a;
}

const OpRegistrar concat_op([] {
  OpDef d;
  d.name = "Concat";
  d.aliases = {"concat"};
  d.summary = "join inputs along an axis";
  d.input_names = {"data0", "data1", "..."};
  d.min_inputs = 1;
  d.max_inputs = -1;
  d.attrs = {{"dim", AttrKind::kInt, int64_t{1}, "the axis to join", {}},
             {"num_args", AttrKind::kInt, int64_t{0}, "number of inputs (MXNet bookkeeping; 0: any)", {}}};
  d.fusion = FusionClass::kInjective;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    Attrs checked = a;
    if (a.get_int("num_args") == 0) checked.erase("num_args");
    return concat_infer(checked, in);
  };
  d.reference = concat_reference;
  d.reference_dtypes = all_dtypes();
  register_kernel(Backend::kCpp, d.name, OpKernel{concat_emit_cpp});
  d.input_placement = input_placement;
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  d.examples = {{concat(1, 3), {{2, 3, 4}, {2, 1, 4}, {2, 2, 4}}},
                {concat(0, 2), {{1, 5}, {3, 5}}},
                {concat(-1, 2), {{2, 2, 3}, {2, 2, 1}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
