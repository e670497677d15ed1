// SwapAxis (MXNet's swapaxes): exchange two axes, dim1 and dim2 (negative:
// from the end). Gluon's recurrent layers with layout NTC export one on each
// side of the RNN op. It is the transpose whose permutation swaps the two,
// so its shape rule, reference and printer are transpose's.
#include "ops/swap_axis.h"

#include <numeric>
#include <utility>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

Attrs swap_axis_as_transpose(const Attrs& a, std::size_t rank) {
  auto axis = [&](const char* name) {
    const int64_t v = a.get_int(name);
    const int64_t r = static_cast<int64_t>(rank);
    if (v < -r || v >= r)
      throw Error(std::string(name) + " = " + std::to_string(v) + " is out of range for rank " + std::to_string(rank));
    return static_cast<std::size_t>(v < 0 ? v + r : v);
  };
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  if (rank > 0) std::swap(perm[axis("dim1")], perm[axis("dim2")]);
  Attrs t;
  t.set("axes", perm);
  return t;
}

namespace {

const OpDef& transpose() { return find_op("transpose"); }

const OpRegistrar swap_axis_op([] {
  OpDef d;
  d.name = "SwapAxis";
  d.aliases = {"swapaxes", "_npi_swapaxes"};
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<bool>&) {
    const std::size_t rank = in[0].shape.size();
    return is_first_axis(a.get_int("dim1"), rank) != is_first_axis(a.get_int("dim2"), rank);
  };
  d.summary = "exchange two axes";
  d.input_names = {"data"};
  d.attrs = {{"dim1", AttrKind::kInt, int64_t{0}, "the first axis", {}},
             {"dim2", AttrKind::kInt, int64_t{0}, "the second axis", {}}};
  d.fusion = FusionClass::kInjective;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    if (in[0].shape.empty()) throw Error("data must have at least one axis");
    return transpose().infer(swap_axis_as_transpose(a, in[0].shape.size()), in);
  };
  d.reference = [](const KernelIO& io) {
    const Attrs t = swap_axis_as_transpose(io.attrs, io.in_types[0].shape.size());
    transpose().reference(KernelIO{t, io.in, io.in_types, io.out, io.out_types});
  };
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  Attrs tnc, last, same;
  tnc.set("dim1", int64_t{0});
  tnc.set("dim2", int64_t{1});
  last.set("dim1", int64_t{-1});
  last.set("dim2", int64_t{1});
  same.set("dim1", int64_t{1});
  same.set("dim2", int64_t{1});
  d.examples = {{tnc, {{3, 2, 5}}}, {last, {{2, 3, 4, 5}}}, {same, {{4, 3}}}, {tnc, {{1, 7, 1}}}};
  return d;
}());

// The transpose's C++ kernel, given the transpose's attributes.
const KernelRegistrar swap_axis_cpp(Backend::kCpp, "SwapAxis", OpKernel{[](const EmitContext& ctx) {
                                      Node node = ctx.node;
                                      node.attrs = swap_axis_as_transpose(ctx.node.attrs, ctx.in_types[0].shape.size());
                                      return find_kernel(Backend::kCpp, "transpose")->emit(emit_context_for(node, ctx));
                                    }});

}  // namespace
}  // namespace hybgen
