// The convolution kernels of templates/kernels/conv2d_*.inc against a
// double-precision direct convolution, on many geometries: odd sizes,
// widths around the vector widths, padding 0..2, stride 1..3, dilation,
// batch 2, with and without bias and a fused epilogue (per-channel add,
// residual read at the output index, ReLU). A C++11 driver including the
// kernel text inside a namespace (as generated code does) is compiled with
// the strict flags for this machine, for baseline x86-64 (the portable path)
// and for x86-64-v3 (AVX2) and x86-64-v4 (AVX-512) where the host runs them.
// The depthwise kernel's cases are made by the driver; the Winograd and
// pixel-row GEMM kernels read weights packed here by the tool's functions for
// the driver's target, as does the small direct kernel (conv2d_rows.inc, its
// filters in panels) on AVX-512, AVX2 and NEON builds; the fused 1x1-then-depthwise kernel
// (conv_pointwise_depthwise.inc) reads its 1x1 weights packed the same way, and the
// filters-in-lanes kernel (conv2d_filter_lanes.inc, AVX-512) its weights as
// one panel of W^T. |got - expected| <= tol * (sum of |terms|), tol 1e-5,
// 5e-5 for Winograd (its transforms add rounding).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "emit/templates.h"
#include "io/file_util.h"
#include "kernel_driver_support.h"
#include "ops/gemm_pack.h"
#include "run_command.h"

namespace hybgen {
namespace {

using testing::quoted;
using testing::host_supports;
using testing::native_target;
using testing::put;
using testing::run_command;
using testing::SeededFloats;

// The driver after kKernelDriverPrelude: its cases and main().
const char* kConvDriver = R"DRV(namespace {

long g_cases = 0, g_values = 0, g_failures = 0;

// Compares y with a double-precision direct convolution of x (weights
// [f, c/groups, kh, kw] as given, optional bias, the test epilogue).
// Epilogue 0: none; 1: the lambda (channel and index operands, relu); 2:
// HgClampEpilogue(-0.3, 0.4); 3: HgReluEpilogue (2 and 3 in registers).
// geometry = {n, c, h, w, f, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, groups}
void compare_with_direct(const long* geometry, const std::vector<float>& x, const std::vector<float>& wt,
                         const float* b, const std::vector<float>& y, int epilogue, const char* kernel,
                         double tolerance = 1e-5, double floor = 1e-30) {
  const long n = geometry[0], c = geometry[1], h = geometry[2], w = geometry[3], f = geometry[4];
  const long kh = geometry[5], kw = geometry[6], oh = geometry[7], ow = geometry[8];
  const long sh = geometry[9], sw = geometry[10], ph = geometry[11], pw = geometry[12];
  const long dh = geometry[13], dw = geometry[14], groups = geometry[15];
  const long cg = c / groups, fg = f / groups;
  for (long in = 0; in < n; ++in)
    for (long of = 0; of < f; ++of)
      for (long oy = 0; oy < oh; ++oy)
        for (long ox = 0; ox < ow; ++ox) {
          double sum = b ? b[of] : 0.0, scale = std::fabs(sum);
          for (long ic = 0; ic < cg; ++ic)
            for (long ky = 0; ky < kh; ++ky)
              for (long kx = 0; kx < kw; ++kx) {
                const long iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                const double t = static_cast<double>(x[((in * c + of / fg * cg + ic) * h + iy) * w + ix]) *
                                 wt[((of * cg + ic) * kh + ky) * kw + kx];
                sum += t;
                scale += std::fabs(t);
              }
          const long idx = ((in * f + of) * oh + oy) * ow + ox;
          if (epilogue == 1) {
            sum += static_cast<double>(channel_add(of)) + residual(idx);
            scale += std::fabs(channel_add(of)) + std::fabs(residual(idx));
            if (sum < 0) sum = 0;
          } else if (epilogue == 2) {
            sum = sum < -0.3 ? -0.3 : (sum > 0.4 ? 0.4 : sum);
          } else if (epilogue == 3) {
            sum = sum > 0 ? sum : 0;
          }
          const double got = y[static_cast<size_t>(idx)];
          ++g_values;
          if (!(std::fabs(got - sum) <= tolerance * scale + floor) && ++g_failures < 20)
            std::printf("FAIL %s n%ld c%ld %ldx%ld f%ld k%ldx%ld s%ld,%ld p%ld,%ld d%ld,%ld g%ld: y[%ld] = %.9g, "
                        "expected %.9g\n",
                        kernel, n, c, h, w, f, kh, kw, sh, sw, ph, pw, dh, dw, groups, idx, got, sum);
        }
}

void check_depthwise(long n, long c, long h, long w, long kh, long kw, long sh, long sw, long ph, long pw, long dh,
                     long dw, bool bias, int epilogue) {
  const long oh = (h + 2 * ph - (dh * (kh - 1) + 1)) / sh + 1, ow = (w + 2 * pw - (dw * (kw - 1) + 1)) / sw + 1;
  if (oh <= 0 || ow <= 0) return;
  const long geometry[16] = {n, c, h, w, c, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, c};
  std::vector<float> x(static_cast<size_t>(n * c * h * w)), wt(static_cast<size_t>(c * kh * kw)), b(c);
  for (size_t i = 0; i < x.size(); ++i) x[i] = random_value();
  for (size_t i = 0; i < wt.size(); ++i) wt[i] = random_value();
  for (long i = 0; i < c; ++i) b[i] = random_value();
  // The input between unreadable pages, once against each: the kernels'
  // plain loads may read beyond a plane's rows, never beyond the input.
  for (int at_end = 0; at_end < 2; ++at_end) {
    const GuardedFloats guarded(x, at_end != 0);
    const float* const xp = guarded.data();
    // A guard value after the output catches writes past its end.
    std::vector<float> y(static_cast<size_t>(n * c * oh * ow + 1), 777.0f);
    if (epilogue == 1)
      model::kernels::hg_conv2d_depthwise(xp, &wt[0], bias ? &b[0] : 0, &y[0], geometry,
                                          [](long ch, long idx, float v) {
                                            const float r = v + channel_add(ch) + residual(idx);
                                            return r > 0.0f ? r : 0.0f;
                                          });
    else if (epilogue == 2)
      model::kernels::hg_conv2d_depthwise(xp, &wt[0], bias ? &b[0] : 0, &y[0], geometry,
                                          model::kernels::HgClampEpilogue(-0.3f, 0.4f));
    else
      model::kernels::hg_conv2d_depthwise(xp, &wt[0], bias ? &b[0] : 0, &y[0], geometry,
                                          model::kernels::HgNoEpilogue());
    ++g_cases;
    if (y[y.size() - 1] != 777.0f && ++g_failures < 20) std::printf("FAIL wrote past the output\n");
    compare_with_direct(geometry, x, wt, bias ? &b[0] : 0, y, epilogue, "depthwise");
  }
}


// hg_conv_pointwise_depthwise: the 1x1 convolution and its activation (case
// % 3: none, HgClampEpilogue(-0.5, 0.5), relu) computed here in double, the
// depthwise step compared with a direct convolution of that; epilogue 1
// (the lambda, shifted to each block's channels and indices) or 2 (the
// clamp in registers). g = {n, c, h, w, mid, kh, kw, oh, ow, sh, sw, ph, pw,
// dh, dw, block}.
bool check_pointwise_depthwise(Reader& in, const long* g, long scratch_floats, long has_bias, long with_epilogue,
                               bool pixel_major) {
  const long n = g[0], c = g[1], h = g[2], w = g[3], mid = g[4], kh = g[5], kw = g[6], oh = g[7], ow = g[8];
  const long activation = in.value();
  const std::vector<float> x = in.floats(n * c * h * w), w1 = in.floats(mid * c);
  const std::vector<float> packed = in.floats(in.value());
  const std::vector<float> b1 = in.floats(mid), w2 = in.floats(mid * kh * kw);
  const std::vector<float> b2 = has_bias ? in.floats(mid) : std::vector<float>(static_cast<size_t>(mid), 0.0f);
  if (!in.ok) return false;
  std::vector<float> scratch(static_cast<size_t>(scratch_floats + 1), 777.0f);
  std::vector<float> y(static_cast<size_t>(n * mid * oh * ow + 1), 777.0f);
  const auto fused = [](long ch, long idx, float v) {
    const float r = v + channel_add(ch) + residual(idx);
    return r > 0.0f ? r : 0.0f;
  };
  const model::kernels::HgClampEpilogue clamp(-0.3f, 0.4f), act_clamp(-0.5f, 0.5f);
  const model::kernels::HgNoEpilogue none;
  const model::kernels::HgReluEpilogue relu;
#if defined(HG_ROW_LANES) && (defined(HG_SIMD_AVX512) || defined(HG_SIMD_AVX2))
  // The pixel-major kernel reads w2 tap-major, channels rounded up to 16.
  const long taps = kh * kw, ldw = (mid + 15) / 16 * 16;
  std::vector<float> w2t(static_cast<size_t>(taps * ldw), 0.0f);
  for (long ch = 0; ch < mid; ++ch)
    for (long t = 0; t < taps; ++t) w2t[static_cast<size_t>(t * ldw + ch)] = w2[static_cast<size_t>(ch * taps + t)];
#define HG_TEST_PIXELS(ACT, EP)                                                                                    \
  model::kernels::hg_conv_pointwise_depthwise_pixels(&x[0], &packed[0], &b1[0], &w2t[0], &b2[0], &y[0], g, &scratch[0], \
                                                     ACT, EP)
#else
  if (pixel_major) {
    if (++g_failures < 20) std::printf("FAIL no pixel-major pointwise-depthwise kernel on this path\n");
    return true;
  }
#define HG_TEST_PIXELS(ACT, EP) (void)0
#endif
#define HG_TEST_FUSED(ACT, EP)                                                                          \
  pixel_major ? HG_TEST_PIXELS(ACT, EP)                                                                 \
              : model::kernels::hg_conv_pointwise_depthwise(&x[0], &packed[0], &b1[0], &w2[0], &b2[0], &y[0], g, \
                                                            &scratch[0], ACT, EP)
  if (activation == 0 && with_epilogue) HG_TEST_FUSED(none, fused);
  else if (activation == 0) HG_TEST_FUSED(none, clamp);
  else if (activation == 1 && with_epilogue) HG_TEST_FUSED(act_clamp, fused);
  else if (activation == 1) HG_TEST_FUSED(act_clamp, clamp);
  else if (with_epilogue) HG_TEST_FUSED(relu, fused);
  else HG_TEST_FUSED(relu, clamp);
#undef HG_TEST_FUSED
#undef HG_TEST_PIXELS
  ++g_cases;
  if ((y[y.size() - 1] != 777.0f || scratch[scratch.size() - 1] != 777.0f) && ++g_failures < 20)
    std::printf("FAIL pointwise-depthwise wrote past its output or scratch\n");
  std::vector<float> m(static_cast<size_t>(n * mid * h * w));
  for (long in_ = 0; in_ < n; ++in_)
    for (long ch = 0; ch < mid; ++ch)
      for (long p = 0; p < h * w; ++p) {
        double sum = b1[static_cast<size_t>(ch)];
        for (long ic = 0; ic < c; ++ic)
          sum += static_cast<double>(w1[static_cast<size_t>(ch * c + ic)]) * x[static_cast<size_t>((in_ * c + ic) * h * w + p)];
        if (activation == 1) sum = sum < -0.5 ? -0.5 : (sum > 0.5 ? 0.5 : sum);
        if (activation == 2) sum = sum > 0 ? sum : 0;
        m[static_cast<size_t>((in_ * mid + ch) * h * w + p)] = static_cast<float>(sum);
      }
  const long depthwise[16] = {n, mid, h, w, mid, kh, kw, oh, ow, g[9], g[10], g[11], g[12], g[13], g[14], mid};
  // An absolute floor besides: the 1x1 step's rounding (about c * 1e-7 per
  // value of `mid`) is not in the depthwise terms' scale, which is small
  // where the activation zeroed most of them.
  compare_with_direct(depthwise, m, w2, &b2[0], y, with_epilogue ? 1 : 2,
                      pixel_major ? "pixel-major pointwise-depthwise" : "pointwise-depthwise", 1e-4, 1e-6);
  return true;
}

#if defined(HG_ROW_LANES)
// The epilogue hg_conv2d_rows<K, FB> applies in registers in this driver:
// (K + FB) % 3 picks none, the clamp or relu (epilogue 0, 2 or 3); the
// lambda (1), which runs over the stored rows, is the other one each panel
// has. The kernel's epilogue code depends on the epilogue alone, not on K
// or FB, and each instantiation is seconds of compiling.
template <int Kind>
struct RowsInRegisters;
template <>
struct RowsInRegisters<0> {
  enum { kEpilogue = 0 };
  static model::kernels::HgNoEpilogue make() { return model::kernels::HgNoEpilogue(); }
};
template <>
struct RowsInRegisters<1> {
  enum { kEpilogue = 2 };
  static model::kernels::HgClampEpilogue make() { return model::kernels::HgClampEpilogue(-0.3f, 0.4f); }
};
template <>
struct RowsInRegisters<2> {
  enum { kEpilogue = 3 };
  static model::kernels::HgReluEpilogue make() { return model::kernels::HgReluEpilogue(); }
};

// hg_conv2d_rows<K, FB> with epilogue 1 or RowsInRegisters' (compare_with_direct's
// numbers); false for another.
template <int K, int FB>
bool run_rows(const float* x, const float* w, const float* b, float* y, const long* g, long epilogue) {
  typedef RowsInRegisters<(K + FB) % 3> InRegisters;
  if (epilogue == 1)
    model::kernels::hg_conv2d_rows<K, FB>(x, w, b, y, g, [](long ch, long idx, float v) {
      const float r = v + channel_add(ch) + residual(idx);
      return r > 0.0f ? r : 0.0f;
    });
  else if (epilogue == InRegisters::kEpilogue)
    model::kernels::hg_conv2d_rows<K, FB>(x, w, b, y, g, InRegisters::make());
  else
    return false;
  return true;
}

template <int K>
bool run_rows_panel(long fb, const float* x, const float* w, const float* b, float* y, const long* g, long epilogue) {
  // Only the panels rows_cases() makes for this driver's target: each
  // instantiation is seconds of compiling.
  switch (fb) {
    case 1: return run_rows<K, 1>(x, w, b, y, g, epilogue);
    case 2: return run_rows<K, 2>(x, w, b, y, g, epilogue);
#if !defined(HG_TARGET_X86_64_V3)
    case 5: return run_rows<K, 5>(x, w, b, y, g, epilogue);
    case 6: return run_rows<K, 6>(x, w, b, y, g, epilogue);
    case 8: return run_rows<K, 8>(x, w, b, y, g, epilogue);
#endif
    default: return false;
  }
}
#endif

// kind 4: hg_conv2d_rows<K, FB> (FB = block) on x86-64-v4, -v3 and armv8-a drivers;
// false when this driver has no such kernel (or not with this epilogue).
bool run_rows_case(long fb, const float* x, const float* w, const float* b, float* y, const long* g, long epilogue) {
#if defined(HG_ROW_LANES)
  if (g[5] == 3) return run_rows_panel<3>(fb, x, w, b, y, g, epilogue);
  if (g[5] == 5) return run_rows_panel<5>(fb, x, w, b, y, g, epilogue);
#else
  (void)fb, (void)x, (void)w, (void)b, (void)y, (void)g, (void)epilogue;
#endif
  return false;
}

// kind 7: hg_conv2d_filter_lanes<FB, KW> (AVX-512 drivers) with
// epilogue 0 (none), 1 (the lambda) or 2 (the clamp, in registers), for the
// (FB, KW) pairs write_packed_cases makes; false for another.
template <int FB, int KW>
bool run_filter_lanes(const float* x, const float* w, const float* b, float* y, const long* g, long rows, long padded,
                      float* scratch, long epilogue) {
#if defined(HG_SIMD_AVX512)
  if (epilogue == 0)
    model::kernels::hg_conv2d_filter_lanes<FB, KW>(x, w, b, y, g, rows, padded, scratch, model::kernels::HgNoEpilogue());
  else if (epilogue == 1)
    model::kernels::hg_conv2d_filter_lanes<FB, KW>(x, w, b, y, g, rows, padded, scratch, [](long ch, long idx, float v) {
      const float r = v + channel_add(ch) + residual(idx);
      return r > 0.0f ? r : 0.0f;
    });
  else
    model::kernels::hg_conv2d_filter_lanes<FB, KW>(x, w, b, y, g, rows, padded, scratch,
                                                   model::kernels::HgClampEpilogue(-0.3f, 0.4f));
  return true;
#else
  (void)x, (void)w, (void)b, (void)y, (void)g, (void)rows, (void)padded, (void)scratch, (void)epilogue;
  return false;
#endif
}

bool run_filter_lanes_case(long fb, const float* x, const float* w, const float* b, float* y, const long* g,
                           long rows, long padded, float* scratch, long epilogue) {
  const long kw = g[6];
  if (fb == 1 && kw == 3) return run_filter_lanes<1, 3>(x, w, b, y, g, rows, padded, scratch, epilogue);
  if (fb == 2 && kw == 3) return run_filter_lanes<2, 3>(x, w, b, y, g, rows, padded, scratch, epilogue);
  if (fb == 3 && kw == 5) return run_filter_lanes<3, 5>(x, w, b, y, g, rows, padded, scratch, epilogue);
  if (fb == 4 && kw == 7) return run_filter_lanes<4, 7>(x, w, b, y, g, rows, padded, scratch, epilogue);
  return false;
}

// kind 0: hg_conv2d_winograd<4>, 1: hg_conv2d_pixel_gemm, 2:
// hg_conv2d_winograd<2>, 3: hg_conv_pointwise_depthwise, 4: hg_conv2d_rows,
// 5: hg_conv2d_winograd<2, true> (raw filters), 6: hg_conv2d_gemm (im2col
// tiles of `block` pixels), 7: hg_conv2d_filter_lanes, 8: hg_conv_pointwise_depthwise_pixels;
// weights packed by the tool. Returns false when
// the file ends early.
bool check_packed(Reader& in) {
  const long kind = in.value();
  long g[16];
  for (int i = 0; i < 16; ++i) g[i] = in.value();
  const long block = in.value(), scratch_floats = in.value(), has_bias = in.value(), with_epilogue = in.value();
  if (kind == 3 || kind == 8)
    return check_pointwise_depthwise(in, g, scratch_floats, has_bias, with_epilogue, kind == 8);
  const long n = g[0], c = g[1], h = g[2], w = g[3], f = g[4], kh = g[5], kw = g[6], oh = g[7], ow = g[8];
  const std::vector<float> x = in.floats(n * c * h * w), wt = in.floats(f * c * kh * kw);
  const std::vector<float> packed = in.floats(in.value());
  const std::vector<float> b = has_bias ? in.floats(f) : std::vector<float>();
  if (!in.ok) return false;
  std::vector<float> scratch(static_cast<size_t>(scratch_floats + 1));
  std::vector<float> y(static_cast<size_t>(n * f * oh * ow + 1), 777.0f);
  const float* const bias = has_bias ? &b[0] : 0;
  const model::kernels::HgNoEpilogue plain;
  const auto fused = [](long ch, long idx, float v) {
    const float r = v + channel_add(ch) + residual(idx);
    return r > 0.0f ? r : 0.0f;
  };
  if (kind == 4) {
    ++g_cases;
    if (!run_rows_case(block, &x[0], &packed[0], bias, &y[0], g, with_epilogue)) {
      if (++g_failures < 20)
        std::printf("FAIL no row kernel for k%ld with panels of %ld and epilogue %ld\n", kh, block, with_epilogue);
      return true;
    }
    if (y[y.size() - 1] != 777.0f && ++g_failures < 20) std::printf("FAIL rows wrote past the output\n");
    compare_with_direct(g, x, wt, bias, y, static_cast<int>(with_epilogue), "rows");
    return true;
  }
  if (kind == 7) {
    // block: the blocks of 16 filters; the padded input's rows and row length as the generator plans them.
    const long rows = (oh - 1) * g[9] + kh, padded = ((ow + 15) / 16 * 16 - 1) * g[10] + kw;
    // The kernel loads its weight vectors aligned, as generated code places them (64 bytes).
    std::vector<float> aligned_storage(packed.size() + 16);
    float* const weights = &aligned_storage[(16 - reinterpret_cast<size_t>(&aligned_storage[0]) / 4 % 16) % 16];
    for (size_t i = 0; i < packed.size(); ++i) weights[i] = packed[i];
    ++g_cases;
    if (!run_filter_lanes_case(block, &x[0], weights, bias, &y[0], g, rows, padded, &scratch[0], with_epilogue)) {
      if (++g_failures < 20) std::printf("FAIL no filter-lanes kernel for %ld blocks of k%ld\n", block, kw);
      return true;
    }
    if (y[y.size() - 1] != 777.0f && ++g_failures < 20) std::printf("FAIL filter lanes wrote past the output\n");
    compare_with_direct(g, x, wt, bias, y, static_cast<int>(with_epilogue), "filter lanes");
    return true;
  }
  const long u_stride = static_cast<long>(packed.size()) / (kind == 0 ? 36 : 16);
  if (kind == 5 && with_epilogue)
    model::kernels::hg_conv2d_winograd<2, true>(&x[0], &packed[0], 0, bias, &y[0], g, block, &scratch[0], fused);
  else if (kind == 5)
    model::kernels::hg_conv2d_winograd<2, true>(&x[0], &packed[0], 0, bias, &y[0], g, block, &scratch[0], plain);
  else if (kind == 6 && with_epilogue)
    model::kernels::hg_conv2d_gemm(&x[0], &packed[0], 0, bias, &y[0], g, block, &scratch[0], fused);
  else if (kind == 6)
    model::kernels::hg_conv2d_gemm(&x[0], &packed[0], 0, bias, &y[0], g, block, &scratch[0], plain);
  else if (kind == 0 && with_epilogue)
    model::kernels::hg_conv2d_winograd<4>(&x[0], &packed[0], u_stride, bias, &y[0], g, block, &scratch[0], fused);
  else if (kind == 0)
    model::kernels::hg_conv2d_winograd<4>(&x[0], &packed[0], u_stride, bias, &y[0], g, block, &scratch[0], plain);
  else if (kind == 2 && with_epilogue)
    model::kernels::hg_conv2d_winograd<2>(&x[0], &packed[0], u_stride, bias, &y[0], g, block, &scratch[0], fused);
  else if (kind == 2)
    model::kernels::hg_conv2d_winograd<2>(&x[0], &packed[0], u_stride, bias, &y[0], g, block, &scratch[0], plain);
  else if (with_epilogue)
    model::kernels::hg_conv2d_pixel_gemm(&x[0], &packed[0], bias, &y[0], g, &scratch[0], fused);
  else
    model::kernels::hg_conv2d_pixel_gemm(&x[0], &packed[0], bias, &y[0], g, &scratch[0], plain);
  ++g_cases;
  if (y[y.size() - 1] != 777.0f && ++g_failures < 20) std::printf("FAIL kind %ld wrote past the output\n", kind);
  // Winograd with a residual add and relu, the epilogue the generated code
  // passes after a block's last convolution (applied in registers where the
  // kernel can): exactly relu(plain + residual).
  if ((kind == 0 || kind == 2 || kind == 5) && !with_epilogue) {
    std::vector<float> other(y.size() - 1), fused_y(y.size(), 777.0f);
    for (size_t i = 0; i < other.size(); ++i) other[i] = residual(static_cast<long>(i));
    const auto add_relu = model::kernels::hg_add_epilogue(&other[0], model::kernels::HgReluEpilogue());
    if (kind == 0)
      model::kernels::hg_conv2d_winograd<4>(&x[0], &packed[0], u_stride, bias, &fused_y[0], g, block, &scratch[0],
                                            add_relu);
    else if (kind == 5)
      model::kernels::hg_conv2d_winograd<2, true>(&x[0], &packed[0], 0, bias, &fused_y[0], g, block, &scratch[0],
                                                  add_relu);
    else
      model::kernels::hg_conv2d_winograd<2>(&x[0], &packed[0], u_stride, bias, &fused_y[0], g, block, &scratch[0],
                                            add_relu);
    long wrong = 0;
    for (size_t i = 0; i < other.size(); ++i) {
      const float want = y[i] + other[i] > 0.0f ? y[i] + other[i] : 0.0f;
      wrong += fused_y[i] != want;
    }
    if (fused_y[other.size()] != 777.0f) ++wrong;
    if (wrong != 0 && ++g_failures < 20)
      std::printf("FAIL kind %ld with a residual add and relu: %ld values differ\n", kind, wrong);
  }
  // Winograd's transforms lose a few more bits than a direct sum.
  const char* const names[] = {"winograd 4x4",    "pixel-row gemm", "winograd 2x2",
                               "", "", "winograd 2x2 raw filters", "im2col gemm"};
  compare_with_direct(g, x, wt, bias, y, with_epilogue != 0 ? 1 : 0, names[kind],
                      kind == 1 || kind == 6 ? 1e-5 : 5e-5);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2) {
    Reader in = {std::fopen(argv[1], "rb"), true};
    if (!in.f) return 3;
    const long cases = in.value();
    for (long i = 0; i < cases; ++i)
      if (!check_packed(in)) {
        std::printf("FAIL could not read case %ld\n", i);
        return 1;
      }
    std::fclose(in.f);
    std::printf("RESULT cases %ld values %ld failures %ld\n", g_cases, g_values, g_failures);
    return g_failures == 0 && g_cases == cases ? 0 : 1;
  }
  const long sizes[][2] = {{1, 1}, {3, 5}, {7, 7}, {14, 14}, {9, 17}, {16, 16}, {33, 31}, {6, 40}};
  for (const auto& s : sizes)
    for (long k : {1, 2, 3, 5})
      for (long stride = 1; stride <= 3; ++stride)
        for (long pad = 0; pad <= 2; ++pad)
          for (long dil = 1; dil <= 2; ++dil)
            check_depthwise(1, 3, s[0], s[1], k, k, stride, stride, pad, pad, dil, dil, (k + pad) % 2 == 0,
                            static_cast<int>((stride + pad + dil + k) % 3));
  // Batch 2, non-square kernels, strides and padding per axis, larger kernels.
  check_depthwise(2, 5, 11, 19, 3, 3, 1, 1, 1, 1, 1, 1, true, true);
  check_depthwise(2, 4, 12, 21, 3, 3, 2, 2, 1, 1, 1, 1, true, true);
  check_depthwise(1, 2, 10, 23, 3, 2, 2, 1, 0, 2, 1, 3, true, false);
  check_depthwise(1, 2, 13, 30, 7, 7, 1, 2, 3, 3, 1, 1, false, true);
  check_depthwise(1, 2, 5, 70, 1, 9, 1, 1, 0, 4, 1, 1, true, true);
  check_depthwise(1, 1, 4, 4, 3, 3, 1, 1, 5, 5, 1, 1, true, true);  // outputs with no tap inside
  // Rows wide enough for stride 2's pairs of column groups; a last row group
  // whose rows end the plane and the input, its right border read through masks.
  check_depthwise(1, 3, 9, 70, 3, 3, 2, 2, 1, 1, 1, 1, true, 2);
  check_depthwise(1, 2, 11, 75, 5, 5, 2, 2, 2, 2, 1, 1, false, 0);
  check_depthwise(2, 3, 14, 21, 3, 3, 2, 2, 1, 1, 1, 1, true, 2);
  // No padding rows, padding columns: the first row group starts the input, its left border read through masks.
  check_depthwise(1, 2, 9, 20, 3, 3, 1, 1, 0, 1, 1, 1, true, 2);
  // Planes of at most 64 pixels with rows as wide as the input (the flat AVX-512 path), batch 2.
  check_depthwise(2, 5, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, true);
  check_depthwise(2, 3, 8, 8, 5, 5, 1, 1, 2, 2, 1, 1, false, true);
  check_depthwise(1, 4, 9, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, false);
  // The clamp applied in registers: rows of 16 and 8 lanes, stride 1 and 2,
  // the flat path. (Relu takes the same path, HgVectorEpilogue; its vector
  // form is checked by the row kernels and the GEMM test.)
  check_depthwise(2, 3, 20, 37, 3, 3, 1, 1, 1, 1, 1, 1, true, 2);
  check_depthwise(1, 3, 23, 41, 3, 3, 2, 2, 1, 1, 1, 1, true, 2);
  check_depthwise(1, 3, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, true, 2);
  check_depthwise(2, 3, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, false, 2);
  check_depthwise(1, 3, 8, 8, 5, 5, 1, 1, 2, 2, 1, 1, true, 2);
  std::printf("RESULT cases %ld values %ld failures %ld\n", g_cases, g_values, g_failures);
  return g_failures == 0 && g_cases > 0 ? 0 : 1;
}
)DRV";

// The kernel and the templates it needs (first-line `// needs:` lists and
// the GEMM SIMD helpers), in dependency order, as one text.
void add_kernel(const std::string& name, std::set<std::string>& seen, std::string& text) {
  if (!seen.insert(name).second) return;
  const std::string& body = template_text("kernels/" + name);
  const std::string prefix = "// needs:";
  if (body.compare(0, prefix.size(), prefix) == 0) {
    std::istringstream needs(body.substr(prefix.size(), body.find('\n') - prefix.size()));
    for (std::string need; needs >> need;) add_kernel(need, seen, text);
  }
  text += body + "\n";
}

struct PackedCase {
  long kind;  // 0 Winograd F(4x4, 3x3), 1 pixel-row GEMM, 2 Winograd F(2x2, 3x3), 3 pointwise-depthwise, 4 rows,
              // 5 Winograd F(2x2, 3x3) on raw filters, 6 im2col GEMM, 7 filters in the vector lanes,
              // 8 pixel-major pointwise-depthwise
  long n, c, h, w, f, k, stride, pad, block;  // kind 3: f the 1x1's filters, block in GEMM row panels;
                                              // kind 4: block the filters per panel; kind 6: pixels per tile
};

// Row-kernel cases (kind 4, x86-64-v4, -v3 and armv8-a): 3x3 and 5x5, padding
// 0..2, maps narrower than 4, 8 and 16 and wider (masked tails), panels of 1, 2,
// 5, 6 and 8 filters on AVX-512 and NEON and of 1 and 2 on AVX2 (`avx2`), as the generator
// makes them, with a last panel partly empty (4 filters in panels of 2 runs
// 4 rows at a time on AVX-512), an odd output height, batch 2 (LeNet's
// second layer), 40 channels over 19 rows.
std::vector<PackedCase> rows_cases(bool avx2) {
  std::vector<PackedCase> cases;
  const long sizes[][2] = {{5, 5}, {7, 9}, {12, 12}, {11, 20}, {28, 28}, {4, 37}};
  const long avx512_panels[][2] = {{1, 1}, {4, 2}, {6, 6}, {9, 5}, {15, 8}};  // filters, panel
  const long avx2_panels[][2] = {{1, 1}, {4, 2}, {3, 2}, {9, 2}, {15, 2}};
  for (const auto& s : sizes)
    for (long k : {3, 5})
      for (long pad = 0; pad <= 2; ++pad)
        for (const auto& fp : avx2 ? avx2_panels : avx512_panels)
          if (s[0] + 2 * pad >= k && s[1] + 2 * pad >= k)
            cases.push_back({4, 1, fp[0] % 3 + 1, s[0], s[1], fp[0], k, 1, pad, fp[1]});
  const long most = avx2 ? 2 : 8;
  cases.push_back({4, 2, 6, 12, 12, 16, 5, 1, 0, most});
  cases.push_back({4, 2, 3, 9, 13, 5, 3, 1, 1, avx2 ? 2 : 5});
  // More channels and rows than the small nets': bands of 8 rows and a short last one.
  cases.push_back({4, 1, 40, 19, 33, 15, 3, 1, 1, most});
  cases.push_back({4, 1, 12, 21, 20, 16, 5, 1, 2, most});
  return cases;
}

// The epilogue the driver's hg_conv2d_rows<K, FB> applies in registers
// (RowsInRegisters): none, the clamp or relu by (K + FB) % 3.
long rows_register_epilogue(long k, long fb) {
  static const long kEpilogues[] = {0, 2, 3};
  return kEpilogues[(k + fb) % 3];
}

// A pointwise-depthwise case: kind 3, the 1x1 weights packed in the
// target's row panels, blocks of `p.block` panels; kind 8 (pixel-major),
// W1^T in column panels nr wide, blocks of `p.block` channels.
void write_pointwise_depthwise_case(std::ofstream& out, const PackedCase& p, long nr, long mr, long index,
                                    SeededFloats& random) {
  const bool pixels = p.kind == 8;
  const long oh = (p.h + 2 * p.pad - p.k) / p.stride + 1, ow = (p.w + 2 * p.pad - p.k) / p.stride + 1;
  const long block = pixels ? p.block : p.block * mr;
  const long geometry[16] = {p.n, p.c, p.h, p.w, p.f, p.k, p.k, oh, ow, p.stride, p.stride, p.pad, p.pad, 1, 1, block};
  const std::vector<float> x = random(p.n * p.c * p.h * p.w), w1 = random(p.f * p.c);
  const std::vector<float> packed =
      pixels ? pack_w_transposed_panels(w1.data(), p.f, p.c, nr) : pack_a_panels(w1.data(), p.f, p.c, mr);
  const bool has_bias = index % 3 != 2, with_epilogue = index % 2 == 0;
  put(out, p.kind);
  for (long g : geometry) put(out, g);
  const long scratch = pixels ? p.h * p.w * (p.c + block) : std::min(block, p.f) * p.h * p.w;
  for (long v : {p.block, scratch, static_cast<long>(has_bias), static_cast<long>(with_epilogue), index % 3}) put(out, v);
  put(out, x);
  put(out, w1);
  put(out, static_cast<long>(packed.size()));
  put(out, packed);
  put(out, random(p.f));
  put(out, random(p.f * p.k * p.k));
  if (has_bias) put(out, random(p.f));
}

// Winograd (3x3, stride 1; 4x4 and 2x2 tiles): partial tiles, padding 0..2,
// channels not a multiple of 16, blocks that do not divide the tiles, batch 2. Pixel-row
// GEMM: 1x1 and strided 3x3, filters not a multiple of the panel width.
// Pointwise-depthwise: several blocks and a last one shorter than a panel,
// stride 2, batch 2, 5x5, a 7x7 map (the flat AVX-512 path), one block.
void write_packed_cases(const std::string& path, const std::string& target) {
  const long nr = find_target(target).gemm_nr, mr = find_target(target).gemm_mr;
  std::vector<PackedCase> cases = {
      {0, 1, 32, 8, 8, 32, 3, 1, 1, 4},
      {0, 1, 33, 9, 6, 40, 3, 1, 1, 6},
      {0, 2, 17, 7, 11, 19, 3, 1, 0, 5},
      {0, 1, 48, 5, 5, 32, 3, 1, 2, 1},
      {0, 1, 16, 13, 4, 48, 3, 1, 1, 12},
      {0, 2, 64, 6, 6, 64, 3, 1, 1, 2},
      {0, 1, 3, 3, 3, 5, 3, 1, 1, 1},
      {1, 1, 80, 7, 7, 64, 1, 1, 0, 0},
      {1, 2, 8, 13, 13, 70, 3, 2, 1, 0},
      {1, 1, 20, 9, 5, 33, 3, 1, 1, 0},
      {1, 1, 5, 4, 4, 3, 1, 1, 0, 0},
      {2, 1, 32, 7, 7, 32, 3, 1, 1, 16},
      {2, 2, 17, 9, 6, 19, 3, 1, 0, 5},
      {2, 1, 40, 5, 5, 48, 3, 1, 2, 6},
      {2, 1, 3, 3, 3, 5, 3, 1, 1, 1},
      {3, 2, 5, 9, 9, 3 * mr + 3, 3, 1, 1, 2},
      {3, 1, 3, 12, 17, 20, 3, 2, 1, 1},
      {3, 1, 8, 7, 7, 24, 3, 1, 1, 1},
      {3, 1, 4, 10, 10, mr + 1, 5, 1, 2, 1},
      {3, 2, 6, 11, 13, 2 * mr, 3, 2, 1, 8},
      {3, 1, 5, 16, 16, 32, 3, 1, 1, 3},
      // Winograd rows wider than a run of tiles (64 output pixels on AVX-512), blocks ending mid-row.
      {0, 1, 20, 9, 70, 18, 3, 1, 1, 13},
      {2, 1, 18, 5, 71, 20, 3, 1, 0, 37},
      // Raw filters: channels past one block of 64 and not a multiple of 16,
      // filters not a whole block of panels, tiles not whole row panels
      // (15, 16, 17 in a pass), passes of 10, batch 2, padding 0..2.
      {5, 1, 70, 9, 5, 52, 3, 1, 1, 15},
      {5, 2, 32, 7, 7, 40, 3, 1, 1, 16},
      {5, 1, 130, 8, 9, 97, 3, 1, 0, 17},
      {5, 1, 17, 12, 12, 19, 3, 1, 1, 10},
      {5, 1, 33, 5, 5, 64, 3, 1, 2, 9},
      // im2col: stride 1, 2 and 3, padding 0..3, rows wider than a vector,
      // tiles that end mid-row, a whole-image tile, 1x1 at stride 2.
      {6, 1, 3, 29, 33, 20, 3, 2, 1, 64},
      {6, 2, 8, 21, 40, 19, 3, 2, 1, 48},
      {6, 1, 5, 13, 70, 9, 3, 1, 2, 1000},
      {6, 1, 4, 20, 37, 17, 5, 3, 2, 32},
      {6, 1, 6, 15, 15, 8, 1, 2, 0, 32},
      {6, 1, 7, 9, 9, 10, 3, 2, 0, 1000},
      {6, 1, 3, 7, 31, 5, 7, 2, 3, 50},
      {6, 1, 2, 8, 64, 16, 3, 1, 1, 100}};
  if (target == "x86-64-v4" || target == "x86-64-v3" || target == "armv8-a") {
    const std::vector<PackedCase> rows = rows_cases(target == "x86-64-v3");
    cases.insert(cases.end(), rows.begin(), rows.end());
  }
  // Filters in the vector lanes (block: blocks of 16 filters): a MobileNet
  // stem with a short last run of pixels, a ResNet 7x7 stem at batch 2, 5
  // filters (part of one block), 40 filters at stride 3, 24 at stride 1
  // without padding.
  // Pixel-major pointwise-depthwise (block: channels, a multiple of 16):
  // several blocks and a last one part full, channels not a multiple of
  // the lanes, batch 2, stride 2, 5x5 and 7x7 (kernel size at run time),
  // padding 0..3, a map whose band holds one row.
  if (target == "x86-64-v4" || target == "x86-64-v3")
    cases.insert(cases.end(), {{8, 1, 16, 14, 14, 96, 3, 1, 1, 32},
                               {8, 2, 24, 7, 7, 40, 3, 1, 1, 48},
                               {8, 1, 8, 14, 14, 50, 3, 2, 1, 32},
                               {8, 1, 5, 9, 11, 20, 5, 1, 2, 16},
                               {8, 1, 6, 6, 6, 33, 3, 1, 0, 48},
                               {8, 1, 4, 8, 8, 16, 7, 1, 3, 16},
                               {8, 1, 3, 3, 200, 24, 3, 1, 1, 32}});
  if (target == "x86-64-v4")
    cases.insert(cases.end(), {{7, 1, 3, 17, 23, 32, 3, 2, 1, 2},
                               {7, 2, 3, 29, 40, 64, 7, 2, 3, 4},
                               {7, 1, 1, 9, 37, 5, 3, 1, 1, 1},
                               {7, 1, 4, 12, 20, 40, 5, 3, 2, 3},
                               {7, 1, 2, 8, 33, 24, 3, 1, 0, 2},
                               {7, 1, 3, 10, 19, 32, 3, 2, 1, 2}});
  std::ofstream out(path, std::ios::binary);
  SeededFloats random(4321);
  std::map<std::pair<long, long>, long> rows_seen;  // rows cases so far per (K, FB)
  put(out, static_cast<long>(cases.size()));
  for (size_t i = 0; i < cases.size(); ++i) {
    const PackedCase& p = cases[i];
    if (p.kind == 3 || p.kind == 8) {
      write_pointwise_depthwise_case(out, p, nr, mr, static_cast<long>(i), random);
      continue;
    }
    const long oh = (p.h + 2 * p.pad - p.k) / p.stride + 1, ow = (p.w + 2 * p.pad - p.k) / p.stride + 1;
    const long geometry[16] = {p.n, p.c, p.h, p.w, p.f, p.k, p.k, oh, ow, p.stride, p.stride, p.pad, p.pad, 1, 1, 1};
    const std::vector<float> x = random(p.n * p.c * p.h * p.w), w = random(p.f * p.c * p.k * p.k);
    const std::vector<float> packed =
        p.kind == 7                  ? pack_w_transposed_panels(w.data(), p.f, p.c * p.k * p.k, 16 * p.block)
        : p.kind == 4                ? pack_a_panels(w.data(), p.f, p.c * p.k * p.k, p.block)
        : p.kind == 6                ? pack_a_panels(w.data(), p.f, p.c * p.k * p.k, mr)
        : p.kind == 1 || p.kind == 5 ? pack_w_transposed_panels(w.data(), p.f, p.c * p.k * p.k, nr)
                                     : pack_winograd(w.data(), p.f, p.c, nr, p.kind == 0 ? 4 : 2);
    // Kind 5 as gen/ops/convolution.cpp plans it.
    const long raw_scratch = 16 * ((p.block + mr - 1) / mr * mr * p.c + p.block * p.f + 4 * (64 * 3 * nr + 16));
    const long lanes_scratch = p.c * ((oh - 1) * p.stride + p.k) * (((ow + 15) / 16 * 16 - 1) * p.stride + p.k);
    const long scratch = p.kind == 7   ? lanes_scratch
                         : p.kind == 4 ? 0
                         : p.kind == 1 ? oh * ow * (p.c * p.k * p.k + p.f)
                         : p.kind == 5 ? raw_scratch
                         : p.kind == 6 ? p.c * p.k * p.k * std::min(p.block, oh * ow)
                                       : (p.kind == 0 ? 36 : 16) * p.block * (p.c + p.f);
    const bool has_bias = i % 3 != 2;
    // Rows: each panel's cases take the lambda and its epilogue in registers
    // in turn (compare_with_direct's numbers); the others: with or without the lambda.
    long epilogue = static_cast<long>(i % 2 == 0);
    if (p.kind == 4) epilogue = rows_seen[{p.k, p.block}]++ % 2 == 0 ? 1 : rows_register_epilogue(p.k, p.block);
    if (p.kind == 7) epilogue = static_cast<long>(i % 3);
    put(out, p.kind);
    for (long g : geometry) put(out, g);
    for (long v : {p.block, scratch, static_cast<long>(has_bias), epilogue}) put(out, v);
    put(out, x);
    put(out, w);
    put(out, static_cast<long>(packed.size()));
    put(out, packed);
    if (has_bias) put(out, random(p.f));
  }
}

// Builds the driver with `cxx` and `flags`, runs it (through `runner`, e.g.
// an emulator, when not empty) on the geometry sweep and on cases packed for
// `target`.
void check_conv_kernels(const std::string& flags, const std::string& target, const std::string& cxx = HYBGEN_CXX,
                        const std::string& runner = "") {
  TempDir dir("hybgen-conv-test");
  const std::string d = dir.path() + "/";
  std::set<std::string> seen;
  std::string text;
  for (const char* k :
       {"epilogue", "gemm", "conv2d_depthwise", "conv2d_winograd", "conv2d_pixel_gemm", "conv2d_rows",
        "conv_pointwise_depthwise", "conv2d_gemm", "conv2d_filter_lanes", "conv_pointwise_depthwise_pixels"})
    add_kernel(k, seen, text);
  testing::write_kernel_driver(dir.path(), text, kConvDriver);
  auto r = testing::compile_driver(dir.path(), cxx, flags);
  ASSERT_EQ(r.exit_code, 0) << flags << "\n" << r.output;
  const std::string run = testing::driver_command(dir.path(), runner);
  r = run_command(run);
  EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.output;
  EXPECT_NE(r.output.find(" failures 0"), std::string::npos) << r.output;
  write_packed_cases(d + "cases.bin", target);
  r = run_command(run + " " + quoted(d + "cases.bin"));
  EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.output;
  EXPECT_NE(r.output.find(" failures 0"), std::string::npos) << r.output;
}

TEST(ConvKernel, NativeMatchesReference) {
  const std::string repeats = testing::native_repeats_an_explicit_path();
  if (!repeats.empty()) GTEST_SKIP() << repeats;
  check_conv_kernels("-O1 -march=native", native_target());
}

TEST(ConvKernel, PortablePathMatchesReference) {
#if defined(__x86_64__)
  check_conv_kernels("-O1 -march=x86-64", "generic");
#else
  GTEST_SKIP() << "the portable path is forced with -march=x86-64 on x86-64 hosts only";
#endif
}

TEST(ConvKernel, Avx2PathMatchesReference) {
  if (!host_supports("avx2")) GTEST_SKIP() << "this host cannot run AVX2 code";
  check_conv_kernels("-O1 -march=x86-64-v3", "x86-64-v3");
}

TEST(ConvKernel, Avx512PathMatchesReference) {
  if (!host_supports("avx512")) GTEST_SKIP() << "this host cannot run AVX-512 code";
  check_conv_kernels("-O1 -march=x86-64-v4", "x86-64-v4");
}

// The NEON paths, where an AArch64 cross compiler and qemu are installed.
TEST(ConvKernel, NeonPathMatchesReferenceUnderQemu) {
  if (!on_path("aarch64-linux-gnu-g++") || !on_path("qemu-aarch64"))
    GTEST_SKIP() << "needs aarch64-linux-gnu-g++ and qemu-aarch64";
  // The zoo test's armv8-a cases run generated NEON code built at -O2.
  check_conv_kernels("-O1 -static", "armv8-a", "aarch64-linux-gnu-g++", "qemu-aarch64");
}

}  // namespace
}  // namespace hybgen
