// A shared-memory tiled matrix multiply, C = A * B with A MxK and B KxN
// (row-major, sizes not multiples of the tile), against a plain loop.
// With an argument ("time") it times a 64x64x64 launch instead.
#include "hg_test.cuh"

#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

constexpr int kTile = 16;

__global__ void matmul(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                       int n, int k) {
  __shared__ float ta[kTile][kTile];
  __shared__ float tb[kTile][kTile];
  const int row = static_cast<int>(blockIdx.y * kTile + threadIdx.y);
  const int col = static_cast<int>(blockIdx.x * kTile + threadIdx.x);
  float acc = 0.0f;
  for (int t = 0; t < k; t += kTile) {
    const int ak = t + static_cast<int>(threadIdx.x), bk = t + static_cast<int>(threadIdx.y);
    ta[threadIdx.y][threadIdx.x] = row < m && ak < k ? a[row * k + ak] : 0.0f;
    tb[threadIdx.y][threadIdx.x] = bk < k && col < n ? b[bk * n + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < kTile; ++i) acc = fmaf(ta[threadIdx.y][i], tb[i][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

static void run(int m, int n, int k, std::vector<float>& a, std::vector<float>& b, std::vector<float>& c) {
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  CHECK_CUDA(cudaMalloc(&da, a.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&db, b.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dc, c.size() * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  const dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile), block(kTile, kTile);
  CHECK_CUDA(hg_launch(matmul, grid, block, 0, da, db, dc, m, n, k));
  CHECK_CUDA(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dc));
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "time") == 0) {
    const int s = 64;
    std::vector<float> a(s * s, 1.0f), b(s * s, 2.0f), c(s * s);
    float *da = nullptr, *db = nullptr, *dc = nullptr;
    CHECK_CUDA(cudaMalloc(&da, a.size() * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&db, b.size() * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dc, c.size() * sizeof(float)));
    const dim3 grid(s / kTile, s / kTile), block(kTile, kTile);
    CHECK_CUDA(hg_launch(matmul, grid, block, 0, da, db, dc, s, s, s));  // warm-up
    const int reps = 50;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) CHECK_CUDA(hg_launch(matmul, grid, block, 0, da, db, dc, s, s, s));
    CHECK_CUDA(cudaDeviceSynchronize());
    const auto t1 = std::chrono::steady_clock::now();
    std::printf("matmul 64x64x64: %.1f us per launch\n",
                std::chrono::duration<double, std::micro>(t1 - t0).count() / reps);
    return 0;
  }
  const int m = 37, n = 45, k = 51;
  std::vector<float> a(m * k), b(k * n), c(m * n, -1.0f);
  for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>((i * 5) % 11) / 11.0f - 0.5f;
  run(m, n, k, a, b, c);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float want = 0.0f;
      for (int p = 0; p < k; ++p) want += a[i * k + p] * b[p * n + j];
      CHECK(std::fabs(c[i * n + j] - want) <= 1e-4f);
    }
  std::printf("OK\n");
  return 0;
}
