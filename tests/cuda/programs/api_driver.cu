// Drives the API of the generated tests/cuda model `ew` (tests/cuda/
// cuda_backend_test.cpp writes it beside this file): misuse gives the
// documented status codes, a caller's arena works like init()'s own, and a
// captured graph replays with new input written between replays.
#include <cstdio>
#include <cstring>
#include <vector>

#include "ew.h"

#define EXPECT(cond)                                              \
  do {                                                            \
    if (!(cond)) {                                                \
      std::printf("FAILED line %d: %s\n", __LINE__, #cond);      \
      return 1;                                                   \
    }                                                             \
  } while (0)

int main() {
  float *x = nullptr, *y = nullptr, *out = nullptr;
  EXPECT(cudaMalloc(&x, ew::kXSize * sizeof(float)) == cudaSuccess);
  EXPECT(cudaMalloc(&y, ew::kYSize * sizeof(float)) == cudaSuccess);
  EXPECT(cudaMalloc(&out, ew::kOutSize * sizeof(float)) == cudaSuccess);
  std::vector<float> hx(ew::kXSize), hy(ew::kYSize, 0.5f), hout(ew::kOutSize);
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = static_cast<float>(i % 7) - 3.0f;
  EXPECT(cudaMemcpy(x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  EXPECT(cudaMemcpy(y, hy.data(), hy.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  cudaStream_t stream = nullptr;
  EXPECT(cudaStreamCreate(&stream) == cudaSuccess);

  ew::Model model;
  EXPECT(ew::run(&model, x, y, out, stream) == ew::kNotInitialized);
  EXPECT(ew::replay(&model, stream) == ew::kNotCaptured);
  EXPECT(ew::init(nullptr) == ew::kNullPointer);
  // A caller's arena, misaligned and then aligned.
  unsigned char* arena = nullptr;
  EXPECT(cudaMalloc(reinterpret_cast<void**>(&arena), ew::kDeviceArenaBytes + ew::kArenaAlignment) == cudaSuccess);
  EXPECT(ew::init(&model, arena + 1) == ew::kMisalignedArena);
  EXPECT(ew::init(&model, arena) == ew::kOk);
  EXPECT(!model.owns_arena && model.arena == arena);
  EXPECT(ew::run(&model, nullptr, y, out, stream) == ew::kNullPointer);
  EXPECT(ew::run(&model, x, y, out, stream) == ew::kOk);
  EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);
  EXPECT(cudaMemcpy(hout.data(), out, hout.size() * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  const std::vector<float> first = hout;
  ew::release(&model);
  EXPECT(model.weights == nullptr && model.arena == nullptr);

  // init()'s own arena; a graph captured, replayed on new input.
  EXPECT(ew::init(&model) == ew::kOk);
  EXPECT(model.owns_arena);
  EXPECT(ew::capture(&model, x, y, out, stream) == ew::kOk);
  EXPECT(cudaMemset(out, 0, hout.size() * sizeof(float)) == cudaSuccess);
  EXPECT(ew::replay(&model, stream) == ew::kOk);
  EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);
  EXPECT(cudaMemcpy(hout.data(), out, hout.size() * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  EXPECT(std::memcmp(hout.data(), first.data(), hout.size() * sizeof(float)) == 0);
  for (float& v : hx) v = -v;
  EXPECT(cudaMemcpy(x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  EXPECT(ew::replay(&model, stream) == ew::kOk);
  EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);
  EXPECT(cudaMemcpy(hout.data(), out, hout.size() * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  EXPECT(std::memcmp(hout.data(), first.data(), hout.size() * sizeof(float)) != 0);
  ew::release(&model);
  ew::release(&model);  // twice is harmless
  cudaFree(arena);
  cudaFree(x);
  cudaFree(y);
  cudaFree(out);
  cudaStreamDestroy(stream);
  std::printf("OK\n");
  return 0;
}
