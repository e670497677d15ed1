// What this core sustains right now: 12 independent FMA chains on the
// kernels' vector type (hg_simd_v), nothing from memory; the ceiling the
// kernel benchmarks compare with. Include after templates/kernels/gemm.inc.
//
//   const double peak = bench::fma_peak_gflops();
#pragma once

#include <algorithm>
#include <chrono>

namespace bench {

inline float fma_chains(long n) {
  hg_simd_v acc[12];
  HG_GEMM_UNROLL
  for (int j = 0; j < 12; ++j) acc[j] = hg_simd_bcast(1.0f + 1e-3f * static_cast<float>(j));
  const hg_simd_v x = hg_simd_bcast(0.999999f), y = hg_simd_bcast(1e-7f);
  for (long i = 0; i < n; ++i) {
    HG_GEMM_UNROLL
    for (int j = 0; j < 12; ++j) acc[j] = hg_simd_fma(acc[j], x, y);
  }
  HG_GEMM_UNROLL
  for (int j = 1; j < 12; ++j) acc[0] = hg_simd_add(acc[0], acc[j]);
  alignas(64) float out[HG_SIMD_LANES];
  hg_simd_store(out, acc[0]);
  return out[0];
}

// The best of five runs, in GFLOP/s.
inline double fma_peak_gflops() {
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const long n = 4000000;
    const auto t0 = std::chrono::steady_clock::now();
    const float r = fma_chains(n);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::max(best, 2.0 * 12 * HG_SIMD_LANES * n / s * 1e-9);
  }
  return best;
}

}  // namespace bench
