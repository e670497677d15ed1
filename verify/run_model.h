// Runs the generated code of a model on whole arrays: `hybgen run`. The first
// dimension of each array counts samples; the model runs on them in chunks of
// its own batch (each input's first dimension), all in one process of one
// build, and each output comes back as the chunks' results concatenated.
//
//   RunOptions o;  o.compile = CompileOptions{...};
//   std::map<std::string, NpyArray> y = run_generated(graph, {{"data", read_npy("x.npy")}}, {"fc3"}, o);
#pragma once

#include <map>
#include <string>
#include <vector>

#include "io/npy.h"
#include "pipeline.h"

namespace hybgen {

struct RunOptions {
  CompileOptions compile;  // the target is its
  int threads = 1;         // > 1: the generated code runs on a pool of that many threads
  std::string cxx;         // compiler; empty: the target's default
  std::string cxx_flags = "-std=c++11 -O2 -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti";  // verify's
};

// Every graph input must be given, with the input's shape but for the first
// dimension, which must be the same multiple of the input's first dimension
// for all. Throws Error naming the input or output for an unknown or missing
// name, a wrong shape or count, and for targets whose program cannot run
// chunks (CUDA, microcontroller boards); the compiler's output when the code
// does not compile.
std::map<std::string, NpyArray> run_generated(const Graph& graph, const std::map<std::string, NpyArray>& inputs,
                                              const std::vector<std::string>& outputs, const RunOptions& options);

}  // namespace hybgen
