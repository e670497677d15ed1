// What the CUDA tests share: where the kernel texts, the cuda-host layer and
// the test programs are, and small helpers to build with them.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "run_command.h"

namespace hybgen::testing {

// Unqualified, `quoted` would also find std::quoted for std::string.
inline std::string q(const std::string& s) { return ::hybgen::testing::quoted(s); }

inline const std::string kKernels = HYBGEN_SOURCE_DIR "/templates/cuda/kernels";
// The cuda-host layer, which a build folder gets as its cuda_runtime.h.
inline const std::string kHeader = HYBGEN_SOURCE_DIR "/templates/cuda_host/cuda_runtime.h.in";
inline const std::string kPrograms = HYBGEN_SOURCE_DIR "/tests/cuda/programs";

inline std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline bool on_path(const std::string& tool) { return run_command("command -v " + q(tool)).exit_code == 0; }

// A fresh folder for the running test: /tmp/hybgen_SUITE_TEST_PID.
inline std::string temp_dir(const std::string& suite) {
  namespace fs = std::filesystem;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = suite + "_" + info->name();
  for (char& c : name)
    if (c == '/') c = '_';
  const std::string dir = (fs::temp_directory_path() / ("hybgen_" + name + "_" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace hybgen::testing
