// L2Normalization: divide by the L2 norm, y = x / sqrt(sum(x^2) + eps), the
// sum taken per mode as MXNet 1.9 does:
//   instance: over all axes but the first (one norm per sample);
//   channel:  over axis 1 (one norm per sample and spatial position; 3+ dims);
//   spatial:  over axes 2.. (one norm per sample and channel; 3+ dims).
// Each views the data as [outer, n, inner] with the sum over n. The C++
// kernel is templates/kernels/l2_normalization.inc, the CUDA one
// templates/cuda/kernels/l2_normalization.inc.
#include <cmath>
#include <string>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

// The [outer, n, inner] layout that `mode` normalises along (n).
AxisView mode_view(const Attrs& a, const Shape& s) {
  const std::string& mode = a.get_string("mode");
  if (mode == "instance") {
    if (s.size() < 2) throw Error("instance mode needs at least 2 dims, got " + shape_str(s));
    return {s[0], dims_product(s, 1, s.size()), 1};
  }
  if (s.size() < 3) throw Error(mode + " mode needs at least 3 dims, got " + shape_str(s));
  if (mode == "channel") return {s[0], s[1], dims_product(s, 2, s.size())};
  return {s[0] * s[1], dims_product(s, 2, s.size()), 1};
}

const OpRegistrar l2_normalization_op([] {
  OpDef d;
  d.name = "L2Normalization";
  d.summary = "divide by the L2 norm per sample (instance), per position across channels (channel) or per channel";
  d.input_names = {"data"};
  d.attrs = {{"eps", AttrKind::kFloat, 1e-10, "added to the sum of squares", {}},
             {"mode", AttrKind::kString, std::string("instance"), "the axes the norm is taken over",
              {"instance", "channel", "spatial"}}};
  d.fusion = FusionClass::kReduction;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const double eps = a.get_float("eps");
    if (!(eps >= 0) || !std::isfinite(eps)) throw Error("eps must be finite and non-negative, got " + cpp_float(eps));
    mode_view(a, in[0].shape);
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const KernelIO& io) {
    const AxisView v = mode_view(io.attrs, io.in_types[0].shape);
    const double eps = io.attrs.get_float("eps");
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t j = 0; j < v.inner; ++j) {
        const float* x = io.input<float>(0) + o * v.n * v.inner + j;
        float* y = io.output<float>(0) + o * v.n * v.inner + j;
        double sum = 0;
        for (int64_t i = 0; i < v.n; ++i) sum += static_cast<double>(x[i * v.inner]) * x[i * v.inner];
        const double norm = std::sqrt(sum + eps);
        for (int64_t i = 0; i < v.n; ++i) y[i * v.inner] = static_cast<float>(x[i * v.inner] / norm);
      }
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    const AxisView v = mode_view(ctx.node.attrs, ctx.in_types[0].shape);
                    return KernelCall{{"l2_normalization"},
                                      "hg_l2_normalization(" + ctx.in[0] + ", " + ctx.out[0] + ", " +
                                          std::to_string(v.outer) + ", " + std::to_string(v.n) + ", " +
                                          std::to_string(v.inner) + ", " + cpp_float(ctx.node.attrs.get_float("eps")) +
                                          ", " + ctx.pool + ");"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    return 3.0 * static_cast<double>(in[0].num_elements());
  };
  auto mode = [](const std::string& m, double eps = 1e-10) {
    Attrs a;
    a.set("mode", m);
    a.set("eps", eps);
    return a;
  };
  // Rows shorter and longer than the kernel's 16 partial sums; channel mode
  // with fewer and more positions than its 16 columns at a time.
  d.examples = {{mode("instance"), {{2, 3, 4, 5}}},
                {mode("instance", 1e-3), {{3, 7}}},
                {mode("channel"), {{2, 5, 3, 7}}},
                {mode("channel"), {{1, 3, 37}}},
                {mode("spatial"), {{2, 3, 4, 5}}},
                {mode("spatial", 1e-4), {{1, 2, 2, 3, 3}}},
                {mode("instance"), {{1, 1, 1}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
