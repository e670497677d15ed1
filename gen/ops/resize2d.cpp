// Resize2D: nearest or linear resizing of the last two axes (H, W) of NCHW
// data, with ONNX Resize's coordinate transformations (half_pixel,
// pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nearest)
// and nearest rounding modes (round_prefer_floor, round_prefer_ceil, floor,
// ceil); what ONNX Resize and Upsample import to, torch's interpolate
// (nearest, bilinear with or without align_corners) included.
//
// The source coordinate of output index x along an axis is computed in
// float, as ONNX Runtime does, from the axis' scale (the attribute, or
// out / in when it is 0):
//   half_pixel                 (x + 0.5) / scale - 0.5
//   pytorch_half_pixel         the same, 0 when the output axis has size 1
//   align_corners              x * (in - 1) / (out - 1), 0 when out is 1
//   asymmetric                 x / scale
//   tf_half_pixel_for_nearest  (x + 0.5) / scale
// Nearest rounds it by nearest_mode and clamps it to the input; linear
// clamps it to [0, in - 1] and blends the two pixels around it (one scale
// of exactly 1 keeps the axis as it is). The C++ kernels read the source
// rows and columns and weights from tables made here at generation time;
// the CUDA kernel computes them on the device with the same float
// operations (hg_resize2d_source in templates/cuda/kernels/resize2d.inc).
#include <cmath>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/resize2d.h"

namespace hybgen {
namespace {

constexpr int64_t kMaxSize = int64_t{1} << 20;

int transform_code(const std::string& mode) {
  if (mode == "half_pixel") return 0;
  if (mode == "pytorch_half_pixel") return 1;
  if (mode == "align_corners") return 2;
  if (mode == "asymmetric") return 3;
  return 4;  // tf_half_pixel_for_nearest
}

int rounding_code(const std::string& mode) {
  if (mode == "round_prefer_floor") return 0;
  if (mode == "round_prefer_ceil") return 1;
  if (mode == "floor") return 2;
  return 3;  // ceil
}

// The scale of an axis as the kernels use it: the attribute, or out / in in float.
float axis_scale(double attr, int64_t in, int64_t out) {
  return attr > 0.0 ? static_cast<float>(attr) : static_cast<float>(out) / static_cast<float>(in);
}

// The source coordinate of output index `o` (the same float operations as
// hg_resize2d_source in the CUDA kernel).
float source_coordinate(int transform, int64_t o, float scale, int64_t in, int64_t out) {
  const float x = static_cast<float>(o);
  switch (transform) {
    case 0:
      return (x + 0.5f) / scale - 0.5f;
    case 1:
      return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case 2:
      return out == 1 ? 0.0f : x * static_cast<float>(in - 1) / static_cast<float>(out - 1);
    case 3:
      return x / scale;
    default:
      return (x + 0.5f) / scale;
  }
}

int64_t nearest_index(int rounding, float r, int64_t in) {
  float v;
  if (rounding == 0)
    v = r == std::floor(r) + 0.5f ? std::floor(r) : std::round(r);
  else if (rounding == 1)
    v = std::round(r);
  else if (rounding == 2)
    v = std::floor(r);
  else
    v = std::ceil(r);
  if (!(v >= 0.0f)) return 0;
  if (v > static_cast<float>(in - 1)) return in - 1;
  return static_cast<int64_t>(v);
}

// One axis' source pixels: first, second and the second's weight.
struct AxisTable {
  std::vector<int64_t> first, second;
  std::vector<float> weight;
};

AxisTable axis_table(const Attrs& a, double scale_attr, int64_t in, int64_t out) {
  const bool linear = a.get_string("mode") == "linear";
  const int transform = transform_code(a.get_string("coordinate_transformation_mode"));
  const int rounding = rounding_code(a.get_string("nearest_mode"));
  const float scale = axis_scale(scale_attr, in, out);
  AxisTable t;
  for (int64_t o = 0; o < out; ++o) {
    if (!linear) {
      const int64_t i = nearest_index(rounding, source_coordinate(transform, o, scale, in, out), in);
      t.first.push_back(i), t.second.push_back(i), t.weight.push_back(0.0f);
      continue;
    }
    float r = scale == 1.0f ? static_cast<float>(o) : source_coordinate(transform, o, scale, in, out);
    if (!(r >= 0.0f)) r = 0.0f;
    if (r > static_cast<float>(in - 1)) r = static_cast<float>(in - 1);
    int64_t i0 = static_cast<int64_t>(r);
    if (i0 > in - 1) i0 = in - 1;
    const int64_t i1 = i0 < in - 1 ? i0 + 1 : i0;
    t.first.push_back(i0), t.second.push_back(i1), t.weight.push_back(r - static_cast<float>(i0));
  }
  return t;
}

std::vector<TensorType> resize2d_infer(const Attrs& a, const std::vector<TensorType>& in) {
  const Shape& s = in[0].shape;
  if (s.size() != 4) throw Error("data must be NCHW (4 dims), got " + shape_str(s));
  for (int64_t d : s)
    if (d <= 0) throw Error("data shape " + shape_str(s) + " must be positive");
  const int64_t oh = a.get_int("height"), ow = a.get_int("width");
  if (oh < 1 || ow < 1 || oh > kMaxSize || ow > kMaxSize)
    throw Error("height and width must be in [1, " + int_str(kMaxSize) + "], got " + int_str(oh) + " and " +
                int_str(ow));
  for (const char* name : {"scale_height", "scale_width"}) {
    const double v = a.get_float(name);
    if (!(v >= 0.0) || v > 1e6) throw Error(std::string(name) + " must be positive (0: the size ratio)");
  }
  const Shape out{s[0], s[1], oh, ow};
  if (!checked_bytes(out, sizeof(float))) throw Error("the output " + shape_str(out) + " is too large");
  return {TensorType{out, in[0].dtype}};
}

void resize2d_reference(const KernelIO& io) {
  const Shape& s = io.in_types[0].shape;
  const int64_t planes = s[0] * s[1], ih = s[2], iw = s[3];
  const int64_t oh = io.attrs.get_int("height"), ow = io.attrs.get_int("width");
  const bool linear = io.attrs.get_string("mode") == "linear";
  const AxisTable ry = axis_table(io.attrs, io.attrs.get_float("scale_height"), ih, oh);
  const AxisTable rx = axis_table(io.attrs, io.attrs.get_float("scale_width"), iw, ow);
  for (int64_t p = 0; p < planes; ++p) {
    const float* x = io.input<float>(0) + p * ih * iw;
    float* y = io.output<float>(0) + p * oh * ow;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const float* r0 = x + ry.first[oy] * iw;
      const float* r1 = x + ry.second[oy] * iw;
      const float h1 = ry.weight[oy], h0 = 1.0f - h1;
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t c0 = rx.first[ox], c1 = rx.second[ox];
        if (!linear) {
          y[oy * ow + ox] = r0[c0];
          continue;
        }
        const float w1 = rx.weight[ox], w0 = 1.0f - w1;
        y[oy * ow + ox] = h0 * (w0 * r0[c0] + w1 * r0[c1]) + h1 * (w0 * r1[c0] + w1 * r1[c1]);
      }
    }
  }
}

std::string float_list(const std::vector<float>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + cpp_float(v[i]);
  return s + "}";
}

KernelCall resize2d_emit_cpp(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const Shape& s = ctx.in_types[0].shape;
  const int64_t planes = s[0] * s[1], ih = s[2], iw = s[3];
  const int64_t oh = a.get_int("height"), ow = a.get_int("width");
  const AxisTable ry = axis_table(a, a.get_float("scale_height"), ih, oh);
  const AxisTable rx = axis_table(a, a.get_float("scale_width"), iw, ow);
  const std::string sizes =
      int_str(planes) + ", " + int_str(ih) + ", " + int_str(iw) + ", " + int_str(oh) + ", " + int_str(ow);
  if (a.get_string("mode") == "nearest")
    return {{"parallel", "resize2d"}, "{\n  static const int hg_rows[] = " + cpp_int_list(ry.first) +
                                          ";\n  static const int hg_cols[] = " + cpp_int_list(rx.first) +
                                          ";\n  hg_nearest_resize(" + ctx.in[0] + ", " + ctx.out[0] + ", " + sizes +
                                          ", hg_rows, hg_cols, " + ctx.pool + ");\n}"};
  // Linear: the kernel of _contrib_BilinearResize2D over these tables.
  return {{"parallel", "resize"},
          "{\n  static const int hg_rows[] = " + cpp_int_list(ry.first) + ";\n  static const int hg_rows1[] = " +
              cpp_int_list(ry.second) + ";\n  static const float hg_row_weights[] = " + float_list(ry.weight) +
              ";\n  static const int hg_cols[] = " + cpp_int_list(rx.first) + ";\n  static const int hg_cols1[] = " +
              cpp_int_list(rx.second) + ";\n  static const float hg_col_weights[] = " + float_list(rx.weight) +
              ";\n  hg_bilinear_resize(" + ctx.in[0] + ", " + ctx.out[0] + ", " + sizes +
              ", hg_rows, hg_rows1, hg_row_weights, hg_cols, hg_cols1, hg_col_weights, " + ctx.pool + ");\n}"};
}

Attrs resize(const std::string& mode, int64_t oh, int64_t ow, const std::string& transform,
             const std::string& rounding = "round_prefer_floor", double sh = 0.0, double sw = 0.0) {
  Attrs a;
  a.set("mode", mode);
  a.set("height", oh);
  a.set("width", ow);
  a.set("coordinate_transformation_mode", transform);
  a.set("nearest_mode", rounding);
  a.set("scale_height", sh);
  a.set("scale_width", sw);
  return a;
}

const OpRegistrar resize2d_op([] {
  OpDef d;
  d.name = "Resize2D";
  d.summary = "nearest or linear resizing of NCHW images with ONNX Resize's coordinate and rounding modes";
  d.input_names = {"data"};
  d.attrs = {{"height", AttrKind::kInt, std::nullopt, "output height", {}},
             {"width", AttrKind::kInt, std::nullopt, "output width", {}},
             {"scale_height", AttrKind::kFloat, 0.0, "the height scale of the coordinate transform; 0: out / in", {}},
             {"scale_width", AttrKind::kFloat, 0.0, "the width scale of the coordinate transform; 0: out / in", {}},
             {"mode", AttrKind::kString, std::string("nearest"), "interpolation", {"nearest", "linear"}},
             {"coordinate_transformation_mode", AttrKind::kString, std::string("half_pixel"),
              "output to input coordinates, as ONNX Resize's",
              {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nearest"}},
             {"nearest_mode", AttrKind::kString, std::string("round_prefer_floor"), "nearest: how to round",
              {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}}};
  d.fusion = FusionClass::kOpaque;
  d.infer = resize2d_infer;
  d.reference = resize2d_reference;
  register_kernel(Backend::kCpp, d.name, OpKernel{resize2d_emit_cpp});
  d.flops = [](const Attrs& a, const std::vector<TensorType>&, const std::vector<TensorType>& out) {
    return (a.get_string("mode") == "linear" ? 8.0 : 1.0) * static_cast<double>(out[0].num_elements());
  };
  d.examples = {
      // torch's nearest (asymmetric, floor) by 2 and by 1.5; ONNX's default (half_pixel, round_prefer_floor).
      {resize("nearest", 10, 14, "asymmetric", "floor"), {{1, 3, 5, 7}}},
      {resize("nearest", 6, 9, "asymmetric", "floor", 1.5, 1.5), {{2, 2, 4, 6}}},
      {resize("nearest", 7, 3, "half_pixel"), {{1, 2, 5, 8}}},
      {resize("nearest", 8, 8, "align_corners", "round_prefer_ceil"), {{1, 1, 3, 5}}},
      {resize("nearest", 5, 11, "tf_half_pixel_for_nearest", "ceil"), {{1, 2, 4, 4}}},
      {resize("nearest", 1, 1, "pytorch_half_pixel"), {{1, 2, 3, 3}}},
      // torch's bilinear (pytorch_half_pixel) and with align_corners; downsampling; a scale of 1 on one axis.
      {resize("linear", 9, 13, "pytorch_half_pixel"), {{1, 3, 4, 5}}},
      {resize("linear", 9, 13, "align_corners"), {{1, 3, 4, 5}}},
      {resize("linear", 3, 5, "half_pixel"), {{2, 2, 7, 11}}},
      {resize("linear", 4, 20, "asymmetric", "floor", 1.0, 2.5), {{1, 2, 4, 8}}},
      {resize("linear", 1, 6, "pytorch_half_pixel"), {{1, 2, 1, 1}}},
      {resize("linear", 6, 6, "tf_half_pixel_for_nearest"), {{1, 1, 3, 3}}},
  };
  return d;
}());

}  // namespace

Resize2DParams resize2d_params(const Attrs& a, const Shape& data) {
  Resize2DParams p;
  p.planes = data[0] * data[1], p.ih = data[2], p.iw = data[3];
  p.oh = a.get_int("height"), p.ow = a.get_int("width");
  p.scale_h = axis_scale(a.get_float("scale_height"), p.ih, p.oh);
  p.scale_w = axis_scale(a.get_float("scale_width"), p.iw, p.ow);
  p.linear = a.get_string("mode") == "linear";
  p.transform = transform_code(a.get_string("coordinate_transformation_mode"));
  p.rounding = rounding_code(a.get_string("nearest_mode"));
  return p;
}

}  // namespace hybgen
