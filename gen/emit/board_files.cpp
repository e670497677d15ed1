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
                                          {"FLASH_ORIGIN", hex(target.flash.origin)},
                                          {"FLASH_BYTES", hex(target.flash.bytes)},
                                          {"RAM_ORIGIN", hex(target.ram.origin)},
                                          {"RAM_BYTES", hex(target.ram.bytes)},
                                          {"STACK_BYTES", std::to_string(stack_bytes)}},
                                         "firmware/link.ld");
  return {{"startup.c", template_text("firmware/startup.c")}, {"link.ld", link}};
}

}  // namespace hybgen
