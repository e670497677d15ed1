// The convolution kernels of templates/kernels/conv2d_*.inc against a
// double-precision direct convolution, on many geometries: odd sizes,
// widths around the vector widths, padding 0..2, stride 1..3, dilation,
// batch 2, with and without bias and a fused epilogue (per-channel add,
// residual read at the output index, ReLU). A C++11 driver including the
// kernel text inside a namespace (as generated code does) is compiled with
// the strict flags for this machine, for baseline x86-64 (the portable path)
// and for x86-64-v3 (AVX2) where the host runs it.
// |got - expected| <= 1e-5 * (sum of |terms|).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "emit/templates.h"
#include "io/file_util.h"
#include "run_command.h"

namespace hybgen {
namespace {

using testing::quoted;
using testing::run_command;

const char* kDriver = R"DRV(#include <cmath>
#include <cstdio>
#include <vector>
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace model {
namespace kernels {
#include "kernels.inc"
}  // namespace kernels
}  // namespace model

namespace {

unsigned g_seed = 12345;
float random_value() {
  g_seed = g_seed * 1103515245u + 12345u;
  return static_cast<float>((g_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}
float channel_add(long ch) { return static_cast<float>((ch * 7) % 11 - 5) * 0.125f; }
float residual(long idx) { return static_cast<float>((idx * 13) % 17 - 8) * 0.0625f; }

long g_cases = 0, g_values = 0, g_failures = 0;

// geometry = {n, c, h, w, f, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, groups}
void check_depthwise(long n, long c, long h, long w, long kh, long kw, long sh, long sw, long ph, long pw, long dh,
                     long dw, bool bias, bool with_epilogue) {
  const long oh = (h + 2 * ph - (dh * (kh - 1) + 1)) / sh + 1, ow = (w + 2 * pw - (dw * (kw - 1) + 1)) / sw + 1;
  if (oh <= 0 || ow <= 0) return;
  const long geometry[16] = {n, c, h, w, c, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, c};
  std::vector<float> x(static_cast<size_t>(n * c * h * w)), wt(static_cast<size_t>(c * kh * kw)), b(c);
  for (size_t i = 0; i < x.size(); ++i) x[i] = random_value();
  for (size_t i = 0; i < wt.size(); ++i) wt[i] = random_value();
  for (long i = 0; i < c; ++i) b[i] = random_value();
  // A guard value after the output catches writes past its end.
  std::vector<float> y(static_cast<size_t>(n * c * oh * ow + 1), 777.0f);
  if (with_epilogue)
    model::kernels::hg_conv2d_depthwise(&x[0], &wt[0], bias ? &b[0] : 0, &y[0], geometry,
                                        [](long ch, long idx, float v) {
                                          const float r = v + channel_add(ch) + residual(idx);
                                          return r > 0.0f ? r : 0.0f;
                                        });
  else
    model::kernels::hg_conv2d_depthwise(&x[0], &wt[0], bias ? &b[0] : 0, &y[0], geometry,
                                        model::kernels::HgNoEpilogue());
  ++g_cases;
  if (y[y.size() - 1] != 777.0f && ++g_failures < 20) std::printf("FAIL wrote past the output\n");
  for (long in = 0; in < n; ++in)
    for (long ch = 0; ch < c; ++ch)
      for (long oy = 0; oy < oh; ++oy)
        for (long ox = 0; ox < ow; ++ox) {
          double sum = bias ? b[ch] : 0.0, scale = std::fabs(sum);
          for (long ky = 0; ky < kh; ++ky)
            for (long kx = 0; kx < kw; ++kx) {
              const long iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              const double t = static_cast<double>(x[((in * c + ch) * h + iy) * w + ix]) * wt[(ch * kh + ky) * kw + kx];
              sum += t;
              scale += std::fabs(t);
            }
          const long idx = ((in * c + ch) * oh + oy) * ow + ox;
          if (with_epilogue) {
            sum += static_cast<double>(channel_add(ch)) + residual(idx);
            scale += std::fabs(channel_add(ch)) + std::fabs(residual(idx));
            if (sum < 0) sum = 0;
          }
          const double got = y[static_cast<size_t>(idx)];
          ++g_values;
          if (!(std::fabs(got - sum) <= 1e-5 * scale + 1e-30) && ++g_failures < 20)
            std::printf("FAIL depthwise n%ld c%ld %ldx%ld k%ldx%ld s%ld,%ld p%ld,%ld d%ld,%ld: y[%ld] = %.9g, expected %.9g\n",
                        n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, idx, got, sum);
        }
}

}  // namespace

int main() {
  const long sizes[][2] = {{1, 1}, {3, 5}, {7, 7}, {14, 14}, {9, 17}, {16, 16}, {33, 31}, {6, 40}};
  for (const auto& s : sizes)
    for (long k : {1, 2, 3, 5})
      for (long stride = 1; stride <= 3; ++stride)
        for (long pad = 0; pad <= 2; ++pad)
          for (long dil = 1; dil <= 2; ++dil)
            check_depthwise(1, 3, s[0], s[1], k, k, stride, stride, pad, pad, dil, dil, (k + pad) % 2 == 0,
                            (stride + pad + dil) % 2 == 1);
  // Batch 2, non-square kernels, strides and padding per axis, larger kernels.
  check_depthwise(2, 5, 11, 19, 3, 3, 1, 1, 1, 1, 1, 1, true, true);
  check_depthwise(2, 4, 12, 21, 3, 3, 2, 2, 1, 1, 1, 1, true, true);
  check_depthwise(1, 2, 10, 23, 3, 2, 2, 1, 0, 2, 1, 3, true, false);
  check_depthwise(1, 2, 13, 30, 7, 7, 1, 2, 3, 3, 1, 1, false, true);
  check_depthwise(1, 2, 5, 70, 1, 9, 1, 1, 0, 4, 1, 1, true, true);
  check_depthwise(1, 1, 4, 4, 3, 3, 1, 1, 5, 5, 1, 1, true, true);  // outputs with no tap inside
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

void check_kernels(const std::string& flags) {
  TempDir dir("hybgen-conv-test");
  const std::string d = dir.path() + "/";
  std::set<std::string> seen;
  std::string text;
  for (const char* k : {"epilogue", "gemm", "conv2d_depthwise"}) add_kernel(k, seen, text);
  std::ofstream(d + "kernels.inc") << text;
  std::ofstream(d + "main.cpp") << kDriver;
  const std::string all_flags =
      " -std=c++11 " + flags + " -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti -I" + quoted(dir.path());
  auto r = run_command(quoted(HYBGEN_CXX) + all_flags + " " + quoted(d + "main.cpp") + " -o " + quoted(d + "driver"));
  ASSERT_EQ(r.exit_code, 0) << flags << "\n" << r.output;
  r = run_command(quoted(d + "driver"));
  EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.output;
  EXPECT_NE(r.output.find(" failures 0"), std::string::npos) << r.output;
}

bool host_supports(const char* feature) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return std::string(feature) == "avx2" ? __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                                        : __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#else
  (void)feature;
  return false;
#endif
}

TEST(ConvKernel, NativeMatchesReference) { check_kernels("-O2 -march=native"); }

TEST(ConvKernel, PortablePathMatchesReference) {
#if defined(__x86_64__)
  check_kernels("-O2 -march=x86-64");
#else
  GTEST_SKIP() << "the portable path is forced with -march=x86-64 on x86-64 hosts only";
#endif
}

TEST(ConvKernel, Avx2PathMatchesReference) {
  if (!host_supports("avx2")) GTEST_SKIP() << "this host cannot run AVX2 code";
  check_kernels("-O2 -march=x86-64-v3");
}

TEST(ConvKernel, Avx512PathMatchesReference) {
  if (!host_supports("avx512")) GTEST_SKIP() << "this host cannot run AVX-512 code";
  check_kernels("-O2 -march=x86-64-v4");
}

}  // namespace
}  // namespace hybgen
