// File helpers: reads that name the path, atomic writes that leave no temp
// files, TempDir's cleanup, and publish_directory onto new and existing folders.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <filesystem>

#include "io/file_util.h"
#include "ir/error.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(FileUtil, ReadErrorsNameThePathAndTheReason) {
  TempDir tmp("hybgen-io-test");
  EXPECT_ERROR(read_file_bytes(tmp.path() + "/missing"), tmp.path() + "/missing: cannot open: No such file or directory");
  EXPECT_ERROR(read_file_text(tmp.path()), tmp.path() + ": cannot open: Is a directory");
}

TEST(FileUtil, AtomicWriteReplacesAndLeavesNoTempFile) {
  TempDir tmp("hybgen-io-test");
  const std::string p = tmp.path() + "/a.bin";
  write_file_atomic(p, std::string("first"));
  write_file_atomic(p, std::vector<uint8_t>{0, 1, 2, 255});
  EXPECT_EQ(read_file_bytes(p), (std::vector<uint8_t>{0, 1, 2, 255}));
  EXPECT_EQ(names_in(tmp.path()), (std::vector<std::string>{"a.bin"}));
}

TEST(FileUtil, AtomicWriteIntoMissingFolderFailsCleanly) {
  TempDir tmp("hybgen-io-test");
  EXPECT_ERROR(write_file_atomic(tmp.path() + "/no/such/dir/a.txt", std::string("x")), "a.txt: cannot write");
  EXPECT_TRUE(names_in(tmp.path()).empty());
}

TEST(FileUtil, TempDirIsFreshAndRemovedWithItsContents) {
  std::string kept;
  {
    TempDir a("hybgen-io-test"), b("hybgen-io-test");
    EXPECT_NE(a.path(), b.path());
    EXPECT_TRUE(fs::is_directory(a.path()));
    EXPECT_NE(fs::path(a.path()).filename().string().rfind("hybgen-io-test-", 0), std::string::npos);
    fs::create_directories(a.path() + "/sub/deeper");
    write_file_atomic(a.path() + "/sub/deeper/f.txt", std::string("x"));
    kept = a.path();
  }
  EXPECT_FALSE(fs::exists(kept));
}

TEST(FileUtil, TempDirInsideAParentAndRelease) {
  TempDir parent("hybgen-io-test");
  std::string released;
  {
    TempDir child("stage", parent.path());
    EXPECT_EQ(fs::path(child.path()).parent_path(), fs::path(parent.path()));
    released = child.path();
    child.release();
  }
  EXPECT_TRUE(fs::exists(released));  // release() hands the folder over
}

TEST(FileUtil, TempDirDestructorToleratesAFolderAlreadyGone) {
  TempDir parent("hybgen-io-test");
  auto* dir = new TempDir("gone", parent.path());
  fs::remove_all(dir->path());
  EXPECT_NO_THROW(delete dir);
}

TEST(FileUtil, PublishRenamesStagingToANewTargetCreatingParents) {
  TempDir tmp("hybgen-io-test");
  TempDir staging("stage", tmp.path());
  write_file_atomic(staging.path() + "/a.txt", std::string("a"));
  const std::string target = tmp.path() + "/out/nested/model";
  publish_directory(staging.path(), target);
  EXPECT_EQ(read_file_text(target + "/a.txt"), "a");
  EXPECT_FALSE(fs::exists(staging.path()));
}

TEST(FileUtil, PublishIntoAnExistingFolderReplacesSameNamesAndKeepsOthers) {
  TempDir tmp("hybgen-io-test");
  const std::string target = tmp.path() + "/out";
  fs::create_directories(target + "/sub");
  write_file_atomic(target + "/a.txt", std::string("old a"));
  write_file_atomic(target + "/keep.txt", std::string("kept"));
  write_file_atomic(target + "/sub/old.txt", std::string("old"));
  TempDir staging("stage", tmp.path());
  write_file_atomic(staging.path() + "/a.txt", std::string("new a"));
  write_file_atomic(staging.path() + "/b.txt", std::string("new b"));
  publish_directory(staging.path(), target);
  EXPECT_EQ(read_file_text(target + "/a.txt"), "new a");
  EXPECT_EQ(read_file_text(target + "/b.txt"), "new b");
  EXPECT_EQ(read_file_text(target + "/keep.txt"), "kept");
  EXPECT_EQ(read_file_text(target + "/sub/old.txt"), "old");
  EXPECT_EQ(names_in(target), (std::vector<std::string>{"a.txt", "b.txt", "keep.txt", "sub"}));  // no temp or backup left
  EXPECT_FALSE(fs::exists(staging.path()));
}

// hybgen never removes what it did not write: a folder where a file would go
// stops the publish before any file moves.
TEST(FileUtil, PublishRefusesToReplaceAFolderAndChangesNothing) {
  TempDir tmp("hybgen-io-test");
  const std::string target = tmp.path() + "/out";
  fs::create_directories(target + "/b.txt");
  write_file_atomic(target + "/b.txt/mine.txt", std::string("mine"));
  write_file_atomic(target + "/a.txt", std::string("old a"));
  TempDir staging("stage", tmp.path());
  write_file_atomic(staging.path() + "/a.txt", std::string("new a"));
  write_file_atomic(staging.path() + "/b.txt", std::string("new b"));
  EXPECT_ERROR(publish_directory(staging.path(), target), "out/b.txt: exists and is a folder; hybgen replaces only files");
  EXPECT_EQ(read_file_text(target + "/b.txt/mine.txt"), "mine");
  EXPECT_EQ(read_file_text(target + "/a.txt"), "old a");
  EXPECT_EQ(names_in(target), (std::vector<std::string>{"a.txt", "b.txt"}));
}

TEST(FileUtil, WriteFilesAtomicWritesAllOrNone) {
  TempDir tmp("hybgen-io-test");
  write_file_atomic(tmp.path() + "/a.json", std::string("old"));
  fs::create_directories(tmp.path() + "/b.bin");
  EXPECT_ERROR(write_files_atomic({{tmp.path() + "/a.json", "new"}, {tmp.path() + "/b.bin", "data"}}),
               "b.bin: exists and is a folder");
  EXPECT_EQ(read_file_text(tmp.path() + "/a.json"), "old");
  // A write that fails midway (the second file's folder is missing) leaves the first as it was.
  EXPECT_ERROR(write_files_atomic({{tmp.path() + "/a.json", "new"}, {tmp.path() + "/no/c.bin", "data"}}),
               "no/c.bin: cannot write: No such file or directory");
  EXPECT_EQ(read_file_text(tmp.path() + "/a.json"), "old");
  EXPECT_EQ(names_in(tmp.path()), (std::vector<std::string>{"a.json", "b.bin"}));
  write_files_atomic({{tmp.path() + "/a.json", "new"}, {tmp.path() + "/c.bin", "data"}});
  EXPECT_EQ(read_file_text(tmp.path() + "/a.json"), "new");
  EXPECT_EQ(names_in(tmp.path()), (std::vector<std::string>{"a.json", "b.bin", "c.bin"}));
}

TEST(FileUtil, PublishOntoAFileIsAnError) {
  TempDir tmp("hybgen-io-test");
  write_file_atomic(tmp.path() + "/out", std::string("a file"));
  TempDir staging("stage", tmp.path());
  EXPECT_ERROR(publish_directory(staging.path(), tmp.path() + "/out"), "out: exists and is not a folder");
}

}  // namespace
}  // namespace hybgen
