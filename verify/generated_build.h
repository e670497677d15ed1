// Builds generated code into a program: the model's files plus a driver made
// from a template, compiled in one compiler call inside a temporary folder.
// `hybgen verify` and `hybgen bench` both use it.
//
//   GeneratedBuild b(compile_graph(graph, {true, nullptr, find_target("x86-64-v3")}), "verify_main.cpp",
//                    {{"READS", ...}}, {options.cxx, options.cxx_flags});
//   b.run_in_dir();                      // runs the program with its folder as argument
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "io/file_util.h"
#include "pipeline.h"
#include "targets/toolchain.h"

namespace hybgen {

// The stack a program built for a microcontroller board gets from its linker
// script: room for newlib's stdio besides the model, whose own peak verify's
// driver measures.
constexpr std::size_t kBoardProgramStackBytes = 64 * 1024;

// How the model is emitted and compiled (the target is the compiled graph's).
struct BuildSettings {
  std::string cxx;                   // choose_compiler(cxx)
  std::string flags;                 // compiler flags; the target's are added
  bool profile_hooks = false;        // CppEmitOptions::profile_hooks
  bool external_weights = false;     // CppEmitOptions::external_weights: the driver loads NAME.weights.bin
  // Whether code this machine cannot run may run under an emulator
  // (toolchain.h); refused, such a target is an error.
  Emulation emulation = Emulation::kRefused;
  // CppEmitOptions::kernel_hooks (`hybgen verify --bisect`): the driver
  // defines kernels::hg_after_kernel. C++ targets only.
  bool kernel_hooks = false;
  // Microcontroller targets: the RAM the driver's own buffers take (verify's
  // inputs and outputs), counted with the arena and the stack when checking
  // that the program fits the board (board_fit_problem).
  std::size_t board_buffer_bytes = 0;
  // Compile the driver apart at -O0 (C++ on this machine, under qemu-user or
  // on cuda-host): verify's driver only moves data, one statement per buffer,
  // and optimizing that for a model of hundreds of outputs took the compiler
  // longer than the model itself. Board programs keep one set of flags: their
  // driver measures the stack.
  bool unoptimized_driver = false;
};

// The NAME (and namespace) of the generated files a build of this graph
// holds: the graph's name where it is a C identifier, else "model".
std::string generated_name(const Graph& graph);

// The macro definitions among compiler flags (the words starting -D), each
// after a space: what of bench's --cxx-flags reaches nvcc, where the rest
// are host-compiler flags.
std::string macro_definitions(const std::string& flags);

// The symbols of `undefined_symbols` (`nm -u` output: a type letter and a
// name a line) that start with one of `prefixes`, in order.
std::vector<std::string> symbols_with_prefixes(const std::string& undefined_symbols,
                                               const std::vector<std::string>& prefixes);
// The undefined symbols of the object file `object` that `target` forbids
// (Target::forbidden_symbol_prefixes), listed by its symbol tool; throws
// Error when the tool fails.
std::vector<std::string> forbidden_symbols_in(const Target& target, const std::string& object);

// The floating-point instructions of a disassembly (`objdump -d` output),
// each line as printed: those whose mnemonic has a floating-point data type
// (vadd.f32, vcvt.s32.f32, vmov.f32 s15, #1.0, vcmp.f64 ...: every
// arithmetic, conversion and comparison the FPU or Helium's float lanes do).
// Moves and saves of registers without one (vmov s15, r3: GCC keeps
// integers in s registers when the core runs out; vpush {d8-d15} around
// Helium code; vstr d7 storing zeros) are no float computation and are not
// listed.
std::vector<std::string> float_instructions(const std::string& disassembly);
// The floating-point instructions of the object file `object`, disassembled
// by the target's disassembler; throws Error when the tool fails.
std::vector<std::string> float_instructions_in(const Target& target, const std::string& object);
// Whether no value of the graph (inputs, constants, every node's outputs) is
// a floating-point tensor: a model computed wholly in integers.
bool computes_in_integers_only(const Graph& graph);

class GeneratedBuild {
 public:
  // Emits `compiled` (compile_graph's, for its target) beside the driver.
  // The driver template gets NAME, NAMESPACE and WEIGHTS_LOAD (code that
  // defines `weights` from DIR with external weights, else nothing) besides
  // `driver_values`; ARGS gets `weights` appended with external weights.
  // Throws Error with the compiler's output when compilation fails, and
  // before compiling when this machine cannot run the target's code or, on
  // a microcontroller target, when the program does not fit the board
  // (board_fit_problem: checked first, as the tools would not help) or when
  // the model's object needs a symbol the target forbids
  // (Target::forbidden_symbol_prefixes: the heap, exceptions...).
  GeneratedBuild(const CompiledGraph& compiled, const std::string& driver_template,
                 std::map<std::string, std::string> driver_values, const BuildSettings& settings);

  const std::string& dir() const { return dir_.path(); }
  double compile_seconds() const { return compile_seconds_; }
  // The compiler flags it built with: the target's -march, then the settings' flags.
  const std::string& cxx_flags() const { return cxx_flags_; }
  // The compiler, and the emulator the program runs under ("" natively).
  const Toolchain& toolchain() const { return toolchain_; }
  // Bytes of weight data the generated code carries (emitted_weight_bytes).
  std::size_t weight_bytes() const { return weight_bytes_; }
  // Runs the program with its folder as the argument; returns its standard
  // output, or throws Error with its output when it exits non-zero.
  std::string run() const;
  // Bytes of flash the model's own code takes (text and data of its object,
  // weights aside), from the target's size tool. Microcontroller targets only.
  std::size_t model_code_bytes() const;
  // Keeps the folder after destruction.
  void keep() { dir_.release(); }

 private:
  TempDir dir_{"hybgen-build"};
  double compile_seconds_ = 0;
  std::size_t weight_bytes_ = 0;
  std::string cxx_flags_;
  std::string name_;       // the generated files' NAME
  std::string size_tool_;  // the target's (Target::size_tool); empty: none
  Toolchain toolchain_;
};

}  // namespace hybgen
