// --io-precision half (with --precision fp16 or bf16): run() takes and gives
// the halves the model stores. verify rounds its inputs to the edge type,
// gives the reference what the halves are, and reads the outputs back; the
// header declares the CUDA half types and includes their headers; the
// generated code builds with nvcc.
#include <gtest/gtest.h>

#include <algorithm>

#include "emit/cuda_emitter.h"
#include "emit/generate.h"
#include "error_matchers.h"
#include "graph_builders.h"
#include "io/file_util.h"
#include "ops/op_kernel.h"
#include "pipeline.h"
#include "run_command.h"
#include "targets/target.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

CompileOptions half_edges(const std::string& target, Precision precision) {
  CompileOptions options = CompileOptions::for_target(find_target(target));
  options.target.precision = precision;
  options.io_precision = IoPrecision::kHalf;
  return options;
}

TEST(HalfEdges, VerifyOnCudaHostAndTheHeadersTypes) {
  const Graph g = testing::conv_relu_dense();
  for (Precision p : {Precision::kFP16, Precision::kBF16}) {
    const std::string type = p == Precision::kFP16 ? "__half" : "__nv_bfloat16";
    VerifyOptions v;
    v.compile = half_edges("cuda-host", p);
    v.tolerance = default_tolerance(p);
    const VerifyReport r = verify_model(g, v);
    ASSERT_EQ(r.checks.size(), 1u);
    EXPECT_TRUE(r.ok) << precision_name(p) << ": " << r.checks[0].max_rel_error;
    EXPECT_GT(r.checks[0].max_rel_error, 0.0);  // the output was rounded to the half type

    const CompiledGraph compiled = compile_graph(g, half_edges("cuda", p));
    EXPECT_EQ(compiled.graph.type("data").dtype, p == Precision::kFP16 ? DType::kFloat16 : DType::kBFloat16);
    // The output takes the type its node makes: the half type where the dense layer's kernel computes it.
    const OpKernel* dense = find_kernel(Backend::kCuda, "FullyConnected");
    const bool dense_in_half =
        std::find(dense->dtypes.begin(), dense->dtypes.end(), compiled.graph.type("data").dtype) != dense->dtypes.end();
    EXPECT_EQ(compiled.graph.type("dense").dtype, dense_in_half ? compiled.graph.type("data").dtype : DType::kFloat32);
    CppEmitOptions options;
    options.name = "half_edges";
    std::string header;
    for (const EmittedFile& f : emit_cuda(compiled, options))
      if (f.filename == "half_edges.h") header = f.content;
    EXPECT_NE(header.find("const " + type + "* data, " + (dense_in_half ? type : "float") + "* dense"),
              std::string::npos)
        << header;
    EXPECT_NE(header.find(p == Precision::kFP16 ? "#include <cuda_fp16.h>" : "#include <cuda_bf16.h>"),
              std::string::npos);
  }
}

TEST(HalfEdges, OnlyWithHalfStorage) {
  CompileOptions fp32 = half_edges("cuda", Precision::kFP32);
  EXPECT_ERROR(compile_graph(testing::conv_relu_dense(), fp32),
               "--io-precision half: the edges take the halves --precision fp16 or bf16 stores; the precision is fp32");
  EXPECT_ERROR(parse_io_precision("fp16"), "--io-precision 'fp16': expected fp32, quantized or half");
}

// The CLI end to end: generate, and nvcc builds the code (no GPU needed to build).
TEST(HalfEdges, GeneratedCodeBuildsWithNvcc) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on the PATH";
  TempDir dir("hybgen-half-edges");
  const std::string model = HYBGEN_SOURCE_DIR "/tests/data/mxnet-real/mnist-cnn-gluon-1.6/mnist-symbol.json";
  const testing::CommandResult generated = testing::run_command(quoted(HYBGEN_BINARY) + " " + quoted(model) +
                                                                " --shape data=2,1,28,28 --target cuda --precision " +
                                                                "bf16 --io-precision half -o " + quoted(dir.path()));
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  const testing::CommandResult built = testing::run_command(
      "nvcc -std=c++17 -O1 -gencode 'arch=compute_80,code=[sm_80,sm_90]' -Werror all-warnings -c " +
      quoted(dir.path() + "/mnist.cu") + " -o " + quoted(dir.path() + "/mnist.o"));
  EXPECT_EQ(built.exit_code, 0) << built.output;
  const std::string manifest = read_file_text(dir.path() + "/mnist.manifest.json");
  EXPECT_NE(manifest.find("\"dtype\": \"bfloat16\""), std::string::npos) << manifest;
}

}  // namespace
}  // namespace hybgen
