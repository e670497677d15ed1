// The GEMM/GEMV kernels of templates/kernels/gemm.inc against single-threaded
// OpenBLAS on the shapes hybgen's models produce: a big square GEMM, a
// ResNet-style convolution as packed-A GEMM, batch-1 dense layers (GEMV) and
// the seed MLP 512->256->128->2 at batch 1, and a batch-64 dense layer.
//
// Each round times our kernel and OpenBLAS back to back (alternating, so
// drift hits both); the table shows the median over rounds, and the median
// of the per-round ratios (robust to other load on the machine).
//   bench_gemm [--rounds N] [--min-ms M] [--only SUBSTRING]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ops/gemm_pack.h"
#include "timing.h"

// The kernel text, as generated code includes it (C++11 text, global scope).
#include "templates/kernels/simd.inc"
#include "templates/kernels/epilogue.inc"
#include "templates/kernels/parallel.inc"
#include "templates/kernels/gemm.inc"

#include "fma_peak.h"

namespace {

using Fn = std::function<void()>;

std::vector<float> random_vector(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string simd_path() {
#if defined(__AVX512F__)
  return "AVX-512";
#elif defined(__AVX2__) && defined(__FMA__)
  return "AVX2+FMA";
#elif defined(__ARM_NEON)
  return "NEON";
#else
  return "generic";
#endif
}

// Largest |ours - theirs| relative to the largest |theirs|.
double max_rel_diff(const std::vector<float>& ours, const std::vector<float>& theirs) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(ours[i] - theirs[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(theirs[i])));
  }
  return diff / (scale > 0 ? scale : 1);
}

// Sums `n` floats with 8 vector accumulators: a plain read of the data, the
// bandwidth a GEMV streaming the same weights can at best reach.
float stream_sum(const float* p, long n) {
  hg_simd_v acc[8];
  for (int j = 0; j < 8; ++j) acc[j] = hg_simd_zero();
  const long step = 8 * HG_SIMD_LANES;
  for (long i = 0; i + step <= n; i += step) {
    HG_GEMM_UNROLL
    for (int j = 0; j < 8; ++j) acc[j] = hg_simd_add(acc[j], hg_simd_load(p + i + j * HG_SIMD_LANES));
  }
  for (int j = 1; j < 8; ++j) acc[0] = hg_simd_add(acc[0], acc[j]);
  alignas(64) float out[HG_SIMD_LANES];
  hg_simd_store(out, acc[0]);
  return out[0];
}

struct Case {
  std::string name, shape;
  double flops;
  Fn ours, theirs;
  std::function<double()> check;  // ours vs OpenBLAS after one call of each
  std::vector<double> t_ours, t_theirs;
};

const char* kGemmTarget =
#if defined(__AVX512F__)
    "x86-64-v4";
#elif defined(__AVX2__) && defined(__FMA__)
    "x86-64-v3";
#elif defined(__ARM_NEON)
    "armv8-a";
#else
    "generic";
#endif

// Dense layer y[m x n] = x[m x k] W^T + b with W [n x k]: ours packed-B,
// OpenBLAS as the reference runtime calls it (sgemv at m == 1, else sgemm).
struct Dense {
  long m, n, k;
  std::vector<float> x, w, b, wp, y_ours, y_theirs;
  Dense(long m_, long n_, long k_, unsigned seed) : m(m_), n(n_), k(k_) {
    x = random_vector(m * k, seed);
    w = random_vector(n * k, seed + 1);
    b = random_vector(n, seed + 2);
    wp = hybgen::pack_w_transposed_panels(w.data(), n, k, HG_GEMM_NR);
    y_ours.assign(m * n, 0.0f);
    y_theirs.assign(m * n, 0.0f);
  }
  void ours() { hg_gemm_packed_b(x.data(), k, wp.data(), b.data(), y_ours.data(), n, m, n, k, HgNoEpilogue()); }
  void theirs() {
    if (m == 1) {
      std::memcpy(y_theirs.data(), b.data(), n * sizeof(float));
      cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w.data(), k, x.data(), 1, 1.0f, y_theirs.data(), 1);
    } else {
      for (long r = 0; r < m; ++r) std::memcpy(y_theirs.data() + r * n, b.data(), n * sizeof(float));
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x.data(), k, w.data(), k, 1.0f,
                  y_theirs.data(), n);
    }
  }
};

// C[m x n] = A[m x k] B[k x n] + bias: ours packed-B (B constant) or
// packed-A (A constant, bias per row), OpenBLAS sgemm with beta = 1 on a C
// preset to the bias.
struct Gemm {
  long m, n, k;
  bool packed_a;
  std::vector<float> a, b, bias, packed, c_ours, c_theirs;
  Gemm(long m_, long n_, long k_, bool packed_a_, unsigned seed) : m(m_), n(n_), k(k_), packed_a(packed_a_) {
    a = random_vector(m * k, seed);
    b = random_vector(k * n, seed + 1);
    bias = random_vector(packed_a ? m : n, seed + 2);
    packed = packed_a ? hybgen::pack_a_panels(a.data(), m, k, HG_GEMM_MR)
                      : hybgen::pack_b_panels(b.data(), k, n, HG_GEMM_NR);
    c_ours.assign(m * n, 0.0f);
    c_theirs.assign(m * n, 0.0f);
  }
  void ours() {
    if (packed_a)
      hg_gemm_packed_a(packed.data(), b.data(), n, bias.data(), c_ours.data(), n, m, n, k, HgNoEpilogue());
    else
      hg_gemm_packed_b(a.data(), k, packed.data(), bias.data(), c_ours.data(), n, m, n, k, HgNoEpilogue());
  }
  void theirs() {
    for (long r = 0; r < m; ++r)
      for (long j = 0; j < n; ++j) c_theirs[r * n + j] = packed_a ? bias[r] : bias[j];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 1.0f,
                c_theirs.data(), n);
  }
};

// The seed MLP 512 -> 256 -> 128 -> 2 at batch 1, relu between layers:
// three packed-B GEMVs with a fused relu against three sgemv plus loops.
struct Mlp {
  Dense l1{1, 256, 512, 11}, l2{1, 128, 256, 21}, l3{1, 2, 128, 31};
  std::vector<float> h1o = std::vector<float>(256), h2o = std::vector<float>(128), yo = std::vector<float>(2);
  std::vector<float> h1t = std::vector<float>(256), h2t = std::vector<float>(128), yt = std::vector<float>(2);
  void ours() {
    const auto relu = [](long, long, float v) { return v > 0.0f ? v : 0.0f; };
    hg_gemm_packed_b(l1.x.data(), 512, l1.wp.data(), l1.b.data(), h1o.data(), 256, 1, 256, 512, relu);
    hg_gemm_packed_b(h1o.data(), 256, l2.wp.data(), l2.b.data(), h2o.data(), 128, 1, 128, 256, relu);
    hg_gemm_packed_b(h2o.data(), 128, l3.wp.data(), l3.b.data(), yo.data(), 2, 1, 2, 128, HgNoEpilogue());
  }
  static void layer(const Dense& l, const float* x, float* y, bool relu) {
    std::memcpy(y, l.b.data(), l.n * sizeof(float));
    cblas_sgemv(CblasRowMajor, CblasNoTrans, l.n, l.k, 1.0f, l.w.data(), l.k, x, 1, 1.0f, y, 1);
    if (relu)
      for (long j = 0; j < l.n; ++j) y[j] = y[j] > 0.0f ? y[j] : 0.0f;
  }
  void theirs() {
    layer(l1, l1.x.data(), h1t.data(), true);
    layer(l2, h1t.data(), h2t.data(), true);
    layer(l3, h2t.data(), yt.data(), false);
  }
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  double min_ms = 20;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (arg == "--min-ms" && i + 1 < argc) {
      min_ms = std::atof(argv[++i]);
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: bench_gemm [--rounds N] [--min-ms M] [--only SUBSTRING]\n");
      return 2;
    }
  }
  openblas_set_num_threads(1);

  std::vector<Case> cases;
  auto add_gemm = [&](const std::string& name, long m, long n, long k, bool packed_a) {
    auto g = std::make_shared<Gemm>(m, n, k, packed_a, 7u);
    cases.push_back({name,
                     std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k),
                     2.0 * m * n * k,
                     [g] { g->ours(); },
                     [g] { g->theirs(); },
                     [g] {
                       g->ours();
                       g->theirs();
                       return max_rel_diff(g->c_ours, g->c_theirs);
                     },
                     {},
                     {}});
  };
  auto add_dense = [&](const std::string& name, long m, long n, long k) {
    auto d = std::make_shared<Dense>(m, n, k, 3u);
    cases.push_back({name,
                     std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k),
                     2.0 * m * n * k,
                     [d] { d->ours(); },
                     [d] { d->theirs(); },
                     [d] {
                       d->ours();
                       d->theirs();
                       return max_rel_diff(d->y_ours, d->y_theirs);
                     },
                     {},
                     {}});
  };
  add_gemm("gemm packed-B", 1024, 1024, 1024, false);
  add_gemm("conv packed-A", 256, 3136, 576, true);
  // MobileNet v2's 1x1 convolutions: short k, long n (pixels), memory-bound.
  add_gemm("mbv2 1x1 32->16", 16, 12544, 32, true);
  add_gemm("mbv2 1x1 16->96", 96, 12544, 16, true);
  add_gemm("mbv2 1x1 24->144", 144, 3136, 24, true);
  add_gemm("mbv2 1x1 144->24", 24, 3136, 144, true);
  add_gemm("mbv2 1x1 64->384", 384, 196, 64, true);
  add_gemm("mbv2 1x1 576->96", 96, 196, 576, true);
  add_gemm("mbv2 1x1 320->1280", 1280, 49, 320, true);
  add_gemm("mbv2 1x1 960->320", 320, 49, 960, true);
  add_gemm("mbv2 1x1 160->960", 960, 49, 160, true);
  add_gemm("mbv2 classifier 1280->1000", 1000, 1, 1280, true);  // a 1x1 convolution on a 1x1 map
  add_gemm("narrow tail 4", 256, 52, 256, true);
  add_gemm("narrow tail 8", 256, 56, 256, true);
  add_dense("gemv 512x512", 1, 512, 512);
  add_dense("gemv 256x512", 1, 256, 512);
  add_dense("gemv 128x256", 1, 128, 256);
  add_dense("dense b64", 64, 256, 512);
  {
    auto mlp = std::make_shared<Mlp>();
    cases.push_back({"mlp b1 512-256-128-2",
                     "3 layers",
                     2.0 * (512 * 256 + 256 * 128 + 128 * 2),
                     [mlp] { mlp->ours(); },
                     [mlp] { mlp->theirs(); },
                     [mlp] {
                       mlp->ours();
                       mlp->theirs();
                       return max_rel_diff(mlp->yo, mlp->yt);
                     },
                     {},
                     {}});
  }
  if (!only.empty())
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [&](const Case& c) { return c.name.find(only) == std::string::npos; }),
                cases.end());

  std::printf("bench_gemm: %s, kernel path %s (NR %d, MR %d), OpenBLAS single-threaded, %d rounds\n",
              cpu_model().c_str(), simd_path().c_str(), HG_GEMM_NR, HG_GEMM_MR, rounds);
  const hybgen::Target& packed_for = hybgen::find_target(kGemmTarget);
  if (packed_for.gemm_nr != HG_GEMM_NR || packed_for.gemm_mr != HG_GEMM_MR)
    std::printf("warning: the generator packs %s with NR %d, MR %d; this build of gemm.inc uses NR %d, MR %d\n",
                kGemmTarget, packed_for.gemm_nr, packed_for.gemm_mr, HG_GEMM_NR, HG_GEMM_MR);
  std::printf("FMA peak measured now: %.1f GFLOP/s\n", bench::fma_peak_gflops());
  bool ok = true;
  for (auto& c : cases) {
    const double err = c.check();
    if (!(err < 1e-4)) {
      std::printf("%s: ours and OpenBLAS differ by %.3g (relative)\n", c.name.c_str(), err);
      ok = false;
    }
    const int n_ours = bench::calibrate(c.ours, min_ms), n_theirs = bench::calibrate(c.theirs, min_ms);
    for (int r = 0; r < rounds; ++r) {
      c.t_ours.push_back(bench::sample_us(c.ours, n_ours));
      c.t_theirs.push_back(bench::sample_us(c.theirs, n_theirs));
    }
  }
  std::printf("%-22s %-14s %12s %9s %12s %9s %8s\n", "case", "m x n x k", "ours us", "GFLOP/s", "OpenBLAS us",
              "GFLOP/s", "ratio");
  for (const auto& c : cases) {
    const double to = bench::median(c.t_ours), tt = bench::median(c.t_theirs);
    std::vector<double> ratios;
    for (size_t r = 0; r < c.t_ours.size(); ++r) ratios.push_back(c.t_theirs[r] / c.t_ours[r]);
    std::printf("%-22s %-14s %12.2f %9.1f %12.2f %9.1f %7.2fx\n", c.name.c_str(), c.shape.c_str(), to,
                c.flops / to * 1e-3, tt, c.flops / tt * 1e-3, bench::median(ratios));
  }
  std::printf(
      "times: median over rounds; ratio: median over rounds of OpenBLAS time / our time (above 1: ours is faster)\n");
  if (only.empty() || std::string("mlp b1").find(only) != std::string::npos) {
    // The batch-1 roofline on this machine now: reading the MLP's packed
    // weights once, nothing else, from wherever they sit after a forward.
    Mlp mlp;
    float sink = 0;
    const Fn read = [&] {
      sink += stream_sum(mlp.l1.wp.data(), static_cast<long>(mlp.l1.wp.size()));
      sink += stream_sum(mlp.l2.wp.data(), static_cast<long>(mlp.l2.wp.size()));
      sink += stream_sum(mlp.l3.wp.data(), static_cast<long>(mlp.l3.wp.size()));
    };
    const Fn both = [&] {
      mlp.ours();
      read();
    };
    std::vector<double> t_read, t_mlp;
    const int n = bench::calibrate(both, min_ms);
    for (int r = 0; r < rounds; ++r) {
      t_mlp.push_back(bench::sample_us([&] { mlp.ours(); }, n));
      t_read.push_back(bench::sample_us(read, n));
    }
    const double bytes = 4.0 * static_cast<double>(mlp.l1.wp.size() + mlp.l2.wp.size() + mlp.l3.wp.size());
    std::printf(
        "mlp b1 roofline: reading its %.0f KiB of packed weights takes %.2f us (%.1f GB/s); the forward %.2f us "
        "(%.0f%% of that bandwidth)%s\n",
        bytes / 1024, bench::median(t_read), bytes / bench::median(t_read) * 1e-3, bench::median(t_mlp),
        100.0 * bench::median(t_read) / bench::median(t_mlp), sink == 12345.0f ? " " : "");
  }
  return ok ? 0 : 1;
}
