// The row-wise, pooling and depthwise CUDA kernels (templates/cuda/kernels/
// {depthwise,depthwise_pointwise,pool,softmax,layer_norm,batch_norm,reduce}.inc)
// against plain CPU loops on seeded random data: every wrapper, sizes that
// are not multiples of the tiles, batch 1 and 2, strides, padding, dilation,
// epilogues. The kernel files are pasted into a namespace as the emitter
// pastes them. Prints OK, or what differed and exits with status 1.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace rows_model {
namespace kernels {
#include "../../../templates/cuda/kernels/common.inc"
#include "../../../templates/cuda/kernels/reduce_common.inc"
#include "../../../templates/cuda/kernels/depthwise.inc"
#include "../../../templates/cuda/kernels/depthwise_pointwise.inc"
#include "../../../templates/cuda/kernels/pool.inc"
#include "../../../templates/cuda/kernels/softmax.inc"
#include "../../../templates/cuda/kernels/layer_norm.inc"
#include "../../../templates/cuda/kernels/batch_norm.inc"
#include "../../../templates/cuda/kernels/reduce.inc"

// An epilogue that uses both its arguments: relu(v + channel / 8) - index * 1e-4.
struct TestEpilogue {
  float k;
  __device__ float operator()(long channel, long index, float v) const {
    const float t = v + static_cast<float>(channel) * 0.125f;
    return (t > 0.0f ? t : 0.0f) - static_cast<float>(index) * k;
  }
};
}  // namespace kernels
}  // namespace rows_model

using namespace rows_model::kernels;

namespace {

int failures = 0;

#define CHECK_CUDA(call)                                                                                    \
  do {                                                                                                      \
    const cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                                \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                         \
    }                                                                                                       \
  } while (0)

uint32_t seed = 12345;
float uniform(float lo, float hi) {
  seed = seed * 1664525u + 1013904223u;
  return lo + (hi - lo) * static_cast<float>(seed >> 8) / 16777216.0f;
}
std::vector<float> random_vector(long n, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& f : v) f = uniform(lo, hi);
  return v;
}

struct Device {
  float* p = nullptr;
  long n = 0;
  explicit Device(const std::vector<float>& v) : n(static_cast<long>(v.size())) {
    CHECK_CUDA(cudaMalloc(&p, (v.empty() ? 1 : v.size()) * sizeof(float)));
    if (!v.empty()) CHECK_CUDA(cudaMemcpy(p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  explicit Device(long count) : n(count) {
    CHECK_CUDA(cudaMalloc(&p, (count > 0 ? count : 1) * sizeof(float)));
    CHECK_CUDA(cudaMemset(p, 0xff, (count > 0 ? count : 1) * sizeof(float)));  // NaN: unwritten outputs show
  }
  ~Device() { cudaFree(p); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  std::vector<float> get() const {
    std::vector<float> v(static_cast<std::size_t>(n));
    CHECK_CUDA(cudaMemcpy(v.data(), p, v.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return v;
  }
};

// max |got - want| / max |want| within 1e-5 (and every value finite).
void compare(const char* what, int index, const std::vector<float>& got, const std::vector<double>& want) {
  double max_diff = 0.0, max_ref = 0.0;
  bool finite = got.size() == want.size();
  for (std::size_t i = 0; finite && i < got.size(); ++i) {
    if (!std::isfinite(got[i])) {
      finite = false;
      break;
    }
    max_diff = std::fmax(max_diff, std::fabs(got[i] - want[i]));
    max_ref = std::fmax(max_ref, std::fabs(want[i]));
  }
  const double rel = max_ref > 0 ? max_diff / max_ref : max_diff;
  if (!finite || rel > 1e-5) {
    std::printf("%s case %d: %s (relative error %g)\n", what, index, finite ? "differs" : "non-finite or unwritten",
                rel);
    ++failures;
  }
}

double epilogue_ref(long channel, long index, double v, float k) {
  const double t = v + static_cast<double>(channel) * 0.125;
  return (t > 0.0 ? t : 0.0) - static_cast<double>(index) * k;
}

// ---- depthwise ----
struct DwCase {
  long n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
  bool bias, epilogue;
};

std::vector<double> depthwise_ref(const std::vector<float>& x, const std::vector<float>& wt, const float* bias,
                                  const DwCase& k, long oh, long ow, bool epilogue) {
  std::vector<double> y(static_cast<std::size_t>(k.n * k.c * oh * ow));
  for (long p = 0; p < k.n * k.c; ++p) {
    const long ch = p % k.c;
    for (long oy = 0; oy < oh; ++oy)
      for (long ox = 0; ox < ow; ++ox) {
        double acc = 0.0;
        for (long a = 0; a < k.kh; ++a)
          for (long b = 0; b < k.kw; ++b) {
            const long gy = oy * k.sh - k.ph + a * k.dh, gx = ox * k.sw - k.pw + b * k.dw;
            if (gy < 0 || gy >= k.h || gx < 0 || gx >= k.w) continue;
            acc += static_cast<double>(x[(p * k.h + gy) * k.w + gx]) * wt[(ch * k.kh + a) * k.kw + b];
          }
        if (bias) acc += bias[ch];
        const long i = (p * oh + oy) * ow + ox;
        y[i] = epilogue ? epilogue_ref(ch, i, acc, 1e-4f) : acc;
      }
  }
  return y;
}

void test_depthwise() {
  const DwCase cases[] = {
      {1, 3, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, false},     {2, 4, 13, 17, 3, 3, 1, 1, 1, 1, 1, 1, false, true},
      {1, 2, 70, 90, 3, 3, 1, 1, 1, 1, 1, 1, true, true},    {2, 3, 15, 20, 3, 3, 2, 2, 1, 1, 1, 1, true, false},
      {1, 2, 67, 131, 3, 3, 2, 2, 1, 1, 1, 1, true, true},   {1, 5, 14, 14, 5, 5, 1, 1, 2, 2, 1, 1, true, false},
      {2, 2, 33, 29, 5, 5, 2, 2, 2, 2, 1, 1, false, true},   {1, 3, 20, 45, 7, 7, 1, 1, 3, 3, 1, 1, true, true},
      {1, 4, 9, 11, 3, 1, 1, 1, 2, 0, 2, 1, true, false},    {2, 3, 10, 12, 2, 2, 1, 1, 0, 0, 1, 1, true, true},
      {1, 2, 12, 12, 3, 3, 1, 1, 2, 2, 2, 2, true, false},   {1, 6, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, true, false},
      {1, 3, 6, 6, 3, 3, 3, 3, 0, 0, 1, 1, false, false},    {1, 2, 8, 200, 3, 3, 1, 1, 0, 0, 1, 1, true, false},
  };
  int index = 0;
  for (const DwCase& k : cases) {
    const long oh = (k.h + 2 * k.ph - (k.dh * (k.kh - 1) + 1)) / k.sh + 1;
    const long ow = (k.w + 2 * k.pw - (k.dw * (k.kw - 1) + 1)) / k.sw + 1;
    const auto x = random_vector(k.n * k.c * k.h * k.w), wt = random_vector(k.c * k.kh * k.kw),
               b = random_vector(k.c);
    Device dx(x), dwt(wt), db(b), dy(k.n * k.c * oh * ow);
    const float* bias = k.bias ? db.p : nullptr;
    if (k.epilogue)
      CHECK_CUDA(hg_depthwise_conv2d(0, dx.p, dwt.p, bias, dy.p, k.n, k.c, k.h, k.w, oh, ow, k.kh, k.kw, k.sh, k.sw,
                                     k.ph, k.pw, k.dh, k.dw, TestEpilogue{1e-4f}));
    else
      CHECK_CUDA(hg_depthwise_conv2d(0, dx.p, dwt.p, bias, dy.p, k.n, k.c, k.h, k.w, oh, ow, k.kh, k.kw, k.sh, k.sw,
                                     k.ph, k.pw, k.dh, k.dw, HgNoEpilogue()));
    compare("depthwise", index++, dy.get(), depthwise_ref(x, wt, k.bias ? b.data() : nullptr, k, oh, ow, k.epilogue));
  }
}

// ---- pointwise + depthwise ----
struct PwdwCase {
  long n, cin, h, w, mid, kh, kw, sh, sw, ph, pw, dh, dw;
  int act;  // 0 none, 1 relu, 2 clip(0, 6)
  bool two_launches;
};

void test_pointwise_depthwise() {
  const PwdwCase cases[] = {
      {1, 5, 64, 64, 36, 3, 3, 1, 1, 1, 1, 1, 1, 2, false},
      {2, 3, 64, 48, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, false},
      {1, 8, 9, 11, 12, 5, 5, 1, 1, 2, 2, 1, 1, 0, false},
      {2, 8, 7, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 2, false},
      {1, 20, 14, 13, 72, 3, 3, 2, 2, 1, 1, 1, 1, 1, false},
      {1, 3, 16, 16, 272, 3, 3, 1, 1, 1, 1, 1, 1, 2, false},
      {1, 6, 10, 9, 45, 3, 1, 1, 1, 2, 0, 2, 1, 0, false},
      {1, 70, 12, 10, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, false},  // input channels over two chunks, a partial quad
      {2, 5, 11, 9, 7, 3, 3, 2, 1, 1, 1, 1, 1, 2, true},
      {1, 4, 40, 40, 6, 5, 5, 1, 1, 8, 8, 4, 4, 1, true},
  };
  int index = 0;
  for (const PwdwCase& k : cases) {
    const long oh = (k.h + 2 * k.ph - (k.dh * (k.kh - 1) + 1)) / k.sh + 1;
    const long ow = (k.w + 2 * k.pw - (k.dw * (k.kw - 1) + 1)) / k.sw + 1;
    const auto x = random_vector(k.n * k.cin * k.h * k.w), w1 = random_vector(k.mid * k.cin),
               b1 = random_vector(k.mid), w2 = random_vector(k.mid * k.kh * k.kw), b2 = random_vector(k.mid);
    // The reference: mid in double, then the depthwise convolution.
    std::vector<float> mid(static_cast<std::size_t>(k.n * k.mid * k.h * k.w));
    for (long n = 0; n < k.n; ++n)
      for (long m = 0; m < k.mid; ++m)
        for (long p = 0; p < k.h * k.w; ++p) {
          double acc = b1[m];
          for (long c = 0; c < k.cin; ++c) acc += static_cast<double>(w1[m * k.cin + c]) * x[(n * k.cin + c) * k.h * k.w + p];
          float v = static_cast<float>(acc);
          if (k.act == 1) v = v > 0.0f ? v : 0.0f;
          if (k.act == 2) v = v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
          mid[(n * k.mid + m) * k.h * k.w + p] = v;
        }
    const DwCase dw{k.n, k.mid, k.h, k.w, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, k.dh, k.dw, true, true};
    const auto want = depthwise_ref(mid, w2, b2.data(), dw, oh, ow, true);
    Device dx(x), dw1(w1), db1(b1), dw2(w2), db2(b2), dy(k.n * k.mid * oh * ow), scratch(k.n * k.mid * k.h * k.w);
    if (!k.two_launches && !hg_pwdw_fits(k.kh, k.kw, k.dh, k.dw)) {
      std::printf("pointwise_depthwise case %d: does not fit the fused kernel\n", index);
      ++failures;
    }
#define HG_PWDW_RUN(ACT, EPI)                                                                                       \
  (k.two_launches ? hg_pointwise_then_depthwise(0, dx.p, dw1.p, db1.p, dw2.p, db2.p, dy.p, scratch.p, k.n, k.cin, \
                                                k.h, k.w, k.mid, oh, ow, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, k.dh,  \
                                                k.dw, ACT, EPI)                                                      \
                  : hg_pointwise_depthwise(0, dx.p, dw1.p, db1.p, dw2.p, db2.p, dy.p, k.n, k.cin, k.h, k.w, k.mid,  \
                                           oh, ow, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, k.dh, k.dw, ACT, EPI))
    // Every case through TestEpilogue (fewer instantiations to build); the
    // printer test runs the op's examples without one.
    if (k.act == 0) CHECK_CUDA(HG_PWDW_RUN(HgPwdwActNone(), TestEpilogue{1e-4f}));
    if (k.act == 1) CHECK_CUDA(HG_PWDW_RUN(HgPwdwActRelu(), TestEpilogue{1e-4f}));
    if (k.act == 2) CHECK_CUDA(HG_PWDW_RUN((HgPwdwActClip{0.0f, 6.0f}), TestEpilogue{1e-4f}));
#undef HG_PWDW_RUN
    compare("pointwise_depthwise", index++, dy.get(), want);
  }
}

// ---- pooling ----
struct PoolCase {
  long n, c, h, w, kh, kw, sh, sw, ph, pw;
  int type;
  bool full, include_pad, global;
};

void test_pool() {
  const PoolCase cases[] = {
      {1, 3, 6, 7, 2, 2, 2, 2, 0, 0, 0, false, true, false},  {2, 2, 7, 7, 3, 3, 2, 2, 1, 1, 0, false, true, false},
      {1, 2, 6, 6, 3, 3, 2, 2, 1, 1, 1, true, true, false},   {1, 2, 6, 6, 3, 3, 2, 2, 1, 1, 1, true, false, false},
      {1, 2, 8, 8, 3, 3, 2, 2, 0, 0, 0, true, true, false},   {2, 3, 5, 4, 1, 1, 1, 1, 0, 0, 1, false, true, true},
      {1, 1, 2, 3, 2, 2, 1, 1, 0, 0, 2, false, true, false},  {1, 2, 19, 37, 3, 3, 2, 2, 1, 1, 0, false, true, false},
      {1, 3, 12, 33, 2, 2, 2, 2, 0, 0, 1, false, true, false}, {1, 2, 5, 40, 3, 3, 1, 1, 1, 1, 1, false, false, false},
      {1, 3, 9, 9, 1, 1, 1, 1, 0, 0, 1, false, true, true},   {1, 2, 7, 11, 1, 1, 1, 1, 0, 0, 0, false, true, true},
      {2, 3, 50, 47, 1, 1, 1, 1, 0, 0, 1, false, true, true}, {1, 70, 3, 3, 1, 1, 1, 1, 0, 0, 2, false, true, true},
      {1, 2, 9, 10, 4, 3, 3, 2, 2, 1, 1, true, false, false}, {1, 2, 9, 10, 4, 3, 3, 2, 2, 1, 2, true, true, false},
  };
  int index = 0;
  for (const PoolCase& k : cases) {
    long kh = k.kh, kw = k.kw, sh = k.sh, sw = k.sw, ph = k.ph, pw = k.pw, oh = 1, ow = 1;
    if (k.global) {
      kh = k.h, kw = k.w, sh = sw = 1, ph = pw = 0;
    } else {
      const long span_h = k.h + 2 * ph - kh, span_w = k.w + 2 * pw - kw;
      oh = (k.full ? (span_h + sh - 1) / sh : span_h / sh) + 1;
      ow = (k.full ? (span_w + sw - 1) / sw : span_w / sw) + 1;
    }
    const auto x = random_vector(k.n * k.c * k.h * k.w);
    std::vector<double> want(static_cast<std::size_t>(k.n * k.c * oh * ow));
    for (long p = 0; p < k.n * k.c; ++p)
      for (long oy = 0; oy < oh; ++oy)
        for (long ox = 0; ox < ow; ++ox) {
          long y0 = oy * sh - ph, x0 = ox * sw - pw;
          long y1 = std::min(y0 + kh, k.h + ph), x1 = std::min(x0 + kw, k.w + pw);
          const long padded = (y1 - y0) * (x1 - x0);
          y0 = std::max(y0, 0L), x0 = std::max(x0, 0L), y1 = std::min(y1, k.h), x1 = std::min(x1, k.w);
          double acc = k.type == 0 ? -3.40282347e+38 : 0.0;
          for (long yy = y0; yy < y1; ++yy)
            for (long xx = x0; xx < x1; ++xx) {
              const double v = x[(p * k.h + yy) * k.w + xx];
              acc = k.type == 0 ? std::max(acc, v) : acc + v;
            }
          if (k.type == 1) {
            const long count = k.include_pad ? padded : (y1 - y0) * (x1 - x0);
            acc = count > 0 ? acc / static_cast<double>(count) : 0.0;
          }
          want[(p * oh + oy) * ow + ox] = acc;
        }
    Device dx(x), dy(k.n * k.c * oh * ow);
    CHECK_CUDA(hg_pool2d(0, dx.p, dy.p, k.n * k.c, k.h, k.w, kh, kw, oh, ow, sh, sw, ph, pw, ph, pw, k.type,
                         k.include_pad, k.global));
    compare("pool", index++, dy.get(), want);
  }
}

// ---- softmax, layer norm ----
struct AxisCase {
  long outer, n, inner;
  float inv_t;
  bool log_output;
};

void test_softmax() {
  const AxisCase cases[] = {
      {2, 10, 1, 1.0f, false},  {2, 3, 4, 0.5f, false},   {1, 5, 1, 1.0f, true},      {3, 37, 1, 2.0f, false},
      {2, 5, 19, 1.0f, true},   {2, 64, 1, 1.0f, true},   {37, 100, 1, 1.0f, false},  {5, 250, 1, 1.0f, false},
      {3, 300, 1, 0.7f, true},  {2, 1000, 1, 1.0f, false}, {3, 2500, 1, 1.0f, true}, {2, 3, 70, 1.0f, false},
      {1, 40, 33, 1.0f, true},  {2, 1, 1, 1.0f, false},   {1, 600, 1, 1.0f, false},   {2, 3, 2, 1.0f, false},
  };
  int index = 0;
  for (const AxisCase& k : cases) {
    const auto x = random_vector(k.outer * k.n * k.inner, -4.0f, 4.0f);
    std::vector<double> want(x.size());
    for (long o = 0; o < k.outer; ++o)
      for (long in = 0; in < k.inner; ++in) {
        const long base = o * k.n * k.inner + in;
        double m = x[base];
        for (long i = 1; i < k.n; ++i) m = std::max(m, static_cast<double>(x[base + i * k.inner]));
        double s = 0;
        for (long i = 0; i < k.n; ++i) s += std::exp((x[base + i * k.inner] - m) * k.inv_t);
        for (long i = 0; i < k.n; ++i) {
          const double z = (x[base + i * k.inner] - m) * k.inv_t;
          want[base + i * k.inner] = k.log_output ? z - std::log(s) : std::exp(z) / s;
        }
      }
    Device dx(x), dy(static_cast<long>(x.size()));
    CHECK_CUDA(hg_softmax(0, dx.p, dy.p, k.outer, k.n, k.inner, k.inv_t, k.log_output));
    compare("softmax", index++, dy.get(), want);
  }
}

void test_layer_norm() {
  const AxisCase cases[] = {
      {4, 16, 1, 0, false},  {2, 5, 3, 0, false},  {3, 45, 1, 0, false},   {1, 6, 21, 0, false},
      {2, 300, 1, 0, false}, {9, 768, 1, 0, false}, {2, 1500, 1, 0, false}, {3, 7, 40, 0, false},
      {2, 1, 1, 0, false},   {17, 64, 1, 0, false}, {2, 100, 1, 0, false},
  };
  int index = 0;
  for (const AxisCase& k : cases) {
    const auto x = random_vector(k.outer * k.n * k.inner, -2.0f, 3.0f), g = random_vector(k.n), b = random_vector(k.n);
    const float eps = index % 2 ? 1e-3f : 1e-5f;
    std::vector<double> want(x.size());
    for (long o = 0; o < k.outer; ++o)
      for (long in = 0; in < k.inner; ++in) {
        const long base = o * k.n * k.inner + in;
        double mean = 0, var = 0;
        for (long i = 0; i < k.n; ++i) mean += x[base + i * k.inner];
        mean /= static_cast<double>(k.n);
        for (long i = 0; i < k.n; ++i) var += (x[base + i * k.inner] - mean) * (x[base + i * k.inner] - mean);
        const double inv_std = 1.0 / std::sqrt(var / static_cast<double>(k.n) + static_cast<double>(eps));
        for (long i = 0; i < k.n; ++i) want[base + i * k.inner] = (x[base + i * k.inner] - mean) * inv_std * g[i] + b[i];
      }
    Device dx(x), dg(g), db(b), dy(static_cast<long>(x.size()));
    CHECK_CUDA(hg_layer_norm(0, dx.p, dg.p, db.p, dy.p, k.outer, k.n, k.inner, eps));
    compare("layer_norm", index++, dy.get(), want);
  }
}

// ---- batch norm ----
void test_batch_norm() {
  const AxisCase cases[] = {{2, 3, 20, 0, false}, {1, 3, 4, 0, true}, {4, 3, 1, 0, false},
                            {2, 5, 3000, 0, true}, {3, 16, 49, 0, false}};
  int index = 0;
  for (const AxisCase& k : cases) {
    const bool fix_gamma = index % 2 == 1, in_place = k.log_output;
    const float eps = 1e-3f;
    const auto x = random_vector(k.outer * k.n * k.inner), g = random_vector(k.n), b = random_vector(k.n),
               m = random_vector(k.n), v = random_vector(k.n, 0.1f, 2.0f);
    std::vector<double> want(x.size());
    for (long c = 0; c < k.n; ++c) {
      const double scale = (fix_gamma ? 1.0 : g[c]) / std::sqrt(static_cast<double>(v[c]) + eps);
      const double shift = b[c] - m[c] * scale;
      for (long o = 0; o < k.outer; ++o)
        for (long i = 0; i < k.inner; ++i) {
          const long at = (o * k.n + c) * k.inner + i;
          want[at] = x[at] * scale + shift;
        }
    }
    Device dx(x), dg(g), db(b), dm(m), dv(v), dy(static_cast<long>(x.size()));
    float* out = in_place ? dx.p : dy.p;
    CHECK_CUDA(hg_batch_norm(0, dx.p, dg.p, db.p, dm.p, dv.p, out, k.outer, k.n, k.inner, eps, fix_gamma));
    compare("batch_norm", index++, in_place ? dx.get() : dy.get(), want);
  }
}

// ---- sum / mean ----
struct ReduceCase {
  std::vector<long> dims;
  std::vector<bool> reduced;
};

// The axes merged as gen/ops/cuda/norm_kernels.cpp merges them.
void test_reduce() {
  const ReduceCase cases[] = {
      {{3, 4}, {true, true}},
      {{2, 3, 5}, {false, false, true}},
      {{2, 3, 4}, {true, false, true}},
      {{2, 3, 4, 5}, {false, true, true, false}},
      {{2, 70, 3}, {false, true, false}},
      {{4, 1, 3000}, {false, true, true}},
      {{2, 3, 4, 5, 6}, {true, false, true, false, true}},
      {{5000}, {true}},
      {{6, 7, 40}, {true, true, false}},
      {{100, 33}, {false, true}},
      {{3, 1, 5}, {false, true, false}},
      {{2, 2, 3, 3, 2, 2, 3, 2}, {true, false, true, false, true, false, true, false}},
  };
  int index = 0;
  for (const ReduceCase& k : cases) {
    const std::size_t rank = k.dims.size();
    long total = 1;
    for (long d : k.dims) total *= d;
    struct Run {
      long size, stride;
      bool reduced;
    };
    std::vector<Run> runs;
    long stride = 1;
    for (int i = static_cast<int>(rank) - 1; i >= 0; --i) {
      if (k.dims[i] != 1) {
        if (!runs.empty() && runs.back().reduced == k.reduced[i]) runs.back().size *= k.dims[i];
        else runs.push_back({k.dims[i], stride, k.reduced[i]});
      }
      stride *= k.dims[i];
    }
    HgReduceAxes kept{0, {1, 1, 1, 1}, {0, 0, 0, 0}}, red{0, {1, 1, 1, 1}, {0, 0, 0, 0}};
    long n_out = 1, n_red = 1;
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
      HgReduceAxes& a = it->reduced ? red : kept;
      a.size[a.count] = static_cast<int>(it->size);
      a.stride[a.count] = it->stride;
      ++a.count;
      (it->reduced ? n_red : n_out) *= it->size;
    }
    const bool innermost_reduced = runs.empty() || runs.front().reduced;
    const bool mean = index % 2 == 1;
    const float scale = mean ? 1.0f / static_cast<float>(n_red) : 1.0f;
    // Reference: walk the input, accumulate into the output position.
    const auto x = random_vector(total);
    std::vector<double> want(static_cast<std::size_t>(n_out), 0.0);
    std::vector<long> idx(rank, 0);
    for (long i = 0; i < total; ++i) {
      long o = 0;
      for (std::size_t d = 0; d < rank; ++d)
        if (!k.reduced[d]) o = o * k.dims[d] + idx[d];
      want[o] += x[i];
      for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
        if (++idx[d] < k.dims[d]) break;
        idx[d] = 0;
      }
    }
    for (double& w : want) w *= mean ? 1.0 / static_cast<double>(n_red) : 1.0;
    Device dx(x), dy(n_out);
    CHECK_CUDA(hg_reduce_sum(0, dx.p, dy.p, n_out, n_red, kept, red, innermost_reduced, scale));
    compare("reduce", index++, dy.get(), want);
  }
}

}  // namespace

int main() {
  test_depthwise();
  test_pointwise_depthwise();
  test_pool();
  test_softmax();
  test_layer_norm();
  test_batch_norm();
  test_reduce();
  if (failures) return 1;
  std::printf("OK\n");
  return 0;
}
