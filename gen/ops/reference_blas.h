// The matrix products of the ops' reference kernels (OpDef::reference),
// row-major, C = op(A) op(B). The IR room computes them with plain loops and
// links no BLAS; the reference runtime (runtime-lite), which links OpenBLAS,
// installs OpenBLAS's routines when it is loaded, so the interpreter, constant
// folding in the tool and hybridized blocks run at BLAS speed.
//
//   reference_sgemm(false, true, m, n, k, x, k, w, k, y, n);   // y = x w^T
#pragma once

namespace hybgen {

using SgemmFunction = void (*)(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda,
                               const float* b, int ldb, float* c, int ldc);
// y[n] = A[n x k] x[k], A row-major with leading dimension lda.
using SgemvFunction = void (*)(int n, int k, const float* a, int lda, const float* x, float* y);

void reference_sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b,
                     int ldb, float* c, int ldc);
void reference_sgemv(int n, int k, const float* a, int lda, const float* x, float* y);

// Replaces the plain loops (runtime-lite/reference_blas.cpp does, at start-up).
void install_reference_blas(SgemmFunction sgemm, SgemvFunction sgemv);

}  // namespace hybgen
