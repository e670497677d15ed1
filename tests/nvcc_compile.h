// Compiles a graph's generated CUDA with nvcc (compile only: no GPU needed)
// for the architectures the cuda target names, with ptxas's resource usage,
// for the tests that CI runs on every op and zoo model. A kernel may spill a
// few registers (a handful of bytes to L1, which costs little); one that
// spills more than kMostSpillBytes fails the tests.
#pragma once

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "emit/cuda_emitter.h"
#include "emit/generate.h"
#include "io/file_util.h"
#include "pipeline.h"
#include "run_command.h"
#include "targets/target.h"

namespace hybgen::testing {

constexpr int kMostSpillBytes = 64;

struct NvccResult {
  int exit_code = -1;
  std::string output;         // nvcc's
  std::string ptxas_summary;  // one line per kernel: registers and spills
  int spills = 0;             // kernels that spill (bytes of spill stores or loads)
  int most_spilled = 0;       // the largest spill store of one kernel, bytes
};

inline NvccResult nvcc_compile(const Graph& graph, const std::string& name, Precision precision = Precision::kFP32,
                               const std::string& defines = "") {
  const Target& cuda = find_target("cuda");
  CppEmitOptions options;
  options.name = c_identifier(name);
  CompileOptions compile = CompileOptions::for_target(cuda);
  compile.target.precision = precision;
  const auto files = emit_cuda(compile_graph(graph, compile), options);
  TempDir dir("hybgen-nvcc");
  write_generated(files, dir.path());
  const std::string cu = dir.path() + "/" + options.name + ".cu";
  const CommandResult r =
      run_command("nvcc -std=c++17 -O3 " + compiler_flags_for(compile.target) + defines +
                  " -Xptxas -v -Werror all-warnings -c " + quoted(cu) + " -o " + quoted(dir.path() + "/model.o"));
  NvccResult result{r.exit_code, r.output, "", 0};
  std::istringstream lines(r.output);
  std::string function, line;
  while (std::getline(lines, line)) {
    if (line.find("Compiling entry function") != std::string::npos) function = line.substr(line.find('\'') + 1);
    const std::size_t stores = line.find(" bytes spill stores");
    if (stores != std::string::npos) {
      const std::size_t from = line.rfind(' ', stores - 1) + 1;
      const int bytes = std::stoi(line.substr(from, stores - from));
      if (bytes > 0) ++result.spills;
      result.most_spilled = std::max(result.most_spilled, bytes);
      if (bytes > 0) result.ptxas_summary += name + ": " + function.substr(0, function.find('\'')) + ": spills\n";
    }
    if (line.find("Used ") != std::string::npos && line.find("registers") != std::string::npos)
      result.ptxas_summary += name + ": " + function.substr(0, function.find('\'')) + ": " +
                              line.substr(line.find("Used ")) + "\n";
  }
  return result;
}

}  // namespace hybgen::testing
