// The CUDA GEMM and convolution kernels (gen/ops/cuda/gemm_kernels.cpp,
// conv_kernels.cpp, templates/cuda/kernels/gemm.inc and conv.inc):
//  - programs/gemm_kernels.cu drives the templates directly (every tile
//    configuration, layout, split-K, GEMV, convolution geometry) against
//    CPU loops on the cuda-host layer;
//  - the registered printers end to end: each case's launch statements go
//    into one driver with the kernel files pasted as the emitter pastes
//    them, built with the host compiler through the cuda-host layer and run
//    on seeded random data; outputs must match the op's reference kernel
//    (1e-5 relative), with and without an epilogue that checks the channel
//    and index it is given;
//  - the templates compile with nvcc for sm_80 and sm_90 without spills,
//    and with HG_CUDA_TF32 (and HG_CUDA_TF32_MMA); with HG_CUDA_HALF, in
//    __half and __nv_bfloat16 storage (the FP16 / BF16 tensor-core
//    kernels), without spills either.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "ops/op.h"
#include "ops/op_util.h"
#include "cuda_test_support.h"
#include "run_command.h"
#include "targets/target.h"

namespace hybgen::testing {
namespace {

namespace fs = std::filesystem;

class GemmKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = (fs::temp_directory_path() / ("hybgen_gemm_" + std::string(info->name()) + "_" + std::to_string(::getpid())))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy_file(kHeader, dir_ + "/cuda_runtime.h");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // `source` as DIR/nv.cu, compiled by nvcc for sm_80 and sm_90 (or for
  // `archs`) with ptxas's report (registers, spills per kernel) in the output.
  CommandResult nvcc_report(const std::string& source,
                            const std::string& archs = "-gencode 'arch=compute_80,code=[sm_80,sm_90]'") const {
    std::ofstream(dir_ + "/nv.cu") << source;
    return run_command("nvcc -std=c++17 -O3 " + archs + " -Xptxas -v -c " + q(dir_ + "/nv.cu") + " -o " +
                       q(dir_ + "/nv.o"));
  }
  std::string dir_;
};

// In FP32; with HG_CUDA_TF32 (the wmma kernel) and HG_CUDA_TF32_MMA as well
// (--precision tf32: the mma.sync kernel where operands are aligned), the
// tensor-core configurations running on the layer's emulated tensor cores;
// with HG_CUDA_HALF, every case in float, __half and __nv_bfloat16 storage
// (the FP16 / BF16 mma.sync and wmma kernels). With HG_CUDA_TF32_MMA the
// aligned convolutions gather on the mma.sync kernel.
TEST_F(GemmKernels, TemplatesMatchPlainLoopsOnTheCudaHostLayer) {
  for (const std::string defines : {"", " -DHG_CUDA_TF32", " -DHG_CUDA_TF32 -DHG_CUDA_TF32_MMA", " -DHG_CUDA_HALF"}) {
    SCOPED_TRACE(defines.empty() ? "fp32" : defines);
    const std::string exe = dir_ + "/gemm_kernels";
    const CommandResult built =
        run_command(q(HYBGEN_CXX) + " -std=c++17 -O1 -Wall -Wextra -Wpedantic -Werror" + defines + " -x c++ -I" +
                    q(dir_) + " " + q(kPrograms + "/gemm_kernels.cu") + " -o " + q(exe));
    ASSERT_EQ(built.exit_code, 0) << built.output;
    const CommandResult ran = run_command("timeout 60 " + q(exe));
    EXPECT_EQ(ran.exit_code, 0) << ran.output;
    EXPECT_EQ(ran.output, "OK\n");
  }
}

// One op application through its registered CUDA printer.
struct Case {
  std::string op;
  Attrs attrs;
  std::vector<Shape> inputs;
  bool epilogue = false;
  std::string expect;  // a substring of the printed code
};

Attrs fc(int64_t hidden, bool no_bias, bool flatten) {
  Attrs a;
  a.set("num_hidden", hidden);
  a.set("no_bias", no_bias);
  a.set("flatten", flatten);
  return a;
}
Attrs trans(bool ta, bool tb) {
  Attrs a;
  a.set("transpose_a", ta);
  a.set("transpose_b", tb);
  return a;
}
Attrs conv(std::vector<int64_t> kernel, int64_t filters, std::vector<int64_t> stride, std::vector<int64_t> pad,
           std::vector<int64_t> dilate, int64_t groups, bool no_bias) {
  Attrs a;
  a.set("kernel", std::move(kernel));
  a.set("num_filter", filters);
  a.set("stride", std::move(stride));
  a.set("pad", std::move(pad));
  a.set("dilate", std::move(dilate));
  a.set("num_group", groups);
  a.set("no_bias", no_bias);
  return a;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  // The registry's examples of every op here (but depthwise and 3-D
  // convolutions, other files' kernels).
  for (const std::string op : {"FullyConnected", "dot", "batch_dot", "_strided_batch_dot", "Convolution"}) {
    const OpDef& def = find_op(op);
    for (const OpExample& e : def.examples) {
      if (!e.input_types.empty()) continue;  // an int8 example: CUDA computes float32 only
      const Attrs a = normalize_attrs(def, e.attrs);
      if (op == "Convolution" && a.get_int("num_group") > 1 && a.get_int("num_group") == e.inputs[0][1] &&
          a.get_int("num_filter") == e.inputs[0][1])
        continue;
      if (op == "Convolution" && e.inputs[0].size() == 5) continue;
      out.push_back({op, e.attrs, e.inputs, false, ""});
      out.push_back({op, e.attrs, e.inputs, true, ""});
    }
  }
  // Paths the examples may miss: batch-1 GEMV, tiles with split-K, the
  // direct 1x1 convolution, implicit GEMM at batch 2 with split-K.
  out.push_back({"FullyConnected", fc(300, false, true), {{1, 2, 5, 50}, {300, 500}, {300}}, true, "hg_gemv<1"});
  out.push_back({"FullyConnected", fc(40, false, true), {{130, 700}, {40, 700}, {40}}, true, "hg_gemm<"});
  out.push_back({"dot", trans(false, false), {{3, 200}, {200, 70}}, true, "hg_gemv<4, 0, 1>"});
  out.push_back({"batch_dot", trans(true, false), {{3, 600, 20}, {3, 600, 24}}, true, "hg_gemm<"});
  out.push_back({"Convolution", conv({1, 1}, 24, {}, {}, {}, 1, false), {{1, 40, 9, 10}, {24, 40, 1, 1}, {24}}, true,
                 "hg_conv2d_1x1<"});
  out.push_back({"Convolution", conv({3, 3}, 20, {}, {1, 1}, {}, 1, false),
                 {{2, 64, 5, 5}, {20, 64, 3, 3}, {20}}, true, "hg_conv2d_gemm<"});
  out.push_back({"Convolution", conv({1, 1}, 30, {}, {}, {}, 1, true), {{12, 20, 1, 1}, {30, 20, 1, 1}}, true,
                 "hg_gemm<"});
  return out;
}

struct Prepared {
  Case c;
  Attrs attrs;
  std::vector<TensorType> in, out;
  KernelCall call;
  int64_t scratch_floats = 0;
  std::vector<std::vector<float>> inputs;
  std::vector<float> expected;
};

// The test epilogue, here and in the driver: marks each value with its
// channel and index.
float epilogue(int64_t channel, int64_t index, float v) {
  return v * 0.5f + 0.25f * static_cast<float>(channel % 7) + 0.125f * static_cast<float>(index % 5);
}
const char* kDriverEpilogue = R"(struct TestEpilogue {
  __device__ float operator()(long channel, long index, float v) const {
    return v * 0.5f + 0.25f * static_cast<float>(channel % 7) + 0.125f * static_cast<float>(index % 5);
  }
};
)";

Prepared prepare(const Case& c, std::mt19937& rng) {
  Prepared p;
  p.c = c;
  const OpDef& def = find_op(c.op);
  p.attrs = normalize_attrs(def, c.attrs);
  for (const Shape& s : c.inputs) p.in.push_back(TensorType{s, DType::kFloat32});
  p.out = def.infer(p.attrs, p.in);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const TensorType& t : p.in) {
    std::vector<float> v(static_cast<std::size_t>(num_elements(t.shape)));
    for (float& x : v) x = u(rng);
    p.inputs.push_back(std::move(v));
  }
  p.expected.assign(static_cast<std::size_t>(num_elements(p.out[0].shape)), 0.0f);
  KernelIO io{p.attrs, {}, p.in, {p.expected.data()}, p.out};
  for (const auto& v : p.inputs) io.in.push_back(v.data());
  def.reference(io);
  if (c.epilogue) {
    const Shape& s = p.out[0].shape;
    const int axis = *def.epilogue_axis < 0 ? static_cast<int>(s.size()) + *def.epilogue_axis : *def.epilogue_axis;
    const int64_t inner = dims_product(s, static_cast<std::size_t>(axis) + 1, s.size());
    for (std::size_t i = 0; i < p.expected.size(); ++i) {
      const int64_t idx = static_cast<int64_t>(i);
      p.expected[i] = epilogue(idx / inner % s[static_cast<std::size_t>(axis)], idx, p.expected[i]);
    }
  }
  const OpKernel* k = find_kernel(Backend::kCuda, def.name);
  if (!k) throw std::runtime_error("no CUDA kernel for " + c.op);
  Node node{"node", def.name, p.attrs, {}, {}};
  const Target& cuda = find_target("cuda");
  if (k->scratch_bytes) p.scratch_floats = k->scratch_bytes(KernelSite{p.attrs, p.in, p.out, {}, cuda, ""}) / 4;
  std::vector<std::string> ins;
  for (std::size_t i = 0; i < p.in.size(); ++i) ins.push_back("in" + std::to_string(i));
  const EmitContext ctx{node,
                        cuda,
                        ins,
                        p.in,
                        {"out0"},
                        p.out,
                        c.epilogue ? "ep" : "",
                        {},
                        p.scratch_floats > 0 ? "scratch" : "",
                        {},
                        "pool",
                        p.scratch_floats * 4,
                        "stream"};
  p.call = k->emit(ctx);
  return p;
}

void write_floats(const std::string& path, const std::vector<float>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
}
std::vector<float> read_floats(const std::string& path, std::size_t n) {
  std::vector<float> v(n, std::nanf(""));
  std::ifstream f(path, std::ios::binary);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(float)));
  return v;
}

TEST_F(GemmKernels, PrintedLaunchesMatchTheReference) {
  std::mt19937 rng(7);
  std::vector<Prepared> prepared;
  for (const Case& c : cases()) prepared.push_back(prepare(c, rng));

  std::ostringstream d;
  d << "#include <cuda_runtime.h>\n#include <cstdio>\n#include <cstdlib>\n#include <vector>\n"
       "#define HG_CHECK(call) do { const cudaError_t e_ = (call); if (e_ != cudaSuccess) return e_; } while (0)\n"
       "namespace gemm_driver {\nnamespace kernels {\n"
    << read_text(kKernels + "/common.inc") << "\n"
    << read_text(kKernels + "/mma.inc") << "\n"
    << read_text(kKernels + "/gemm.inc") << "\n"
    << read_text(kKernels + "/conv.inc") << "\n"
    << kDriverEpilogue
    << "}  // namespace kernels\n}  // namespace gemm_driver\nusing namespace gemm_driver::kernels;\n";
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    const Prepared& p = prepared[i];
    for (const std::string& k : p.call.kernels)
      ASSERT_TRUE(k == "gemm" || k == "conv") << p.c.op << " uses " << k;
    d << "static cudaError_t case_" << i
      << "(cudaStream_t stream, const float* in0, const float* in1, const float* in2, float* out0, float* scratch) {\n"
      << "  (void)in0; (void)in1; (void)in2; (void)scratch; (void)stream;\n  const TestEpilogue ep{};\n  (void)ep;\n  "
      << p.call.code << "\n  return cudaSuccess;\n}\n";
  }
  d << "static float* upload(const char* path, long n) {\n"
       "  std::vector<float> h(static_cast<size_t>(n));\n  FILE* f = std::fopen(path, \"rb\");\n"
       "  if (!f || std::fread(h.data(), sizeof(float), h.size(), f) != h.size()) std::exit(2);\n  std::fclose(f);\n"
       "  float* p = nullptr;\n  if (cudaMalloc(&p, (h.size() + 1) * sizeof(float)) != cudaSuccess) std::exit(3);\n"
       "  cudaMemcpy(p, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);\n  return p;\n}\n"
       "int main() {\n  float* p[3] = {nullptr, nullptr, nullptr};\n  float* y = nullptr;\n  float* s = nullptr;\n"
       "  std::vector<float> h;\n  char name[64];\n";
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    const Prepared& p = prepared[i];
    for (std::size_t j = 0; j < p.inputs.size(); ++j) {
      write_floats(dir_ + "/in_" + std::to_string(i) + "_" + std::to_string(j), p.inputs[j]);
      d << "  p[" << j << "] = upload(\"in_" << i << "_" << j << "\", " << p.inputs[j].size() << ");\n";
    }
    const std::size_t n = p.expected.size();
    d << "  cudaMalloc(&y, " << n << " * sizeof(float));\n  cudaMemset(y, 0xff, " << n << " * sizeof(float));\n"
      << "  s = nullptr;\n  if (" << p.scratch_floats << " > 0) cudaMalloc(&s, " << p.scratch_floats
      << "L * sizeof(float));\n"
      << "  if (case_" << i << "(0, p[0], p[1], p[2], y, s) != cudaSuccess) { std::printf(\"case " << i
      << " failed\\n\"); return 1; }\n"
      << "  h.assign(" << n << ", 0.0f);\n  cudaMemcpy(h.data(), y, " << n << " * sizeof(float), cudaMemcpyDeviceToHost);\n"
      << "  std::snprintf(name, sizeof name, \"out_" << i << "\");\n"
      << "  { FILE* f = std::fopen(name, \"wb\"); std::fwrite(h.data(), sizeof(float), h.size(), f); std::fclose(f); }\n"
      << "  for (float*& q : p) { cudaFree(q); q = nullptr; }\n  cudaFree(y);\n  cudaFree(s);\n";
  }
  d << "  std::printf(\"OK\\n\");\n  return 0;\n}\n";
  std::ofstream(dir_ + "/driver.cu") << d.str();

  const CommandResult built = run_command(q(HYBGEN_CXX) + " -std=c++17 -O1 -Wall -Wextra -Werror -x c++ -I" + q(dir_) +
                                          " " + q(dir_ + "/driver.cu") + " -o " + q(dir_ + "/driver"));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const CommandResult ran = run_command("cd " + q(dir_) + " && timeout 60 ./driver");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    const Prepared& p = prepared[i];
    SCOPED_TRACE(p.c.op + " case " + std::to_string(i) + " " + shape_str(p.in[0].shape) + "\n" + p.call.code);
    if (!p.c.expect.empty()) {
      EXPECT_NE(p.call.code.find(p.c.expect), std::string::npos);
    }
    const std::vector<float> got = read_floats(dir_ + "/out_" + std::to_string(i), p.expected.size());
    double diff = 0, ref = 0;
    for (std::size_t j = 0; j < got.size(); ++j) {
      diff = std::fmax(diff, std::fabs(static_cast<double>(got[j]) - p.expected[j]));
      ref = std::fmax(ref, std::fabs(static_cast<double>(p.expected[j])));
    }
    EXPECT_LE(diff, 1e-5 * std::fmax(ref, 1e-30)) << "max |diff| " << diff << ", max |ref| " << ref;
  }
  // The shapes that want split-K get scratch for it.
  bool split = false;
  for (const Prepared& p : prepared) split = split || p.scratch_floats > 0;
  EXPECT_TRUE(split);
}

// A .cu for nvcc: `head` (defines, includes), the kernel files in one
// namespace, then `tail` (instantiations), which sees them unqualified.
// How many times `needle` occurs in `text` (ptxas's lines per kernel).
std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

std::string kernels_source(const std::string& head, const std::vector<std::string>& files, const std::string& tail) {
  std::string text = head + "namespace nv {\nnamespace kernels {\n";
  for (const std::string& f : files) text += read_text(kKernels + "/" + f) + "\n";
  return text + "}  // namespace kernels\n}  // namespace nv\nusing namespace nv::kernels;\n" + tail;
}

// The templates are valid CUDA for sm_80 and sm_90, FP32 kernels without
// spills (register tiles stay in registers), and with the TF32 path on.
TEST_F(GemmKernels, TemplatesCompileWithNvcc) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on PATH";
  const std::string source = kernels_source(
      "#include <cuda_runtime.h>\n#include <cstdint>\n#include <cmath>\n"
      "#if defined(HG_CUDA_TF32)\n#include <mma.h>\n#endif\n",
      {"common.inc", "mma.inc", "gemm.inc", "conv.inc"}, R"(
cudaError_t instantiate(const float* a, const float* b, float* c, float* s) {
  HgNoEpilogue e;
  cudaError_t r = cudaSuccess;
  r = hg_gemm<0, 0, 1>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 2, s, e);
  r = hg_gemm<0, 1, 0>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 1, s, e);
  r = hg_gemm<3, 0, 1>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 1, s, e);
  r = hg_gemm<4, 0, 0>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 1, s, e);
  r = hg_conv2d_gemm<4, 3, 3>(0, a, b, nullptr, c, 2, 64, 56, 56, 64, 56, 56, 1, 1, 1, 1, 1, 1, 1, 1, s, e);
  r = hg_conv2d_gemm<3, 7, 7>(0, a, b, nullptr, c, 2, 3, 224, 224, 64, 112, 112, 2, 2, 3, 3, 1, 1, 1, 1, s, e);
#if !defined(HG_CUDA_TF32)
  // HG_CUDA_TF32 changes configurations 0, 3 and 4 only: these compile to
  // the same code either way, so the FP32 build alone compiles them.
  r = hg_gemm<1, 0, 0>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 1, s, e);
  r = hg_gemm<2, 1, 1>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 1, s, e);
  r = hg_gemv<1, 0, 0>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 1, 64, 64, e);
  r = hg_gemv<8, 1, 1>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 8, 64, 64, e);
  r = hg_conv2d_gemm<2, 1, 1>(0, a, b, nullptr, c, 2, 64, 7, 7, 64, 7, 7, 1, 1, 0, 0, 1, 1, 1, 1, s, e);
  r = hg_conv2d_1x1<1>(0, a, b, nullptr, c, 1, 64, 3136, 64, 1, 1, s, e);
#endif
  return r;
}
)");
  const CommandResult fp32 = nvcc_report(source);
  ASSERT_EQ(fp32.exit_code, 0) << fp32.output;
  const std::size_t entries = occurrences(fp32.output, "spill stores");
  const std::size_t clean = occurrences(fp32.output, " 0 bytes spill stores, 0 bytes spill loads");
  EXPECT_GT(entries, 0u) << fp32.output;
  EXPECT_EQ(clean, entries) << fp32.output;
  const CommandResult tf32 =
      run_command("nvcc -std=c++17 -O3 -arch=sm_80 -DHG_CUDA_TF32 -DHG_CUDA_TF32_MMA -c " + q(dir_ + "/nv.cu") + " -o " + q(dir_ + "/tf.o"));
  EXPECT_EQ(tf32.exit_code, 0) << tf32.output;
}

// --precision tf32's convolution gather on the mma.sync kernel, for sm_80
// and sm_90: compiled, without spills.
TEST_F(GemmKernels, Tf32MmaGatherCompilesWithNvccWithoutSpills) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on PATH";
  const std::string source = kernels_source(
      "#define HG_CUDA_TF32 1\n#define HG_CUDA_TF32_MMA 1\n"
      "#include <cuda_runtime.h>\n#include <cstdint>\n#include <cmath>\n#include <mma.h>\n",
      {"common.inc", "mma.inc", "gemm.inc", "conv.inc"}, R"(
cudaError_t instantiate(const float* a, const float* b, float* c, float* s) {
  HgNoEpilogue e;
  cudaError_t r = hg_conv2d_gemm<4, 3, 3>(0, a, b, nullptr, c, 2, 64, 56, 56, 64, 56, 56, 1, 1, 1, 1, 1, 1, 1, 1, s, e);
  r = hg_conv2d_gemm<3, 1, 1>(0, a, b, nullptr, c, 2, 64, 56, 56, 128, 28, 28, 2, 2, 0, 0, 1, 1, 1, 1, s, e);
  return r;
}
)");
  const CommandResult built = nvcc_report(source);
  ASSERT_EQ(built.exit_code, 0) << built.output;
  // The mma.sync kernels' entries with AM 0 and BMODE 2 (the gather), and
  // their spills. (The wmma fallback, which unaligned weights take, spills
  // 84-92 bytes here; it is not this test's.)
  std::size_t gathers = 0, clean = 0;
  bool in_gather = false;
  std::istringstream lines(built.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("Compiling entry function") != std::string::npos) {
      in_gather = line.find("hg_gemm_mma_kernel") != std::string::npos && line.find("EELi0ELi2E") != std::string::npos;
      if (in_gather) ++gathers;
    }
    if (in_gather && line.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos) ++clean;
  }
  EXPECT_EQ(gathers, 4u) << built.output;  // two convolutions, two architectures
  EXPECT_EQ(clean, gathers) << built.output;
}

// Half storage (HG_CUDA_HALF, --precision fp16 / bf16): every path in
// __half and __nv_bfloat16 at the cuda target's half flags (sm_80, sm_90a),
// the FP16 / BF16 mma.sync kernel and, for sm_90a, the wgmma kernel in each
// operand layout, the wmma fallback (the convolution gather) and the FP32
// tiles, GEMVs, 3-D and transposed convolutions reading halves, none
// spilling.
TEST_F(GemmKernels, HalfStorageTemplatesCompileWithNvccWithoutSpills) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on PATH";
  const std::string source = kernels_source(
      "#define HG_CUDA_HALF 1\n#include <cuda_runtime.h>\n#include <cuda.h>\n"
      "#include <cstdint>\n#include <cmath>\n#include <cstring>\n"
      "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include <mma.h>\n",
      {"common.inc", "mma.inc", "gemm.inc", "conv.inc", "conv3d.inc", "deconv.inc"}, R"(
template <class E>
cudaError_t instantiate(const E* a, const E* b, E* c, float* s) {
  HgNoEpilogue e;
  cudaError_t r = cudaSuccess;
  r = hg_gemm<0, 0, 1>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 2, s, e);
  r = hg_gemm<0, 1, 0>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 1, s, e);
  r = hg_gemm<3, 0, 0>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 1, s, e);
  r = hg_gemm<4, 1, 1>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 1, s, e);
  r = hg_gemm<1, 0, 0>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 1, s, e);
  r = hg_gemm<2, 1, 1>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 64, 64, 64, 1, s, e);
  r = hg_gemv<1, 0, 0>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 1, 64, 64, e);
  r = hg_gemv<8, 1, 1>(0, a, 64, 0, b, 64, 0, nullptr, c, 64, 0, 64, 1, 8, 64, 64, e);
  r = hg_conv2d_gemm<4, 3, 3>(0, a, b, nullptr, c, 2, 64, 56, 56, 64, 56, 56, 1, 1, 1, 1, 1, 1, 1, 1, s, e);
  r = hg_conv2d_gemm<3, 7, 7>(0, a, b, nullptr, c, 2, 3, 224, 224, 64, 112, 112, 2, 2, 3, 3, 1, 1, 1, 1, s, e);
  r = hg_conv2d_gemm<2, 1, 1>(0, a, b, nullptr, c, 2, 64, 7, 7, 64, 7, 7, 1, 1, 0, 0, 1, 1, 1, 1, s, e);
  r = hg_conv2d_1x1<0>(0, a, b, nullptr, c, 1, 64, 3136, 64, 1, 1, s, e);
  r = hg_conv2d_1x1<1>(0, a, b, nullptr, c, 1, 64, 3136, 64, 1, 1, s, e);
  r = hg_conv3d(0, a, b, nullptr, c, HgConv3dGeometry{{1, 4, 4, 4, 4, 4, 3, 3, 3, 4, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1,
                                                       1, 1}}, e);
  r = hg_deconv2d(0, a, b, nullptr, c, 1, 4, 4, 4, 4, 3, 3, 8, 8, 2, 2, 1, 1, 1, 1, 1, e);
  return r;
}
template cudaError_t instantiate<__half>(const __half*, const __half*, __half*, float*);
template cudaError_t instantiate<__nv_bfloat16>(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, float*);
)");
  Target half = find_target("cuda");
  half.precision = Precision::kFP16;
  const CommandResult built = nvcc_report(source, compiler_flags_for(half));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  // Each kernel's spill stores (ptxas: "Compiling entry function 'NAME' for
  // 'ARCH'", then "N bytes spill stores"): none in the tensor-core GEMMs, at
  // most 64 bytes elsewhere (sm_90a's build of the bf16 transposed
  // convolution spills 28).
  std::istringstream lines(built.output);
  std::string line, function;
  int entries = 0, tensor_core = 0, wgmma_sm90a = 0;
  while (std::getline(lines, line)) {
    if (line.find("Compiling entry function") != std::string::npos) function = line;
    const std::size_t at = line.find(" bytes spill stores");
    if (at == std::string::npos) continue;
    const std::size_t from = line.rfind(' ', at - 1) + 1;
    const int bytes = std::stoi(line.substr(from, at - from));
    const bool tc = function.find("mma_half_kernel") != std::string::npos;
    ++entries;
    tensor_core += tc;
    wgmma_sm90a +=
        function.find("wgmma_half_kernel") != std::string::npos && function.find("for 'sm_90a'") != std::string::npos;
    EXPECT_LE(bytes, tc ? 0 : 64) << function;
  }
  EXPECT_GT(entries, 0) << built.output;
  EXPECT_GT(tensor_core, 0) << "no FP16 / BF16 mma.sync or wgmma kernel was compiled\n" << built.output;
  EXPECT_GT(wgmma_sm90a, 0) << "no wgmma kernel was built for sm_90a\n" << built.output;
}

// bench/cuda/bench_gemm_cublas.cu, which a GPU session runs against cuBLAS,
// still builds against the templates (front end to sm_90a PTX: the host
// code, and the wgmma kernel's instructions).
TEST_F(GemmKernels, CublasBenchmarkCompilesWithNvcc) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on PATH";
  const CommandResult built =
      run_command("nvcc -std=c++17 -arch=compute_90a --ptx " + q(HYBGEN_SOURCE_DIR "/bench/cuda/bench_gemm_cublas.cu") +
                  " -o " + q(dir_ + "/bench.ptx"));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  std::ifstream ptx(dir_ + "/bench.ptx");
  const std::string text((std::istreambuf_iterator<char>(ptx)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("wgmma.mma_async"), std::string::npos) << "the FP16 GEMM's wgmma kernel was not built";
}

// The attention kernel on the tensor cores (attention.inc, half storage,
// which shares mma.inc's products with the GEMM): every head size it takes
// (32, 64, 128, and unequal ones), each block size (1, 2 and 4 warps), both
// half types, for sm_80 and sm_90, none spilling.
TEST_F(GemmKernels, AttentionOnTensorCoresCompilesWithNvccWithoutSpills) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on PATH";
  const std::string source = kernels_source(
      "#define HG_CUDA_HALF 1\n#include <cuda_runtime.h>\n#include <cuda.h>\n"
      "#include <cstdint>\n#include <cmath>\n#include <cstring>\n"
      "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n",
      {"common.inc", "reduce_common.inc", "mma.inc", "attention.inc"}, R"(
// Blocks of 1, 2 and 4 warps (hg_attention's kRows under half storage).
template <int D, int DV, class E>
cudaError_t heads(const E* q, E* o, HgNoEpilogue e) {
  cudaError_t r = hg_attention<D, DV, 1>(0, q, 0, D, 1, q, 0, D, 1, q, 0, DV, 1, o, 0, DV, DV, 1, 16, 100, D, DV, 0.1f, e);
  r = hg_attention<D, DV, 2>(0, q, 0, D, 1, q, 0, D, 1, q, 0, DV, 1, o, 0, DV, DV, 1, 32, 100, D, DV, 0.1f, e);
  r = hg_attention<D, DV, 4>(0, q, 0, D, 1, q, 0, D, 1, q, 0, DV, 1, o, 0, DV, DV, 1, 100, 100, D, DV, 0.1f, e);
  return r;
}
template <class E>
cudaError_t instantiate(const E* q, E* o) {
  HgNoEpilogue e;
  cudaError_t r = cudaSuccess;
  r = heads<32, 32>(q, o, e);
  r = heads<64, 64>(q, o, e);
  r = heads<128, 128>(q, o, e);
  r = heads<64, 128>(q, o, e);
  return r;
}
template cudaError_t instantiate<__half>(const __half*, __half*);
template cudaError_t instantiate<__nv_bfloat16>(const __nv_bfloat16*, __nv_bfloat16*);
)");
  const CommandResult built = nvcc_report(source);
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const std::size_t entries = occurrences(built.output, "spill stores");
  const std::size_t clean = occurrences(built.output, " 0 bytes spill stores, 0 bytes spill loads");
  const std::size_t mma =
      occurrences(built.output, "Compiling entry function '_ZN2nv7kernels23hg_attention_mma_kernel");
  const std::size_t probes = occurrences(built.output, "Compiling entry function '_ZN2nv7kernels15hg_probe_kernel");
  // 4 head sizes x 3 block sizes x 2 types x 2 architectures, and only those
  // (beside common.inc's device probe): half storage never takes the FP32 kernel.
  EXPECT_EQ(mma, 48u) << built.output;
  EXPECT_EQ(entries, mma + probes) << built.output;
  EXPECT_EQ(clean, entries) << built.output;
}

}  // namespace
}  // namespace hybgen::testing
