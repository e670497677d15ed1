// The storage types a CUDA kernel templated on its storage type computes
// (templates/cuda/kernels/common.inc): float32, and float16 / bfloat16
// under --precision fp16 / bf16 (the pass half_storage), each computed in
// float and rounded where stored.
//
//   const KernelRegistrar lrn_reg(Backend::kCuda, "LRN", in_half_storage(OpKernel{emit_lrn}));
//   find_kernel(Backend::kCuda, "LRN")->dtypes;  // {float32, float16, bfloat16}
#pragma once

#include <utility>

#include "ops/op_kernel.h"

namespace hybgen {

inline OpKernel in_half_storage(OpKernel kernel) {
  kernel.dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  return kernel;
}

}  // namespace hybgen
