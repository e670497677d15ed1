// A grid-stride elementwise kernel over a 2-D grid of 2-D blocks:
// y[i] = a * x[i] + b, every element written exactly once.
#include "hg_test.cuh"

#include <vector>

__global__ void __launch_bounds__(128) axpb(const float* __restrict__ x, float* __restrict__ y, float a, float b,
                                            int n) {
  const int threads_per_block = static_cast<int>(blockDim.x * blockDim.y);
  const int block = static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x);
  const int stride = threads_per_block * static_cast<int>(gridDim.x * gridDim.y);
  for (int i = block * threads_per_block + static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x); i < n;
       i += stride)
    y[i] = fmaf(a, __ldg(&x[i]), b);
}

// Counts the writes to each element: a grid-stride loop that hits an
// element twice or misses one shows up here.
__global__ void count_visits(int* visits, int n) {
  const int threads_per_block = static_cast<int>(blockDim.x * blockDim.y);
  const int block = static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x);
  const int stride = threads_per_block * static_cast<int>(gridDim.x * gridDim.y);
  for (int i = block * threads_per_block + static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x); i < n;
       i += stride)
    visits[i] += 1;
}

int main() {
  const int n = 10007;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = 0.25f * static_cast<float>(i % 97) - 3.0f;
  float *dx = nullptr, *dy = nullptr;
  int* dv = nullptr;
  CHECK_CUDA(cudaMalloc(&dx, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dy, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dv, n * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dv, 0, n * sizeof(int)));
  const dim3 grid(3, 2), block(32, 4);
  CHECK_CUDA(hg_launch(axpb, grid, block, 0, dx, dy, 1.5f, -0.5f, n));
  CHECK_CUDA(hg_launch(count_visits, grid, block, 0, dv, n));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<int> visits(n);
  CHECK_CUDA(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(visits.data(), dv, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    CHECK(y[i] == 1.5f * x[i] - 0.5f);
    CHECK(visits[i] == 1);
  }
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  CHECK_CUDA(cudaFree(dv));
  std::printf("OK\n");
  return 0;
}
