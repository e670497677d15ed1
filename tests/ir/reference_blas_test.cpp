// The reference kernels' matrix products as the IR room computes them on its
// own: this binary links no BLAS (the runtime room, which installs OpenBLAS's,
// is not part of it), so these are the plain loops.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/reference_blas.h"

namespace hybgen {
namespace {

float at(const std::vector<float>& m, int ld, int row, int col) { return m[row * ld + col]; }

TEST(ReferenceBlas, SgemmMatchesTheDefinitionForEveryTransposition) {
  const int m = 3, n = 5, k = 4;
  std::vector<float> a(m * k), b(k * n);
  for (int i = 0; i < m * k; ++i) a[i] = 0.5f * static_cast<float>(i % 7) - 1.0f;
  for (int i = 0; i < k * n; ++i) b[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      // The same matrices stored transposed where asked.
      std::vector<float> as(m * k), bs(k * n);
      for (int i = 0; i < m; ++i)
        for (int p = 0; p < k; ++p) (ta ? as[p * m + i] : as[i * k + p]) = at(a, k, i, p);
      for (int p = 0; p < k; ++p)
        for (int j = 0; j < n; ++j) (tb ? bs[j * k + p] : bs[p * n + j]) = at(b, n, p, j);
      std::vector<float> c(m * n, 99.0f);
      reference_sgemm(ta, tb, m, n, k, as.data(), ta ? m : k, bs.data(), tb ? k : n, c.data(), n);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          float want = 0;
          for (int p = 0; p < k; ++p) want += at(a, k, i, p) * at(b, n, p, j);
          EXPECT_NEAR(c[i * n + j], want, 1e-6) << "trans_a " << ta << " trans_b " << tb << " at " << i << "," << j;
        }
    }
}

TEST(ReferenceBlas, SgemvMultipliesRowsByTheVector) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};  // 2 x 3
  const std::vector<float> x = {1, -1, 2};
  std::vector<float> y(2, 99.0f);
  reference_sgemv(2, 3, a.data(), 3, x.data(), y.data());
  EXPECT_FLOAT_EQ(y[0], 5.0f);
  EXPECT_FLOAT_EQ(y[1], 11.0f);
}

}  // namespace
}  // namespace hybgen
