// hg_pool2d (templates/kernels/pool2d.inc) against a plain window-by-window
// pooling written here, on a sweep of geometries: maps from 1x1 to 55x55
// (rows narrower and wider than 8 and 16 lanes), windows 1 to 5 and
// rectangular ones, strides 1 to 3 (each axis its own), padding, MXNet's
// "valid" and "full" output sizes (windows past the padded edge), max, avg
// with and without the padding counted, sum, and global pooling. A C++11
// driver including the kernel text inside a namespace (as generated code
// does) is compiled with the strict flags for this machine, for baseline
// x86-64 (the portable path) and for x86-64-v3 and -v4 where the host runs
// them: the row kernels (simd.inc's row-lane types), the compiler-specialised rows and
// the general path all run. Max must match exactly; avg and sum within
// 1e-6 of the sum of the window's magnitudes (the row kernels add the rows
// of a window first). Nothing may be written past the output.
#include <gtest/gtest.h>

#include <fstream>

#include "emit/templates.h"
#include "io/file_util.h"
#include "kernel_driver_support.h"
#include "run_command.h"

namespace hybgen {
namespace {

using testing::host_supports;
using testing::quoted;
using testing::run_command;

// The driver after kKernelDriverPrelude: its cases and main().
const char* kPoolDriver = R"DRV(namespace {

long g_cases = 0, g_failures = 0;

// One output by MXNet's rule: the window clipped to the padded extent
// (avg's divisor with count_include_pad), then to the input; max of the
// values, or their sum in double.
double expected(const float* plane, const long* g, long oy, long ox, double* magnitude) {
  const long h = g[1], w = g[2], kh = g[3], kw = g[4], sh = g[7], sw = g[8], ph = g[9], pw = g[10];
  const long type = g[11], include_pad = g[12];
  long y0 = oy * sh - ph, x0 = ox * sw - pw;
  long y1 = y0 + kh < h + ph ? y0 + kh : h + ph, x1 = x0 + kw < w + pw ? x0 + kw : w + pw;
  const long padded = (y1 - y0) * (x1 - x0);
  y0 = y0 < 0 ? 0 : y0, x0 = x0 < 0 ? 0 : x0, y1 = y1 > h ? h : y1, x1 = x1 > w ? w : x1;
  double acc = type == 0 ? static_cast<double>(-3.402823466e+38f) : 0.0;
  *magnitude = 0.0;
  for (long y = y0; y < y1; ++y)
    for (long x = x0; x < x1; ++x) {
      const double v = plane[y * w + x];
      acc = type == 0 ? (v > acc ? v : acc) : acc + v;
      *magnitude += std::fabs(v);
    }
  if (type != 1) return acc;
  const long count = include_pad ? padded : (y1 > y0 && x1 > x0 ? (y1 - y0) * (x1 - x0) : 0);
  *magnitude = count > 0 ? *magnitude / count : 0.0;
  return count > 0 ? acc / count : 0.0;
}

long out_size(long in, long k, long p, long s, bool full) {
  const long span = in + 2 * p - k;
  return (full ? (span + s - 1) / s : span / s) + 1;
}

void check(long planes, long h, long w, long kh, long kw, long sh, long sw, long ph, long pw, long type,
           long include_pad, bool full) {
  if (kh > h + 2 * ph || kw > w + 2 * pw) return;
  const long oh = out_size(h, kh, ph, sh, full), ow = out_size(w, kw, pw, sw, full);
  const long g[15] = {planes, h, w, kh, kw, oh, ow, sh, sw, ph, pw, type, include_pad, ph, pw};
  std::vector<float> x(static_cast<size_t>(planes * h * w));
  for (float& v : x) v = random_value();
  std::vector<float> y(static_cast<size_t>(planes * oh * ow + 1), 777.0f);
  model::kernels::hg_pool2d(&x[0], &y[0], g);
  ++g_cases;
  if (y.back() != 777.0f && ++g_failures < 20) std::printf("FAIL wrote past the output\n");
  for (long p = 0; p < planes; ++p)
    for (long oy = 0; oy < oh; ++oy)
      for (long ox = 0; ox < ow; ++ox) {
        double magnitude = 0.0;
        const double want = expected(&x[p * h * w], g, oy, ox, &magnitude);
        const float got = y[(p * oh + oy) * ow + ox];
        const bool ok = type == 0 ? static_cast<double>(got) == want
                                  : std::fabs(got - want) <= 1e-6 * magnitude + 1e-30;
        if (!ok && ++g_failures < 20)
          std::printf("FAIL %ldx%ld k%ldx%ld s%ldx%ld p%ldx%ld type %ld pad %ld %s at (%ld, %ld, %ld): %.9g, "
                      "want %.9g\n",
                      h, w, kh, kw, sh, sw, ph, pw, type, include_pad, full ? "full" : "valid", p, oy, ox, got, want);
      }
}

}  // namespace

int main() {
  const long sizes[][2] = {{1, 1}, {3, 5}, {7, 7}, {8, 8}, {13, 13}, {17, 17}, {9, 33}, {27, 27}, {24, 40}, {55, 55}};
  for (const auto& s : sizes)
    for (long k : {1, 2, 3, 5})
      for (long stride = 1; stride <= 3; ++stride)
        for (long pad = 0; pad <= 2 && pad < k; ++pad)
          for (long type = 0; type < 3; ++type)
            for (bool full : {false, true}) {
              check(3, s[0], s[1], k, k, stride, stride, pad, pad, type, 1, full);
              if (type == 1) check(3, s[0], s[1], k, k, stride, stride, pad, pad, type, 0, full);
            }
  // Rectangular windows, strides and padding per axis; a window of 7 rows.
  for (long type = 0; type < 3; ++type) {
    check(2, 12, 21, 3, 1, 1, 2, 1, 0, type, 1, false);
    check(2, 12, 21, 1, 3, 2, 1, 0, 1, type, 0, true);
    check(2, 19, 37, 2, 3, 1, 2, 1, 1, type, 0, true);
    check(1, 20, 18, 7, 7, 1, 1, 3, 3, type, 1, false);
  }
  // Global pooling: one window over the whole plane (longer than 16 values and shorter).
  for (long type = 0; type < 3; ++type) {
    check(4, 7, 7, 7, 7, 1, 1, 0, 0, type, 1, false);
    check(3, 2, 3, 2, 3, 1, 1, 0, 0, type, 1, false);
  }
  std::printf("RESULT cases %ld failures %ld\n", g_cases, g_failures);
  return g_failures == 0 && g_cases > 0 ? 0 : 1;
}
)DRV";

void check_pooling(const std::string& flags, const std::string& cxx = HYBGEN_CXX, const std::string& runner = "") {
  TempDir dir("hybgen-pool-test");
  const std::string d = dir.path() + "/";
  std::string text;
  for (const std::string& kernel : kernel_templates_with_needs("pool2d"))
    text += template_text("kernels/" + kernel) + "\n";
  testing::write_kernel_driver(dir.path(), text, kPoolDriver);
  auto r = testing::compile_driver(dir.path(), cxx, flags);
  ASSERT_EQ(r.exit_code, 0) << flags << "\n" << r.output;
  r = run_command(testing::driver_command(dir.path(), runner));
  EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.output;
  EXPECT_NE(r.output.find(" failures 0"), std::string::npos) << r.output;
}

TEST(PoolKernel, NativeMatchesReference) {
  const std::string repeats = testing::native_repeats_an_explicit_path();
  if (!repeats.empty()) GTEST_SKIP() << repeats;
  check_pooling("-O1 -march=native");
}

TEST(PoolKernel, PortablePathMatchesReference) {
#if defined(__x86_64__)
  check_pooling("-O1 -march=x86-64");
#else
  GTEST_SKIP() << "the portable path is forced with -march=x86-64 on x86-64 hosts only";
#endif
}

TEST(PoolKernel, Avx2PathMatchesReference) {
  if (!host_supports("avx2")) GTEST_SKIP() << "this host cannot run AVX2 code";
  check_pooling("-O1 -march=x86-64-v3");
}

TEST(PoolKernel, Avx512PathMatchesReference) {
  if (!host_supports("avx512")) GTEST_SKIP() << "this host cannot run AVX-512 code";
  check_pooling("-O1 -march=x86-64-v4");
}

TEST(PoolKernel, NeonPathMatchesReferenceUnderQemu) {
  if (!on_path("aarch64-linux-gnu-g++") || !on_path("qemu-aarch64"))
    GTEST_SKIP() << "needs aarch64-linux-gnu-g++ and qemu-aarch64";
  check_pooling("-O1 -static", "aarch64-linux-gnu-g++", "qemu-aarch64");
}

}  // namespace
}  // namespace hybgen
