// What a model takes on a microcontroller, from the CLI: `hybgen inspect
// --target cortex-m4` and the manifest `hybgen` writes give flash (code and
// weights) and RAM (arena and peak stack), measured on the emulated board;
// without the tools, generation still works and says what is missing, and
// verify refuses with the packages to install; a model too large for the
// board is said so by hybgen, with the sizes, before anything is compiled.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "graph_builders.h"
#include "io/file_util.h"
#include "io/model_json.h"
#include "run_command.h"
#include "targets/target.h"
#include "verify/board_report.h"

namespace hybgen {
namespace {

using testing::quoted;
using testing::run_command;

using testing::kHybgen;
const std::string kMnist = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-real/mnist-cnn-gluon-1.6/mnist-symbol.json";
const std::string kMnistArgs = quoted(kMnist) + " --shape data=1,1,28,28";

bool tools_for(const std::string& target, std::string* why) { return can_measure_on_board(find_target(target), why); }

TEST(BoardReport, InspectAndTheManifestGiveFlashAndRamMeasuredOnTheBoard) {
  std::string why;
  if (!tools_for("cortex-m4", &why)) GTEST_SKIP() << why;
  TempDir tmp("hybgen-board-report");
  const auto inspect = run_command(quoted(kHybgen) + " inspect " + kMnistArgs + " --target cortex-m4 --json");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  const nlohmann::json memory = nlohmann::json::parse(inspect.output).at("memory");
  EXPECT_EQ(memory.at("board"), "mps2-an386");
  EXPECT_GT(memory.at("code_bytes").get<std::size_t>(), 1000u);
  EXPECT_EQ(memory.at("flash_bytes").get<std::size_t>(),
            memory.at("code_bytes").get<std::size_t>() + memory.at("weights_bytes").get<std::size_t>());
  EXPECT_EQ(memory.at("ram_bytes").get<std::size_t>(),
            memory.at("arena_bytes").get<std::size_t>() + memory.at("stack_bytes").get<std::size_t>());
  EXPECT_GT(memory.at("stack_bytes").get<std::size_t>(), 0u);
  EXPECT_GT(memory.at("instructions").get<std::size_t>(), 100000u);

  const auto generate = run_command(quoted(kHybgen) + " " + kMnistArgs + " --target cortex-m4 -o " + quoted(tmp.path()));
  ASSERT_EQ(generate.exit_code, 0) << generate.output;
  EXPECT_NE(generate.output.find("on cortex-m4 (mps2-an386, emulated): flash "), std::string::npos) << generate.output;
  const nlohmann::json manifest = nlohmann::json::parse(read_file_text(tmp.path() + "/mnist.manifest.json"));
  // The same program measured twice: the emulator counts the same.
  EXPECT_EQ(manifest.at("memory"), memory);
  EXPECT_EQ(manifest.at("weights_bytes"), memory.at("weights_bytes"));
  EXPECT_EQ(manifest.at("arena_bytes"), memory.at("arena_bytes"));
}

TEST(BoardReport, WithoutTheToolsGenerationNotesItAndVerifyNamesThePackages) {
  TempDir tmp("hybgen-board-report");
  // A PATH with no cross compiler and no emulator on it.
  const std::string bare = "env PATH=/nonexistent ";
  const auto generate =
      run_command(bare + quoted(kHybgen) + " " + kMnistArgs + " --target cortex-m55 -o " + quoted(tmp.path()));
  ASSERT_EQ(generate.exit_code, 0) << generate.output;
  EXPECT_NE(generate.output.find("note: not measured on mps3-an547: arm-none-eabi-g++ is not on the PATH"),
            std::string::npos)
      << generate.output;
  const nlohmann::json manifest = nlohmann::json::parse(read_file_text(tmp.path() + "/mnist.manifest.json"));
  EXPECT_FALSE(manifest.contains("memory"));

  const auto verify = run_command(bare + quoted(kHybgen) + " verify " + kMnistArgs + " --target cortex-m7");
  EXPECT_NE(verify.exit_code, 0);
  EXPECT_NE(verify.output.find("apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm"),
            std::string::npos)
      << verify.output;
}

TEST(BoardReport, VerifyRefusesWhatABoardCannotRun) {
  for (const char* flag : {"--threads 2", "--external-weights"}) {
    const auto r = run_command(quoted(kHybgen) + " verify " + kMnistArgs + " --target cortex-m4 " + flag);
    EXPECT_NE(r.exit_code, 0) << flag;
    EXPECT_NE(r.output.find("--target cortex-m4"), std::string::npos) << r.output;
  }
  const auto bench = run_command(quoted(kHybgen) + " bench " + kMnistArgs + " --target cortex-m4");
  EXPECT_NE(bench.exit_code, 0);
  EXPECT_NE(bench.output.find("cannot be timed here"), std::string::npos) << bench.output;
}

// data(256x1024) -> relu -> Dense(2304): 9446400 bytes of weights, beyond the
// AN547's 8 MiB of QSPI flash, and a 1 MiB activation in the arena, beyond its
// 512 KiB of DTCM.
Graph too_large_for_the_m55() {
  Graph g;
  g.name = "big";
  g.add_input("data", {{256, 1024}});
  g.add_constant("w", Constant::f32({2304, 1024}, std::vector<float>(2304 * 1024, 0.01f)));
  g.add_constant("b", Constant::f32({2304}, std::vector<float>(2304, 0.0f)));
  g.nodes.push_back(testing::make_node("act", "Activation", {"data"}, testing::attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(testing::make_node("fc", "FullyConnected", {"act", "w", "b"},
                                       testing::attrs_of({{"num_hidden", int64_t{2304}}})));
  g.outputs = {"fc"};
  return g;
}

// hybgen itself says the model does not fit, with the sizes, before anything
// is compiled: the PATH holds no compiler, which would otherwise be the
// error. Generation writes the code all the same (a board of the user's own
// may have the room); verify refuses.
TEST(BoardReport, AModelTooLargeForTheBoardIsWrittenWithAWarningAndRefusedByVerify) {
  TempDir tmp("hybgen-board-report");
  save_model(too_large_for_the_m55(), tmp.path() + "/big");
  const std::string model = quoted(tmp.path() + "/big.json");
  const std::string bare = "env PATH=/nonexistent ";
  const std::string weights =
      "does not fit mps3-an547 (cortex-m55): its weights take 9446400 bytes, more than the board's QSPI flash "
      "(8388608 bytes at 0x28000000) holds; and its RAM takes ";
  const std::string ram = "more than the board's DTCM (524288 bytes at 0x20000000) holds";

  const auto generate = run_command(bare + quoted(kHybgen) + " " + model + " --target cortex-m55 -o " +
                                    quoted(tmp.path() + "/out"));
  ASSERT_EQ(generate.exit_code, 0) << generate.output;
  EXPECT_NE(generate.output.find("hybgen: warning: big " + weights), std::string::npos) << generate.output;
  EXPECT_NE(generate.output.find(ram + "; the code is written all the same"), std::string::npos) << generate.output;
  EXPECT_EQ(generate.output.find("not on the PATH"), std::string::npos) << generate.output;
  EXPECT_TRUE(std::filesystem::exists(tmp.path() + "/out/big_weights.cpp"));

  const auto verify = run_command(bare + quoted(kHybgen) + " verify " + model + " --target cortex-m55");
  EXPECT_NE(verify.exit_code, 0);
  EXPECT_NE(verify.output.find("hybgen: error: "), std::string::npos) << verify.output;
  EXPECT_NE(verify.output.find("the model " + weights), std::string::npos) << verify.output;
  EXPECT_NE(verify.output.find(ram), std::string::npos) << verify.output;
  EXPECT_EQ(verify.output.find("not on the PATH"), std::string::npos) << verify.output;
}

}  // namespace
}  // namespace hybgen
