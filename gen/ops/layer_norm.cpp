// LayerNorm: normalise over one axis (default the last) with the sample's own
// mean and variance, then scale by gamma and shift by beta on that axis.
// Float only: no integer method (I-BERT's) keeps it within one step of
// quantize(LayerNorm(x)), so int8 models run it between a dequantize and a
// quantize (docs/quantization.md).
#include <cmath>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

const OpRegistrar layer_norm_op([] {
  OpDef d;
  d.name = "LayerNorm";
  d.summary = "layer normalisation over one axis";
  d.input_names = {"data", "gamma", "beta"};
  d.min_inputs = d.max_inputs = 3;
  d.attrs = {{"axis", AttrKind::kInt, int64_t{-1}, "the normalised axis", {}},
             {"eps", AttrKind::kFloat, 1e-5, "added to the variance", {}},
             {"output_mean_var", AttrKind::kBool, false, "training only", {}}};
  d.fusion = FusionClass::kReduction;
  d.mixes_first_axis = mixes_along_axis_attr("axis");
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    if (!in[0].quantization.empty())
      throw Error("LayerNorm is computed in float; quantized data needs a dequantize first");
    const AxisView v = axis_view(in[0].shape, a.get_int("axis"));
    for (std::size_t i = 1; i < 3; ++i)
      if (in[i].shape != Shape{v.n})
        throw Error(std::string(i == 1 ? "gamma" : "beta") + " has shape " + shape_str(in[i].shape) + ", expected " +
                    shape_str({v.n}));
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const KernelIO& io) {
    const AxisView v = axis_view(io.in_types[0].shape, io.attrs.get_int("axis"));
    const double eps = io.attrs.get_float("eps");
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t in = 0; in < v.inner; ++in) {
        const float* x = io.input<float>(0) + o * v.n * v.inner + in;
        float* y = io.output<float>(0) + o * v.n * v.inner + in;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < v.n; ++i) mean += x[i * v.inner];
        mean /= static_cast<double>(v.n);
        for (int64_t i = 0; i < v.n; ++i) var += (x[i * v.inner] - mean) * (x[i * v.inner] - mean);
        const double inv_std = 1.0 / std::sqrt(var / static_cast<double>(v.n) + eps);
        for (int64_t i = 0; i < v.n; ++i)
          y[i * v.inner] =
              static_cast<float>((x[i * v.inner] - mean) * inv_std * io.input<float>(1)[i] + io.input<float>(2)[i]);
      }
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    const AxisView v = axis_view(ctx.in_types[0].shape, ctx.node.attrs.get_int("axis"));
                    return KernelCall{{"layer_norm"},
                                      "hg_layer_norm(" + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.in[2] + ", " +
                                          ctx.out[0] + ", " + std::to_string(v.outer) + ", " + std::to_string(v.n) +
                                          ", " + std::to_string(v.inner) + ", " +
                                          cpp_float(ctx.node.attrs.get_float("eps")) + ");"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    return 6.0 * static_cast<double>(in[0].num_elements());
  };
  d.weight_shapes = [](const Attrs& a, const Shape& data) {
    const Shape n{axis_view(data, a.get_int("axis")).n};
    return std::vector<Shape>{n, n};
  };
  Attrs last, middle;
  last.set("axis", int64_t{-1});
  middle.set("axis", int64_t{1});
  middle.set("eps", 1e-3);
  // Rows of whole and partial groups of the kernel's 16 partial sums; an
  // inner axis wider than 16 columns.
  d.examples = {{last, {{4, 16}, {16}, {16}}},
                {middle, {{2, 5, 3}, {5}, {5}}},
                {last, {{3, 45}, {45}, {45}}},
                {middle, {{1, 6, 21}, {6}, {6}}},
                {last, {{2, 300}, {300}, {300}}}};  // AVX-512: 4 vectors at a time, single vectors, a masked tail
  return d;
}());

}  // namespace
}  // namespace hybgen
