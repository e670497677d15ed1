// LRN: local response normalisation across channels, as MXNet 1.9 computes
// it on NCHW data:
//   y[n,c,h,w] = x[n,c,h,w] * (knorm + alpha / nsize * sum x[n,c',h,w]^2)^-beta
// the sum over the channels c' in [c - nsize/2, c + nsize/2] that exist
// (nsize odd). The C++ kernel is templates/kernels/lrn.inc, the CUDA one
// templates/cuda/kernels/lrn.inc.
#include <algorithm>
#include <cmath>
#include <string>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

struct LrnView {
  int64_t n, c, plane;
};

LrnView view(const Attrs& a, const Shape& s) {
  if (s.size() != 4) throw Error("data must be NCHW (4 dims), got " + shape_str(s));
  const int64_t nsize = a.get_int("nsize");
  if (nsize <= 0 || nsize % 2 == 0 || nsize > (int64_t{1} << 30))
    throw Error("nsize must be a positive odd number, got " + std::to_string(nsize));
  for (const char* name : {"alpha", "beta", "knorm"})
    if (!std::isfinite(a.get_float(name))) throw Error(std::string(name) + " must be finite");
  return {s[0], s[1], s[2] * s[3]};
}

const OpRegistrar lrn_op([] {
  OpDef d;
  d.name = "LRN";
  d.summary = "local response normalisation across nsize neighbouring channels (NCHW)";
  d.input_names = {"data"};
  d.attrs = {{"alpha", AttrKind::kFloat, 1e-4, "the variance scale (divided by nsize)", {}},
             {"beta", AttrKind::kFloat, 0.75, "the power", {}},
             {"knorm", AttrKind::kFloat, 2.0, "the constant k", {}},
             {"nsize", AttrKind::kInt, std::nullopt, "the channel window, odd", {}}};
  d.fusion = FusionClass::kOpaque;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    view(a, in[0].shape);
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const KernelIO& io) {
    const LrnView v = view(io.attrs, io.in_types[0].shape);
    const int64_t half = io.attrs.get_int("nsize") / 2;
    const double salpha = io.attrs.get_float("alpha") / static_cast<double>(io.attrs.get_int("nsize"));
    const double beta = io.attrs.get_float("beta"), knorm = io.attrs.get_float("knorm");
    for (int64_t n = 0; n < v.n; ++n)
      for (int64_t c = 0; c < v.c; ++c)
        for (int64_t i = 0; i < v.plane; ++i) {
          double sum = 0;
          for (int64_t k = std::max<int64_t>(0, c - half); k <= std::min(v.c - 1, c + half); ++k) {
            const double x = io.input<float>(0)[(n * v.c + k) * v.plane + i];
            sum += x * x;
          }
          const int64_t at = (n * v.c + c) * v.plane + i;
          io.output<float>(0)[at] = static_cast<float>(io.input<float>(0)[at] * std::pow(knorm + salpha * sum, -beta));
        }
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    const Attrs& a = ctx.node.attrs;
                    const LrnView v = view(a, ctx.in_types[0].shape);
                    return KernelCall{{"lrn"},
                                      "hg_lrn(" + ctx.in[0] + ", " + ctx.out[0] + ", " + std::to_string(v.n) + ", " +
                                          std::to_string(v.c) + ", " + std::to_string(v.plane) + ", " +
                                          std::to_string(a.get_int("nsize")) + ", " +
                                          cpp_float(a.get_float("alpha") / static_cast<double>(a.get_int("nsize"))) +
                                          ", " + cpp_float(a.get_float("beta")) + ", " +
                                          cpp_float(a.get_float("knorm")) + ", " + ctx.pool + ");"};
                  }});
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    return static_cast<double>(in[0].num_elements()) * (2.0 * static_cast<double>(a.get_int("nsize")) + 4.0);
  };
  auto lrn = [](int64_t nsize, double alpha, double beta, double knorm) {
    Attrs a;
    a.set("nsize", nsize);
    a.set("alpha", alpha);
    a.set("beta", beta);
    a.set("knorm", knorm);
    return a;
  };
  // AlexNet's; a window wider than the channels; nsize 1; another power
  // (the kernel's general path) on planes not a multiple of a vector.
  d.examples = {{lrn(5, 1e-4, 0.75, 2.0), {{2, 7, 5, 6}}},
                {lrn(7, 0.5, 0.75, 1.0), {{1, 3, 4, 4}}},
                {lrn(1, 0.1, 0.75, 2.0), {{1, 2, 3, 3}}},
                {lrn(3, 0.2, 0.5, 1.5), {{1, 5, 1, 37}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
