// Generation-time packing of a GEMM's constant operand into the panel layouts
// that templates/kernels/gemm.inc reads (see the comment at its top), and the
// panel sizes come from the target (targets/target.h: Target::gemm_nr):
//
//   target                         gemm_nr  gemm_mr
//   x86-64-v4                         16        8
//   x86-64-v3                          8        6
//   armv8-a                            4        8
//   cortex-m4, cortex-m7, cortex-m55   4        4
//   generic                            8        4
//
//   const int nr = find_target("x86-64-v4").gemm_nr;              // 16
//   std::vector<float> wp = pack_w_transposed_panels(w, n, k, nr); // dense W [n x k]
//   // emit wp as a weight; call hg_gemm_packed_b(x, k, wp, bias, y, n, m, n, k, ep)
#pragma once

#include <string>
#include <vector>

#include "ops/op.h"

namespace hybgen {

// B [k x n] row-major -> column panels of width nr, k-major:
//   out[(p*k + kk)*nr + j] = B[kk][p*nr + j], zero past column n-1.
// Size ceil(n/nr)*nr*k. For hg_gemm_packed_b.
std::vector<float> pack_b_panels(const float* b, long k, long n, long nr);

// The same for B = W^T with W [n x k] row-major (a dense layer's weight),
// without materialising W^T: out[(p*k + kk)*nr + j] = W[p*nr + j][kk].
std::vector<float> pack_w_transposed_panels(const float* w, long n, long k, long nr);

// A [m x k] row-major -> row panels of height mr, k-major:
//   out[(p*k + kk)*mr + i] = A[p*mr + i][kk], zero past row m-1.
// Size ceil(m/mr)*mr*k. For hg_gemm_packed_a (convolution weights as
// [filters x c*kh*kw]), and with mr = the filters per panel for the
// row-by-row convolution (conv2d_rows.inc).
std::vector<float> pack_a_panels(const float* a, long m, long k, long mr);

// 3x3 convolution weights [f x c x 3 x 3] -> Winograd F(m x m, 3x3) filters
// (m = 4 or 2) U = G g G^T (computed in double), one c x f matrix
// U_xi[ic][of] per transform position xi < (m+2)^2, each packed by
// pack_b_panels with width nr (ceil(f/nr)*nr*c floats per xi). For
// templates/kernels/conv2d_winograd.inc.
std::vector<float> pack_winograd(const float* w, long f, long c, long nr, int m);

}  // namespace hybgen
