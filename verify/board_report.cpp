#include "verify/board_report.h"

#include <cstdio>

#include "ir/error.h"
#include "targets/toolchain.h"
#include "verify/verify.h"

namespace hybgen {

bool can_measure_on_board(const Target& target, std::string* why) {
  if (target.runner != Runner::kQemuSystem) {
    if (why) *why = "--target " + target.name + " is not a microcontroller target";
    return false;
  }
  for (const std::string& tool : {target.cross_compiler, target.emulator, target.size_tool})
    if (!on_path(tool)) {
      if (why) *why = tool + " is not on the PATH (Debian: apt-get install " + target.packages + ")";
      return false;
    }
  return true;
}

BoardReport measure_on_board(const Graph& graph, const CompileOptions& compile) {
  const Target& target = compile.target;
  std::string why;
  if (!can_measure_on_board(target, &why)) throw Error("cannot measure the model on " + target.board + ": " + why);
  VerifyOptions options;
  options.compile = compile;
  options.compile.observer = nullptr;
  options.measure_code = true;
  const VerifyReport verified = verify_model(graph, options);
  if (!verified.ok) {
    std::string worst;
    for (const auto& c : verified.checks)
      if (!c.ok) worst += " " + c.name + " (max relative error " + std::to_string(c.max_rel_error) + ")";
    throw Error("the model's outputs on " + target.board + " differ from the reference:" + worst);
  }
  BoardReport r;
  r.target = target.name;
  r.board = target.board;
  r.compiler_flags = target.compiler_flags + " " + options.cxx_flags;
  r.code_bytes = verified.code_bytes;
  r.weight_bytes = verified.weight_bytes;
  r.arena_bytes = verified.arena_bytes;
  r.stack_bytes = verified.stack_bytes;
  r.instructions = verified.instructions;
  return r;
}

std::optional<BoardReport> measure_on_board_if_possible(const Graph& graph, const CompileOptions& compile,
                                                        std::string* not_measured) {
  if (compile.target.runner != Runner::kQemuSystem || !can_measure_on_board(compile.target, not_measured))
    return std::nullopt;
  return measure_on_board(graph, compile);
}

std::string board_report_text(const BoardReport& r) {
  char text[1024];
  std::snprintf(text, sizeof text,
                "on %s (%s, emulated): flash %zu bytes (code %zu, weights %zu), RAM %zu bytes (arena %zu, peak "
                "stack %lu), %lu instructions per inference\n",
                r.target.c_str(), r.board.c_str(), r.flash_bytes(), r.code_bytes, r.weight_bytes, r.ram_bytes(),
                r.arena_bytes, r.stack_bytes, r.instructions);
  return text;
}

nlohmann::ordered_json board_report_json(const BoardReport& r) {
  nlohmann::ordered_json j;
  j["board"] = r.board;
  j["flash_bytes"] = r.flash_bytes();
  j["code_bytes"] = r.code_bytes;
  j["weights_bytes"] = r.weight_bytes;
  j["ram_bytes"] = r.ram_bytes();
  j["arena_bytes"] = r.arena_bytes;
  j["stack_bytes"] = r.stack_bytes;
  j["instructions"] = r.instructions;
  j["compiler_flags"] = r.compiler_flags;
  return j;
}

}  // namespace hybgen
