// What a model costs on a microcontroller: flash (the model's code, from the
// size tool on its object, and its weights) and RAM (the arena and the peak
// stack of one inference, measured on the emulated board), and the
// instructions one inference takes there. `hybgen inspect` prints it and
// `hybgen` (generate) records it in the manifest.
//
//   const BoardReport r = measure_on_board(graph, {true, nullptr, find_target("cortex-m4")});
//   r.flash_bytes();  r.ram_bytes();  board_report_text(r);
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "pipeline.h"
#include "targets/target.h"

namespace hybgen {

struct BoardReport {
  std::string target;
  std::string board;
  std::string compiler_flags;  // what the code was compiled with
  std::size_t code_bytes = 0;
  std::size_t weight_bytes = 0;
  std::size_t arena_bytes = 0;
  unsigned long stack_bytes = 0;
  unsigned long instructions = 0;

  std::size_t flash_bytes() const { return code_bytes + weight_bytes; }
  std::size_t ram_bytes() const { return arena_bytes + stack_bytes; }
};

// Whether this machine has what measuring `target` needs; if not, `why`
// names the missing tool and its Debian packages.
bool can_measure_on_board(const Target& target, std::string* why);

// Builds the model as `compile` says (its target a microcontroller), runs one
// inference on seeded random inputs on the emulated board, checks it against
// the reference, and measures. Throws Error when the tools are missing, the
// code does not build or fit, or its outputs are wrong.
BoardReport measure_on_board(const Graph& graph, const CompileOptions& compile);

// measure_on_board where the target is a microcontroller and this machine
// has the tools; otherwise nothing, and for a microcontroller `not_measured`
// says what is missing.
std::optional<BoardReport> measure_on_board_if_possible(const Graph& graph, const CompileOptions& compile,
                                                        std::string* not_measured);

// Lines for a terminal, and the manifest's "memory" object.
std::string board_report_text(const BoardReport& report);
nlohmann::ordered_json board_report_json(const BoardReport& report);

}  // namespace hybgen
