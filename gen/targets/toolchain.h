// How code generated for a --target is compiled and run on this machine:
// natively where the machine has the target's instructions, AArch64 (NEON)
// code elsewhere through a cross compiler and qemu's user-mode emulator when
// both are on the PATH (Debian: g++-aarch64-linux-gnu, qemu-user), and
// Cortex-M code as a bare-metal program on a board qemu-system-arm emulates
// (Debian: gcc-arm-none-eabi, libnewlib-arm-none-eabi, qemu-system-arm).
// Timing needs the real machine, so `hybgen bench` refuses emulation.
//
//   const Toolchain t = toolchain_for(find_target("armv8-a"), "", Emulation::kAllowed);
//   t.cxx;     // "aarch64-linux-gnu-g++" on an x86-64 machine
//   t.runner;  // "qemu-aarch64"
#pragma once

#include <string>

#include "targets/target.h"

namespace hybgen {

struct Toolchain {
  std::string cxx;     // the compiler
  std::string flags;   // added to the caller's ("-static" for the emulator)
  std::string runner;  // command the program runs under; empty: run it directly
  // Bare metal: the runner loads the program as the board's firmware and
  // passes it the folder through semihosting.
  bool bare_metal = false;

  // The shell command that runs `program` with `dir` as its argument.
  std::string run_command(const std::string& program, const std::string& dir) const;
};

enum class Emulation { kAllowed, kRefused };

// The compiler (`preferred`, else $CXX, else c++ for native code) and
// runner for `target` here. Throws Error naming the target, what this
// machine runs and what would make it work, when nothing can run the code.
Toolchain toolchain_for(const Target& target, const std::string& preferred_cxx, Emulation emulation);

// The compiler to use: `preferred`, else $CXX, else c++.
std::string choose_compiler(const std::string& preferred);
// A shell-quoted argument.
std::string shell_quote(const std::string& s);

// Whether this machine has an NVIDIA GPU (its driver's device files).
bool cuda_device_present();

// Whether `program` is an executable file on the PATH.
bool on_path(const std::string& program);

}  // namespace hybgen
