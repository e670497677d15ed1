// The CUDA backend's printer: a compiled graph, lowered (lower/lowering.h),
// as NAME.h, NAME.cu, the weights (NAME_weights.cpp, host bytes that init()
// uploads, or NAME.weights.bin) and NAME.manifest.json. The kernels come from
// templates/cuda/kernels/ through each op's CUDA OpKernel; chains of
// elementwise ops become one generated __global__ function each, and the
// elementwise ops after a GEMM or convolution an epilogue object its kernel
// applies before the store. Everything else (names, weights, manifest,
// shapes) is the C++ printer's.
//
//   std::vector<EmittedFile> files = emit_cuda(compile_graph(g, CompileOptions::for_target(find_target("cuda"))), {"mlp"});
#pragma once

#include <string>
#include <vector>

#include "emit/cpp_emitter.h"
#include "pipeline.h"

namespace hybgen {

// Throws Error naming a weight without data, or a name that is not a C
// identifier. (compile_graph's check_kernels has named every node the CUDA
// backend has no kernel for.)
std::vector<EmittedFile> emit_cuda(const CompiledGraph& compiled, const CppEmitOptions& options);

}  // namespace hybgen
