// Stream capture records (does not run) async copies, a memset and
// launches; cudaGraphLaunch replays them in order, reading the input as it
// is at replay time.
#include "hg_test.cuh"

__global__ void scale_add(const float* __restrict__ x, float* __restrict__ y, float s, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i] += s * x[i];
}

int main() {
  const int n = 300;
  static float host_in[n], host_out[n];
  float *dx = nullptr, *dy = nullptr;
  CHECK_CUDA(cudaMalloc(&dx, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dy, n * sizeof(float)));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreate(&stream));
  for (int i = 0; i < n; ++i) host_out[i] = -7.0f;

  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK_CUDA(cudaMemcpyAsync(dx, host_in, n * sizeof(float), cudaMemcpyHostToDevice, stream));
  CHECK_CUDA(cudaMemsetAsync(dy, 0, n * sizeof(float), stream));
  CHECK_CUDA(hg_launch(scale_add, dim3((n + 127) / 128), dim3(128), stream, dx, dy, 2.0f, n));
  CHECK_CUDA(hg_launch(scale_add, dim3((n + 63) / 64), dim3(64), stream, dx, dy, 0.5f, n));
  CHECK_CUDA(cudaMemcpyAsync(host_out, dy, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  for (int i = 0; i < n; ++i) CHECK(host_out[i] == -7.0f);  // recorded, not run

  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 1; replay <= 2; ++replay) {
    for (int i = 0; i < n; ++i) host_in[i] = static_cast<float>(replay * 1000 + i);
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    for (int i = 0; i < n; ++i) CHECK(host_out[i] == 2.5f * static_cast<float>(replay * 1000 + i));
  }
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));

  // A synchronous copy during a global-mode capture invalidates it.
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemcpy(dx, host_in, sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess);
  CHECK(cudaStreamEndCapture(stream, &graph) == cudaErrorStreamCaptureInvalidated);
  CHECK(graph == nullptr);
  (void)cudaGetLastError();

  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  std::printf("OK\n");
  return 0;
}
