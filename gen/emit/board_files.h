// The files a bare-metal program needs around generated code on a
// microcontroller target's board: start-up code (the vector table, the reset
// handler) and a linker script that puts code and weights in the board's
// flash and data, the arena and the stack in its RAM. `hybgen verify` builds
// with them; `hybgen board` writes them for a firmware project to start from.
//
//   for (const EmittedFile& f : emit_board_files(find_target("cortex-m4"), 16384)) ...
//   // startup.c, link.ld
#pragma once

#include <cstddef>
#include <vector>

#include "emit/cpp_emitter.h"
#include "targets/target.h"

namespace hybgen {

// Throws Error for a target with no board (not a microcontroller), or a stack
// that does not fit the board's RAM.
std::vector<EmittedFile> emit_board_files(const Target& target, std::size_t stack_bytes);

}  // namespace hybgen
