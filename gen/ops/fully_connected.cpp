// FullyConnected (Gluon nn.Dense): y = x · Wᵀ + b, W of shape (num_hidden, K).
// flatten=true folds all axes after the first into K; false applies the
// product on the last axis only. The generated kernel is a GEMM (a GEMV at
// batch 1) over Wᵀ packed into panels at generation time (gemm.inc);
// weights not known at generation time use the plain kernel (dense.inc).

#include <cstring>
#include <optional>

#include "ir/error.h"
#include "ops/gemm_pack.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"
#include "ops/reference_blas.h"

namespace hybgen {
namespace {

struct FcDims {
  int64_t rows, k, hidden;
};

FcDims fc_dims(const Attrs& attrs, const Shape& data) {
  const int64_t hidden = attrs.get_int("num_hidden");
  if (data.empty()) throw Error("data must have at least one axis");
  if (attrs.get_bool("flatten")) return {data[0], dims_product(data, 1, data.size()), hidden};
  return {dims_product(data, 0, data.size() - 1), data.back(), hidden};
}

std::vector<TensorType> fully_connected_infer(const Attrs& attrs, const std::vector<TensorType>& in) {
  check_quantized_operands(in);
  const Shape& data = in[0].shape;
  const FcDims d = fc_dims(attrs, data);
  if (d.hidden <= 0) throw Error("num_hidden must be positive, got " + std::to_string(d.hidden));
  const Shape want_w{d.hidden, d.k};
  if (in[1].shape != want_w)
    throw Error("weight has shape " + shape_str(in[1].shape) + ", expected " + shape_str(want_w) + " for data " +
                shape_str(data));
  if (in.size() > 2 && in[2].shape != Shape{d.hidden})
    throw Error("bias has shape " + shape_str(in[2].shape) + ", expected " + shape_str({d.hidden}));
  Shape out;
  if (attrs.get_bool("flatten")) {
    out = {data[0], d.hidden};
  } else {
    out.assign(data.begin(), data.end() - 1);
    out.push_back(d.hidden);
  }
  return {quantized_output(attrs, in[0], out)};
}

// Quantized: int32 sums of (x - zero point) * w plus the bias, requantized per output unit.
void fully_connected_reference_quantized(const KernelIO& io) {
  const FcDims d = fc_dims(io.attrs, io.in_types[0].shape);
  const auto x_zero = static_cast<std::int32_t>(io.in_types[0].quantization.zero_point[0]);
  const std::int8_t* w = io.input<std::int8_t>(1);
  const std::int32_t* bias = io.in.size() > 2 ? io.input<std::int32_t>(2) : nullptr;
  std::vector<std::int32_t> acc(static_cast<std::size_t>(d.rows * d.hidden));
  with_value_type(io.in_types[0].dtype, [&](auto value) {
    using T = decltype(value);
    const T* x = io.input<T>(0);
    for (int64_t r = 0; r < d.rows; ++r)
      for (int64_t j = 0; j < d.hidden; ++j) {
        std::int32_t sum = bias ? bias[j] : 0;
        for (int64_t i = 0; i < d.k; ++i) sum += (static_cast<std::int32_t>(x[r * d.k + i]) - x_zero) * w[j * d.k + i];
        acc[static_cast<std::size_t>(r * d.hidden + j)] = sum;
      }
  });
  requantize_outputs(io.in_types, io.out_types[0], acc, d.rows, d.hidden, 1, io.out[0]);
}

void fully_connected_reference(const KernelIO& io) {
  if (!io.in_types[0].quantization.empty()) return fully_connected_reference_quantized(io);
  const FcDims d = fc_dims(io.attrs, io.in_types[0].shape);
  const int m = static_cast<int>(d.rows), k = static_cast<int>(d.k), n = static_cast<int>(d.hidden);
  float* y = io.output<float>(0);
  if (m == 1) {
    reference_sgemv(n, k, io.input<float>(1), k, io.input<float>(0), y);
  } else {
    reference_sgemm(false, true, m, n, k, io.input<float>(0), k, io.input<float>(1), k, y, n);
  }
  if (io.in.size() > 2)
    for (int r = 0; r < m; ++r)
      for (int j = 0; j < n; ++j) y[r * n + j] += io.input<float>(2)[j];
}

// The weight [hidden x k] as W^T in hg_gemm_packed_b's column panels.
std::optional<std::vector<float>> pack_weight(const KernelSite& site, int index, const float* data) {
  if (index != 1) return std::nullopt;
  const FcDims d = fc_dims(site.attrs, site.in[0].shape);
  return pack_w_transposed_panels(data, d.hidden, d.k, site.target.gemm_nr);
}

KernelCall fully_connected_emit_cpp(const EmitContext& ctx) {
  const FcDims d = fc_dims(ctx.node.attrs, ctx.in_types[0].shape);
  // A run-time batch takes every item's rows in one pass over the weights.
  const std::string rows = ctx.batch.empty() ? std::to_string(d.rows) : std::to_string(d.rows) + " * " + ctx.batch;
  const std::string bias = ctx.in.size() > 2 ? ctx.in[2] : "nullptr";
  if (!ctx.in_types[0].quantization.empty() && ctx.in_packed.size() > 1 && ctx.in_packed[1])
    return {{"epilogue", "gemm_q8"},
            "{\n" + requantization_declaration(ctx.in_types, ctx.out_types[0], d.hidden, "rq") + "hg_gemm_q8<" +
                std::to_string(ctx.target.gemm_nr) + ">(" + ctx.in[0] + ", " + std::to_string(d.k) + ", " + ctx.in[1] +
                ", " + bias + ", " + ctx.out[0] + ", " + rows + ", " + std::to_string(d.hidden) + ", " +
                std::to_string(d.k) + ", " + std::to_string(d.hidden) + ", 1, rq, " + epilogue_argument(ctx) + ");\n}"};
  if (!ctx.in_types[0].quantization.empty())
    return {{"epilogue", "quantized_kernels"},
            "{\n" + requantization_declaration(ctx.in_types, ctx.out_types[0], d.hidden, "rq") + "hg_dense_q8(" +
                ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " + ctx.out[0] + ", " + rows + ", " +
                std::to_string(d.k) + ", " + std::to_string(d.hidden) + ", rq, " + epilogue_argument(ctx) + ");\n}"};
  if (ctx.in_packed.size() > 1 && ctx.in_packed[1])
    return {{"epilogue", "gemm"},
            "hg_gemm_packed_b(" + ctx.in[0] + ", " + std::to_string(d.k) + ", " + ctx.in[1] + ", " + bias + ", " +
                ctx.out[0] + ", " + std::to_string(d.hidden) + ", " + rows + ", " + std::to_string(d.hidden) + ", " +
                std::to_string(d.k) + ", " + epilogue_argument(ctx) + ", " + ctx.pool + ");"};
  return {{"epilogue", "dense"},
          "hg_dense(" + ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " + ctx.out[0] + ", " + rows + ", " +
              std::to_string(d.k) + ", " + std::to_string(d.hidden) + ", " + epilogue_argument(ctx) + ");"};
}

Attrs fc_attrs(int64_t hidden, bool no_bias, bool flatten) {
  Attrs a;
  a.set("num_hidden", hidden);
  a.set("no_bias", no_bias);
  a.set("flatten", flatten);
  return a;
}

OpRegistrar fully_connected_op([] {
  OpDef d;
  d.name = "FullyConnected";
  d.summary = "y = x * weight^T + bias (Gluon nn.Dense)";
  d.input_names = {"data", "weight", "bias"};
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = with_output_quantization(
      {{"num_hidden", AttrKind::kInt, std::nullopt, "number of output units", {}},
       {"no_bias", AttrKind::kBool, false, "no bias input", {}},
       {"flatten", AttrKind::kBool, true, "fold all axes after the first into the input size", {}}});
  d.fusion = FusionClass::kOutElemwiseFusable;
  d.epilogue_axis = -1;
  d.arity = [](const Attrs& a) { return a.get_bool("no_bias") ? 2 : 3; };
  d.infer = fully_connected_infer;
  d.reference = fully_connected_reference;
  d.reference_dtypes = quantized_gemm_dtypes();
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    const FcDims dims = fc_dims(a, in[0].shape);
    return 2.0 * static_cast<double>(dims.rows * dims.k * dims.hidden);
  };
  d.weight_shapes = [](const Attrs& a, const Shape& data) {
    const FcDims dims = fc_dims(a, data);
    return std::vector<Shape>{{dims.hidden, dims.k}, {dims.hidden}};
  };
  d.examples = {
      {fc_attrs(8, false, true), {{1, 5}, {8, 5}, {8}}},
      {fc_attrs(7, false, true), {{3, 2, 2, 3}, {7, 12}, {7}}},
      {fc_attrs(6, true, false), {{2, 3, 17}, {6, 17}}},
      {fc_attrs(33, false, true), {{4, 40}, {33, 40}, {33}}},
      // Quantized: int8 per output unit, uint8 per tensor without bias, a batch.
      quantized_example(with_output_quantization(fc_attrs(8, false, true), 0.04, -5),
                        {quantized_data({1, 37}, DType::kInt8, 0.03f, 7), quantized_weight({8, 37}, 8),
                         TensorType{{8}, DType::kInt32}}),
      quantized_example(with_output_quantization(fc_attrs(5, true, false), 0.1, 120),
                        {quantized_data({3, 2, 19}, DType::kUInt8, 0.02f, 128), quantized_weight({5, 19}, 1)}),
      // Blocks of rows with a tail (13), channels over two panels and a partial third (37), k not a
      // multiple of four (70).
      quantized_example(with_output_quantization(fc_attrs(37, false, true), 0.05, 3),
                        {quantized_data({13, 70}, DType::kInt8, 0.03f, -9), quantized_weight({37, 70}, 37),
                         TensorType{{37}, DType::kInt32}})};
  return d;
}());

const KernelRegistrar fully_connected_cpp(Backend::kCpp, "FullyConnected", [] {
  OpKernel k{fully_connected_emit_cpp};
  k.dtypes = quantized_gemm_dtypes();
  k.rows_follow_batch = true;
  k.pack_constant = [float_packing = float32_packing(pack_weight)](const KernelSite& site, int index,
                                                                   const Constant& value) -> std::optional<Constant> {
    if (value.type.dtype != DType::kInt8) return float_packing(site, index, value);
    if (index != 1 || site.target.gemm_nr <= 0) return std::nullopt;
    const FcDims d = fc_dims(site.attrs, site.in[0].shape);
    return q8_packed_constant(value, d.hidden, d.k, site.target.gemm_nr, site.target.q8_group);
  };
  return k;
}());

}  // namespace
}  // namespace hybgen
