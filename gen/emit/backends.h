// The Backend switch: each backend's printer, and what the programs built
// around generated code (verify, bench) must know of it. Code outside the
// backends reads these traits, never Target::backend itself, so a backend's
// differences live here and in its own files.
//
//   const BackendTraits& traits = backend_traits(target.backend);
//   if (traits.device_buffers) { /* copy inputs to device memory */ }
//   std::vector<EmittedFile> files = emit_for_target(compiled, options);
#pragma once

#include <string>
#include <vector>

#include "emit/cpp_emitter.h"
#include "pipeline.h"
#include "targets/target.h"

namespace hybgen {

struct BackendTraits {
  // run() takes device pointers: a program calling it allocates device
  // buffers and copies the inputs to them and the outputs back.
  bool device_buffers = false;
  // The printer can call kernels::hg_after_kernel after each kernel
  // (CppEmitOptions::kernel_hooks), which verify --bisect compares.
  bool kernel_hooks = false;
  // External weights (CppEmitOptions::external_weights) go to init(), which
  // uploads them once, rather than to every run().
  bool weights_at_init = false;
  std::string verify_driver;  // the verify program's template (templates/)
  std::string bench_driver;   // the bench program's template
  std::string driver_file;    // what a driver is saved as, for the compiler: "main.cpp"
};
const BackendTraits& backend_traits(Backend backend);

// Emits with the printer of the compiled graph's target's backend.
std::vector<EmittedFile> emit_for_target(const CompiledGraph& compiled, const CppEmitOptions& options);

}  // namespace hybgen
