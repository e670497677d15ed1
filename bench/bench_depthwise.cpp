// The depthwise kernels of templates/kernels/conv2d_depthwise.inc on
// MobileNet v2's 3x3 layers (each shape once), single-threaded, with its
// relu6 two ways: as the clamp object the generator emits for a lone clip
// (applied in registers) and as a lambda (applied value by value after the
// stores), against the FMA peak this core sustains now.
//
// Each round times both forms back to back; the table shows medians over
// rounds. Outputs are checked against a double-precision direct sum first.
//   bench_depthwise [--rounds N] [--min-ms M]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "timing.h"

// The kernel text, as generated code includes it (C++11 text, global scope).
#include "templates/kernels/simd.inc"
#include "templates/kernels/epilogue.inc"
#include "templates/kernels/parallel.inc"
#include "templates/kernels/gemm.inc"
#include "templates/kernels/conv2d_depthwise.inc"

#include "fma_peak.h"

namespace {

struct Layer {
  long c, h, stride, count;  // channels, square input side, stride, layers of this shape in MobileNet v2
};

}  // namespace

int main(int argc, char** argv) {
  const bench::RoundOptions options = bench::parse_rounds(argc, argv, 9, 20);
  const int rounds = options.rounds;
  const double min_ms = options.min_ms;
  const double peak = bench::fma_peak_gflops();
  std::printf("bench_depthwise: MobileNet v2's 3x3 depthwise layers, relu6, one thread, %d rounds; FMA peak now %.1f "
              "GFLOP/s\n",
              rounds, peak);
  std::printf("%-18s %6s %12s %9s %7s %14s %9s\n", "c x h x w, stride", "layers", "clamp us", "GFLOP/s", "% peak",
              "lambda us", "GFLOP/s");
  const std::vector<Layer> layers = {{32, 112, 1, 1}, {96, 112, 2, 1}, {144, 56, 1, 1}, {144, 56, 2, 1},
                                     {192, 28, 1, 2}, {192, 28, 2, 1}, {384, 14, 1, 4}, {576, 14, 1, 2},
                                     {576, 14, 2, 1}, {960, 7, 1, 3}};
  double model_clamp = 0, model_lambda = 0;
  bool ok = true;
  for (const Layer& l : layers) {
    const long c = l.c, h = l.h, s = l.stride, oh = (h + 2 - 3) / s + 1;
    std::vector<float> x(static_cast<size_t>(c * h * h)), w(static_cast<size_t>(c * 9)), b(static_cast<size_t>(c));
    std::vector<float> y(static_cast<size_t>(c * oh * oh));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (auto& v : x) v = 4.0f * dist(rng);
    for (auto& v : w) v = dist(rng);
    for (auto& v : b) v = dist(rng);
    const long geometry[] = {1, c, h, h, c, 3, 3, oh, oh, s, s, 1, 1, 1, 1, c};
    const HgClampEpilogue clamp(0.0f, 6.0f);
    const auto lambda = [](long, long, float v) -> float { return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v); };
    const std::function<void()> with_clamp = [&] {
      hg_conv2d_depthwise(x.data(), w.data(), b.data(), y.data(), geometry, clamp);
    };
    const std::function<void()> with_lambda = [&] {
      hg_conv2d_depthwise(x.data(), w.data(), b.data(), y.data(), geometry, lambda);
    };
    for (const auto* run : {&with_clamp, &with_lambda}) {
      (*run)();
      double worst = 0;
      for (long ch = 0; ch < c; ++ch)
        for (long oy = 0; oy < oh; ++oy)
          for (long ox = 0; ox < oh; ++ox) {
            double sum = b[ch];
            for (long ky = 0; ky < 3; ++ky)
              for (long kx = 0; kx < 3; ++kx) {
                const long iy = oy * s - 1 + ky, ix = ox * s - 1 + kx;
                if (iy >= 0 && iy < h && ix >= 0 && ix < h)
                  sum += static_cast<double>(w[ch * 9 + ky * 3 + kx]) * x[(ch * h + iy) * h + ix];
              }
            sum = sum < 0 ? 0 : (sum > 6 ? 6 : sum);
            worst = std::max(worst, std::fabs(sum - y[(ch * oh + oy) * oh + ox]));
          }
      if (!(worst < 1e-4)) {
        std::printf("c %ld h %ld stride %ld: off by %.3g\n", c, h, s, worst);
        ok = false;
      }
    }
    const int n_clamp = bench::calibrate(with_clamp, min_ms), n_lambda = bench::calibrate(with_lambda, min_ms);
    std::vector<double> t_clamp, t_lambda;
    for (int r = 0; r < rounds; ++r) {
      t_clamp.push_back(bench::sample_us(with_clamp, n_clamp));
      t_lambda.push_back(bench::sample_us(with_lambda, n_lambda));
    }
    const double flops = 2.0 * 9 * c * oh * oh, tc = bench::median(t_clamp), tl = bench::median(t_lambda);
    model_clamp += tc * l.count;
    model_lambda += tl * l.count;
    const std::string shape = std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(h) + ", " +
                              std::to_string(s);
    std::printf("%-18s %6ld %12.2f %9.1f %6.0f%% %14.2f %9.1f\n", shape.c_str(), l.count, tc, flops / tc * 1e-3,
                100.0 * flops / tc * 1e-3 / peak, tl, flops / tl * 1e-3);
  }
  std::printf("all of MobileNet v2's depthwise layers: %.0f us with the clamp object, %.0f us with the lambda\n",
              model_clamp, model_lambda);
  return ok ? 0 : 1;
}
