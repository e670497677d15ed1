// File helpers: whole-file reads, atomic writes (temp file + rename), scoped
// temporary folders and publishing a staged folder, so a failure midway never
// leaves half-written output where the user looks.
#include "io/file_util.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "ir/error.h"

namespace hybgen {
namespace fs = std::filesystem;

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::error_code ec;
  // An ifstream opens a folder without complaint and reads nothing.
  if (fs::is_directory(path, ec)) throw Error(path + ": cannot open: " + std::strerror(EISDIR));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(path + ": read failed: " + std::strerror(errno));
  return bytes;
}

std::string read_file_text(const std::string& path) {
  const auto bytes = read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

namespace {

std::string random_suffix() {
  static std::mt19937_64 rng(std::random_device{}());
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string s;
  for (int i = 0; i < 8; ++i) s += digits[rng() % 36];
  return s;
}

void write_atomic(const std::string& path, const char* data, std::size_t size) {
  const std::string tmp = path + ".tmp-" + random_suffix();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path + ": cannot write: " + std::strerror(errno));
    out.write(data, static_cast<std::streamsize>(size));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw Error(path + ": write failed: " + std::strerror(errno));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(path + ": cannot replace: " + ec.message());
  }
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  write_atomic(path, content.data(), content.size());
}

void write_file_atomic(const std::string& path, const std::vector<uint8_t>& content) {
  write_atomic(path, reinterpret_cast<const char*>(content.data()), content.size());
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
  if (!fs::exists(target, ec)) {
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
  for (const auto& entry : fs::directory_iterator(staging)) {
    const fs::path dest = fs::path(target) / entry.path().filename();
    // rename() replaces a file but not a non-empty folder, nor a file by a folder.
    if (fs::is_directory(entry.path(), ec) || fs::is_directory(dest, ec)) fs::remove_all(dest, ec);
    fs::rename(entry.path(), dest, ec);
    if (ec) {  // another file system: copy instead
      fs::copy(entry.path(), dest, fs::copy_options::overwrite_existing | fs::copy_options::recursive, ec);
      if (ec) throw Error(dest.string() + ": cannot write: " + ec.message());
    }
  }
  fs::remove_all(staging, ec);
}

}  // namespace hybgen
