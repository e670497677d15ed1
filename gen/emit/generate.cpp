#include "emit/generate.h"

#include <filesystem>

#include "io/file_util.h"

namespace hybgen {

std::vector<EmittedFile> generate_cpp(const Graph& graph, const CppEmitOptions& options,
                                      const CompileOptions& compile) {
  return emit_cpp(compile_graph(graph, compile), options);
}

void write_generated(const std::vector<EmittedFile>& files, const std::string& out_dir) {
  namespace fs = std::filesystem;
  fs::path target = fs::absolute(out_dir);
  if (!target.has_filename()) target = target.parent_path();  // "out/" names the folder "out"
  TempDir staging(".hybgen-staging", target.parent_path().string());
  for (const auto& f : files) write_file_atomic(staging.path() + "/" + f.filename, f.content);
  publish_directory(staging.path(), target.string());
  staging.release();
}

}  // namespace hybgen
