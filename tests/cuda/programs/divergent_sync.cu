// Synchronisation that a GPU hangs on (or leaves undefined): the cuda-host
// layer must abort with a message instead of hanging. The argument picks
// the case. Only compiled for a GPU, never run there.
#include "hg_test.cuh"

#include <cstring>

// Only a quarter of the threads reach the barrier; the others exit.
__global__ void half_sync(float* x) {
  if (threadIdx.x < 16) {
    x[threadIdx.x] = 1.0f;
    __syncthreads();  // the other 48 threads never get here
  }
  x[threadIdx.x] += 1.0f;
}

// Two halves of the block wait at different barriers.
__global__ void two_barriers(float* x) {
  if (threadIdx.x % 2 == 0) {
    x[threadIdx.x] = 1.0f;
    __syncthreads();
  } else {
    x[threadIdx.x] = 2.0f;
    __syncthreads();
  }
}

// A full-mask shuffle that half of the warp never reaches.
__global__ void half_warp_shuffle(float* x) {
  if (threadIdx.x % 32 >= 16) return;
  x[threadIdx.x] = __shfl_xor_sync(0xffffffffu, x[threadIdx.x], 1);
}

int main(int argc, char** argv) {
  float* dx = nullptr;
  CHECK_CUDA(cudaMalloc(&dx, 64 * sizeof(float)));
  CHECK_CUDA(cudaMemset(dx, 0, 64 * sizeof(float)));
  const char* which = argc > 1 ? argv[1] : "half_sync";
  if (std::strcmp(which, "two_barriers") == 0)
    CHECK_CUDA(hg_launch(two_barriers, dim3(1), dim3(64), 0, dx));
  else if (std::strcmp(which, "half_warp_shuffle") == 0)
    CHECK_CUDA(hg_launch(half_warp_shuffle, dim3(1), dim3(64), 0, dx));
  else
    CHECK_CUDA(hg_launch(half_sync, dim3(2), dim3(64), 0, dx));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::printf("finished\n");
  return 0;
}
