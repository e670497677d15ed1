// templates/kernels/rounding.inc (hg_floor, hg_ceil, hg_trunc, hg_round,
// hg_mxnet_rint): a C++11 driver including it inside a namespace (as
// generated code does) is compiled with the strict flags at -O3 for the
// portable baseline and, where the host has AVX2, for x86-64-v3; through
// loops the compiler vectorises, it rounds a sweep of float bit patterns
// (every 1021st, both signs) and the special values, and every result must
// be bit for bit std::'s (MXNet's rule for rint), the sign of zero included.
#include <gtest/gtest.h>

#include "kernel_driver_support.h"

namespace hybgen {
namespace {

const char* kRoundingDriver = R"DRV(namespace {

using namespace model::kernels;

float mxnet_rint(float x) {
  const float f = std::floor(x), c = std::ceil(x);
  return x - f <= c - x ? f : c;
}

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

bool same(float a, float b) { return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b)); }

// Separate loops over arrays, as a fused elementwise kernel runs them.
void apply_all(const float* x, float* out, long n) {
  for (long i = 0; i < n; ++i) out[i] = hg_floor(x[i]);
  for (long i = 0; i < n; ++i) out[n + i] = hg_ceil(x[i]);
  for (long i = 0; i < n; ++i) out[2 * n + i] = hg_trunc(x[i]);
  for (long i = 0; i < n; ++i) out[3 * n + i] = hg_round(x[i]);
  for (long i = 0; i < n; ++i) out[4 * n + i] = hg_mxnet_rint(x[i]);
}

}  // namespace

int main() {
  std::vector<float> x = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.49999997f, -0.49999997f,
                          8388607.5f, -8388607.5f, 8388608.0f, -8388608.0f, 16777215.0f, 1e30f, -1e30f,
                          INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 1.17549435e-38f};
  for (std::uint32_t u = 0; u < 0x7F800000u; u += 1021u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    x.push_back(f);
    x.push_back(-f);
  }
  const long n = static_cast<long>(x.size());
  std::vector<float> out(5 * x.size());
  apply_all(x.data(), out.data(), n);
  long failures = 0;
  for (long i = 0; i < n; ++i) {
    const float want[5] = {std::floor(x[i]), std::ceil(x[i]), std::trunc(x[i]), std::round(x[i]), mxnet_rint(x[i])};
    for (int k = 0; k < 5; ++k) {
      if (same(out[k * n + i], want[k])) continue;
      if (++failures <= 10) std::printf("function %d of %a: %a, want %a\n", k, x[i], out[k * n + i], want[k]);
    }
  }
  std::printf("RESULT failures %ld of %ld\n", failures, 5 * n);
  return failures == 0 ? 0 : 1;
}
)DRV";

TEST(RoundingKernels, ExactOnEveryTarget) {
  std::vector<std::pair<std::string, std::string>> targets = {{"generic", ""}};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) targets.push_back({"x86-64-v3", "-march=x86-64-v3"});
#endif
  testing::check_kernel_driver("hybgen-rounding-test", {"epilogue", "math", "rounding"}, kRoundingDriver, targets,
                               "-O3");
}

}  // namespace
}  // namespace hybgen
