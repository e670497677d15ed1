// The walk both printers share: every kernel of a lowered model in the
// planned order, each printed as one block under a comment naming its nodes,
// with the kernel templates it uses collected in first-use order. Views,
// kernels whose inputs all lie in place, and op kernels (their OpKernel's
// printer, after the epilogue they apply) print alike on every backend; what
// differs, a backend says in its KernelPrinter (tinygrad's CStyleLanguage:
// one renderer, a language object per backend).
//
//   CudaKernelPrinter printer(...);
//   const WalkedKernels walked = walk_kernels(model, printer);
//   walked.body;       // the statements of run()
//   walked.templates;  // "cuda/kernels/common", ... to paste before it
#pragma once

#include <string>
#include <vector>

#include "emit/cpp_fused.h"
#include "lower/lowering.h"
#include "targets/target.h"

namespace hybgen {

class KernelPrinter {
 public:
  virtual ~KernelPrinter() = default;
  virtual Backend backend() const = 0;
  // Where its kernel templates live: "kernels" (C++), "cuda/kernels".
  virtual std::string template_folder() const = 0;
  // One elementwise kernel (a loop, or a launch of a generated kernel).
  virtual std::string elementwise(const LoweredKernel& kernel, const PointerOf& pointer) = 0;
  // Statements that define `name`, the epilogue an op kernel's anchor
  // applies before each store (EmitContext::epilogue).
  virtual std::string epilogue(const LoweredKernel& kernel, const PointerOf& pointer, const std::string& name) = 0;
  // Statements after a kernel's block (hooks); none by default.
  virtual std::string after(const LoweredKernel&, const PointerOf&) { return ""; }
};

struct WalkedKernels {
  std::string body;                    // one commented block per kernel, indented for run()
  std::vector<std::string> templates;  // kernel templates, each after those it needs
  bool uses_pool = false;              // a kernel call passes EmitContext::pool on
};

// `first_templates` are used before any kernel's (CUDA's "common").
WalkedKernels walk_kernels(LoweredModel& model, KernelPrinter& printer,
                           const std::vector<std::string>& first_templates = {});

}  // namespace hybgen
