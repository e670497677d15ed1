// ONNX MatMul with numpy broadcasting (gen/io/onnx/onnx_ops_math.cpp): 1-D
// operands and batch axes that broadcast, as one _strided_batch_dot reading
// each operand in place where its batch axes are all 1 or all the result's.
// onnx-core's MatMul converter calls it for what its own forms do not cover.
//
//   if (sa.size() < 2 || sb.size() < 2) return onnx_matmul_broadcast(c);
#pragma once

#include "io/onnx/onnx_ops.h"

namespace hybgen {

void onnx_matmul_broadcast(OnnxContext& c);

}  // namespace hybgen
