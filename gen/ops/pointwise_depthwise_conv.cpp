// _pointwise_depthwise_conv: a 1x1 convolution, an optional relu or clip, and
// a depthwise convolution of its result, as one op (the expand and depthwise
// steps of a MobileNet v2 inverted residual block, or a MobileNet v1
// pointwise layer and the next depthwise one). The fuse_pointwise_depthwise
// pass makes it; no model file names it.
//
//   mid = act(conv1x1(data; weight1, bias1))                 (N, C, H, W)
//   out = depthwise_conv(mid; weight2, bias2, kernel, stride, pad, dilate)
//
// Why one op: the 1x1 convolution's output is the largest tensor of such a
// block (6x the channels of its input on the block's full map: 4.7 MiB on
// MobileNet v2's 112x112 stage), written once and read once by the depthwise
// step. Since the depthwise convolution reads each channel alone, the kernel
// (templates/kernels/conv_pointwise_depthwise.inc) computes `mid` a block of
// channels at a time into arena scratch that stays in cache and runs the
// depthwise step on that block right away: `mid` never exists whole, which
// saves its round trip through memory and its bytes in the arena.
#include <algorithm>

#include "ir/error.h"
#include "ops/conv_geometry.h"
#include "ops/gemm_pack.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

// The size of one channel block of `mid` (256 KiB, in floats): the block is
// the most whole GEMM row panels (the target's gemm_mr channels each) within
// it, and at least the panels that hold kMinBlockChannels. 256 KiB blocks
// stay in a 512 KiB or larger L2 next to the block's input rows.
constexpr int64_t kBlockBudgetFloats = int64_t{256} * 1024 / 4;

// Every block reads the 1x1 convolution's whole input again, so on large
// maps, where a panel alone passes the budget, fewer and larger blocks pay
// more than keeping a block in L2 (MobileNet v2's 16 -> 96 layer on
// 112x112; bench_expansion and docs/performance.md).
constexpr int64_t kMinBlockChannels = 24;

// The depthwise convolution's geometry on the 1x1 convolution's output
// (n, mid, h, w): c, f and groups are `mid`; `in` counts the data's channels.
struct Geometry : ConvGeometry {
  int64_t in;
};

// The depthwise convolution's attributes, for its geometry and reference kernel.
Attrs depthwise_attrs(const Attrs& fused) {
  Attrs a;
  a.set("kernel", fused.get_ints("kernel"));
  a.set("num_filter", fused.get_int("num_filter"));
  a.set("num_group", fused.get_int("num_filter"));
  a.set("stride", fused.get_ints("stride"));
  a.set("pad", fused.get_ints("pad"));
  a.set("dilate", fused.get_ints("dilate"));
  return normalize_attrs(find_op("Convolution"), a);
}

Geometry geometry(const Attrs& a, const Shape& data) {
  if (data.size() != 4) throw Error("data must be NCHW (4 dims), got " + shape_str(data));
  const int64_t mid = a.get_int("num_filter");
  if (mid <= 0) throw Error("num_filter must be positive");
  Geometry g;
  static_cast<ConvGeometry&>(g) = conv_geometry(depthwise_attrs(a), {data[0], mid, data[2], data[3]});
  g.in = data[1];
  if (g.kh > 64) throw Error("the depthwise kernel may have at most 64 rows, not " + std::to_string(g.kh));
  return g;
}

// The 1x1 convolution's attributes, for its reference kernel.
Attrs pointwise_attrs(const Geometry& g) {
  Attrs a;
  a.set("kernel", std::vector<int64_t>{1, 1});
  a.set("num_filter", g.f);
  return normalize_attrs(find_op("Convolution"), a);
}

std::vector<TensorType> pointwise_depthwise_conv_infer(const Attrs& a, const std::vector<TensorType>& in) {
  const Geometry g = geometry(a, in[0].shape);
  const std::vector<Shape> want = {{g.f, g.in, 1, 1}, {g.f}, {g.f, 1, g.kh, g.kw}, {g.f}};
  static const char* const names[] = {"weight1", "bias1", "weight2", "bias2"};
  for (std::size_t i = 0; i < want.size(); ++i)
    if (in[i + 1].shape != want[i])
      throw Error(std::string(names[i]) + " has shape " + shape_str(in[i + 1].shape) + ", expected " +
                  shape_str(want[i]));
  return {TensorType{{g.n, g.f, g.oh, g.ow}, in[0].dtype}};
}

// The activation between the convolutions as the op it was (Activation relu
// or clip) with its attributes, for that op's reference kernel; null for none.
const OpDef* activation_op(const Attrs& fused, Attrs* attrs) {
  const std::string& act = fused.get_string("act_type");
  if (act == "none") return nullptr;
  const OpDef& op = find_op(act == "relu" ? "Activation" : "clip");
  Attrs a;
  if (act == "relu") {
    a.set("act_type", std::string("relu"));
  } else {
    a.set("a_min", fused.get_float("a_min"));
    a.set("a_max", fused.get_float("a_max"));
  }
  *attrs = normalize_attrs(op, a);
  return &op;
}

void pointwise_depthwise_conv_reference(const KernelIO& io) {
  const Geometry g = geometry(io.attrs, io.in_types[0].shape);
  const OpDef& conv = find_op("Convolution");
  const TensorType mid_type{{g.n, g.f, g.h, g.w}, io.in_types[0].dtype};
  std::vector<float> mid(static_cast<std::size_t>(mid_type.num_elements()));
  const Attrs pointwise = pointwise_attrs(g), depthwise = depthwise_attrs(io.attrs);
  conv.reference(KernelIO{pointwise,
                          {io.input<float>(0), io.input<float>(1), io.input<float>(2)},
                          {io.in_types[0], io.in_types[1], io.in_types[2]},
                          {mid.data()},
                          {mid_type}});
  Attrs act_attrs;
  if (const OpDef* act = activation_op(io.attrs, &act_attrs))  // elementwise: in place
    act->reference(KernelIO{act_attrs, {mid.data()}, {mid_type}, {mid.data()}, {mid_type}});
  conv.reference(KernelIO{depthwise,
                          {mid.data(), io.input<float>(3), io.input<float>(4)},
                          {mid_type, io.in_types[3], io.in_types[4]},
                          io.out,
                          io.out_types});
}

// Channels per block of `mid` for this target (see kBlockBudgetFloats).
int64_t channel_block(const Geometry& g, const Target& target) {
  const int64_t mr = target.gemm_mr, panels_total = (g.f + mr - 1) / mr;
  const int64_t least = (kMinBlockChannels + mr - 1) / mr;  // at least one panel
  const int64_t panels = std::min(std::max(kBlockBudgetFloats / (g.h * g.w * mr), least), panels_total);
  return panels * mr;
}

// The pixel-major kernel (conv_pointwise_depthwise_pixels.inc, AVX-512 and AVX2)
// where the output map has at most 256 pixels (16x16) and 32 channels of
// `mid` over the whole input map fit the block budget: MobileNet v2's 14x14
// and 7x7 layers, whose rows of 14 and 7 pixels leave the NCHW depthwise
// kernel's row vectors part empty. Measured there (alternating hybgen bench
// --profile runs): 960 channels on 7x7 201 -> 178 us, 576 on 14x14 264 ->
// 249, 384 on 14x14 134 -> 124, 14x14 -> 7x7 stride 2 237 -> 220. On 28x28
// (rows of 28, two vectors) it lost (154 -> 160): turning each output
// vector around costs about as much as the taps there. Its scratch also
// holds the transposed input, and stays within the widened tensor it
// replaces (mid x h x w floats), so that the fusion never grows the arena:
// only for 1x1 convolutions that widen by 32 channels or more.
// (256 output pixels: the kernel's HG_PWDW_BAND_PIXELS bounds a row.)
// On AVX2 only past 8 columns: a 7-pixel row fills 7 of its 8 lanes, and
// there the NCHW kernel kept MobileNet v2's 7x7 layers 8 us faster each
// (219-221 against 227-229 us on a Zen 4 core); on 14x14 pixel-major saved
// 11-20 us a layer.
bool uses_pixel_major(const Geometry& g, const Target& target) {
  const bool lanes_idle = target.isa == Isa::kAvx512 || (target.isa == Isa::kAvx2 && g.w > 8);
  return lanes_idle && g.oh * g.ow <= 256 && g.h * g.w * 32 <= kBlockBudgetFloats && g.f - g.in >= 32;
}

// Channels per block of the pixel-major kernel: whole GEMM tiles of 32
// columns within the budget and within mid - c (see above), at most `mid`
// rounded up to a vector of 16.
int64_t pixel_channel_block(const Geometry& g) {
  const int64_t fit = std::min(kBlockBudgetFloats / (g.h * g.w), g.f - g.in) / 32 * 32;
  return std::min(std::max<int64_t>(32, fit), (g.f + 15) / 16 * 16);
}

// "pixel_major" where uses_pixel_major holds, else "channel_blocks".
std::string pointwise_depthwise_conv_choose_algorithm(const KernelSite& site) {
  return uses_pixel_major(geometry(site.attrs, site.in[0].shape), site.target) ? "pixel_major" : "channel_blocks";
}

int64_t pointwise_depthwise_conv_scratch_bytes(const KernelSite& site) {
  const Geometry g = geometry(site.attrs, site.in[0].shape);
  if (site.algorithm == "pixel_major") return g.h * g.w * (g.in + pixel_channel_block(g)) * kFloatBytes;
  return std::min(channel_block(g, site.target), g.f) * g.h * g.w * kFloatBytes;
}

// weight1 [mid x c]: in hg_gemm_packed_a's row panels, or for the
// pixel-major kernel transposed into hg_gemm_packed_b's column panels, whose
// weight2 is then tap-major (see the kernel). The rest as given.
std::optional<std::vector<float>> pointwise_depthwise_conv_pack_weights(const KernelSite& site, int index,
                                                                        const float* data) {
  const Geometry g = geometry(site.attrs, site.in[0].shape);
  const Target& target = site.target;
  const bool pixels = site.algorithm == "pixel_major";
  if (index == 1) return pixels ? pack_w_transposed_panels(data, g.f, g.in, target.gemm_nr)
                                : pack_a_panels(data, g.f, g.in, target.gemm_mr);
  if (index != 3 || !pixels) return std::nullopt;
  const int64_t taps = g.kh * g.kw, ldw = (g.f + 15) / 16 * 16;
  std::vector<float> tap_major(static_cast<std::size_t>(taps * ldw), 0.0f);
  for (int64_t ch = 0; ch < g.f; ++ch)
    for (int64_t t = 0; t < taps; ++t) tap_major[static_cast<std::size_t>(t * ldw + ch)] = data[ch * taps + t];
  return tap_major;
}

std::string activation_object(const Attrs& a) {
  const std::string& act = a.get_string("act_type");
  if (act == "relu") return "HgReluEpilogue()";
  if (act == "clip")
    return "HgClampEpilogue(" + cpp_float(a.get_float("a_min")) + ", " + cpp_float(a.get_float("a_max")) + ")";
  return "HgNoEpilogue()";
}

KernelCall pointwise_depthwise_conv_emit_cpp(const EmitContext& ctx) {
  if (ctx.in_packed.size() < 2 || !ctx.in_packed[1])
    throw Error("weight1 must be a constant with data (it is packed at generation time)");
  const Geometry g = geometry(ctx.node.attrs, ctx.in_types[0].shape);
  const bool pixels = ctx.algorithm == "pixel_major";
  if (pixels && (ctx.in_packed.size() < 4 || !ctx.in_packed[3]))
    throw Error("weight2 must be a constant with data (it is packed at generation time)");
  const std::vector<int64_t> dims{
      g.n,  g.in, g.h,  g.w,  g.f,  g.kh, g.kw, g.oh, g.ow, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw,
      pixels ? pixel_channel_block(g) : channel_block(g, ctx.target)};
  const std::string kernel = pixels ? "conv_pointwise_depthwise_pixels" : "conv_pointwise_depthwise";
  return {{"epilogue", "gemm", pixels ? "transpose16" : "conv2d_depthwise", kernel},
          "{\n  static const long geometry[] = " + cpp_int_list(dims) + ";\n  hg_" + kernel + "(" + ctx.in[0] +
              ", " + ctx.in[1] + ", " + ctx.in[2] + ", " + ctx.in[3] + ", " + ctx.in[4] + ", " + ctx.out[0] +
              ", geometry, " + ctx.scratch + ", " + activation_object(ctx.node.attrs) + ", " +
              epilogue_argument(ctx) + ", " + ctx.pool + ");\n}"};
}

Attrs fused(std::vector<int64_t> kernel, int64_t mid, std::vector<int64_t> stride, std::vector<int64_t> pad,
            const std::string& act, std::vector<int64_t> dilate = {}) {
  Attrs a;
  a.set("kernel", std::move(kernel));
  a.set("dilate", std::move(dilate));
  a.set("num_filter", mid);
  a.set("stride", std::move(stride));
  a.set("pad", std::move(pad));
  a.set("act_type", act);
  if (act == "clip") {
    a.set("a_min", 0.0);
    a.set("a_max", 6.0);
  }
  return a;
}

const OpRegistrar pointwise_depthwise_conv_op([] {
  OpDef d;
  d.name = "_pointwise_depthwise_conv";
  d.summary = "1x1 convolution, relu or clip, then depthwise convolution (made by fuse_pointwise_depthwise)";
  d.input_names = {"data", "weight1", "bias1", "weight2", "bias2"};
  d.min_inputs = 5;
  d.max_inputs = 5;
  d.attrs = {{"kernel", AttrKind::kInts, std::nullopt, "depthwise (kh, kw)", {}},
             {"num_filter", AttrKind::kInt, std::nullopt, "channels of the 1x1 convolution's output", {}},
             {"stride", AttrKind::kInts, std::vector<int64_t>{}, "depthwise (sh, sw); default 1", {}},
             {"dilate", AttrKind::kInts, std::vector<int64_t>{}, "depthwise (dh, dw); default 1", {}},
             {"pad", AttrKind::kInts, std::vector<int64_t>{}, "depthwise (ph, pw); default 0", {}},
             {"act_type", AttrKind::kString, std::string("none"), "between the two convolutions",
              {"none", "relu", "clip"}},
             {"a_min", AttrKind::kFloat, 0.0, "clip's lower bound", {}},
             {"a_max", AttrKind::kFloat, 6.0, "clip's upper bound", {}}};
  d.fusion = FusionClass::kOutElemwiseFusable;
  d.epilogue_axis = 1;
  d.infer = pointwise_depthwise_conv_infer;
  d.reference = pointwise_depthwise_conv_reference;
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    const Geometry g = geometry(a, in[0].shape);
    const double pointwise = 2.0 * static_cast<double>(g.n * g.f * g.h * g.w * g.in);
    const double depthwise = 2.0 * static_cast<double>(g.n * g.f * g.oh * g.ow * g.kh * g.kw);
    return pointwise + depthwise;
  };
  d.weight_shapes = [](const Attrs& a, const Shape& data) {
    const Geometry g = geometry(a, data);
    return std::vector<Shape>{{g.f, g.in, 1, 1}, {g.f}, {g.f, 1, g.kh, g.kw}, {g.f}};
  };
  // Maps of 4096 pixels make blocks of 16 channels: 36 channels are two
  // whole blocks and a part of one panel; batch 2, stride 2, 5x5, no or relu
  // activation; a map small enough for one block. On x86-64-v4 the output
  // maps of up to 256 pixels take the pixel-major kernel where the 1x1
  // widens by 32 or more: blocks of 32 + 8 channels (a part of a vector) on
  // 7x7 (a pixel past the last 16), stride 2 on an odd width (32 + 32 + 8),
  // 256 + 16 channels on 16x16, and a 3x1 dilated kernel (sizes known only
  // at run time).
  d.examples = {
      {fused({3, 3}, 36, {1, 1}, {1, 1}, "clip"), {{1, 5, 64, 64}, {36, 5, 1, 1}, {36}, {36, 1, 3, 3}, {36}}},
      {fused({3, 3}, 20, {2, 2}, {1, 1}, "relu"), {{2, 3, 64, 48}, {20, 3, 1, 1}, {20}, {20, 1, 3, 3}, {20}}},
      {fused({5, 5}, 12, {1, 1}, {2, 2}, "none"), {{1, 8, 9, 11}, {12, 8, 1, 1}, {12}, {12, 1, 5, 5}, {12}}},
      {fused({3, 3}, 40, {1, 1}, {1, 1}, "clip"), {{2, 8, 7, 7}, {40, 8, 1, 1}, {40}, {40, 1, 3, 3}, {40}}},
      {fused({3, 3}, 72, {2, 2}, {1, 1}, "relu"), {{1, 20, 14, 13}, {72, 20, 1, 1}, {72}, {72, 1, 3, 3}, {72}}},
      {fused({3, 3}, 272, {1, 1}, {1, 1}, "clip"), {{1, 3, 16, 16}, {272, 3, 1, 1}, {272}, {272, 1, 3, 3}, {272}}},
      {fused({3, 1}, 45, {1, 1}, {2, 0}, "none", {2, 1}), {{1, 6, 10, 9}, {45, 6, 1, 1}, {45}, {45, 1, 3, 1}, {45}}},
  };
  return d;
}());

const KernelRegistrar pointwise_depthwise_conv_cpp(Backend::kCpp, "_pointwise_depthwise_conv", [] {
  OpKernel k{pointwise_depthwise_conv_emit_cpp};
  k.choose_algorithm = pointwise_depthwise_conv_choose_algorithm;
  k.pack_constant = float32_packing(pointwise_depthwise_conv_pack_weights);
  k.scratch_bytes = pointwise_depthwise_conv_scratch_bytes;
  return k;
}());

}  // namespace
}  // namespace hybgen
