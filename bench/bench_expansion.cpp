// MobileNet v2's expansion steps as the channel-block kernel runs them
// (templates/kernels/conv_pointwise_depthwise.inc: a block of the 1x1
// convolution's output channels, then the depthwise step over that block),
// taken apart by block size: the fused kernel, its GEMM over every block,
// its depthwise step over every block, and the GEMM as one product over all
// channels. Every block reads the 1x1 convolution's whole input again, so
// the GEMM by blocks against the one product shows what those passes cost.
// Single-threaded, relu6 in registers, against the FMA peak this core
// sustains now. The generator's blocks: whole GEMM row panels within 256 KiB
// of the widened tensor, at least 24 channels (gen/ops/pointwise_depthwise_conv.cpp).
//
// Each round times every form back to back; the table shows medians over
// rounds. The fused kernel's output is checked against a double-precision sum.
//   bench_expansion [--rounds N] [--min-ms M]
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
#include "templates/kernels/conv_pointwise_depthwise.inc"

#include "fma_peak.h"
#include "ops/gemm_pack.h"

namespace {

struct Layer {
  long c, mid, h, stride;  // the 1x1's input and output channels, square map side, depthwise stride
};

// The largest |y - expected| of the fused kernel's output: the 1x1
// convolution, relu6, then the 3x3 depthwise one with relu6, in double.
double worst_error(const Layer& l, const std::vector<float>& x, const std::vector<float>& w1,
                   const std::vector<float>& b1, const std::vector<float>& w2, const std::vector<float>& b2,
                   const std::vector<float>& y) {
  const long h = l.h, pixels = h * h, s = l.stride, oh = (h + 2 - 3) / s + 1;
  const auto relu6 = [](double v) { return v < 0 ? 0 : (v > 6 ? 6 : v); };
  std::vector<double> m(static_cast<size_t>(pixels));
  double worst = 0;
  for (long ch = 0; ch < l.mid; ++ch) {
    for (long p = 0; p < pixels; ++p) {
      double sum = b1[ch];
      for (long ic = 0; ic < l.c; ++ic) sum += static_cast<double>(w1[ch * l.c + ic]) * x[ic * pixels + p];
      m[p] = relu6(sum);
    }
    for (long oy = 0; oy < oh; ++oy)
      for (long ox = 0; ox < oh; ++ox) {
        double sum = b2[ch];
        for (long ky = 0; ky < 3; ++ky)
          for (long kx = 0; kx < 3; ++kx) {
            const long iy = oy * s - 1 + ky, ix = ox * s - 1 + kx;
            if (iy >= 0 && iy < h && ix >= 0 && ix < h) sum += w2[ch * 9 + ky * 3 + kx] * m[iy * h + ix];
          }
        worst = std::max(worst, std::fabs(relu6(sum) - y[(ch * oh + oy) * oh + ox]));
      }
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const bench::RoundOptions options = bench::parse_rounds(argc, argv, 7, 20);
  const int rounds = options.rounds;
  const double min_ms = options.min_ms;
  const double peak = bench::fma_peak_gflops();
  std::printf("bench_expansion: MobileNet v2's expansion steps on the channel-block kernel, relu6, one thread, %d "
              "rounds; FMA peak now %.1f GFLOP/s; row panels of %d channels\n",
              rounds, peak, HG_GEMM_MR);
  std::printf("%-22s %6s %10s %7s %16s %9s %16s %14s\n", "c -> mid, side, stride", "block", "fused us", "% peak",
              "GEMM by blocks", "GFLOP/s", "depthwise by bl.", "GEMM as one");
  const std::vector<Layer> layers = {{16, 96, 112, 2}, {24, 144, 56, 1}, {24, 144, 56, 2}, {32, 192, 28, 1}};
  bool ok = true;
  for (const Layer& l : layers) {
    const long h = l.h, pixels = h * h, s = l.stride, oh = (h + 2 - 3) / s + 1;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const auto values = [&](long n) {
      std::vector<float> v(static_cast<size_t>(n));
      for (auto& e : v) e = dist(rng);
      return v;
    };
    const std::vector<float> x = values(l.c * pixels), w1 = values(l.mid * l.c), b1 = values(l.mid);
    const std::vector<float> w2 = values(l.mid * 9), b2 = values(l.mid);
    const std::vector<float> packed = hybgen::pack_a_panels(w1.data(), l.mid, l.c, HG_GEMM_MR);
    std::vector<float> y(static_cast<size_t>(l.mid * oh * oh)), whole(static_cast<size_t>(l.mid * pixels));
    const HgClampEpilogue relu6(0.0f, 6.0f);
    const double gemm_flops = 2.0 * l.mid * l.c * pixels, dw_flops = 2.0 * 9 * l.mid * oh * oh;
    const std::function<void()> as_one = [&] {
      hg_gemm_packed_a(packed.data(), x.data(), pixels, b1.data(), whole.data(), pixels, l.mid, pixels, l.c, relu6);
    };
    // Blocks of 1, 2, 4 and 8 row panels, and one block of every channel.
    const long panels_total = (l.mid + HG_GEMM_MR - 1) / HG_GEMM_MR;
    std::vector<long> block_panels;
    for (long panels : {1L, 2L, 4L, 8L})
      if (panels < panels_total) block_panels.push_back(panels);
    block_panels.push_back(panels_total);
    for (long panels : block_panels) {
      const long block = panels * HG_GEMM_MR;
      std::vector<float> scratch(static_cast<size_t>(std::min(block, l.mid) * pixels));
      const long geometry[] = {1, l.c, h, h, l.mid, 3, 3, oh, oh, s, s, 1, 1, 1, 1, block};
      const std::function<void()> fused = [&] {
        hg_conv_pointwise_depthwise(x.data(), packed.data(), b1.data(), w2.data(), b2.data(), y.data(), geometry,
                                    scratch.data(), relu6, relu6);
      };
      const std::function<void()> gemm_by_blocks = [&] {
        for (long c0 = 0; c0 < l.mid; c0 += block)
          hg_gemm_packed_a(packed.data() + c0 * l.c, x.data(), pixels, b1.data() + c0, scratch.data(), pixels,
                           std::min(block, l.mid - c0), pixels, l.c, relu6);
      };
      const std::function<void()> depthwise_by_blocks = [&] {
        for (long c0 = 0; c0 < l.mid; c0 += block) {
          const long channels = std::min(block, l.mid - c0);
          const long dw_geometry[] = {1, channels, h, h, channels, 3, 3, oh, oh, s, s, 1, 1, 1, 1, channels};
          hg_conv2d_depthwise(scratch.data(), w2.data() + c0 * 9, b2.data() + c0, y.data() + c0 * oh * oh,
                              dw_geometry, relu6);
        }
      };
      fused();
      const double worst = worst_error(l, x, w1, b1, w2, b2, y);
      if (!(worst < 1e-3)) {
        std::printf("%ld -> %ld at %ld, block %ld: off by %.3g\n", l.c, l.mid, h, block, worst);
        ok = false;
      }
      const std::vector<const std::function<void()>*> forms = {&fused, &gemm_by_blocks, &depthwise_by_blocks, &as_one};
      std::vector<int> calls;
      for (const auto* f : forms) calls.push_back(bench::calibrate(*f, min_ms));
      std::vector<std::vector<double>> times(forms.size());
      for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < forms.size(); ++i) times[i].push_back(bench::sample_us(*forms[i], calls[i]));
      const double t_fused = bench::median(times[0]), t_gemm = bench::median(times[1]);
      const double t_dw = bench::median(times[2]), t_one = bench::median(times[3]);
      const std::string shape = std::to_string(l.c) + " -> " + std::to_string(l.mid) + ", " + std::to_string(h) +
                                ", " + std::to_string(s);
      std::printf("%-22s %6ld %10.1f %6.0f%% %16.1f %9.1f %16.1f %14.1f\n", shape.c_str(), block, t_fused,
                  100.0 * (gemm_flops + dw_flops) / t_fused * 1e-3 / peak, t_gemm, gemm_flops / t_gemm * 1e-3, t_dw,
                  t_one);
    }
  }
  return ok ? 0 : 1;
}
