// File helpers that keep failures from leaving half-written output behind,
// and that never delete what hybgen did not write.
//
//   std::vector<uint8_t> bytes = read_file_bytes("model.safetensors");
//   write_file_atomic("out/model.h", text);        // temp file, then rename
//   write_files_atomic({{"p.json", a}, {"p.safetensors", b}});  // all or none
//   TempDir tmp("hybgen-verify");                   // removed when it goes out of scope
//   publish_directory(staging, "out");              // staged files replace those in out/
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/limits.h"

namespace hybgen {

// Throws Error("PATH: ...") when the file cannot be read, is not a regular
// file (a folder, device or FIFO), or is larger than `max_bytes`.
std::vector<uint8_t> read_file_bytes(const std::string& path, uint64_t max_bytes = limits::kMaxDataFileBytes);
std::string read_file_text(const std::string& path, uint64_t max_bytes = limits::kMaxJsonFileBytes);

struct OutputFile {
  std::string path;
  std::string content;
};

// Writes every file to a temp file beside its target, then renames them over
// the targets. Either all files are written or, on any failure, none is
// changed: earlier targets get their old contents back. A target that is a
// folder is an error before anything is written.
void write_files_atomic(const std::vector<OutputFile>& files);
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

// Moves the files of the fully written folder `staging` (files only) into
// `target`, replacing files of the same names and keeping every other entry
// of an existing `target`; all or none, as write_files_atomic. A name that
// is a folder in `target` is an error before anything moves: hybgen never
// removes a folder.
void publish_directory(const std::string& staging, const std::string& target);

}  // namespace hybgen
