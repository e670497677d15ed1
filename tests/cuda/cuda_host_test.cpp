// The cuda-host layer (templates/cuda_host/cuda_runtime.h.in): small CUDA
// programs (tests/cuda/programs/*.cu) built as C++17 with the host compiler
// against it, as `hybgen verify --target cuda-host` builds generated code,
// and run on the CPU; and the same programs built with nvcc, when there is
// one, to show they are valid CUDA.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "cuda_test_support.h"
#include "run_command.h"

namespace hybgen::testing {
namespace {

namespace fs = std::filesystem;

// Seconds a program may run before it counts as hung.
const std::string kTimeout = "timeout 30 ";

// Each test gets a folder holding cuda_runtime.h (the layer, as verify
// writes it) and what it builds.
class CudaHost : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    dir_ = (fs::temp_directory_path() / ("hybgen_" + name + "_" + std::to_string(::getpid()))).string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy_file(kHeader, dir_ + "/cuda_runtime.h");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Builds programs/NAME.cu into DIR/NAME with `cxx`, warnings as errors.
  CommandResult build(const std::string& name, const std::string& flags = "", const std::string& cxx = HYBGEN_CXX) {
    return run_command(q(cxx) + " -std=c++17 -O1 -Wall -Wextra -Wpedantic -Werror " + flags + " -x c++ -I" +
                       q(dir_) + " " + q(kPrograms + "/" + name + ".cu") + " -o " +
                       q(dir_ + "/" + name));
  }
  CommandResult run(const std::string& name, const std::string& args = "") {
    return run_command(kTimeout + q(dir_ + "/" + name) + (args.empty() ? "" : " " + args));
  }
  // Builds and runs a program that checks its own results and prints OK.
  void expect_ok(const std::string& name, const std::string& flags = "") {
    const CommandResult built = build(name, flags);
    ASSERT_EQ(built.exit_code, 0) << built.output;
    const CommandResult ran = run(name);
    EXPECT_EQ(ran.exit_code, 0) << ran.output;
    EXPECT_EQ(ran.output, "OK\n");
  }

  std::string dir_;
};

TEST_F(CudaHost, GridStrideElementwiseOverA2DGrid) { expect_ok("elementwise_2d"); }

TEST_F(CudaHost, TiledMatmulWithSyncthreadsMatchesAPlainLoop) { expect_ok("matmul_tiled"); }

TEST_F(CudaHost, ShuffleReductionAndEveryLanesShuffleResult) { expect_ok("warp_reduce"); }

TEST_F(CudaHost, AtomicAddAndAtomicMax) { expect_ok("atomics"); }

TEST_F(CudaHost, InvalidLaunchConfigurationIsReported) { expect_ok("launch_config"); }

TEST_F(CudaHost, GraphCaptureRecordsAndReplaysWithNewInput) { expect_ok("graph_replay"); }

TEST_F(CudaHost, MemcpyMemsetRoundTrip) { expect_ok("memcpy_memset"); }

// mma.sync (TF32, FP16, BF16) on the PTX ISA's fragment layouts, a TF32
// operand's low bits ignored, and wmma, exactly; wmma fragments that differ
// between a warp's lanes abort with a message.
TEST_F(CudaHost, TensorCoresComputeTheWarpsTileExactly) {
  expect_ok("tensor_cores");
  const CommandResult ran = run("tensor_cores", "differing_fragments");
  EXPECT_NE(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(ran.output.find("finished"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("wmma::mma_sync: lane 1's fragments differ from lane 0's"), std::string::npos)
      << ran.output;
}

// __half and __nv_bfloat16 convert as the generator's weights do (gen/ir/half.h) and as rounding in double says.
TEST_F(CudaHost, HalfConversionsRoundToNearestEven) {
  expect_ok("half_conversions", "-I" + q(HYBGEN_SOURCE_DIR "/gen"));
}

// Synchronisation a GPU hangs on aborts with a message that names the
// launch and the barrier, well within the timeout.
TEST_F(CudaHost, NonUniformSynchronisationAbortsWithAMessage) {
  const CommandResult built = build("divergent_sync");
  ASSERT_EQ(built.exit_code, 0) << built.output;
  struct Case {
    const char* arg;
    std::vector<std::string> said;
  };
  const Case cases[] = {
      {"half_sync",
       {"kernel launch #1", "void(float", "grid (2,1,1), block (64,1,1)", "in block (0,0,0)",
        "thread (16,0,0) exited while 16 thread(s) wait at __syncthreads() at", "divergent_sync.cu:12"}},
      {"two_barriers", {"reached __syncthreads() at", "divergent_sync.cu:24", "at another one", "divergent_sync.cu:21"}},
      {"half_warp_shuffle", {"thread (16,0,0) exited while lanes of its warp wait for it", "0xffffffff"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.arg);
    const CommandResult ran = run("divergent_sync", c.arg);
    EXPECT_NE(ran.exit_code, 0) << ran.output;
    EXPECT_NE(ran.exit_code, 124) << "timed out (hung): " << ran.output;
    EXPECT_EQ(ran.output.find("finished"), std::string::npos) << ran.output;
    for (const std::string& s : c.said) EXPECT_NE(ran.output.find(s), std::string::npos) << s << "\n" << ran.output;
  }
}

// The layer's own programs, which nvcc compiles too (the kernel families'
// programs beside them in tests/cuda/programs are compiled by their own tests).
std::vector<std::string> program_names() {
  return {"atomics",      "divergent_sync", "elementwise_2d", "graph_replay", "launch_config",
          "matmul_tiled", "memcpy_memset",  "tensor_cores",   "warp_reduce"};
}

class CudaHostProgram : public CudaHost, public ::testing::WithParamInterface<std::string> {};
std::string program_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

// The layer's fiber switches carry AddressSanitizer's annotations.
using CudaHostUnderSanitizers = CudaHostProgram;
TEST_P(CudaHostUnderSanitizers, RunsClean) {
  const std::string flags = "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all";
  const CommandResult built = build(GetParam(), flags);
  if (built.exit_code != 0 && built.output.find("asan") != std::string::npos)
    GTEST_SKIP() << "no sanitizer runtime here: " << built.output;
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const CommandResult ran = run(GetParam());
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_EQ(ran.output, "OK\n");
}
INSTANTIATE_TEST_SUITE_P(Programs, CudaHostUnderSanitizers,
                         ::testing::Values("matmul_tiled", "warp_reduce", "graph_replay", "tensor_cores"),
                         program_name);

// Other machines switch fibers with ucontext: the same results through it.
TEST_F(CudaHost, UcontextFibersGiveTheSameResults) {
  expect_ok("warp_reduce", "-DHG_CUDA_HOST_UCONTEXT");
  const CommandResult built = build("divergent_sync", "-DHG_CUDA_HOST_UCONTEXT");
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const CommandResult ran = run("divergent_sync");
  EXPECT_NE(ran.exit_code, 0) << ran.output;
  EXPECT_NE(ran.exit_code, 124) << "timed out (hung): " << ran.output;
  EXPECT_NE(ran.output.find("__syncthreads() at"), std::string::npos) << ran.output;
}

// The header is warning-free under both GCC and Clang, whichever built this.
TEST_F(CudaHost, HeaderIsWarningFreeWithGccAndClang) {
  int checked = 0;
  for (const char* cxx : {"g++", "clang++"}) {
    if (!on_path(cxx)) continue;
    SCOPED_TRACE(cxx);
    const CommandResult built = build("warp_reduce", "-fsyntax-only", cxx);
    EXPECT_EQ(built.exit_code, 0) << built.output;
    EXPECT_EQ(built.output, "");
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "neither g++ nor clang++ on PATH";
}

// The programs are valid CUDA: nvcc compiles them (no GPU needed).
using CudaHostProgramForNvcc = CudaHostProgram;
TEST_P(CudaHostProgramForNvcc, CompilesWithNvcc) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on PATH";
  const CommandResult built = run_command("nvcc -std=c++17 -arch=sm_80 -c " + q(kPrograms + "/" + GetParam() + ".cu") +
                                          " -o " + q(dir_ + "/" + GetParam() + ".o"));
  EXPECT_EQ(built.exit_code, 0) << built.output;
}
INSTANTIATE_TEST_SUITE_P(Programs, CudaHostProgramForNvcc, ::testing::ValuesIn(program_names()), program_name);

}  // namespace
}  // namespace hybgen::testing
