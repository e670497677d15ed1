// A block reduction through warp shuffles (__shfl_xor_sync within warps,
// __shfl_down_sync across the warps' partial sums), and every lane's
// result of the shuffles and votes against CUDA's definitions.
#include "hg_test.cuh"

#include <vector>

constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ float warp_sum_xor(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFull, v, offset);
  return v;  // every lane holds the sum
}

// Sums x[0, n) into sums[blockIdx.x]; 256 threads a block.
__global__ void block_sum(const float* __restrict__ x, float* __restrict__ sums, int n) {
  __shared__ float partial[32];
  const int lane = static_cast<int>(threadIdx.x) % warpSize, warp = static_cast<int>(threadIdx.x) / warpSize;
  float v = 0.0f;
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n;
       i += static_cast<int>(blockDim.x * gridDim.x))
    v += x[i];
  v = warp_sum_xor(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = static_cast<int>(blockDim.x) / warpSize;
    float p = lane < warps ? partial[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) p += __shfl_down_sync(kFull, p, offset);
    if (lane == 0) sums[blockIdx.x] = p;
  }
}

// Per lane of a 64-thread block: the shuffles and votes, 9 results each.
__global__ void warp_ops(int* out) {
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t % 32;
  const int v = 100 * t;
  int* o = out + 9 * t;
  o[0] = __shfl_sync(kFull, v, 5);                 // broadcast lane 5
  o[1] = __shfl_sync(kFull, v, lane + 3, 16);      // rotate within 16-lane segments
  o[2] = __shfl_up_sync(kFull, v, 2);              // lanes 0, 1 keep their own
  o[3] = __shfl_down_sync(kFull, v, 4, 8);         // lanes past their 8-lane segment keep their own
  o[4] = __shfl_xor_sync(kFull, v, 1);             // swap pairs
  o[5] = static_cast<int>(__ballot_sync(kFull, lane % 3 == 0));
  o[6] = __any_sync(kFull, t == 40);
  o[7] = __all_sync(kFull, lane < 31);
  o[8] = static_cast<int>(__shfl_down_sync(kFull, static_cast<float>(v) + 0.5f, 1) * 2.0f);
  __syncwarp();
}

int main() {
  // The reduction: integers so that every order gives the same sum.
  const int n = 5000, blocks = 4;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 17 - 8);
  float *dx = nullptr, *dsums = nullptr;
  CHECK_CUDA(cudaMalloc(&dx, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dsums, blocks * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(hg_launch(block_sum, dim3(blocks), dim3(256), 0, dx, dsums, n));
  std::vector<float> sums(blocks);
  CHECK_CUDA(cudaMemcpy(sums.data(), dsums, blocks * sizeof(float), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    float want = 0.0f;
    for (int i = b * 256; i < n; i += blocks * 256)
      for (int j = i; j < i + 256 && j < n; ++j) want += x[j];
    CHECK(sums[b] == want);
  }

  // The shuffles, lane by lane.
  const int threads = 64;
  int* dout = nullptr;
  CHECK_CUDA(cudaMalloc(&dout, 9 * threads * sizeof(int)));
  CHECK_CUDA(hg_launch(warp_ops, dim3(1), dim3(threads), 0, dout));
  std::vector<int> out(9 * threads);
  CHECK_CUDA(cudaMemcpy(out.data(), dout, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < threads; ++t) {
    const int lane = t % 32, base = t - lane;
    const int* o = &out[9 * t];
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l) ballot |= (l % 3 == 0 ? 1u : 0u) << l;
    CHECK(o[0] == 100 * (base + 5));
    CHECK(o[1] == 100 * (base + (lane & ~15) + ((lane + 3) & 15)));
    CHECK(o[2] == 100 * (lane < 2 ? t : t - 2));
    CHECK(o[3] == 100 * ((lane & 7) + 4 >= 8 ? t : t + 4));
    CHECK(o[4] == 100 * (base + (lane ^ 1)));
    CHECK(static_cast<unsigned>(o[5]) == ballot);
    CHECK(o[6] == (base == 32 ? 1 : 0));
    CHECK(o[7] == 0);
    CHECK(o[8] == 2 * 100 * (lane == 31 ? t : t + 1) + 1);
  }
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dsums));
  CHECK_CUDA(cudaFree(dout));
  std::printf("OK\n");
  return 0;
}
