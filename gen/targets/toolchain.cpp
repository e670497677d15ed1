#include "targets/toolchain.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "ir/error.h"
#include "targets/target.h"

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

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

namespace {

// newlib's C library with its semihosting system calls (rdimon), startup.c
// instead of its start files, and unused sections dropped.
Toolchain bare_metal_toolchain(const Target& target) {
  Toolchain t;
  t.cxx = target.cross_compiler;
  t.flags = "-ffunction-sections -fdata-sections --specs=nano.specs --specs=rdimon.specs -nostartfiles "
            "-Wl,--gc-sections";
  // -icount: the virtual clock advances one step per instruction, so the
  // driver's SysTick counts instructions.
  t.runner = target.emulator + " -machine " + target.board +
             " -nographic -monitor none -serial none -icount shift=0,sleep=off";
  t.bare_metal = true;
  return t;
}

std::string doubled_commas(const std::string& s) {
  std::string out;
  for (char c : s) out += c == ',' ? std::string(",,") : std::string(1, c);
  return out;
}

}  // namespace

std::string Toolchain::run_command(const std::string& program, const std::string& dir) const {
  if (bare_metal)
    // qemu splits -semihosting-config at commas, which it takes doubled.
    return runner + " -semihosting-config " +
           shell_quote("enable=on,target=native,arg=program,arg=" + doubled_commas(dir)) + " -kernel " +
           shell_quote(program);
  return (runner.empty() ? "" : runner + " ") + shell_quote(program) + " " + shell_quote(dir);
}

Toolchain toolchain_for(const Target& target, const std::string& preferred_cxx, Emulation emulation) {
  const std::string here = "this machine runs " + host_target().name + " code";
  switch (target.runner) {
    case Runner::kCudaHost:
      if (emulation == Emulation::kRefused)
        throw Error("--target " + target.name + " runs the CUDA kernels under a CPU emulation that says nothing of a "
                    "GPU's speed: time --target cuda on a machine with an NVIDIA GPU");
      return {choose_compiler(preferred_cxx), "", ""};
    case Runner::kCudaDevice:
      if (!on_path("nvcc"))
        throw Error("--target " + target.name + " code is built with nvcc, which is not on the PATH (the CUDA toolkit)");
      if (!cuda_device_present())
        throw Error("--target " + target.name + " code needs " + target.needs +
                    ", and this machine has none: use --target cuda-host to run the same kernels on the CPU");
      return {"nvcc", "", ""};
    case Runner::kQemuSystem:
      if (emulation == Emulation::kRefused)
        throw Error("--target " + target.name + " code cannot be timed here: an emulated board's timings say "
                    "nothing of a real core; `hybgen verify --target " + target.name +
                    "` reports the instructions an inference takes");
      for (const std::string& program : {target.cross_compiler, target.emulator})
        if (!on_path(program))
          throw Error("--target " + target.name + " code is built with " + target.cross_compiler + " and run on " +
                      target.emulator + ", and " + program + " is not on the PATH (Debian: apt-get install " +
                      target.packages + ")");
      return bare_metal_toolchain(target);
    case Runner::kNative:
    case Runner::kCrossQemu:
      break;
  }
  if (machine_runs(target)) return {choose_compiler(preferred_cxx), "", ""};
  const std::string runs_here =
      host_target().name == default_target().name ? default_target().name : host_target().name + " or generic";
  if (target.runner != Runner::kCrossQemu)
    throw Error("--target " + target.name + " code needs " + target.needs + ", which this machine lacks (" + here +
                "): use --target " + runs_here + " here, or run it on a machine that has them");
  if (emulation == Emulation::kRefused)
    throw Error("--target " + target.name + " code cannot be timed here (" + here +
                "): an emulator's timings say nothing of a real core; time it on " + target.needs);
  if (!on_path(target.cross_compiler) || !on_path(target.emulator))
    throw Error("--target " + target.name + " code needs " + target.needs + " (" + here +
                "); to run it under emulation, put " + target.cross_compiler + " and " + target.emulator +
                " on the PATH (Debian: apt-get install " + target.packages + ")");
  // Static: qemu's user mode then needs no AArch64 libraries on this machine.
  return {target.cross_compiler, "-static", target.emulator};
}

bool cuda_device_present() {
  // The driver's device nodes: present where a GPU is, without linking CUDA.
  return access("/dev/nvidia0", F_OK) == 0 || access("/dev/nvidiactl", F_OK) == 0;
}

}  // namespace hybgen
