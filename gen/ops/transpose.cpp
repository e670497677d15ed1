// transpose: permute axes (default: reverse them).
#include "ops/transpose.h"

#include <algorithm>
#include <numeric>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {

std::vector<int64_t> transpose_axes(const Attrs& a, std::size_t rank) {
  std::vector<int64_t> perm = a.get_ints("axes");
  if (perm.empty()) {
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
    return perm;
  }
  if (perm.size() != rank)
    throw Error("axes has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (auto& p : perm) {
    p = normalize_axis(p, rank);
    if (seen[p]) throw Error("axes repeats axis " + std::to_string(p));
    seen[p] = true;
  }
  return perm;
}

namespace {

constexpr std::size_t kMaxRank = 8;  // the generated kernel's index array

// Input strides reordered to the output's axes.
std::vector<int64_t> source_strides(const Shape& in, const std::vector<int64_t>& perm) {
  std::vector<int64_t> stride(in.size(), 1);
  for (int i = static_cast<int>(in.size()) - 2; i >= 0; --i) stride[i] = stride[i + 1] * in[i + 1];
  std::vector<int64_t> out(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) out[i] = stride[perm[i]];
  return out;
}

const OpRegistrar transpose_op([] {
  OpDef d;
  d.name = "transpose";
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<bool>&) {
    return in[0].shape.size() > 1 && transpose_axes(a, in[0].shape.size())[0] != 0;
  };
  d.summary = "permute axes";
  d.input_names = {"data"};
  d.attrs = {{"axes", AttrKind::kInts, std::vector<int64_t>{}, "the new order; empty: reversed", {}}};
  d.fusion = FusionClass::kInjective;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    if (in[0].shape.size() > kMaxRank) throw Error("rank above 8 is not supported");
    const auto perm = transpose_axes(a, in[0].shape.size());
    Shape out;
    for (int64_t p : perm) out.push_back(in[0].shape[p]);
    // Quantized values keep their scales; a per-axis one follows its axis.
    Quantization q = in[0].quantization;
    if (q.axis) q.axis = static_cast<int>(std::find(perm.begin(), perm.end(), *q.axis) - perm.begin());
    return std::vector<TensorType>{TensorType{out, in[0].dtype, q}};
  };
  d.reference = [](const KernelIO& io) {
    const Shape& out = io.out_types[0].shape;
    const auto strides = source_strides(io.in_types[0].shape, transpose_axes(io.attrs, out.size()));
    with_element_bits(io.in_types[0].dtype, [&](auto element) {
      using T = decltype(element);
      const T* x = io.input<T>(0);
      T* y = io.output<T>(0);
      for_each_strided(out, strides, {}, [&](int64_t i, int64_t src, int64_t) { y[i] = x[src]; });
    });
  };
  d.reference_dtypes = all_dtypes();
  OpKernel kernel{[](const EmitContext& ctx) {
    const Shape& out = ctx.out_types[0].shape;
    const Shape dims = out.empty() ? Shape{1} : out;
    const auto strides = out.empty()
                             ? std::vector<int64_t>{1}
                             : source_strides(ctx.in_types[0].shape, transpose_axes(ctx.node.attrs, out.size()));
    return KernelCall{{"strided_copy"},
                      "{\n  static const long dims[] = " + cpp_int_list(dims) +
                          ";\n  static const long strides[] = " + cpp_int_list(strides) + ";\n  hg_strided_copy(" +
                          ctx.in[0] + ", " + ctx.out[0] + ", " + std::to_string(dims.size()) + ", dims, strides);\n}"};
  }};
  kernel.dtypes = moved_value_dtypes();
  register_kernel(Backend::kCpp, d.name, kernel);
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  Attrs swap, perm3;
  swap.set("axes", std::vector<int64_t>{1, 0});
  perm3.set("axes", std::vector<int64_t>{0, 2, 1, 3});
  d.examples = {{Attrs{}, {{3, 5}}},
                {swap, {{4, 2}}},
                {perm3, {{2, 3, 4, 5}}},
                quantized_example(perm3, {quantized_data({2, 3, 4, 5}, DType::kInt8, 0.05f, -3)}),
                quantized_example(swap, {quantized_data({5, 3}, DType::kUInt8, 0.02f, 128)})};
  return d;
}());

}  // namespace
}  // namespace hybgen
