#include "ops/reference_blas.h"

namespace hybgen {
namespace {

// Plain loops, k outermost per row so the inner loop runs along C's row.
void loop_sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                float* c, int ldc) {
  for (int i = 0; i < m; ++i) {
    float* row = c + static_cast<long>(i) * ldc;
    for (int j = 0; j < n; ++j) row[j] = 0.0f;
    for (int p = 0; p < k; ++p) {
      const float av = trans_a ? a[static_cast<long>(p) * lda + i] : a[static_cast<long>(i) * lda + p];
      for (int j = 0; j < n; ++j) row[j] += av * (trans_b ? b[static_cast<long>(j) * ldb + p] : b[static_cast<long>(p) * ldb + j]);
    }
  }
}

void loop_sgemv(int n, int k, const float* a, int lda, const float* x, float* y) {
  for (int i = 0; i < n; ++i) {
    float sum = 0.0f;
    for (int p = 0; p < k; ++p) sum += a[static_cast<long>(i) * lda + p] * x[p];
    y[i] = sum;
  }
}

SgemmFunction g_sgemm = loop_sgemm;
SgemvFunction g_sgemv = loop_sgemv;

}  // namespace

void reference_sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b,
                     int ldb, float* c, int ldc) {
  g_sgemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
}

void reference_sgemv(int n, int k, const float* a, int lda, const float* x, float* y) { g_sgemv(n, k, a, lda, x, y); }

void install_reference_blas(SgemmFunction sgemm, SgemvFunction sgemv) {
  g_sgemm = sgemm;
  g_sgemv = sgemv;
}

}  // namespace hybgen
