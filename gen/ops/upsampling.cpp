// UpSampling (nearest neighbour of one or more inputs, concatenated or
// summed; bilinear as MXNet computes it: a depthwise Deconvolution with the
// weight input) and _contrib_BilinearResize2D (bilinear resizing to a size,
// a scale, another tensor's size or the nearest even/odd size), NCHW, with
// MXNet 1.9's arithmetic.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/deconv.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

namespace {

// Sizes past int16 are refused: MXNet computes resized sizes in int16_t.
constexpr int64_t kMaxResize = 32767;

void check_nchw(const Shape& s, const std::string& what) {
  if (s.size() != 4) throw Error(what + " must be NCHW (4 dims), got " + shape_str(s));
  for (int64_t d : s)
    if (d <= 0) throw Error(what + " shape " + shape_str(s) + " must be positive");
}

}  // namespace

// ---- UpSampling ----

Attrs upsampling_deconv_attrs(const Attrs& a, const Shape& data) {
  const int64_t scale = a.get_int("scale");
  if (a.get_int("num_filter") != data[1])
    throw Error("bilinear UpSampling: num_filter " + int_str(a.get_int("num_filter")) + " must equal the channels " +
                int_str(data[1]));
  const int64_t kernel = 2 * scale - scale % 2, pad = scale / 2;  // pad = ceil((scale - 1) / 2)
  Attrs d;
  d.set("kernel", std::vector<int64_t>{kernel, kernel});
  d.set("stride", std::vector<int64_t>{scale, scale});
  d.set("pad", std::vector<int64_t>{pad, pad});
  d.set("dilate", std::vector<int64_t>{});
  d.set("adj", std::vector<int64_t>{});
  d.set("target_shape", std::vector<int64_t>{});
  d.set("num_filter", data[1]);
  d.set("num_group", data[1]);
  return d;
}

namespace {

bool bilinear(const Attrs& a) { return a.get_string("sample_type") == "bilinear"; }

void check_scale(const Attrs& a) {
  const int64_t scale = a.get_int("scale");
  if (scale < 1 || scale > 4096) throw Error("scale " + int_str(scale) + " must be in [1, 4096]");
}

std::vector<TensorType> infer_upsampling(const Attrs& a, const std::vector<TensorType>& in) {
  check_scale(a);
  const int64_t scale = a.get_int("scale");
  check_nchw(in[0].shape, "data");
  Shape out = in[0].shape;
  out[2] *= scale;
  out[3] *= scale;
  if (bilinear(a)) {
    if (in.size() != 2)
      throw Error("bilinear UpSampling takes data and weight, got " + int_str(static_cast<int64_t>(in.size())) +
                  " inputs");
    const DeconvGeometry g = deconv_geometry(upsampling_deconv_attrs(a, in[0].shape), in[0].shape);
    if (in[1].shape != deconv_weight_shape(g))
      throw Error("weight has shape " + shape_str(in[1].shape) + ", expected " + shape_str(deconv_weight_shape(g)));
    return {TensorType{out, in[0].dtype}};
  }
  const int64_t num_args = a.get_int("num_args");
  if (num_args != 0 && num_args != static_cast<int64_t>(in.size()))
    throw Error("num_args is " + int_str(num_args) + " but the node has " + int_str(static_cast<int64_t>(in.size())) +
                " inputs");
  const bool sum = a.get_string("multi_input_mode") == "sum";
  out[1] = sum ? in[0].shape[1] : 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const Shape& s = in[i].shape;
    check_nchw(s, "input " + int_str(static_cast<int64_t>(i)));
    if (s[0] != out[0] || out[2] % s[2] || out[3] % s[3] || out[2] / s[2] != out[3] / s[3])
      throw Error("input " + int_str(static_cast<int64_t>(i)) + " of shape " + shape_str(s) +
                  " cannot be upsampled by a whole factor to " + int_str(out[2]) + "x" + int_str(out[3]) + " (batch " +
                  int_str(out[0]) + ")");
    if (sum && s[1] != out[1])
      throw Error("multi_input_mode sum needs the same channels: input " + int_str(static_cast<int64_t>(i)) + " has " +
                  int_str(s[1]) + ", input 0 " + int_str(out[1]));
    if (!sum) out[1] += s[1];
  }
  return {TensorType{out, in[0].dtype}};
}

void reference_upsampling(const KernelIO& io) {
  const Shape& out = io.out_types[0].shape;
  if (bilinear(io.attrs)) {
    const DeconvGeometry g = deconv_geometry(upsampling_deconv_attrs(io.attrs, io.in_types[0].shape), io.in_types[0].shape);
    deconv_reference(g, io.input<float>(0), io.input<float>(1), nullptr, io.output<float>(0));
    return;
  }
  const bool sum = io.attrs.get_string("multi_input_mode") == "sum";
  const int64_t oh = out[2], ow = out[3];
  int64_t channel0 = 0;
  for (std::size_t i = 0; i < io.in.size(); ++i) {
    const Shape& s = io.in_types[i].shape;
    const int64_t scale = oh / s[2];
    for (int64_t img = 0; img < s[0]; ++img)
      for (int64_t ch = 0; ch < s[1]; ++ch) {
        const float* x = io.input<float>(i) + (img * s[1] + ch) * s[2] * s[3];
        float* y = io.output<float>(0) + (img * out[1] + (sum ? ch : channel0 + ch)) * oh * ow;
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox) {
            const float v = x[(oy / scale) * s[3] + ox / scale];
            y[oy * ow + ox] = sum && i > 0 ? y[oy * ow + ox] + v : v;
          }
      }
    if (!sum) channel0 += s[1];
  }
}

KernelCall emit_upsampling(const EmitContext& ctx) {
  const Shape& out = ctx.out_types[0].shape;
  if (bilinear(ctx.node.attrs))
    return deconv_direct_cpp(
        deconv_geometry(upsampling_deconv_attrs(ctx.node.attrs, ctx.in_types[0].shape), ctx.in_types[0].shape), ctx);
  const bool sum = ctx.node.attrs.get_string("multi_input_mode") == "sum";
  std::string code;
  int64_t channel0 = 0;
  for (std::size_t i = 0; i < ctx.in.size(); ++i) {
    const Shape& s = ctx.in_types[i].shape;
    if (!code.empty()) code += "\n";
    code += "hg_upsample_nearest(" + ctx.in[i] + ", " + ctx.out[0] + " + " + int_str(channel0 * out[2] * out[3]) +
            ", " + int_str(s[0]) + ", " + int_str(s[1]) + ", " + int_str(s[2]) + ", " + int_str(s[3]) + ", " +
            int_str(out[2] / s[2]) + ", " + int_str(out[1] * out[2] * out[3]) + ", " +
            (sum && i > 0 ? "true" : "false") + ", " + ctx.pool + ");";
    if (!sum) channel0 += s[1];
  }
  return {{"parallel", "upsample"}, code};
}

Attrs upsampling(int64_t scale, const std::string& type, int64_t num_args, const std::string& mode = "concat",
                 int64_t num_filter = 0) {
  Attrs a;
  a.set("scale", scale);
  a.set("sample_type", type);
  a.set("num_args", num_args);
  a.set("multi_input_mode", mode);
  a.set("num_filter", num_filter);
  return a;
}

const OpRegistrar reg_upsampling([] {
  OpDef d;
  d.name = "UpSampling";
  d.summary = "nearest-neighbour (one or more inputs) or bilinear (a depthwise deconvolution) upsampling, NCHW";
  d.input_names = {"data", "weight or more data", "..."};
  d.min_inputs = 1;
  d.max_inputs = -1;
  d.attrs = {{"scale", AttrKind::kInt, std::nullopt, "upsampling factor", {}},
             {"sample_type", AttrKind::kString, std::nullopt, "nearest or bilinear", {"nearest", "bilinear"}},
             {"num_filter", AttrKind::kInt, int64_t{0}, "bilinear: the channels", {}},
             {"num_args", AttrKind::kInt, int64_t{0}, "inputs (bilinear: 2, data and weight; 0: any)", {}},
             {"multi_input_mode", AttrKind::kString, std::string("concat"),
              "nearest with several inputs: concatenate them on the channels, or sum them",
              {"concat", "sum"}}};
  d.infer = infer_upsampling;
  d.reference = reference_upsampling;
  register_kernel(Backend::kCpp, d.name, OpKernel{emit_upsampling});
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    if (!bilinear(a)) return 0.0;
    const int64_t k = 2 * a.get_int("scale") - a.get_int("scale") % 2;
    return 2.0 * static_cast<double>(in[0].num_elements() * k * k);
  };
  d.weight_shapes = [](const Attrs& a, const Shape& data) {
    if (!bilinear(a)) return std::vector<Shape>{};
    check_nchw(data, "data");
    return std::vector<Shape>{deconv_weight_shape(deconv_geometry(upsampling_deconv_attrs(a, data), data))};
  };
  d.examples = {
      {upsampling(2, "nearest", 1), {{1, 3, 5, 7}}},
      {upsampling(3, "nearest", 1), {{2, 2, 1, 4}}},
      // Several inputs upsampled to input 0's size times the scale: concatenated, summed.
      {upsampling(2, "nearest", 2), {{1, 2, 4, 4}, {1, 3, 2, 2}}},
      {upsampling(2, "nearest", 3, "sum"), {{2, 2, 2, 2}, {2, 2, 4, 4}, {2, 2, 1, 1}}},
      // Bilinear: kernel 4 stride 2 pad 1, and kernel 5 stride 3 pad 1, depthwise.
      {upsampling(2, "bilinear", 2, "concat", 3), {{1, 3, 5, 6}, {3, 1, 4, 4}}},
      {upsampling(3, "bilinear", 2, "concat", 2), {{2, 2, 3, 4}, {2, 1, 5, 5}}},
  };
  return d;
}());

// ---- _contrib_BilinearResize2D ----

// An optional float attribute: 0 stands for MXNet's None.
bool has_scale(const Attrs& a, const char* name) { return a.get_float(name) != 0.0; }

int64_t checked_size(int64_t v, const char* what) {
  if (v <= 0 || v > kMaxResize)
    throw Error(std::string("the output ") + what + " " + int_str(v) + " is out of range [1, " + int_str(kMaxResize) +
                "]");
  return v;
}

// Output (height, width) by MXNet's rules: sizes scaled in float and
// truncated, as BilinearSampleOpInferShape does (in "size" mode a
// scale_height also makes scale_width apply, which must then be set).
std::pair<int64_t, int64_t> resize_size(const Attrs& a, const std::vector<TensorType>& in) {
  const Shape& s = in[0].shape;
  const std::string& mode = a.get_string("mode");
  const int64_t h = s[2], w = s[3];
  const auto scaled = [](double scale, int64_t size) {
    const float v = static_cast<float>(scale) * static_cast<float>(size);
    if (!(v >= 0.0f && v < 1e9f)) throw Error("the scale gives an output size out of range");
    return static_cast<int64_t>(v);
  };
  int64_t oh = 0, ow = 0;
  if (mode == "size") {
    if (has_scale(a, "scale_height")) {
      if (!has_scale(a, "scale_width")) throw Error("mode size with scale_height needs scale_width too");
      oh = scaled(a.get_float("scale_height"), h);
      ow = scaled(a.get_float("scale_width"), w);
    } else {
      oh = a.get_int("height");
      ow = a.get_int("width");
    }
  } else if (mode == "odd_scale") {
    if (!has_scale(a, "scale_height") || !has_scale(a, "scale_width"))
      throw Error("mode odd_scale needs scale_height and scale_width");
    oh = h % 2 == 0 ? scaled(a.get_float("scale_height"), h) : scaled(a.get_float("scale_height"), h - 1) + 1;
    ow = w % 2 == 0 ? scaled(a.get_float("scale_width"), w) : scaled(a.get_float("scale_width"), w - 1) + 1;
  } else if (mode == "like") {
    if (in.size() != 2) throw Error("mode like takes a second input to take the size of");
    if (in[1].shape.size() != 4) throw Error("the like input must be NCHW (4 dims), got " + shape_str(in[1].shape));
    oh = in[1].shape[2];
    ow = in[1].shape[3];
  } else if (mode == "to_even_down") {
    oh = h - h % 2, ow = w - w % 2;
  } else if (mode == "to_even_up") {
    oh = h + h % 2, ow = w + w % 2;
  } else if (mode == "to_odd_down") {
    oh = h % 2 ? h : h - 1, ow = w % 2 ? w : w - 1;
  } else {  // to_odd_up
    oh = h % 2 ? h : h + 1, ow = w % 2 ? w : w + 1;
  }
  return {checked_size(oh, "height"), checked_size(ow, "width")};
}

std::vector<TensorType> infer_resize(const Attrs& a, const std::vector<TensorType>& in) {
  check_nchw(in[0].shape, "data");
  const bool like = a.get_string("mode") == "like";
  if (in.size() != (like ? 2u : 1u))
    throw Error(std::string("mode ") + a.get_string("mode") + " takes " + (like ? "2 inputs" : "1 input") + ", got " +
                int_str(static_cast<int64_t>(in.size())));
  for (const char* name : {"height", "width"})
    if (a.get_int(name) < 1) throw Error(std::string(name) + " must be at least 1");
  for (const char* name : {"scale_height", "scale_width"})
    if (!(a.get_float(name) >= 0.0) || a.get_float(name) > 1e6)
      throw Error(std::string(name) + " must be positive (0: unset)");
  const auto [oh, ow] = resize_size(a, in);
  return {TensorType{{in[0].shape[0], in[0].shape[1], oh, ow}, in[0].dtype}};
}

}  // namespace

ResizeAxis resize_axis(int64_t in, int64_t out, bool align_corners) {
  ResizeAxis axis;
  // area_pixel_compute_scale and _source_index, in float as MXNet's CPU kernel.
  const float scale = out > 1 ? (align_corners ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                               : static_cast<float>(in) / static_cast<float>(out))
                              : 0.0f;
  for (int64_t o = 0; o < out; ++o) {
    float r;
    if (align_corners) {
      r = scale * static_cast<float>(o);
    } else {
      r = static_cast<float>(static_cast<double>(scale) * (static_cast<double>(o) + 0.5) - 0.5);
      if (r < 0.0f) r = 0.0f;
    }
    int64_t i0 = static_cast<int64_t>(r);
    if (i0 > in - 1) i0 = in - 1;
    axis.first.push_back(i0);
    axis.second.push_back(i0 < in - 1 ? i0 + 1 : i0);
    axis.lambda.push_back(r - static_cast<float>(i0));
  }
  return axis;
}

namespace {

void reference_resize(const KernelIO& io) {
  const Shape& s = io.in_types[0].shape;
  const Shape& o = io.out_types[0].shape;
  const int64_t planes = s[0] * s[1], ih = s[2], iw = s[3], oh = o[2], ow = o[3];
  if (ih == oh && iw == ow) {
    std::memcpy(io.output<float>(0), io.input<float>(0), static_cast<std::size_t>(planes * ih * iw) * sizeof(float));
    return;
  }
  const bool align = io.attrs.get_bool("align_corners");
  const ResizeAxis ry = resize_axis(ih, oh, align), rx = resize_axis(iw, ow, align);
  for (int64_t p = 0; p < planes; ++p) {
    const float* x = io.input<float>(0) + p * ih * iw;
    float* y = io.output<float>(0) + p * oh * ow;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const float h1 = ry.lambda[oy], h0 = 1.0f - h1;
      const float* r0 = x + ry.first[oy] * iw;
      const float* r1 = x + ry.second[oy] * iw;
      for (int64_t ox = 0; ox < ow; ++ox) {
        const float w1 = rx.lambda[ox], w0 = 1.0f - w1;
        const int64_t a = rx.first[ox], b = rx.second[ox];
        y[oy * ow + ox] = h0 * (w0 * r0[a] + w1 * r0[b]) + h1 * (w0 * r1[a] + w1 * r1[b]);
      }
    }
  }
}

std::string weight_list(const std::vector<float>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + cpp_float(v[i]);
  return s + "}";
}

KernelCall emit_resize(const EmitContext& ctx) {
  const Shape& s = ctx.in_types[0].shape;
  const Shape& o = ctx.out_types[0].shape;
  const int64_t planes = s[0] * s[1], ih = s[2], iw = s[3], oh = o[2], ow = o[3];
  // Mode like reads only the second input's shape.
  const std::string like = ctx.in.size() > 1 ? "(void)(" + ctx.in[1] + ");  // only its shape is used\n" : "";
  if (ih == oh && iw == ow)
    return {{"copy"}, like + "hg_copy(" + ctx.in[0] + ", " + ctx.out[0] + ", " + int_str(planes * ih * iw) + ");"};
  const bool align = ctx.node.attrs.get_bool("align_corners");
  const ResizeAxis ry = resize_axis(ih, oh, align), rx = resize_axis(iw, ow, align);
  // The source rows and columns and their weights, computed here with MXNet's
  // float arithmetic, so every target interpolates between the same pixels.
  return {{"parallel", "resize"},
          like + "{\n  static const int hg_rows[] = " + cpp_int_list(ry.first) + ";\n  static const int hg_rows1[] = " +
              cpp_int_list(ry.second) + ";\n  static const float hg_row_weights[] = " + weight_list(ry.lambda) +
              ";\n  static const int hg_cols[] = " + cpp_int_list(rx.first) + ";\n  static const int hg_cols1[] = " +
              cpp_int_list(rx.second) + ";\n  static const float hg_col_weights[] = " + weight_list(rx.lambda) +
              ";\n  hg_bilinear_resize(" + ctx.in[0] + ", " + ctx.out[0] + ", " + int_str(planes) + ", " + int_str(ih) +
              ", " + int_str(iw) + ", " + int_str(oh) + ", " + int_str(ow) +
              ", hg_rows, hg_rows1, hg_row_weights, hg_cols, hg_cols1, hg_col_weights, " + ctx.pool + ");\n}"};
}

Attrs resize(const std::string& mode, int64_t height, int64_t width, double scale_h, double scale_w, bool align) {
  Attrs a;
  a.set("mode", mode);
  a.set("height", height);
  a.set("width", width);
  a.set("scale_height", scale_h);
  a.set("scale_width", scale_w);
  a.set("align_corners", align);
  return a;
}

const OpRegistrar reg_resize([] {
  OpDef d;
  d.name = "_contrib_BilinearResize2D";
  d.aliases = {"BilinearResize2D"};
  d.summary = "bilinear resizing of NCHW images (MXNet contrib.BilinearResize2D)";
  d.input_names = {"data", "like"};
  d.min_inputs = 1;
  d.max_inputs = 2;
  d.attrs = {{"height", AttrKind::kInt, int64_t{1}, "output height (mode size without scale_height)", {}},
             {"width", AttrKind::kInt, int64_t{1}, "output width (mode size without scale_height)", {}},
             {"scale_height", AttrKind::kFloat, 0.0, "height scale (modes size, odd_scale); 0: unset", {}},
             {"scale_width", AttrKind::kFloat, 0.0, "width scale (modes size, odd_scale); 0: unset", {}},
             {"mode", AttrKind::kString, std::string("size"), "how the output size is chosen",
              {"size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up"}},
             {"align_corners", AttrKind::kBool, true, "corner pixels' centres align", {}}};
  d.infer = infer_resize;
  d.reference = reference_resize;
  register_kernel(Backend::kCpp, d.name, OpKernel{emit_resize});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>& out) {
    return 8.0 * static_cast<double>(out[0].num_elements());
  };
  d.examples = {
      {resize("size", 9, 13, 0, 0, true), {{1, 3, 4, 5}}},
      {resize("size", 7, 3, 0, 0, false), {{2, 2, 5, 8}}},  // down in x, up in y, half-pixel centres
      {resize("size", 1, 1, 2.0, 1.5, false), {{1, 2, 3, 4}}},
      {resize("odd_scale", 1, 1, 2.0, 0.5, true), {{1, 1, 5, 8}}},
      {resize("like", 1, 1, 0, 0, true), {{1, 2, 3, 3}, {1, 1, 8, 6}}},
      {resize("to_even_up", 1, 1, 0, 0, true), {{1, 2, 5, 7}}},
      {resize("to_odd_down", 1, 1, 0, 0, false), {{1, 1, 6, 9}}},
      {resize("size", 1, 6, 0, 0, true), {{1, 2, 1, 1}}},  // a 1x1 image, an output of height 1
      {resize("to_even_down", 1, 1, 0, 0, true), {{1, 2, 4, 6}}},  // the same size: a copy
  };
  return d;
}());

}  // namespace
}  // namespace hybgen
