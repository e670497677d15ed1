// What the cuda-host test programs share: hg_launch for real CUDA (the
// cuda-host layer's cuda_runtime.h provides it for the CPU), and checks
// that print where they failed and exit with status 1.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#ifndef HG_CUDA_HOST
template <typename... Params, typename... Args>
static cudaError_t hg_launch(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args... args) {
  kernel<<<grid, block, 0, stream>>>(static_cast<Params>(args)...);
  return cudaGetLastError();
}
#endif

#define CHECK_CUDA(call)                                                                                    \
  do {                                                                                                      \
    const cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                                \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                         \
    }                                                                                                       \
  } while (0)

#define CHECK(cond)                                                               \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)
