// Runs the generated tiny_mlp on an NVIDIA GPU: the input copied to device
// memory, one run() on a stream, the result copied back and checked against
// values computed independently (examples/cmake-consumer/model/
// make_tiny_mlp.py); then the same inference captured once as a CUDA Graph
// and replayed, the way a serving loop calls it.
//
// Plain C++: the CUDA runtime API from the host, the kernels in the library
// that hybgen_add_model(... ARCH cuda) built. The same file runs on the CPU
// under the test-only cuda-host layer (tests/cuda/cuda_example_test.cpp).
#include <cmath>
#include <cstdio>

#include <cuda_runtime.h>

#include "expected_output.h"
#include "tiny_mlp.h"

namespace {

bool ok(cudaError_t error, const char* what) {
  if (error != cudaSuccess) std::printf("%s: %s\n", what, cudaGetErrorString(error));
  return error == cudaSuccess;
}

double worst_difference(const char* what, const float* prob) {
  double worst = 0;
  for (int i = 0; i < 3; ++i) {
    std::printf("%s prob[%d] = %.7f (expected %.7f)\n", what, i, prob[i], kExpectedOutput[i]);
    worst = std::fmax(worst, std::fabs(prob[i] - kExpectedOutput[i]));
  }
  return worst;
}

}  // namespace

int main() {
  float input[tiny::kDataSize];
  for (int i = 0; i < 8; ++i) input[i] = 0.25f * static_cast<float>(i) - 1.0f;
  float prob[tiny::kProbSize];

  float* device_input = nullptr;
  float* device_prob = nullptr;
  cudaStream_t stream = nullptr;
  if (!ok(cudaMalloc(&device_input, sizeof input), "cudaMalloc") ||
      !ok(cudaMalloc(&device_prob, sizeof prob), "cudaMalloc") || !ok(cudaStreamCreate(&stream), "stream") ||
      !ok(cudaMemcpy(device_input, input, sizeof input, cudaMemcpyHostToDevice), "upload"))
    return 1;

  // init() uploads the weights once and allocates the device arena.
  tiny::Model model;
  if (const int status = tiny::init(&model)) {
    std::printf("init() returned %d\n", status);
    return 1;
  }
  if (const int status = tiny::run(&model, device_input, device_prob, stream)) {
    std::printf("run() returned %d\n", status);
    return 1;
  }
  if (!ok(cudaMemcpyAsync(prob, device_prob, sizeof prob, cudaMemcpyDeviceToHost, stream), "download") ||
      !ok(cudaStreamSynchronize(stream), "run"))
    return 1;
  double worst = worst_difference("run", prob);

  // Captured once, replayed as often as needed: one launch for the whole model.
  if (tiny::capture(&model, device_input, device_prob, stream) != 0 || tiny::replay(&model, stream) != 0) {
    std::printf("capture() or replay() failed\n");
    return 1;
  }
  if (!ok(cudaMemcpyAsync(prob, device_prob, sizeof prob, cudaMemcpyDeviceToHost, stream), "download") ||
      !ok(cudaStreamSynchronize(stream), "replay"))
    return 1;
  worst = std::fmax(worst, worst_difference("replay", prob));

  tiny::release(&model);
  cudaFree(device_input);
  cudaFree(device_prob);
  cudaStreamDestroy(stream);
  std::printf("%s: max difference %.3g\n", worst < 1e-5 ? "OK" : "FAIL", worst);
  return worst < 1e-5 ? 0 : 1;
}
