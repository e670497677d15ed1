// The code generated for the microcontroller targets (cortex-m4, cortex-m7,
// cortex-m55) as firmware needs it. The model's object in every board build
// references no software double-precision routine (__aeabi_d*: the FPUs
// have single precision only), no heap and no exception machinery
// (verify checks it with arm-none-eabi-nm). LeNet and the MNIST CNN run on each target's board
// under qemu-system-arm and match the reference, LeNet's inference within
// 2 KiB of stack (the firmware contract, docs/firmware.md: no stack buffers beyond a few hundred bytes).
// A 164k-parameter MLP, its weights larger than the AN547's code memory,
// runs on the cortex-m55's board from the memory kept for weights.
// Skipped where the toolchain or the emulator is not installed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph_builders.h"
#include "io/mxnet/mxnet_symbol.h"
#include "pipeline.h"
#include "targets/target.h"
#include "verify/generated_build.h"
#include "targets/toolchain.h"
#include "verify/verify.h"
#include "zoo.h"

namespace hybgen {
namespace {

const char* const kTargets[] = {"cortex-m4", "cortex-m7", "cortex-m55"};

bool toolchain_missing(std::string* why) {
  const Target& t = find_target(kTargets[0]);
  for (const std::string& program : {t.cross_compiler, t.emulator, t.symbol_tool})
    if (!on_path(program)) {
      *why = program + " is not on the PATH (Debian: " + t.packages + ")";
      return true;
    }
  return false;
}

#define SKIP_WITHOUT_TOOLCHAIN()                  \
  do {                                            \
    std::string why;                              \
    if (toolchain_missing(&why)) GTEST_SKIP() << why; \
  } while (0)

Graph lenet_graph() {
  auto net = zoo::lenet();
  net->initialize(init::Xavier(), 42);
  return net->trace({{1, 1, 28, 28}}, "lenet", true);
}

Graph mnist_graph() {
  const std::string symbol =
      std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-real/mnist-cnn-gluon-1.6/mnist-symbol.json";
  MxnetImportOptions options;
  options.input_shapes["data"] = {1, 1, 28, 28};
  return import_mxnet(symbol, find_mxnet_params(symbol), options);
}

// The firmware contract's symbols (Target::forbidden_symbol_prefixes), as
// arm-none-eabi-nm -u lists an object's undefined ones: every verify on a
// board checks the model's object with them (GeneratedBuild), so the board
// tests here and the op test on each board (RegistryOps) hold every op's
// kernels to them.
TEST(FirmwareKernels, TheHeapExceptionsAndSoftDoubleAreForbiddenSymbols) {
  const std::string nm_output =
      "         U __aeabi_d2f\n         U __aeabi_fmul\n         U _Znwj\n         U __cxa_throw\n"
      "         U malloc\n         U memcpy\n         U __aeabi_unwind_cpp_pr0\n         U sqrtf\n";
  for (const char* name : kTargets) {
    const Target& target = find_target(name);
    EXPECT_EQ(target.symbol_tool, "arm-none-eabi-nm") << name;
    EXPECT_EQ(symbols_with_prefixes(nm_output, target.forbidden_symbol_prefixes),
              (std::vector<std::string>{"__aeabi_d2f", "_Znwj", "__cxa_throw", "malloc", "__aeabi_unwind_cpp_pr0"}))
        << name;
  }
  EXPECT_TRUE(find_target("x86-64-v3").forbidden_symbol_prefixes.empty());
}

VerifyReport verify_on_board(const Graph& graph, const std::string& target) {
  VerifyOptions options;
  options.compile.target = find_target(target);
  options.tolerance = 1e-5;
  return verify_model(graph, options);
}

// Outputs within 1e-5 of the reference on every board, in at most 2 KiB of stack.
void expect_runs_on_every_board_in_two_kilobytes(const Graph& graph) {
  for (const char* name : kTargets) {
    const VerifyReport report = verify_on_board(graph, name);
    ASSERT_EQ(report.checks.size(), 1u);
    EXPECT_TRUE(report.ok) << name << ": max relative error " << report.checks[0].max_rel_error;
    ASSERT_TRUE(report.board_measured) << name;
    EXPECT_LE(report.stack_bytes, 2048u) << name;
    EXPECT_GT(report.instructions, 0u) << name;
  }
}

TEST(FirmwareKernels, LenetRunsOnEveryBoardInTwoKilobytesOfStack) {
  SKIP_WITHOUT_TOOLCHAIN();
  expect_runs_on_every_board_in_two_kilobytes(lenet_graph());
}

TEST(FirmwareKernels, MnistCnnRunsOnEveryBoardInTwoKilobytesOfStack) {
  SKIP_WITHOUT_TOOLCHAIN();
  expect_runs_on_every_board_in_two_kilobytes(mnist_graph());
}

// data(1x784) -> Dense(192) -> relu -> Dense(64) -> relu -> Dense(10): 163722
// parameters, 654888 bytes of float32 weights.
Graph mlp_164k() {
  Graph g;
  g.name = "mlp164k";
  g.add_input("data", {{1, 784}});
  const int64_t sizes[] = {784, 192, 64, 10};
  std::string x = "data";
  for (int layer = 0; layer < 3; ++layer) {
    const std::string p = "dense" + std::to_string(layer);
    g.add_constant(p + "_weight", Constant::f32({sizes[layer + 1], sizes[layer]},
                                                testing::seeded_values(sizes[layer + 1] * sizes[layer], 30 + layer)));
    g.add_constant(p + "_bias", Constant::f32({sizes[layer + 1]}, testing::seeded_values(sizes[layer + 1], 40 + layer)));
    g.nodes.push_back(testing::make_node(p + "_fwd", "FullyConnected", {x, p + "_weight", p + "_bias"},
                                         testing::attrs_of({{"num_hidden", sizes[layer + 1]}})));
    x = p + "_fwd";
    if (layer < 2) {
      g.nodes.push_back(testing::make_node(p + "_relu", "Activation", {x}, testing::attrs_of({{"act_type", std::string("relu")}})));
      x = p + "_relu";
    }
  }
  g.outputs = {x};
  return g;
}

TEST(FirmwareKernels, WeightsLargerThanTheCodeMemoryRunOnTheM55sBoard) {
  SKIP_WITHOUT_TOOLCHAIN();
  const Graph graph = mlp_164k();
  const Target& m55 = find_target("cortex-m55");
  ASSERT_GT(graph.weight_bytes(), m55.code.bytes) << "the model must not fit the code memory to test anything";
  const VerifyReport report = verify_on_board(graph, m55.name);
  ASSERT_EQ(report.checks.size(), 1u);
  EXPECT_TRUE(report.ok) << "max relative error " << report.checks[0].max_rel_error;
  EXPECT_GT(report.weight_bytes, m55.code.bytes);
  EXPECT_GT(report.instructions, 0u);
}

}  // namespace
}  // namespace hybgen
