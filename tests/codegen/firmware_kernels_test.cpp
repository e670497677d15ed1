// The code generated for the microcontroller targets (cortex-m4, cortex-m7,
// cortex-m55) as firmware needs it. Objects of every op's example, LeNet and
// the MNIST CNN, compiled by arm-none-eabi-g++ with the target's flags,
// reference no software double-precision routine (__aeabi_d*: the FPUs
// have single precision only), no heap and no exception machinery
// (arm-none-eabi-nm). LeNet and the MNIST CNN run on each target's board
// under qemu-system-arm and match the reference, LeNet's inference within
// 2 KiB of stack (the firmware contract, docs/firmware.md: no stack buffers beyond a few hundred bytes).
// A 164k-parameter MLP, its weights larger than the AN547's code memory,
// runs on the cortex-m55's board from the memory kept for weights.
// Skipped where the toolchain or the emulator is not installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "all_ops_graph.h"
#include "graph_builders.h"
#include "emit/cuda_emitter.h"
#include "io/file_util.h"
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
  for (const std::string& program : {t.cross_compiler, t.emulator, std::string("arm-none-eabi-nm")})
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

// Symbols an object must not name: soft double precision, the heap,
// exceptions.
bool forbidden(const std::string& symbol) {
  static const char* const kPrefixes[] = {"__aeabi_d", "malloc",   "free",     "calloc",   "realloc", "_Znw",
                                          "_Zna",      "_Zdl",     "_Zda",     "__cxa_",   "_Unwind_",
                                          "__gxx_personality",     "__aeabi_unwind_cpp"};
  for (const char* prefix : kPrefixes)
    if (symbol.compare(0, std::string(prefix).size(), prefix) == 0) return true;
  return false;
}

TEST(FirmwareKernels, ObjectsUseSinglePrecisionNoHeapAndNoExceptions) {
  SKIP_WITHOUT_TOOLCHAIN();
  const testing::AllOpsGraph all = testing::all_ops_graph(1234);
  const std::vector<std::pair<std::string, Graph>> models = {
      {"all_ops", all.graph}, {"lenet", lenet_graph()}, {"mnist", mnist_graph()}};
  TempDir dir("hybgen-firmware-test");
  // Every model for every target, compiled two at a time (one make -j2).
  std::string rules, objects;
  for (const char* name : kTargets) {
    const Target& target = find_target(name);
    for (const auto& [model, graph] : models) {
      const CompiledGraph compiled = compile_graph(graph, CompileOptions::for_target(target));
      CppEmitOptions emit{model, model, model};
      const std::string stem = dir.path() + "/" + std::string(name) + "-" + model;
      std::filesystem::create_directories(stem);
      for (const EmittedFile& f : emit_for_target(compiled, emit)) {
        if (f.filename != model + ".cpp" && f.filename != model + ".h") continue;
        write_file_atomic(stem + "/" + f.filename, f.content);
      }
      const std::string object = stem + ".o";
      objects += " " + object;
      rules += object + ":\n\t" + target.cross_compiler + " " + target.compiler_flags +
               " -std=c++11 -O2 -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti -c " +
               shell_quote(stem + "/" + model + ".cpp") + " -o " + shell_quote(object) + "\n";
    }
  }
  write_file_atomic(dir.path() + "/Makefile", "all:" + objects + "\n" + rules);
  const std::string log = dir.path() + "/make.log";
  ASSERT_EQ(std::system(("make -s -j2 -C " + shell_quote(dir.path()) + " > " + shell_quote(log) + " 2>&1").c_str()),
            0)
      << read_file_text(log);

  for (const char* name : kTargets)
    for (const auto& model : models) {
      const std::string object = dir.path() + "/" + std::string(name) + "-" + model.first + ".o";
      const std::string symbols = dir.path() + "/symbols.txt";
      ASSERT_EQ(std::system(("arm-none-eabi-nm -u " + shell_quote(object) + " > " + shell_quote(symbols)).c_str()), 0);
      std::istringstream lines(read_file_text(symbols));
      std::string type, symbol;
      std::vector<std::string> found;
      while (lines >> type >> symbol)
        if (forbidden(symbol)) found.push_back(symbol);
      EXPECT_TRUE(found.empty()) << model.first << " for " << name << " references " << ::testing::PrintToString(found);
    }
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
