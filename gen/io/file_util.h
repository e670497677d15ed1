// File helpers that keep failures from leaving half-written output behind.
//
//   std::vector<uint8_t> bytes = read_file_bytes("model.safetensors");
//   write_file_atomic("out/model.h", text);        // temp file, then rename
//   TempDir tmp("hybgen-verify");                   // removed when it goes out of scope
//   publish_directory(staging, "out");              // staged folder replaces out/
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hybgen {

// Throws Error("PATH: cannot open ...") when the file cannot be read.
std::vector<uint8_t> read_file_bytes(const std::string& path);
std::string read_file_text(const std::string& path);

// Writes to PATH.tmp-XXXX beside the target, then renames over it.
void write_file_atomic(const std::string& path, const std::string& content);
void write_file_atomic(const std::string& path, const std::vector<uint8_t>& content);

// A fresh directory under the system temp folder, removed with its contents
// on destruction unless release()d.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "hybgen");
  // `parent` non-empty: the folder is created inside `parent` (so a later
  // rename onto a sibling stays on one file system).
  TempDir(const std::string& prefix, const std::string& parent);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  std::string path_;
};

// Moves the fully written folder `staging` to `target`, replacing the files
// of the same names in an existing `target`.
void publish_directory(const std::string& staging, const std::string& target);

}  // namespace hybgen
