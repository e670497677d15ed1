// examples/cuda: its main.cpp, built against the CUDA that `hybgen --target
// cuda` writes for the tiny MLP, runs on the CPU through the cuda-host layer
// and prints the independently computed outputs; with nvcc on the PATH, the
// same files also compile and link as real CUDA (running needs a GPU).
#include <gtest/gtest.h>

#include <fstream>

#include "emit/templates.h"
#include "io/file_util.h"
#include "run_command.h"
#include "targets/toolchain.h"

namespace hybgen {
namespace {

using testing::quoted;
using testing::run_command;

const std::string kExample = HYBGEN_SOURCE_DIR "/examples/cuda";
const std::string kModel = HYBGEN_SOURCE_DIR "/examples/cmake-consumer/model";

void generate(const std::string& dir) {
  const auto r = run_command(quoted(HYBGEN_BINARY) + " " + quoted(kModel + "/tiny_mlp.json") +
                             " --target cuda --name tiny_mlp --namespace tiny -o " + quoted(dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

TEST(CudaExample, RunsOnCudaHostAndPrintsTheExpectedOutputs) {
  TempDir dir("hybgen-cuda-example");
  ASSERT_NO_FATAL_FAILURE(generate(dir.path()));
  const std::string d = dir.path() + "/";
  std::ofstream(d + "cuda_runtime.h") << template_text("cuda_host/cuda_runtime.h");
  auto r = run_command(quoted(HYBGEN_CXX) + " -std=c++17 -O1 -Wall -Wextra -Werror -pthread -I" + quoted(dir.path()) +
                       " -I" + quoted(kModel) + " -x c++ " + quoted(kExample + "/main.cpp") + " " +
                       quoted(d + "tiny_mlp.cu") + " -x none " + quoted(d + "tiny_mlp_weights.cpp") + " -o " +
                       quoted(d + "example"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_command("timeout 60 " + quoted(d + "example"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("OK: max difference"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("replay prob[2]"), std::string::npos) << r.output;
}

TEST(CudaExample, CompilesAndLinksWithNvcc) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on the PATH";
  TempDir dir("hybgen-cuda-example-nvcc");
  ASSERT_NO_FATAL_FAILURE(generate(dir.path()));
  const std::string d = dir.path() + "/";
  const auto r = run_command("nvcc -std=c++17 -O2 -arch=sm_80 -I" + quoted(dir.path()) + " -I" + quoted(kModel) + " " +
                             quoted(kExample + "/main.cpp") + " " + quoted(d + "tiny_mlp.cu") + " " +
                             quoted(d + "tiny_mlp_weights.cpp") + " -o " + quoted(d + "example"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace hybgen
