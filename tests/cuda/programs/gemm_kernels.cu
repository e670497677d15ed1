// The CUDA GEMM and convolution kernels (templates/cuda/kernels/gemm.inc,
// conv.inc) against plain CPU loops on seeded random data: every tile
// configuration, both layouts of each operand, batches and strided outputs,
// split-K, the GEMVs, implicit-GEMM convolutions with stride, padding,
// dilation and groups, the 1x1 direct path; sizes that are not multiples of
// the tiles, misaligned operands (scalar loads), an epilogue that checks
// the channel and index it is given. Prints OK. Built with HG_CUDA_TF32 as
// well (and HG_CUDA_TF32_MMA): configurations 0, 3 and 4 then run the
// tensor-core kernels, whose mma.sync and wmma the cuda-host layer
// emulates, and the loops round their operands to TF32 as the kernels
// must, expecting the same sums to 1e-5. Built
// with HG_CUDA_HALF, every case runs again with __half and __nv_bfloat16
// storage: operands, bias and outputs rounded to the type, the loops
// summing the same rounded operands in double (products of two halves are
// exact in float), and each output within one unit in the last place of
// its type of the loops' rounded result (the sums' order may tip a
// rounding).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace gemm_test {
namespace kernels {
// In the order each needs the ones before (clang-format would sort them).
// clang-format off
#include "../../../templates/cuda/kernels/common.inc"
#include "../../../templates/cuda/kernels/mma.inc"
#include "../../../templates/cuda/kernels/gemm.inc"
#include "../../../templates/cuda/kernels/conv.inc"
// clang-format on
}  // namespace kernels
}  // namespace gemm_test

using namespace gemm_test::kernels;

#define CHECK_CUDA(call)                                                                                    \
  do {                                                                                                      \
    const cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                                \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                         \
    }                                                                                                       \
  } while (0)

// Marks each output with its channel and index, so a wrong one shows.
struct TestEpilogue {
  float scale;
  __device__ float operator()(long channel, long index, float v) const {
    return v * scale + 0.25f * static_cast<float>(channel % 7) + 0.125f * static_cast<float>(index % 5);
  }
};
static float host_epilogue(float scale, long channel, long index, float v) {
  return v * scale + 0.25f * static_cast<float>(channel % 7) + 0.125f * static_cast<float>(index % 5);
}

static unsigned g_seed = 12345u;
static float rnd() {
  g_seed = g_seed * 1664525u + 1013904223u;
  return static_cast<float>((g_seed >> 8) & 0xffff) / 65536.0f - 0.5f;
}
// The storage types: float as it is; halves through the layer's conversions.
static float to_storage(float v, float*) { return v; }
static float from_storage(float v) { return v; }
static int storage_bits(float*) { return 24; }
#if defined(HG_CUDA_HALF)
static __half to_storage(float v, __half*) { return __float2half_rn(v); }
static __nv_bfloat16 to_storage(float v, __nv_bfloat16*) { return __float2bfloat16_rn(v); }
static float from_storage(__half v) { return __half2float(v); }
static float from_storage(__nv_bfloat16 v) { return __bfloat162float(v); }
static int storage_bits(__half*) { return 11; }
static int storage_bits(__nv_bfloat16*) { return 8; }
#endif
// v as stored in E.
template <class E>
static float rounded(float v) {
  return from_storage(to_storage(v, static_cast<E*>(nullptr)));
}

// Random values, as stored in E.
template <class E = float>
static std::vector<float> random_vec(long n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rounded<E>(rnd());
  return v;
}

// Device copies in E with `shift` elements of offset (1: misaligned for
// vector loads).
template <class E = float>
struct Dev {
  E* base = nullptr;
  E* p = nullptr;
  long n = 0;
  Dev(const std::vector<float>& h, long shift = 0) : n(static_cast<long>(h.size())) {
    CHECK_CUDA(cudaMalloc(&base, (h.size() + 8) * sizeof(E)));
    p = base + shift;
    std::vector<E> e(h.size());
    for (size_t i = 0; i < h.size(); ++i) e[i] = to_storage(h[i], static_cast<E*>(nullptr));
    if (!h.empty()) CHECK_CUDA(cudaMemcpy(p, e.data(), e.size() * sizeof(E), cudaMemcpyHostToDevice));
  }
  ~Dev() { cudaFree(base); }
  std::vector<float> get() const {
    std::vector<E> e(static_cast<size_t>(n));
    CHECK_CUDA(cudaMemcpy(e.data(), p, e.size() * sizeof(E), cudaMemcpyDeviceToHost));
    std::vector<float> h(e.size());
    for (size_t i = 0; i < e.size(); ++i) h[i] = from_storage(e[i]);
    return h;
  }
};

// An operand as a configuration's products take it: with HG_CUDA_TF32, the
// tensor-core tiles (0, 3, 4) round it to TF32's 11 significant bits, to
// nearest with ties away from zero; the others, and the GEMVs, keep FP32.
template <int CFG, bool kGemv = false>
static float operand(float v) {
#if defined(HG_CUDA_TF32)
  if (!kGemv && (CFG == 0 || CFG == 3 || CFG == 4)) {
    int e = 0;
    const double m = std::frexp(static_cast<double>(v), &e);
    return static_cast<float>(std::ldexp(std::round(std::ldexp(m, 11)), e - 11));
  }
#endif
  return v;
}

static int g_failures = 0;
static const char* g_type = "float";  // of the cases running
// Within 1e-5 of the largest output, and with half storage (`bits`
// significant bits) one unit in the last place of each output besides.
static void compare(const char* what, const std::vector<float>& got, const std::vector<float>& want, int bits = 24) {
  double ref = 0;
  for (size_t i = 0; i < want.size(); ++i) ref = std::fmax(ref, std::fabs(static_cast<double>(want[i])));
  const double base = 1e-5 * (ref > 1 ? ref : 1);
  double worst = 0, diff = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    const double ulp = bits < 24 ? std::ldexp(std::fabs(static_cast<double>(want[i])), 1 - bits) : 0.0;
    if (!(d <= base + ulp)) worst = std::fmax(worst, d), diff = d;
    if (d != d) worst = INFINITY;
  }
  if (worst > 0) {
    std::printf("%s (%s): max diff %g beyond tolerance (max ref %g, last %g)\n", what, g_type, worst, ref, diff);
    ++g_failures;
  }
}

// A GEMM case: layouts, batch, sizes, strided output, bias, split-K.
struct GemmCase {
  int am, bm;  // 0: K contiguous, 1: the other axis
  long batch, m, n, k;
  long c_pad;  // extra columns per output row (c_ld = n + c_pad)
  bool bias;
  int splits;
  long shift;  // misalignment of the operands
};

template <int CFG, int AM, int BM, bool kGemv = false, int MR = 8, class E = float>
static void run_gemm(const char* name, GemmCase t) {
  const long a_ld = AM == 0 ? t.k + (t.shift ? 1 : 0) : t.m, b_ld = BM == 0 ? t.k : t.n;
  const long a_sb = AM == 0 ? t.m * a_ld : t.k * a_ld, b_sb = BM == 0 ? t.n * b_ld : t.k * b_ld;
  const long c_ld = t.n + t.c_pad, c_sb = t.m * c_ld, channels = c_ld;
  std::vector<float> a = random_vec<E>(t.batch * a_sb), b = random_vec<E>(t.batch * b_sb),
                     bias = random_vec<E>(channels);
  std::vector<float> c(static_cast<size_t>(t.batch * c_sb), 7.0f), want = c;
  for (long p = 0; p < t.batch; ++p)
    for (long i = 0; i < t.m; ++i)
      for (long j = 0; j < t.n; ++j) {
        double s = 0;
        for (long kk = 0; kk < t.k; ++kk) {
          const float av = AM == 0 ? a[p * a_sb + i * a_ld + kk] : a[p * a_sb + kk * a_ld + i];
          const float bv = BM == 0 ? b[p * b_sb + j * b_ld + kk] : b[p * b_sb + kk * b_ld + j];
          s += static_cast<double>(operand<CFG, kGemv>(av)) * operand<CFG, kGemv>(bv);
        }
        const long idx = p * c_sb + i * c_ld + j, ch = (p * c_sb) % channels + j;
        want[idx] = rounded<E>(host_epilogue(0.5f, ch, idx, static_cast<float>(s) + (t.bias ? bias[ch] : 0.0f)));
      }
  Dev<E> da(a, t.shift), db(b, t.shift), dbias(bias), dc(c, t.shift);
  Dev<float> partial(std::vector<float>(static_cast<size_t>(t.splits * t.batch * t.m * t.n)));
  if (kGemv) {
    CHECK_CUDA((hg_gemv<MR, AM, BM>(0, da.p, a_ld, a_sb, db.p, b_ld, b_sb, t.bias ? dbias.p : nullptr, dc.p, c_ld,
                                    c_sb, channels, t.batch, t.m, t.n, t.k, TestEpilogue{0.5f})));
  } else {
    CHECK_CUDA((hg_gemm<CFG, AM, BM>(0, da.p, a_ld, a_sb, db.p, b_ld, b_sb, t.bias ? dbias.p : nullptr, dc.p, c_ld,
                                     c_sb, channels, t.batch, t.m, t.n, t.k, t.splits, partial.p,
                                     TestEpilogue{0.5f})));
  }
  compare(name, dc.get(), want, storage_bits(static_cast<E*>(nullptr)));
}

struct ConvCase {
  long n, c, h, w, f, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  bool bias;
  int splits;
};

template <int CFG, int KH, int KW, bool k1x1 = false, class E = float>
static void run_conv(const char* name, ConvCase t) {
  const long oh = (t.h + 2 * t.ph - t.dh * (t.kh - 1) - 1) / t.sh + 1;
  const long ow = (t.w + 2 * t.pw - t.dw * (t.kw - 1) - 1) / t.sw + 1;
  const long cg = t.c / t.groups, fg = t.f / t.groups;
  std::vector<float> x = random_vec<E>(t.n * t.c * t.h * t.w), w = random_vec<E>(t.f * cg * t.kh * t.kw);
  std::vector<float> bias = random_vec<E>(t.f), y(static_cast<size_t>(t.n * t.f * oh * ow), 3.0f), want = y;
  for (long img = 0; img < t.n; ++img)
    for (long f = 0; f < t.f; ++f)
      for (long oy = 0; oy < oh; ++oy)
        for (long ox = 0; ox < ow; ++ox) {
          const long grp = f / fg;
          double s = 0;
          for (long c = 0; c < cg; ++c)
            for (long ky = 0; ky < t.kh; ++ky)
              for (long kx = 0; kx < t.kw; ++kx) {
                const long iy = oy * t.sh - t.ph + ky * t.dh, ix = ox * t.sw - t.pw + kx * t.dw;
                if (iy < 0 || iy >= t.h || ix < 0 || ix >= t.w) continue;
                s += static_cast<double>(operand<CFG>(x[((img * t.c + grp * cg + c) * t.h + iy) * t.w + ix])) *
                     operand<CFG>(w[((f * cg + c) * t.kh + ky) * t.kw + kx]);
              }
          const long idx = ((img * t.f + f) * oh + oy) * ow + ox;
          want[idx] = rounded<E>(host_epilogue(2.0f, f, idx, static_cast<float>(s) + (t.bias ? bias[f] : 0.0f)));
        }
  Dev<E> dx(x), dw(w), dbias(bias), dy(y);
  Dev<float> partial(std::vector<float>(static_cast<size_t>(t.splits * t.n * t.f * oh * ow)));
  if (k1x1) {
    CHECK_CUDA((hg_conv2d_1x1<CFG>(0, dx.p, dw.p, t.bias ? dbias.p : nullptr, dy.p, t.n, t.c, t.h * t.w, t.f,
                                   t.groups, t.splits, partial.p, TestEpilogue{2.0f})));
  } else {
    CHECK_CUDA((hg_conv2d_gemm<CFG, KH, KW>(0, dx.p, dw.p, t.bias ? dbias.p : nullptr, dy.p, t.n, t.c, t.h, t.w, t.f,
                                            oh, ow, t.sh, t.sw, t.ph, t.pw, t.dh, t.dw, t.groups, t.splits, partial.p,
                                            TestEpilogue{2.0f})));
  }
  compare(name, dy.get(), want, storage_bits(static_cast<E*>(nullptr)));
}

// Every case in storage type E.
template <class E>
static void all_cases() {
  // Every configuration, row-major A times N-contiguous B, edges in m, n, k.
  run_gemm<0, 0, 1, false, 8, E>("cfg0 nn", {0, 1, 1, 133, 130, 21, 0, true, 1, 0});
  run_gemm<1, 0, 1, false, 8, E>("cfg1 nn", {0, 1, 1, 70, 67, 35, 0, true, 1, 0});
  run_gemm<2, 0, 1, false, 8, E>("cfg2 nn", {0, 1, 2, 37, 45, 51, 0, false, 1, 0});
  run_gemm<3, 0, 1, false, 8, E>("cfg3 nn", {0, 1, 1, 66, 131, 19, 0, true, 1, 0});
  run_gemm<4, 0, 1, false, 8, E>("cfg4 nn", {0, 1, 1, 131, 66, 19, 0, true, 1, 0});
  // Every layout, batches, strided output rows, misaligned operands.
  run_gemm<1, 0, 0, false, 8, E>("cfg1 nt (dense)", {0, 0, 2, 36, 40, 52, 3, true, 1, 0});
  run_gemm<1, 1, 1, false, 8, E>("cfg1 tn", {1, 1, 2, 36, 40, 52, 0, false, 1, 0});
  run_gemm<1, 1, 0, false, 8, E>("cfg1 tt", {1, 0, 1, 65, 33, 17, 5, true, 1, 0});
  run_gemm<2, 0, 0, false, 8, E>("cfg2 nt misaligned", {0, 0, 1, 20, 36, 44, 0, true, 1, 1});
  run_gemm<0, 1, 0, false, 8, E>("cfg0 tt", {1, 0, 1, 40, 140, 33, 0, true, 1, 0});
  // Split-K: k not a multiple of the splits' share, with a batch.
  run_gemm<2, 0, 1, false, 8, E>("cfg2 split 3", {0, 1, 2, 33, 34, 300, 0, true, 3, 0});
  run_gemm<0, 0, 0, false, 8, E>("cfg0 split 2", {0, 0, 1, 20, 36, 100, 2, true, 2, 0});
  // The tensor-core configurations over several K-tiles: edges, split-K, a
  // shift of one element (scalar loads) and of 4 (vector loads, rows not
  // 16-byte aligned in halves).
  run_gemm<0, 0, 1, false, 8, E>("cfg0 nn deep", {0, 1, 1, 130, 136, 200, 0, true, 1, 0});
  run_gemm<3, 1, 1, false, 8, E>("cfg3 tn split 2", {1, 1, 2, 70, 129, 160, 0, true, 2, 0});
  run_gemm<4, 0, 0, false, 8, E>("cfg4 nt shift 1", {0, 0, 1, 129, 70, 77, 0, true, 1, 1});
  run_gemm<0, 1, 0, false, 8, E>("cfg0 tt shift 4", {1, 0, 1, 72, 40, 96, 0, false, 1, 4});
  // Rows 16-byte aligned in floats and halves, so that the mma.sync kernels
  // take them: every operand layout, tile edges in m, n and k, a batch, a
  // strided output, split-K.
  run_gemm<3, 1, 0, false, 8, E>("cfg3 tn mma edges", {1, 0, 2, 136, 133, 72, 0, true, 1, 0});
  run_gemm<4, 0, 1, false, 8, E>("cfg4 nn mma split 3", {0, 1, 1, 200, 264, 344, 0, true, 3, 0});
  run_gemm<0, 1, 1, false, 8, E>("cfg0 tn mma strided", {1, 1, 1, 40, 48, 24, 3, false, 1, 0});
  // GEMV: m from 1 to 8, both layouts of B, a transposed A, tails in k.
  run_gemm<0, 0, 0, true, 1, E>("gemv kc m1", {0, 0, 1, 1, 37, 300, 0, true, 1, 0});
  run_gemm<0, 0, 0, true, 4, E>("gemv kc m3", {0, 0, 2, 3, 21, 131, 0, true, 1, 0});
  run_gemm<0, 0, 0, true, 8, E>("gemv kc m8 misaligned", {0, 0, 1, 8, 9, 64, 0, false, 1, 1});
  run_gemm<0, 1, 0, true, 2, E>("gemv kc ta", {1, 0, 1, 2, 17, 40, 0, true, 1, 0});
  run_gemm<0, 0, 1, true, 1, E>("gemv nc m1", {0, 1, 1, 1, 70, 45, 0, true, 1, 0});
  run_gemm<0, 1, 1, true, 4, E>("gemv nc m4 ta", {1, 1, 2, 4, 33, 20, 1, true, 1, 0});
  // Convolutions: 3x3 padded, batch 2, every configuration.
  run_conv<4, 3, 3, false, E>("conv cfg4 3x3", {2, 5, 9, 11, 130, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, 1});
  run_conv<1, 3, 3, false, E>("conv cfg1 3x3 stride 2", {2, 6, 13, 12, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, false, 1});
  run_conv<2, 3, 2, false, E>("conv cfg2 groups dilation", {1, 4, 5, 6, 4, 3, 2, 1, 2, 2, 1, 2, 1, 2, true, 1});
  run_conv<3, 7, 7, false, E>("conv cfg3 7x7 stem", {2, 3, 20, 18, 10, 7, 7, 2, 2, 3, 3, 1, 1, 1, true, 1});
  run_conv<4, 1, 1, false, E>("conv cfg4 1x1 stride 2", {2, 12, 9, 9, 70, 1, 1, 2, 2, 0, 0, 1, 1, 1, true, 1});
  // Weights rows 16-byte aligned in floats and halves (c * kh * kw a
  // multiple of 8): with HG_CUDA_TF32_MMA the TF32 mma.sync kernel gathers.
  run_conv<4, 3, 3, false, E>("conv cfg4 3x3 aligned", {2, 8, 9, 11, 130, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, 1});
  run_conv<3, 3, 3, false, E>("conv cfg3 3x3 stride 2 dilation split 2 aligned",
                              {1, 16, 13, 12, 70, 3, 3, 2, 2, 2, 2, 2, 2, 1, true, 2});
  run_conv<2, 3, 3, false, E>("conv 1x1 input pad 3", {1, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 1, 1, 1, true, 1});
  run_conv<2, 3, 3, false, E>("conv one channel per group, 2 filters",
                              {1, 3, 7, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 3, true, 1});
  run_conv<2, 3, 3, false, E>("conv split 4", {1, 40, 4, 4, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, 4});
  run_conv<1, 1, 1, true, E>("conv 1x1 direct groups", {2, 8, 5, 6, 6, 1, 1, 1, 1, 0, 0, 1, 1, 2, true, 1});
  run_conv<2, 1, 1, true, E>("conv 1x1 direct split", {1, 64, 4, 4, 10, 1, 1, 1, 1, 0, 0, 1, 1, 1, false, 2});
}

int main() {
  all_cases<float>();
#if defined(HG_CUDA_HALF)
  // The half cases on an sm_80-like device (mma.sync), then on one that runs
  // Hopper's warpgroup products (wgmma), which the layer emulates, with its
  // operands copied by cp.async and by TMA (one product at a time).
  const char* const kinds[][2] = {{"__half", "__nv_bfloat16"},
                                  {"__half (wgmma, cp.async)", "__nv_bfloat16 (wgmma, cp.async)"},
                                  {"__half (wgmma, TMA)", "__nv_bfloat16 (wgmma, TMA)"}};
  for (int kind = 0; kind < 3; ++kind) {
    hg_wgmma_ready() = kind > 0;
    hg_wgmma_tma() = kind == 2;
    g_type = kinds[kind][0];
    all_cases<__half>();
    g_type = kinds[kind][1];
    all_cases<__nv_bfloat16>();
  }
#endif
  if (g_failures) return 1;
  std::printf("OK\n");
  return 0;
}
