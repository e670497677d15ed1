// atomicAdd (int and float) into a histogram and a total, atomicMax (int).
#include "hg_test.cuh"

#include <vector>

__global__ void histogram(const int* __restrict__ values, int n, int* bins, float* total, int* largest) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const int v = values[i];
  atomicAdd(&bins[v % 8], 1);
  atomicAdd(total, static_cast<float>(v));
  atomicMax(largest, v);
}

int main() {
  const int n = 1000;
  std::vector<int> values(n);
  for (int i = 0; i < n; ++i) values[i] = (i * 37) % 101;
  int *dvalues = nullptr, *dbins = nullptr, *dlargest = nullptr;
  float* dtotal = nullptr;
  CHECK_CUDA(cudaMalloc(&dvalues, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dbins, 8 * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dtotal, sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dlargest, sizeof(int)));
  CHECK_CUDA(cudaMemcpy(dvalues, values.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dbins, 0, 8 * sizeof(int)));
  CHECK_CUDA(cudaMemset(dtotal, 0, sizeof(float)));
  CHECK_CUDA(cudaMemset(dlargest, 0, sizeof(int)));
  CHECK_CUDA(hg_launch(histogram, dim3((n + 127) / 128), dim3(128), 0, dvalues, n, dbins, dtotal, dlargest));
  int bins[8], largest = 0;
  float total = 0.0f;
  CHECK_CUDA(cudaMemcpy(bins, dbins, sizeof bins, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&total, dtotal, sizeof total, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&largest, dlargest, sizeof largest, cudaMemcpyDeviceToHost));
  int want_bins[8] = {0}, want_largest = 0;
  float want_total = 0.0f;
  for (int v : values) {
    ++want_bins[v % 8];
    want_total += static_cast<float>(v);
    want_largest = v > want_largest ? v : want_largest;
  }
  for (int b = 0; b < 8; ++b) CHECK(bins[b] == want_bins[b]);
  CHECK(total == want_total);  // integers below 2^24: exact in any order
  CHECK(largest == want_largest);
  CHECK_CUDA(cudaFree(dvalues));
  CHECK_CUDA(cudaFree(dbins));
  CHECK_CUDA(cudaFree(dtotal));
  CHECK_CUDA(cudaFree(dlargest));
  std::printf("OK\n");
  return 0;
}
