// Device memory: 256-byte aligned allocations, memset, copies each way.
#include "hg_test.cuh"

#include <cstdint>
#include <vector>

int main() {
  const size_t n = 1000;
  unsigned char *da = nullptr, *db = nullptr;
  CHECK_CUDA(cudaMalloc(&da, n));
  CHECK_CUDA(cudaMalloc(&db, n + 3));
  CHECK(reinterpret_cast<std::uintptr_t>(da) % 256 == 0);
  CHECK(reinterpret_cast<std::uintptr_t>(db) % 256 == 0);

  std::vector<unsigned char> host(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(i * 7 + 1);
  CHECK_CUDA(cudaMemset(da, 0xab, n));
  CHECK_CUDA(cudaMemcpy(back.data(), da, n, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i) CHECK(back[i] == 0xab);

  CHECK_CUDA(cudaMemcpy(da, host.data(), n, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, da, n, cudaMemcpyDeviceToDevice));
  CHECK_CUDA(cudaMemsetAsync(db + 10, 0, 5, 0));
  CHECK_CUDA(cudaMemcpyAsync(back.data(), db, n, cudaMemcpyDefault, 0));
  CHECK_CUDA(cudaDeviceSynchronize());
  for (size_t i = 0; i < n; ++i) CHECK(back[i] == (i >= 10 && i < 15 ? 0 : host[i]));

  CHECK(cudaMemcpy(nullptr, host.data(), n, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(nullptr));
  std::printf("OK\n");
  return 0;
}
