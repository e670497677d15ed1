// Launch configurations CUDA refuses fail; hg_launch returns the error and,
// as it ends with cudaGetLastError(), clears it. A valid launch still works
// after them.
#include "hg_test.cuh"

// The cuda-host layer says cudaErrorInvalidConfiguration, as CUDA documents
// and older drivers do; CUDA 13 drivers say cudaErrorInvalidValue.
static bool refused(cudaError_t e) {
#ifdef HG_CUDA_HOST
  return e == cudaErrorInvalidConfiguration;
#else
  return e == cudaErrorInvalidConfiguration || e == cudaErrorInvalidValue;
#endif
}

__global__ void store_index(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = static_cast<int>(threadIdx.x); }

int main() {
  int* dout = nullptr;
  CHECK_CUDA(cudaMalloc(&dout, 2048 * sizeof(int)));
  CHECK(refused(hg_launch(store_index, dim3(1), dim3(1025), 0, dout)));
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(refused(hg_launch(store_index, dim3(1), dim3(64, 32), 0, dout)));
  CHECK(refused(hg_launch(store_index, dim3(1), dim3(0), 0, dout)));
  CHECK(refused(hg_launch(store_index, dim3(0), dim3(32), 0, dout)));
  CHECK(refused(hg_launch(store_index, dim3(2, 0), dim3(32), 0, dout)));
  CHECK(refused(hg_launch(store_index, dim3(1), dim3(1, 1, 65), 0, dout)));
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  // An earlier error still pending is what the next launch returns.
  CHECK(cudaMemcpy(nullptr, dout, 4, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  CHECK(hg_launch(store_index, dim3(1), dim3(32), 0, dout) == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK_CUDA(hg_launch(store_index, dim3(2), dim3(1024), 0, dout));
  int out[2048];
  CHECK_CUDA(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 2048; ++i) CHECK(out[i] == i % 1024);
  CHECK_CUDA(cudaFree(dout));
  std::printf("OK\n");
  return 0;
}
