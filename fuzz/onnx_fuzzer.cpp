// ONNX models: import_onnx_bytes on the bytes as a ModelProto (no model
// folder, so external data is refused), once as is and once with a shape for
// an input named "x" (symbolic dims filled); every graph imported goes on
// through compile_graph, as the CLI does. looks_like_onnx_bytes must never
// throw.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "io/onnx/onnx_model.h"
#include "pipeline.h"

namespace {

// Bigger graphs than this stop after import (folding big weights under the
// sanitizers is slow and finds nothing new).
constexpr std::size_t kMaxCompiledWeightBytes = std::size_t{1} << 20;

void import_and_compile(const std::string& bytes, const hybgen::OnnxImportOptions& options) {
  using namespace hybgen;
  Graph graph;
  if (!fuzz::returns_or_errors("import_onnx_bytes", [&] { graph = import_onnx_bytes(bytes, "fuzz.onnx", "", options); }))
    return;
  if (graph.weight_bytes() > kMaxCompiledWeightBytes) return;
  fuzz::returns_or_errors("compile_graph", [&] { compile_graph(std::move(graph)); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace hybgen;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::returns_or_errors("looks_like_onnx_bytes", [&] { looks_like_onnx_bytes(bytes); });

  OnnxImportOptions as_is;
  as_is.note = [](const std::string&) {};
  import_and_compile(bytes, as_is);

  OnnxImportOptions shaped = as_is;
  shaped.input_shapes["x"] = {2, 1, 4, 4};
  import_and_compile(bytes, shaped);
  return 0;
}
