// A 4096^3 FP32 GEMM: hybgen's CUDA kernel (templates/cuda/kernels/gemm.inc)
// against cublasSgemm, and its TF32 tensor-core paths (HG_CUDA_TF32: wmma;
// with HG_CUDA_TF32_MMA: mma.sync fed by cp.async, the "TF32" rows) against
// cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32. Benchmark only (links
// cuBLAS; the generated code never does). See README.md:
//   nvcc -O3 -arch=sm_90a -std=c++17 bench_gemm_cublas.cu -lcublas -o bench_gemm_cublas
//   ./bench_gemm_cublas [M N K]
// The FP16 kernels (HG_CUDA_HALF, what --precision fp16 runs: Hopper's
// wgmma where the build has sm_90a code, else mma.sync) against cublasGemmEx
// with CUDA_R_16F operands and C, FP32 compute; build with
//   nvcc -O3 -std=c++17 -gencode 'arch=compute_90a,code=sm_90a' ...
// on a Hopper GPU, or the wgmma rows are skipped.
// Each kernel is timed with CUDA events, the median of 20 runs after 3
// warm-up runs, and checked against cuBLAS FP32 (max |diff| / max |ref|):
// a result over 1e-4 (FP32) or 1e-2 (TF32, about 1e-3 when right) is
// marked WRONG and the program exits with status 1. The TF32 kernel is also
// checked, untimed, at ragged edges (M, N, K not multiples of the tile) and
// with split-K, and the other tile shapes of its mma.sync kernel that fit
// 48 KiB of shared memory are timed next to the default (HgMmaTileDefault).
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// The kernel files as the generated code pastes them, each in the order
// its successors need (clang-format would sort them): with exact FP32, the
// TF32 paths, and half storage.
// clang-format off
namespace fp32 {
namespace kernels {
#include "../../templates/cuda/kernels/common.inc"
#include "../../templates/cuda/kernels/mma.inc"
#include "../../templates/cuda/kernels/gemm.inc"
}  // namespace kernels
}  // namespace fp32
#define HG_CUDA_TF32 1
namespace tf32_wmma {  // the default TF32 path: nvcuda::wmma
namespace kernels {
#include "../../templates/cuda/kernels/common.inc"
#include "../../templates/cuda/kernels/mma.inc"
#include "../../templates/cuda/kernels/gemm.inc"
}  // namespace kernels
}  // namespace tf32_wmma
#define HG_CUDA_TF32_MMA 1
namespace tf32 {  // with HG_CUDA_TF32_MMA: the mma.sync + cp.async kernel
namespace kernels {
#include "../../templates/cuda/kernels/common.inc"
#include "../../templates/cuda/kernels/mma.inc"
#include "../../templates/cuda/kernels/gemm.inc"
}  // namespace kernels
}  // namespace tf32
#define HG_CUDA_HALF 1
namespace fp16 {  // --precision fp16: the wgmma kernel on sm_90a, mma.sync elsewhere
namespace kernels {
#include "../../templates/cuda/kernels/common.inc"
#include "../../templates/cuda/kernels/mma.inc"
#include "../../templates/cuda/kernels/gemm.inc"
}  // namespace kernels
}  // namespace fp16
// clang-format on

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

// C = A B (row-major, A m x k, B k x n) through the TF32 mma.sync kernel
// with tile TC (hg_gemm's arguments for AM 0, BM 1, one product).
template <class TC>
static void tf32_tile(const float* a, const float* b, float* c, long m, long n, long k) {
  namespace K = tf32::kernels;
  K::HgGemmArgs<float> g = K::hg_gemm_args<float>();
  g.a = a;
  g.b = b;
  g.c = c;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a_ld = k;
  g.b_ld = n;
  g.c_ld = n;
  g.channels = n;
  g.k_split = k;
  g.a_vec = K::hg_gemm_vec(a, k, 0);
  g.b_vec = K::hg_gemm_vec(b, n, 0);
  g.c_vec = K::hg_gemm_vec(c, n, 0);
  g.a_row16 = K::hg_gemm_row16(a, k, 0);
  g.b_row16 = K::hg_gemm_row16(b, n, 0);
  cudaError_t e = cudaSuccess;
  if (!K::HgGemmMma<TC, 0, 1, 0, 0, false, K::HgNoEpilogue>::launch(0, g, 1, K::HgNoEpilogue(), &e)) {
    std::fprintf(stderr, "the mma.sync kernel does not take these operands (K and N multiples of 4)\n");
    std::exit(1);
  }
  CHECK_CUDA(e);
}

// Rounds n floats to halves (the FP16 GEMM's operands).
__global__ void to_half(const float* in, __half* out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    out[i] = __float2half_rn(in[i]);
}

__global__ void to_float(const __half* in, float* out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    out[i] = __half2float(in[i]);
}

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
  auto ours_tf32_nt = [&] {
    CHECK_CUDA((tf32::kernels::hg_gemm<0, 0, 0>(0, a, k, 0, b, k, 0, nullptr, c, n, 0, n, 1, m, n, k, 1, nullptr,
                                                tf32::kernels::HgNoEpilogue())));
  };
  auto cublas_tf32_nt = [&] {
    CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                              static_cast<int>(k), &one, b, CUDA_R_32F, static_cast<int>(k), a, CUDA_R_32F,
                              static_cast<int>(k), &zero, ref, CUDA_R_32F, static_cast<int>(n),
                              CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
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
    std::string name;
    float ours, theirs;
    double err, tol;
  };
  std::vector<Row> rows;
  constexpr double kFp32Tol = 1e-4, kTf32Tol = 1e-2;
  {
    const float t_ref = time_ms(cublas_fp32), t = time_ms(ours_fp32);
    cublas_fp32();
    ours_fp32();
    CHECK_CUDA(cudaDeviceSynchronize());
    rows.push_back({"FP32 (A B)    vs cublasSgemm", t, t_ref, rel_error(c, ref, static_cast<size_t>(m * n)), kFp32Tol});
  }
  {
    const float t_ref = time_ms(cublas_fp32_nt), t = time_ms(ours_fp32_nt);
    cublas_fp32_nt();
    ours_fp32_nt();
    CHECK_CUDA(cudaDeviceSynchronize());
    rows.push_back({"FP32 (A W^T)  vs cublasSgemm", t, t_ref, rel_error(c, ref, static_cast<size_t>(m * n)), kFp32Tol});
  }
  {
    const float t_ref = time_ms(cublas_tf32), t = time_ms(ours_tf32);
    cublas_fp32();  // the exact reference for the error
    ours_tf32();
    CHECK_CUDA(cudaDeviceSynchronize());
    rows.push_back(
        {"TF32 (A B)    vs cublasGemmEx FAST_TF32", t, t_ref, rel_error(c, ref, static_cast<size_t>(m * n)), kTf32Tol});
  }
  {
    auto ours_wmma = [&] {
      CHECK_CUDA((tf32_wmma::kernels::hg_gemm<0, 0, 1>(0, a, k, 0, b, n, 0, nullptr, c, n, 0, n, 1, m, n, k, 1, nullptr,
                                                       tf32_wmma::kernels::HgNoEpilogue())));
    };
    const float t_ref = time_ms(cublas_tf32), t = time_ms(ours_wmma);
    cublas_fp32();
    ours_wmma();
    CHECK_CUDA(cudaDeviceSynchronize());
    rows.push_back({"TF32 wmma (A B, the default) vs FAST_TF32", t, t_ref,
                    rel_error(c, ref, static_cast<size_t>(m * n)), kTf32Tol});
  }
  {
    const float t_ref = time_ms(cublas_tf32_nt), t = time_ms(ours_tf32_nt);
    cublas_fp32_nt();
    ours_tf32_nt();
    CHECK_CUDA(cudaDeviceSynchronize());
    rows.push_back(
        {"TF32 (A W^T)  vs cublasGemmEx FAST_TF32", t, t_ref, rel_error(c, ref, static_cast<size_t>(m * n)), kTf32Tol});
  }
  // The mma.sync kernel's other tiles (A B), against the same cuBLAS time.
  {
    const float t_ref = time_ms(cublas_tf32);
    auto variant = [&](const char* name, auto launch) {
      const float t = time_ms(launch);
      cublas_fp32();
      launch();
      CHECK_CUDA(cudaDeviceSynchronize());
      rows.push_back({name, t, t_ref, rel_error(c, ref, static_cast<size_t>(m * n)), kTf32Tol});
    };
    variant("  tile 128x128 k16 3st 2x2 warps (default)",
            [&] { tf32_tile<tf32::kernels::HgMmaTile<128, 128, 16, 3, 2, 2, 2>>(a, b, c, m, n, k); });
    variant("  tile 128x128 k16 3st 2x4 warps 64x32",
            [&] { tf32_tile<tf32::kernels::HgMmaTile<128, 128, 16, 3, 2, 4, 2>>(a, b, c, m, n, k); });
    variant("  tile 128x256 k16 2st 2x4 warps",
            [&] { tf32_tile<tf32::kernels::HgMmaTile<128, 256, 16, 2, 2, 4, 1>>(a, b, c, m, n, k); });
    variant("  tile 128x256 k8  4st 2x4 warps",
            [&] { tf32_tile<tf32::kernels::HgMmaTile<128, 256, 8, 4, 2, 4, 1>>(a, b, c, m, n, k); });
    variant("  tile 256x128 k16 2st 4x2 warps",
            [&] { tf32_tile<tf32::kernels::HgMmaTile<256, 128, 16, 2, 4, 2, 1>>(a, b, c, m, n, k); });
  }
  // FP16 (halves in, FP32 sums, C in FP16 as --precision fp16 stores it): hybgen's wgmma and mma.sync
  // kernels against cuBLAS, and cuBLAS with C in FP32.
  struct Ref {
    std::string name;
    float ms;
    double err;
  };
  std::vector<Ref> refs;
  constexpr double kFp16Tol = 1e-2;
  {
    __half *ah, *bh, *ch;
    CHECK_CUDA(cudaMalloc(&ah, ha.size() * sizeof(__half)));
    CHECK_CUDA(cudaMalloc(&bh, hb.size() * sizeof(__half)));
    CHECK_CUDA(cudaMalloc(&ch, static_cast<size_t>(m * n) * sizeof(__half)));
    to_half<<<1024, 256>>>(a, ah, ha.size());
    to_half<<<1024, 256>>>(b, bh, hb.size());
    CHECK_CUDA(cudaGetLastError());
    auto cublas_fp16 = [&](cudaDataType_t c_type, void* out) {
      CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                static_cast<int>(k), &one, bh, CUDA_R_16F, static_cast<int>(n), ah, CUDA_R_16F,
                                static_cast<int>(k), &zero, out, c_type, static_cast<int>(n), CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT));
    };
    const float t16 = time_ms([&] { cublas_fp16(CUDA_R_16F, ch); });
    cublas_fp32();
    cublas_fp16(CUDA_R_16F, ch);
    to_float<<<1024, 256>>>(ch, c, static_cast<size_t>(m * n));
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    refs.push_back({"cuBLAS FP16 (A B, C half) [the reference]", t16, rel_error(c, ref, static_cast<size_t>(m * n))});
    CHECK_CUDA(fp16::kernels::hg_probe_device());
    const bool wgmma = fp16::kernels::hg_wgmma_ready();
    for (const int kind : {2, 1, 0}) {  // wgmma with TMA copies, with cp.async copies, mma.sync
      const bool use_wgmma = kind > 0;
      if (use_wgmma && !wgmma) {
        if (kind == 2) std::printf("wgmma: not run (no sm_90a code for this device)\n");
        continue;
      }
      fp16::kernels::hg_wgmma_ready() = use_wgmma;
      fp16::kernels::hg_wgmma_tma() = kind == 2;
      for (const bool nt : {false, true}) {  // B N-contiguous (A B), or K-contiguous (A W^T)
        auto ours = [&] {
          if (nt) {
            CHECK_CUDA((fp16::kernels::hg_gemm<0, 0, 0>(0, ah, k, 0, bh, k, 0, nullptr, ch, n, 0, n, 1, m, n, k, 1,
                                                        nullptr, fp16::kernels::HgNoEpilogue())));
          } else {
            CHECK_CUDA((fp16::kernels::hg_gemm<0, 0, 1>(0, ah, k, 0, bh, n, 0, nullptr, ch, n, 0, n, 1, m, n, k, 1,
                                                        nullptr, fp16::kernels::HgNoEpilogue())));
          }
        };
        const float t = time_ms(ours);
        if (nt) {
          cublas_fp32_nt();  // B read as W^T: the same halves' bits, another matrix
        } else {
          cublas_fp32();
        }
        ours();
        to_float<<<1024, 256>>>(ch, c, static_cast<size_t>(m * n));
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaDeviceSynchronize());
        rows.push_back({std::string(kind == 2   ? "FP16 wgmma TMA"
                                    : kind == 1 ? "FP16 wgmma cp.async"
                                                : "FP16 mma.sync") +
                            (nt ? " (A W^T)" : " (A B)  ") + " vs cuBLAS FP16 (A B, C half)",
                        t, t16, rel_error(c, ref, static_cast<size_t>(m * n)), kFp16Tol});
      }
    }
    fp16::kernels::hg_wgmma_ready() = wgmma;
    fp16::kernels::hg_wgmma_tma() = true;
    const float t32 = time_ms([&] { cublas_fp16(CUDA_R_32F, c); });
    cublas_fp32();
    cublas_fp16(CUDA_R_32F, c);
    CHECK_CUDA(cudaDeviceSynchronize());
    refs.push_back({"cuBLAS FP16 (A B, C float)", t32, rel_error(c, ref, static_cast<size_t>(m * n))});
    cudaFree(ah);
    cudaFree(bh);
    cudaFree(ch);
  }
  // Untimed checks of the TF32 path: ragged edges (the same leading
  // dimensions, M - 3, N - 5, K - 7: partial 16-byte copies along K of A
  // and N of B), and split-K in 3 through scratch.
  struct Check {
    const char* name;
    double err;
  };
  std::vector<Check> checks;
  {
    const long me = m > 3 ? m - 3 : m, ne = n > 5 ? n - 5 : n, ke = k > 7 ? k - 7 : k;
    CHECK_CUDA(cudaMemset(c, 0, static_cast<size_t>(m * n) * sizeof(float)));
    CHECK_CUDA(cudaMemset(ref, 0, static_cast<size_t>(m * n) * sizeof(float)));
    CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(ne), static_cast<int>(me),
                             static_cast<int>(ke), &one, b, static_cast<int>(n), a, static_cast<int>(k), &zero, ref,
                             static_cast<int>(n)));
    CHECK_CUDA((tf32::kernels::hg_gemm<0, 0, 1>(0, a, k, 0, b, n, 0, nullptr, c, n, 0, n, 1, me, ne, ke, 1, nullptr,
                                                tf32::kernels::HgNoEpilogue())));
    CHECK_CUDA(cudaDeviceSynchronize());
    checks.push_back({"TF32 (A B) at M-3, N-5, K-7", rel_error(c, ref, static_cast<size_t>(m * n))});
  }
  {
    float* partial;
    CHECK_CUDA(cudaMalloc(&partial, 3 * static_cast<size_t>(m * n) * sizeof(float)));
    cublas_fp32();
    CHECK_CUDA((tf32::kernels::hg_gemm<0, 0, 1>(0, a, k, 0, b, n, 0, nullptr, c, n, 0, n, 1, m, n, k, 3, partial,
                                                tf32::kernels::HgNoEpilogue())));
    CHECK_CUDA(cudaDeviceSynchronize());
    checks.push_back({"TF32 (A B) split-K 3", rel_error(c, ref, static_cast<size_t>(m * n))});
    cudaFree(partial);
  }
  std::printf("%-42s %10s %10s %10s %10s %8s %12s\n", "", "ours ms", "cuBLAS ms", "ours TF/s", "cuBLAS TF/s", "ratio",
              "rel err");
  bool wrong = false;
  for (const Row& r : rows) {
    const bool bad = !(r.err <= r.tol);
    wrong = wrong || bad;
    std::printf("%-42s %10.3f %10.3f %10.2f %10.2f %7.1f%% %12.2e%s\n", r.name.c_str(), r.ours, r.theirs,
                tflops(r.ours), tflops(r.theirs), 100.0 * r.theirs / r.ours, r.err, bad ? "  WRONG" : "");
  }
  for (const Check& ch : checks) {
    const bool bad = !(ch.err <= kTf32Tol);
    wrong = wrong || bad;
    std::printf("%-42s %10s %10s %10s %10s %8s %12.2e%s\n", ch.name, "-", "-", "-", "-", "-", ch.err,
                bad ? "  WRONG" : "");
  }
  for (const Ref& r : refs) {
    const bool bad = !(r.err <= kFp16Tol);
    wrong = wrong || bad;
    std::printf("%-42s %10s %10.3f %10s %10.2f %8s %12.2e%s\n", r.name.c_str(), "-", r.ms, "-", tflops(r.ms), "-",
                r.err, bad ? "  WRONG" : "");
  }
  std::printf("(relative error = max |ours - cuBLAS FP32| / max |cuBLAS FP32|; TF32 rounds its inputs to 10 bits)\n");
  CHECK_CUBLAS(cublasDestroy(handle));
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(ref);
  if (wrong) std::printf("WRONG results above\n");
  return wrong ? 1 : 0;
}
