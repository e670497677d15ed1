// The whole pipeline on small graphs, up to the emitted text (no compiler
// run): model.json -> graph_from_json -> every weight given zero data ->
// compile_graph -> emit_cpp, for the generic target and for a second target
// and options chosen by a hash of the input.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emit/backends.h"
#include "fuzz_common.h"
#include "io/json_util.h"
#include "io/model_json.h"
#include "pipeline.h"

namespace {

// Graphs with more weight data than this are skipped: the harness is after
// the passes and the emitter, not the time it takes to print big weights.
constexpr uint64_t kMaxWeightBytes = uint64_t{1} << 20;

void compile_and_emit(const hybgen::Graph& graph, const hybgen::CompileOptions& options) {
  using namespace hybgen;
  CompiledGraph compiled;
  if (!fuzz::returns_or_errors("compile_graph", [&] { compiled = compile_graph(graph, options); })) return;
  CppEmitOptions emit;
  emit.name = "model";
  emit.source = "fuzz.json";
  std::vector<EmittedFile> files;
  if (!fuzz::returns_or_errors("emit_for_target", [&] { files = emit_for_target(compiled, emit); })) return;
  fuzz::check(!files.empty(), "emit_for_target returned no files");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace hybgen;
  Graph graph;
  if (!fuzz::graph_of(data, size, graph)) return 0;

  // Sizes computed without overflow (a shape may hold 0 and a huge dimension).
  uint64_t total = 0;
  std::map<std::string, uint64_t> bytes_of;
  for (const auto& [name, constant] : graph.constants) {
    const std::optional<uint64_t> bytes = checked_bytes(constant.type.shape, dtype_size(constant.type.dtype));
    if (!bytes || *bytes > kMaxWeightBytes - total) return 0;
    total += *bytes;
    bytes_of[name] = *bytes;
  }
  for (auto& [name, constant] : graph.constants) constant.data.assign(static_cast<std::size_t>(bytes_of[name]), 0);

  compile_and_emit(graph, CompileOptions{});

  const uint8_t h = fuzz::input_hash(data, size);
  const std::vector<Target>& targets = all_targets();
  CompileOptions other;
  other.target = targets[h % targets.size()];
  other.small_arena = (h & 0x40) != 0;
  other.optimize = (h & 0x80) == 0;
  compile_and_emit(graph, other);
  return 0;
}
