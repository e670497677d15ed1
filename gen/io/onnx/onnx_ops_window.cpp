// ONNX converters of the windowed and resampling ops: the padding shared by
// Conv, ConvTranspose and the pools (io/onnx/onnx_pads.h), ConvTranspose onto
// Deconvolution (output_padding, output_shape, groups, asymmetric pads),
// and Resize / Upsample onto Resize2D (nearest and linear, their coordinate
// transformations; cubic, tf_crop_and_resize, antialiasing and resizing of
// other axes than H and W are refused).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/onnx/onnx_ops.h"
#include "io/onnx/onnx_pads.h"
#include "ir/error.h"
#include "ops/op_util.h"

namespace hybgen {

using onnx_util::int_list;

void check_window_pads(OnnxCheck& k) {
  const std::string autopad = k.attr_string("auto_pad", "NOTSET");
  if (autopad != "NOTSET" && autopad != "SAME_UPPER" && autopad != "SAME_LOWER" && autopad != "VALID")
    k.refuse("auto_pad", "must be NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  const auto pads = k.attr_ints("pads", {});
  if (pads.size() % 2) return k.refuse("pads", "must have an even length (begin and end per axis)");
  for (int64_t p : pads)
    if (p < 0) return k.refuse("pads", "negative padding is not supported");
}

WindowPads window_pads(OnnxContext& c, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                       const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  const std::size_t n = in.size();
  WindowPads p{std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
  // Bounded so that the arithmetic below cannot overflow (the ops check their own limits after).
  constexpr int64_t kLimit = int64_t{1} << 30;
  for (std::size_t i = 0; i < n; ++i)
    if (kernel[i] < 1 || kernel[i] > kLimit || strides[i] < 1 || strides[i] > kLimit || dilations[i] < 1 ||
        dilations[i] > kLimit)
      c.fail("kernel_shape " + int_list(kernel) + ", strides " + int_list(strides) + " or dilations " +
             int_list(dilations) + " are out of range");
  const std::string autopad = c.attr_string("auto_pad", "NOTSET");
  const auto pads = c.attr_ints("pads", {});
  if (autopad == "SAME_UPPER" || autopad == "SAME_LOWER") {
    for (std::size_t i = 0; i < n; ++i) {
      const int64_t out = (in[i] + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in[i]);
      const int64_t small = total / 2, large = total - small;
      p.begin[i] = autopad == "SAME_UPPER" ? small : large;
      p.end[i] = autopad == "SAME_UPPER" ? large : small;
    }
    return p;
  }
  if (autopad == "VALID" || pads.empty()) return p;
  if (pads.size() != 2 * n)
    c.fail("pads " + int_list(pads) + " has " + std::to_string(pads.size()) + " values for " + std::to_string(n) +
           " spatial axes (expected " + std::to_string(2 * n) + ")");
  for (std::size_t i = 0; i < n; ++i) {
    p.begin[i] = pads[i], p.end[i] = pads[i + n];
    if (p.begin[i] < 0 || p.end[i] < 0) c.fail("negative pads " + int_list(pads) + " are not supported");
    if (p.begin[i] > kLimit || p.end[i] > kLimit) c.fail("pads " + int_list(pads) + " are out of range");
  }
  return p;
}

void onnx_dilated_max_pool(OnnxContext& c, const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                           const std::vector<int64_t>& dilations) {
  const Shape x = c.shape(0);
  const std::size_t n = x.size() - 2;
  const std::vector<int64_t> in(x.begin() + 2, x.end());
  const std::string autopad = c.attr_string("auto_pad", "NOTSET");
  if (autopad == "SAME_UPPER" || autopad == "SAME_LOWER")
    c.fail("auto_pad " + autopad + " with dilations is not supported (the spec pads for the dilated kernel, ONNX "
           "Runtime for the undilated one)");
  const WindowPads pads = window_pads(c, in, kernel, strides, dilations);
  const bool ceil = c.attr_int("ceil_mode", 0) != 0;
  if (c.attr_int("storage_order", 0) != 0) c.fail("storage_order = 1 (column-major indices) is not supported");
  int64_t taps = 1;
  std::vector<int64_t> out(n), end_pad(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t span = (kernel[i] - 1) * dilations[i] + 1;
    const int64_t room = in[i] + pads.begin[i] + pads.end[i] - span;
    if (room < 0) c.fail("the dilated kernel does not fit the padded input");
    out[i] = (ceil ? (room + strides[i] - 1) / strides[i] : room / strides[i]) + 1;
    if (ceil && (out[i] - 1) * strides[i] >= in[i] + pads.begin[i]) --out[i];
    if (pads.begin[i] >= kernel[i] || pads.end[i] >= kernel[i]) c.fail("pads must be smaller than kernel_shape");
    // Windows past the end padding (ceil_mode) read more of the lowest float.
    end_pad[i] = std::max<int64_t>(0, (out[i] - 1) * strides[i] + span - in[i] - pads.begin[i]);
    taps *= kernel[i];
    if (taps > 64) c.fail("a dilated kernel of more than 64 taps is not supported");
  }
  std::string padded = c.input(0);
  std::vector<int64_t> width(2 * x.size(), 0);
  bool any = false;
  for (std::size_t i = 0; i < n; ++i) {
    width[2 * (i + 2)] = pads.begin[i], width[2 * (i + 2) + 1] = end_pad[i];
    any = any || pads.begin[i] || end_pad[i];
  }
  if (any) {
    Attrs a;
    a.set("mode", std::string("constant"));
    a.set("pad_width", width);
    a.set("constant_value", -3.4028234663852886e38);
    padded = c.add_node("Pad", a, {padded}, "pad");
  }
  std::string acc;
  for (int64_t t = 0; t < taps; ++t) {
    std::vector<int64_t> begin(x.size(), 0), end(x.size(), 0), step(x.size(), 1);
    begin[0] = begin[1] = kSliceNone, end[0] = end[1] = kSliceNone;
    for (int64_t i = static_cast<int64_t>(n) - 1, rest = t; i >= 0; --i) {
      const std::size_t a = static_cast<std::size_t>(i);
      const int64_t tap = rest % kernel[a];
      rest /= kernel[a];
      begin[a + 2] = tap * dilations[a];
      end[a + 2] = begin[a + 2] + (out[a] - 1) * strides[a] + 1;
      step[a + 2] = strides[a];
    }
    Attrs a;
    a.set("begin", begin);
    a.set("end", end);
    a.set("step", step);
    const std::string tap = c.add_node("slice", a, {padded}, "tap" + std::to_string(t));
    acc = acc.empty() ? tap : c.add_node("broadcast_maximum", {}, {acc, tap}, "max" + std::to_string(t));
  }
  c.set_output(0, acc);
}

namespace {

std::vector<int64_t> per_axis(OnnxContext& c, const std::string& name, std::size_t spatial, int64_t fallback) {
  auto v = c.attr_ints(name, std::vector<int64_t>(spatial, fallback));
  if (v.size() != spatial)
    c.fail(name + " has " + std::to_string(v.size()) + " values for " + std::to_string(spatial) + " spatial axes");
  return v;
}

// ---- ConvTranspose -----------------------------------------------------------

// ONNX ConvTranspose: the output is stride * (in - 1) + output_padding +
// (k - 1) * dilation + 1 - pad_begin - pad_end, or output_shape, whose total
// padding is split as the spec says (SAME_UPPER: the larger half at the end,
// otherwise at the beginning). Deconvolution computes the same with pad,
// pad_end and adj = output_padding.
void convert_conv_transpose(OnnxContext& c) {
  const Shape x = c.shape(0), w = c.shape(1);
  if (x.size() != 3 && x.size() != 4)
    c.fail("input of rank " + std::to_string(x.size()) + "; ConvTranspose supports 1-D and 2-D (NCW, NCHW)");
  const std::size_t spatial = x.size() - 2;
  if (w.size() != x.size()) c.fail("weight " + shape_str(w) + " does not match input " + shape_str(x));
  const int64_t group = c.attr_int("group", 1);
  if (group < 1 || x[1] % group || w[0] != x[1])
    c.fail("weight " + shape_str(w) + " and group " + std::to_string(group) + " do not fit input " + shape_str(x));
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  const auto ks = c.attr_ints("kernel_shape", kernel);
  if (ks != kernel) c.fail("kernel_shape " + int_list(ks) + " differs from the weight's " + shape_str(w));
  const auto strides = per_axis(c, "strides", spatial, 1);
  const auto dil = per_axis(c, "dilations", spatial, 1);
  auto out_pad = per_axis(c, "output_padding", spatial, 0);
  for (std::size_t i = 0; i < spatial; ++i) {
    // Bounded as Deconvolution bounds them, before any arithmetic.
    constexpr int64_t kLimit = int64_t{1} << 20;
    if (strides[i] < 1 || dil[i] < 1 || strides[i] > kLimit || dil[i] > kLimit || kernel[i] > kLimit)
      c.fail("strides, dilations and kernel must be in [1, " + std::to_string(kLimit) + "]");
    if (out_pad[i] < 0 || out_pad[i] >= strides[i])
      c.fail("output_padding " + int_list(out_pad) + " must be in [0, stride) on each axis");
  }
  const std::string autopad = c.attr_string("auto_pad", "NOTSET");
  const auto output_shape = c.attr_ints("output_shape", {});
  std::vector<int64_t> begin(spatial, 0), end(spatial, 0);
  const auto pads = c.attr_ints("pads", {});
  if (!output_shape.empty() || autopad == "SAME_UPPER" || autopad == "SAME_LOWER") {
    std::vector<int64_t> target = output_shape;
    if (target.size() == spatial + 2) target.erase(target.begin(), target.begin() + 2);
    if (target.empty())
      for (std::size_t i = 0; i < spatial; ++i) target.push_back(x[i + 2] * strides[i]);
    if (target.size() != spatial) c.fail("output_shape " + int_list(output_shape) + " does not match the input's axes");
    for (int64_t t : target)
      if (t < 1 || t > (int64_t{1} << 40)) c.fail("output_shape " + int_list(output_shape) + " is out of range");
    for (std::size_t i = 0; i < spatial; ++i) {
      const int64_t full = strides[i] * (x[i + 2] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1;
      const int64_t total = full - target[i];
      // Floor division, as the spec's Python: a negative total (an output
      // larger than the full one) extends the end, which adj does.
      const int64_t small = total >= 0 ? total / 2 : -((-total + 1) / 2), large = total - small;
      begin[i] = autopad == "SAME_UPPER" ? small : large;
      end[i] = autopad == "SAME_UPPER" ? large : small;
      if (end[i] < 0) out_pad[i] -= end[i], end[i] = 0;
      if (begin[i] < 0 || out_pad[i] >= strides[i])
        c.fail("output_shape " + int_list(output_shape) + " is larger than the transposed convolution can make (" +
               std::to_string(full) + " on axis " + std::to_string(i) + ")");
    }
  } else if (autopad != "VALID" && !pads.empty()) {
    if (pads.size() != 2 * spatial) c.fail("pads " + int_list(pads) + " needs 2 values per spatial axis");
    for (std::size_t i = 0; i < spatial; ++i) {
      begin[i] = pads[i], end[i] = pads[i + spatial];
      if (begin[i] < 0 || end[i] < 0) c.fail("negative pads " + int_list(pads) + " are not supported");
    }
  }
  Attrs a;
  a.set("kernel", kernel);
  a.set("num_filter", w[1] * group);
  a.set("num_group", group);
  a.set("stride", strides);
  a.set("dilate", dil);
  a.set("pad", begin);
  a.set("pad_end", end);
  a.set("adj", out_pad);
  std::vector<std::string> in = {c.input(0), c.input(1)};
  a.set("no_bias", !c.has_input(2));
  if (c.has_input(2)) in.push_back(c.input(2));
  c.set_output(0, c.add_node("Deconvolution", a, in));
}

const OnnxConverterRegistrar conv_transpose_reg(
    OnnxConverter("ConvTranspose")
        .converts(convert_conv_transpose)
        .handles({"kernel_shape", "strides", "dilations", "pads", "group", "auto_pad", "output_padding",
                  "output_shape"})
        .checks([](OnnxCheck& k) {
          check_window_pads(k);
          const std::size_t axes = k.attr_ints("kernel_shape", {}).size();
          if (axes > 2) k.refuse("kernel_shape", "only 1-D and 2-D transposed convolutions are supported");
        }));

// ---- Resize / Upsample -------------------------------------------------------

// The output sizes and scales of H and W from scales (floats, one per axis)
// or sizes; the other axes must keep their size.
struct ResizeTarget {
  int64_t oh, ow;
  double sh = 0.0, sw = 0.0;  // 0: out / in
};

ResizeTarget resize_target(OnnxContext& c, const Shape& x, const std::vector<double>& scales,
                           const std::vector<int64_t>& sizes) {
  if (x.size() != 4) c.fail("input " + shape_str(x) + ": only NCHW (4-D) inputs are resized");
  ResizeTarget t{};
  if (!sizes.empty()) {
    if (sizes.size() != 4) c.fail("sizes has " + std::to_string(sizes.size()) + " values for a 4-D input");
    if (sizes[0] != x[0] || sizes[1] != x[1]) c.fail("sizes " + int_list(sizes) + " resizes N or C: only H and W are");
    t.oh = sizes[2], t.ow = sizes[3];
  } else {
    if (scales.size() != 4) c.fail("scales has " + std::to_string(scales.size()) + " values for a 4-D input");
    if (scales[0] != 1.0 || scales[1] != 1.0) c.fail("scales resizes N or C: only H and W are");
    for (double s : {scales[2], scales[3]})
      if (!(s > 0.0) || s > 1e6) c.fail("scales must be positive");
    // As ONNX Runtime: the size is the input size times the float scale, truncated.
    const float fh = static_cast<float>(x[2]) * static_cast<float>(scales[2]);
    const float fw = static_cast<float>(x[3]) * static_cast<float>(scales[3]);
    t.oh = static_cast<int64_t>(fh), t.ow = static_cast<int64_t>(fw);
    t.sh = static_cast<float>(scales[2]), t.sw = static_cast<float>(scales[3]);
  }
  if (t.oh < 1 || t.ow < 1 || t.oh > (int64_t{1} << 20) || t.ow > (int64_t{1} << 20))
    c.fail("the output size " + std::to_string(t.oh) + " x " + std::to_string(t.ow) + " is out of range");
  return t;
}

void add_resize(OnnxContext& c, const ResizeTarget& t, const std::string& mode, const std::string& transform,
                const std::string& nearest) {
  const Shape x = c.shape(0);
  if (t.oh == x[2] && t.ow == x[3] && (t.sh == 0.0 || t.sh == 1.0) && (t.sw == 0.0 || t.sw == 1.0) &&
      transform != "tf_half_pixel_for_nearest") {
    // Same size, scale 1: each output pixel is its input pixel in every mode.
    return c.set_output(0, c.add_node("identity", {}, {c.input(0)}));
  }
  Attrs a;
  a.set("height", t.oh);
  a.set("width", t.ow);
  a.set("scale_height", t.sh);
  a.set("scale_width", t.sw);
  a.set("mode", mode);
  a.set("coordinate_transformation_mode", transform);
  a.set("nearest_mode", nearest);
  c.set_output(0, c.add_node("Resize2D", a, {c.input(0)}));
}

std::string onnx_mode(const std::string& mode) {
  if (mode == "bilinear") return "linear";  // Upsample-7's spelling
  return mode;
}

void check_resize(OnnxCheck& k) {
  const std::string mode = k.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear")
    k.refuse("mode", "'" + mode + "' is not supported (nearest and linear are)");
  if (k.op_type() == "Resize" && k.opset() >= 11) {
    const std::string t = k.attr_string("coordinate_transformation_mode", "half_pixel");
    if (t != "half_pixel" && t != "pytorch_half_pixel" && t != "align_corners" && t != "asymmetric" &&
        t != "tf_half_pixel_for_nearest")
      k.refuse("coordinate_transformation_mode", "'" + t + "' is not supported");
    if (mode == "linear" && t == "tf_half_pixel_for_nearest")
      k.refuse("coordinate_transformation_mode", "tf_half_pixel_for_nearest is for nearest mode only");
    const std::string nm = k.attr_string("nearest_mode", "round_prefer_floor");
    if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil")
      k.refuse("nearest_mode", "'" + nm + "' is not supported");
    if (k.attr_int("antialias", 0) != 0) k.refuse("antialias", "antialiasing is not supported");
    const auto axes = k.attr_ints("axes", {});
    if (!axes.empty() && axes != std::vector<int64_t>{2, 3} && axes != std::vector<int64_t>{-2, -1})
      k.refuse("axes", "only H and W (axes [2, 3]) are resized");
    const std::string policy = k.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch") k.refuse("keep_aspect_ratio_policy", "only stretch is supported");
  }
}

// Resize-10 and Upsample: scales only, asymmetric coordinates, nearest by
// floor. ONNX Runtime rounds down-sampling nearest differently there, so
// only up-sampling (scales >= 1) is taken.
void convert_old_resize(OnnxContext& c, const std::vector<double>& scales) {
  const std::string mode = onnx_mode(c.attr_string("mode", "nearest"));
  const ResizeTarget t = resize_target(c, c.shape(0), scales, {});
  if (mode == "nearest" && (scales[2] < 1.0 || scales[3] < 1.0))
    c.fail("nearest down-sampling in " + c.op_type() + " before opset 11 is not supported");
  add_resize(c, t, mode, "asymmetric", "floor");
}

const OnnxConverterRegistrar upsample_reg(
    OnnxConverter("Upsample")
        .converts([](OnnxContext& c) {
          std::vector<double> scales;
          if (c.opset() < 9) {
            scales = c.attr_floats("scales", {});
            if (scales.empty()) c.fail("needs the scales attribute");
          } else {
            scales = c.constant(1).as_doubles();
          }
          convert_old_resize(c, scales);
        })
        .handles({"mode", "scales"})
        .checks(check_resize));

void convert_resize(OnnxContext& c) {
  if (c.opset() < 11) return convert_old_resize(c, c.constant(1).as_doubles());
  // Inputs: X, roi, scales, sizes (opset 13+: roi and scales optional).
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (c.has_input(3) && c.constant(3).size() > 0) sizes = c.constant(3).as_ints();
  else if (c.has_input(2) && c.constant(2).size() > 0) scales = c.constant(2).as_doubles();
  else c.fail("needs scales or sizes");
  // Opset 18's axes: scales or sizes of H and W only.
  if (!c.attr_ints("axes", {}).empty()) {
    if (c.shape(0).size() != 4) c.fail("axes with an input of rank " + std::to_string(c.shape(0).size()));
    const Shape x = c.shape(0);
    if (scales.size() == 2) scales.insert(scales.begin(), {1.0, 1.0});
    if (sizes.size() == 2) sizes.insert(sizes.begin(), {x[0], x[1]});
  }
  const std::string mode = c.attr_string("mode", "nearest");
  const std::string transform = c.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = c.attr_string("nearest_mode", "round_prefer_floor");
  c.attr_float("cubic_coeff_a", -0.75);  // cubic only
  c.attr_int("exclude_outside", 0);      // cubic only
  c.attr_float("extrapolation_value", 0.0);  // tf_crop_and_resize only
  c.attr_int("antialias", 0);
  c.attr_string("keep_aspect_ratio_policy", "stretch");
  const ResizeTarget target = resize_target(c, c.shape(0), scales, sizes);
  // align_corners maps through length * scale, which ONNX's reference keeps
  // unrounded; a scale that gives no whole size would not match it.
  if (transform == "align_corners" && sizes.empty()) {
    const Shape& x = c.shape(0);
    for (int axis : {2, 3})
      if (std::fabs(static_cast<double>(x[axis]) * scales[axis] - static_cast<double>(axis == 2 ? target.oh : target.ow)) >
          1e-5 * static_cast<double>(x[axis]) * scales[axis])
        c.fail("align_corners with a scale that gives no whole size (" + std::to_string(x[axis]) + " x " +
               std::to_string(scales[axis]) + ") is not supported: give sizes instead");
  }
  add_resize(c, target, mode, transform, nearest);
}

const OnnxConverterRegistrar resize_reg(
    OnnxConverter("Resize")
        .converts(convert_resize)
        .handles({"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                  "extrapolation_value", "antialias", "keep_aspect_ratio_policy", "axes"})
        .checks(check_resize));

}  // namespace
}  // namespace hybgen
