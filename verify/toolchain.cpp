#include "verify/toolchain.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "ir/error.h"
#include "ops/gemm_pack.h"
#include "verify/generated_build.h"

namespace hybgen {
namespace {

constexpr const char* kAarch64Compiler = "aarch64-linux-gnu-g++";
constexpr const char* kAarch64Emulator = "qemu-aarch64";

// What a target's code needs, in words, for errors.
std::string instructions_of(const std::string& target) {
  if (target == "x86-64-v4") return "AVX-512";
  if (target == "x86-64-v3") return "AVX2 and FMA";
  if (target == "armv8-a") return "an AArch64 (NEON) machine";
  return "any machine";
}

}  // namespace

bool machine_runs(const std::string& target) {
  cpp_target(target);  // rejects unknown names
  const std::string host = host_target();
  if (target == "generic" || target == host) return true;
  return target == "x86-64-v3" && host == "x86-64-v4";
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

Toolchain toolchain_for(const std::string& target, const std::string& preferred_cxx, Emulation emulation) {
  if (machine_runs(target)) return {choose_compiler(preferred_cxx), "", ""};
  const std::string here = "this machine runs " + host_target() + " code";
  const std::string runs_here = host_target() == "generic" ? "generic" : host_target() + " or generic";
  if (target != "armv8-a")
    throw Error("--target " + target + " code needs " + instructions_of(target) + ", which this machine lacks (" +
                here + "): use --target " + runs_here + " here, or run it on a machine that has them");
  if (emulation == Emulation::kRefused)
    throw Error("--target armv8-a code cannot be timed here (" + here +
                "): an emulator's timings say nothing of a real core; time it on an AArch64 machine");
  if (!on_path(kAarch64Compiler) || !on_path(kAarch64Emulator))
    throw Error("--target armv8-a code needs " + instructions_of(target) + " (" + here + "); to run it under emulation, " +
                "put " + kAarch64Compiler + " and " + kAarch64Emulator +
                " on the PATH (Debian: apt-get install g++-aarch64-linux-gnu qemu-user)");
  // Static: qemu's user mode then needs no AArch64 libraries on this machine.
  return {kAarch64Compiler, "-static", kAarch64Emulator};
}

}  // namespace hybgen
