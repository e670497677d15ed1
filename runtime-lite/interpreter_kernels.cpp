#include "runtime-lite/interpreter_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "ops/conv_geometry.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/reference_blas.h"

namespace hybgen {
namespace {
// The generated code's exp and GELU (few-ulp polynomials that vectorise),
// portable C++: the interpreter stands in for that code.
#include "templates/kernels/math.inc"
}  // namespace
}  // namespace hybgen

namespace hybgen {
namespace {

// Columns of one image for the GEMM: row (c, ky, kx) holds the input pixel
// each output pixel reads through that tap, 0 in the padding. Row by row
// and output row by output row: the valid span of a stride-1 row is one copy.
void im2col(const ConvGeometry& g, const float* x, float* col) {
  const int64_t spatial = g.oh * g.ow;
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t ky = 0; ky < g.kh; ++ky)
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        float* row = col + ((c * g.kh + ky) * g.kw + kx) * spatial;
        // Output columns whose input column lies inside: [lo, hi).
        const int64_t offset = kx * g.dw - g.pw;
        const int64_t lo = std::min(g.ow, std::max<int64_t>(0, (-offset + g.sw - 1) / g.sw));
        const int64_t hi = std::max(lo, std::min(g.ow, (g.w - offset + g.sw - 1) / g.sw));
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          float* out = row + oy * g.ow;
          const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
          if (iy < 0 || iy >= g.h) {
            std::fill(out, out + g.ow, 0.0f);
            continue;
          }
          const float* in = x + (c * g.h + iy) * g.w;
          std::fill(out, out + lo, 0.0f);
          if (g.sw == 1) {
            std::memcpy(out + lo, in + lo + offset, static_cast<std::size_t>(hi - lo) * sizeof(float));
          } else {
            for (int64_t ox = lo; ox < hi; ++ox) out[ox] = in[ox * g.sw + offset];
          }
          std::fill(out + hi, out + g.ow, 0.0f);
        }
      }
}


// Winograd F(2x2, 3x3) (Lavin and Gray 2016) for 3x3 stride-1 convolutions:
// each 4x4 input tile d becomes V = B^T d B, each filter g U = G g G^T (once,
// here), and the 16 positions of the transform are 16 GEMMs M = U V over the
// channels, each 2x2 output tile A^T M A: 2.25x fewer multiplications than
// im2col + GEMM. Its transforms hold only 1/2 and +-1, so the results stay
// within a few roundings of the direct product. The GEMMs go through
// V and M planes in scratch. Not on small maps: there the transformed
// filters, 1.8x the weights' bytes, are read for too few tiles (ResNet-18's
// 512-channel 7x7 layers, 16 tiles: 5.5 ms against 4.6 for im2col + GEMM;
// its 256-channel 14x14 ones 2.3 against 4.6; OpenBLAS on one core).
struct Winograd {
  ConvGeometry g;
  int64_t tiles_y, tiles_x, tiles;
  std::vector<float> u;  // [16][f][c]
  // Floats between the 16 planes of V ([c][tiles]) and of M ([f][tiles]) in
  // scratch: padded off multiples of 4 KiB, where every plane's element
  // would fall in one cache set (ResNet's 64 x 784 planes: 2.5x slower
  // transforms).
  int64_t v_plane, m_plane;
};

int64_t padded_plane(int64_t floats) {
  const int64_t aligned = (floats + 15) / 16 * 16;  // planes start on 64-byte lines
  return aligned % 1024 == 0 ? aligned + 16 : aligned;
}

Winograd winograd_filters(const ConvGeometry& g, const float* w) {
  Winograd k{g, (g.oh + 1) / 2, (g.ow + 1) / 2, 0, {}, 0, 0};
  k.tiles = k.tiles_y * k.tiles_x;
  k.v_plane = padded_plane(g.c * k.tiles);
  k.m_plane = padded_plane(g.f * k.tiles);
  k.u.resize(static_cast<std::size_t>(16 * g.f * g.c));
  for (int64_t f = 0; f < g.f; ++f)
    for (int64_t c = 0; c < g.c; ++c) {
      const float* x = w + (f * g.c + c) * 9;
      float gg[4][3];  // G g
      for (int j = 0; j < 3; ++j) {
        gg[0][j] = x[j];
        gg[1][j] = 0.5f * (x[j] + x[3 + j] + x[6 + j]);
        gg[2][j] = 0.5f * (x[j] - x[3 + j] + x[6 + j]);
        gg[3][j] = x[6 + j];
      }
      for (int i = 0; i < 4; ++i) {
        const float row[4] = {gg[i][0], 0.5f * (gg[i][0] + gg[i][1] + gg[i][2]),
                              0.5f * (gg[i][0] - gg[i][1] + gg[i][2]), gg[i][2]};
        for (int j = 0; j < 4; ++j) k.u[static_cast<std::size_t>(((i * 4 + j) * g.f + f) * g.c + c)] = row[j];
      }
    }
  return k;
}

// V[16][c][tiles] from one image x.
void winograd_input(const Winograd& k, const float* x, float* v) {
  const ConvGeometry& g = k.g;
  const int64_t plane = k.v_plane;
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t ty = 0; ty < k.tiles_y; ++ty)
      for (int64_t tx = 0; tx < k.tiles_x; ++tx) {
        float d[4][4];
        const int64_t y0 = 2 * ty - g.ph, x0 = 2 * tx - g.pw;
        if (y0 >= 0 && y0 + 4 <= g.h && x0 >= 0 && x0 + 4 <= g.w) {  // inside: no bounds to check
          const float* p = x + (c * g.h + y0) * g.w + x0;
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) d[i][j] = p[i * g.w + j];
        } else {
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
              const int64_t iy = y0 + i, ix = x0 + j;
              d[i][j] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? x[(c * g.h + iy) * g.w + ix] : 0.0f;
            }
        }
        float t[4][4];  // B^T d
        for (int j = 0; j < 4; ++j) {
          t[0][j] = d[0][j] - d[2][j];
          t[1][j] = d[1][j] + d[2][j];
          t[2][j] = d[2][j] - d[1][j];
          t[3][j] = d[1][j] - d[3][j];
        }
        float* out = v + c * k.tiles + ty * k.tiles_x + tx;
        for (int i = 0; i < 4; ++i) {  // (B^T d) B
          out[(i * 4 + 0) * plane] = t[i][0] - t[i][2];
          out[(i * 4 + 1) * plane] = t[i][1] + t[i][2];
          out[(i * 4 + 2) * plane] = t[i][2] - t[i][1];
          out[(i * 4 + 3) * plane] = t[i][1] - t[i][3];
        }
      }
}

// y (f, oh, ow) from M[16][f][tiles], plus the bias.
void winograd_output(const Winograd& k, const float* m, const float* bias, float* y) {
  const ConvGeometry& g = k.g;
  const int64_t plane = k.m_plane;
  for (int64_t f = 0; f < g.f; ++f) {
    const float b = bias ? bias[f] : 0.0f;
    for (int64_t ty = 0; ty < k.tiles_y; ++ty)
      for (int64_t tx = 0; tx < k.tiles_x; ++tx) {
        const float* in = m + f * k.tiles + ty * k.tiles_x + tx;
        float s[2][4];  // A^T M
        for (int j = 0; j < 4; ++j) {
          const float m0 = in[j * plane], m1 = in[(4 + j) * plane], m2 = in[(8 + j) * plane],
                      m3 = in[(12 + j) * plane];
          s[0][j] = m0 + m1 + m2;
          s[1][j] = m1 - m2 - m3;
        }
        for (int i = 0; i < 2; ++i) {  // (A^T M) A
          const int64_t oy = 2 * ty + i;
          if (oy >= g.oh) break;
          float* out = y + (f * g.oh + oy) * g.ow + 2 * tx;
          out[0] = s[i][0] + s[i][1] + s[i][2] + b;
          if (2 * tx + 1 < g.ow) out[1] = s[i][1] - s[i][2] - s[i][3] + b;
        }
      }
  }
}

bool uses_winograd(const ConvGeometry& g) {
  return g.groups == 1 && g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 && g.c >= 16 &&
         g.f >= 16 && g.oh * g.ow >= 14 * 14;
}

std::optional<FastKernel> winograd(const ConvGeometry& g, const float* w, bool bias) {
  auto k = std::make_shared<Winograd>(winograd_filters(g, w));
  FastKernel kernel;
  kernel.scratch_floats = static_cast<std::size_t>(16 * (k->v_plane + k->m_plane));
  kernel.run = [k, bias](const std::vector<const float*>& in, const std::vector<float*>& out, float* scratch) {
    const ConvGeometry& g = k->g;
    float* v = scratch;
    float* m = scratch + 16 * k->v_plane;
    const int t = static_cast<int>(k->tiles), f = static_cast<int>(g.f), c = static_cast<int>(g.c);
    for (int64_t n = 0; n < g.n; ++n) {
      winograd_input(*k, in[0] + n * g.c * g.h * g.w, v);
      for (int p = 0; p < 16; ++p)
        reference_sgemm(false, false, f, t, c, k->u.data() + static_cast<std::size_t>(p) * f * c, c,
                        v + p * k->v_plane, t, m + p * k->m_plane, t);
      winograd_output(*k, m, bias ? in[2] : nullptr, out[0] + n * g.f * g.oh * g.ow);
    }
  };
  return kernel;
}

// One output plane of a depthwise convolution: y = bias + the taps of k
// over the input plane x. Each output row is summed in place, tap by tap,
// over the span of columns whose input lies inside the row, so the inner
// loop has no bounds check and, at stride 1, vectorises; the row stays in L1
// across its taps.
void depthwise_plane(const ConvGeometry& g, const float* x, const float* k, float bias, float* y) {
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    float* row = y + oy * g.ow;
    std::fill(row, row + g.ow, bias);
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
      if (iy < 0 || iy >= g.h) continue;
      const float* src = x + iy * g.w;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const float weight = k[ky * g.kw + kx];
        const int64_t offset = kx * g.dw - g.pw;
        const int64_t lo = std::min(g.ow, std::max<int64_t>(0, (-offset + g.sw - 1) / g.sw));
        const int64_t hi = std::max(lo, std::min(g.ow, (g.w - offset + g.sw - 1) / g.sw));
        if (g.sw == 1) {
          const float* s = src + offset;
          for (int64_t ox = lo; ox < hi; ++ox) row[ox] += weight * s[ox];
        } else {
          for (int64_t ox = lo; ox < hi; ++ox) row[ox] += weight * src[ox * g.sw + offset];
        }
      }
    }
  }
}

// Depthwise: one input channel per group, `multiplier` filters each.
std::optional<FastKernel> depthwise(const ConvGeometry& g, const float* w, bool bias) {
  FastKernel kernel;
  kernel.run = [g, w, bias](const std::vector<const float*>& in, const std::vector<float*>& out, float*) {
    const int64_t multiplier = g.f / g.c, taps = g.kh * g.kw;
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t f = 0; f < g.f; ++f)
        depthwise_plane(g, in[0] + (n * g.c + f / multiplier) * g.h * g.w, w + f * taps, bias ? in[2][f] : 0.0f,
                        out[0] + (n * g.f + f) * g.oh * g.ow);
  };
  return kernel;
}

// _pointwise_depthwise_conv (gen/ops/pointwise_depthwise_conv.cpp): the 1x1
// convolution a block of channels at a time (sgemm into scratch that stays
// in cache), its bias and activation, then the depthwise planes of that block,
// as the generated kernel does; `mid` never exists whole.
std::optional<FastKernel> pointwise_depthwise(const Node& node, const std::vector<TensorType>& in_types,
                                              const std::vector<const float*>& constants) {
  const Shape& data = in_types[0].shape;
  if (data.size() != 4 || !constants[1] || !constants[3]) return std::nullopt;
  const Attrs& a = node.attrs;
  const int64_t mid = a.get_int("num_filter");
  Attrs d;  // the depthwise convolution's, as the op's reference builds them
  d.set("kernel", a.get_ints("kernel"));
  d.set("num_filter", mid);
  d.set("num_group", mid);
  d.set("stride", a.get_ints("stride"));
  d.set("pad", a.get_ints("pad"));
  d.set("dilate", a.get_ints("dilate"));
  const ConvGeometry g = conv_geometry(normalize_attrs(find_op("Convolution"), d), {data[0], mid, data[2], data[3]});
  const std::string& act = a.get_string("act_type");
  const bool relu = act == "relu", clip = act == "clip";
  const float lo = clip ? static_cast<float>(a.get_float("a_min")) : 0.0f;
  const float hi = clip ? static_cast<float>(a.get_float("a_max")) : 0.0f;
  const int64_t in_c = data[1], plane = g.h * g.w, taps = g.kh * g.kw;
  const int64_t block = std::clamp<int64_t>(int64_t{64} * 1024 / plane, 1, mid);  // 256 KiB of `mid`
  FastKernel kernel;
  kernel.scratch_floats = static_cast<std::size_t>(block * plane);
  const float* w1 = constants[1];
  const float* w2 = constants[3];
  kernel.run = [=](const std::vector<const float*>& in, const std::vector<float*>& out, float* scratch) {
    for (int64_t n = 0; n < g.n; ++n) {
      const float* x = in[0] + n * in_c * plane;
      float* y = out[0] + n * mid * g.oh * g.ow;
      for (int64_t c0 = 0; c0 < mid; c0 += block) {
        const int64_t channels = std::min(block, mid - c0);
        reference_sgemm(false, false, static_cast<int>(channels), static_cast<int>(plane), static_cast<int>(in_c),
                        w1 + c0 * in_c, static_cast<int>(in_c), x, static_cast<int>(plane), scratch,
                        static_cast<int>(plane));
        for (int64_t c = 0; c < channels; ++c) {
          float* m = scratch + c * plane;
          const float b = in[2][c0 + c];
          if (relu) {
            for (int64_t i = 0; i < plane; ++i) m[i] = std::max(m[i] + b, 0.0f);
          } else if (clip) {
            for (int64_t i = 0; i < plane; ++i) m[i] = std::min(std::max(m[i] + b, lo), hi);
          } else {
            for (int64_t i = 0; i < plane; ++i) m[i] += b;
          }
          depthwise_plane(g, m, w2 + (c0 + c) * taps, in[4][c0 + c], y + (c0 + c) * g.oh * g.ow);
        }
      }
    }
  };
  return kernel;
}

std::optional<FastKernel> convolution(const Node& node, const std::vector<TensorType>& in_types,
                                      const std::vector<const float*>& constants) {
  const ConvGeometry g = conv_geometry(node.attrs, in_types[0].shape);
  // 3-D, and weights computed at run time: the reference.
  if (g.spatial == 3 || !constants[1]) return std::nullopt;
  const bool bias = in_types.size() > 2;
  if (g.groups > 1 && g.groups == g.c) return depthwise(g, constants[1], bias);
  if (uses_winograd(g)) return winograd(g, constants[1], bias);
  // Grouped: im2col + GEMM per group, over the group's channels and filters.
  ConvGeometry group = g;
  group.c = g.c / g.groups;
  group.f = g.f / g.groups;
  group.groups = 1;
  const bool direct =
      g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.ph_end == 0 && g.pw_end == 0;
  const int64_t k = group.c * g.kh * g.kw, spatial = g.oh * g.ow;
  FastKernel kernel;
  kernel.scratch_floats = direct ? 0 : static_cast<std::size_t>(k * spatial);
  const float* w = constants[1];
  kernel.run = [g, group, direct, k, spatial, w, bias](const std::vector<const float*>& in,
                                                       const std::vector<float*>& out, float* scratch) {
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t j = 0; j < g.groups; ++j) {
        const float* x = in[0] + (n * g.c + j * group.c) * g.h * g.w;
        float* y = out[0] + (n * g.f + j * group.f) * spatial;
        if (!direct) im2col(group, x, scratch);
        reference_sgemm(false, false, static_cast<int>(group.f), static_cast<int>(spatial), static_cast<int>(k),
                        w + j * group.f * k, static_cast<int>(k), direct ? x : scratch, static_cast<int>(spatial), y,
                        static_cast<int>(spatial));
        if (bias)
          for (int64_t f = 0; f < group.f; ++f) {
            const float b = in[2][j * group.f + f];
            float* row = y + f * spatial;
            for (int64_t i = 0; i < spatial; ++i) row[i] += b;
          }
      }
  };
  return kernel;
}

// softmax along the last axis in float: max, e = exp(x - max) stored, one
// sum, one scale; the reference computes exp twice per element in double.
std::optional<FastKernel> softmax(const Node& node, const std::vector<TensorType>& in_types,
                                  const std::vector<const float*>&) {
  const Shape& s = in_types[0].shape;
  if (s.empty() || normalize_axis(node.attrs.get_int("axis"), s.size()) != static_cast<int>(s.size()) - 1)
    return std::nullopt;
  const int64_t n = s.back(), rows = dims_product(s, 0, s.size() - 1);
  const float inv_t = static_cast<float>(1.0 / node.attrs.get_float("temperature"));
  FastKernel kernel;
  kernel.run = [n, rows, inv_t](const std::vector<const float*>& in, const std::vector<float*>& out, float*) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* x = in[0] + r * n;
      float* y = out[0] + r * n;
      float max_value = x[0];
      for (int64_t i = 1; i < n; ++i) max_value = std::max(max_value, x[i]);
      float sum = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        y[i] = hg_exp((x[i] - max_value) * inv_t);
        sum += y[i];
      }
      const float scale = 1.0f / sum;
      for (int64_t i = 0; i < n; ++i) y[i] *= scale;
    }
  };
  return kernel;
}

// GELU (LeakyReLU act_type=gelu) with the generated code's polynomial:
// within 4 ulp of |x| of the exact erf form the reference computes.
std::optional<FastKernel> leaky_relu(const Node& node, const std::vector<TensorType>& in_types,
                                     const std::vector<const float*>&) {
  if (node.attrs.get_string("act_type") != "gelu") return std::nullopt;
  const int64_t n = in_types[0].num_elements();
  FastKernel kernel;
  kernel.run = [n](const std::vector<const float*>& in, const std::vector<float*>& out, float*) {
    const float* x = in[0];
    float* y = out[0];
    for (int64_t i = 0; i < n; ++i) y[i] = hg_gelu(x[i]);
  };
  return kernel;
}

using Factory = std::optional<FastKernel> (*)(const Node&, const std::vector<TensorType>&,
                                              const std::vector<const float*>&);

}  // namespace

std::optional<FastKernel> fast_kernel(const Node& node, const std::vector<TensorType>& in_types,
                                      const std::vector<TensorType>& out_types,
                                      const std::vector<const float*>& constants) {
  for (const auto* types : {&in_types, &out_types})
    for (const TensorType& t : *types)
      if (t.dtype != DType::kFloat32) return std::nullopt;
  static const std::map<std::string, Factory> factories = {{"Convolution", convolution},
                                                           {"_pointwise_depthwise_conv", pointwise_depthwise},
                                                           {"softmax", softmax},
                                                           {"LeakyReLU", leaky_relu}};
  auto it = factories.find(node.op);
  return it == factories.end() ? std::nullopt : it->second(node, in_types, constants);
}

}  // namespace hybgen
