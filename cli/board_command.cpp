#include <cstdio>

#include "cli/commands.h"
#include "emit/board_files.h"
#include "emit/generate.h"
#include "ir/error.h"

namespace hybgen {

int run_board(const BoardFlags& flags) {
  const Target& target = find_target(flags.target);
  if (target.board.empty()) {
    std::string boards;
    for (const Target& t : all_targets())
      if (!t.board.empty()) boards += (boards.empty() ? "" : ", ") + t.name + " (" + t.board + ")";
    throw Error("--target " + target.name + " is not a microcontroller target and has no board; board files exist for " +
                boards);
  }
  const std::vector<EmittedFile> files = emit_board_files(target, flags.stack_bytes);
  write_generated(files, flags.out_dir);
  for (const auto& f : files) std::printf("wrote %s/%s\n", flags.out_dir.c_str(), f.filename.c_str());
  auto region = [](const MemoryRegion& r) {
    char text[160];
    std::snprintf(text, sizeof text, "%s %lu bytes at 0x%08lX", r.name.c_str(), r.bytes, r.origin);
    return std::string(text);
  };
  std::printf("%s on %s: code in %s, weights in %s, RAM in %s, stack %zu bytes\n", target.name.c_str(),
              target.board.c_str(), region(target.code).c_str(), region(target.weights).c_str(),
              region(target.ram).c_str(), flags.stack_bytes);
  return 0;
}

}  // namespace hybgen
