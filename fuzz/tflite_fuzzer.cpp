// TFLite models: import_tflite_bytes on the bytes, and every graph imported
// goes on through compile_graph, as the CLI does. looks_like_tflite_bytes
// must never throw.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "io/tflite/tflite_model.h"
#include "pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace hybgen;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::returns_or_errors("looks_like_tflite_bytes", [&] { looks_like_tflite_bytes(bytes); });
  Graph graph;
  if (!fuzz::returns_or_errors("import_tflite_bytes", [&] { graph = import_tflite_bytes(bytes, "fuzz.tflite", {}); }))
    return 0;
  fuzz::returns_or_errors("compile_graph", [&] { compile_graph(std::move(graph)); });
  return 0;
}
