// How code generated for a --target is compiled and run on this machine:
// natively where the machine has the target's instructions, AArch64 (NEON)
// code elsewhere through a cross compiler and qemu's user-mode emulator when
// both are on the PATH (Debian: g++-aarch64-linux-gnu, qemu-user). Timing
// needs the real machine, so `hybgen bench` refuses emulation.
//
//   const Toolchain t = toolchain_for("armv8-a", "", Emulation::kAllowed);
//   t.cxx;     // "aarch64-linux-gnu-g++" on an x86-64 machine
//   t.runner;  // "qemu-aarch64"
#pragma once

#include <string>

namespace hybgen {

struct Toolchain {
  std::string cxx;     // the compiler
  std::string flags;   // added to the caller's ("-static" for the emulator)
  std::string runner;  // command the program runs under; empty: run it directly
};

enum class Emulation { kAllowed, kRefused };

// Whether this machine runs `target`'s instructions (hybgen --target names).
bool machine_runs(const std::string& target);

// The compiler (`preferred`, else $CXX, else c++ for native code) and
// runner for `target` here. Throws Error naming the target, what this
// machine runs and what would make it work, when nothing can run the code.
Toolchain toolchain_for(const std::string& target, const std::string& preferred_cxx, Emulation emulation);

// Whether `program` is an executable file on the PATH.
bool on_path(const std::string& program);

}  // namespace hybgen
