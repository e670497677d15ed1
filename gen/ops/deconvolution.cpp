// Deconvolution (transposed convolution, Gluon nn.Conv2DTranspose and
// nn.Conv1DTranspose), NCHW and NCW: stride, padding, dilation, adj,
// target_shape, groups and an optional bias (MXNet's default: none). The
// weight is (c, f/groups, kh, kw), as MXNet's. The generated kernel:
//   - weights known at generation time: GEMM + col2im (deconv2d_gemm.inc),
//     W^T packed at generation time into hg_gemm_packed_a's panels, the
//     columns in arena scratch;
//   - otherwise, and for groups with a single input channel: the direct
//     kernel (deconv2d.inc), which reads the weights as given.
#include "ops/deconv.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/gemm_pack.h"
#include "ops/op_util.h"
#include "ops/reference_blas.h"

namespace hybgen {

namespace {

// Attribute values beyond this are refused: no real layer comes near, and
// the size arithmetic stays far from overflow.
constexpr int64_t kMaxAttr = int64_t{1} << 20;

int64_t at_or(const std::vector<int64_t>& v, std::size_t i, int64_t fallback) { return v.empty() ? fallback : v[i]; }

}  // namespace

DeconvGeometry deconv_geometry(const Attrs& a, const Shape& data) {
  const auto& kernel = a.get_ints("kernel");
  const std::size_t nd = kernel.size();
  if (nd != 1 && nd != 2)
    throw Error("only 1-D and 2-D deconvolution is supported (kernel " + shape_str(kernel) + ")");
  for (const char* name : {"stride", "dilate", "pad", "pad_end", "adj", "target_shape"}) {
    if (!a.has(name)) continue;
    const auto& v = a.get_ints(name);
    if (!v.empty() && v.size() != nd)
      throw Error(std::string(name) + " must have " + int_str(static_cast<int64_t>(nd)) +
                  " values like the kernel, got " + shape_str(v));
    for (int64_t x : v)
      if (x < 0 || x > kMaxAttr) throw Error(std::string(name) + " " + shape_str(v) + " is out of range");
  }
  for (int64_t x : kernel)
    if (x <= 0 || x > kMaxAttr) throw Error("kernel " + shape_str(kernel) + " must be positive");
  if (data.size() != nd + 2)
    throw Error(std::string("data must be ") + (nd == 1 ? "NCW (3 dims)" : "NCHW (4 dims)") + " for a kernel of " +
                int_str(static_cast<int64_t>(nd)) + " values, got " + shape_str(data));
  for (int64_t d : data)
    if (d <= 0) throw Error("data shape " + shape_str(data) + " must be positive");
  DeconvGeometry g{};
  g.one_d = nd == 1;
  g.n = data[0], g.c = data[1];
  g.h = g.one_d ? 1 : data[2], g.w = data[nd + 1];
  g.f = a.get_int("num_filter");
  g.groups = a.get_int("num_group");
  if (g.f <= 0 || g.f > kMaxAttr || g.groups <= 0)
    throw Error("num_filter and num_group must be positive");
  if (g.c % g.groups || g.f % g.groups)
    throw Error("num_group " + int_str(g.groups) + " must divide channels " + int_str(g.c) + " and num_filter " +
                int_str(g.f));
  // Per spatial axis, the 2-D one's (y, x) or the 1-D one's (x).
  int64_t k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1}, p[2] = {0, 0}, pe[2] = {0, 0}, adj[2] = {0, 0},
          in[2] = {g.h, g.w}, out[2] = {1, 1};
  // pad_end (ONNX's asymmetric pads): removed from the end of each axis
  // instead of pad; the kernels take the begin padding as the origin and the
  // output size, so only the size changes.
  const std::vector<int64_t> no_pad_end;
  const auto& pad_end = a.has("pad_end") ? a.get_ints("pad_end") : no_pad_end;
  const auto& target = a.get_ints("target_shape");
  const bool by_target = std::any_of(target.begin(), target.end(), [](int64_t t) { return t != 0; });
  for (std::size_t i = 0; i < nd; ++i) {
    const std::size_t ax = g.one_d ? 1 : i;
    k[ax] = kernel[i];
    s[ax] = at_or(a.get_ints("stride"), i, 1);
    d[ax] = at_or(a.get_ints("dilate"), i, 1);
    if (s[ax] == 0 || d[ax] == 0) throw Error("stride and dilate must be positive");
    const int64_t full = s[ax] * (in[ax] - 1) + d[ax] * (k[ax] - 1) + 1;
    if (by_target) {
      if (target[i] <= 0 || target[i] > full)
        throw Error("target_shape " + shape_str(target) + " cannot be reached: at most " + int_str(full) + " on axis " +
                    int_str(static_cast<int64_t>(i)));
      const int64_t extra = full - target[i];
      adj[ax] = extra % 2;
      p[ax] = (extra + 1) / 2;
      pe[ax] = p[ax];
    } else {
      p[ax] = at_or(a.get_ints("pad"), i, 0);
      pe[ax] = at_or(pad_end, i, p[ax]);
      adj[ax] = at_or(a.get_ints("adj"), i, 0);
    }
    if (adj[ax] >= s[ax]) throw Error("adj " + shape_str(a.get_ints("adj")) + " must be smaller than the stride");
    out[ax] = full - p[ax] - pe[ax] + adj[ax];
    if (out[ax] <= 0) throw Error("padding " + shape_str(a.get_ints("pad")) + " leaves no output pixels");
  }
  g.kh = k[0], g.kw = k[1], g.sh = s[0], g.sw = s[1], g.dh = d[0], g.dw = d[1], g.ph = p[0], g.pw = p[1];
  g.oh = out[0], g.ow = out[1];
  return g;
}

Shape deconv_weight_shape(const DeconvGeometry& g) {
  if (g.one_d) return {g.c, g.f / g.groups, g.kw};
  return {g.c, g.f / g.groups, g.kh, g.kw};
}

Shape deconv_output_shape(const DeconvGeometry& g) {
  if (g.one_d) return {g.n, g.f, g.ow};
  return {g.n, g.f, g.oh, g.ow};
}

void deconv_reference(const DeconvGeometry& g, const float* x, const float* w, const float* bias, float* y) {
  const int64_t cg = g.c / g.groups, fg = g.f / g.groups, m = fg * g.kh * g.kw, hw = g.h * g.w;
  // The columns of `rows` input rows at a time: the whole image unless that
  // takes more than 64 MiB.
  const int64_t rows = std::max<int64_t>(1, std::min<int64_t>(g.h, (int64_t{1} << 24) / std::max<int64_t>(1, m * g.w)));
  std::vector<float> cols(static_cast<std::size_t>(m * rows * g.w));
  for (int64_t img = 0; img < g.n; ++img)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      for (int64_t fo = 0; fo < fg; ++fo) {
        const int64_t channel = grp * fg + fo;
        float* plane = y + (img * g.f + channel) * g.oh * g.ow;
        std::fill(plane, plane + g.oh * g.ow, bias ? bias[channel] : 0.0f);
      }
      for (int64_t r0 = 0; r0 < g.h; r0 += rows) {
        const int64_t n_rows = std::min(rows, g.h - r0), n_cols = n_rows * g.w;
        // cols[(fo, ky, kx) x pixel] = W_g^T x_g, W_g the [cg x m] rows of this group's channels.
        reference_sgemm(true, false, static_cast<int>(m), static_cast<int>(n_cols), static_cast<int>(cg),
                        w + grp * cg * m, static_cast<int>(m), x + (img * g.c + grp * cg) * hw + r0 * g.w,
                        static_cast<int>(hw), cols.data(), static_cast<int>(n_cols));
        for (int64_t fo = 0; fo < fg; ++fo) {
          float* plane = y + (img * g.f + grp * fg + fo) * g.oh * g.ow;
          for (int64_t ky = 0; ky < g.kh; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const float* col = cols.data() + ((fo * g.kh + ky) * g.kw + kx) * n_cols;
              for (int64_t r = 0; r < n_rows; ++r) {
                const int64_t oy = (r0 + r) * g.sh - g.ph + ky * g.dh;
                if (oy < 0 || oy >= g.oh) continue;
                for (int64_t ix = 0; ix < g.w; ++ix) {
                  const int64_t ox = ix * g.sw - g.pw + kx * g.dw;
                  if (ox >= 0 && ox < g.ow) plane[oy * g.ow + ox] += col[r * g.w + ix];
                }
              }
            }
        }
      }
    }
}

std::vector<int64_t> deconv_geometry_list(const DeconvGeometry& g) {
  return {g.n, g.c, g.h, g.w, g.f, g.kh, g.kw, g.oh, g.ow, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.groups};
}

KernelCall deconv_direct_cpp(const DeconvGeometry& g, const EmitContext& ctx) {
  const std::string bias = ctx.in.size() > 2 ? ctx.in[2] : "nullptr";
  return {{"epilogue", "parallel", "deconv2d"},
          "{\n  static const long geometry[] = " + cpp_int_list(deconv_geometry_list(g)) + ";\n  hg_deconv2d(" +
              ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " + ctx.out[0] + ", geometry, " +
              epilogue_argument(ctx) + ", " + ctx.pool + ");\n}"};
}

namespace {

// The GEMM + col2im kernel wherever the weights are packed, but for one
// input channel per group (a depthwise deconvolution such as bilinear
// upsampling's), where a GEMM with one reduction step wastes its tiles.
bool uses_gemm(const DeconvGeometry& g) { return g.c / g.groups > 1; }

// Input rows per column tile: the whole image when its columns take at
// most 1 MiB, else fewer (at least one row).
int64_t tile_rows(const DeconvGeometry& g) {
  const int64_t row = (g.f / g.groups) * g.kh * g.kw * g.w;  // floats per input row
  return std::max<int64_t>(1, std::min<int64_t>(g.h, (int64_t{1} << 18) / row));
}

int64_t tile_rows_within(const DeconvGeometry& g, int64_t budget) {
  const int64_t row = (g.f / g.groups) * g.kh * g.kw * g.w;
  return std::max<int64_t>(1, std::min<int64_t>(tile_rows(g), budget / row));
}

int64_t column_floats(const DeconvGeometry& g, int64_t rows) { return (g.f / g.groups) * g.kh * g.kw * g.w * rows; }

std::vector<TensorType> deconvolution_infer(const Attrs& a, const std::vector<TensorType>& in) {
  const DeconvGeometry g = deconv_geometry(a, in[0].shape);
  const Shape want_w = deconv_weight_shape(g);
  if (in[1].shape != want_w)
    throw Error("weight has shape " + shape_str(in[1].shape) + ", expected " + shape_str(want_w));
  if (in.size() > 2 && in[2].shape != Shape{g.f})
    throw Error("bias has shape " + shape_str(in[2].shape) + ", expected " + shape_str({g.f}));
  return {TensorType{deconv_output_shape(g), in[0].dtype}};
}

void deconvolution_reference(const KernelIO& io) {
  const DeconvGeometry g = deconv_geometry(io.attrs, io.in_types[0].shape);
  deconv_reference(g, io.input<float>(0), io.input<float>(1), io.in.size() > 2 ? io.input<float>(2) : nullptr,
                   io.output<float>(0));
}

// "gemm" where the weights are known at generation time (to be packed) and
// uses_gemm holds, else "direct".
std::string deconvolution_choose_algorithm(const KernelSite& site) {
  const bool weights_known = site.in_constant.size() > 1 && site.in_constant[1];
  return weights_known && uses_gemm(deconv_geometry(site.attrs, site.in[0].shape)) ? "gemm" : "direct";
}

int64_t deconvolution_scratch_bytes(const KernelSite& site) {
  if (site.algorithm != "gemm") return 0;
  const DeconvGeometry g = deconv_geometry(site.attrs, site.in[0].shape);
  return column_floats(g, tile_rows(g)) * kFloatBytes;
}

int64_t deconvolution_fit_scratch(const KernelSite& site, int64_t budget) {
  const DeconvGeometry g = deconv_geometry(site.attrs, site.in[0].shape);
  return site.algorithm == "gemm" ? column_floats(g, tile_rows_within(g, budget / kFloatBytes)) * kFloatBytes : 0;
}

// Each group's W^T [fg*kh*kw x cg] in hg_gemm_packed_a's row panels, group
// after group.
std::optional<std::vector<float>> deconvolution_pack_weights(const KernelSite& site, int index, const float* data) {
  if (index != 1 || site.algorithm != "gemm") return std::nullopt;
  const DeconvGeometry g = deconv_geometry(site.attrs, site.in[0].shape);
  const Target& target = site.target;
  const int64_t cg = g.c / g.groups, m = (g.f / g.groups) * g.kh * g.kw;
  std::vector<float> packed, wt(static_cast<std::size_t>(m * cg));
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    const float* wg = data + grp * cg * m;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t r = 0; r < m; ++r) wt[static_cast<std::size_t>(r * cg + ci)] = wg[ci * m + r];
    const std::vector<float> panels = pack_a_panels(wt.data(), m, cg, target.gemm_mr);
    packed.insert(packed.end(), panels.begin(), panels.end());
  }
  return packed;
}

KernelCall deconvolution_emit_cpp(const EmitContext& ctx) {
  const DeconvGeometry g = deconv_geometry(ctx.node.attrs, ctx.in_types[0].shape);
  if (ctx.algorithm != "gemm") return deconv_direct_cpp(g, ctx);
  if (ctx.scratch.empty()) throw Error("Deconvolution: the GEMM kernel got no scratch for its columns");
  const int64_t m = (g.f / g.groups) * g.kh * g.kw, cg = g.c / g.groups, mr = ctx.target.gemm_mr;
  const int64_t group_stride = (m + mr - 1) / mr * mr * cg;
  // Tiles of the rows the plan made room for (fit_scratch).
  const int64_t rows = std::max<int64_t>(1, ctx.scratch_bytes / kFloatBytes / column_floats(g, 1));
  const std::string bias = ctx.in.size() > 2 ? ctx.in[2] : "nullptr";
  return {{"epilogue", "parallel", "gemm", "deconv2d", "deconv2d_gemm"},
          "{\n  static const long geometry[] = " + cpp_int_list(deconv_geometry_list(g)) + ";\n  hg_deconv2d_gemm(" +
              ctx.in[0] + ", " + ctx.in[1] + ", " + int_str(group_stride) + ", " + bias + ", " + ctx.out[0] +
              ", geometry, " + int_str(std::min(rows, g.h)) + ", " + ctx.scratch + ", " + epilogue_argument(ctx) +
              ", " + ctx.pool + ");\n}"};
}

Attrs deconv(std::vector<int64_t> kernel, int64_t filters, std::vector<int64_t> stride, std::vector<int64_t> pad,
             int64_t groups, bool no_bias) {
  Attrs a;
  a.set("kernel", std::move(kernel));
  a.set("num_filter", filters);
  a.set("stride", std::move(stride));
  a.set("pad", std::move(pad));
  a.set("num_group", groups);
  a.set("no_bias", no_bias);
  return a;
}

Attrs with(Attrs a, const std::string& name, std::vector<int64_t> v) {
  a.set(name, std::move(v));
  return a;
}

const OpRegistrar deconvolution_op([] {
  OpDef d;
  d.name = "Deconvolution";
  d.summary = "transposed convolution, 1-D NCW or 2-D NCHW, with groups (Gluon nn.Conv2DTranspose)";
  d.input_names = {"data", "weight", "bias"};
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = {{"kernel", AttrKind::kInts, std::nullopt, "(kh, kw) or (kw,)", {}},
             {"num_filter", AttrKind::kInt, std::nullopt, "output channels", {}},
             {"stride", AttrKind::kInts, std::vector<int64_t>{}, "default 1", {}},
             {"dilate", AttrKind::kInts, std::vector<int64_t>{}, "default 1", {}},
             {"pad", AttrKind::kInts, std::vector<int64_t>{}, "removed from each border; default 0", {}},
             {"pad_end", AttrKind::kInts, std::vector<int64_t>{},
              "removed from the end of each axis instead of pad (ONNX's asymmetric pads); empty: as pad", {}},
             {"adj", AttrKind::kInts, std::vector<int64_t>{}, "added at the end of each axis; default 0", {}},
             {"target_shape", AttrKind::kInts, std::vector<int64_t>{},
              "output size; when set, pad and adj are computed from it", {}},
             {"num_group", AttrKind::kInt, int64_t{1}, "groups", {}},
             {"no_bias", AttrKind::kBool, true, "no bias input (MXNet's default)", {}}};
  d.fusion = FusionClass::kOutElemwiseFusable;
  d.epilogue_axis = 1;
  d.arity = [](const Attrs& a) { return a.get_bool("no_bias") ? 2 : 3; };
  d.infer = deconvolution_infer;
  d.reference = deconvolution_reference;
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    const DeconvGeometry g = deconv_geometry(a, in[0].shape);
    return 2.0 * static_cast<double>(g.n * g.h * g.w * g.c * (g.f / g.groups) * g.kh * g.kw);
  };
  d.weight_shapes = [](const Attrs& a, const Shape& data) {
    const DeconvGeometry g = deconv_geometry(a, data);
    return std::vector<Shape>{deconv_weight_shape(g), {g.f}};
  };
  d.examples = {
      // U-Net's up-sampling: kernel 2 stride 2 (the kernel tiles the output), with bias; an odd size.
      {deconv({2, 2}, 6, {2, 2}, {}, 1, false), {{1, 8, 5, 7}, {8, 6, 2, 2}, {6}}},
      // DCGAN's: kernel 4 stride 2 pad 1, batch 2, no bias.
      {deconv({4, 4}, 5, {2, 2}, {1, 1}, 1, true), {{2, 3, 6, 5}, {3, 5, 4, 4}}},
      // Kernel 3 stride 1 pad 1 (a same-size transposed convolution).
      {deconv({3, 3}, 4, {}, {1, 1}, 1, false), {{1, 5, 6, 9}, {5, 4, 3, 3}, {4}}},
      // Groups, dilation, adj, a non-square kernel and strides.
      {with(with(deconv({3, 2}, 6, {2, 3}, {1, 0}, 2, false), "dilate", {2, 1}), "adj", {1, 2}),
       {{1, 4, 4, 3}, {4, 3, 3, 2}, {6}}},
      // target_shape sets pad and adj (odd and even leftovers).
      {with(deconv({4, 4}, 3, {2, 2}, {}, 1, true), "target_shape", {9, 10}), {{1, 2, 4, 5}, {2, 3, 4, 4}}},
      // 1-D (NCW), and a 1x1 input.
      {deconv({3}, 4, {2}, {1}, 1, false), {{2, 3, 7}, {3, 4, 3}, {4}}},
      {deconv({3, 3}, 2, {2, 2}, {}, 1, false), {{1, 3, 1, 1}, {3, 2, 3, 3}, {2}}},
      // Depthwise (one channel per group: the direct kernel).
      {deconv({4, 4}, 3, {2, 2}, {1, 1}, 3, true), {{1, 3, 5, 4}, {3, 1, 4, 4}}},
      // Columns in several row tiles (more than 1 MiB for the whole image).
      {deconv({4, 4}, 64, {2, 2}, {1, 1}, 1, false), {{1, 2, 20, 17}, {2, 64, 4, 4}, {64}}},
      // Asymmetric padding (pad_end): more or less removed at the end, with adj; 1-D; depthwise.
      {with(deconv({3, 3}, 4, {2, 2}, {0, 1}, 1, false), "pad_end", {1, 0}), {{1, 3, 5, 4}, {3, 4, 3, 3}, {4}}},
      {with(with(deconv({4, 3}, 3, {2, 3}, {2, 0}, 1, true), "pad_end", {0, 2}), "adj", {1, 1}),
       {{2, 2, 3, 4}, {2, 3, 4, 3}}},
      {with(deconv({5}, 2, {3}, {0}, 1, false), "pad_end", {3}), {{1, 3, 6}, {3, 2, 5}, {2}}},
      {with(deconv({3, 3}, 2, {2, 2}, {1, 1}, 2, true), "pad_end", {0, 2}), {{1, 2, 4, 5}, {2, 1, 3, 3}}},
  };
  return d;
}());

const KernelRegistrar deconvolution_cpp(Backend::kCpp, "Deconvolution", [] {
  OpKernel k{deconvolution_emit_cpp};
  k.choose_algorithm = deconvolution_choose_algorithm;
  k.pack_constant = float32_packing(deconvolution_pack_weights);
  k.scratch_bytes = deconvolution_scratch_bytes;
  k.fit_scratch = deconvolution_fit_scratch;
  return k;
}());

}  // namespace
}  // namespace hybgen
