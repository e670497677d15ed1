// The tensor cores as the cuda-host layer emulates them, against CUDA's
// definitions: one warp's mma.sync (m16n8k8 TF32, m16n8k16 FP16 and BF16)
// with each lane's fragment registers placed by the PTX ISA's tables
// (written out here independently of the GEMM kernels), and nvcuda::wmma
// 16x16x16 on halves. Operands are small integers, so every order of the
// sums gives the same floats and results must match exactly. TF32 operands
// go in unrounded too: the tensor cores read 19 bits of each, truncating.
// Prints OK. With the argument differing_fragments, lanes hand wmma
// fragments loaded from different addresses, which must abort.
#include <cstring>
#include <string>
#include <vector>

#include "hg_test.cuh"

#if !defined(HG_CUDA_HOST)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#endif

// d += a b on one warp's fragments.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if defined(HG_CUDA_HOST)
  ::hg_cuda_host::mma_sync(::hg_cuda_host::MmaKind::kTf32, d, a, b);
#else
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
template <bool kBf16>
__device__ __forceinline__ void mma_k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if defined(HG_CUDA_HOST)
  namespace h = ::hg_cuda_host;
  h::mma_sync(kBf16 ? h::MmaKind::kBf16 : h::MmaKind::kF16, d, a, b);
#else
  if (kBf16)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// D = C + A B for A 16x8 (row-major), B 8x8 (B[k * 8 + n]), C and D 16x8,
// TF32 operands passed as their float bits. Fragments, g = lane / 4,
// t = lane % 4: a0 A(g, t), a1 A(g+8, t), a2 A(g, t+4), a3 A(g+8, t+4);
// b0 B(t, g), b1 B(t+4, g); c0 C(g, 2t), c1 C(g, 2t+1), c2 C(g+8, 2t),
// c3 C(g+8, 2t+1).
__global__ void mma_tf32_tile(const float* a, const float* b, const float* c, float* d) {
  const int lane = static_cast<int>(threadIdx.x), g = lane / 4, t = lane % 4;
  const unsigned af[4] = {__float_as_uint(a[g * 8 + t]), __float_as_uint(a[(g + 8) * 8 + t]),
                          __float_as_uint(a[g * 8 + t + 4]), __float_as_uint(a[(g + 8) * 8 + t + 4])};
  const unsigned bf[2] = {__float_as_uint(b[t * 8 + g]), __float_as_uint(b[(t + 4) * 8 + g])};
  float acc[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
  mma_tf32(acc, af, bf);
  d[g * 8 + 2 * t] = acc[0];
  d[g * 8 + 2 * t + 1] = acc[1];
  d[(g + 8) * 8 + 2 * t] = acc[2];
  d[(g + 8) * 8 + 2 * t + 1] = acc[3];
}

// Two 16-bit elements in one register, the first in the low half.
template <class H>
__device__ __forceinline__ unsigned pack(H lo, H hi) {
  unsigned short l, h;
  memcpy(&l, &lo, 2);
  memcpy(&h, &hi, 2);
  return static_cast<unsigned>(l) | (static_cast<unsigned>(h) << 16);
}

// D = C + A B for A 16x16 (row-major), B 16x8 (B[k * 8 + n]) of H. Register
// r of a holds A(g + 8 (r % 2), 2t + 8 (r / 2)) and the next column; b
// register r holds B(2t + 8r, g) and B(2t + 8r + 1, g).
template <class H, bool kBf16>
__global__ void mma_k16_tile(const H* a, const H* b, const float* c, float* d) {
  const int lane = static_cast<int>(threadIdx.x), g = lane / 4, t = lane % 4;
  unsigned af[4], bf[2];
  for (int r = 0; r < 4; ++r) {
    const int row = g + 8 * (r % 2), col = 2 * t + 8 * (r / 2);
    af[r] = pack(a[row * 16 + col], a[row * 16 + col + 1]);
  }
  for (int r = 0; r < 2; ++r) bf[r] = pack(b[(2 * t + 8 * r) * 8 + g], b[(2 * t + 8 * r + 1) * 8 + g]);
  float acc[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
  mma_k16<kBf16>(acc, af, bf);
  d[g * 8 + 2 * t] = acc[0];
  d[g * 8 + 2 * t + 1] = acc[1];
  d[(g + 8) * 8 + 2 * t] = acc[2];
  d[(g + 8) * 8 + 2 * t + 1] = acc[3];
}

// D = C + A B, 16x16x16 through nvcuda::wmma: A column-major (A(i, k) at
// a[k * 16 + i]), B row-major, C and D row-major. `spread` moves each
// lane's A by its lane number: lanes then hold different fragments.
__global__ void wmma_tile(const __half* a, const __half* b, const float* c, float* d, int spread) {
  namespace wmma = nvcuda::wmma;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(fa, a + spread * static_cast<int>(threadIdx.x), 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(acc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

static int small(int i) { return (i * 7 + 3) % 5 - 2; }  // -2 .. 2

template <class T>
static T* device(const std::vector<T>& h) {
  T* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, h.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}
// D (on the device) must equal `want` exactly; else names the first
// difference and exits.
static void expect_exact(const float* d, const std::vector<float>& want, const char* what) {
  std::vector<float> got(want.size());
  CHECK_CUDA(cudaMemcpy(got.data(), d, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      std::fprintf(stderr, "%s: D[%zu] = %g, expected %g\n", what, i, got[i], want[i]);
      std::exit(1);
    }
}

// A (m x kk) B (kk x n) + C, all small integers or exact sums: exact.
static std::vector<float> product(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c,
                                  int m, int n, int kk) {
  std::vector<float> d(c);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < kk; ++k) d[i * n + j] += a[i * kk + k] * b[k * n + j];
  return d;
}

static void check_tf32() {
  std::vector<float> a(16 * 8), b(8 * 8), c(16 * 8);
  for (int i = 0; i < 16 * 8; ++i) a[i] = static_cast<float>(small(i)), c[i] = static_cast<float>(small(i + 5));
  for (int i = 0; i < 8 * 8; ++i) b[i] = static_cast<float>(small(3 * i + 1));
  // A(0, 0) is 1 + 3 * 2^-12: the tensor cores read it as 1 (its low 13
  // bits dropped), where rounding to nearest would give 1 + 2^-10.
  a[0] = 1.0f + 3.0f / 4096.0f;
  std::vector<float> read(a);
  read[0] = 1.0f;
  const std::vector<float> want = product(read, b, c, 16, 8, 8);
  float *da = device(a), *db = device(b), *dc = device(c), *dd = device(std::vector<float>(16 * 8));
  CHECK_CUDA(hg_launch(mma_tf32_tile, dim3(1), dim3(32), nullptr, da, db, dc, dd));
  CHECK_CUDA(cudaDeviceSynchronize());
  expect_exact(dd, want, "mma.sync tf32");
  cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dd);
}

template <class H, bool kBf16>
static void check_k16(H (*to)(float), const char* what) {
  std::vector<float> a(16 * 16), b(16 * 8), c(16 * 8);
  for (int i = 0; i < 16 * 16; ++i) a[i] = static_cast<float>(small(i));
  for (int i = 0; i < 16 * 8; ++i) b[i] = static_cast<float>(small(3 * i + 2)), c[i] = static_cast<float>(small(i + 1));
  std::vector<H> ah(a.size()), bh(b.size());
  for (size_t i = 0; i < a.size(); ++i) ah[i] = to(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bh[i] = to(b[i]);
  const std::vector<float> want = product(a, b, c, 16, 8, 16);
  H *da = device(ah), *db = device(bh);
  float *dc = device(c), *dd = device(std::vector<float>(16 * 8));
  CHECK_CUDA(hg_launch(mma_k16_tile<H, kBf16>, dim3(1), dim3(32), nullptr, da, db, dc, dd));
  CHECK_CUDA(cudaDeviceSynchronize());
  expect_exact(dd, want, what);
  cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dd);
}

static __half to_half(float v) { return __float2half_rn(v); }
static __nv_bfloat16 to_bf16(float v) { return __float2bfloat16_rn(v); }

// spread 0: the product; 1: lanes' fragments differ (the layer aborts).
static void check_wmma(int spread) {
  std::vector<float> a(16 * 16 + 32), b(16 * 16), c(16 * 16), row_major_a(16 * 16);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(small(static_cast<int>(i)));
  for (int i = 0; i < 16 * 16; ++i) b[i] = static_cast<float>(small(5 * i + 1)), c[i] = static_cast<float>(small(i));
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 16; ++k) row_major_a[i * 16 + k] = a[k * 16 + i];
  const std::vector<float> want = product(row_major_a, b, c, 16, 16, 16);
  std::vector<__half> ah(a.size()), bh(b.size());
  for (size_t i = 0; i < a.size(); ++i) ah[i] = to_half(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bh[i] = to_half(b[i]);
  __half *da = device(ah), *db = device(bh);
  float *dc = device(c), *dd = device(std::vector<float>(16 * 16));
  CHECK_CUDA(hg_launch(wmma_tile, dim3(1), dim3(32), nullptr, da, db, dc, dd, spread));
  CHECK_CUDA(cudaDeviceSynchronize());
  expect_exact(dd, want, "wmma 16x16x16");
  cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dd);
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "differing_fragments") {
    check_wmma(1);
    std::printf("finished\n");
    return 0;
  }
  check_tf32();
  check_k16<__half, false>(to_half, "mma.sync f16");
  check_k16<__nv_bfloat16, true>(to_bf16, "mma.sync bf16");
  check_wmma(0);
  std::printf("OK\n");
  return 0;
}
