// `hybgen board`: a microcontroller target's startup.c and link.ld written
// for a firmware project, and what bad input gets: one clear message, a
// non-zero exit, and no file written or changed. Beside it, the fit check
// (board_fit_problem) that reads the same memory regions.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "emit/board_files.h"
#include "io/file_util.h"
#include "ir/error.h"
#include "run_command.h"
#include "targets/target.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;
using testing::quoted;
using testing::run_command;

class BoardCommand : public ::testing::Test {
 protected:
  TempDir tmp{"hybgen-board-test"};
  std::string path(const std::string& name) const { return tmp.path() + "/" + name; }
  testing::CommandResult hybgen(const std::string& args) {
    return run_command(quoted(HYBGEN_BINARY) + " board " + args);
  }
  static std::string text_of(const std::string& file) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void expect_one_error(const testing::CommandResult& r, const std::string& expected) {
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << r.output;
  }
};

TEST_F(BoardCommand, WritesTheFilesVerifyBuildsWithForEveryBoard) {
  for (const Target& target : all_targets()) {
    if (target.board.empty()) continue;
    const std::string out = path(target.name);
    const auto r = hybgen("--target " + target.name + " -o " + quoted(out) + " --stack-bytes 4096");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(target.name + " on " + target.board), std::string::npos) << r.output;
    for (const EmittedFile& f : emit_board_files(target, 4096))
      EXPECT_EQ(text_of(out + "/" + f.filename), f.content) << target.name << " " << f.filename;
    EXPECT_NE(text_of(out + "/link.ld").find("__stack_bytes = 4096;"), std::string::npos);
  }
}

TEST_F(BoardCommand, ReplacesItsOwnFilesAndKeepsTheRest) {
  const std::string out = path("fw");
  fs::create_directories(out);
  std::ofstream(out + "/startup.c") << "old";
  std::ofstream(out + "/main.c") << "the user's";
  const auto r = hybgen("--target cortex-m4 -o " + quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(text_of(out + "/startup.c"), emit_board_files(find_target("cortex-m4"), 16384)[0].content);
  EXPECT_EQ(text_of(out + "/main.c"), "the user's");
}

TEST_F(BoardCommand, ATargetWithoutABoardIsRefusedAndNothingWritten) {
  const std::string out = path("fw");
  expect_one_error(hybgen("--target generic -o " + quoted(out)),
                   "hybgen: error: --target generic is not a microcontroller target and has no board; board files "
                   "exist for cortex-m4 (mps2-an386)");
  expect_one_error(hybgen("--target cuda -o " + quoted(out)), "--target cuda is not a microcontroller target");
  expect_one_error(hybgen("--target cortex-m3 -o " + quoted(out)),
                   "hybgen: error: unknown target 'cortex-m3', expected one of");
  expect_one_error(hybgen("-o " + quoted(out)), "--target is required");
  expect_one_error(hybgen("--target cortex-m4"), "--output is required");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(BoardCommand, AStackThatDoesNotFitLeavesExistingFilesAlone) {
  const std::string out = path("fw");
  fs::create_directories(out);
  std::ofstream(out + "/link.ld") << "old";
  expect_one_error(hybgen("--target cortex-m4 -o " + quoted(out) + " --stack-bytes 100"),
                   "hybgen: error: a stack of 100 bytes on mps2-an386: expected a multiple of 8 from 1024");
  expect_one_error(hybgen("--target cortex-m4 -o " + quoted(out) + " --stack-bytes -8"), "--stack-bytes");
  expect_one_error(hybgen("--target cortex-m4 -o " + quoted(out) + " --stack-bytes many"), "--stack-bytes");
  // The AN547's RAM is 512 KiB: a stack of half of it at most.
  expect_one_error(hybgen("--target cortex-m55 -o " + quoted(out) + " --stack-bytes 524288"),
                   "hybgen: error: a stack of 524288 bytes on mps3-an547: expected a multiple of 8 from 1024 to half "
                   "its RAM (262144)");
  expect_one_error(hybgen("--target cortex-m4 -o " + quoted(out) + " --stack-bytes 8191"), "a multiple of 8");
  EXPECT_EQ(text_of(out + "/link.ld"), "old");
  EXPECT_FALSE(fs::exists(out + "/startup.c"));
}

TEST_F(BoardCommand, AnOutputThatIsAFileOrHoldsAFolderOfTheSameNameIsRefused) {
  std::ofstream(path("file")) << "mine";
  expect_one_error(hybgen("--target cortex-m4 -o " + quoted(path("file"))), "is not a folder");
  EXPECT_EQ(text_of(path("file")), "mine");
  fs::create_directories(path("fw/link.ld"));
  expect_one_error(hybgen("--target cortex-m4 -o " + quoted(path("fw"))), "link.ld");
  EXPECT_FALSE(fs::exists(path("fw/startup.c"))) << "half the files were written";
  EXPECT_TRUE(fs::is_directory(path("fw/link.ld")));
}

// The fit check reads the same regions as the linker script, and names each
// size that does not fit with the region it does not fit in.
TEST(BoardFit, NamesTheSizesAndTheRegionsTheyExceed) {
  const Target& m55 = find_target("cortex-m55");
  EXPECT_EQ(board_fit_problem(m55, {8388608, 524288 - 65536 - kBoardHeapBytes - 64, 65536, 64}), "");
  EXPECT_EQ(board_fit_problem(m55, {8388609, 1000, 65536, 0}),
            "does not fit mps3-an547 (cortex-m55): its weights take 8388609 bytes, more than the board's QSPI flash "
            "(8388608 bytes at 0x28000000) holds");
  EXPECT_EQ(board_fit_problem(m55, {1000, 600000, 65536, 8}),
            "does not fit mps3-an547 (cortex-m55): its RAM takes 669640 bytes (arena 600000, input and output "
            "buffers 8, heap 4096, stack 65536), more than the board's DTCM (524288 bytes at 0x20000000) holds");
  const std::string both = board_fit_problem(find_target("cortex-m4"), {16777217, 4194304, 16384, 0});
  EXPECT_NE(both.find("its weights take 16777217 bytes, more than the board's PSRAM (16777216 bytes at 0x21000000)"),
            std::string::npos)
      << both;
  EXPECT_NE(both.find("; and its RAM takes 4214784 bytes (arena 4194304, heap 4096, stack 16384), more than the "
                      "board's ZBT SSRAM2&3 (4194304 bytes at 0x20000000) holds"),
            std::string::npos)
      << both;
  EXPECT_THROW(board_fit_problem(find_target("generic"), {}), Error);
}

// Every board's linker script places code, weights and RAM in the regions
// the target names, none overlapping.
TEST(BoardFit, TheLinkerScriptUsesTheTargetsThreeRegions) {
  for (const Target& t : all_targets()) {
    if (t.board.empty()) continue;
    const std::string link = emit_board_files(t, 4096)[1].content;
    EXPECT_NE(link.find("WEIGHTS (r)"), std::string::npos) << t.name;
    EXPECT_NE(link.find(".rodata : { *(.rodata .rodata.*) } > WEIGHTS"), std::string::npos) << t.name;
    const MemoryRegion* regions[] = {&t.code, &t.weights, &t.ram};
    for (const MemoryRegion* a : regions) {
      for (const MemoryRegion* b : regions) {
        if (a != b) {
          EXPECT_TRUE(a->origin + a->bytes <= b->origin || b->origin + b->bytes <= a->origin) << t.name;
        }
      }
    }
  }
}

}  // namespace
}  // namespace hybgen
