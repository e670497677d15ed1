// The CUDA backend end to end: the generated API's behaviour (run on the CPU
// through the cuda-host layer), byte-identical regeneration, every registry
// op covered and compiled by nvcc, and a real MXNet export verified.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "all_ops_graph.h"
#include "cuda_test_support.h"
#include "emit/cuda_emitter.h"
#include "emit/generate.h"
#include "emit/templates.h"
#include "graph_builders.h"
#include "io/file_util.h"
#include "io/model_json.h"
#include "nvcc_compile.h"
#include "ops/op.h"
#include "ops/op_kernel.h"
#include "passes/passes.h"
#include "pipeline.h"
#include "run_command.h"
#include "targets/toolchain.h"
#include "verify/generated_build.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

using testing::quoted;
using testing::run_command;

// x (2, 3, 5, 7) + y (3, 1, 7) -> sigmoid -> GELU -> * x: one fused kernel.
Graph elementwise_graph() {
  return graph_from_json(nlohmann::json::parse(R"({
    "format": "hybgen-graph", "format_version": 1, "name": "ew",
    "inputs": [{"name": "x", "shape": [2, 3, 5, 7]}, {"name": "y", "shape": [3, 1, 7]}],
    "outputs": ["out"],
    "nodes": [
      {"name": "a", "op": "broadcast_add", "inputs": ["x", "y"]},
      {"name": "s", "op": "Activation", "inputs": ["a"], "attrs": {"act_type": "sigmoid"}},
      {"name": "g", "op": "LeakyReLU", "inputs": ["s"], "attrs": {"act_type": "gelu"}},
      {"name": "out", "op": "broadcast_mul", "inputs": ["g", "x"]}
    ]})"),
                         "ew.json");
}

std::vector<EmittedFile> cuda_files(const Graph& graph, const std::string& name) {
  CppEmitOptions options;
  options.name = name;
  return emit_cuda(compile_graph(graph, CompileOptions::for_target(find_target("cuda"))), options);
}

// bench --target cuda hands nvcc the macro definitions of --cxx-flags (to
// pick kernel variants, as gpu_check.sh's HG_CUDA_WMMA_GATHER), no other flag.
TEST(CudaBackend, OnlyMacroDefinitionsOfTheCxxFlagsReachNvcc) {
  EXPECT_EQ(macro_definitions("-O3 -march=native -DHG_CUDA_WMMA_GATHER  -DN=2 -D -fno-math"),
            " -DHG_CUDA_WMMA_GATHER -DN=2");
  EXPECT_EQ(macro_definitions("-std=c++11 -O3"), "");
  EXPECT_EQ(macro_definitions(""), "");
}

TEST(CudaBackend, TheApiBehavesAsDocumented) {
  TempDir dir("hybgen-cuda-api");
  write_generated(cuda_files(elementwise_graph(), "ew"), dir.path());
  const std::string d = dir.path() + "/";
  std::ofstream(d + "cuda_runtime.h") << template_text("cuda_host/cuda_runtime.h");
  auto r = run_command(quoted(HYBGEN_CXX) + " -std=c++17 -O1 -Wall -Wextra -Werror -pthread -I" + quoted(dir.path()) +
                       " -x c++ " + quoted(HYBGEN_SOURCE_DIR "/tests/cuda/programs/api_driver.cu") + " " +
                       quoted(d + "ew.cu") + " -x none " + quoted(d + "ew_weights.cpp") + " -o " + quoted(d + "driver"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_command("timeout 60 " + quoted(d + "driver"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "OK\n");
}

TEST(CudaBackend, RegenerationIsByteIdenticalAndNamesNodes) {
  const auto a = cuda_files(elementwise_graph(), "ew");
  const auto b = cuda_files(elementwise_graph(), "ew");
  ASSERT_EQ(a.size(), 4u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].content, b[i].content) << a[i].filename;
  EXPECT_EQ(a[0].filename, "ew.h");
  EXPECT_EQ(a[1].filename, "ew.cu");
  EXPECT_NE(a[1].content.find("a (broadcast_add) + s (Activation) + g (LeakyReLU) + out (broadcast_mul)"),
            std::string::npos);
  EXPECT_NE(a[3].content.find("\"backend\": \"CUDA\""), std::string::npos);
}

TEST(CudaBackend, EveryRegisteredOpHasACudaKernel) {
  testing::AllOpsGraph all = testing::all_ops_graph(1, {}, Backend::kCuda);
  validate(all.graph);
  infer_shapes(all.graph);
  EXPECT_NO_THROW(check_kernels(all.graph, find_target("cuda")));
}

// The registry test's graph (tests/codegen/registry_ops_test.cpp runs it on
// cuda-host) through nvcc at the cuda target's flags (sm_80 and sm_90; sm_80
// and sm_90a for halves), in float32 and in the half-precision storage of
// --precision fp16 and bf16 (every kernel that declares those types
// instantiated for __half and __nv_bfloat16), fp16 with -DHG_CUDA_PDL.
TEST(CudaBackend, EveryOpExampleCompilesWithNvcc) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on the PATH";
  const Graph graph = testing::all_ops_graph(1, {}, Backend::kCuda).graph;
  for (Precision precision : {Precision::kFP32, Precision::kFP16, Precision::kBF16}) {
    SCOPED_TRACE(precision_name(precision));
    // fp16 (sm_90a) with programmatic dependent launch: the waits and cudaLaunchKernelEx.
    const std::string defines = precision == Precision::kFP16 ? " -DHG_CUDA_PDL" : "";
    const testing::NvccResult r =
        testing::nvcc_compile(graph, "all_ops_" + precision_name(precision), precision, defines);
    std::printf("%s", r.ptxas_summary.c_str());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_LE(r.most_spilled, testing::kMostSpillBytes) << r.output;
  }
}

// The __global__ functions of CUDA source whose first statement is not
// HG_GRID_DEPENDENCY() (common.inc), each named by its text up to the body,
// and how many there are in all.
std::pair<std::vector<std::string>, int> kernels_not_waiting_first(const std::string& text) {
  std::vector<std::string> late;
  int kernels = 0;
  for (std::size_t at = text.find("__global__"); at != std::string::npos; at = text.find("__global__", at + 1)) {
    const std::size_t line = text.rfind('\n', at) + 1;
    if (text.compare(text.find_first_not_of(' ', line), 2, "//") == 0) continue;  // a comment
    int depth = 0;
    bool params = false;
    std::size_t body = at;
    for (; body < text.size(); ++body) {
      const char c = text[body];
      if (c == '(') ++depth, params = true;
      if (c == ')') --depth;
      if (c == ';' && depth == 0) break;  // a declaration
      if (c == '{' && depth == 0 && params) break;
    }
    if (body >= text.size() || text[body] != '{') continue;
    ++kernels;
    const std::size_t first = text.find_first_not_of(" \n", body + 1);
    if (text.compare(first, 21, "HG_GRID_DEPENDENCY();") != 0) late.push_back(text.substr(at, body - at));
  }
  return {late, kernels};
}

// With -DHG_CUDA_PDL a kernel launches while the one before it runs, so
// every kernel must wait for it before it reads or writes anything: its
// first statement is HG_GRID_DEPENDENCY(). Checked on every template and on
// the generated .cu of every op example (the emitter's elementwise kernels
// too), in float and in half storage.
TEST(CudaBackend, EveryKernelStartsByWaitingForThePreviousOne) {
  int kernels = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::kKernels)) {
    const auto [late, count] = kernels_not_waiting_first(testing::read_text(entry.path().string()));
    kernels += count;
    for (const auto& k : late) ADD_FAILURE() << entry.path().filename().string() << ": " << k;
  }
  EXPECT_GT(kernels, 50);
  const Graph graph = testing::all_ops_graph(1, {}, Backend::kCuda).graph;
  for (Precision precision : {Precision::kFP32, Precision::kFP16}) {
    CompileOptions compile = CompileOptions::for_target(find_target("cuda"));
    compile.target.precision = precision;
    CppEmitOptions options;
    options.name = "all_ops";
    for (const auto& f : emit_cuda(compile_graph(graph, compile), options)) {
      if (f.filename != "all_ops.cu") continue;
      const auto [late, count] = kernels_not_waiting_first(f.content);
      EXPECT_GT(count, 50) << precision_name(precision);
      for (const auto& k : late) ADD_FAILURE() << precision_name(precision) << ": " << k;
    }
  }
}

// data (1024, 64) -> FullyConnected(1024): a product large enough that the
// planner takes a tensor-core tile configuration (3 or 4: 64x128, 128x64).
Graph large_dense() {
  Graph g;
  g.name = "large_dense";
  g.add_input("data", {{1024, 64}});
  g.add_constant("w", Constant::f32({1024, 64}, testing::seeded_values(1024 * 64, 71)));
  g.add_constant("b", Constant::f32({1024}, testing::seeded_values(1024, 72)));
  g.nodes.push_back(testing::make_node("fc", "FullyConnected", {"data", "w", "b"},
                                       testing::attrs_of({{"num_hidden", int64_t{1024}}})));
  g.outputs = {"fc"};
  return g;
}

// --precision tf32 end to end: the generated .cu defines the tensor-core
// path, cuda-host rounds the tiles' operands to TF32 as a GPU does (an
// error above FP32's, within the precision's default tolerance), the
// manifest says so, nvcc builds it for sm_80 and sm_90 without spills, and
// a C++ target refuses it.
TEST(CudaBackend, Tf32PrecisionEndToEnd) {
  const Graph g = large_dense();
  double error[2] = {0, 0};
  for (Precision p : {Precision::kFP32, Precision::kTF32}) {
    VerifyOptions v;
    v.compile = CompileOptions::for_target(find_target("cuda-host"));
    v.compile.target.precision = p;
    v.tolerance = default_tolerance(p);
    const VerifyReport r = verify_model(g, v);
    ASSERT_EQ(r.checks.size(), 1u);
    EXPECT_TRUE(r.ok) << precision_name(p) << ": " << r.checks[0].max_rel_error;
    error[p == Precision::kTF32] = r.checks[0].max_rel_error;
  }
  EXPECT_LE(error[0], 1e-6);
  EXPECT_GT(error[1], 1e-5);  // the operands were rounded
  CppEmitOptions options;
  options.name = "large_dense";
  CompileOptions tf32 = CompileOptions::for_target(find_target("cuda"));
  tf32.target.precision = Precision::kTF32;
  std::string cu, manifest;
  for (const EmittedFile& f : emit_cuda(compile_graph(g, tf32), options)) {
    if (f.filename == "large_dense.cu") cu = f.content;
    if (f.filename == "large_dense.manifest.json") manifest = f.content;
  }
  EXPECT_NE(cu.find("#define HG_CUDA_TF32 1"), std::string::npos);
  EXPECT_NE(manifest.find("\"precision\": \"tf32\""), std::string::npos) << manifest;
  CompileOptions cpu = CompileOptions::for_target(default_target());
  cpu.target.precision = Precision::kTF32;
  EXPECT_ANY_THROW(compile_graph(g, cpu));
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on the PATH";
  const testing::NvccResult r = testing::nvcc_compile(g, "large_dense", Precision::kTF32);
  std::printf("%s", r.ptxas_summary.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LE(r.most_spilled, testing::kMostSpillBytes) << r.output;
}

// data (2, 64, 32, 64) -> 3x3 Convolution(128) -> FullyConnected(128) on
// the last axis: an implicit-GEMM convolution (m 128, n 4096, k 576: the
// wmma tiles with split-K) and a dense layer (m 8192, n 128, k 64: the
// mma.sync tiles), large enough that the planner takes the tensor-core
// configurations in half storage.
Graph conv_dense() {
  Graph g;
  g.name = "conv_dense";
  g.add_input("data", {{2, 64, 32, 64}});
  g.add_constant("cw", Constant::f32({128, 64, 3, 3}, testing::seeded_values(128 * 64 * 9, 81)));
  g.add_constant("cb", Constant::f32({128}, testing::seeded_values(128, 82)));
  g.add_constant("fw", Constant::f32({128, 64}, testing::seeded_values(128 * 64, 83)));
  g.add_constant("fb", Constant::f32({128}, testing::seeded_values(128, 84)));
  g.nodes.push_back(testing::make_node("conv", "Convolution", {"data", "cw", "cb"},
                                       testing::attrs_of({{"kernel", std::vector<int64_t>{3, 3}},
                                                          {"pad", std::vector<int64_t>{1, 1}},
                                                          {"num_filter", int64_t{128}}})));
  g.nodes.push_back(testing::make_node("fc", "FullyConnected", {"conv", "fw", "fb"},
                                       testing::attrs_of({{"num_hidden", int64_t{128}}, {"flatten", false}})));
  g.outputs = {"fc"};
  return g;
}

// --precision fp16 / bf16 end to end on a convolution and a dense layer:
// both run in half storage (the .cu defines HG_CUDA_HALF and launches the
// GEMM templates on __half / __nv_bfloat16 in the tensor-core
// configurations), cuda-host's error is above FP32's and within the
// precision's default tolerance, the manifest says the precision, and nvcc
// builds it for sm_80 and sm_90 without spills over kMostSpillBytes.
TEST(CudaBackend, HalfPrecisionEndToEnd) {
  const Graph g = conv_dense();
  double error[3] = {0, 0, 0};
  const Precision precisions[3] = {Precision::kFP32, Precision::kFP16, Precision::kBF16};
  for (int i = 0; i < 3; ++i) {
    VerifyOptions v;
    v.compile = CompileOptions::for_target(find_target("cuda-host"));
    v.compile.target.precision = precisions[i];
    v.tolerance = default_tolerance(precisions[i]);
    const VerifyReport r = verify_model(g, v);
    ASSERT_EQ(r.checks.size(), 1u);
    EXPECT_TRUE(r.ok) << precision_name(precisions[i]) << ": " << r.checks[0].max_rel_error;
    error[i] = r.checks[0].max_rel_error;
    std::printf("%s: max relative error %g\n", precision_name(precisions[i]).c_str(), error[i]);
  }
  EXPECT_LE(error[0], 1e-5);
  EXPECT_GT(error[1], error[0]);  // stored in half
  EXPECT_GT(error[2], error[1]);  // bfloat16 keeps fewer bits than float16
  for (int i = 1; i < 3; ++i) {
    const Precision p = precisions[i];
    SCOPED_TRACE(precision_name(p));
    CppEmitOptions options;
    options.name = "conv_dense";
    CompileOptions half = CompileOptions::for_target(find_target("cuda"));
    half.target.precision = p;
    std::string cu, manifest;
    for (const EmittedFile& f : emit_cuda(compile_graph(g, half), options)) {
      if (f.filename == "conv_dense.cu") cu = f.content;
      if (f.filename == "conv_dense.manifest.json") manifest = f.content;
    }
    EXPECT_NE(cu.find("#define HG_CUDA_HALF 1"), std::string::npos);
    // The convolution's gather on the wmma tiles (configuration 4), the dense
    // layer on the mma.sync tiles (configuration 0), both reading halves.
    EXPECT_NE(cu.find("hg_conv2d_gemm<4, 3, 3>"), std::string::npos);  // with split-K
    EXPECT_NE(cu.find("hg_gemm<0, 0, 0"), std::string::npos);
    const std::string type = p == Precision::kFP16 ? "__half" : "__nv_bfloat16";
    EXPECT_NE(cu.find("const " + type + "* "), std::string::npos);
    EXPECT_NE(manifest.find("\"precision\": \"" + precision_name(p) + "\""), std::string::npos) << manifest;
    if (!on_path("nvcc")) continue;
    const testing::NvccResult r = testing::nvcc_compile(g, "conv_dense", p);
    std::printf("%s", r.ptxas_summary.c_str());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_LE(r.most_spilled, testing::kMostSpillBytes) << r.output;
    EXPECT_NE(r.output.find("hg_gemm_mma_half_kernel"), std::string::npos) << "no FP16 / BF16 mma.sync kernel";
  }
}

// A model a user exports from MXNet, through the CLI, on cuda-host.
TEST(CudaBackend, MxnetMlpVerifiesOnCudaHost) {
  const auto r = run_command(quoted(HYBGEN_BINARY) + " verify " +
                             quoted(HYBGEN_SOURCE_DIR "/tests/data/mxnet-real/mlp-gluon-1.3/model-symbol.json") +
                             " --shape data=3,4 --target cuda-host");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("verify: PASS"), std::string::npos) << r.output;
}

// CUDA has no int8 kernels: an int8 model (hybgen quantize's, or an ONNX QDQ
// model) is generated as the float model on its dequantized weights
// (passes dequantize_graph), and verifies against that graph's reference.
TEST(CudaBackend, Int8ModelsRunInFloatOnCudaHost) {
  TempDir dir("hybgen-cuda-int8");
  const std::string d = dir.path() + "/";
  const std::string data = HYBGEN_SOURCE_DIR "/tests/data/digits-cnn/";
  auto r = run_command(quoted(HYBGEN_BINARY) + " quantize " + quoted(data + "digits_cnn.json") + " --calibration " +
                       quoted(data + "calibration.npy") + " -o " + quoted(d + "m"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_command(quoted(HYBGEN_BINARY) + " " + quoted(d + "m.json") + " --target cuda -o " + quoted(d + "out"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(d + "out/m.cu")) << r.output;
  for (const std::string& model : {d + "m.json", std::string(HYBGEN_SOURCE_DIR "/tests/data/onnx/qdq/tiny_qdq.onnx")}) {
    r = run_command(quoted(HYBGEN_BINARY) + " verify " + quoted(model) + " --target cuda-host");
    EXPECT_EQ(r.exit_code, 0) << model << "\n" << r.output;
    EXPECT_NE(r.output.find("has no int8 kernels: the model runs in float on its dequantized weights"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("verify: PASS"), std::string::npos) << model << "\n" << r.output;
  }
}

}  // namespace
}  // namespace hybgen
