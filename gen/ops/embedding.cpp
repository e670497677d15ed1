// Embedding: look up rows of weight (input_dim, output_dim) by the indices in
// data (stored as floats, as MXNet does). Indices are clipped to
// [0, input_dim - 1] like MXNet's take with mode=clip.
#include "ir/error.h"
#include "ops/op.h"

namespace hybgen {
namespace {

const OpRegistrar embedding_op([] {
  OpDef d;
  d.name = "Embedding";
  d.summary = "rows of a table selected by index";
  d.input_names = {"data", "weight"};
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"input_dim", AttrKind::kInt, std::nullopt, "rows in the table", {}},
             {"output_dim", AttrKind::kInt, std::nullopt, "row length", {}},
             {"dtype", AttrKind::kString, std::string("float32"), "table type", {"float32"}},
             {"sparse_grad", AttrKind::kBool, false, "training only", {}}};
  d.fusion = FusionClass::kInjective;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const Shape want{a.get_int("input_dim"), a.get_int("output_dim")};
    if (in[1].shape != want)
      throw Error("weight has shape " + shape_str(in[1].shape) + ", expected " + shape_str(want));
    Shape out = in[0].shape;
    out.push_back(want[1]);
    return std::vector<TensorType>{TensorType{out, in[1].dtype}};
  };
  d.reference = [](const KernelIO& io) {
    const int64_t rows = io.attrs.get_int("input_dim"), dim = io.attrs.get_int("output_dim");
    const int64_t n = io.in_types[0].num_elements();
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = static_cast<int64_t>(io.input<float>(0)[i]);
      r = r < 0 ? 0 : (r >= rows ? rows - 1 : r);
      for (int64_t j = 0; j < dim; ++j) io.output<float>(0)[i * dim + j] = io.input<float>(1)[r * dim + j];
    }
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    return KernelCall{{"embedding"},
                                      "hg_embedding(" + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.out[0] + ", " +
                                          std::to_string(ctx.in_types[0].num_elements()) + ", " +
                                          std::to_string(ctx.node.attrs.get_int("input_dim")) + ", " +
                                          std::to_string(ctx.node.attrs.get_int("output_dim")) + ");"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  d.weight_shapes = [](const Attrs& a, const Shape&) {
    return std::vector<Shape>{{a.get_int("input_dim"), a.get_int("output_dim")}};
  };
  Attrs a;
  a.set("input_dim", int64_t{10});
  a.set("output_dim", int64_t{4});
  d.examples = {{a, {{2, 3}, {10, 4}}}, {a, {{5}, {10, 4}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
