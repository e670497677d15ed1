// Pooling, 1-D (NCW), 2-D (NCHW) and 3-D (NCDHW): max, avg and sum windows;
// global pooling; MXNet's "valid" (floor) and "full" (ceil) output sizes;
// count_include_pad for avg. 1-D pooling is 2-D of height 1 (pool_geometry),
// so pool2d.inc serves it; 3-D has its own kernel (pool3d.inc) where it
// cannot be put as 2-D pooling (pooling_emit_cpp).
#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <limits>

#include "ir/error.h"
#include "ops/conv_geometry.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

// One output value; the same arithmetic as templates/kernels/pool2d.inc and pool3d.inc.
float pool_window(const PoolGeometry& g, const float* volume, int64_t oz, int64_t oy, int64_t ox) {
  int64_t z0 = oz * g.sd - g.pd, y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  int64_t z1 = std::min(z0 + g.kd, g.d + g.pd_end), y1 = std::min(y0 + g.kh, g.h + g.ph_end),
          x1 = std::min(x0 + g.kw, g.w + g.pw_end);
  const int64_t padded_count = (z1 - z0) * (y1 - y0) * (x1 - x0);
  z0 = std::max<int64_t>(z0, 0), y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
  z1 = std::min(z1, g.d), y1 = std::min(y1, g.h), x1 = std::min(x1, g.w);
  float acc = g.type == 0 ? -FLT_MAX : 0.0f;
  for (int64_t z = z0; z < z1; ++z)
    for (int64_t y = y0; y < y1; ++y)
      for (int64_t x = x0; x < x1; ++x) {
        const float v = volume[(z * g.h + y) * g.w + x];
        acc = g.type == 0 ? std::max(acc, v) : acc + v;
      }
  if (g.type != 1) return acc;
  const int64_t count =
      g.count_include_pad ? padded_count : std::max<int64_t>(z1 - z0, 0) * std::max<int64_t>(y1 - y0, 0) *
                                               std::max<int64_t>(x1 - x0, 0);
  return count > 0 ? acc / static_cast<float>(count) : 0.0f;
}

// Quantized (max and avg, 1-D and 2-D), the output in the input's
// quantization: max of the window; avg rounds its integer sum divided by the
// count half away from zero (TFLite's), a padded position counting as the
// zero point (a real 0). The same arithmetic as quantized_kernels.inc's hg_pool2d_q8.
template <class T>
void pooling_reference_quantized(const PoolGeometry& g, const T* x, T* y, std::int32_t zero_point) {
  for (int64_t p = 0; p < g.n * g.c; ++p)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
        int64_t y1 = std::min(y0 + g.kh, g.h + g.ph_end), x1 = std::min(x0 + g.kw, g.w + g.pw_end);
        const int64_t padded = (y1 - y0) * (x1 - x0);
        y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0), y1 = std::min(y1, g.h), x1 = std::min(x1, g.w);
        std::int32_t acc = g.type == 0 ? std::numeric_limits<T>::lowest() : 0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) {
            const std::int32_t v = x[(p * g.h + iy) * g.w + ix];
            acc = g.type == 0 ? std::max(acc, v) : acc + v;
          }
        if (g.type == 1) {
          const int64_t inside = std::max<int64_t>(y1 - y0, 0) * std::max<int64_t>(x1 - x0, 0);
          const auto count = static_cast<std::int32_t>(g.count_include_pad ? padded : inside);
          if (g.count_include_pad) acc += zero_point * static_cast<std::int32_t>(padded - inside);
          acc = count == 0 ? zero_point : (acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count);
        }
        y[(p * g.oh + oy) * g.ow + ox] = static_cast<T>(acc);
      }
}

void pooling_reference(const KernelIO& io) {
  const PoolGeometry g = pool_geometry(io.attrs, io.in_types[0].shape);
  if (!io.in_types[0].quantization.empty()) {
    with_value_type(io.in_types[0].dtype, [&](auto value) {
      using T = decltype(value);
      pooling_reference_quantized(g, io.input<T>(0), io.output<T>(0),
                                  static_cast<std::int32_t>(io.in_types[0].quantization.zero_point[0]));
    });
    return;
  }
  for (int64_t p = 0; p < g.n * g.c; ++p)
    for (int64_t oz = 0; oz < g.od; ++oz)
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox)
          io.output<float>(0)[((p * g.od + oz) * g.oh + oy) * g.ow + ox] =
              pool_window(g, io.input<float>(0) + p * g.d * g.h * g.w, oz, oy, ox);
}

// 3-D windows of depth 1 (stride 1, no depth padding) are 2-D pooling over
// every depth slice, and global 3-D pooling is global 2-D pooling of a
// (d*h, w) plane (the same additions in the same order): pool2d.inc's
// vectorised paths serve both. Other 3-D windows take pool3d.inc.
KernelCall pooling_emit_cpp(const EmitContext& ctx) {
  const PoolGeometry g = pool_geometry(ctx.node.attrs, ctx.in_types[0].shape);
  const bool global = ctx.node.attrs.get_bool("global_pool");
  const int64_t planes = g.n * g.c, include_pad = g.count_include_pad ? 1 : 0;
  if (g.spatial == 3 && !global && !(g.kd == 1 && g.sd == 1 && g.pd == 0 && g.pd_end == 0)) {
    const std::vector<int64_t> dims{planes, g.d,  g.h,  g.w,  g.kd, g.kh, g.kw,   g.od,        g.oh,     g.ow,  g.sd,
                                    g.sh,   g.sw, g.pd, g.ph, g.pw, g.type, include_pad, g.pd_end, g.ph_end, g.pw_end};
    return {{"pool3d"}, "{\n  static const long geometry[] = " + cpp_int_list(dims) + ";\n  hg_pool3d(" + ctx.in[0] +
                            ", " + ctx.out[0] + ", geometry, " + ctx.pool + ");\n}"};
  }
  if (!ctx.in_types[0].quantization.empty()) {
    const std::vector<int64_t> dims{planes, g.h,  g.w,  g.kh,   g.kw,        g.oh,     g.ow,    g.sh,
                                    g.sw,   g.ph, g.pw, g.type, include_pad, g.ph_end, g.pw_end};
    return {{"quantized_kernels"},
            "{\n  static const long geometry[] = " + cpp_int_list(dims) + ";\n  hg_pool2d_q8(" + ctx.in[0] + ", " +
                ctx.out[0] + ", geometry, " + int_str(ctx.in_types[0].quantization.zero_point[0]) + ");\n}"};
  }
  const bool slices = g.spatial == 3 && !global;
  const int64_t p2 = slices ? planes * g.d : planes, h2 = global ? g.d * g.h : g.h, kh2 = global ? g.d * g.kh : g.kh;
  const std::vector<int64_t> dims{p2,   h2,   g.w,  kh2, g.kw,        g.oh,     g.ow,
                                  g.sh, g.sw, g.ph, g.pw,                g.type, include_pad, g.ph_end, g.pw_end};
  return {{"pool2d"}, "{\n  static const long geometry[] = " + cpp_int_list(dims) + ";\n  hg_pool2d(" + ctx.in[0] +
                          ", " + ctx.out[0] + ", geometry, " + ctx.pool + ");\n}"};
}

Attrs pool(const std::string& type, std::vector<int64_t> kernel, std::vector<int64_t> stride,
           std::vector<int64_t> pad, const std::string& convention, bool global = false, bool include_pad = true,
           std::vector<int64_t> pad_end = {}) {
  Attrs a;
  if (!pad_end.empty()) a.set("pad_end", std::move(pad_end));
  a.set("pool_type", type);
  a.set("kernel", std::move(kernel));
  a.set("stride", std::move(stride));
  a.set("pad", std::move(pad));
  a.set("pooling_convention", convention);
  a.set("global_pool", global);
  a.set("count_include_pad", include_pad);
  return a;
}

const OpRegistrar pooling_op([] {
  OpDef d;
  d.name = "Pooling";
  d.summary = "1-D, 2-D and 3-D max/avg/sum pooling, NCW/NCHW/NCDHW (Gluon MaxPool1D/2D/3D, AvgPool*, GlobalAvgPool*)";
  d.input_names = {"data"};
  d.attrs = {{"kernel", AttrKind::kInts, std::vector<int64_t>{}, "(kw), (kh, kw) or (kd, kh, kw); ignored with global_pool", {}},
             {"pool_type", AttrKind::kString, std::string("max"), "window reduction", {"max", "avg", "sum"}},
             {"global_pool", AttrKind::kBool, false, "pool the whole plane to 1x1", {}},
             {"pooling_convention", AttrKind::kString, std::string("valid"), "valid: floor, full: ceil",
              {"valid", "full"}},
             {"stride", AttrKind::kInts, std::vector<int64_t>{}, "one per kernel axis; default 1", {}},
             {"pad", AttrKind::kInts, std::vector<int64_t>{}, "one per kernel axis; default 0", {}},
             {"pad_end", AttrKind::kInts, std::vector<int64_t>{},
              "padding after each axis' end (ONNX's asymmetric pads); empty: as pad", {}},
             {"count_include_pad", AttrKind::kBool, true, "avg divides by the padded window size", {}},
             {"cudnn_off", AttrKind::kBool, false, "ignored", {}},
             {"layout", AttrKind::kString, std::string("None"), "data layout; None: the kernel's (global: the data's)",
              {"None", "NCW", "NCHW", "NCDHW"}}};
  d.fusion = FusionClass::kOpaque;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const PoolGeometry g = pool_geometry(a, in[0].shape);
    if (!in[0].quantization.empty()) {
      if (g.spatial == 3 || g.type == 2 || in[0].quantization.axis ||
          (in[0].dtype != DType::kInt8 && in[0].dtype != DType::kUInt8))
        throw Error("quantized pooling is max or avg, 1-D or 2-D, of int8 or uint8 per tensor; not " +
                    a.get_string("pool_type") + " of " + in[0].str());
    }
    return std::vector<TensorType>{TensorType{pool_output_shape(g), in[0].dtype, in[0].quantization}};
  };
  d.reference = pooling_reference;
  d.reference_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  register_kernel(Backend::kCpp, d.name, [] {
    OpKernel k{pooling_emit_cpp};
    k.dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
    return k;
  }());
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    const PoolGeometry g = pool_geometry(a, in[0].shape);
    return static_cast<double>(g.n * g.c * g.od * g.oh * g.ow) * static_cast<double>(g.kd * g.kh * g.kw);
  };
  d.examples = {
      {pool("max", {2, 2}, {2, 2}, {}, "valid"), {{1, 3, 6, 7}}},
      {pool("max", {3, 3}, {2, 2}, {1, 1}, "valid"), {{2, 2, 7, 7}}},
      {pool("avg", {3, 3}, {2, 2}, {1, 1}, "full"), {{1, 2, 6, 6}}},
      {pool("avg", {3, 3}, {2, 2}, {1, 1}, "full", false, false), {{1, 2, 6, 6}}},
      {pool("max", {3, 3}, {2, 2}, {}, "full"), {{1, 2, 8, 8}}},
      {pool("avg", {1, 1}, {}, {}, "valid", true), {{2, 3, 5, 4}}},
      {pool("sum", {2, 2}, {1, 1}, {}, "valid"), {{1, 1, 2, 3}}},
      // Rows wider than a vector for the kernel's row-at-a-time interior
      // path; global pooling of planes longer than its 16 partial results.
      {pool("max", {3, 3}, {2, 2}, {1, 1}, "valid"), {{1, 2, 19, 37}}},
      {pool("avg", {2, 2}, {2, 2}, {}, "valid"), {{1, 3, 12, 33}}},
      {pool("avg", {3, 3}, {1, 1}, {1, 1}, "valid", false, false), {{1, 2, 5, 40}}},
      {pool("avg", {1, 1}, {}, {}, "valid", true), {{1, 3, 9, 9}}},
      {pool("max", {1, 1}, {}, {}, "valid", true), {{1, 2, 7, 11}}},
      // 1-D (NCW, as height 1): strided and padded, full convention, avg without the padding, global, width 1.
      {pool("max", {3}, {2}, {1}, "valid"), {{2, 3, 21}}},
      {pool("avg", {3}, {2}, {1}, "full", false, false), {{1, 2, 10}}},
      {pool("sum", {2}, {}, {}, "valid"), {{1, 2, 5}}},
      {pool("avg", {1}, {}, {}, "valid", true), {{2, 3, 40}}},
      {pool("max", {1}, {}, {}, "valid"), {{1, 4, 1}}},
      // 3-D (NCDHW): max/avg/sum, padding counted or not, full convention, global, depth 1.
      {pool("max", {2, 2, 2}, {2, 2, 2}, {}, "valid"), {{1, 2, 4, 5, 6}}},
      {pool("avg", {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, "full"), {{2, 2, 5, 6, 7}}},
      {pool("avg", {3, 2, 3}, {1, 2, 2}, {1, 0, 1}, "valid", false, false), {{1, 3, 4, 5, 9}}},
      {pool("sum", {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, "valid"), {{1, 1, 1, 4, 4}}},
      {pool("max", {3, 3, 3}, {2, 2, 2}, {}, "full"), {{1, 2, 6, 6, 8}}},
      {pool("avg", {1, 1, 1}, {}, {}, "valid", true), {{2, 3, 3, 4, 5}}},
      {pool("max", {1, 1, 1}, {}, {}, "valid", true), {{1, 2, 4, 5, 9}}},
      {pool("avg", {1, 3, 2}, {1, 2, 2}, {0, 1, 0}, "full"), {{1, 2, 3, 7, 8}}},  // 2-D pooling per depth slice
      // Asymmetric padding (pad_end): the padded extent counted for avg ends at size + pad_end; the lane
      // kernels (stride 1 and 2, rows of 16 and more), the per-row path, 1-D and 3-D.
      {pool("avg", {3, 3}, {2, 2}, {0, 0}, "valid", false, true, {1, 1}), {{1, 2, 7, 8}}},
      {pool("avg", {3, 3}, {1, 1}, {1, 0}, "valid", false, true, {0, 2}), {{1, 2, 6, 40}}},
      {pool("avg", {3, 3}, {2, 2}, {2, 0}, "full", false, true, {0, 2}), {{1, 2, 9, 37}}},
      {pool("avg", {2, 3}, {2, 1}, {0, 1}, "valid", false, false, {1, 1}), {{2, 2, 5, 19}}},
      {pool("max", {3, 3}, {2, 2}, {0, 1}, "valid", false, true, {1, 2}), {{1, 2, 8, 33}}},
      {pool("sum", {2, 2}, {1, 1}, {1, 0}, "valid", false, true, {0, 1}), {{1, 1, 4, 5}}},
      {pool("avg", {4}, {3}, {1}, "valid", false, true, {3}), {{1, 2, 11}}},
      {pool("avg", {3, 3, 3}, {2, 2, 2}, {0, 1, 0}, "valid", false, true, {2, 0, 1}), {{1, 2, 5, 6, 7}}},
      {pool("avg", {1, 3, 3}, {1, 1, 2}, {0, 1, 0}, "valid", false, true, {0, 0, 2}), {{1, 2, 2, 5, 9}}},
      // Quantized: max padded, avg with and without the padding counted (its rounding both signs), global
      // avg, uint8, 1-D.
      quantized_example(pool("max", {3, 3}, {2, 2}, {1, 1}, "valid"),
                        {quantized_data({2, 3, 7, 9}, DType::kInt8, 0.1f, 3)}),
      quantized_example(pool("avg", {3, 3}, {2, 2}, {1, 1}, "full"),
                        {quantized_data({1, 2, 8, 7}, DType::kInt8, 0.1f, -5)}),
      quantized_example(pool("avg", {2, 3}, {1, 2}, {1, 1}, "valid", false, false),
                        {quantized_data({1, 3, 6, 9}, DType::kInt8, 0.1f, 0)}),
      quantized_example(pool("avg", {1, 1}, {}, {}, "valid", true),
                        {quantized_data({2, 5, 4, 6}, DType::kUInt8, 0.02f, 128)}),
      quantized_example(pool("max", {3}, {2}, {1}, "valid"), {quantized_data({1, 3, 15}, DType::kUInt8, 0.02f, 10)}),
  };
  return d;
}());

}  // namespace
}  // namespace hybgen
