#include "verify/generated_build.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "emit/backends.h"
#include "emit/board_files.h"
#include "emit/templates.h"
#include "ir/error.h"

namespace hybgen {
std::string generated_name(const Graph& graph) {
  const std::string name = c_identifier(graph.name);
  return name != graph.name || name.empty() ? "model" : name;
}

GeneratedBuild::GeneratedBuild(const CompiledGraph& compiled, const std::string& driver_template,
                               std::map<std::string, std::string> driver_values, const BuildSettings& settings) {
  const Graph& graph = compiled.graph;
  const std::string name = generated_name(graph);
  CppEmitOptions emit{name, name, graph.name};
  emit.profile_hooks = settings.profile_hooks;
  emit.external_weights = settings.external_weights;
  const BackendTraits& backend = backend_traits(compiled.target.backend);
  if (settings.kernel_hooks && !backend.kernel_hooks)
    throw Error("kernel hooks: the " + backend_name(compiled.target.backend) + " backend prints none");
  emit.kernel_hooks = settings.kernel_hooks;
  const std::vector<EmittedFile> files = emit_for_target(compiled, emit);
  weight_bytes_ = emitted_weight_bytes(files);
  // Before the tools are looked for: where the model cannot fit the board,
  // installing them would not help.
  if (compiled.target.runner == Runner::kQemuSystem) {
    const std::string problem = board_fit_problem(
        compiled.target, {weight_bytes_, compiled.plan.arena_bytes, kBoardProgramStackBytes, settings.board_buffer_bytes});
    if (!problem.empty()) throw Error("the model " + problem);
  }
  toolchain_ = toolchain_for(compiled.target, settings.cxx, settings.emulation);
  const std::string target_flags = compiler_flags_for(compiled.target);
  // The target's -march first: a -march among the caller's flags (bench's
  // -march=native) then wins, with its tuning for this CPU; after it,
  // -march=x86-64-v4 tuned for a generic CPU and MobileNet v2's stem ran 30%
  // slower. Flags lacking the target's instructions fail on its pin check.
  cxx_flags_ = target_flags.empty() ? settings.flags : target_flags + " " + settings.flags;
  if (compiled.target.runner == Runner::kCudaHost) {
    // The emulation layer is C++17; the generated code itself is the same.
    cxx_flags_ = settings.flags;
    const std::size_t std11 = cxx_flags_.find("-std=c++11");
    if (std11 != std::string::npos) cxx_flags_.replace(std11, 10, "-std=c++17");
  } else if (compiled.target.runner == Runner::kCudaDevice) {
    // Host-compiler flags do not apply to nvcc; the target's architectures
    // do, and the caller's macro definitions (-DNAME[=VALUE]), which select
    // kernel variants to compare.
    cxx_flags_ = "-std=c++17 -O3 " + target_flags + macro_definitions(settings.flags);
  }
  if (!toolchain_.flags.empty()) cxx_flags_ += " " + toolchain_.flags;
  const std::string& flags = cxx_flags_;
  for (const auto& f : files) write_file_atomic(dir() + "/" + f.filename, f.content);
  name_ = name;
  size_tool_ = compiled.target.size_tool;
  driver_values["NAME"] = name;
  driver_values["NAMESPACE"] = name;
  driver_values["WEIGHTS_LOAD"] = "";
  if (backend.weights_at_init) driver_values["INIT_ARGS"] = settings.external_weights ? ", weights" : "";
  if (settings.external_weights) {
    driver_values["WEIGHTS_LOAD"] = "  char weights_path[4096];\n"
                                    "  std::snprintf(weights_path, sizeof weights_path, \"%s/" +
                                    name + ".weights.bin\", dir);\n"
                                    "  const void* const weights = hg_load_weights(weights_path, " + name +
                                    "::kWeightBytes, " + name + "::kWeightsFnv1a);\n"
                                    "  if (!weights) return 4;\n";
    if (!backend.weights_at_init) driver_values["ARGS"] += ", weights";
  }
  const std::string& main_file = backend.driver_file;
  write_file_atomic(dir() + "/" + main_file, fill_template(template_text(driver_template), driver_values, driver_template));
  write_file_atomic(dir() + "/hg_spin_pool.h", template_text("hg_spin_pool.h"));
  write_file_atomic(dir() + "/hg_load_weights.h", template_text("hg_load_weights.h"));
  write_file_atomic(dir() + "/hg_float_files.h", template_text("hg_float_files.h"));

  const std::string& compiler = toolchain_.cxx;
  const std::string d = dir() + "/";
  const std::string weights_source =
      settings.external_weights ? "" : " " + shell_quote(d + name + "_weights.cpp");
  // cuda-host compiles the .cu files as C++ against the emulation layer,
  // written as the cuda_runtime.h the compiler finds first.
  const bool cuda_host = compiled.target.runner == Runner::kCudaHost;
  if (cuda_host) write_file_atomic(dir() + "/cuda_runtime.h", template_text("cuda_host/cuda_runtime.h"));
  std::string command;
  // The driver's source, or its object where it is compiled apart.
  std::string driver = shell_quote(d + main_file);
  const bool driver_apart = settings.unoptimized_driver && (compiled.target.runner == Runner::kNative ||
                                                            compiled.target.runner == Runner::kCrossQemu ||
                                                            compiled.target.runner == Runner::kCudaHost);
  if (driver_apart) {
    command = compiler + " " + flags + " -O0 -pthread -I" + shell_quote(dir()) + (cuda_host ? " -x c++ " : " ") +
              "-c " + driver + " -o " + shell_quote(d + "driver.o") + " > " + shell_quote(d + "compile.log") +
              " 2>&1 && ";
    driver = shell_quote(d + "driver.o");
  }
  switch (compiled.target.runner) {
    case Runner::kCudaHost:
      command += compiler + " " + flags + " -pthread -I" + shell_quote(dir()) + " " +
                 (driver_apart ? driver + " -x c++ " : "-x c++ " + driver + " ") + shell_quote(d + name + ".cu") +
                 " -x none" + weights_source;
      break;
    case Runner::kCudaDevice:
      command = compiler + " " + flags + " -I" + shell_quote(dir()) + " " + shell_quote(d + main_file) + " " +
                shell_quote(d + name + ".cu") + weights_source;
      break;
    case Runner::kQemuSystem:
      // The board's start-up code and memory layout around the program.
      for (const EmittedFile& f : emit_board_files(compiled.target, kBoardProgramStackBytes))
        write_file_atomic(d + f.filename, f.content);
      // startup.c is C: compiled on its own, without the C++ flags.
      // The model's own object apart: its symbols are checked against the
      // firmware contract and its size measured without compiling it again.
      command = compiler + " " + compiled.target.compiler_flags + " -std=c99 -O2 -Wall -Werror -c -x c " +
                shell_quote(d + "startup.c") + " -o " + shell_quote(d + "startup.o") + " > " +
                shell_quote(d + "compile.log") + " 2>&1 && " + compiler + " " + flags + " -I" + shell_quote(dir()) +
                " -c " + shell_quote(d + name + ".cpp") + " -o " + shell_quote(d + name + ".o") + " >> " +
                shell_quote(d + "compile.log") + " 2>&1 && " + compiler + " " + flags + " -I" + shell_quote(dir()) +
                " -T " + shell_quote(d + "link.ld") + " " + shell_quote(d + "startup.o") + " " +
                shell_quote(d + main_file) + " " + shell_quote(d + name + ".o") + weights_source;
      break;
    case Runner::kNative:
    case Runner::kCrossQemu:
      command += compiler + " " + flags + " -pthread -I" + shell_quote(dir()) + " " + driver + " " +
                 shell_quote(d + name + ".cpp") + weights_source;
      break;
  }
  command += " -o " + shell_quote(d + "program") + " >> " + shell_quote(d + "compile.log") + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  if (std::system(command.c_str()) != 0)
    throw Error("the generated code did not compile (" + compiler + " " + flags + "):\n" +
                read_file_text(d + "compile.log") + large_weights_note(name, weight_bytes_, settings.external_weights));
  compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (compiled.target.forbidden_symbol_prefixes.empty()) return;
  const std::vector<std::string> found = forbidden_symbols_in(compiled.target, d + name + ".o");
  if (!found.empty()) {
    std::string names;
    for (const std::string& symbol : found) names += (names.empty() ? "" : ", ") + symbol;
    throw Error("the generated code for " + compiled.target.name + " needs " + names +
                ": a microcontroller build must not use the heap, exceptions or software double precision");
  }
  // A model wholly in int8 runs on a core without a floating-point unit.
  if (compiled.target.disassembler.empty() || !computes_in_integers_only(compiled.graph)) return;
  const std::vector<std::string> floats = float_instructions_in(compiled.target, d + name + ".o");
  if (floats.empty()) return;
  std::string lines;
  for (std::size_t i = 0; i < floats.size() && i < 8; ++i) lines += "\n  " + floats[i];
  throw Error("the generated code for " + compiled.target.name + " of a model computed wholly in integers has " +
              std::to_string(floats.size()) + " floating-point instructions:" + lines);
}

std::vector<std::string> float_instructions(const std::string& disassembly) {
  // objdump -d: "  address:<TAB>[raw bytes<TAB>]mnemonic<TAB>operands"; the
  // mnemonic's data types follow its dots (vcvt.s32.f32).
  static const std::regex typed(
      R"(^\s*[0-9a-f]+:\s.*\b[a-z][a-z0-9]*(\.[a-z0-9]+)*\.(f16|f32|f64|bf16)(\.[a-z0-9]+)*\s)");
  std::istringstream lines(disassembly);
  std::vector<std::string> found;
  for (std::string line; std::getline(lines, line);)
    if (std::regex_search(line + " ", typed)) found.push_back(line);
  return found;
}

std::vector<std::string> float_instructions_in(const Target& target, const std::string& object) {
  const std::string listing = object + ".disassembly.txt";
  if (std::system((target.disassembler + " -d --no-show-raw-insn " + shell_quote(object) + " > " +
                   shell_quote(listing) + " 2>&1")
                      .c_str()) != 0)
    throw Error("could not disassemble " + object + " with " + target.disassembler + ":\n" + read_file_text(listing));
  return float_instructions(read_file_text(listing));
}

bool computes_in_integers_only(const Graph& graph) {
  for (const auto& [value, type] : graph.types)
    if (is_float_dtype(type.dtype)) return false;
  return true;
}

std::string macro_definitions(const std::string& flags) {
  std::string out;
  std::istringstream words(flags);
  for (std::string word; words >> word;)
    if (word.size() > 2 && word.rfind("-D", 0) == 0) out += " " + word;
  return out;
}

std::vector<std::string> symbols_with_prefixes(const std::string& undefined_symbols,
                                               const std::vector<std::string>& prefixes) {
  std::istringstream lines(undefined_symbols);
  std::string type, symbol;
  std::vector<std::string> found;
  while (lines >> type >> symbol)
    for (const std::string& prefix : prefixes)
      if (symbol.compare(0, prefix.size(), prefix) == 0) {
        found.push_back(symbol);
        break;
      }
  return found;
}

std::vector<std::string> forbidden_symbols_in(const Target& target, const std::string& object) {
  const std::string symbols = object + ".symbols.txt";
  if (std::system((target.symbol_tool + " -u " + shell_quote(object) + " > " + shell_quote(symbols) + " 2>&1").c_str()) !=
      0)
    throw Error("could not list the symbols of " + object + " with " + target.symbol_tool + ":\n" +
                read_file_text(symbols));
  return symbols_with_prefixes(read_file_text(symbols), target.forbidden_symbol_prefixes);
}

std::size_t GeneratedBuild::model_code_bytes() const {
  if (size_tool_.empty()) throw Error("model_code_bytes: a microcontroller target's build only");
  const std::string d = dir() + "/";
  // The model's object, which the board build compiled on its own.
  const std::string object = d + name_ + ".o", log = d + "size.log";
  const std::string command =
      size_tool_ + " " + shell_quote(object) + " > " + shell_quote(d + "size.txt") + " 2> " + shell_quote(log);
  if (std::system(command.c_str()) != 0)
    throw Error("could not measure the model's code with " + size_tool_ + ":\n" + read_file_text(log));
  // Berkeley format: a header line, then "text data bss dec hex filename".
  unsigned long text = 0, data = 0;
  const std::string table = read_file_text(d + "size.txt");
  const std::size_t line = table.find('\n');
  if (line == std::string::npos || std::sscanf(table.c_str() + line + 1, "%lu %lu", &text, &data) != 2)
    throw Error(size_tool_ + " printed no sizes: " + table);
  return text + data;
}

std::string GeneratedBuild::run() const {
  const std::string d = dir() + "/";
  const int rc = std::system(
      (toolchain_.run_command(d + "program", dir()) + " > " + shell_quote(d + "run.log") + " 2>&1").c_str());
  const std::string output = read_file_text(d + "run.log");
  if (rc != 0) throw Error("the compiled model failed to run: " + output);
  return output;
}

}  // namespace hybgen
