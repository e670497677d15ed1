#include "emit/board_files.h"

#include <cstdio>

#include "emit/templates.h"
#include "ir/error.h"

namespace hybgen {
namespace {

std::string hex(unsigned long value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%08lX", value);
  return text;
}

std::string region_text(const MemoryRegion& region) {
  return region.name + " (" + std::to_string(region.bytes) + " bytes at " + hex(region.origin) + ")";
}

}  // namespace

std::vector<EmittedFile> emit_board_files(const Target& target, std::size_t stack_bytes) {
  if (target.runner != Runner::kQemuSystem)
    throw Error("--target " + target.name + " is not a microcontroller target: it has no board files");
  if (stack_bytes < 1024 || stack_bytes % 8 != 0 || stack_bytes > target.ram.bytes / 2)
    throw Error("a stack of " + std::to_string(stack_bytes) + " bytes on " + target.board +
                ": expected a multiple of 8 from 1024 to half its RAM (" + std::to_string(target.ram.bytes / 2) + ")");
  const std::string link = fill_template(template_text("firmware/link.ld"),
                                         {{"TARGET", target.name},
                                          {"BOARD", target.board},
                                          {"CODE_NAME", target.code.name},
                                          {"CODE_ORIGIN", hex(target.code.origin)},
                                          {"CODE_BYTES", hex(target.code.bytes)},
                                          {"WEIGHTS_NAME", target.weights.name},
                                          {"WEIGHTS_ORIGIN", hex(target.weights.origin)},
                                          {"WEIGHTS_BYTES", hex(target.weights.bytes)},
                                          {"RAM_NAME", target.ram.name},
                                          {"RAM_ORIGIN", hex(target.ram.origin)},
                                          {"RAM_BYTES", hex(target.ram.bytes)},
                                          {"HEAP_BYTES", std::to_string(kBoardHeapBytes)},
                                          {"STACK_BYTES", std::to_string(stack_bytes)}},
                                         "firmware/link.ld");
  return {{"startup.c", template_text("firmware/startup.c")}, {"link.ld", link}};
}

std::string board_fit_problem(const Target& target, const BoardUse& use) {
  if (target.runner != Runner::kQemuSystem)
    throw Error("--target " + target.name + " is not a microcontroller target: it has no board");
  std::string problem;
  if (use.weight_bytes > target.weights.bytes)
    problem += "its weights take " + std::to_string(use.weight_bytes) + " bytes, more than the board's " +
               region_text(target.weights) + " holds";
  const std::size_t ram = use.arena_bytes + use.buffer_bytes + kBoardHeapBytes + use.stack_bytes;
  if (ram > target.ram.bytes) {
    problem += problem.empty() ? "its" : "; and its";
    problem += " RAM takes " + std::to_string(ram) + " bytes (arena " + std::to_string(use.arena_bytes) +
               (use.buffer_bytes ? ", input and output buffers " + std::to_string(use.buffer_bytes) : "") +
               ", heap " + std::to_string(kBoardHeapBytes) + ", stack " + std::to_string(use.stack_bytes) +
               "), more than the board's " + region_text(target.ram) + " holds";
  }
  if (problem.empty()) return "";
  return "does not fit " + target.board + " (" + target.name + "): " + problem;
}

}  // namespace hybgen
