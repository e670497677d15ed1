// Convolution, 1-D (NCW), 2-D (NCHW) and 3-D (NCDHW): stride, padding,
// dilation, groups (depthwise when num_group equals the channels) and an
// optional bias. The reference runs im2col + sgemm per group. A 1-D
// convolution is a 2-D one of height 1 (conv_geometry), so the 2-D kernels
// below serve it. 3-D convolutions run as GEMM over 3-D im2col tiles with
// weights packed at generation time (conv3d_gemm.inc's hg_conv3d_gemm), or,
// with weights not known then or one input channel per group, the direct
// kernel (conv3d.inc's hg_conv3d).
// The generated 2-D kernel, by the first that applies:
//   - a 1x1 convolution on a 1x1 map: a dense layer (gemm.inc's
//     hg_gemm_packed_b over weights packed as FullyConnected's);
//   - dense stride-1 3x3/5x5 convolutions with at most 128 filters on
//     x86-64-v4 and armv8-a, 16 on x86-64-v3 (LeNet's): row by row, weights
//     packed in panels of up to 8 filters, 2 on AVX2 (conv2d_rows.inc);
//   - 3x3 stride-1 with >= 32 channels each way on maps of 7x7 and up:
//     Winograd F(4x4, 3x3) or F(2x2, 3x3) with filters transformed at
//     generation time (conv2d_winograd.inc), but not on microcontrollers;
//     F(2x2) with many filters on few tiles transforms them as it runs;
//   - small maps where the pixels fill GEMM rows better than GEMM columns:
//     pixel-row GEMM over W^T packed as a dense weight (conv2d_pixel_gemm.inc);
//   - at most 4 input channels and 64 filters (a network's first layer),
//     kernels larger than 3x3, on x86-64-v4: filters in the vector lanes, no
//     im2col (conv2d_filter_lanes.inc);
//   - other convolutions with several input channels per group: GEMM over
//     weights packed at generation time (conv2d_gemm.inc: 1x1 convs read the
//     input directly, others go through im2col tiles in arena scratch);
//   - depthwise (one channel per group and filter): conv2d_depthwise.inc;
//   - grouped convolutions with one input channel per group but several
//     filters, and weights not known at generation time: the direct kernel
//     (conv2d.inc).

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/conv_geometry.h"
#include "ops/gemm_pack.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"
#include "ops/reference_blas.h"

namespace hybgen {
namespace {

std::vector<TensorType> convolution_infer(const Attrs& a, const std::vector<TensorType>& in) {
  check_quantized_operands(in);
  const ConvGeometry g = conv_geometry(a, in[0].shape);
  if (!in[0].quantization.empty() && g.spatial == 3) throw Error("quantized 3-D convolutions are not supported");
  const Shape want_w = conv_weight_shape(g);
  if (in[1].shape != want_w)
    throw Error("weight has shape " + shape_str(in[1].shape) + ", expected " + shape_str(want_w));
  if (in.size() > 2 && in[2].shape != Shape{g.f})
    throw Error("bias has shape " + shape_str(in[2].shape) + ", expected " + shape_str({g.f}));
  return {quantized_output(a, in[0], conv_output_shape(g))};
}

// Quantized (1-D and 2-D): int32 sums of (x - zero point) * w over the taps
// inside the input, plus the bias, requantized per filter.
void convolution_reference_quantized(const KernelIO& io) {
  const ConvGeometry g = conv_geometry(io.attrs, io.in_types[0].shape);
  const int64_t cg = g.c / g.groups, fg = g.f / g.groups;
  const auto x_zero = static_cast<std::int32_t>(io.in_types[0].quantization.zero_point[0]);
  const std::int8_t* w = io.input<std::int8_t>(1);
  const std::int32_t* bias = io.in.size() > 2 ? io.input<std::int32_t>(2) : nullptr;
  std::vector<std::int32_t> acc(static_cast<std::size_t>(g.n * g.f * g.oh * g.ow));
  with_value_type(io.in_types[0].dtype, [&](auto value) {
    using T = decltype(value);
    const T* x = io.input<T>(0);
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t f = 0; f < g.f; ++f)
        for (int64_t oy = 0; oy < g.oh; ++oy)
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            std::int32_t sum = bias ? bias[f] : 0;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t ky = 0; ky < g.kh; ++ky)
                for (int64_t kx = 0; kx < g.kw; ++kx) {
                  const int64_t iy = oy * g.sh - g.ph + ky * g.dh, ix = ox * g.sw - g.pw + kx * g.dw;
                  if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                  const int64_t channel = n * g.c + (f / fg) * cg + c;
                  sum += (static_cast<std::int32_t>(x[(channel * g.h + iy) * g.w + ix]) - x_zero) *
                         w[((f * cg + c) * g.kh + ky) * g.kw + kx];
                }
            acc[static_cast<std::size_t>(((n * g.f + f) * g.oh + oy) * g.ow + ox)] = sum;
          }
  });
  requantize_outputs(io.in_types, io.out_types[0], acc, g.n, g.f, g.oh * g.ow, io.out[0]);
}

// im2col + sgemm per group, the columns built a tile of output pixels at a
// time (at most 4M floats), so large 3-D volumes run in bounded memory.
void convolution_reference(const KernelIO& io) {
  if (!io.in_types[0].quantization.empty()) return convolution_reference_quantized(io);
  const ConvGeometry g = conv_geometry(io.attrs, io.in_types[0].shape);
  const int64_t cg = g.c / g.groups, fg = g.f / g.groups, taps = g.kd * g.kh * g.kw, k = cg * taps;
  const int64_t plane = g.d * g.h * g.w, spatial = g.od * g.oh * g.ow;
  const int64_t tile = std::max<int64_t>(1, std::min<int64_t>(spatial, (int64_t{1} << 22) / k));
  std::vector<float> col(static_cast<std::size_t>(k * tile));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const float* x = io.input<float>(0) + (n * g.c + grp * cg) * plane;
      float* y = io.output<float>(0) + (n * g.f + grp * fg) * spatial;
      for (int64_t j0 = 0; j0 < spatial; j0 += tile) {
        const int64_t cols = std::min(tile, spatial - j0);
        for (int64_t r = 0; r < k; ++r) {
          const int64_t c = r / taps, kz = r / (g.kh * g.kw) % g.kd, ky = r / g.kw % g.kh, kx = r % g.kw;
          float* row = col.data() + r * cols;
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t p = j0 + j, oz = p / (g.oh * g.ow), oy = p / g.ow % g.oh, ox = p % g.ow;
            const int64_t iz = oz * g.sd - g.pd + kz * g.dd, iy = oy * g.sh - g.ph + ky * g.dh,
                          ix = ox * g.sw - g.pw + kx * g.dw;
            const bool inside = iz >= 0 && iz < g.d && iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
            row[j] = inside ? x[c * plane + (iz * g.h + iy) * g.w + ix] : 0.0f;
          }
        }
        reference_sgemm(false, false, static_cast<int>(fg), static_cast<int>(cols), static_cast<int>(k),
                        io.input<float>(1) + grp * fg * k, static_cast<int>(k), col.data(), static_cast<int>(cols),
                        y + j0, static_cast<int>(spatial));
      }
      if (io.in.size() > 2)
        for (int64_t f = 0; f < fg; ++f)
          for (int64_t i = 0; i < spatial; ++i) y[f * spatial + i] += io.input<float>(2)[grp * fg + f];
    }
}

// Depthwise convolutions (one input channel per group) have too little
// work per weight for a GEMM; the direct kernel serves them.
bool uses_gemm(const ConvGeometry& g) { return g.c / g.groups > 1 || g.groups == 1; }

// Winograd (conv2d_winograd.inc) for 3x3 stride-1 convolutions with at
// least 32 input and output channels: 1.7x to 2.5x faster than im2col + GEMM
// on ResNet-18's layers; at 16 channels the transforms eat the gain, except on
// AVX2, whose row kernel holds only 2 filters per panel (a U-Net's 64x64 maps
// with 16 and 32 channels went from 36 to 60-78 GFLOP/s). Its
// transformed filters take more bytes than the weights ((m+2)^2 values per
// 3x3 filter), and each is read once per output tile, so the tile size m
// follows the map: F(4x4, 3x3) (4x the bytes) where the map has at least 16
// 4x4 tiles (13x13 and up), else F(2x2, 3x3) (1.8x) where it has at least 16
// 2x2 tiles (7x7 and up). On ResNet-18's 7x7 maps F(4x4) would read 37.7 MB
// of filters per layer for 4 tiles: its GEMMs took 2.2-2.5 ms, F(2x2)'s
// 1.8-2.0 ms and the pixel-row GEMM 2.7-3.0 ms, and its generated weights
// 160 MB against 97 MB.
int64_t winograd_tiles(const ConvGeometry& g, int64_t m) { return ((g.oh + m - 1) / m) * ((g.ow + m - 1) / m); }

// The tile size m of the Winograd kernel (4 or 2), or 0 where none applies.
int64_t winograd_m(const ConvGeometry& g, const Target& target) {
  const int64_t least_channels = target.isa == Isa::kAvx2 ? 16 : 32;
  if (target.isa == Isa::kCortexM || target.isa == Isa::kHelium || g.groups != 1 || g.kh != 3 || g.kw != 3 ||
      g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 || g.c < least_channels || g.f < least_channels)
    return 0;
  // --max-weight-growth: F(4x4) keeps 36 values per 3x3 filter, F(2x2) 16.
  const double growth_bound = target.max_weight_growth > 0 ? target.max_weight_growth : 1e9;
  // Below F(2x2)'s 16/9, F(2x2) on raw filters (winograd_raw_filters).
  if (growth_bound < 4.0) return winograd_tiles(g, 2) >= 16 ? 2 : 0;
  // F(4x4)'s transformed filters, read once per block of tiles: past a few
  // MiB they stream from memory, and 16 tiles (a 14x14 map) are too few to
  // hide that. On ResNet-18's 256-channel 14x14 layers (9.4 MB of them)
  // F(2x2) (4.2 MB, 49 tiles) took 1.03-1.06 ms against 1.18-1.24.
  const double f4_filter_bytes = 36.0 * 4.0 * static_cast<double>(g.c) * static_cast<double>(g.f);
  if (winograd_tiles(g, 4) >= 16 && (f4_filter_bytes <= 4.0 * 1024 * 1024 || winograd_tiles(g, 4) >= 32)) return 4;
  if (winograd_tiles(g, 2) >= 16) return 2;
  return 0;
}

// Not on microcontrollers (winograd_m): the transforms keep kilobytes of
// tiles on the stack, and the transformed filters take 1.8x-4x the weights' flash.
bool uses_winograd(const ConvGeometry& g, const Target& target) { return winograd_m(g, target) != 0; }

// F(2x2) reads its transformed filters (16 values per 3x3 filter) once per
// pass of tiles. Where they are large and the tiles few, the kernel is bound
// by reading them from memory (ResNet-18's 512-channel 7x7 layers: 16.8 MB
// per layer for 16 tiles), and transforming the raw filters as it runs (9
// values) pays; with more tiles per pass (its 14x14 layers, 49) the
// transform and the row panels' waste cost more than the bytes saved
// (docs/performance.md). So past 8 MiB of transformed filters on at most 64
// tiles; and under --max-weight-growth below F(2x2)'s 16/9, which the raw
// filters keep to 1.
bool winograd_raw_filters(const ConvGeometry& g, const Target& target) {
  if (winograd_m(g, target) != 2) return false;
  const double growth_bound = target.max_weight_growth > 0 ? target.max_weight_growth : 1e9;
  const double filter_bytes = 16.0 * 4.0 * static_cast<double>(g.c) * static_cast<double>(g.f);
  return growth_bound < 16.0 / 9.0 || (filter_bytes > 8.0 * 1024 * 1024 && winograd_tiles(g, 2) <= 64);
}

// Positions of the transform: (m+2)^2.
int64_t winograd_positions(const ConvGeometry& g, const Target& target) {
  const int64_t alpha = winograd_m(g, target) + 2;
  return alpha * alpha;
}

// Output tiles per Winograd pass: its scratch, positions * block * (c + f)
// floats, stays within 1.5 MiB, the passes splitting the tiles evenly, in
// multiples of 6 (the GEMM's row block) where that allows; all tiles in one
// pass where that takes at most a third more. Each pass reads all the
// transformed filters: ResNet-18's 128-channel 28x28 layers took 780-820 us
// in one pass of 49 tiles against 880-930 in passes of 42 and 7.
int64_t winograd_block(const ConvGeometry& g, const Target& target) {
  const int64_t tiles = winograd_tiles(g, winograd_m(g, target));
  const int64_t budget = std::max<int64_t>(1, (int64_t{384} * 1024) / (winograd_positions(g, target) * (g.c + g.f)));
  if (tiles <= budget + budget / 3) return tiles;
  const int64_t passes = (tiles + budget - 1) / budget;
  int64_t block = (tiles + passes - 1) / passes;
  if (block >= 6 && (block + 5) / 6 * 6 <= budget) block = (block + 5) / 6 * 6;
  return block;
}

// Output pixels as the GEMM's rows (conv2d_pixel_gemm.inc) where that wastes
// less of the register tiles than the pixels as columns: hg_gemm_packed_b
// computes filters in tiles of 64 and pixel rows exactly; hg_gemm_packed_a
// computes pixels in tiles of 48 on x86-64-v4, and up to 8 pixels past them
// as narrow columns (gemm.inc) at about a tile's cost per column. Only on
// small maps (at most 64 pixels), where the two transpositions this path
// adds are cheap: on MobileNet v2's 14x14 maps it was 1.7x slower than
// packed-A even with no tile waste. So it takes maps with more than 8 pixels
// past the last tile (5x5, 6x6); on 7x7 (49 = 48 + 1) packed-A wins:
// MobileNet v2's 320 -> 1280 layer took 247-273 us in the model against
// 281-324 with pixel rows, once the narrow column read B from a packed block
// in L1 after its tile (it had cost several tile columns). Not below 64
// reduction steps, nor where they outnumber the filters; scratch at most
// 1.5 MiB. The tile widths are x86-64-v4's; other targets' tiles are
// narrower, where both paths waste less.
bool uses_pixel_gemm(const ConvGeometry& g, const Target& target) {
  const int64_t k = g.c * g.kh * g.kw, pixels = g.oh * g.ow;
  if (g.groups != 1 || uses_winograd(g, target) || k < 64 || k > g.f || pixels > 64 ||
      pixels * (k + g.f) > int64_t{384} * 1024)
    return false;
  const int64_t tail = pixels % 48;
  const int64_t tail_cost = tail <= 8 ? tail : (tail + 15) / 16 * 16;
  const double columns = static_cast<double>(pixels) / static_cast<double>(pixels - tail + tail_cost);
  const double rows = static_cast<double>(g.f) / static_cast<double>((g.f + 63) / 64 * 64);
  return rows > columns;
}

// Dense stride-1 3x3 and 5x5 convolutions with at most 128 filters (but
// the 3x3 ones Winograd takes) computed row by row, without im2col
// (conv2d_rows.inc, AVX-512, AVX2 and NEON). With so few filters im2col + GEMM fills
// few register tiles and pays for its columns: against it, single
// convolutions in alternating runs took 64 -> 16 channels 3x3 on 32x32
// 352 -> 169 us, 512 -> 8 on 7x7 263 -> 41, 32 -> 8 5x5 on 56x56 951 -> 411,
// 3 -> 64 on 224x224 (VGG's first) 2088 -> 1815, 16 -> 128 on 32x32
// 387 -> 347, 64 -> 128 5x5 on 16x16 1195 -> 939, LeNet's two layers 2x to
// 2.7x less; 48 -> 64 5x5 on 35x35 (Inception's) about even (2309 and
// 2332). With 256 filters GEMM won (8 -> 256 on 14x14: 75 against 80).
// On AVX2 (x86-64-v3) the panels hold 2 filters (below), so the input is
// read once per 2 filters: there it takes up to 16 filters. Built for
// x86-64-v3 against im2col + GEMM: 32 -> 8 5x5 on 56x56 1047 -> 706 us,
// 512 -> 8 on 7x7 305 -> 80, 64 -> 16 on 32x32 345 -> 335; with 64 filters
// it lost (16 -> 64 on 56x56 642 -> 1008, 3 -> 64 on 224x224 by 20-30%).
// NEON (armv8-a) has AVX-512's 32 registers, and takes its rule: LeNet's
// forward ran 273k AArch64 instructions through im2col + GEMM against 145k
// row by row (counted under qemu; no AArch64 machine timed it), its arena
// 71424 -> 17280 bytes.
bool uses_rows(const ConvGeometry& g, const Target& target) {
  const bool avx2 = target.isa == Isa::kAvx2;
  if (target.isa != Isa::kAvx512 && target.isa != Isa::kNeon && !avx2) return false;
  if (avx2 && g.f > 16) return false;
  return g.groups == 1 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 && g.kh == g.kw &&
         (g.kh == 3 || g.kh == 5) && g.f <= 128 && !uses_winograd(g, target);
}

// Filters per weight panel of the row kernel: at most 8 on AVX-512 and NEON
// (with 2 output rows, 16 accumulators), 2 on AVX2 (4 accumulators: with 8, GCC
// spilled them out of its 16 registers, and LeNet's 6 -> 16 layer took 9.5
// us against 5.9 built for x86-64-v3), balanced so the last panel is nearly
// full (6 filters: one panel of 6; 9: 5 + 4; 16: 8 + 8). On LeNet, against
// panels of 4 read from the weights as given: 5x5 1 -> 6 channels on 28x28
// 3.31 -> 2.52 us, 6 -> 16 on 12x12 4.08 -> 3.42 us (alternating runs in the
// model); 4 filters x 4 rows took 2.57 on the first, 6 x 4 (24 accumulators)
// 3.38.
int64_t rows_filter_block(const ConvGeometry& g, const Target& target) {
  const int64_t most = target.isa == Isa::kAvx2 ? 2 : 8, panels = (g.f + most - 1) / most;
  return (g.f + panels - 1) / panels;
}

// Few input channels (a network's first layer: ResNet's 3-channel 7x7
// stride 2) with at most 64 filters and a kernel larger than 3x3, on
// AVX-512: filters in the vector lanes, taps broadcast from a zero-padded
// copy of the input (conv2d_filter_lanes.inc), no im2col. With 27 or fewer
// reduction steps a column tile of im2col is built in L1 and the GEMM is
// faster: the 3x3 stride-2 stems of MobileNet v1 and v2, SqueezeNet and
// Inception v3 took 11-21% less time that way, ResNet-18's 7x7 one 6% more
// (docs/performance.md). The padded copy is the kernel's scratch: only up
// to 4 MiB of it (ResNet's: 720 KB), where im2col's tiles (at most 1 MiB)
// would keep the arena smaller.
int64_t filter_lanes_rows(const ConvGeometry& g) { return (g.oh - 1) * g.sh + g.kh; }
int64_t filter_lanes_padded(const ConvGeometry& g) { return ((g.ow + 15) / 16 * 16 - 1) * g.sw + g.kw; }
bool uses_filter_lanes(const ConvGeometry& g, const Target& target) {
  return target.isa == Isa::kAvx512 && g.groups == 1 && g.dh == 1 && g.dw == 1 && g.c <= 4 && g.f <= 64 &&
         g.kh * g.kw > 9 && g.c * filter_lanes_rows(g) * filter_lanes_padded(g) * 4 <= int64_t{4} << 20;
}

// Blocks of 16 filters; the padded input's rows and row length (above:
// every 16-pixel run of output columns reads inside it).
int64_t filter_lanes_blocks(const ConvGeometry& g) { return (g.f + 15) / 16; }

// The weights [f, c, kh, kw] as [c][kh][kw][16 * blocks], filters past f 0:
// W^T as one column panel 16 * blocks wide.
std::vector<float> pack_filter_lanes(const float* w, const ConvGeometry& g) {
  return pack_w_transposed_panels(w, g.f, g.c * g.kh * g.kw, 16 * filter_lanes_blocks(g));
}

// A 1x1 convolution on a 1x1 map (a classifier after global pooling) is a
// dense layer: y[n x f] = x[n x c] W^T + b, the filter the column, as the
// epilogue's channel. It runs as one (hg_gemm_packed_b, weights packed as
// FullyConnected's), whose batch-1 GEMV streams the weights on every SIMD
// path: MobileNet v2's 1280 -> 1000 classifier on x86-64-v3 took 521 us as
// a packed-A GEMM with one column.
bool uses_dense(const ConvGeometry& g) {
  return g.groups == 1 && g.kh == 1 && g.kw == 1 && g.h == 1 && g.w == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 &&
         g.pw == 0 && g.ph_end == 0 && g.pw_end == 0;
}

// One input channel per group and one filter per channel: the depthwise
// kernel (conv2d_depthwise.inc; it keeps a pointer per kernel row, at most 64).
bool is_depthwise(const ConvGeometry& g) { return g.groups == g.c && g.f == g.c && g.kh <= 64; }

bool reads_input_directly(const ConvGeometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.ph_end == 0 && g.pw_end == 0;
}

// Output pixels per im2col tile: the whole image when its columns take at
// most 1 MiB, else fewer (a multiple of 16, which every SIMD path's vector
// width divides), so the scratch stays small next to the activations. At
// most 24 KiB, which stay in L1 while the product reads them, for 32
// reduction steps or fewer (a 3-channel 3x3 stem): MobileNet v2's stem on
// AVX2 (Zen 4) took 436 us with 224-pixel tiles, 456-474 with 336 to 2416
// (256 KiB); 1 MiB tiles had been slower still. ResNet-18's stem (147
// steps) was 6-12% slower with 256 KiB tiles.
int64_t im2col_tile(const ConvGeometry& g) {
  const int64_t k = (g.c / g.groups) * g.kd * g.kh * g.kw, spatial = g.od * g.oh * g.ow;
  const int64_t budget = (k <= 32 ? int64_t{6} << 10 : int64_t{1} << 18) / k;  // floats
  if (budget >= spatial) return spatial;
  return std::max<int64_t>(16, budget / 16 * 16);
}

// Output pixels per im2col tile when its columns must fit `budget` floats
// (the memory plan's, where the columns rather than the activations would
// set the arena): a multiple of 16, at least 16, at most im2col_tile(g).
int64_t im2col_tile_within(const ConvGeometry& g, int64_t budget) {
  const int64_t k = (g.c / g.groups) * g.kd * g.kh * g.kw, best = im2col_tile(g);
  if (budget >= k * best) return best;
  return std::min(best, std::max<int64_t>(16, budget / k / 16 * 16));
}

// Reduction steps of the GEMM per group: channels of a group times kernel taps.
int64_t reduction(const ConvGeometry& g) { return (g.c / g.groups) * g.kd * g.kh * g.kw; }

// The generated kernels, the first that applies chosen in this order (see
// the top of this file). The first five and kGemm3d read weights packed at
// generation time, so they need weights known then (`weights_known`).
enum class ConvKernel {
  kDense,
  kWinograd,
  kWinogradRawFilters,
  kRows,
  kPixelGemm,
  kFilterLanes,
  kGemm,
  kDepthwise,
  kDirect,
  kGemm3d,
  kDirect3d,
  kQuantized,
  kQuantizedGemm,
  kQuantizedDepthwise,
  kQuantizedDense
};

ConvKernel conv_kernel(const ConvGeometry& g, const Target& target, bool weights_known, bool quantized) {
  if (quantized) {
    if (is_depthwise(g)) return ConvKernel::kQuantizedDepthwise;
    if (!weights_known || g.groups != 1 || target.gemm_nr == 0) return ConvKernel::kQuantized;
    // One pixel (a classifier's 1x1 convolution after pooling): the dense
    // layer's GEMM, whose row blocks are the batch, not 32 pixels of which one is used.
    return uses_dense(g) && g.spatial != 3 ? ConvKernel::kQuantizedDense : ConvKernel::kQuantizedGemm;
  }
  // 3-D with one input channel per group (depthwise): a GEMM of one row per
  // group would waste its register tiles; the direct kernel's rows serve it.
  if (g.spatial == 3) return weights_known && g.c / g.groups > 1 ? ConvKernel::kGemm3d : ConvKernel::kDirect3d;
  if (weights_known && uses_gemm(g)) {
    if (uses_dense(g)) return ConvKernel::kDense;
    if (uses_winograd(g, target))
      return winograd_raw_filters(g, target) ? ConvKernel::kWinogradRawFilters : ConvKernel::kWinograd;
    if (uses_rows(g, target)) return ConvKernel::kRows;
    if (uses_pixel_gemm(g, target)) return ConvKernel::kPixelGemm;
    if (uses_filter_lanes(g, target)) return ConvKernel::kFilterLanes;
    return ConvKernel::kGemm;
  }
  return is_depthwise(g) ? ConvKernel::kDepthwise : ConvKernel::kDirect;
}

// The names OpKernel::choose_algorithm records, in ConvKernel's order.
const char* const kConvKernelNames[] = {"dense",
                                        "winograd",
                                        "winograd_raw_filters",
                                        "rows",
                                        "pixel_gemm",
                                        "filter_lanes",
                                        "im2col_gemm",
                                        "depthwise",
                                        "direct",
                                        "im2col_gemm_3d",
                                        "direct_3d",
                                        "quantized",
                                        "quantized_gemm",
                                        "quantized_depthwise",
                                        "quantized_dense"};
static_assert(std::size(kConvKernelNames) == static_cast<std::size_t>(ConvKernel::kQuantizedDense) + 1,
              "one name per ConvKernel");

std::string convolution_choose_algorithm(const KernelSite& site) {
  const bool weights_known = site.in_constant.size() > 1 && site.in_constant[1];
  return kConvKernelNames[static_cast<int>(conv_kernel(conv_geometry(site.attrs, site.in[0].shape), site.target,
                                                       weights_known, !site.in[0].quantization.empty()))];
}

// The kernel choose_algorithm recorded; nullopt where none was (the
// interpreter's memory plan, the CUDA backend).
std::optional<ConvKernel> recorded_kernel(const std::string& algorithm) {
  if (algorithm.empty()) return std::nullopt;
  for (std::size_t i = 0; i < std::size(kConvKernelNames); ++i)
    if (algorithm == kConvKernelNames[i]) return static_cast<ConvKernel>(i);
  throw Error("no convolution kernel is named '" + algorithm + "'");
}

// The quantized GEMM's scratch for tiles of `tile` output pixels: the packed
// patches (`group` bytes per pixel per group of k, Target::q8_group) and the padded input rows a
// tile reads, each with 64 bytes of slack (hg_conv2d_gemm_q8 in
// templates/kernels/gemm_q8.inc, whose hg_q8_window_rows and
// hg_q8_reads_input this follows).
int64_t q8_scratch_bytes(const ConvGeometry& g, int64_t tile, const Target& target) {
  const int64_t group = target.q8_group;
  // Bytes of a pixel's group of k (HG_Q8_PATCH_BYTES): the Cortex-M4/M7 store them widened to int16.
  const int64_t patch_bytes = target.isa == Isa::kCortexM ? 2 * group : group;
  const int64_t groups = (g.c * g.kh * g.kw + group - 1) / group;
  const int64_t patches = groups * tile * patch_bytes + 64;
  if (g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0) return patches;
  const int64_t spanned = std::min((tile - 1) / g.ow + 2, g.oh);
  const int64_t rows = (spanned - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  const int64_t width = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  return patches + g.c * rows * width + 64;
}

// Output pixels per tile: the largest multiple of 32 (every target's
// microkernel block divides it), up to the pixels rounded up, whose scratch
// fits in `budget` bytes; at least 32. On the Cortex-M4/M7, whose kernel
// takes any even count of pixels (pairs, and blocks of HG_Q8_PIXELS = 8),
// 16, 8 or 4 where 32 does not fit and the input has one channel: there the
// patches (kh * kw values a pixel) are most of the scratch and a tile's
// window is a few rows of one plane. With more channels every small tile
// copies the rows of all of them and packs each group of k in a call of its
// own, which cost more than the arena it saved.
int64_t q8_tile(const ConvGeometry& g, const Target& target, int64_t budget = int64_t{256} * 1024) {
  int64_t tile = (g.oh * g.ow + 31) / 32 * 32;
  while (tile > 32 && q8_scratch_bytes(g, tile, target) > budget) tile -= 32;
  if (target.isa == Isa::kCortexM && g.c == 1)
    while (tile > 4 && q8_scratch_bytes(g, tile, target) > budget) tile /= 2;
  return tile;
}
// The quantized depthwise kernel's scratch: one padded plane, then from a
// 64-byte boundary its int32 sums (hg_conv2d_depthwise_q8, which this
// follows); on AVX-512, planes of at most 64 outputs take sixteen channels'
// windows interleaved and their outputs (hg_dw_q8_lanes16) instead.
int64_t q8_depthwise_scratch_bytes(const ConvGeometry& g, int64_t value_bytes, const Target& target) {
  const int64_t width = ((g.ow - 1) * g.sw + (g.kw - 1) * g.dw + g.sw) / g.sw * g.sw;
  const int64_t rows = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  const int64_t slots = (g.oh - 1) * (g.sh * width / g.sw) + g.ow;
  // templates/kernels/quantized_kernels.inc: kHgDwQ8Overrun bytes of pad
  // after the plane, 64 after the sums.
  constexpr int64_t kOverrun = 192;
  const int64_t per_channel = ((rows * width + kOverrun) * value_bytes + 63) / 64 * 64 + slots * 4 + 64;
  const bool lanes16 = target.isa == Isa::kAvx512 && g.oh * g.ow <= 64 && g.kh * g.kw <= 25;
  return lanes16 ? std::max(per_channel, 16 * (rows * width + g.oh * g.ow) * value_bytes) : per_channel;
}

// The patch tiles' scratch a quantized convolution plans for by default:
// on a microcontroller, whose RAM is scarce and whose kernels gain little
// from longer tiles past a few thousand bytes of patches, 16 KiB; elsewhere
// 256 KiB, in cache.
int64_t q8_default_tile_budget(const Target& target) {
  const bool microcontroller = target.isa == Isa::kCortexM || target.isa == Isa::kHelium;
  return microcontroller ? int64_t{16} * 1024 : int64_t{256} * 1024;
}

int64_t q8_scratch_floats(const ConvGeometry& g, const Target& target, int64_t budget_bytes) {
  return (q8_scratch_bytes(g, q8_tile(g, target, budget_bytes), target) + kFloatBytes - 1) / kFloatBytes;
}

int64_t convolution_scratch_floats(const KernelSite& site) {
  const std::optional<ConvKernel> kernel = recorded_kernel(site.algorithm);
  if (!kernel) return 0;
  const ConvGeometry g = conv_geometry(site.attrs, site.in[0].shape);
  const Target& target = site.target;
  switch (*kernel) {
    case ConvKernel::kWinograd:
      return winograd_positions(g, target) * winograd_block(g, target) * (g.c + g.f);
    case ConvKernel::kWinogradRawFilters: {
      // conv2d_winograd.inc: tiles' inputs in row panels of gemm_mr, the
      // GEMMs' results, and per position a block of transformed filters (64
      // channels x up to 3 panels of gemm_nr, and a line) for each of up to
      // 4 threads (HG_WINOGRAD_RAW_PARTS).
      const int64_t block = winograd_block(g, target), mr = target.gemm_mr;
      return winograd_positions(g, target) *
             ((block + mr - 1) / mr * mr * g.c + block * g.f + 4 * (64 * 3 * target.gemm_nr + 16));
    }
    case ConvKernel::kPixelGemm:
      return g.oh * g.ow * (g.c * g.kh * g.kw + g.f);
    case ConvKernel::kFilterLanes:
      return g.c * filter_lanes_rows(g) * filter_lanes_padded(g);
    case ConvKernel::kGemm:
      return reads_input_directly(g) ? 0 : (g.c / g.groups) * g.kh * g.kw * im2col_tile(g);
    case ConvKernel::kGemm3d:
      return reduction(g) * im2col_tile(g);
    case ConvKernel::kQuantizedGemm:  // bytes, counted in floats
      return q8_scratch_floats(g, target, q8_default_tile_budget(target));
    case ConvKernel::kQuantizedDepthwise:
      return (q8_depthwise_scratch_bytes(g, static_cast<int64_t>(dtype_size(site.in[0].dtype)), target) + kFloatBytes - 1) /
             kFloatBytes;
    default:
      return 0;
  }
}

// Im2col columns and quantized patch tiles shrink to the budget; other kernels' scratch is fixed.
int64_t convolution_fit_scratch(const KernelSite& site, int64_t budget) {
  const ConvGeometry g = conv_geometry(site.attrs, site.in[0].shape);
  const std::optional<ConvKernel> kernel = recorded_kernel(site.algorithm);
  if (kernel == ConvKernel::kQuantizedGemm)
    return std::min(q8_scratch_floats(g, site.target, budget * kFloatBytes), convolution_scratch_floats(site));
  if (!kernel || ((*kernel != ConvKernel::kGemm || reads_input_directly(g)) && *kernel != ConvKernel::kGemm3d))
    return convolution_scratch_floats(site);
  return reduction(g) * im2col_tile_within(g, budget);
}

// The weights [f, c/groups, kh, kw] as each group's [f/groups x c/groups*kh*kw]
// matrix in hg_gemm_packed_a's row panels, group after group.
std::optional<std::vector<float>> convolution_pack_weights(const KernelSite& site, int index, const float* data) {
  const ConvGeometry g = conv_geometry(site.attrs, site.in[0].shape);
  const Target& target = site.target;
  const std::optional<ConvKernel> kernel = recorded_kernel(site.algorithm);
  if (index != 1 || !kernel) return std::nullopt;
  switch (*kernel) {
    case ConvKernel::kDense:
      return pack_w_transposed_panels(data, g.f, g.c, target.gemm_nr);
    case ConvKernel::kWinograd:
      return pack_winograd(data, g.f, g.c, target.gemm_nr, static_cast<int>(winograd_m(g, target)));
    case ConvKernel::kWinogradRawFilters:
      return pack_w_transposed_panels(data, g.f, g.c * 9, target.gemm_nr);
    case ConvKernel::kRows:
      return pack_a_panels(data, g.f, g.c * g.kh * g.kw, rows_filter_block(g, target));
    case ConvKernel::kPixelGemm:
      return pack_w_transposed_panels(data, g.f, g.c * g.kh * g.kw, target.gemm_nr);
    case ConvKernel::kFilterLanes:
      return pack_filter_lanes(data, g);
    case ConvKernel::kGemm:
    case ConvKernel::kGemm3d:
      break;
    default:
      return std::nullopt;
  }
  const int64_t fg = g.f / g.groups, k = reduction(g);
  std::vector<float> packed;
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    const std::vector<float> panels = pack_a_panels(data + grp * fg * k, fg, k, target.gemm_mr);
    packed.insert(packed.end(), panels.begin(), panels.end());
  }
  return packed;
}

// 3-D: geometry = the 2-D one of a depth slice, then {d, kd, od, sd, pd, dd}.
KernelCall emit_cpp_3d(const EmitContext& ctx, const ConvGeometry& g, ConvKernel kernel) {
  const std::string bias = ctx.in.size() > 2 ? ctx.in[2] : "nullptr";
  const std::vector<int64_t> dims{g.n,  g.c,  g.h,  g.w,  g.f,  g.kh, g.kw, g.oh, g.ow, g.sh, g.sw,
                                  g.ph, g.pw, g.dh, g.dw, g.groups, g.d, g.kd, g.od, g.sd, g.pd, g.dd};
  const std::string geometry = "{\n  static const long geometry[] = " + cpp_int_list(dims) + ";\n  ";
  if (kernel != ConvKernel::kGemm3d)
    return {{"epilogue", "conv3d"}, geometry + "hg_conv3d(" + ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " +
                                        ctx.out[0] + ", geometry, " + epilogue_argument(ctx) + ");\n}"};
  const int64_t fg = g.f / g.groups, k = reduction(g);
  const int64_t mr = ctx.target.gemm_mr, group_stride = (fg + mr - 1) / mr * mr * k;
  const std::string scratch = ctx.scratch.empty() ? "nullptr" : ctx.scratch;
  const int64_t tile = ctx.scratch.empty() ? im2col_tile(g) : ctx.scratch_bytes / kFloatBytes / k;
  return {{"epilogue", "gemm", "conv2d_gemm", "conv3d_gemm"},
          geometry + "hg_conv3d_gemm(" + ctx.in[0] + ", " + ctx.in[1] + ", " + std::to_string(group_stride) + ", " +
              bias + ", " + ctx.out[0] + ", geometry, " + std::to_string(tile) + ", " + scratch + ", " +
              epilogue_argument(ctx) + ", " + ctx.pool + ");\n}"};
}

KernelCall convolution_emit_cpp(const EmitContext& ctx) {
  const ConvGeometry g = conv_geometry(ctx.node.attrs, ctx.in_types[0].shape);
  const std::string bias = ctx.in.size() > 2 ? ctx.in[2] : "nullptr";
  const std::vector<int64_t> dims{g.n, g.c, g.h, g.w, g.f, g.kh, g.kw, g.oh, g.ow, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw,
                                  g.groups};
  const std::string geometry = "{\n  static const long geometry[] = " + cpp_int_list(dims) + ";\n  ";
  const std::optional<ConvKernel> kernel = recorded_kernel(ctx.algorithm);
  if (!kernel) throw Error("no kernel was chosen for this convolution (choose_algorithms)");
  if (g.spatial == 3) return emit_cpp_3d(ctx, g, *kernel);
  switch (*kernel) {
    case ConvKernel::kQuantizedGemm:
      return {{"epilogue", "gemm_q8"},
              geometry + requantization_declaration(ctx.in_types, ctx.out_types[0], g.f, "rq") + "hg_conv2d_gemm_q8<" +
                  std::to_string(ctx.target.q8_conv_channels) + ">(" + ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " +
                  ctx.out[0] + ", geometry, " + ctx.scratch + ", " +
                  std::to_string(q8_tile(g, ctx.target, ctx.scratch_bytes)) + ", rq, " + epilogue_argument(ctx) +
                  ");\n}"};
    case ConvKernel::kQuantizedDense:  // rows: the batch's images, each its channels; y's rows of f channels
      return {{"epilogue", "gemm_q8"},
              "{\n" + requantization_declaration(ctx.in_types, ctx.out_types[0], g.f, "rq") + "hg_gemm_q8<" +
                  std::to_string(ctx.target.gemm_nr) + ">(" + ctx.in[0] + ", " + std::to_string(g.c) + ", " +
                  ctx.in[1] + ", " + bias + ", " + ctx.out[0] + ", " + std::to_string(g.n) + ", " +
                  std::to_string(g.f) + ", " + std::to_string(g.c) + ", " + std::to_string(g.f) + ", 1, rq, " +
                  epilogue_argument(ctx) + ");\n}"};
    case ConvKernel::kQuantizedDepthwise:
      return {{"epilogue", "quantized_kernels"},
              geometry + requantization_declaration(ctx.in_types, ctx.out_types[0], g.f, "rq") +
                  "hg_conv2d_depthwise_q8(" + ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " + ctx.out[0] +
                  ", geometry, " + ctx.scratch + ", rq, " + epilogue_argument(ctx) + ");\n}"};
    case ConvKernel::kQuantized:
      return {{"epilogue", "quantized_kernels"},
              geometry + requantization_declaration(ctx.in_types, ctx.out_types[0], g.f, "rq") + "hg_conv2d_q8(" +
                  ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " + ctx.out[0] + ", geometry, rq, " +
                  epilogue_argument(ctx) + ");\n}"};
    case ConvKernel::kDense:
      return {{"epilogue", "gemm"}, "hg_gemm_packed_b(" + ctx.in[0] + ", " + std::to_string(g.c) + ", " + ctx.in[1] +
                                        ", " + bias + ", " + ctx.out[0] + ", " + std::to_string(g.f) + ", " +
                                        std::to_string(g.n) + ", " + std::to_string(g.f) + ", " + std::to_string(g.c) +
                                        ", " + epilogue_argument(ctx) + ", " + ctx.pool + ");"};
    case ConvKernel::kWinograd:
    case ConvKernel::kWinogradRawFilters: {
      const bool raw = *kernel == ConvKernel::kWinogradRawFilters;
      const int64_t nr = ctx.target.gemm_nr, u_stride = raw ? 0 : (g.f + nr - 1) / nr * nr * g.c;
      return {{"epilogue", "gemm", "conv2d_winograd"},
              geometry + "hg_conv2d_winograd<" + std::to_string(winograd_m(g, ctx.target)) + (raw ? ", true" : "") +
                  ">(" + ctx.in[0] + ", " + ctx.in[1] + ", " + std::to_string(u_stride) + ", " + bias + ", " +
                  ctx.out[0] + ", geometry, " + std::to_string(winograd_block(g, ctx.target)) + ", " + ctx.scratch +
                  ", " + epilogue_argument(ctx) + ", " + ctx.pool + ");\n}"};
    }
    case ConvKernel::kRows:
      return {{"epilogue", "gemm", "conv2d_depthwise", "conv2d_rows"},
              geometry + "hg_conv2d_rows<" + std::to_string(g.kh) + ", " +
                  std::to_string(rows_filter_block(g, ctx.target)) + ">(" + ctx.in[0] + ", " + ctx.in[1] + ", " + bias +
                  ", " + ctx.out[0] + ", geometry, " + epilogue_argument(ctx) + ", " + ctx.pool + ");\n}"};
    case ConvKernel::kPixelGemm:
      return {{"epilogue", "gemm", "conv2d_pixel_gemm"},
              geometry + "hg_conv2d_pixel_gemm(" + ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " + ctx.out[0] +
                  ", geometry, " + ctx.scratch + ", " + epilogue_argument(ctx) + ", " + ctx.pool + ");\n}"};
    case ConvKernel::kFilterLanes:
      return {{"epilogue", "gemm", "conv2d_filter_lanes"},
              geometry + "hg_conv2d_filter_lanes<" + std::to_string(filter_lanes_blocks(g)) + ", " +
                  std::to_string(g.kw) + ">(" + ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " + ctx.out[0] +
                  ", geometry, " + std::to_string(filter_lanes_rows(g)) + ", " +
                  std::to_string(filter_lanes_padded(g)) + ", " + ctx.scratch + ", " + epilogue_argument(ctx) + ", " +
                  ctx.pool + ");\n}"};
    case ConvKernel::kGemm: {
      const int64_t fg = g.f / g.groups, k = (g.c / g.groups) * g.kh * g.kw;
      const int64_t mr = ctx.target.gemm_mr, group_stride = (fg + mr - 1) / mr * mr * k;
      const std::string scratch = ctx.scratch.empty() ? "nullptr" : ctx.scratch;
      // Tiles of the columns the plan made room for (fit_scratch), or of the
      // kernel's own size.
      const int64_t tile = ctx.scratch.empty() ? im2col_tile(g) : ctx.scratch_bytes / kFloatBytes / k;
      return {{"epilogue", "gemm", "conv2d_gemm"},
              geometry + "hg_conv2d_gemm(" + ctx.in[0] + ", " + ctx.in[1] + ", " + std::to_string(group_stride) + ", " +
                  bias + ", " + ctx.out[0] + ", geometry, " + std::to_string(tile) + ", " + scratch + ", " +
                  epilogue_argument(ctx) + ", " + ctx.pool + ");\n}"};
    }
    case ConvKernel::kDepthwise:
      return {{"epilogue", "gemm", "conv2d_depthwise"},
              geometry + "hg_conv2d_depthwise(" + ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " +
                  ctx.out[0] + ", geometry, " + epilogue_argument(ctx) + ", " + ctx.pool + ");\n}"};
    case ConvKernel::kDirect:
    case ConvKernel::kGemm3d:
    case ConvKernel::kDirect3d:
      break;
  }
  return {{"epilogue", "conv2d"}, geometry + "hg_conv2d(" + ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " +
                                      ctx.out[0] + ", geometry, " + epilogue_argument(ctx) + ");\n}"};
}

Attrs conv(std::vector<int64_t> kernel, int64_t filters, std::vector<int64_t> stride, std::vector<int64_t> pad,
           std::vector<int64_t> dilate, int64_t groups, bool no_bias, std::vector<int64_t> pad_end = {}) {
  Attrs a;
  if (!pad_end.empty()) a.set("pad_end", std::move(pad_end));
  a.set("kernel", std::move(kernel));
  a.set("num_filter", filters);
  a.set("stride", std::move(stride));
  a.set("pad", std::move(pad));
  a.set("dilate", std::move(dilate));
  a.set("num_group", groups);
  a.set("no_bias", no_bias);
  return a;
}

const OpRegistrar convolution_op([] {
  OpDef d;
  d.name = "Convolution";
  d.summary = "1-D, 2-D and 3-D convolution, NCW/NCHW/NCDHW, with groups (Gluon nn.Conv1D, Conv2D, Conv3D)";
  d.input_names = {"data", "weight", "bias"};
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = with_output_quantization(
      {{"kernel", AttrKind::kInts, std::nullopt, "(kw), (kh, kw) or (kd, kh, kw)", {}},
       {"num_filter", AttrKind::kInt, std::nullopt, "output channels", {}},
       {"stride", AttrKind::kInts, std::vector<int64_t>{}, "one per kernel axis; default 1", {}},
       {"dilate", AttrKind::kInts, std::vector<int64_t>{}, "one per kernel axis; default 1", {}},
       {"pad", AttrKind::kInts, std::vector<int64_t>{}, "one per kernel axis; default 0", {}},
       {"pad_end",
        AttrKind::kInts,
        std::vector<int64_t>{},
        "padding after each axis' end (ONNX's asymmetric pads); empty: as pad",
        {}},
       {"num_group", AttrKind::kInt, int64_t{1}, "groups; = channels for depthwise", {}},
       {"no_bias", AttrKind::kBool, false, "no bias input", {}},
       {"layout",
        AttrKind::kString,
        std::string("None"),
        "data layout; None: the kernel's",
        {"None", "NCW", "NCHW", "NCDHW"}}});
  d.fusion = FusionClass::kOutElemwiseFusable;
  d.epilogue_axis = 1;
  d.reference_dtypes = quantized_gemm_dtypes();
  d.arity = [](const Attrs& a) { return a.get_bool("no_bias") ? 2 : 3; };
  d.infer = convolution_infer;
  d.reference = convolution_reference;
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    const ConvGeometry g = conv_geometry(a, in[0].shape);
    return 2.0 * static_cast<double>(g.n * g.f * g.od * g.oh * g.ow) * static_cast<double>(reduction(g));
  };
  d.weight_shapes = [](const Attrs& a, const Shape& data) {
    const ConvGeometry g = conv_geometry(a, data);
    return std::vector<Shape>{conv_weight_shape(g), {g.f}};
  };
  d.examples = {
      {conv({3, 3}, 4, {}, {1, 1}, {}, 1, false), {{1, 3, 6, 5}, {4, 3, 3, 3}, {4}}},
      {conv({1, 1}, 5, {}, {}, {}, 1, true), {{2, 4, 3, 3}, {5, 4, 1, 1}}},
      {conv({3, 3}, 6, {2, 2}, {1, 1}, {}, 6, false), {{1, 6, 7, 7}, {6, 1, 3, 3}, {6}}},  // depthwise
      {conv({3, 2}, 4, {1, 2}, {2, 1}, {2, 1}, 2, false), {{1, 4, 5, 6}, {4, 2, 3, 2}, {4}}},
      {conv({3, 3}, 2, {}, {3, 3}, {}, 1, false), {{1, 1, 1, 1}, {2, 1, 3, 3}, {2}}},   // 1x1 input, pad > k/2
      {conv({1, 1}, 19, {}, {}, {}, 1, false), {{2, 21, 1, 1}, {19, 21, 1, 1}, {19}}},  // a dense layer
      // Depthwise kernel: widths around the vector widths, borders, stride 2, batch 2, dilation.
      {conv({3, 3}, 5, {}, {1, 1}, {}, 5, false), {{2, 5, 9, 19}, {5, 1, 3, 3}, {5}}},
      {conv({3, 3}, 3, {2, 2}, {1, 1}, {}, 3, true), {{1, 3, 12, 37}, {3, 1, 3, 3}}},
      {conv({5, 5}, 2, {}, {4, 4}, {2, 2}, 2, false), {{1, 2, 10, 17}, {2, 1, 5, 5}, {2}}},
      // Winograd (16 tiles or more): partial tiles at the right and bottom, padding 0 and 2, batch 2,
      // channels not a multiple of 16.
      {conv({3, 3}, 32, {}, {1, 1}, {}, 1, false), {{2, 33, 13, 14}, {32, 33, 3, 3}, {32}}},
      {conv({3, 3}, 40, {}, {}, {}, 1, true), {{1, 32, 18, 17}, {40, 32, 3, 3}}},
      {conv({3, 3}, 32, {}, {2, 2}, {}, 1, false), {{1, 48, 12, 13}, {32, 48, 3, 3}, {32}}},
      // Winograd F(2x2, 3x3): a 7x7 map, and 12x9 (9 4x4 tiles, 30 2x2 ones, the last column partial).
      {conv({3, 3}, 64, {}, {1, 1}, {}, 1, false), {{1, 32, 7, 7}, {64, 32, 3, 3}, {64}}},
      {conv({3, 3}, 33, {}, {1, 1}, {}, 1, true), {{2, 40, 12, 9}, {33, 40, 3, 3}}},
      // Filters in lanes on x86-64-v4 (3 channels): 7x7 stride 2 with a partial block of 16
      // filters and rows of fewer than 16 pixels, batch 2; 3x3 stride 2 with 64 filters, 40 columns.
      {conv({7, 7}, 20, {2, 2}, {3, 3}, {}, 1, false), {{2, 3, 13, 17}, {20, 3, 7, 7}, {20}}},
      {conv({3, 3}, 64, {2, 2}, {1, 1}, {}, 1, true), {{1, 3, 9, 80}, {64, 3, 3, 3}}},
      // The row kernel on x86-64-v4: panels of 5 and 4 filters, an odd output height, batch 2.
      {conv({5, 5}, 9, {}, {1, 1}, {}, 1, false), {{2, 2, 13, 20}, {9, 2, 5, 5}, {9}}},
      // Pixels as GEMM rows: a 6x6 map, 1x1 and strided 3x3, batch 2; on 7x7 packed-A's one narrow column.
      {conv({1, 1}, 128, {}, {}, {}, 1, false), {{2, 80, 6, 6}, {128, 80, 1, 1}, {128}}},
      {conv({3, 3}, 128, {2, 2}, {1, 1}, {}, 1, true), {{1, 8, 11, 11}, {128, 8, 3, 3}}},
      {conv({1, 1}, 128, {}, {}, {}, 1, false), {{2, 80, 7, 7}, {128, 80, 1, 1}, {128}}},
      // 1-D (NCW, run as height 1): padded, strided and dilated, grouped, depthwise, a width-1 input.
      {conv({3}, 4, {}, {1}, {}, 1, false), {{2, 3, 11}, {4, 3, 3}, {4}}},
      {conv({5}, 6, {2}, {3}, {2}, 2, true), {{1, 4, 17}, {6, 2, 5}}},
      {conv({3}, 5, {}, {1}, {}, 5, false), {{1, 5, 33}, {5, 1, 3}, {5}}},
      {conv({1}, 7, {}, {}, {}, 1, false), {{3, 9, 1}, {7, 9, 1}, {7}}},
      // 3-D (NCDHW): padded, strided, dilated, grouped; a kernel as large as the padded input; depth 1.
      {conv({3, 3, 3}, 4, {}, {1, 1, 1}, {}, 1, false), {{2, 3, 5, 6, 7}, {4, 3, 3, 3, 3}, {4}}},
      {conv({2, 3, 1}, 6, {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, 3, true), {{1, 3, 6, 7, 9}, {6, 1, 2, 3, 1}}},
      {conv({3, 1, 3}, 5, {}, {1, 0, 1}, {}, 1, false), {{1, 2, 1, 4, 5}, {5, 2, 3, 1, 3}, {5}}},
      {conv({1, 1, 1}, 3, {}, {}, {}, 1, false), {{1, 17, 2, 3, 3}, {3, 17, 1, 1, 1}, {3}}},
      {conv({3, 3, 3}, 4, {1, 2, 2}, {1, 1, 1}, {}, 4, false), {{2, 4, 4, 7, 6}, {4, 1, 3, 3, 3}, {4}}},  // depthwise
      // Asymmetric padding (pad_end, ONNX's pads and SAME_UPPER/SAME_LOWER) on each kernel path: GEMM,
      // depthwise, Winograd, rows, pixel-row GEMM, 1x1 with end padding only, direct, 1-D and 3-D.
      {conv({3, 3}, 4, {2, 2}, {0, 0}, {}, 1, false, {1, 1}), {{1, 3, 8, 9}, {4, 3, 3, 3}, {4}}},
      {conv({3, 3}, 6, {2, 2}, {1, 0}, {}, 6, false, {0, 2}), {{2, 6, 9, 20}, {6, 1, 3, 3}, {6}}},
      {conv({5, 5}, 5, {}, {2, 1}, {}, 5, true, {1, 3}), {{1, 5, 8, 21}, {5, 1, 5, 5}}},
      {conv({3, 3}, 32, {}, {0, 1}, {}, 1, false, {2, 2}), {{1, 33, 13, 14}, {32, 33, 3, 3}, {32}}},
      {conv({3, 3}, 32, {}, {2, 0}, {}, 1, true, {0, 1}), {{1, 32, 7, 8}, {32, 32, 3, 3}}},
      {conv({5, 5}, 9, {}, {1, 2}, {}, 1, false, {3, 0}), {{2, 2, 13, 20}, {9, 2, 5, 5}, {9}}},
      {conv({3, 3}, 128, {2, 2}, {0, 0}, {}, 1, true, {1, 1}), {{1, 8, 13, 14}, {128, 8, 3, 3}}},
      {conv({1, 1}, 5, {}, {}, {}, 1, false, {1, 0}), {{1, 4, 3, 3}, {5, 4, 1, 1}, {5}}},
      {conv({1, 1}, 3, {}, {}, {}, 1, false, {0, 1}), {{1, 4, 1, 1}, {3, 4, 1, 1}, {3}}},
      {conv({3, 3}, 4, {2, 1}, {1, 0}, {}, 2, false, {0, 2}), {{1, 2, 7, 6}, {4, 1, 3, 3}, {4}}},  // direct
      {conv({4}, 3, {2}, {1}, {}, 1, false, {2}), {{1, 2, 9}, {3, 2, 4}, {3}}},
      {conv({3, 3, 3}, 4, {2, 1, 2}, {0, 1, 1}, {}, 1, false, {1, 0, 2}), {{1, 3, 5, 6, 7}, {4, 3, 3, 3, 3}, {4}}},
      {conv({3, 3, 3}, 3, {}, {1, 0, 0}, {}, 3, true, {0, 1, 1}), {{1, 3, 4, 5, 6}, {3, 1, 3, 3, 3}}},
      // Quantized: int8 padded per filter, uint8 strided and grouped per tensor, depthwise, 1-D dilated.
      quantized_example(with_output_quantization(conv({3, 3}, 6, {}, {1, 1}, {}, 1, false), 0.05, -4),
                        {quantized_data({2, 5, 6, 7}, DType::kInt8, 0.03f, 3), quantized_weight({6, 5, 3, 3}, 6),
                         TensorType{{6}, DType::kInt32}}),
      quantized_example(with_output_quantization(conv({3, 3}, 4, {2, 2}, {1, 1}, {}, 2, true), 0.08, 130),
                        {quantized_data({1, 4, 9, 8}, DType::kUInt8, 0.02f, 128), quantized_weight({4, 2, 3, 3}, 1)}),
      quantized_example(with_output_quantization(conv({3, 3}, 5, {}, {1, 1}, {}, 5, false), 0.03, 0),
                        {quantized_data({1, 5, 7, 9}, DType::kInt8, 0.03f, -2), quantized_weight({5, 1, 3, 3}, 5),
                         TensorType{{5}, DType::kInt32}}),
      // int8 depthwise on the Cortex-M55's strips: rows of several 16-column pieces at strides 1 and 2 with odd
      // row and column counts, a small plane at stride 2, kernels of 2 x 4 and 4 x 3, a column stride of 2 alone.
      quantized_example(with_output_quantization(conv({3, 3}, 3, {}, {1, 1}, {}, 3, false), 0.04, -5),
                        {quantized_data({1, 3, 11, 37}, DType::kInt8, 0.03f, -3), quantized_weight({3, 1, 3, 3}, 3),
                         TensorType{{3}, DType::kInt32}}),
      quantized_example(with_output_quantization(conv({3, 3}, 3, {2, 2}, {1, 1}, {}, 3, false), 0.04, 6),
                        {quantized_data({1, 3, 9, 40}, DType::kInt8, 0.03f, 4), quantized_weight({3, 1, 3, 3}, 3),
                         TensorType{{3}, DType::kInt32}}),
      quantized_example(with_output_quantization(conv({3, 3}, 4, {2, 2}, {1, 1}, {}, 4, true), 0.05, -128),
                        {quantized_data({1, 4, 7, 6}, DType::kInt8, 0.03f, -128), quantized_weight({4, 1, 3, 3}, 4)}),
      quantized_example(with_output_quantization(conv({2, 4}, 2, {}, {1, 2}, {}, 2, false), 0.04, 1),
                        {quantized_data({1, 2, 6, 9}, DType::kInt8, 0.03f, 2), quantized_weight({2, 1, 2, 4}, 2),
                         TensorType{{2}, DType::kInt32}}),
      quantized_example(with_output_quantization(conv({4, 3}, 2, {}, {2, 1}, {}, 2, false), 0.04, -2),
                        {quantized_data({1, 2, 8, 11}, DType::kInt8, 0.03f, 0), quantized_weight({2, 1, 4, 3}, 2),
                         TensorType{{2}, DType::kInt32}}),
      quantized_example(with_output_quantization(conv({3, 3}, 2, {1, 2}, {1, 1}, {}, 2, false), 0.04, 3),
                        {quantized_data({1, 2, 7, 12}, DType::kInt8, 0.03f, -1), quantized_weight({2, 1, 3, 3}, 2),
                         TensorType{{2}, DType::kInt32}}),
      // The quantized GEMM: pixel blocks with a tail, a partial last panel of channels and of k; uint8 1x1
      // read directly (batch 2); stride 2 with uneven padding; patch tiles of 32 pixels (k = 5400).
      quantized_example(with_output_quantization(conv({3, 3}, 11, {}, {1, 1}, {}, 1, false), 0.03, 5),
                        {quantized_data({1, 3, 9, 10}, DType::kInt8, 0.03f, -3), quantized_weight({11, 3, 3, 3}, 11),
                         TensorType{{11}, DType::kInt32}}),
      quantized_example(with_output_quantization(conv({1, 1}, 10, {}, {}, {}, 1, true), 0.01, 120),
                        {quantized_data({2, 6, 7, 9}, DType::kUInt8, 0.02f, 128), quantized_weight({10, 6, 1, 1}, 1)}),
      quantized_example(with_output_quantization(conv({5, 5}, 9, {2, 2}, {2, 1}, {}, 1, false), 0.06, -7),
                        {quantized_data({1, 4, 17, 19}, DType::kInt8, 0.03f, 2), quantized_weight({9, 4, 5, 5}, 9),
                         TensorType{{9}, DType::kInt32}}),
      quantized_example(with_output_quantization(conv({3, 3}, 3, {}, {1, 1}, {}, 1, false), 0.5, 0),
                        {quantized_data({1, 600, 12, 12}, DType::kInt8, 0.03f, 1), quantized_weight({3, 600, 3, 3}, 3),
                         TensorType{{3}, DType::kInt32}}),
      // Depthwise, stride 2 and dilated, output rows past the kernel's chunk of 64 pixels.
      quantized_example(with_output_quantization(conv({3, 3}, 3, {2, 2}, {1, 2}, {1, 2}, 3, false), 0.04, 120),
                        {quantized_data({1, 3, 5, 150}, DType::kUInt8, 0.02f, 128), quantized_weight({3, 1, 3, 3}, 3),
                         TensorType{{3}, DType::kInt32}}),
      // A weight of -128 (not TFLite's, possible in other files): AVX2's sign trick does not apply.
      [] {
        OpExample e = quantized_example(with_output_quantization(conv({3, 3}, 7, {}, {1, 1}, {}, 1, false), 0.04, 100),
                                        {quantized_data({1, 5, 6, 9}, DType::kUInt8, 0.02f, 128),
                                         quantized_weight({7, 5, 3, 3}, 7), TensorType{{7}, DType::kInt32}});
        e.weights_include_int8_min = true;
        return e;
      }(),
      // Depthwise with VNNI: two four-tap groups per kernel row, stride 2, rows dilated, several 32-slot blocks.
      quantized_example(with_output_quantization(conv({5, 5}, 4, {2, 2}, {2, 2}, {2, 1}, 4, false), 0.05, 110),
                        {quantized_data({1, 4, 20, 70}, DType::kUInt8, 0.02f, 128), quantized_weight({4, 1, 5, 5}, 4),
                         TensorType{{4}, DType::kInt32}}),
      // Depthwise at stride 1 on planes of several slot blocks: int8 with a weight of -128 in the first channel
      // (AVX2's sign trick does not apply: that channel alone takes the portable loops), and uint8.
      [] {
        OpExample e = quantized_example(with_output_quantization(conv({3, 3}, 6, {}, {1, 1}, {}, 6, false), 0.04, -10),
                                        {quantized_data({1, 6, 13, 21}, DType::kInt8, 0.03f, 4),
                                         quantized_weight({6, 1, 3, 3}, 6), TensorType{{6}, DType::kInt32}});
        e.weights_include_int8_min = true;
        return e;
      }(),
      quantized_example(with_output_quantization(conv({3, 3}, 4, {}, {1, 1}, {}, 4, false), 0.05, 100),
                        {quantized_data({1, 4, 11, 30}, DType::kUInt8, 0.02f, 128), quantized_weight({4, 1, 3, 3}, 4),
                         TensorType{{4}, DType::kInt32}}),
      // Depthwise on a plane of at most 64 outputs (AVX-512: sixteen channels in the lanes), 20 channels
      // (a partial second block), stride 2, rows dilated, uint8.
      quantized_example(with_output_quantization(conv({3, 3}, 20, {2, 2}, {1, 1}, {2, 1}, 20, false), 0.05, 120),
                        {quantized_data({1, 20, 9, 11}, DType::kUInt8, 0.02f, 128), quantized_weight({20, 1, 3, 3}, 20),
                         TensorType{{20}, DType::kInt32}}),
      // A 1x1 convolution of a 1x1 input (the dense layer's GEMM): int8, a batch of 3, a partial last panel; uint8.
      quantized_example(with_output_quantization(conv({1, 1}, 37, {}, {}, {}, 1, false), 0.04, 3),
                        {quantized_data({3, 70, 1, 1}, DType::kInt8, 0.03f, -5), quantized_weight({37, 70, 1, 1}, 37),
                         TensorType{{37}, DType::kInt32}}),
      quantized_example(
          with_output_quantization(conv({1, 1}, 20, {}, {}, {}, 1, true), 0.05, 130),
          {quantized_data({1, 33, 1, 1}, DType::kUInt8, 0.02f, 128), quantized_weight({20, 33, 1, 1}, 20)}),
      // Channels of tiny scales in the first panel of eight (right shifts of 24 to 28, and a multiplier of 0
      // below 2^-32: the Cortex-M4's GEMM adds their zero point after the shift), none in the second.
      quantized_example(
          with_output_quantization(conv({1, 1}, 10, {}, {}, {}, 1, false), 0.05, 5),
          {quantized_data({1, 6, 5, 7}, DType::kInt8, 0.03f, -3),
           TensorType{
               {10, 6, 1, 1},
               DType::kInt8,
               Quantization::per_axis(0, {0.002f, 6e-8f, 0.004f, 1e-14f, 4e-9f, 0.006f, 0.003f, 2e-8f, 0.002f, 0.005f},
                                      std::vector<int64_t>(10, 0))},
           TensorType{{10}, DType::kInt32}}),
      // A 1x1 convolution of more than sixteen channels read directly (uint8; the Cortex-M55 transposes its
      // input in blocks of four pixels, 35 of them), and one whose scales make left shifts (int8, output scale
      // below the product's).
      quantized_example(with_output_quantization(conv({1, 1}, 7, {}, {}, {}, 1, false), 0.004, 120),
                        {quantized_data({1, 20, 5, 7}, DType::kUInt8, 0.02f, 128), quantized_weight({7, 20, 1, 1}, 7),
                         TensorType{{7}, DType::kInt32}}),
      quantized_example(with_output_quantization(conv({1, 1}, 9, {}, {}, {}, 1, false), 0.0001, -3),
                        {quantized_data({1, 20, 3, 6}, DType::kInt8, 0.03f, 2), quantized_weight({9, 20, 1, 1}, 9),
                         TensorType{{9}, DType::kInt32}}),
      quantized_example(with_output_quantization(conv({3}, 3, {}, {2}, {2}, 1, false), 0.06, 10),
                        {quantized_data({1, 4, 15}, DType::kInt8, 0.03f, 0), quantized_weight({3, 4, 3}, 3),
                         TensorType{{3}, DType::kInt32}}),
  };
  return d;
}());

const KernelRegistrar convolution_cpp(Backend::kCpp, "Convolution", [] {
  OpKernel k{convolution_emit_cpp};
  k.dtypes = quantized_gemm_dtypes();
  k.choose_algorithm = convolution_choose_algorithm;
  k.pack_constant = [float_packing = float32_packing(convolution_pack_weights)](
                        const KernelSite& site, int index, const Constant& value) -> std::optional<Constant> {
    if (value.type.dtype != DType::kInt8) return float_packing(site, index, value);
    const std::optional<ConvKernel> kernel = recorded_kernel(site.algorithm);
    if (index != 1 || (kernel != ConvKernel::kQuantizedGemm && kernel != ConvKernel::kQuantizedDense))
      return std::nullopt;
    const ConvGeometry g = conv_geometry(site.attrs, site.in[0].shape);
    if (kernel == ConvKernel::kQuantizedDense)
      return q8_packed_constant(value, g.f, g.c, site.target.gemm_nr, site.target.q8_group);
    return q8_packed_constant(value, g.f, g.c * g.kh * g.kw, site.target.q8_conv_channels, site.target.q8_group);
  };
  k.scratch_bytes = [](const KernelSite& site) { return convolution_scratch_floats(site) * kFloatBytes; };
  k.fit_scratch = [](const KernelSite& site, int64_t budget) {
    return convolution_fit_scratch(site, budget / kFloatBytes) * kFloatBytes;
  };
  return k;
}());

}  // namespace
}  // namespace hybgen
