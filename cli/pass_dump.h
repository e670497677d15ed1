// --dump-after PASS: the state after chosen passes, as JSON files named
// DIR/NN-PASS.json (NN: the pass's index in pass_names(), two digits).
// States are captured while compile_graph runs and written only once it
// succeeded, so a failed compilation writes nothing.
//
//   PassDumps dumps({"fuse", "plan_memory"}, "dumps", options);  // Error now for an unknown pass
//   options.observer = dumps.observer();
//   CompiledGraph c = compile_graph(graph, options);
//   for (const auto& path : dumps.write()) std::printf("wrote %s\n", path.c_str());
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline.h"

namespace hybgen {

// What a dump holds: graph_to_json(state.graph) plus "kernels" and
// "memory_plan" once the passes that make them have run.
nlohmann::ordered_json pass_state_json(const CompiledGraph& state);

class PassDumps {
 public:
  // `passes`: names from pass_names(options), or "all". Throws Error naming
  // the unknown ones and listing the valid names.
  PassDumps(const std::vector<std::string>& passes, std::string dir, const CompileOptions& options);
  PassDumps(const PassDumps&) = delete;  // observer() points at this object
  PassDumps& operator=(const PassDumps&) = delete;

  bool empty() const { return wanted_.empty(); }
  // Captures the wanted states; empty when nothing is wanted, so compile_graph
  // pays nothing.
  PassObserver observer();
  // Writes the captured states (creating DIR if missing), each atomically;
  // returns the paths in pass order.
  std::vector<std::string> write() const;

 private:
  std::string dir_;
  std::vector<std::string> pass_order_;  // pass_names(options)
  std::set<std::string> wanted_;
  std::vector<std::pair<std::string, std::string>> captured_;  // file name, text
};

}  // namespace hybgen
