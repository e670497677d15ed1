// templates/kernels/math.inc (hg_exp, hg_expm1, hg_erf, hg_tanh,
// hg_sigmoid, hg_gelu) and the kernels that use it, on every target this machine runs.
//
// Approximations: a C++11 driver including math.inc inside a namespace (as
// generated code does) is compiled with the strict flags at -O3 for the
// portable baseline and for each x86-64 level the host has; it evaluates the
// functions over a dense sweep of float bit patterns (every 97th, both
// signs) through a loop the compiler vectorises (and, on AVX-512, hg_exp16 and hg_gelu16), and compares with the
// double-precision std:: functions: the worst error in ulp of the exact
// result (of |x| for GELU) must stay within each function's documented bound, and the special
// values (+-inf, NaN, +-0, overflow and underflow) must come out exactly.
//
// Ops: the examples of every op whose kernel changed with math.inc, the
// packed batch_dot or the row-wise pooling, plus fused chains (a GEMM epilogue calling hg_gelu, a
// batch_dot epilogue calling hg_exp), generated for each target, compiled at
// -O3 and verified against the reference interpreter.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "emit/cpp_emitter.h"
#include "emit/templates.h"
#include "graph_builders.h"
#include "io/file_util.h"
#include "kernel_driver_support.h"
#include "ops/op.h"
#include "run_command.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

using testing::attrs_of;

const char* kMathDriver = R"DRV(namespace {

using namespace model::kernels;

// The exact result's ulp, floored at FLT_MIN (subnormal results are
// judged by their absolute error in that unit).
double ulp_of(double v) {
  float f = static_cast<float>(std::fabs(v));
  if (f < 1.17549435e-38f) f = 1.17549435e-38f;
  if (std::isinf(f)) f = 3.40282347e38f;
  return static_cast<double>(std::nextafter(f, 2.0f * f)) - f;
}

double exact(int fn, double x) {
  switch (fn) {
    case 0: return std::exp(x);
    case 1: return std::expm1(x);
    case 2: return std::erf(x);
    case 3: return std::tanh(x);
    case 4: return 1.0 / (1.0 + std::exp(-x));
    case 6: return std::exp(x);
    default: return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752));  // 5 and 7: GELU
  }
}

// One loop per function, so each is vectorised as a kernel would be.
void apply(int fn, const std::vector<float>& x, std::vector<float>& y) {
  const long n = static_cast<long>(x.size());
  const float* xp = &x[0];
  float* yp = &y[0];
  switch (fn) {
    case 0: for (long i = 0; i < n; ++i) yp[i] = hg_exp(xp[i]); break;
    case 1: for (long i = 0; i < n; ++i) yp[i] = hg_expm1(xp[i]); break;
    case 2: for (long i = 0; i < n; ++i) yp[i] = hg_erf(xp[i]); break;
    case 3: for (long i = 0; i < n; ++i) yp[i] = hg_tanh(xp[i]); break;
    case 4: for (long i = 0; i < n; ++i) yp[i] = hg_sigmoid(xp[i]); break;
    case 5: for (long i = 0; i < n; ++i) yp[i] = hg_gelu(xp[i]); break;
#if defined(HG_SIMD_AVX512)
    default: {  // hg_exp16 or hg_gelu16, the last partial vector through a padded copy
      const bool gelu = fn == 7;
      long i = 0;
      for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(xp + i);
        _mm512_storeu_ps(yp + i, gelu ? hg_gelu16(v) : hg_exp16(v));
      }
      float in[16] = {0}, out[16];
      for (long j = i; j < n; ++j) in[j - i] = xp[j];
      const __m512 v = _mm512_loadu_ps(in);
      _mm512_storeu_ps(out, gelu ? hg_gelu16(v) : hg_exp16(v));
      for (long j = i; j < n; ++j) yp[j] = out[j - i];
      break;
    }
#else
    default: break;
#endif
  }
}

// exp16 and gelu16 (AVX-512 builds only) after the six scalar functions.
#if defined(HG_SIMD_AVX512)
const int kFunctions = 8;
#else
const int kFunctions = 6;
#endif

bool same(float got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return static_cast<double>(got) == want && std::signbit(got) == std::signbit(want);
}

}  // namespace

int main() {
  const char* names[] = {"exp", "expm1", "erf", "tanh", "sigmoid", "gelu", "exp16", "gelu16"};
  const double bounds[] = {2.0, 4.0, 3.0, 2.0, 3.0, 4.0, 2.0, 4.0};
  std::vector<float> x;
  for (std::uint32_t u = 0; u < 0x7f800000u; u += 97) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    x.push_back(f);
    x.push_back(-f);
  }
  std::vector<float> y(x.size());
  int failures = 0;
  for (int fn = 0; fn < kFunctions; ++fn) {
    apply(fn, x, y);
    double worst = 0;
    float worst_x = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double want = exact(fn, x[i]);
      // GELU's error is measured against its scale |x|: for negative x its
      // exact value nears 0, where relative error means little.
      const double scale = fn == 5 || fn == 7 ? std::fabs(static_cast<double>(x[i])) : want;
      const double err = static_cast<float>(want) == y[i] ? 0.0 : std::fabs(y[i] - want) / ulp_of(scale);
      if (!(err <= worst)) worst = err, worst_x = x[i];
    }
    std::printf("%s worst %.3f ulp at %.9g\n", names[fn], worst, worst_x);
    if (!(worst <= bounds[fn])) {
      std::printf("FAIL %s: %.3f ulp beyond its bound %.1f\n", names[fn], worst, bounds[fn]);
      ++failures;
    }
  }
  // Special values, exactly (sign of zero included where it is defined).
  const float inf = INFINITY, nan = NAN;
  struct Special {
    int fn;
    float x;
    double want;
  } specials[] = {
      {0, inf, inf},  {0, -inf, 0.0},     {0, nan, nan},  {0, 0.0f, 1.0},  {0, 88.73f, inf}, {0, -104.0f, 0.0},
      {0, -1e30f, 0.0}, {0, 1e30f, inf},  {1, -inf, -1.0}, {1, inf, inf},  {1, nan, nan},    {1, -30.0f, -1.0},
      {2, inf, 1.0},  {2, -inf, -1.0},    {2, nan, nan},  {2, 0.0f, 0.0},  {2, -0.0f, -0.0}, {2, 5.0f, 1.0},
      {3, inf, 1.0},  {3, -inf, -1.0},    {3, nan, nan},  {3, 0.0f, 0.0},  {3, -0.0f, -0.0}, {3, 20.0f, 1.0},
      {4, inf, 1.0},  {4, -inf, 0.0},     {4, nan, nan},  {4, 0.0f, 0.5},  {4, 100.0f, 1.0},
      {5, inf, inf},  {5, -inf, -0.0},    {5, nan, nan},  {5, 0.0f, 0.0},  {5, -0.0f, -0.0}, {5, 10.0f, 10.0},
      {6, inf, inf},  {6, -inf, 0.0},     {6, nan, nan},  {6, 0.0f, 1.0},  {6, 88.73f, inf}, {6, -104.0f, 0.0},
      {6, -1e30f, 0.0}, {6, 1e30f, inf},
      {7, inf, inf},  {7, -inf, -0.0},    {7, nan, nan},  {7, 0.0f, 0.0},  {7, -0.0f, -0.0}, {7, 10.0f, 10.0},
  };
  for (const Special& s : specials) {
    if (s.fn >= kFunctions) continue;
    std::vector<float> in(1, s.x), out(1);
    apply(s.fn, in, out);
    if (!same(out[0], s.want)) {
      std::printf("FAIL %s(%g) = %g, expected %g\n", names[s.fn], s.x, out[0], s.want);
      ++failures;
    }
  }
  std::printf("RESULT failures %d\n", failures);
  return failures == 0 ? 0 : 1;
}
)DRV";

bool host_has(const char* feature) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (std::string(feature) == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (std::string(feature) == "avx512") return __builtin_cpu_supports("avx512f");
#endif
  (void)feature;
  return false;
}

// (target, extra compiler flags) pairs this machine runs.
std::vector<std::pair<std::string, std::string>> host_targets() {
  std::vector<std::pair<std::string, std::string>> t = {{"generic", ""}};
  if (host_has("avx2")) t.push_back({"x86-64-v3", "-march=x86-64-v3"});
  if (host_has("avx512")) t.push_back({"x86-64-v4", "-march=x86-64-v4"});
  return t;
}

TEST(MathKernels, ApproximationsStayWithinTheirBoundsOnEveryTarget) {
  testing::check_kernel_driver("hybgen-math-test", {"simd", "epilogue", "math"}, kMathDriver, host_targets(), "-O3");
}

TEST(MathKernels, ChangedKernelsVerifyOnEveryTargetAtO3) {
  Graph g;
  g.name = "math_ops";
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.cxx_flags = "-std=c++11 -O3 -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti";
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  auto input = [&](const std::string& name, const Shape& shape) {
    g.add_input(name, {shape});
    NpyArray values{shape, std::vector<float>(static_cast<std::size_t>(num_elements(shape)))};
    for (auto& v : values.data) v = dist(rng);
    options.inputs[name] = std::move(values);
  };
  auto constant = [&](const std::string& name, const Shape& shape) {
    std::vector<float> values(static_cast<std::size_t>(num_elements(shape)));
    for (auto& v : values) v = dist(rng) * 0.2f;
    g.add_constant(name, Constant::f32(shape, values));
  };
  // Every example of the ops whose kernels changed.
  for (const char* name : {"dot", "batch_dot", "softmax", "log_softmax", "SoftmaxActivation", "LayerNorm",
                           "LeakyReLU", "Activation", "exp", "erf", "Pooling"}) {
    const OpDef& op = find_op(name);
    for (std::size_t e = 0; e < op.examples.size(); ++e) {
      const OpExample& ex = op.examples[e];
      if (!ex.input_types.empty()) continue;  // quantized: integers, which math.inc does not compute
      const std::string base = c_identifier(op.name) + "_" + std::to_string(e);
      Node node{base, op.name, ex.attrs, {}, {base}};
      for (std::size_t i = 0; i < ex.inputs.size(); ++i) {
        const std::string in = base + "_in_" + std::to_string(i);
        if (op.name == "LayerNorm" && i > 0) constant(in, ex.inputs[i]);
        else input(in, ex.inputs[i]);
        node.inputs.push_back(in);
      }
      g.nodes.push_back(node);
      g.outputs.push_back(base);
    }
  }
  // A dense layer on (2, 13, 40) with a GELU epilogue (hg_gelu inside the GEMM's
  // store loop), then an attention-like chain: batch_dot with transpose_b,
  // a scale and an exp fused as its epilogue, a softmax.
  input("x", {2, 13, 40});
  constant("w", {37, 40});
  constant("b", {37});
  g.nodes.push_back({"fc", "FullyConnected", attrs_of({{"num_hidden", int64_t{37}}, {"flatten", false}}),
                     {"x", "w", "b"}, {"fc_out"}});
  g.nodes.push_back({"gelu", "LeakyReLU", attrs_of({{"act_type", std::string("gelu")}}), {"fc_out"}, {"gelu_out"}});
  g.nodes.push_back({"qk", "batch_dot", attrs_of({{"transpose_b", true}}), {"gelu_out", "gelu_out"}, {"qk_out"}});
  g.nodes.push_back({"scale", "_mul_scalar", attrs_of({{"scalar", 0.125}}), {"qk_out"}, {"scaled"}});
  g.nodes.push_back({"e", "exp", {}, {"scaled"}, {"e_out"}});
  g.nodes.push_back({"sm", "softmax", {}, {"e_out"}, {"sm_out"}});
  g.outputs.push_back("gelu_out");
  g.outputs.push_back("sm_out");

  for (const auto& [target, flags] : host_targets()) {
    options.compile.target = find_target(target);
    const VerifyReport report = verify_model(g, options);
    ASSERT_EQ(report.checks.size(), g.outputs.size());
    for (const auto& check : report.checks)
      EXPECT_LE(check.max_rel_error, 1e-5) << target << ": " << check.name << " max abs error " << check.max_abs_error;
  }
}

}  // namespace
}  // namespace hybgen
