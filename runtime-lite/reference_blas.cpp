// OpenBLAS behind the ops' reference kernels (ops/reference_blas.h): this
// room links it, the IR does not. Installed by a static initialiser, which
// every program linking the runtime's objects runs before main().
#include <cblas.h>

#include "ops/reference_blas.h"

namespace hybgen {
namespace {

void blas_sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
              a, lda, b, ldb, 0.0f, c, ldc);
}

void blas_sgemv(int n, int k, const float* a, int lda, const float* x, float* y) {
  cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, a, lda, x, 1, 0.0f, y, 1);
}

const bool installed = (install_reference_blas(blas_sgemm, blas_sgemv), true);

}  // namespace
}  // namespace hybgen
