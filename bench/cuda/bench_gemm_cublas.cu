// A 4096^3 FP32 GEMM: hybgen's CUDA kernel (templates/cuda/kernels/gemm.inc)
// against cublasSgemm, and its TF32 tensor-core path (HG_CUDA_TF32) against
// cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32. Benchmark only (links
// cuBLAS; the generated code never does). See README.md:
//   nvcc -O3 -arch=sm_90 -std=c++17 bench_gemm_cublas.cu -lcublas -o bench_gemm_cublas
//   ./bench_gemm_cublas [M N K]
// Each kernel is timed with CUDA events, the median of 20 runs after 3
// warm-up runs, and checked against cuBLAS (max |diff| / max |ref|).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

// The kernel files as the generated code pastes them: once with exact FP32,
// once with the TF32 path on.
namespace fp32 {
namespace kernels {
#include "../../templates/cuda/kernels/common.inc"
#include "../../templates/cuda/kernels/gemm.inc"
}  // namespace kernels
}  // namespace fp32
#define HG_CUDA_TF32 1
namespace tf32 {
namespace kernels {
#include "../../templates/cuda/kernels/common.inc"
#include "../../templates/cuda/kernels/gemm.inc"
}  // namespace kernels
}  // namespace tf32

#define CHECK_CUDA(call)                                                                                     \
  do {                                                                                                       \
    const cudaError_t e_ = (call);                                                                           \
    if (e_ != cudaSuccess) {                                                                                 \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
      std::exit(1);                                                                                          \
    }                                                                                                        \
  } while (0)
#define CHECK_CUBLAS(call)                                                                  \
  do {                                                                                      \
    const cublasStatus_t s_ = (call);                                                       \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                      \
      std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)s_); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

// Median milliseconds of 20 runs after 3 warm-up runs.
template <typename F>
static float time_ms(F run) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) run();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    CHECK_CUDA(cudaEventRecord(start));
    run();
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return ms[ms.size() / 2];
}

static double rel_error(const float* got_d, const float* want_d, size_t n) {
  std::vector<float> got(n), want(n);
  CHECK_CUDA(cudaMemcpy(got.data(), got_d, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(want.data(), want_d, n * sizeof(float), cudaMemcpyDeviceToHost));
  double diff = 0, ref = 0;
  for (size_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(got[i]) - want[i]));
    ref = std::max(ref, std::fabs(static_cast<double>(want[i])));
  }
  return diff / (ref > 0 ? ref : 1);
}

int main(int argc, char** argv) {
  long m = 4096, n = 4096, k = 4096;
  if (argc == 4) {
    m = std::atol(argv[1]);
    n = std::atol(argv[2]);
    k = std::atol(argv[3]);
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (%d SMs)\nGEMM %ld x %ld x %ld, row-major C = A B (A m x k, B k x n)\n", prop.name,
              prop.multiProcessorCount, m, n, k);

  std::vector<float> ha(static_cast<size_t>(m * k)), hb(static_cast<size_t>(k * n));
  unsigned seed = 1;
  auto rnd = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  };
  for (float& x : ha) x = rnd();
  for (float& x : hb) x = rnd();
  float *a, *b, *c, *ref;
  CHECK_CUDA(cudaMalloc(&a, ha.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b, hb.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&c, static_cast<size_t>(m * n) * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&ref, static_cast<size_t>(m * n) * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(a, ha.data(), ha.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b, hb.data(), hb.size() * sizeof(float), cudaMemcpyHostToDevice));

  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  const float one = 1.0f, zero = 0.0f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  auto cublas_fp32 = [&] {
    CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                             static_cast<int>(k), &one, b, static_cast<int>(n), a, static_cast<int>(k), &zero, ref,
                             static_cast<int>(n)));
  };
  auto cublas_tf32 = [&] {
    CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                              static_cast<int>(k), &one, b, CUDA_R_32F, static_cast<int>(n), a, CUDA_R_32F,
                              static_cast<int>(k), &zero, ref, CUDA_R_32F, static_cast<int>(n),
                              CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
  };
  // A K-contiguous (AM 0), B N-contiguous (BM 1), configuration 0 (128x128).
  auto ours_fp32 = [&] {
    CHECK_CUDA((fp32::kernels::hg_gemm<0, 0, 1>(0, a, k, 0, b, n, 0, nullptr, c, n, 0, n, 1, m, n, k, 1, nullptr,
                                                fp32::kernels::HgNoEpilogue())));
  };
  auto ours_tf32 = [&] {
    CHECK_CUDA((tf32::kernels::hg_gemm<0, 0, 1>(0, a, k, 0, b, n, 0, nullptr, c, n, 0, n, 1, m, n, k, 1, nullptr,
                                                tf32::kernels::HgNoEpilogue())));
  };
  // The dense-layer layout: B = W^T with W stored n x k (BM 0).
  auto ours_fp32_nt = [&] {
    CHECK_CUDA((fp32::kernels::hg_gemm<0, 0, 0>(0, a, k, 0, b, k, 0, nullptr, c, n, 0, n, 1, m, n, k, 1, nullptr,
                                                fp32::kernels::HgNoEpilogue())));
  };
  auto cublas_fp32_nt = [&] {
    CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                             static_cast<int>(k), &one, b, static_cast<int>(k), a, static_cast<int>(k), &zero, ref,
                             static_cast<int>(n)));
  };
  const double flops = 2.0 * m * n * k;
  auto tflops = [&](float ms) { return flops / (ms * 1e-3) / 1e12; };

  struct Row {
    const char* name;
    float ours, theirs;
    double err;
  };
  std::vector<Row> rows;
  {
    const float t_ref = time_ms(cublas_fp32), t = time_ms(ours_fp32);
    cublas_fp32();
    ours_fp32();
    CHECK_CUDA(cudaDeviceSynchronize());
    rows.push_back({"FP32 (A B)    vs cublasSgemm", t, t_ref, rel_error(c, ref, static_cast<size_t>(m * n))});
  }
  {
    const float t_ref = time_ms(cublas_fp32_nt), t = time_ms(ours_fp32_nt);
    cublas_fp32_nt();
    ours_fp32_nt();
    CHECK_CUDA(cudaDeviceSynchronize());
    rows.push_back({"FP32 (A W^T)  vs cublasSgemm", t, t_ref, rel_error(c, ref, static_cast<size_t>(m * n))});
  }
  {
    const float t_ref = time_ms(cublas_tf32), t = time_ms(ours_tf32);
    cublas_fp32();  // the exact reference for the error
    ours_tf32();
    CHECK_CUDA(cudaDeviceSynchronize());
    rows.push_back({"TF32 (A B)    vs cublasGemmEx FAST_TF32", t, t_ref, rel_error(c, ref, static_cast<size_t>(m * n))});
  }
  std::printf("%-42s %10s %10s %10s %10s %8s %12s\n", "", "ours ms", "cuBLAS ms", "ours TF/s", "cuBLAS TF/s", "ratio",
              "rel err");
  for (const Row& r : rows)
    std::printf("%-42s %10.3f %10.3f %10.2f %10.2f %7.1f%% %12.2e\n", r.name, r.ours, r.theirs, tflops(r.ours),
                tflops(r.theirs), 100.0 * r.theirs / r.ours, r.err);
  std::printf("(relative error = max |ours - cuBLAS FP32| / max |cuBLAS FP32|; TF32 rounds its inputs to 10 bits)\n");
  CHECK_CUBLAS(cublasDestroy(handle));
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(ref);
  return 0;
}
