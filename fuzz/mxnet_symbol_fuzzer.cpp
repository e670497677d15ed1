// MXNet NAME-symbol.json: parse_json, then import_mxnet_symbol without
// .params, once as is (weights without data, input shapes from __shape__)
// and once making up weights (random_weights_seed) for a fixed input shape of
// "data"; every graph imported goes on through compile_graph, as the CLI does.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "io/json_util.h"
#include "io/mxnet/mxnet_symbol.h"
#include "pipeline.h"

namespace {

// Weights made up for a graph are capped at 1 GiB (limits.h), which is slow
// to make and fold under sanitizers; bigger graphs than this stop after import.
constexpr std::size_t kMaxCompiledWeightBytes = std::size_t{1} << 20;

void import_and_compile(const nlohmann::json& json, const hybgen::MxnetImportOptions& options) {
  using namespace hybgen;
  Graph graph;
  if (!fuzz::returns_or_errors("import_mxnet_symbol",
                               [&] { graph = import_mxnet_symbol(json, "fuzz-symbol.json", nullptr, "", options); }))
    return;
  if (graph.weight_bytes() > kMaxCompiledWeightBytes) return;
  fuzz::returns_or_errors("compile_graph", [&] { compile_graph(std::move(graph)); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace hybgen;
  const char* text = reinterpret_cast<const char*>(data);
  nlohmann::json json;
  if (!fuzz::returns_or_errors("parse_json", [&] { json = parse_json(text, text + size, "fuzz-symbol.json"); }))
    return 0;
  fuzz::returns_or_errors("looks_like_mxnet_symbol", [&] { looks_like_mxnet_symbol(json); });

  MxnetImportOptions as_is;
  import_and_compile(json, as_is);

  MxnetImportOptions random;
  random.random_weights_seed = 1;
  random.input_shapes["data"] = {1, 3, 8, 8};
  import_and_compile(json, random);
  return 0;
}
