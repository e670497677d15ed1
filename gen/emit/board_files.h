// The files a bare-metal program needs around generated code on a
// microcontroller target's board: start-up code (the vector table, the reset
// handler) and a linker script that puts code in the board's code memory,
// constants and weights in its weight memory, and data, the arena and the
// stack in its RAM (Target::code, weights, ram). `hybgen verify` builds with
// them; `hybgen board` writes them for a firmware project to start from.
// board_fit_problem says, before anything is compiled, whether a model fits
// that layout.
//
//   for (const EmittedFile& f : emit_board_files(find_target("cortex-m4"), 16384)) ...
//   // startup.c, link.ld
//   board_fit_problem(find_target("cortex-m55"), {weights, arena, 65536, 0});  // "" where it fits
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "emit/cpp_emitter.h"
#include "targets/target.h"

namespace hybgen {

// The heap the linker script keeps free between .bss and the stack: newlib's
// stdio buffers (generated code never allocates).
constexpr std::size_t kBoardHeapBytes = 4096;

// Throws Error for a target with no board (not a microcontroller), or a stack
// that does not fit the board's RAM.
std::vector<EmittedFile> emit_board_files(const Target& target, std::size_t stack_bytes);

// What a program around a model places on the board, as far as it is known
// before compiling: the emitted weights (emitted_weight_bytes), the arena
// (MemoryPlan::arena_bytes), the stack the linker script reserves, and the
// program's own buffers in RAM (a driver's inputs and outputs).
struct BoardUse {
  std::size_t weight_bytes = 0;
  std::size_t arena_bytes = 0;
  std::size_t stack_bytes = 0;
  std::size_t buffer_bytes = 0;
};

// Empty where `use` fits the target's board as link.ld lays it out: the
// weights in its weight memory, and the arena, the buffers, the heap and the
// stack in its RAM. Otherwise one line naming each that does not fit, with the
// sizes and the region. The code and the C library's own data are not known
// before compiling; the linker script's checks catch those.
std::string board_fit_problem(const Target& target, const BoardUse& use);

}  // namespace hybgen
