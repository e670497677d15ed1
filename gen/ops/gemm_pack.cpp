// Packing for templates/kernels/gemm.inc, in the panel sizes the target
// registry gives (targets/target.cpp).
#include "ops/gemm_pack.h"

#include "ir/error.h"

namespace hybgen {
namespace {

void check_dims(long rows, long cols, long panel, const char* what) {
  if (rows < 0 || cols < 0 || panel <= 0)
    throw Error(std::string(what) + ": bad dimensions " + std::to_string(rows) + " x " + std::to_string(cols) +
                " with panel " + std::to_string(panel));
}

}  // namespace

std::vector<float> pack_b_panels(const float* b, long k, long n, long nr) {
  check_dims(k, n, nr, "pack_b_panels");
  const long panels = (n + nr - 1) / nr;
  std::vector<float> out(static_cast<size_t>(panels * nr * k), 0.0f);
  for (long p = 0; p < panels; ++p)
    for (long kk = 0; kk < k; ++kk) {
      float* const dst = out.data() + (p * k + kk) * nr;
      const float* const src = b + kk * n + p * nr;
      const long width = n - p * nr < nr ? n - p * nr : nr;
      for (long j = 0; j < width; ++j) dst[j] = src[j];
    }
  return out;
}

namespace {

// The rows of a row-major [rows x k] matrix as the columns of k-major
// panels `width` wide, the last one zero-padded: a dense weight W seen as
// W^T's column panels, and a convolution's weights as packed-A's row
// panels, are the same layout.
std::vector<float> pack_rows_as_panels(const float* src, long rows, long k, long width, const char* what) {
  check_dims(rows, k, width, what);
  const long panels = (rows + width - 1) / width;
  std::vector<float> out(static_cast<size_t>(panels * width * k), 0.0f);
  // Walk the matrix row by row (the order it lies in memory); each row
  // scatters into one column of its panel.
  for (long row = 0; row < rows; ++row) {
    const long p = row / width, j = row % width;
    const float* const from = src + row * k;
    float* const dst = out.data() + p * k * width + j;
    for (long kk = 0; kk < k; ++kk) dst[kk * width] = from[kk];
  }
  return out;
}

}  // namespace

std::vector<float> pack_w_transposed_panels(const float* w, long n, long k, long nr) {
  return pack_rows_as_panels(w, n, k, nr, "pack_w_transposed_panels");
}

std::vector<float> pack_a_panels(const float* a, long m, long k, long mr) {
  return pack_rows_as_panels(a, m, k, mr, "pack_a_panels");
}

std::vector<float> pack_winograd(const float* w, long f, long c, long nr, int m) {
  check_dims(f, c, nr, "pack_winograd");
  static const double kG4[6][3] = {{1.0 / 4, 0, 0},
                                   {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                   {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                   {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                   {0, 0, 1}};
  static const double kG2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  if (m != 4 && m != 2) throw Error("pack_winograd: tile size " + std::to_string(m) + " is not 2 or 4");
  const int alpha = m + 2, positions = alpha * alpha;
  const double(*const kG)[3] = m == 4 ? kG4 : kG2;
  std::vector<float> u(static_cast<size_t>(positions * c * f));  // [xi][ic][of]
  for (long of = 0; of < f; ++of)
    for (long ic = 0; ic < c; ++ic) {
      const float* const g = w + (of * c + ic) * 9;
      double t[6][3];
      for (int a = 0; a < alpha; ++a)
        for (int s = 0; s < 3; ++s) {
          double v = 0;
          for (int r = 0; r < 3; ++r) v += kG[a][r] * g[r * 3 + s];
          t[a][s] = v;
        }
      for (int a = 0; a < alpha; ++a)
        for (int b = 0; b < alpha; ++b) {
          double v = 0;
          for (int s = 0; s < 3; ++s) v += t[a][s] * kG[b][s];
          u[static_cast<size_t>(((a * alpha + b) * c + ic) * f + of)] = static_cast<float>(v);
        }
    }
  std::vector<float> out;
  for (long xi = 0; xi < positions; ++xi) {
    const std::vector<float> p = pack_b_panels(u.data() + xi * c * f, c, f, nr);
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

}  // namespace hybgen
