// From a graph with weights to files on disk, leaving nothing half-written.
//
//   auto files = generate_cpp(load_model("mlp.json"), {"mlp", "mlp", "mlp.json"});
//   write_generated(files, "out/");   // staged beside out/, then moved in
#pragma once

#include <string>
#include <vector>

#include "emit/cpp_emitter.h"

namespace hybgen {

// compile_graph + emit_cpp.
std::vector<EmittedFile> generate_cpp(const Graph& graph, const CppEmitOptions& options,
                                      const CompileOptions& compile = {});

// Writes the files into a temporary folder beside out_dir, then moves them
// into out_dir (created if missing). On failure out_dir is untouched.
void write_generated(const std::vector<EmittedFile>& files, const std::string& out_dir);

}  // namespace hybgen
