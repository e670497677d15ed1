// model.json (hybgen's graph format): parse_json, then graph_from_json; a
// graph it accepts must write back (model_json_text) and read back to the
// same text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "io/json_util.h"
#include "io/model_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace hybgen;
  Graph graph;
  if (!fuzz::graph_of(data, size, graph)) return 0;
  // The writer may refuse what JSON cannot hold (an attribute of 1e999 reads
  // as infinity); what it writes must read back unchanged.
  std::string written;
  if (!fuzz::returns_or_errors("model_json_text", [&] { written = model_json_text(graph); })) return 0;
  std::string again;
  fuzz::returns_or_errors("model.json round trip", [&] {
    again = model_json_text(graph_from_json(parse_json(written, "round-trip.json"), "round-trip.json"));
  });
  fuzz::check(again == written, "model.json round trip changed the graph");
  return 0;
}
