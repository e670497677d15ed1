#include "verify/generated_build.h"

#include <chrono>
#include <cstdlib>

#include "emit/cpp_emitter.h"
#include "emit/templates.h"
#include "ir/error.h"
#include "ops/gemm_pack.h"

namespace hybgen {

std::string choose_compiler(const std::string& preferred) {
  if (!preferred.empty()) return preferred;
  const char* env = std::getenv("CXX");
  return env && *env ? env : "c++";
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

GeneratedBuild::GeneratedBuild(const CompiledGraph& compiled, const std::string& driver_template,
                               std::map<std::string, std::string> driver_values, const BuildSettings& settings) {
  const std::string& target = compiled.target.name;
  toolchain_ = toolchain_for(target, settings.cxx, settings.emulation);
  const std::string target_flags = target_cxx_flags(target);
  // The target's -march first: a -march among the caller's flags (bench's
  // -march=native) then wins, with its tuning for this CPU; after it,
  // -march=x86-64-v4 tuned for a generic CPU and MobileNet v2's stem ran 30%
  // slower. Flags lacking the target's instructions fail on its pin check.
  cxx_flags_ = target_flags.empty() ? settings.flags : target_flags + " " + settings.flags;
  if (!toolchain_.flags.empty()) cxx_flags_ += " " + toolchain_.flags;
  const std::string& flags = cxx_flags_;
  const Graph& graph = compiled.graph;
  std::string name = c_identifier(graph.name);
  if (name != graph.name || name.empty()) name = "model";
  CppEmitOptions emit{name, name, graph.name};
  emit.profile_hooks = settings.profile_hooks;
  emit.external_weights = settings.external_weights;
  const std::vector<EmittedFile> files = emit_cpp(compiled, emit);
  for (const auto& f : files) write_file_atomic(dir() + "/" + f.filename, f.content);
  weight_bytes_ = emitted_weight_bytes(files);
  driver_values["NAME"] = name;
  driver_values["NAMESPACE"] = name;
  driver_values["WEIGHTS_LOAD"] = "";
  if (settings.external_weights) {
    driver_values["WEIGHTS_LOAD"] = "  char weights_path[4096];\n"
                                    "  std::snprintf(weights_path, sizeof weights_path, \"%s/" +
                                    name + ".weights.bin\", dir);\n"
                                    "  const void* const weights = hg_load_weights(weights_path, " + name +
                                    "::kWeightBytes, " + name + "::kWeightsFnv1a);\n"
                                    "  if (!weights) return 4;\n";
    driver_values["ARGS"] += ", weights";
  }
  write_file_atomic(dir() + "/main.cpp", fill_template(template_text(driver_template), driver_values, driver_template));
  write_file_atomic(dir() + "/hg_spin_pool.h", template_text("hg_spin_pool.h"));
  write_file_atomic(dir() + "/hg_load_weights.h", template_text("hg_load_weights.h"));

  const std::string& compiler = toolchain_.cxx;
  const std::string d = dir() + "/";
  const std::string command = compiler + " " + flags + " -pthread -I" + shell_quote(dir()) + " " + shell_quote(d + "main.cpp") +
                              " " + shell_quote(d + name + ".cpp") +
                              (settings.external_weights ? "" : " " + shell_quote(d + name + "_weights.cpp")) +
                              " -o " + shell_quote(d + "program") + " > " + shell_quote(d + "compile.log") + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  if (std::system(command.c_str()) != 0)
    throw Error("the generated code did not compile (" + compiler + " " + flags + "):\n" +
                read_file_text(d + "compile.log") + large_weights_note(name, weight_bytes_, settings.external_weights));
  compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string GeneratedBuild::run() const {
  const std::string d = dir() + "/";
  const std::string runner = toolchain_.runner.empty() ? "" : toolchain_.runner + " ";
  const int rc = std::system((runner + shell_quote(d + "program") + " " + shell_quote(dir()) + " > " +
                              shell_quote(d + "run.log") + " 2>&1")
                                 .c_str());
  const std::string output = read_file_text(d + "run.log");
  if (rc != 0) throw Error("the compiled model failed to run: " + output);
  return output;
}

}  // namespace hybgen
