// File helpers: whole-file reads with size checks, all-or-none writes (temp
// files + renames, with the old files kept until every rename succeeded),
// scoped temporary folders and publishing a staged folder, so a failure
// midway never leaves half-written output where the user looks.
#include "io/file_util.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "ir/error.h"

namespace hybgen {
namespace fs = std::filesystem;

std::vector<uint8_t> read_file_bytes(const std::string& path, uint64_t max_bytes) {
  check_file_size(path, max_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  // Read in chunks up to the limit: the file may have grown since it was checked.
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  while (in) {
    const std::size_t at = bytes.size();
    bytes.resize(at + kChunk);
    in.read(reinterpret_cast<char*>(bytes.data() + at), static_cast<std::streamsize>(kChunk));
    bytes.resize(at + static_cast<std::size_t>(in.gcount()));
    if (bytes.size() > max_bytes) throw Error(path + ": grew past the limit of " + std::to_string(max_bytes) + " bytes while read");
  }
  if (in.bad()) throw Error(path + ": read failed: " + std::strerror(errno));
  return bytes;
}

std::string read_file_text(const std::string& path, uint64_t max_bytes) {
  const auto bytes = read_file_bytes(path, max_bytes);
  return std::string(bytes.begin(), bytes.end());
}

namespace {

std::string random_suffix() {
  // One generator per thread: hybridized blocks write cache files from
  // background threads at once.
  thread_local std::mt19937_64 rng(std::random_device{}());
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string s;
  for (int i = 0; i < 8; ++i) s += digits[rng() % 36];
  return s;
}

// A new file beside `path` holding `content`; returns its name.
std::string write_temp(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp-" + random_suffix();
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(path + ": cannot write: " + std::strerror(errno));
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) {
    const std::string reason = std::strerror(errno);
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error(path + ": write failed: " + reason);
  }
  return tmp;
}

struct Replacement {
  std::string temp;    // fully written, beside the target
  std::string target;
};

void refuse_folder(const std::string& target) {
  std::error_code ec;
  if (fs::is_directory(target, ec))
    throw Error(target + ": exists and is a folder; hybgen replaces only files, never a folder");
}

// Renames every temp file over its target. An existing target is first kept
// as a hard link (a copy where links fail), so a failed rename puts every
// earlier target back as it was; temps left over are removed.
void commit(const std::vector<Replacement>& files) {
  std::vector<std::string> backups(files.size());
  std::size_t done = 0;
  std::string failure;
  for (; done < files.size(); ++done) {
    const Replacement& f = files[done];
    std::error_code ec;
    if (fs::exists(fs::symlink_status(f.target, ec))) {
      const std::string backup = f.target + ".old-" + random_suffix();
      fs::create_hard_link(f.target, backup, ec);
      if (ec) fs::copy_file(f.target, backup, ec);
      if (ec) {
        failure = f.target + ": cannot keep the old file while replacing it: " + ec.message();
        break;
      }
      backups[done] = backup;
    }
    fs::rename(f.temp, f.target, ec);
    if (ec) {
      failure = f.target + ": cannot replace: " + ec.message();
      break;
    }
  }
  std::error_code ignored;
  if (failure.empty()) {
    for (const auto& b : backups)
      if (!b.empty()) fs::remove(b, ignored);
    return;
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (i < done) {  // renamed: put the old file back, or remove the new one
      if (!backups[i].empty()) fs::rename(backups[i], files[i].target, ignored);
      else fs::remove(files[i].target, ignored);
    } else {
      if (!backups[i].empty()) fs::remove(backups[i], ignored);
      fs::remove(files[i].temp, ignored);
    }
  }
  throw Error(failure);
}

void remove_temps(const std::vector<Replacement>& files) {
  std::error_code ignored;
  for (const auto& f : files) fs::remove(f.temp, ignored);
}

}  // namespace

void write_files_atomic(const std::vector<OutputFile>& files) {
  for (const auto& f : files) refuse_folder(f.path);
  std::vector<Replacement> staged;
  try {
    for (const auto& f : files) staged.push_back({write_temp(f.path, f.content), f.path});
  } catch (...) {
    remove_temps(staged);
    throw;
  }
  commit(staged);
}

void write_file_atomic(const std::string& path, const std::string& content) { write_files_atomic({{path, content}}); }

void write_file_atomic(const std::string& path, const std::vector<uint8_t>& content) {
  write_files_atomic({{path, std::string(content.begin(), content.end())}});
}

TempDir::TempDir(const std::string& prefix) : TempDir(prefix, "") {}

TempDir::TempDir(const std::string& prefix, const std::string& parent) {
  std::string base = parent;
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp && *tmp ? tmp : "/tmp";
  }
  std::error_code ec;
  fs::create_directories(base, ec);
  std::string pattern = (fs::path(base) / (prefix + "-XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw Error(base + ": cannot create a temporary folder: " + std::strerror(errno));
  path_ = buf.data();
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  try {  // a destructor must not throw, even bad_alloc from the path code
    std::error_code ec;
    fs::remove_all(path_, ec);
  } catch (...) {
  }
}

void publish_directory(const std::string& staging, const std::string& target) {
  std::error_code ec;
  std::vector<fs::path> staged;
  for (const auto& entry : fs::directory_iterator(staging)) {
    if (!entry.is_regular_file(ec)) throw Error(entry.path().string() + ": only files can be published");
    staged.push_back(entry.path());
  }
  std::sort(staged.begin(), staged.end());
  if (!fs::exists(fs::symlink_status(target, ec))) {
    const fs::path parent = fs::path(target).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    fs::rename(staging, target, ec);
    if (!ec) return;
    // A rename across file systems fails; fall through to per-file moves.
    fs::create_directories(target, ec);
    if (ec) throw Error(target + ": cannot create: " + ec.message());
  } else if (!fs::is_directory(target, ec)) {
    throw Error(target + ": exists and is not a folder");
  }
  for (const auto& file : staged) refuse_folder((fs::path(target) / file.filename()).string());
  // Each file first moves beside its target under a temp name (a copy where
  // the staging folder is on another file system), then all are committed.
  std::vector<Replacement> moves;
  try {
    for (const auto& file : staged) {
      const std::string dest = (fs::path(target) / file.filename()).string();
      const std::string temp = dest + ".tmp-" + random_suffix();
      fs::rename(file, temp, ec);
      if (ec) {
        fs::copy_file(file, temp, ec);
        if (ec) throw Error(dest + ": cannot write: " + ec.message());
      }
      moves.push_back({temp, dest});
    }
  } catch (...) {
    remove_temps(moves);
    throw;
  }
  commit(moves);
  fs::remove_all(staging, ec);  // hybgen's own staging folder
}

}  // namespace hybgen
